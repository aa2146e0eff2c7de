//! What `diagram` draws: the lines chosen of one root in one or two
//! builds, and with two the comparison of the first with the second.

use std::collections::HashMap;

use crate::analysis::Analysis;
use crate::analysis::compare::Comparison;

/// How to draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Style {
    /// A box row per line, with the two-CPU story of a flagged line
    /// (default for up to 4 lines).
    Boxes,
    /// One character per byte: a whole struct at a glance (default for
    /// more lines).
    Strip,
    /// Field, bytes, line, class.
    Table,
}

/// One build's drawing.
pub struct DiagramPart {
    /// The build's label.
    pub config: String,
    /// The root, analysed.
    pub analysis: Analysis,
    /// Tail padding of every struct inside the root: `[start, end)`.
    pub paddings: Vec<(u64, u64)>,
    /// The lines to draw, sorted.
    pub lines: Vec<u64>,
    /// How to draw them.
    pub style: Style,
    /// Sizes of the structs found in that build.
    pub type_sizes: HashMap<String, u64>,
    /// `--perf`: each member's measured share as perf printed it, by path.
    pub shares: std::collections::BTreeMap<String, String>,
}

/// The second build against the first (`--compare`).
pub struct DiagramComparison {
    /// What changed.
    pub comparison: Comparison,
    /// The span paths the drawings were about (empty: every annotated
    /// field).
    pub focus: Vec<String>,
}

/// `diagram`'s result.
pub struct DiagramReport {
    /// One drawing per build.
    pub parts: Vec<DiagramPart>,
    /// With two builds: the comparison.
    pub comparison: Option<DiagramComparison>,
    /// Maximum width in columns.
    pub width: usize,
    /// Notes for standard error.
    pub notes: Vec<String>,
    /// `--explain FIELD`: its lines, neighbours and verdicts.
    pub explained: Vec<super::explain::ExplainedLine>,
}
