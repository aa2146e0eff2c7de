//! Footprint per context: the cachelines a path of execution touches in a
//! struct, the bytes of the fields it uses, and the fewest lines those
//! bytes could fit in, `ceil(bytes / line)`: the columns of the netdev
//! analysis behind the 6.8 reorganisation of `tcp_sock`, `net_device` and
//! `netns_ipv4`. Lines are counted from the struct's start (the layout of
//! one instance on a line boundary, as slab caches place them).

use std::collections::BTreeSet;

use super::Analysis;

/// One context's footprint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextFootprint {
    /// The context, or the contexts joined with `+` for their union.
    pub context: String,
    /// Leaf fields it uses.
    pub fields: Vec<String>,
    /// Bytes of those fields (each byte once: bitfields sharing a byte
    /// count it once).
    pub bytes: u64,
    /// Cachelines they occupy.
    pub lines: Vec<u64>,
    /// The fewest lines the bytes fit in: `ceil(bytes / line)`.
    pub optimum: u64,
}

/// The footprint of every context in one struct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// The struct.
    pub ty: String,
    /// Its size in bytes.
    pub size: u64,
    /// Line size.
    pub cacheline: u64,
    /// Its size in lines, `ceil(size / line)`.
    pub size_lines: u64,
    /// Per context, in the order given, then their union when there are
    /// several.
    pub contexts: Vec<ContextFootprint>,
}

/// The footprint of `contexts` in the analysed struct `a` (analysed as its
/// own root).
pub fn footprint(a: &Analysis, contexts: &[String]) -> Footprint {
    let line = a.cacheline.max(1);
    let one = |name: String, uses: &dyn Fn(&str) -> bool| {
        let spans: Vec<_> = a
            .annotated
            .spans
            .iter()
            .filter(|s| s.size > 0)
            .filter(|s| s.access.as_ref().is_some_and(|acc| acc.uses().any(uses)))
            .collect();
        let mut bytes = 0;
        let mut covered_to = 0;
        let mut lines = BTreeSet::new();
        // Spans are in offset order: count each byte once.
        for s in &spans {
            let from = s.offset.max(covered_to);
            bytes += s.end().saturating_sub(from);
            covered_to = covered_to.max(s.end());
            lines.extend(s.offset / line..=(s.end() - 1) / line);
        }
        ContextFootprint {
            context: name,
            fields: spans.iter().map(|s| s.path.clone()).collect(),
            bytes,
            lines: lines.into_iter().collect(),
            optimum: bytes.div_ceil(line),
        }
    };
    let mut out: Vec<ContextFootprint> = contexts
        .iter()
        .map(|c| one(c.clone(), &|u: &str| u == c))
        .filter(|f| !f.fields.is_empty())
        .collect();
    if out.len() > 1 {
        let used: Vec<String> = out.iter().map(|f| f.context.clone()).collect();
        let union = one(used.join("+"), &|u: &str| used.iter().any(|c| c == u));
        out.push(union);
    }
    Footprint {
        ty: a.root.clone(),
        size: a.size,
        cacheline: line,
        size_lines: a.size.div_ceil(line),
        contexts: out,
    }
}
