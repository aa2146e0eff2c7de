//! A layout fingerprint read straight from a struct's raw member DIEs:
//! kind, size, and each member's name, location, bit offset and width (the
//! attributes pahole compares). Same-named definitions with the same
//! fingerprint are one layout, so only one of each needs decoding. Equal
//! layouts may still differ in fingerprint (a location written in another
//! form, an unmerged string), never the other way round: callers group by
//! fingerprint first, then compare the few decoded layouts.

use std::hash::{BuildHasher, Hash, Hasher};

use foldhash::quality::{FixedState, FoldHasher};

use super::def_kind::{DefKind, def_kind, index_wants};
use super::raw_dies::{Cursor, Entry, UnitScan, Values, Want, Wants};
use super::{DwarfFile, NameRef};
use crate::error::Result;

/// A fixed-seed hasher, so that fingerprints agree across threads and runs.
fn new_hasher() -> FoldHasher<'static> {
    FixedState::with_seed(0x6361_6368_656c_696e).build_hasher()
}

/// What the layout scan reads: definitions as the index does, and the
/// attributes of members that place them.
pub(super) fn layout_wants(tag: gimli::DwTag) -> Wants {
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

/// The fingerprint of the struct or union `entry` (a definition of `kind`
/// whose attributes are in `die`), reading its children: the cursor ends
/// up after the struct. `member` is scratch space for the member DIEs.
pub(super) fn composite<'a>(
    file: &DwarfFile<'a>,
    scan: &UnitScan<'a>,
    cursor: &mut Cursor<'a>,
    entry: &Entry,
    kind: DefKind,
    die: &Values<'a>,
    member: &mut Values<'a>,
) -> Result<u64> {
    let mut hasher = new_hasher();
    (kind == DefKind::Union, die.unsigned(Want::ByteSize)).hash(&mut hasher);
    if entry.has_children {
        hash_members(file, scan, cursor, member, &mut hasher)?;
    }
    Ok(hasher.finish())
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
