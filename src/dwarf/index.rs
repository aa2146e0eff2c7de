//! The name index: one parallel pass over all units that records the named
//! struct, union, typedef and enum *definitions* that are direct children of
//! a unit (declarations are skipped). Only those DIEs have their attributes
//! decoded; every other subtree is jumped over through its `DW_AT_sibling`
//! when the compiler recorded one, and walked with attribute skipping when not.

use std::collections::HashSet;

use gimli::UnitOffset;
use rayon::prelude::*;

use super::DwarfFile;
use super::plan::{UnitScan, Values, Want, Wants, corrupt};
use crate::error::Result;

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

/// One named top-level type definition.
#[derive(Clone, Copy, Debug)]
pub struct Definition<'a> {
    /// The type's name (borrowed from `.debug_str` or the DIE).
    pub name: &'a str,
    /// Its kind.
    pub kind: DefKind,
    /// Index of its unit in [`DwarfFile::units`].
    pub unit: usize,
    /// Its offset inside the unit.
    pub offset: UnitOffset<usize>,
    /// `DW_AT_byte_size`, when present.
    pub size: Option<u64>,
}

/// Which definitions a scan keeps.
pub enum Filter<'n> {
    /// Only those with one of these names.
    Names(&'n HashSet<&'n str>),
    /// Every struct and union.
    Composites,
    /// Everything.
    All,
}

impl Filter<'_> {
    fn keeps(&self, name: &str, kind: DefKind) -> bool {
        match self {
            Filter::Names(names) => names.contains(name),
            Filter::Composites => kind.is_composite(),
            Filter::All => true,
        }
    }
}

/// Scans every unit in parallel; the result is in file order (unit order,
/// then DIE order), so "the first definition" means the same as for pahole.
pub fn scan<'a>(file: &DwarfFile<'a>, filter: &Filter<'_>) -> Result<Vec<Definition<'a>>> {
    let per_unit: Vec<Vec<Definition<'a>>> = (0..file.units.len())
        .into_par_iter()
        .map(|unit| {
            let mut out = Vec::new();
            scan_unit(file, unit, filter, &mut out)?;
            Ok(out)
        })
        .collect::<Result<_>>()?;
    Ok(per_unit.into_iter().flatten().collect())
}

/// Like [`scan`] with [`Filter::Names`], but in file order, a few units at a
/// time, stopping once every name has a definition: what a lookup of the
/// first definition needs. Falls back to the whole file when a name is
/// missing.
pub fn scan_until_found<'a>(
    file: &DwarfFile<'a>,
    names: &HashSet<&str>,
) -> Result<Vec<Definition<'a>>> {
    let filter = Filter::Names(names);
    let batch = rayon::current_num_threads().max(1) * 2;
    let mut out = Vec::new();
    let mut missing: HashSet<&str> = names.clone();
    let mut start = 0;
    while start < file.units.len() && !missing.is_empty() {
        let end = (start + batch).min(file.units.len());
        let per_unit: Vec<Vec<Definition<'a>>> = (start..end)
            .into_par_iter()
            .map(|unit| {
                let mut defs = Vec::new();
                scan_unit(file, unit, &filter, &mut defs)?;
                Ok(defs)
            })
            .collect::<Result<_>>()?;
        for d in per_unit.into_iter().flatten() {
            missing.remove(d.name);
            out.push(d);
        }
        start = end;
    }
    Ok(out)
}

/// Every distinct type name in the file, for "did you mean" suggestions.
pub fn all_names<'a>(file: &DwarfFile<'a>) -> Result<Vec<&'a str>> {
    let mut names: Vec<&'a str> = scan(file, &Filter::All)?
        .into_iter()
        .map(|d| d.name)
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    names.sort_unstable();
    Ok(names)
}

pub(super) fn def_kind(tag: gimli::DwTag) -> Option<DefKind> {
    match tag {
        gimli::DW_TAG_structure_type | gimli::DW_TAG_class_type => Some(DefKind::Struct),
        gimli::DW_TAG_union_type => Some(DefKind::Union),
        gimli::DW_TAG_typedef => Some(DefKind::Typedef),
        gimli::DW_TAG_enumeration_type => Some(DefKind::Enum),
        _ => None,
    }
}

/// What the index reads: the name, size and kind of definitions, and the
/// sibling pointer of everything else.
pub(super) fn index_wants(tag: gimli::DwTag) -> Wants {
    match def_kind(tag) {
        Some(_) => Wants::of(&[Want::Name, Want::ByteSize, Want::Declaration, Want::Sibling]),
        None => Wants::of(&[Want::Sibling]),
    }
}

fn scan_unit<'a>(
    file: &DwarfFile<'a>,
    unit: usize,
    filter: &Filter<'_>,
    out: &mut Vec<Definition<'a>>,
) -> Result<()> {
    let ctx = file.unit(unit)?;
    let mut scan = UnitScan::new(&ctx, index_wants);
    let Some(mut cursor) = scan.top_level()? else {
        return Ok(());
    };
    // Depth of the next entry: 1 = direct child of the unit.
    let mut depth: usize = 1;
    let mut die = Values::default();
    while !cursor.is_empty() {
        let offset = cursor.offset();
        let Some(plan) = scan.next_plan(&mut cursor)? else {
            depth -= 1;
            if depth == 0 {
                break;
            }
            continue;
        };
        plan.read(&mut cursor, &mut die)
            .map_err(|e| corrupt(&ctx, offset, e))?;
        if depth == 1
            && let Some(kind) = def_kind(plan.tag)
            && !die.flag(Want::Declaration)
            && let Some(name) = die.get(Want::Name).and_then(|v| file.value_str(&ctx, v))
            && filter.keeps(name, kind)
        {
            out.push(Definition {
                name,
                kind,
                unit,
                offset,
                size: die.unsigned(Want::ByteSize),
            });
        }
        if plan.has_children {
            match die.unit_ref(Want::Sibling) {
                Some(sibling) => cursor
                    .jump_forward(sibling)
                    .map_err(|e| corrupt(&ctx, offset, e))?,
                None => depth += 1,
            }
        }
    }
    Ok(())
}
