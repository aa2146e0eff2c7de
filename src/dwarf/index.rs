//! The name index: one parallel pass over all units that records the named
//! struct, union, typedef and enum *definitions* that are direct children of
//! a unit (declarations are skipped). Only those DIEs have their attributes
//! decoded; every other subtree is jumped over through its `DW_AT_sibling`
//! when the compiler recorded one, and walked with attribute skipping when not.

use std::collections::HashSet;

use gimli::{AttributeValue, UnitOffset};
use rayon::prelude::*;

use super::{DwarfFile, Reader, UnitCtx};
use crate::error::{Error, Result};

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

fn scan_unit<'a>(
    file: &DwarfFile<'a>,
    unit: usize,
    filter: &Filter<'_>,
    out: &mut Vec<Definition<'a>>,
) -> Result<()> {
    let ctx = file.unit(unit)?;
    let corrupt =
        |offset: UnitOffset<usize>, e: gimli::Error| Error::dwarf(ctx.absolute(offset), e);
    let Some(mut entries) = top_level(&ctx)? else {
        return Ok(());
    };
    // Depth of the next entry: 1 = direct child of the unit.
    let mut depth: usize = 1;
    while !entries.is_empty() {
        let offset = entries.next_offset();
        let Some(abbrev) = entries
            .read_abbreviation()
            .map_err(|e| corrupt(offset, e))?
        else {
            depth -= 1;
            if depth == 0 {
                break;
            }
            continue;
        };
        let kind = if depth == 1 {
            def_kind(abbrev.tag())
        } else {
            None
        };
        let sibling = match kind {
            Some(kind) => {
                let die = read_definition(file, &ctx, &mut entries, abbrev, offset)?;
                if let (Some(name), false) = (die.name, die.declaration)
                    && filter.keeps(name, kind)
                {
                    out.push(Definition {
                        name,
                        kind,
                        unit,
                        offset,
                        size: die.size,
                    });
                }
                die.sibling
            }
            None => skip_to_sibling(&mut entries, abbrev).map_err(|e| corrupt(offset, e))?,
        };
        if abbrev.has_children() && !jump_to_sibling(&ctx, &mut entries, offset, sibling)? {
            depth += 1;
        }
    }
    Ok(())
}

pub(super) struct DefinitionDie<'a> {
    pub(super) name: Option<&'a str>,
    pub(super) size: Option<u64>,
    pub(super) declaration: bool,
    pub(super) sibling: Option<UnitOffset<usize>>,
}

pub(super) fn read_definition<'a>(
    file: &DwarfFile<'a>,
    ctx: &UnitCtx<'a>,
    entries: &mut gimli::EntriesRaw<'_, Reader<'a>>,
    abbrev: &gimli::Abbreviation,
    offset: UnitOffset<usize>,
) -> Result<DefinitionDie<'a>> {
    let mut die = DefinitionDie {
        name: None,
        size: None,
        declaration: false,
        sibling: None,
    };
    for spec in abbrev.attributes() {
        let attr = entries
            .read_attribute_inline(*spec)
            .map_err(|e| Error::dwarf(ctx.absolute(offset), e))?;
        match attr.name() {
            gimli::DW_AT_name => die.name = file.attr_str(ctx, attr.value()),
            gimli::DW_AT_byte_size => die.size = attr.udata_value(),
            gimli::DW_AT_declaration => {
                die.declaration = matches!(attr.value(), AttributeValue::Flag(true))
            }
            gimli::DW_AT_sibling => {
                if let AttributeValue::UnitRef(o) = attr.value() {
                    die.sibling = Some(o);
                }
            }
            _ => {}
        }
    }
    Ok(die)
}

/// A unit's entries positioned at its first top-level DIE (the unit DIE's
/// attributes skipped), or `None` when the unit has no children.
pub(super) fn top_level<'c, 'a>(
    ctx: &'c UnitCtx<'a>,
) -> Result<Option<gimli::EntriesRaw<'c, Reader<'a>>>> {
    let root = ctx.header.root_offset();
    let corrupt = |e: gimli::Error| Error::dwarf(ctx.absolute(root), e);
    let mut entries = ctx
        .header
        .entries_raw(&ctx.abbrevs, Some(root))
        .map_err(corrupt)?;
    let Some(abbrev) = entries.read_abbreviation().map_err(corrupt)? else {
        return Ok(None);
    };
    entries
        .skip_attributes(abbrev.attributes())
        .map_err(corrupt)?;
    Ok(abbrev.has_children().then_some(entries))
}

/// After an entry with children: moves `entries` to the entry's sibling
/// when the compiler recorded one (true), or leaves it at the first child
/// (false). A sibling that does not point forward is corrupt input.
pub(super) fn jump_to_sibling<'c, 'a>(
    ctx: &'c UnitCtx<'a>,
    entries: &mut gimli::EntriesRaw<'c, Reader<'a>>,
    offset: UnitOffset<usize>,
    sibling: Option<UnitOffset<usize>>,
) -> Result<bool> {
    match sibling {
        Some(next) if next.0 > offset.0 => {
            *entries = ctx
                .header
                .entries_raw(&ctx.abbrevs, Some(next))
                .map_err(|e| Error::dwarf(ctx.absolute(next), e))?;
            Ok(true)
        }
        Some(bad) => Err(Error::dwarf(
            ctx.absolute(offset),
            format!("DW_AT_sibling {:#x} does not point forward", bad.0),
        )),
        None => Ok(false),
    }
}

/// Skips an entry's attributes, decoding only `DW_AT_sibling`.
pub(super) fn skip_to_sibling<'a>(
    entries: &mut gimli::EntriesRaw<'_, Reader<'a>>,
    abbrev: &gimli::Abbreviation,
) -> gimli::Result<Option<UnitOffset<usize>>> {
    let specs = abbrev.attributes();
    if !abbrev.has_children() {
        entries.skip_attributes(specs)?;
        return Ok(None);
    }
    let Some(at) = specs.iter().position(|s| s.name() == gimli::DW_AT_sibling) else {
        entries.skip_attributes(specs)?;
        return Ok(None);
    };
    entries.skip_attributes(&specs[..at])?;
    let attr = entries.read_attribute_inline(specs[at])?;
    entries.skip_attributes(&specs[at + 1..])?;
    Ok(match attr.value() {
        AttributeValue::UnitRef(o) => Some(o),
        _ => None,
    })
}
