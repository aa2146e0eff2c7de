//! Which DIEs are named type definitions, of what kind, and what a scan
//! for them reads of each DIE: shared by the name index, the layout
//! fingerprints and the layouts of sizes.

use super::raw_dies::{Want, Wants};

/// What kind of definition an index entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DefKind {
    /// `struct` (or C++ `class`).
    Struct,
    /// `union`.
    Union,
    /// `typedef`.
    Typedef,
    /// `enum`.
    Enum,
}

impl DefKind {
    /// True for struct and union.
    pub fn is_composite(self) -> bool {
        matches!(self, DefKind::Struct | DefKind::Union)
    }
}

/// The kind of definition a DIE of `tag` is, if it is one.
pub(super) fn def_kind(tag: gimli::DwTag) -> Option<DefKind> {
    match tag {
        gimli::DW_TAG_structure_type | gimli::DW_TAG_class_type => Some(DefKind::Struct),
        gimli::DW_TAG_union_type => Some(DefKind::Union),
        gimli::DW_TAG_typedef => Some(DefKind::Typedef),
        gimli::DW_TAG_enumeration_type => Some(DefKind::Enum),
        _ => None,
    }
}

/// What the index reads: the name and kind of definitions, and the
/// sibling pointer of everything else.
pub(super) fn index_wants(tag: gimli::DwTag) -> Wants {
    match def_kind(tag) {
        Some(_) => const { Wants::of(&[Want::Name, Want::Declaration, Want::Sibling]) },
        None => const { Wants::of(&[Want::Sibling]) },
    }
}
