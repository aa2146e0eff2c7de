//! A whole-file scan for `sizes`: every named struct and union defined at
//! the top level of a unit, with its layout [`fingerprint`]. The hundreds
//! of copies a header leaves in a vmlinux are never decoded.

use foldhash::{HashSet, HashSetExt};
use gimli::UnitOffset;
use rayon::prelude::*;

use super::def_kind::def_kind;
use super::fingerprint::{self, layout_wants};
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

/// Units scanned at once: every definition of a batch is held until the
/// batch is reduced to its first layouts, so memory stays bounded by the
/// batch, not the file (a vmlinux has millions of header copies).
const UNITS_PER_BATCH: usize = 64;

/// Definitions in file order split into runs of one unit each, to be
/// decoded in parallel, a decoder per unit.
pub fn by_unit<'d, 'a>(defs: &'d [LayoutDef<'a>]) -> Vec<&'d [LayoutDef<'a>]> {
    let mut out = Vec::new();
    let mut rest = defs;
    while let Some(first) = rest.first() {
        let n = rest.iter().take_while(|d| d.unit == first.unit).count();
        out.push(&rest[..n]);
        rest = &rest[n..];
    }
    out
}

/// The first definition of each (name, layout fingerprint), in file
/// order; units scanned in parallel, a batch at a time.
pub fn first_layouts<'a>(file: &DwarfFile<'a>) -> Result<Vec<LayoutDef<'a>>> {
    let mut seen: HashSet<(NameRef<'a>, u64)> = HashSet::new();
    let mut firsts = Vec::new();
    let units: Vec<usize> = (0..file.units.len()).collect();
    for batch in units.chunks(UNITS_PER_BATCH) {
        let per_unit: Vec<Vec<LayoutDef<'a>>> = batch
            .par_iter()
            .map(|&unit| scan_unit(file, unit))
            .collect::<Result<_>>()?;
        for def in per_unit.into_iter().flatten() {
            if seen.insert((def.name, def.fingerprint)) {
                firsts.push(def);
            }
        }
    }
    Ok(firsts)
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
