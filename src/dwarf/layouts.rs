//! A whole-file scan for `sizes`: every named struct and union defined at
//! the top level of a unit, with a fingerprint of its layout read straight
//! from the raw member DIEs (names, locations, bit offsets and widths, the
//! attributes pahole compares). Same-named definitions with the same
//! fingerprint are one layout, so only one of each needs decoding; the
//! hundreds of copies a header leaves in a vmlinux are never decoded.

use std::hash::{BuildHasher, Hash, Hasher};

use foldhash::quality::{FixedState, FoldHasher};

use gimli::UnitOffset;
use rayon::prelude::*;

use super::index::{DefKind, def_kind, index_wants};
use super::raw_dies::{Cursor, UnitScan, Values, Walk, Want, Wants};
use super::{DwarfFile, NameRef};
use crate::error::Result;

/// A fixed-seed hasher, so that fingerprints agree across threads and runs.
fn new_hasher() -> FoldHasher<'static> {
    FixedState::with_seed(0x6361_6368_656c_696e).build_hasher()
}

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

/// What the layout scan reads: definitions as the index does, and the
/// attributes of members that place them.
fn layout_wants(tag: gimli::DwTag) -> Wants {
    match tag {
        gimli::DW_TAG_member | gimli::DW_TAG_inheritance => {
            const {
                Wants::of(&[
                    Want::Name,
                    Want::External,
                    Want::Declaration,
                    Want::MemberLocation,
                    Want::DataBitOffset,
                    Want::BitOffset,
                    Want::BitSize,
                    Want::ByteSize,
                ])
            }
        }
        // A definition's size is part of its fingerprint: same-named
        // structs with the same members can differ in size (an aligned
        // attribute), and pahole lists each.
        _ if def_kind(tag).is_some() => {
            const { Wants::of(&[Want::Name, Want::ByteSize, Want::Declaration, Want::Sibling]) }
        }
        _ => index_wants(tag),
    }
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
            let mut hasher = new_hasher();
            (kind == DefKind::Union, die.unsigned(Want::ByteSize)).hash(&mut hasher);
            if entry.has_children {
                // Read the members; the cursor ends up after the struct.
                hash_members(file, &scan, &mut cursor, &mut member, &mut hasher)?;
            }
            if let (Some(name), false) = (
                die.get(Want::Name).and_then(|v| scan.name_ref(file, v)),
                die.flag(Want::Declaration),
            ) {
                out.push(LayoutDef {
                    name,
                    unit,
                    offset: entry.offset,
                    fingerprint: hasher.finish(),
                });
            }
            continue;
        }
        walk.children(&scan, &mut cursor, &entry, &die, true)?;
    }
    Ok(out)
}

/// The attributes that place a member.
const PLACE: [Want; 5] = [
    Want::MemberLocation,
    Want::DataBitOffset,
    Want::BitOffset,
    Want::BitSize,
    Want::ByteSize,
];

/// Feeds one member to the fingerprint as a few words: a first word that
/// says which attributes are present and how each is encoded, then one word
/// per present attribute. The first word makes the sequence unambiguous.
fn hash_member<'a>(
    file: &DwarfFile<'a>,
    scan: &UnitScan<'a>,
    die: &Values<'a>,
    inheritance: bool,
    hasher: &mut FoldHasher<'static>,
) {
    let hash_bytes = |bytes: &[u8]| {
        let mut h = new_hasher();
        bytes.hash(&mut h);
        h.finish()
    };
    let mut words = [0u64; 1 + PLACE.len()];
    let mut count = 0;
    let mut shape = u64::from(inheritance);
    let name = die.get(Want::Name).and_then(|v| scan.name_ref(file, v));
    if let Some(name) = name {
        let (kind, word) = match name {
            NameRef::Str(o) => (1, o),
            NameRef::LineStr(o) => (2, o),
            NameRef::Inline(bytes) => (3, hash_bytes(bytes)),
        };
        shape |= kind << 1;
        words[count] = word;
        count += 1;
    }
    for (i, want) in PLACE.into_iter().enumerate() {
        let (kind, word) = die.words(want, hash_bytes);
        if kind != 0 {
            // Kinds are below 16: four bits each.
            shape |= kind << (3 + 4 * i);
            words[count] = word;
            count += 1;
        }
    }
    hasher.write_u64(shape);
    for word in &words[..count] {
        hasher.write_u64(*word);
    }
}

/// Hashes the member DIEs among a struct's children and consumes the
/// children, nested ones included.
fn hash_members<'a>(
    file: &DwarfFile<'a>,
    scan: &UnitScan<'a>,
    cursor: &mut Cursor<'a>,
    die: &mut Values<'a>,
    hasher: &mut FoldHasher<'static>,
) -> Result<()> {
    // Depth relative to the struct: 1 = its direct children.
    let mut depth = 1usize;
    while depth > 0 {
        if cursor.is_empty() {
            return Err(scan.corrupt(cursor.offset(), "struct children run past the unit"));
        }
        let Some(entry) = scan.next(cursor, die)? else {
            depth -= 1;
            continue;
        };
        let tag = entry.tag;
        let member = depth == 1 && matches!(tag, gimli::DW_TAG_member | gimli::DW_TAG_inheritance);
        if member && !die.flag(Want::External) && !die.flag(Want::Declaration) {
            hash_member(file, scan, die, tag == gimli::DW_TAG_inheritance, hasher);
        }
        if entry.has_children {
            depth += 1;
        }
    }
    Ok(())
}
