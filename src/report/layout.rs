//! What `layout`, `offsetof` and `sizes` found.

use serde::Serialize;

use crate::layout::Layout;
use crate::lines::Lines;
use crate::load::sizes::SizeLine;
use crate::model::TypeTable;

/// `layout`: the types asked for, laid out, with the model their member
/// types are named from.
pub struct LayoutReport {
    /// The types the layouts refer to.
    pub table: TypeTable,
    /// Each layout, with a note when its name has several layouts.
    pub layouts: Vec<(Layout, Option<String>)>,
    /// Nested members listed with dotted paths (`--expand`).
    pub expand: bool,
    /// Kernel cacheline group markers written as the kernel's macros
    /// (`--macros`), so the text is C to paste.
    pub macros: bool,
    /// The plan file the layouts come from, when they are planned.
    pub planned_by: Option<String>,
    /// Notes about the build (what its format cannot tell).
    pub notes: Vec<String>,
    /// `--perf`: per layout, each member's measured share as perf printed
    /// it, by path.
    pub shares: Vec<std::collections::BTreeMap<String, String>>,
}

/// `offsetof`: one row per path.
pub struct OffsetofReport {
    /// The rows, in the order asked.
    pub rows: Vec<OffsetRow>,
    /// Notes about the build and the types.
    pub notes: Vec<String>,
}

/// Where one member path lands.
#[derive(Clone, Debug, Serialize)]
pub struct OffsetRow {
    /// The path as given.
    pub path: String,
    /// Offset from the type's start.
    pub offset: u64,
    /// Size in bytes (the storage unit for bitfields).
    pub size: u64,
    /// The cachelines it touches (for a bitfield, those of its bits).
    #[serde(flatten)]
    pub lines: Lines,
    /// For bitfields: first bit, counted from the type's start.
    pub bit_offset: Option<u64>,
    /// For bitfields: width.
    pub bit_size: Option<u64>,
    /// True for an array of no elements (`a[]`, `a[0]`): where the data
    /// after the struct starts.
    pub flexible_array: bool,
    /// The member's type, as C spells it.
    #[serde(rename = "type")]
    pub ty: Option<String>,
    /// Where the member is declared (DWARF only).
    pub decl_file: Option<String>,
    /// Its line.
    pub decl_line: Option<u64>,
    /// A note when the root type has several layouts.
    pub note: Option<String>,
    /// The plan file the layout comes from, when it is planned, not
    /// compiled.
    pub planned_by: Option<String>,
}

/// `sizes`: every named struct and union, as `pahole --sizes` lists them.
pub struct SizesReport {
    /// The lines.
    pub lines: Vec<SizeLine>,
}
