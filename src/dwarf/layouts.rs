//! A whole-file scan for `sizes`: every named struct and union defined at
//! the top level of a unit, with its layout [`fingerprint`]. The hundreds
//! of copies a header leaves in a vmlinux are never decoded.

use gimli::UnitOffset;
use rayon::prelude::*;

use super::fingerprint::{self, layout_wants};
use super::index::def_kind;
use super::raw_dies::{UnitScan, Values, Walk, Want};
use super::{DwarfFile, NameRef};
use crate::error::Result;

/// A struct or union definition with its layout fingerprint.
#[derive(Clone, Copy, Debug)]
pub struct LayoutDef<'a> {
    /// Name, read only for the definitions that are decoded.
    pub name: NameRef<'a>,
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
    let mut scan = UnitScan::open(file, unit, layout_wants)?;
    let mut out = Vec::new();
    let Some(mut cursor) = scan.top_level()? else {
        return Ok(out);
    };
    let mut walk = Walk::top_level();
    let mut die = Values::default();
    let mut member = Values::default();
    while let Some(entry) = walk.next(&scan, &mut cursor, &mut die)? {
        let composite = (walk.depth() == 1)
            .then(|| def_kind(entry.tag))
            .flatten()
            .filter(|k| k.is_composite());
        if let Some(kind) = composite {
            // Reads the members; the cursor ends up after the struct.
            let fingerprint =
                fingerprint::composite(file, &scan, &mut cursor, &entry, kind, &die, &mut member)?;
            if let (Some(name), false) = (
                die.get(Want::Name).and_then(|v| scan.name_ref(file, v)),
                die.flag(Want::Declaration),
            ) {
                out.push(LayoutDef {
                    name,
                    unit,
                    offset: entry.offset,
                    fingerprint,
                });
            }
            continue;
        }
        walk.children(&scan, &mut cursor, &entry, &die, true)?;
    }
    Ok(out)
}
