//! The analysis: a pure function of (type model, root, rules) to the
//! annotated spans of the root and the findings on its cachelines. It reads
//! neither DWARF nor the command line and formats nothing.

mod annotate;
pub(crate) mod asserts;
pub mod compare;
pub(crate) mod contexts;
pub(crate) mod draft;
pub(crate) mod draft_report;
pub(crate) mod draft_types;
pub mod explain;
pub mod findings;
pub mod footprint;
pub(crate) mod members;
pub(crate) mod needless;
pub(crate) mod placement;
pub(crate) mod ranges;
pub(crate) mod samples;
pub(crate) mod validate;

use crate::model::{TypeId, TypeTable};
use crate::rules::Rules;

pub use annotate::{Annotated, Origin, Span};
pub use findings::{Finding, Side};

/// One root analysed.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// The root struct's name.
    pub root: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its alignment (explicit or inferred from its members), or the
    /// larger one its `[placement]` rule gives.
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
    // Where the allocator places it, when the rules say, else where its
    // alignment lets it start.
    let alignment = table
        .alignment_of(root)
        .max(rules.placement_of(root_name, cacheline).unwrap_or(0));
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
