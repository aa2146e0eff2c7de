//! `cachelint sizes`: every named struct and union with its size and number
//! of holes, one line each, in the order and with the duplicates that
//! `pahole --sizes` prints (a name appears once per distinct layout).

use foldhash::{HashSet, HashSetExt};

use rayon::prelude::*;

use super::lookup::{LayoutKey, layout_key};
use crate::dwarf::DwarfFile;
use crate::dwarf::decode::Decoder;
use crate::dwarf::layouts;
use crate::error::Result;
use crate::layout::hole_count;

/// One line of the output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeLine {
    /// Struct or union name.
    pub name: String,
    /// Size in bytes.
    pub size: u64,
    /// Byte holes between direct members (0 for unions).
    pub holes: usize,
}

/// Computes the lines for the whole file. A raw scan fingerprints every
/// definition's layout; only the first definition of each (name,
/// fingerprint) is decoded, units in parallel; decoded layouts are then
/// compared exactly as pahole compares them.
pub fn struct_sizes(file: &DwarfFile<'_>) -> Result<Vec<SizeLine>> {
    let firsts = layouts::first_layouts(file)?;
    let by_unit = layouts::by_unit(&firsts);
    let per_unit: Vec<Vec<(LayoutKey, SizeLine)>> = by_unit
        .par_iter()
        .map(|defs| {
            let mut decoder = Decoder::without_source_locations(file);
            let mut out = Vec::with_capacity(defs.len());
            for d in defs.iter() {
                let id = decoder.type_at(d.unit, d.offset)?;
                decoder.load_members(id)?;
                let Some(c) = decoder.table.composite(id) else {
                    continue;
                };
                let Some(name) = file.name_str(d.name) else {
                    continue;
                };
                let line = SizeLine {
                    name: name.to_owned(),
                    size: c.size.unwrap_or(0),
                    holes: hole_count(&decoder.table, c),
                };
                out.push((layout_key(&decoder.table, id), line));
            }
            Ok(out)
        })
        .collect::<Result<_>>()?;
    let mut distinct: HashSet<(String, LayoutKey)> = HashSet::new();
    let mut lines = Vec::new();
    for (key, line) in per_unit.into_iter().flatten() {
        if distinct.insert((line.name.clone(), key)) {
            lines.push(line);
        }
    }
    Ok(lines)
}

/// The same lines from BTF: named structs and unions in type-id order, one
/// per distinct layout of a name.
pub fn btf_sizes(btf: &crate::btf::BtfTypes) -> Vec<SizeLine> {
    let mut distinct: HashSet<(String, LayoutKey)> = HashSet::new();
    let mut lines = Vec::new();
    for &id in &btf.composites {
        let Some(c) = btf.table.composite(id) else {
            continue;
        };
        let name = c.name.clone().unwrap_or_default();
        if distinct.insert((name.clone(), layout_key(&btf.table, id))) {
            lines.push(SizeLine {
                name,
                size: c.size.unwrap_or(0),
                holes: hole_count(&btf.table, c),
            });
        }
    }
    lines
}
