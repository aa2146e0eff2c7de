//! What `offsets` found: one row per path, one cell per build.

use serde::Serialize;

use crate::lines::Lines;

/// `offsets`: paths across builds.
pub struct OffsetsReport {
    /// The builds' labels, in column order.
    pub configs: Vec<String>,
    /// One row per path.
    pub rows: Vec<OffsetsRow>,
    /// Notes about the builds, tagged with their labels.
    pub notes: Vec<String>,
}

/// One path across the builds.
pub struct OffsetsRow {
    /// The path.
    pub path: String,
    /// True when the cachelines differ between builds.
    pub lines_differ: bool,
    /// Per build, where the path lands (`None`: absent there).
    pub cells: Vec<Option<Cell>>,
}

/// Where a path lands in one build.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Cell {
    /// Offset from the type's start.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
    /// The cachelines it touches.
    #[serde(flatten)]
    pub lines: Lines,
}
