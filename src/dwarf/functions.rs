//! The names of the functions a DWARF file defines: every top-level
//! `DW_TAG_subprogram` that is not a declaration, out-of-line or only an
//! inline's abstract instance. A function of the source that a build
//! lacks is under a config the build has off (or was never used): the
//! audit drops its stores. Units are scanned in parallel, their other
//! subtrees jumped over.

use foldhash::{HashSet, HashSetExt};
use rayon::prelude::*;

use super::DwarfFile;
use super::raw_dies::{UnitScan, Values, Walk, Want, Wants};
use crate::error::Result;

/// What the scan reads of a DIE: a subprogram's name and whether it is a
/// declaration; of every DIE, its sibling, to jump over its children.
fn wants(tag: gimli::DwTag) -> Wants {
    match tag {
        gimli::DW_TAG_subprogram => {
            const { Wants::of(&[Want::Name, Want::Declaration, Want::Sibling]) }
        }
        _ => const { Wants::of(&[Want::Sibling]) },
    }
}

/// What a build has of the source: its units' files and its functions.
#[derive(Clone, Debug, Default)]
pub struct Built {
    /// Each unit's `DW_AT_name`, as recorded (`mm/vmscan.c`, or an
    /// absolute path under the build directory).
    pub units: Vec<String>,
    /// Every function name defined.
    pub functions: std::collections::HashSet<String>,
}

/// The units and functions of `file`.
pub(crate) fn built(file: &DwarfFile<'_>) -> Result<Built> {
    let per_unit: Vec<(Option<String>, HashSet<&str>)> = (0..file.units.len())
        .into_par_iter()
        .map(|unit| {
            let ctx = file.unit(unit)?;
            let name = ctx
                .name
                .and_then(|n| std::str::from_utf8(n.slice()).ok())
                .map(str::to_owned);
            Ok((name, unit_functions(file, unit)?))
        })
        .collect::<Result<_>>()?;
    let mut built = Built::default();
    for (name, functions) in per_unit {
        built.units.extend(name);
        built
            .functions
            .extend(functions.into_iter().map(str::to_owned));
    }
    Ok(built)
}

fn unit_functions<'a>(file: &DwarfFile<'a>, unit: usize) -> Result<HashSet<&'a str>> {
    let mut out = HashSet::new();
    let mut scan = UnitScan::open(file, unit, wants)?;
    let Some(mut cursor) = scan.top_level()? else {
        return Ok(out);
    };
    let mut walk = Walk::top_level();
    let mut die = Values::default();
    while let Some(entry) = walk.next(&scan, &mut cursor, &mut die)? {
        if walk.depth() == 1
            && entry.tag == gimli::DW_TAG_subprogram
            && !die.flag(Want::Declaration)
            && let Some(name) = die
                .get(Want::Name)
                .and_then(|v| scan.name_ref(file, v))
                .and_then(|n| file.name_str(n))
        {
            out.insert(name);
        }
        walk.children(&scan, &mut cursor, &entry, &die, true)?;
    }
    Ok(out)
}
