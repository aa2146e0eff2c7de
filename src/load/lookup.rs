//! From a name the user typed to one decoded struct or union: finds every
//! definition in the index, follows typedefs, groups same-named definitions
//! by layout, and picks one (`NAME`, `NAME#N` or `NAME@FILE`).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::dwarf::DwarfFile;
use crate::dwarf::decode::Decoder;
use crate::dwarf::index::{self, DefKind, Definition, Filter};
use crate::dwarf::name_index::NameIndex;
use crate::error::{Error, Result};
use crate::model::{Type, TypeId, TypeTable};

/// A type as named on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeSpec {
    /// The struct, union or typedef name.
    pub name: String,
    /// Which of several same-named layouts.
    pub pick: Pick,
}

/// Selection among same-named layouts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pick {
    /// The first one in file order.
    First,
    /// The N-th distinct layout (1-based), `NAME#N`.
    Index(usize),
    /// The layout defined in a file whose path ends with this, `NAME@FILE`.
    File(String),
}

impl TypeSpec {
    /// Parses `NAME`, `NAME#N` or `NAME@FILE`.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = || {
            Error::BadPath(format!(
                "'{text}' is not a type name (NAME, NAME#N or NAME@FILE)"
            ))
        };
        let (name, pick) = if let Some((name, n)) = text.split_once('#') {
            let n: usize = n.parse().map_err(|_| bad())?;
            if n == 0 {
                return Err(bad());
            }
            (name, Pick::Index(n))
        } else if let Some((name, file)) = text.split_once('@') {
            (name, Pick::File(file.to_owned()))
        } else {
            (text, Pick::First)
        };
        let name = name
            .strip_prefix("struct ")
            .or_else(|| name.strip_prefix("union "))
            .unwrap_or(name);
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(bad());
        }
        Ok(TypeSpec {
            name: name.to_owned(),
            pick,
        })
    }
}

/// A resolved type.
#[derive(Clone, Debug)]
pub struct Located {
    /// The composite, with members loaded deeply.
    pub id: TypeId,
    /// A note to show when there is more than one layout.
    pub note: Option<String>,
}

/// Resolves each spec; the name index is scanned once for all of them.
pub fn find_types(
    file: &DwarfFile<'_>,
    decoder: &mut Decoder<'_, '_>,
    specs: &[TypeSpec],
    path: &Path,
) -> Result<Vec<Located>> {
    let names: HashSet<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    let first_only = first_only(specs);
    let (defs, known_names) = if first_only {
        (index::scan_until_found(file, &names)?, None)
    } else {
        let found = index::lookup(file, &names)?;
        (found.defs, found.known_names)
    };
    let mut found = Vec::with_capacity(specs.len());
    for spec in specs {
        let mine: Vec<&Definition<'_>> = defs.iter().filter(|d| d.name == spec.name).collect();
        match resolve_one(decoder, spec, &mine)? {
            // After an early exit the other layouts are not all known.
            Some(f) if first_only => found.push(Located { note: None, ..f }),
            Some(f) => found.push(f),
            None => {
                let known = match known_names {
                    Some(known) => known,
                    None => index::all_names(file).unwrap_or_default(),
                };
                return Err(unknown_type(&spec.name, path, known.iter().copied()));
            }
        }
    }
    Ok(found)
}

/// NAME#1 asks for the first definition only: a scan stops once every name
/// has one, as pahole does. Anything else needs every definition.
pub(crate) fn first_only(specs: &[TypeSpec]) -> bool {
    specs.iter().all(|s| s.pick == Pick::Index(1))
}

/// [`find_types`] from a whole-file name index instead of a scan: the
/// index holds one definition per name and layout, so only those are
/// decoded.
pub(crate) fn find_indexed(
    decoder: &mut Decoder<'_, '_>,
    index: &NameIndex,
    specs: &[TypeSpec],
    path: &Path,
) -> Result<Vec<Located>> {
    specs
        .iter()
        .map(|spec| {
            let defs = index.definitions(&spec.name);
            let mine: Vec<&Definition<'_>> = defs.iter().collect();
            resolve_one(decoder, spec, &mine)?
                .ok_or_else(|| unknown_type(&spec.name, path, index.names()))
        })
        .collect()
}

/// Resolves each spec among the types of a BTF file (at `path`); an
/// unknown name is an error with the closest names.
pub fn find_in_btf(
    btf: &crate::btf::BtfTypes,
    specs: &[TypeSpec],
    path: &Path,
) -> Result<Vec<Located>> {
    specs
        .iter()
        .map(|spec| {
            find_one_in_btf(btf, spec)?
                .ok_or_else(|| unknown_type(&spec.name, path, btf.names.keys().map(String::as_str)))
        })
        .collect()
}

/// Resolves one spec among the types of a BTF file: `None` when the file
/// defines no such struct or union.
pub fn find_one_in_btf(btf: &crate::btf::BtfTypes, spec: &TypeSpec) -> Result<Option<Located>> {
    if let Pick::File(_) = spec.pick {
        return Err(Error::UnknownVariant(format!(
            "'{}': BTF records no source files, so NAME@FILE cannot pick a layout; use NAME#N",
            spec.name
        )));
    }
    let table = &btf.table;
    let mut composites = Vec::new();
    let mut typedefs = Vec::new();
    for &id in btf.names.get(&spec.name).into_iter().flatten() {
        match table.get(id) {
            Type::Composite(c) if c.members.is_some() => composites.push(id),
            Type::Typedef { .. } => {
                let target = table.strip(id);
                if matches!(table.get(target), Type::Composite(c) if c.members.is_some()) {
                    typedefs.push(target);
                }
            }
            _ => {}
        }
    }
    let mut candidates = if composites.is_empty() {
        typedefs
    } else {
        composites
    };
    // A module's own types (split BTF) come before the base's.
    if let Some(start) = btf.split_start {
        candidates.sort_by_key(|id| *id < start);
    }
    if candidates.is_empty() {
        return Ok(None);
    }
    pick_layout(table, spec, &candidates).map(Some)
}

/// The types of a build among some names, from [`find_present`] (and the
/// loaders' `find_present`).
#[derive(Debug, Default)]
pub struct Present {
    /// Each name the build defines, resolved (first layout).
    pub types: HashMap<String, Located>,
    /// Per name, the DWARF units that define it (empty for BTF).
    pub units: HashMap<String, HashSet<usize>>,
}

/// The types of `names` that the file defines; absent names are simply
/// left out.
pub fn find_present(
    file: &DwarfFile<'_>,
    decoder: &mut Decoder<'_, '_>,
    names: &HashSet<&str>,
) -> Result<Present> {
    let defs = index::scan(file, &Filter::Names(names))?;
    let mut found = HashMap::new();
    let mut units = HashMap::new();
    for name in names {
        let mine: Vec<&Definition<'_>> = defs.iter().filter(|d| d.name == *name).collect();
        let spec = TypeSpec {
            name: (*name).to_owned(),
            pick: Pick::First,
        };
        if let Some(f) = resolve_one(decoder, &spec, &mine)? {
            units.insert((*name).to_owned(), mine.iter().map(|d| d.unit).collect());
            found.insert((*name).to_owned(), f);
        }
    }
    Ok(Present {
        types: found,
        units,
    })
}

/// [`find_present`] from a whole-file name index: the same types, but
/// [`Present::units`] holds only the units of each layout's first
/// definition (the index keeps no others), which roots discovery cannot
/// use.
pub(crate) fn find_present_indexed(
    decoder: &mut Decoder<'_, '_>,
    index: &NameIndex,
    names: &HashSet<&str>,
) -> Result<Present> {
    let mut present = Present::default();
    for name in names {
        let defs = index.definitions(name);
        let mine: Vec<&Definition<'_>> = defs.iter().collect();
        let spec = TypeSpec {
            name: (*name).to_owned(),
            pick: Pick::First,
        };
        if let Some(f) = resolve_one(decoder, &spec, &mine)? {
            present
                .units
                .insert((*name).to_owned(), mine.iter().map(|d| d.unit).collect());
            present.types.insert((*name).to_owned(), f);
        }
    }
    Ok(present)
}

fn resolve_one(
    decoder: &mut Decoder<'_, '_>,
    spec: &TypeSpec,
    defs: &[&Definition<'_>],
) -> Result<Option<Located>> {
    let composites: Vec<_> = defs.iter().filter(|d| d.kind.is_composite()).collect();
    let mut candidates = Vec::new();
    if composites.is_empty() {
        for d in defs.iter().filter(|d| d.kind == DefKind::Typedef) {
            let id = decoder.type_at(d.unit, d.offset)?;
            let target = decoder.table.strip(id);
            if matches!(decoder.table.get(target), Type::Composite(c) if c.size.is_some()) {
                candidates.push(target);
            }
        }
    } else {
        // One definition of each fingerprint: the hundreds of copies a
        // header leaves in a vmlinux are one layout, decoded once.
        let mut seen = foldhash::HashSet::default();
        for d in composites {
            if d.fingerprint.is_none_or(|f| seen.insert(f)) {
                candidates.push(decoder.type_at(d.unit, d.offset)?);
            }
        }
    }
    if candidates.is_empty() {
        return Ok(None);
    }
    for &id in &candidates {
        decoder.load_members(id)?;
    }
    let found = pick_layout(&decoder.table, spec, &candidates)?;
    decoder.load_deep(found.id)?;
    Ok(Some(found))
}

/// Among same-named composites (members loaded), groups the distinct
/// layouts in order of first appearance and picks the one `spec` asks for,
/// with a note when there are several. Shared by every loader.
pub fn pick_layout(table: &TypeTable, spec: &TypeSpec, candidates: &[TypeId]) -> Result<Located> {
    let mut distinct: Vec<(LayoutKey, TypeId)> = Vec::new();
    for &id in candidates {
        let key = layout_key(table, id);
        if !distinct.iter().any(|(k, _)| *k == key) {
            distinct.push((key, id));
        }
    }
    let picked = match &spec.pick {
        Pick::First => 0,
        Pick::Index(n) if *n <= distinct.len() => n - 1,
        Pick::Index(n) => {
            return Err(Error::UnknownVariant(format!(
                "'{}#{n}': there are only {} distinct layouts of '{}'",
                spec.name,
                distinct.len(),
                spec.name
            )));
        }
        Pick::File(suffix) => distinct
            .iter()
            .position(|(_, id)| decl_file(table, *id).is_some_and(|f| f.ends_with(suffix.as_str())))
            .ok_or_else(|| {
                let files: Vec<String> = distinct
                    .iter()
                    .map(|(_, id)| decl_file(table, *id).unwrap_or("<unknown file>").to_owned())
                    .collect();
                Error::UnknownVariant(format!(
                    "'{}@{suffix}': no layout of '{}' is defined in a file ending with '{suffix}' (defined in: {})",
                    spec.name,
                    spec.name,
                    files.join(", ")
                ))
            })?,
    };
    let id = distinct[picked].1;
    // BTF records no source files: then only NAME#N can pick.
    let has_files = distinct
        .iter()
        .any(|(_, id)| decl_file(table, *id).is_some());
    let note = (distinct.len() > 1).then(|| {
        let listing: Vec<String> = distinct
            .iter()
            .enumerate()
            .map(|(i, (key, id))| match decl_file(table, *id) {
                Some(file) => format!("#{} {} bytes ({file})", i + 1, key.size),
                None if has_files => format!("#{} {} bytes (unknown file)", i + 1, key.size),
                None => format!("#{} {} bytes", i + 1, key.size),
            })
            .collect();
        let how = if has_files {
            format!("'{}#N' or '{}@FILE'", spec.name, spec.name)
        } else {
            format!("'{}#N'", spec.name)
        };
        format!(
            "'{}' has {} distinct layouts in this file: {}; showing #{}. Pick another with {how}.",
            spec.name,
            distinct.len(),
            listing.join(", "),
            picked + 1,
        )
    });
    Ok(Located { id, note })
}

fn decl_file(table: &TypeTable, id: TypeId) -> Option<&str> {
    table.composite(id)?.decl.as_ref().map(|d| d.file.as_str())
}

/// What makes two same-named definitions the same layout: exactly what
/// pahole compares (size, member count, member names, bit offsets and
/// bitfield widths), so that `sizes` lists the same duplicates.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct LayoutKey {
    size: u64,
    members: Vec<(Option<String>, u64, Option<u64>)>,
}

/// The [`LayoutKey`] of a composite whose members are loaded.
pub fn layout_key(table: &TypeTable, id: TypeId) -> LayoutKey {
    let c = table.composite(id);
    LayoutKey {
        size: c.and_then(|c| c.size).unwrap_or(0),
        members: c
            .and_then(|c| c.members.as_ref())
            .into_iter()
            .flatten()
            .map(|m| (m.name.clone(), m.bit_offset, m.bit_size))
            .collect(),
    }
}

/// The "unknown type" error for the file at `path`, with the closest of
/// the `known` names it defines.
fn unknown_type<'n>(name: &str, path: &Path, known: impl Iterator<Item = &'n str>) -> Error {
    Error::UnknownType {
        name: name.to_owned(),
        path: path.to_owned(),
        hint: crate::suggest::did_you_mean(name, known),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        assert_eq!(TypeSpec::parse("lruvec").unwrap().pick, Pick::First);
        assert_eq!(TypeSpec::parse("struct lruvec").unwrap().name, "lruvec");
        assert_eq!(TypeSpec::parse("dup#2").unwrap().pick, Pick::Index(2));
        assert_eq!(
            TypeSpec::parse("dup@dup_b.c").unwrap().pick,
            Pick::File("dup_b.c".into())
        );
        assert!(TypeSpec::parse("dup#0").is_err());
        assert!(TypeSpec::parse("a.b").is_err());
        assert!(TypeSpec::parse("").is_err());
    }

    /// Decoding one definition per fingerprint is sound only if equal
    /// fingerprints mean equal layouts: checked against the decoded layout
    /// of every definition of every struct, where same-named structs of
    /// different layouts exist (`dup`) and where the copies are many.
    #[test]
    fn equal_fingerprints_are_equal_layouts() {
        use crate::input::{DebugSections, MappedFile};
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bin");
        for name in [
            "dup",
            "gcc-dwarf5-rt",
            "clang-dwarf4-base",
            "gcc-dwarf5-base.o",
        ] {
            let mapped = MappedFile::open(&dir.join(name)).unwrap();
            let sections = DebugSections::load(mapped.path(), mapped.bytes()).unwrap();
            let file = DwarfFile::new(&sections).unwrap();
            let mut decoder = Decoder::new(&file);
            let defs = index::scan(&file, &Filter::Composites).unwrap();
            let mut by_print: HashMap<(&str, u64), LayoutKey> = HashMap::new();
            let mut layouts: HashMap<&str, HashSet<u64>> = HashMap::new();
            for d in &defs {
                let print = d.fingerprint.expect("a struct's fingerprint");
                let id = decoder.type_at(d.unit, d.offset).unwrap();
                decoder.load_members(id).unwrap();
                let key = layout_key(&decoder.table, id);
                layouts.entry(d.name).or_default().insert(print);
                match by_print.get(&(d.name, print)) {
                    Some(first) => assert_eq!(first, &key, "{name}: {}", d.name),
                    None => {
                        by_print.insert((d.name, print), key);
                    }
                }
            }
            if name == "dup" {
                let several = layouts.values().filter(|p| p.len() > 1).count();
                assert!(several > 0, "dup defines same-named structs of two layouts");
            }
        }
    }
}
