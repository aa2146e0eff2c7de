//! JSON for scripts. Keys are stable; docs/json.md gives their meaning.

use serde::Serialize;

use crate::lines::Lines;

use super::cdecl::type_name;
use crate::layout::{Item, Layout};
use crate::model::TypeTable;

/// A layout as JSON.
#[derive(Serialize)]
pub struct LayoutJson {
    name: Option<String>,
    kind: &'static str,
    size: u64,
    alignment: u64,
    cacheline_size: u64,
    cachelines: u64,
    decl_file: Option<String>,
    decl_line: Option<u64>,
    note: Option<String>,
    /// The plan file, when the layout is planned, not compiled.
    planned_by: Option<String>,
    members: Vec<MemberJson>,
    holes: Vec<HoleJson>,
    bit_holes: Vec<BitHoleJson>,
    padding: u64,
    groups: Vec<GroupJson>,
    cacheline_paddings: Vec<MarkerJson>,
}

#[derive(Serialize)]
struct MemberJson {
    path: String,
    offset: u64,
    size: u64,
    bit_offset: Option<u64>,
    bit_size: Option<u64>,
    #[serde(rename = "type")]
    ty: String,
    cacheline: u64,
    last_cacheline: u64,
    depth: usize,
    decl_file: Option<String>,
    decl_line: Option<u64>,
}

#[derive(Serialize)]
struct HoleJson {
    offset: u64,
    size: u64,
    depth: usize,
}

#[derive(Serialize)]
struct BitHoleJson {
    offset: u64,
    bits: u64,
    depth: usize,
}

#[derive(Serialize)]
struct GroupJson {
    name: String,
    begin: u64,
    end: Option<u64>,
}

#[derive(Serialize)]
struct MarkerJson {
    path: String,
    offset: u64,
}

/// Converts a layout to its JSON shape.
pub fn layout(
    table: &TypeTable,
    l: &Layout,
    note: Option<String>,
    planned_by: Option<String>,
) -> LayoutJson {
    let mut json = LayoutJson {
        name: l.name.clone(),
        kind: l.kind.keyword(),
        size: l.size,
        alignment: l.alignment,
        cacheline_size: l.cacheline,
        cachelines: l.cachelines(),
        decl_file: l.decl.as_ref().map(|d| d.file.clone()),
        decl_line: l.decl.as_ref().map(|d| d.line),
        note,
        planned_by,
        members: Vec::new(),
        holes: Vec::new(),
        bit_holes: Vec::new(),
        padding: l.summary.padding,
        groups: l
            .groups
            .iter()
            .map(|g| GroupJson {
                name: g.name.clone(),
                begin: g.begin,
                end: g.end,
            })
            .collect(),
        cacheline_paddings: Vec::new(),
    };
    for item in &l.items {
        match item {
            Item::Member(f) => json.members.push(MemberJson {
                path: f.path.clone(),
                offset: f.offset,
                size: f.size,
                bit_offset: f.bits.map(|(b, _)| b),
                bit_size: f.bits.map(|(_, w)| w),
                ty: type_name(table, f.ty),
                cacheline: Lines::of(f.offset, f.size, l.cacheline).first,
                last_cacheline: Lines::of(f.offset, f.size, l.cacheline).last,
                depth: f.depth,
                decl_file: f.decl.as_ref().map(|d| d.file.clone()),
                decl_line: f.decl.as_ref().map(|d| d.line),
            }),
            Item::Hole {
                offset,
                size,
                depth,
            } => json.holes.push(HoleJson {
                offset: *offset,
                size: *size,
                depth: *depth,
            }),
            Item::BitHole {
                offset,
                bits,
                depth,
            } => json.bit_holes.push(BitHoleJson {
                offset: *offset,
                bits: *bits,
                depth: *depth,
            }),
            Item::LinePad { path, offset, .. } => json.cacheline_paddings.push(MarkerJson {
                path: path.clone(),
                offset: *offset,
            }),
            _ => {}
        }
    }
    json
}
