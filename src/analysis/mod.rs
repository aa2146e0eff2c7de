//! The analysis: a pure function of (type model, root, rules) to the
//! annotated spans of the root and the findings on its cachelines. It reads
//! neither DWARF nor the command line and formats nothing.

pub mod annotate;
pub mod findings;
pub mod ranges;
pub mod validate;

use crate::model::{TypeId, TypeTable};
use crate::rules::Rules;

pub use annotate::{Annotated, GroupSpan, Origin, Span};
pub use findings::{Finding, Side};

/// Named containment edges `(container, contained)` among `composites` of a
/// fully loaded model (BTF): by value, through typedefs, qualifiers, arrays
/// and anonymous members. DWARF builds them from raw DIEs instead
/// (`dwarf::contains`), without decoding every type.
pub fn containment(table: &TypeTable, composites: &[TypeId]) -> Vec<(String, String)> {
    let mut edges = Vec::new();
    for &id in composites {
        let Some(outer) = table.composite(id).and_then(|c| c.name.clone()) else {
            continue;
        };
        let mut todo = vec![(id, 0usize)];
        let mut seen = std::collections::HashSet::new();
        while let Some((current, depth)) = todo.pop() {
            if depth > 64 || !seen.insert(current) {
                continue;
            }
            let Some(c) = table.composite(current) else {
                continue;
            };
            for m in c.members.as_deref().unwrap_or(&[]) {
                let mut ty = table.strip(m.ty);
                for _ in 0..crate::model::MAX_TYPE_DEPTH {
                    match table.get(ty) {
                        crate::model::Type::Array { element, .. } => ty = table.strip(*element),
                        _ => break,
                    }
                }
                if let Some(inner) = table.composite(ty) {
                    match &inner.name {
                        Some(name) => edges.push((outer.clone(), name.clone())),
                        None => todo.push((ty, depth + 1)),
                    }
                }
            }
        }
    }
    edges.sort();
    edges.dedup();
    edges
}

/// One root analysed.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// The root struct's name.
    pub root: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its alignment (explicit or inferred from its members).
    pub alignment: u64,
    /// Line size used.
    pub cacheline: u64,
    /// Its leaves, classified.
    pub annotated: Annotated,
    /// Flagged pairs, worst first.
    pub findings: Vec<Finding>,
}

impl Analysis {
    /// The span a finding side points at.
    pub fn span(&self, side: &Side) -> &Span {
        &self.annotated.spans[side.span]
    }
}

/// Analyses `root` (members loaded deeply) under `rules`.
pub fn analyze(
    table: &TypeTable,
    root: TypeId,
    root_name: &str,
    cacheline: u64,
    rules: &Rules,
) -> Analysis {
    let mut annotated = annotate::annotate(table, root, root_name, rules);
    let size = table.size_of(root).unwrap_or(0);
    let alignment = table.alignment_of(root);
    let found = findings::find(&annotated.spans, size, alignment, cacheline, rules);
    annotated.notes.extend(found.stopped);
    let findings = found.findings;
    Analysis {
        root: root_name.to_owned(),
        size,
        alignment,
        cacheline,
        annotated,
        findings,
    }
}
