//! A whole-file scan for `sizes`: every named struct and union defined at
//! the top level of a unit, with a fingerprint of its layout read straight
//! from the raw member DIEs (names, locations, bit offsets and widths, the
//! attributes pahole compares). Same-named definitions with the same
//! fingerprint are one layout, so only one of each needs decoding; the
//! hundreds of copies a header leaves in a vmlinux are never decoded.

use std::hash::{BuildHasher, Hash, Hasher};

use foldhash::quality::{FixedState, FoldHasher};

use gimli::{AttributeValue, UnitOffset};
use rayon::prelude::*;

use super::DwarfFile;
use super::index::{
    DefKind, def_kind, jump_to_sibling, read_definition, skip_to_sibling, top_level,
};
use crate::error::{Error, Result};

/// A fixed-seed hasher, so that fingerprints agree across threads and runs.
fn new_hasher() -> FoldHasher<'static> {
    FixedState::with_seed(0x6361_6368_656c_696e).build_hasher()
}

/// A struct or union definition with its layout fingerprint.
#[derive(Clone, Copy, Debug)]
pub struct LayoutDef<'a> {
    /// Name.
    pub name: &'a str,
    /// Unit index.
    pub unit: usize,
    /// Offset in the unit.
    pub offset: UnitOffset<usize>,
    /// Hash of (kind, size, members' names, locations, bit offsets and widths).
    pub fingerprint: u64,
}

/// Every named top-level struct and union in file order, units in parallel.
pub fn scan<'a>(file: &DwarfFile<'a>) -> Result<Vec<LayoutDef<'a>>> {
    let per_unit: Vec<Vec<LayoutDef<'_>>> = (0..file.units.len())
        .into_par_iter()
        .map(|unit| scan_unit(file, unit))
        .collect::<Result<_>>()?;
    Ok(per_unit.into_iter().flatten().collect())
}

fn scan_unit<'a>(file: &DwarfFile<'a>, unit: usize) -> Result<Vec<LayoutDef<'a>>> {
    let ctx = file.unit(unit)?;
    let corrupt =
        |offset: UnitOffset<usize>, e: gimli::Error| Error::dwarf(ctx.absolute(offset), e);
    let mut out = Vec::new();
    let Some(mut entries) = top_level(&ctx)? else {
        return Ok(out);
    };
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
        let composite = kind.filter(|k| k.is_composite());
        let sibling = match composite {
            Some(kind) => {
                let die = read_definition(file, &ctx, &mut entries, abbrev, offset)?;
                let mut hasher = new_hasher();
                (kind == DefKind::Union, die.size).hash(&mut hasher);
                if abbrev.has_children() {
                    // Read the members; the entries end up after the struct.
                    hash_members(file, &ctx, &mut entries, &mut hasher)?;
                }
                if let (Some(name), false) = (die.name, die.declaration) {
                    out.push(LayoutDef {
                        name,
                        unit,
                        offset,
                        fingerprint: hasher.finish(),
                    });
                }
                continue;
            }
            None => skip_to_sibling(&mut entries, abbrev).map_err(|e| corrupt(offset, e))?,
        };
        if abbrev.has_children() && !jump_to_sibling(&ctx, &mut entries, offset, sibling)? {
            depth += 1;
        }
    }
    Ok(out)
}

/// A member name as a number: its offset in `.debug_str` (a linked file
/// merges equal strings, so equal offsets are equal names, and an unmerged
/// copy only costs a decode), or a hash of an inline string.
fn name_key<'a>(
    file: &DwarfFile<'a>,
    ctx: &super::UnitCtx<'a>,
    value: AttributeValue<super::Reader<'a>>,
) -> Option<(u8, u64)> {
    match value {
        AttributeValue::DebugStrRef(o) => Some((1, o.0 as u64)),
        AttributeValue::DebugLineStrRef(o) => Some((2, o.0 as u64)),
        AttributeValue::DebugStrOffsetsIndex(i) => {
            let o = file
                .dwarf
                .debug_str_offsets
                .get_str_offset(ctx.header.format(), ctx.str_offsets_base, i)
                .ok()?;
            Some((1, o.0 as u64))
        }
        AttributeValue::String(s) => {
            let mut h = new_hasher();
            s.slice().hash(&mut h);
            Some((3, h.finish()))
        }
        _ => None,
    }
}

/// Hashes the member DIEs among a struct's children and consumes the
/// children, nested ones included.
fn hash_members<'a>(
    file: &DwarfFile<'a>,
    ctx: &super::UnitCtx<'a>,
    entries: &mut gimli::EntriesRaw<'_, super::Reader<'a>>,
    hasher: &mut FoldHasher<'static>,
) -> Result<()> {
    let corrupt =
        |offset: UnitOffset<usize>, e: gimli::Error| Error::dwarf(ctx.absolute(offset), e);
    // Depth relative to the struct: 1 = its direct children.
    let mut depth = 1usize;
    while depth > 0 {
        if entries.is_empty() {
            return Err(Error::dwarf(
                ctx.absolute(entries.next_offset()),
                "struct children run past the unit",
            ));
        }
        let offset = entries.next_offset();
        let Some(abbrev) = entries
            .read_abbreviation()
            .map_err(|e| corrupt(offset, e))?
        else {
            depth -= 1;
            continue;
        };
        let tag = abbrev.tag();
        let member = depth == 1 && matches!(tag, gimli::DW_TAG_member | gimli::DW_TAG_inheritance);
        if member {
            let mut fields: [Option<u64>; 6] = [None; 6];
            let mut name = None;
            let mut skip = false;
            let specs = abbrev.attributes();
            // Attributes not needed are skipped in runs (cheap for fixed sizes).
            let mut run_start = 0;
            for (i, spec) in specs.iter().enumerate() {
                let slot = match spec.name() {
                    gimli::DW_AT_name => 6,
                    gimli::DW_AT_external | gimli::DW_AT_declaration => 7,
                    gimli::DW_AT_data_member_location => 0,
                    gimli::DW_AT_data_bit_offset => 1,
                    gimli::DW_AT_bit_offset => 2,
                    gimli::DW_AT_bit_size => 3,
                    gimli::DW_AT_byte_size => 4,
                    _ => continue,
                };
                entries
                    .skip_attributes(&specs[run_start..i])
                    .map_err(|e| corrupt(offset, e))?;
                run_start = i + 1;
                let attr = entries
                    .read_attribute_inline(*spec)
                    .map_err(|e| corrupt(offset, e))?;
                match slot {
                    6 => name = name_key(file, ctx, attr.value()),
                    7 => skip |= matches!(attr.value(), AttributeValue::Flag(true)),
                    _ => {
                        fields[slot] = match attr.value() {
                            AttributeValue::Exprloc(e) => {
                                let mut h = new_hasher();
                                e.0.slice().hash(&mut h);
                                Some(h.finish())
                            }
                            AttributeValue::Sdata(v) => Some(v as u64),
                            v => v.udata_value(),
                        }
                    }
                }
            }
            entries
                .skip_attributes(&specs[run_start..])
                .map_err(|e| corrupt(offset, e))?;
            if !skip {
                (tag == gimli::DW_TAG_inheritance, name, fields).hash(hasher);
            }
        } else {
            entries
                .skip_attributes(abbrev.attributes())
                .map_err(|e| corrupt(offset, e))?;
        }
        if abbrev.has_children() {
            depth += 1;
        }
    }
    Ok(())
}
