//! Cross-context sharing told once per line (issue 29 §5): every
//! cross-context pair of one root on one line is one diagnostic, which
//! says which contexts write the line, through which fields, and what it
//! costs each context that uses the line without those writes.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::ReportFinding;
use crate::rules::Kind;

/// One context's part in a line's cross-context sharing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextOnLine {
    /// The context.
    pub context: String,
    /// The fields of the line it writes that another context does not
    /// need (their parts, in line order).
    pub writes: Vec<String>,
    /// The fields it uses on the line while another context writes it
    /// (their parts, in line order).
    pub uses: Vec<String>,
    /// The bytes of those fields on the line.
    pub bytes: u64,
    /// The contexts whose writes take the line from it.
    pub from: Vec<String>,
}

/// The contexts meeting on one line, from its cross-context findings, in
/// name order; their fields in line order.
pub fn contexts_on_line(group: &[ReportFinding]) -> Vec<ContextOnLine> {
    // Per context: the fields it writes and those it uses, by (first
    // byte, part), the bytes of each used, and whose writes take the line.
    let mut writes: BTreeMap<&str, BTreeSet<(u64, &str)>> = BTreeMap::new();
    let mut uses: BTreeMap<&str, BTreeMap<(u64, &str), u64>> = BTreeMap::new();
    let mut from: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for f in group {
        let Some(m) = &f.meeting else { continue };
        for w in &m.writes_in {
            writes
                .entry(w)
                .or_default()
                .insert((f.a.bytes[0], &f.a.part));
        }
        for o in &m.others {
            uses.entry(o)
                .or_default()
                .insert((f.b.bytes[0], &f.b.part), f.b.bytes[1] + 1 - f.b.bytes[0]);
            from.entry(o)
                .or_default()
                .extend(m.writes_in.iter().map(String::as_str));
        }
    }
    let contexts: BTreeSet<&str> = writes.keys().chain(uses.keys()).copied().collect();
    contexts
        .into_iter()
        .map(|c| {
            let used = uses.remove(c).unwrap_or_default();
            ContextOnLine {
                context: c.to_owned(),
                writes: writes
                    .remove(c)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(_, p)| p.to_owned())
                    .collect(),
                bytes: used.values().sum(),
                uses: used.into_keys().map(|(_, p)| p.to_owned()).collect(),
                from: from
                    .remove(c)
                    .unwrap_or_default()
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
            }
        })
        .collect()
}

/// Puts the cross-context findings of one build, root and line next to
/// each other (where the first of them is), the rest in their order: a
/// line's sharing is then one run, one diagnostic.
pub(crate) fn gather(findings: Vec<ReportFinding>) -> Vec<ReportFinding> {
    let mut runs: Vec<Vec<ReportFinding>> = Vec::new();
    let mut at: HashMap<(String, String, u64, Option<String>), usize> = HashMap::new();
    for f in findings {
        if f.kind != Kind::CrossContext {
            runs.push(vec![f]);
            continue;
        }
        let key = (
            f.config.clone(),
            f.root.clone(),
            f.cacheline,
            f.allowed.clone(),
        );
        match at.get(&key) {
            Some(&i) => runs[i].push(f),
            None => {
                at.insert(key, runs.len());
                runs.push(vec![f]);
            }
        }
    }
    runs.into_iter().flatten().collect()
}
