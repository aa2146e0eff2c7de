//! The name index: one parallel pass over all units that records the named
//! struct, union, typedef and enum *definitions* that are direct children of
//! a unit (declarations are skipped). Only those DIEs have their attributes
//! decoded; every other subtree is jumped over through its `DW_AT_sibling`
//! when the compiler recorded one, and walked with attribute skipping when not.

use std::collections::HashSet;

use gimli::UnitOffset;
use rayon::prelude::*;

use super::def_kind::def_kind;
use super::fingerprint;
use super::raw_dies::{UnitScan, Values, Walk, Want};
use super::{DwarfFile, NameRef};
use crate::error::Result;

pub use super::def_kind::DefKind;

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
    /// A struct's or union's layout [`fingerprint`](super::fingerprint):
    /// definitions with the same one have the same layout, so only one of
    /// them needs decoding. `None` for typedefs and enums.
    pub fingerprint: Option<u64>,
}

/// Which definitions a scan keeps.
pub enum Filter<'n> {
    /// Only those with one of these names.
    Names(&'n HashSet<&'n str>),
    /// Every typedef: what a filter of every name would keep of them,
    /// without looking each name up in `.debug_str`.
    Typedefs,
    /// Every struct and union (for the fuzz drivers and the tests).
    #[cfg(any(test, feature = "exercise"))]
    Composites,
}

/// A [`Filter`] made ready for one file: names are matched by their
/// `.debug_str` offsets, so a definition's name is read only when it is
/// kept (or when it is inline in the DIE).
enum Matcher<'n> {
    Names {
        names: &'n HashSet<&'n str>,
        /// Every offset in `.debug_str` where one of `names` starts (a
        /// string may be the tail of a longer one, so not only string
        /// starts).
        offsets: foldhash::HashSet<u64>,
        /// Some name occurs nowhere in `.debug_str`: unless it is inline in
        /// a DIE, the file does not define it.
        absent: bool,
    },
    Typedefs,
    #[cfg(any(test, feature = "exercise"))]
    Composites,
}

impl<'n> Matcher<'n> {
    fn new(file: &DwarfFile<'_>, filter: &Filter<'n>) -> Self {
        match filter {
            Filter::Names(names) => {
                let mut offsets = foldhash::HashSet::default();
                let mut absent = false;
                for name in names.iter() {
                    let found = file.string_offsets(name);
                    absent |= found.is_empty();
                    offsets.extend(found);
                }
                Matcher::Names {
                    names,
                    offsets,
                    absent,
                }
            }
            Filter::Typedefs => Matcher::Typedefs,
            #[cfg(any(test, feature = "exercise"))]
            Filter::Composites => Matcher::Composites,
        }
    }

    /// The name of a definition the filter keeps.
    fn keep<'a>(&self, file: &DwarfFile<'a>, name: NameRef<'a>, kind: DefKind) -> Option<&'a str> {
        match self {
            Matcher::Names { names, offsets, .. } => match name {
                NameRef::Str(o) if !offsets.contains(&o) => None,
                _ => file.name_str(name).filter(|n| names.contains(n)),
            },
            Matcher::Typedefs => (kind == DefKind::Typedef)
                .then(|| file.name_str(name))
                .flatten(),
            #[cfg(any(test, feature = "exercise"))]
            Matcher::Composites => kind.is_composite().then(|| file.name_str(name)).flatten(),
        }
    }
}

/// What the scan of some units found: the kept definitions and, when
/// asked, every distinct type name (unread).
#[derive(Default)]
struct Scanned<'a> {
    defs: Vec<Definition<'a>>,
    names: foldhash::HashSet<NameRef<'a>>,
}

/// Scans `units` in parallel and concatenates what they found in order.
fn scan_units<'a>(
    file: &DwarfFile<'a>,
    units: std::ops::Range<usize>,
    matcher: &Matcher<'_>,
    collect_names: bool,
) -> Result<Scanned<'a>> {
    let per_unit: Vec<Scanned<'a>> = units
        .into_par_iter()
        .map(|unit| scan_unit(file, unit, matcher, collect_names))
        .collect::<Result<_>>()?;
    let mut all = Scanned::default();
    for found in per_unit {
        all.defs.extend(found.defs);
        all.names.extend(found.names);
    }
    Ok(all)
}

/// Scans every unit in parallel; the result is in file order (unit order,
/// then DIE order), so "the first definition" means the same as for pahole.
pub fn scan<'a>(file: &DwarfFile<'a>, filter: &Filter<'_>) -> Result<Vec<Definition<'a>>> {
    let matcher = Matcher::new(file, filter);
    Ok(scan_units(file, 0..file.units.len(), &matcher, false)?.defs)
}

/// What [`lookup`] found.
pub struct Lookup<'a> {
    /// The definitions of the names asked for, in file order.
    pub defs: Vec<Definition<'a>>,
    /// Every type name in the file, sorted, when some name asked for is
    /// not in the string table (most likely misspelt): for "did you mean".
    pub known_names: Option<Vec<&'a str>>,
}

/// [`scan`] for `names`; when one of them occurs nowhere in `.debug_str`,
/// the same pass also lists every type name, so that an unknown name needs
/// no second scan for its suggestions.
pub fn lookup<'a>(file: &DwarfFile<'a>, names: &HashSet<&str>) -> Result<Lookup<'a>> {
    let matcher = Matcher::new(file, &Filter::Names(names));
    let collect = matches!(matcher, Matcher::Names { absent: true, .. });
    let found = scan_units(file, 0..file.units.len(), &matcher, collect)?;
    Ok(Lookup {
        known_names: collect.then(|| sorted_names(file, found.names)),
        defs: found.defs,
    })
}

/// Distinct names read and sorted.
fn sorted_names<'a>(file: &DwarfFile<'a>, names: foldhash::HashSet<NameRef<'a>>) -> Vec<&'a str> {
    let mut names: Vec<&'a str> = names.into_iter().filter_map(|n| file.name_str(n)).collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Like [`scan`] with [`Filter::Names`], but in file order, a few units at a
/// time, stopping once every name has a definition: what a lookup of the
/// first definition needs. Falls back to the whole file when a name is
/// missing.
pub fn scan_until_found<'a>(
    file: &DwarfFile<'a>,
    names: &HashSet<&str>,
) -> Result<Vec<Definition<'a>>> {
    let matcher = Matcher::new(file, &Filter::Names(names));
    let batch = rayon::current_num_threads().max(1) * 2;
    let mut out = Vec::new();
    let mut missing: HashSet<&str> = names.clone();
    let mut start = 0;
    while start < file.units.len() && !missing.is_empty() {
        let end = (start + batch).min(file.units.len());
        for d in scan_units(file, start..end, &matcher, false)?.defs {
            missing.remove(d.name);
            out.push(d);
        }
        start = end;
    }
    Ok(out)
}

/// Every distinct type name in the file, sorted, for "did you mean"
/// suggestions.
pub fn all_names<'a>(file: &DwarfFile<'a>) -> Result<Vec<&'a str>> {
    let none = HashSet::new();
    let matcher = Matcher::new(file, &Filter::Names(&none));
    let found = scan_units(file, 0..file.units.len(), &matcher, true)?;
    Ok(sorted_names(file, found.names))
}

fn scan_unit<'a>(
    file: &DwarfFile<'a>,
    unit: usize,
    matcher: &Matcher<'_>,
    collect_names: bool,
) -> Result<Scanned<'a>> {
    let mut found = Scanned::default();
    // The member attributes are read only inside a kept struct: every
    // other subtree is jumped over.
    let mut scan = UnitScan::open(file, unit, fingerprint::layout_wants)?;
    let Some(mut cursor) = scan.top_level()? else {
        return Ok(found);
    };
    let mut walk = Walk::top_level();
    let mut die = Values::default();
    let mut member = Values::default();
    while let Some(entry) = walk.next(&scan, &mut cursor, &mut die)? {
        if walk.depth() == 1
            && let Some(kind) = def_kind(entry.tag)
            && !die.flag(Want::Declaration)
            && let Some(name) = die.get(Want::Name).and_then(|v| scan.name_ref(file, v))
        {
            if collect_names {
                found.names.insert(name);
            }
            if let Some(name) = matcher.keep(file, name, kind) {
                let fingerprint = if kind.is_composite() {
                    // Reads the members; the cursor ends up after the struct.
                    let print = fingerprint::composite(
                        file,
                        &scan,
                        &mut cursor,
                        &entry,
                        kind,
                        &die,
                        &mut member,
                    )?;
                    Some(print)
                } else {
                    None
                };
                found.defs.push(Definition {
                    name,
                    kind,
                    unit,
                    offset: entry.offset,
                    fingerprint,
                });
                if fingerprint.is_some() {
                    continue;
                }
            }
        }
        walk.children(&scan, &mut cursor, &entry, &die, true)?;
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{DebugSections, MappedFile};

    type Row = (String, DefKind, usize, usize);

    /// The named top-level definitions as gimli's entry tree walks them,
    /// attribute by attribute: an oracle independent of the plans.
    fn tree_definitions(file: &DwarfFile<'_>) -> Vec<Row> {
        let mut rows = Vec::new();
        for unit in 0..file.units.len() {
            let ctx = file.unit(unit).unwrap();
            let mut tree = ctx.header.entries_tree(&ctx.abbrevs, None).unwrap();
            let mut children = tree.root().unwrap().children();
            while let Some(child) = children.next().unwrap() {
                let entry = child.entry();
                let Some(kind) = def_kind(entry.tag()) else {
                    continue;
                };
                let declaration = matches!(
                    entry.attr_value(gimli::DW_AT_declaration),
                    Some(gimli::AttributeValue::Flag(true))
                );
                let name = entry
                    .attr_value(gimli::DW_AT_name)
                    .and_then(|v| file.attr_str(&ctx, v));
                if let (Some(name), false) = (name, declaration) {
                    rows.push((name.to_owned(), kind, unit, entry.offset().0));
                }
            }
        }
        rows
    }

    fn rows(defs: &[Definition<'_>]) -> Vec<Row> {
        defs.iter()
            .map(|d| (d.name.to_owned(), d.kind, d.unit, d.offset.0))
            .collect()
    }

    #[test]
    fn scans_find_what_gimlis_entry_tree_finds() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bin");
        for name in [
            "gcc-dwarf4-base",
            "gcc-dwarf5-rt",
            "clang-dwarf4-base",
            "clang-dwarf5-rt",
            "gcc-dwarf5-base.o",
            "clang-dwarf5-base.o",
            "gcc-dwarf5-base.zstd",
        ] {
            let mapped = MappedFile::open(&dir.join(name)).unwrap();
            let sections = DebugSections::load(mapped.path(), mapped.bytes()).unwrap();
            let file = DwarfFile::new(&sections).unwrap();
            let expected = tree_definitions(&file);
            assert!(
                expected.len() > 20,
                "{name}: {} definitions",
                expected.len()
            );

            let mut expected_names: Vec<&str> = expected.iter().map(|r| r.0.as_str()).collect();
            expected_names.sort_unstable();
            expected_names.dedup();
            let names = all_names(&file).unwrap();
            assert_eq!(names, expected_names, "{name}: all_names");

            let mut wanted: HashSet<&str> = names.iter().copied().collect();
            let found = lookup(&file, &wanted).unwrap();
            assert_eq!(rows(&found.defs), expected, "{name}: every name looked up");
            // Short names are inline in their DIEs, so the list may come too.
            if let Some(listed) = &found.known_names {
                assert_eq!(listed, &names, "{name}: names listed");
            }
            let in_strings = lookup(&file, &HashSet::from(["lruvec"])).unwrap();
            assert_eq!(
                in_strings.known_names, None,
                "{name}: lruvec is in .debug_str"
            );
            // A name the string table lacks: the same pass lists every name.
            wanted.insert("no_such_type");
            let found = lookup(&file, &wanted).unwrap();
            assert_eq!(rows(&found.defs), expected, "{name}: with a missing name");
            assert_eq!(
                found.known_names.as_ref(),
                Some(&names),
                "{name}: names listed"
            );

            let composites = scan(&file, &Filter::Composites).unwrap();
            let expected_composites: Vec<Row> = expected
                .iter()
                .filter(|r| r.1.is_composite())
                .cloned()
                .collect();
            assert_eq!(rows(&composites), expected_composites, "{name}: composites");
            let typedefs = scan(&file, &Filter::Typedefs).unwrap();
            let expected_typedefs: Vec<Row> = expected
                .iter()
                .filter(|r| r.1 == DefKind::Typedef)
                .cloned()
                .collect();
            assert!(!expected_typedefs.is_empty(), "{name}: typedefs");
            assert_eq!(rows(&typedefs), expected_typedefs, "{name}: typedefs");

            // One name at a time, as a lookup asks, and the early exit.
            for one in ["lruvec", "list_head", "atomic_t"] {
                let just: HashSet<&str> = HashSet::from([one]);
                let mine: Vec<Row> = expected.iter().filter(|r| r.0 == one).cloned().collect();
                assert!(!mine.is_empty(), "{name}: {one}");
                assert_eq!(rows(&scan(&file, &Filter::Names(&just)).unwrap()), mine);
                assert_eq!(rows(&scan_until_found(&file, &just).unwrap())[0], mine[0]);
            }
        }
    }
}
