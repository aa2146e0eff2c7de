//! The whole-file name index that a lookup can keep on disk: for every
//! type name of the file, one definition per distinct layout (the first of
//! each [`fingerprint`](super::fingerprint)), in file order. A lookup from
//! it decodes those definitions and nothing else: no scan of the units.
//!
//! Typedefs are kept by the layout they name: a typedef of a struct or
//! union in its own unit is kept once per fingerprint of that struct, a
//! typedef of a typedef (or of a qualified type) is kept as it is, and a
//! typedef of anything else (a base type, a pointer) is kept by name only,
//! as a lookup never resolves one to a layout.
//!
//! [`NameIndex::encode`] and [`NameIndex::decode`] are its byte form. A
//! decode checks everything it reads (lengths, counts, units and offsets
//! against the file) and refuses any inconsistency: a damaged index is
//! never half-trusted.

use std::collections::hash_map::Entry as MapEntry;

use foldhash::HashMap;

use gimli::UnitOffset;
use rayon::prelude::*;

use super::def_kind::{DefKind, def_kind};
use super::fingerprint::{self, layout_wants};
use super::index::Definition;
use super::raw_dies::{UnitScan, Values, Walk, Want, Wants};
use super::{DwarfFile, NameRef, unit_end, unit_start};
use crate::error::Result;

/// One kept definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IndexedDef {
    kind: DefKind,
    unit: u32,
    offset: u32,
    fingerprint: Option<u64>,
}

/// Every type name of a file with its kept definitions, sorted by name.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct NameIndex {
    names: Vec<(String, Vec<IndexedDef>)>,
}

/// What a unit's top-level DIE at some offset is, for the typedefs that
/// name it.
enum Target {
    /// A struct or union definition, with its fingerprint.
    Layout(u64),
    /// A typedef or qualified type: followed only when decoded.
    Chain,
}

/// Where a typedef's `DW_AT_type` points.
enum TypedefTarget {
    /// Nowhere: `void`.
    Void,
    /// A DIE of the same unit.
    Here(UnitOffset<usize>),
    /// Another form (a `DW_FORM_ref_addr` into another unit, as LTO
    /// writes): followed only when decoded.
    Elsewhere,
}

/// A name as the index is built: its definitions, and the layouts kept
/// (a typedef's by the fingerprint of its struct).
type Kept = (String, Vec<IndexedDef>, foldhash::HashSet<(bool, u64)>);

/// What one unit contributes: (name, definition or none) in DIE order.
type UnitDefs<'a> = Vec<(NameRef<'a>, Option<IndexedDef>)>;

/// The index scan reads what the fingerprints need, and where typedefs
/// point.
fn index_scan_wants(tag: gimli::DwTag) -> Wants {
    match def_kind(tag) {
        Some(_) => {
            const {
                Wants::of(&[
                    Want::Name,
                    Want::ByteSize,
                    Want::Declaration,
                    Want::Sibling,
                    Want::Type,
                ])
            }
        }
        None => layout_wants(tag),
    }
}

impl NameIndex {
    /// Scans every unit (in parallel) and keeps one definition per name
    /// and layout.
    pub(crate) fn build(file: &DwarfFile<'_>) -> Result<NameIndex> {
        let per_unit: Vec<UnitDefs<'_>> = (0..file.units.len())
            .into_par_iter()
            .map(|unit| scan_unit(file, unit))
            .collect::<Result<_>>()?;
        // Per name: its definitions and the layouts already kept.
        let mut by_ref: HashMap<NameRef<'_>, usize> = HashMap::default();
        let mut by_name: HashMap<&str, usize> = HashMap::default();
        let mut kept: Vec<Kept> = Vec::new();
        for (name, def) in per_unit.into_iter().flatten() {
            let slot = match by_ref.get(&name) {
                Some(&slot) => slot,
                None => {
                    // An unmerged copy of a string has another offset: the
                    // name, not the offset, is the key.
                    let Some(text) = file.name_str(name) else {
                        continue;
                    };
                    let slot = match by_name.entry(text) {
                        MapEntry::Occupied(e) => *e.get(),
                        MapEntry::Vacant(e) => {
                            kept.push((text.to_owned(), Vec::new(), Default::default()));
                            *e.insert(kept.len() - 1)
                        }
                    };
                    by_ref.insert(name, slot);
                    slot
                }
            };
            let Some(def) = def else { continue };
            let (_, defs, layouts) = &mut kept[slot];
            let first = match def.fingerprint {
                Some(print) => layouts.insert((def.kind == DefKind::Typedef, print)),
                None => true,
            };
            if first {
                defs.push(def);
            }
        }
        let mut names: Vec<(String, Vec<IndexedDef>)> =
            kept.into_iter().map(|(n, d, _)| (n, d)).collect();
        names.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Ok(NameIndex { names })
    }

    /// The kept definitions of `name` as the lookup takes them, in file
    /// order (empty when the file has no such type, or only ones a lookup
    /// never resolves).
    pub(crate) fn definitions<'n>(&self, name: &'n str) -> Vec<Definition<'n>> {
        let Ok(i) = self.names.binary_search_by(|(n, _)| n.as_str().cmp(name)) else {
            return Vec::new();
        };
        self.names[i]
            .1
            .iter()
            .map(|d| Definition {
                name,
                kind: d.kind,
                unit: d.unit as usize,
                offset: UnitOffset(d.offset as usize),
                // A typedef's is its struct's: the lookup groups structs.
                fingerprint: d.fingerprint.filter(|_| d.kind != DefKind::Typedef),
            })
            .collect()
    }

    /// Every type name of the file, sorted.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(|(n, _)| n.as_str())
    }

    /// The index as bytes (see [`NameIndex::decode`]).
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_u32(&mut out, self.names.len());
        for (name, defs) in &self.names {
            put_u32(&mut out, name.len());
            out.extend_from_slice(name.as_bytes());
            put_u32(&mut out, defs.len());
            for d in defs {
                out.push(kind_code(d.kind) | (u8::from(d.fingerprint.is_some()) << 4));
                out.extend_from_slice(&d.unit.to_le_bytes());
                out.extend_from_slice(&d.offset.to_le_bytes());
                out.extend_from_slice(&d.fingerprint.unwrap_or(0).to_le_bytes());
            }
        }
        out
    }

    /// Reads [`NameIndex::encode`]'s bytes for `file`: `None` when they
    /// are not exactly an index whose units and offsets lie in the file,
    /// with names sorted and unique.
    pub(crate) fn decode(bytes: &[u8], file: &DwarfFile<'_>) -> Option<NameIndex> {
        let mut r = Bytes(bytes);
        let count = r.u32()?;
        // Each name costs at least 8 bytes: a count beyond that is a lie,
        // refused before anything is allocated for it.
        if count > bytes.len() / 8 {
            return None;
        }
        let mut names: Vec<(String, Vec<IndexedDef>)> = Vec::with_capacity(count);
        for _ in 0..count {
            let len = r.u32()?;
            let name = std::str::from_utf8(r.take(len)?).ok()?.to_owned();
            if names.last().is_some_and(|(prev, _)| *prev >= name) {
                return None;
            }
            let n = r.u32()?;
            if n > r.0.len() / DEF_BYTES {
                return None;
            }
            let mut defs = Vec::with_capacity(n);
            for _ in 0..n {
                let tag = r.take(1)?[0];
                let kind = kind_of(tag & 0xf)?;
                let unit = r.u32()?;
                let offset = r.u32()?;
                let print = u64::from_le_bytes(r.take(8)?.try_into().ok()?);
                let header = file.units.get(unit)?;
                if offset >= unit_end(header) - unit_start(header) {
                    return None;
                }
                defs.push(IndexedDef {
                    kind,
                    unit: unit as u32,
                    offset: offset as u32,
                    fingerprint: match tag >> 4 {
                        0 => None,
                        1 => Some(print),
                        _ => return None,
                    },
                });
            }
            names.push((name, defs));
        }
        r.0.is_empty().then_some(NameIndex { names })
    }
}

/// Bytes of one encoded definition: kind, unit, offset, fingerprint.
const DEF_BYTES: usize = 1 + 4 + 4 + 8;

fn kind_code(kind: DefKind) -> u8 {
    match kind {
        DefKind::Struct => 0,
        DefKind::Union => 1,
        DefKind::Typedef => 2,
        DefKind::Enum => 3,
    }
}

fn kind_of(code: u8) -> Option<DefKind> {
    Some(match code {
        0 => DefKind::Struct,
        1 => DefKind::Union,
        2 => DefKind::Typedef,
        3 => DefKind::Enum,
        _ => return None,
    })
}

fn put_u32(out: &mut Vec<u8>, n: usize) {
    let n = u32::try_from(n).expect("an index of fewer than 2^32 names and bytes");
    out.extend_from_slice(&n.to_le_bytes());
}

/// A reader over the bytes left.
struct Bytes<'b>(&'b [u8]);

impl<'b> Bytes<'b> {
    fn take(&mut self, n: usize) -> Option<&'b [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<usize> {
        let word = u32::from_le_bytes(self.take(4)?.try_into().ok()?);
        usize::try_from(word).ok()
    }
}

/// One unit's named top-level definitions: structs and unions with their
/// fingerprints, typedefs with the fingerprint of what they name.
fn scan_unit<'a>(file: &DwarfFile<'a>, unit: usize) -> Result<UnitDefs<'a>> {
    let mut scan = UnitScan::open(file, unit, index_scan_wants)?;
    let mut out: UnitDefs<'a> = Vec::new();
    let Some(mut cursor) = scan.top_level()? else {
        return Ok(out);
    };
    let too_large = || scan.corrupt(UnitOffset(0), "a unit of 4 GiB or more");
    let mut targets: HashMap<usize, Target> = HashMap::default();
    // Typedefs (their place in `out`) resolved once the whole unit is read.
    let mut typedefs: Vec<(usize, TypedefTarget)> = Vec::new();
    let mut walk = Walk::top_level();
    let mut die = Values::default();
    let mut member = Values::default();
    while let Some(entry) = walk.next(&scan, &mut cursor, &mut die)? {
        if walk.depth() != 1 {
            walk.children(&scan, &mut cursor, &entry, &die, true)?;
            continue;
        }
        let kind = def_kind(entry.tag);
        let declaration = die.flag(Want::Declaration);
        let name = die.get(Want::Name).and_then(|v| scan.name_ref(file, v));
        let offset = u32::try_from(entry.offset.0).map_err(|_| too_large())?;
        let def = |kind, fingerprint| IndexedDef {
            kind,
            unit: unit as u32,
            offset,
            fingerprint,
        };
        match kind {
            Some(kind) if kind.is_composite() => {
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
                if !declaration {
                    targets.insert(entry.offset.0, Target::Layout(print));
                    if let Some(name) = name {
                        out.push((name, Some(def(kind, Some(print)))));
                    }
                }
                continue;
            }
            Some(DefKind::Typedef) => {
                targets.insert(entry.offset.0, Target::Chain);
                if let (Some(name), false) = (name, declaration) {
                    let target = match (die.get(Want::Type), die.unit_ref(Want::Type)) {
                        (None, _) => TypedefTarget::Void,
                        (Some(_), Some(here)) => TypedefTarget::Here(here),
                        (Some(_), None) => TypedefTarget::Elsewhere,
                    };
                    typedefs.push((out.len(), target));
                    out.push((name, Some(def(DefKind::Typedef, None))));
                }
            }
            Some(_) => {
                if let (Some(name), false) = (name, declaration) {
                    out.push((name, None));
                }
            }
            None if matches!(
                entry.tag,
                gimli::DW_TAG_const_type
                    | gimli::DW_TAG_volatile_type
                    | gimli::DW_TAG_restrict_type
                    | gimli::DW_TAG_atomic_type
            ) =>
            {
                targets.insert(entry.offset.0, Target::Chain);
            }
            None => {}
        }
        walk.children(&scan, &mut cursor, &entry, &die, true)?;
    }
    for (at, target) in typedefs {
        let target = match target {
            TypedefTarget::Void => None,
            TypedefTarget::Here(o) => targets.get(&o.0),
            TypedefTarget::Elsewhere => Some(&Target::Chain),
        };
        let def = &mut out[at].1;
        match target {
            Some(Target::Layout(print)) => {
                if let Some(d) = def {
                    d.fingerprint = Some(*print);
                }
            }
            Some(Target::Chain) => {}
            // A typedef of a base type, a pointer, an array or void, or of
            // a type outside the top level (which a C typedef never names):
            // never a layout, kept by name only.
            None => *def = None,
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{DebugSections, MappedFile};

    fn with_fixture(name: &str, f: impl FnOnce(&DwarfFile<'_>)) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bin");
        let mapped = MappedFile::open(&dir.join(name)).unwrap();
        let sections = DebugSections::load(mapped.path(), mapped.bytes()).unwrap();
        f(&DwarfFile::new(&sections).unwrap());
    }

    #[test]
    fn an_index_reads_back_as_itself_and_refuses_any_damage() {
        with_fixture("gcc-dwarf5-rt", |file| {
            let index = NameIndex::build(file).unwrap();
            assert!(index.names().count() > 20);
            let bytes = index.encode();
            assert_eq!(NameIndex::decode(&bytes, file).as_ref(), Some(&index));
            for cut in 0..bytes.len() {
                assert_eq!(NameIndex::decode(&bytes[..cut], file), None, "cut at {cut}");
            }
            let mut longer = bytes.clone();
            longer.push(0);
            assert_eq!(NameIndex::decode(&longer, file), None);
            // Every byte changed in turn: never a panic (the cache file's
            // checksum, not this decode, catches changes that keep the shape).
            for at in 0..bytes.len() {
                let mut bad = bytes.clone();
                bad[at] ^= 0xff;
                let _ = NameIndex::decode(&bad, file);
            }
        });
    }

    /// The definitions an index hands the lookup are, per name, the first
    /// of each fingerprint among those the full scan finds, in file order.
    #[test]
    fn the_index_keeps_the_first_definition_of_each_layout() {
        for name in ["dup", "gcc-dwarf4-base", "clang-dwarf5-rt"] {
            with_fixture(name, |file| {
                let index = NameIndex::build(file).unwrap();
                let all = super::super::index::all_names(file).unwrap();
                assert_eq!(index.names().collect::<Vec<_>>(), all, "{name}: names");
                let wanted = all.iter().copied().collect();
                let defs =
                    super::super::index::scan(file, &super::super::index::Filter::Names(&wanted))
                        .unwrap();
                for n in &all {
                    let mut seen = std::collections::HashSet::new();
                    let expected: Vec<(DefKind, usize, usize)> = defs
                        .iter()
                        .filter(|d| d.name == *n && d.kind.is_composite())
                        .filter(|d| seen.insert(d.fingerprint))
                        .map(|d| (d.kind, d.unit, d.offset.0))
                        .collect();
                    let got: Vec<(DefKind, usize, usize)> = index
                        .definitions(n)
                        .iter()
                        .filter(|d| d.kind.is_composite())
                        .map(|d| (d.kind, d.unit, d.offset.0))
                        .collect();
                    assert_eq!(got, expected, "{name}: {n}");
                }
            });
        }
    }

    /// The seed of the `name_index` fuzz target and corpus replay is the
    /// index of the fixture it is read against: checked here, so that it
    /// follows the format (`CACHELINT_WRITE_SEED=1` rewrites it).
    #[test]
    fn the_fuzz_seed_is_the_fixtures_index() {
        let seed = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/corpus/name_index/seed-gcc-dwarf5-base");
        with_fixture("gcc-dwarf5-base", |file| {
            let bytes = NameIndex::build(file).unwrap().encode();
            if std::env::var_os("CACHELINT_WRITE_SEED").is_some() {
                std::fs::create_dir_all(seed.parent().unwrap()).unwrap();
                std::fs::write(&seed, &bytes).unwrap();
            }
            assert!(
                std::fs::read(&seed).unwrap() == bytes,
                "{} is not the fixture's index: rerun with CACHELINT_WRITE_SEED=1",
                seed.display()
            );
        });
    }
}
