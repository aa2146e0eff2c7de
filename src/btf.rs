//! BTF → model: the `.BTF` section of a vmlinux or module, or a raw BTF
//! file such as `/sys/kernel/btf/vmlinux`, and split BTF (a module's types
//! on top of the vmlinux's). BTF is small and complete, so the whole table
//! is built at once.
//!
//! What BTF cannot carry: alignment attributes (alignment is inferred from
//! the members), source files and lines, and the pointer size (taken from
//! the ELF class, 8 for raw files). A kind this parser does not know ends
//! the reading of that file with a note: BTF gives no size for unknown
//! kinds, so the types after it cannot be found.

use std::collections::HashMap;

use crate::model::{Composite, CompositeKind, Member, Qualifier, Type, TypeId, TypeTable};

/// BTF magic, as read in the file's byte order.
pub const MAGIC: u16 = 0xeb9f;

/// The types of one or more BTF blobs (a base, then split BTF on top).
#[derive(Debug, Default)]
pub struct BtfTypes {
    /// The model.
    pub table: TypeTable,
    /// Named structs, unions, typedefs and enums, in id order.
    pub names: HashMap<String, Vec<TypeId>>,
    /// Named structs and unions in id order (for `sizes`).
    pub composites: Vec<TypeId>,
    /// Things worth telling: unknown kinds, skipped types.
    pub notes: Vec<String>,
    /// First model id of the last blob (a module's split BTF): lookups
    /// prefer its types over the base's.
    pub split_start: Option<TypeId>,
}

/// True when `data` starts with a BTF header (either byte order).
pub fn is_btf(data: &[u8]) -> bool {
    data.len() >= 2
        && (u16::from_le_bytes([data[0], data[1]]) == MAGIC
            || u16::from_be_bytes([data[0], data[1]]) == MAGIC)
}

/// Parses `blobs` in order: the first is the base, each next one is split
/// BTF whose ids and strings continue those before it. `cacheline` is the
/// machine's line size: the kernel declares `struct cacheline_padding`
/// (`CACHELINE_PADDING()`) `____cacheline_aligned`, the one alignment BTF
/// lets us know without recording it.
pub fn parse(blobs: &[&[u8]], pointer_size: u64, cacheline: u64) -> Result<BtfTypes, String> {
    let mut raw: Vec<Raw> = vec![Raw::Void];
    let mut strings: Vec<&[u8]> = Vec::new();
    let mut notes = Vec::new();
    let mut split_start = None;
    for (i, blob) in blobs.iter().enumerate() {
        if i > 0 {
            split_start = Some(raw.len());
        }
        let what = if i == 0 { "BTF" } else { "split BTF" };
        let header = Header::read(blob).map_err(|e| format!("{what}: {e}"))?;
        // Split BTF addresses strings past the base's, and types past the
        // base's last id: both continue where the blobs before end.
        strings.push(header.strings);
        read_types(&header, &mut raw, &mut notes).map_err(|e| format!("{what}: {e}"))?;
    }
    let strings = Strings(strings);
    if let Some(start) = split_start {
        strings.check_split(&raw[start..])?;
    }
    let mut types = build(&raw, &strings, pointer_size, cacheline, notes)?;
    // Model ids follow BTF ids one to one (id 0 is void in both).
    types.split_start = split_start.map(|i| TypeId(i as u32));
    Ok(types)
}

/// The parts of one blob.
struct Header<'a> {
    big_endian: bool,
    types: &'a [u8],
    strings: &'a [u8],
}

impl<'a> Header<'a> {
    fn read(data: &'a [u8]) -> Result<Self, String> {
        if data.len() < 24 {
            return Err(format!("{} bytes, shorter than a BTF header", data.len()));
        }
        let big_endian = match (
            u16::from_le_bytes([data[0], data[1]]),
            u16::from_be_bytes([data[0], data[1]]),
        ) {
            (MAGIC, _) => false,
            (_, MAGIC) => true,
            _ => return Err("no BTF magic (0xeB9F)".into()),
        };
        let r = Reader { data, big_endian };
        if data[2] != 1 {
            return Err(format!("BTF version {} (only 1 is known)", data[2]));
        }
        let hdr_len = r.u32(4)? as usize;
        let field = |at: usize| r.u32(at).map(|v| v as usize);
        let (type_off, type_len, str_off, str_len) =
            (field(8)?, field(12)?, field(16)?, field(20)?);
        let part = |off: usize, len: usize, name: &str| {
            hdr_len
                .checked_add(off)
                .and_then(|s| Some((s, s.checked_add(len)?)))
                .filter(|&(_, e)| e <= data.len())
                .map(|(s, e)| &data[s..e])
                .ok_or_else(|| {
                    format!(
                        "the {name} section ({off}+{len}) lies outside the {} bytes of BTF",
                        data.len()
                    )
                })
        };
        Ok(Header {
            big_endian,
            types: part(type_off, type_len, "type")?,
            strings: part(str_off, str_len, "string")?,
        })
    }
}

struct Reader<'a> {
    data: &'a [u8],
    big_endian: bool,
}

impl Reader<'_> {
    fn u32(&self, at: usize) -> Result<u32, String> {
        let b: [u8; 4] = self
            .data
            .get(at..at + 4)
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| format!("truncated at byte {at}"))?;
        Ok(if self.big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    }
}

/// String sections of the blobs, addressed as one.
struct Strings<'a>(Vec<&'a [u8]>);

impl Strings<'_> {
    /// Split BTF names strings of its base by their offsets: each must be
    /// the start of one. A name that lands inside a base string means the
    /// split was built on another base (another kernel's vmlinux), whose
    /// names and type ids it would silently take.
    fn check_split(&self, split: &[Raw]) -> Result<(), String> {
        let Some((_, bases)) = self.0.split_last() else {
            return Ok(());
        };
        let base_len: usize = bases.iter().map(|s| s.len()).sum();
        let mut names = Vec::new();
        for r in split {
            match r {
                Raw::Int { name, .. }
                | Raw::Float { name, .. }
                | Raw::Enum { name, .. }
                | Raw::Fwd { name, .. }
                | Raw::Typedef { name, .. } => names.push(*name),
                Raw::Composite { name, members, .. } => {
                    names.push(*name);
                    names.extend(members.iter().map(|m| m.0));
                }
                _ => {}
            }
        }
        let inside = names
            .iter()
            .filter(|&&off| off < base_len && !self.starts_string(off))
            .count();
        if inside > 0 {
            return Err(format!(
                "split BTF does not fit its base: {inside} of its {} names point into the middle \
                 of the base's strings (was it built on another vmlinux? --btf-base names the \
                 vmlinux the module was built against)",
                names.len()
            ));
        }
        Ok(())
    }

    /// True when `off` is where a string starts: the start of a section,
    /// or just past a NUL.
    fn starts_string(&self, mut off: usize) -> bool {
        for s in &self.0 {
            if off < s.len() {
                return off == 0 || s[off - 1] == 0;
            }
            off -= s.len();
        }
        false
    }

    fn get(&self, mut off: usize) -> Option<String> {
        if off == 0 {
            return None;
        }
        for s in &self.0 {
            if off < s.len() {
                let bytes = &s[off..];
                let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
                return Some(String::from_utf8_lossy(&bytes[..end]).into_owned())
                    .filter(|n| !n.is_empty());
            }
            off -= s.len();
        }
        None
    }
}

/// One BTF type as read, before ids are turned into model ids.
#[derive(Clone, Debug)]
enum Raw {
    Void,
    Int {
        name: usize,
        size: u64,
        bits: u64,
        offset: u64,
    },
    Float {
        name: usize,
        size: u64,
    },
    Ptr(u32),
    Array {
        element: u32,
        count: u64,
    },
    Composite {
        union: bool,
        name: usize,
        size: u64,
        members: Vec<(usize, u32, u64, Option<u64>)>,
    },
    Enum {
        name: usize,
        size: u64,
    },
    Fwd {
        union: bool,
        name: usize,
    },
    Typedef {
        name: usize,
        target: u32,
    },
    Qualified(Qualifier, u32),
    TypeTag(u32),
    FuncProto {
        ret: u32,
        params: Vec<u32>,
        variadic: bool,
    },
    /// FUNC, VAR, DATASEC, DECL_TAG: not types a layout needs.
    Other,
}

fn read_types(h: &Header<'_>, out: &mut Vec<Raw>, notes: &mut Vec<String>) -> Result<(), String> {
    let r = Reader {
        data: h.types,
        big_endian: h.big_endian,
    };
    let mut at = 0usize;
    while at < h.types.len() {
        let id = out.len();
        let name = r.u32(at)? as usize;
        let info = r.u32(at + 4)?;
        let size_or_type = r.u32(at + 8)?;
        let vlen = (info & 0xffff) as usize;
        let kind = (info >> 24) & 0x1f;
        let kind_flag = info >> 31 == 1;
        at += 12;
        let word = |i: usize| r.u32(at + 4 * i);
        let (raw, extra) = match kind {
            1 => {
                let enc = word(0)?;
                (
                    Raw::Int {
                        name,
                        size: u64::from(size_or_type),
                        bits: u64::from(enc & 0xff),
                        offset: u64::from((enc >> 16) & 0xff),
                    },
                    4,
                )
            }
            2 => (Raw::Ptr(size_or_type), 0),
            3 => (
                Raw::Array {
                    element: word(0)?,
                    count: u64::from(word(2)?),
                },
                12,
            ),
            4 | 5 => {
                let mut members = Vec::with_capacity(vlen);
                for m in 0..vlen {
                    let (mname, ty, off) =
                        (word(3 * m)? as usize, word(3 * m + 1)?, word(3 * m + 2)?);
                    let (bit_offset, bit_size) = if kind_flag {
                        let size = u64::from(off >> 24);
                        (u64::from(off & 0xff_ffff), (size > 0).then_some(size))
                    } else {
                        (u64::from(off), None)
                    };
                    members.push((mname, ty, bit_offset, bit_size));
                }
                (
                    Raw::Composite {
                        union: kind == 5,
                        name,
                        size: u64::from(size_or_type),
                        members,
                    },
                    12 * vlen,
                )
            }
            6 => (
                Raw::Enum {
                    name,
                    size: u64::from(size_or_type),
                },
                8 * vlen,
            ),
            7 => (
                Raw::Fwd {
                    union: kind_flag,
                    name,
                },
                0,
            ),
            8 => (
                Raw::Typedef {
                    name,
                    target: size_or_type,
                },
                0,
            ),
            9 => (Raw::Qualified(Qualifier::Volatile, size_or_type), 0),
            10 => (Raw::Qualified(Qualifier::Const, size_or_type), 0),
            11 => (Raw::Qualified(Qualifier::Restrict, size_or_type), 0),
            12 => (Raw::Other, 0),
            13 => {
                let mut params = Vec::with_capacity(vlen);
                let mut variadic = false;
                for p in 0..vlen {
                    let (pname, ty) = (word(2 * p)?, word(2 * p + 1)?);
                    if pname == 0 && ty == 0 && p + 1 == vlen {
                        variadic = true;
                    } else {
                        params.push(ty);
                    }
                }
                (
                    Raw::FuncProto {
                        ret: size_or_type,
                        params,
                        variadic,
                    },
                    8 * vlen,
                )
            }
            14 => (Raw::Other, 4),
            15 => (Raw::Other, 12 * vlen),
            16 => (
                Raw::Float {
                    name,
                    size: u64::from(size_or_type),
                },
                0,
            ),
            17 => (Raw::Other, 4),
            18 => (Raw::TypeTag(size_or_type), 0),
            19 => (
                Raw::Enum {
                    name,
                    size: u64::from(size_or_type),
                },
                12 * vlen,
            ),
            other => {
                notes.push(format!(
                    "BTF kind {other} of type {id} is unknown to cachelint; it and the {} bytes of types after it are not read",
                    h.types.len() - (at - 12)
                ));
                return Ok(());
            }
        };
        if at + extra > h.types.len() {
            return Err(format!("type {id} runs past the end of the type section"));
        }
        at += extra;
        out.push(raw);
    }
    Ok(())
}

fn build(
    raw: &[Raw],
    strings: &Strings<'_>,
    pointer_size: u64,
    cacheline: u64,
    notes: Vec<String>,
) -> Result<BtfTypes, String> {
    let mut out = BtfTypes {
        notes,
        ..BtfTypes::default()
    };
    // Model ids: BTF id 0 is void; the others get one slot each, in order.
    let mut ids = vec![TypeTable::VOID];
    for _ in 1..raw.len() {
        ids.push(out.table.push(Type::Void));
    }
    let id_of = |btf: u32, from: usize| -> Result<TypeId, String> {
        ids.get(btf as usize)
            .copied()
            .ok_or_else(|| format!("type {from} refers to type {btf}, which does not exist"))
    };
    for (i, r) in raw.iter().enumerate().skip(1) {
        let name = |off: usize| strings.get(off);
        let ty = match r {
            Raw::Void | Raw::Other => Type::Void,
            Raw::Int { name: n, size, .. } | Raw::Float { name: n, size } => Type::Base {
                name: name(*n).unwrap_or_default(),
                size: *size,
            },
            Raw::Ptr(t) => Type::Pointer {
                target: id_of(*t, i)?,
                size: pointer_size,
            },
            Raw::Array { element, count } => {
                // int a[2][3] is an array of arrays in BTF; the model keeps dims together.
                let mut dims = vec![Some(*count)];
                let mut element = *element;
                let mut guard = 0;
                while let Some(Raw::Array {
                    element: e,
                    count: c,
                }) = raw.get(element as usize)
                {
                    dims.push(Some(*c));
                    element = *e;
                    guard += 1;
                    if guard > 64 {
                        return Err(format!("type {i}: arrays nested deeper than 64 (a cycle?)"));
                    }
                }
                Type::Array {
                    element: id_of(element, i)?,
                    dims,
                }
            }
            Raw::Composite {
                union,
                name: n,
                size,
                members,
            } => {
                let mut list = Vec::with_capacity(members.len());
                for &(mname, mty, bit_offset, bit_size) in members {
                    // Without kind_flag, a bitfield is an INT member whose
                    // encoding gives its width and extra offset.
                    let (bit_offset, bit_size) = match (bit_size, raw.get(mty as usize)) {
                        (
                            None,
                            Some(Raw::Int {
                                size, bits, offset, ..
                            }),
                        ) if *bits != size * 8 || *offset != 0 => {
                            (bit_offset + offset, Some(*bits))
                        }
                        (b, _) => (bit_offset, b),
                    };
                    list.push(Member {
                        name: name(mname),
                        ty: id_of(mty, i)?,
                        bit_offset,
                        bit_size,
                        alignment: None,
                        decl: None,
                    });
                }
                let name = name(*n);
                let alignment =
                    (name.as_deref() == Some(crate::layout::PADDING_TYPE)).then_some(cacheline);
                let c = Composite {
                    kind: if *union {
                        CompositeKind::Union
                    } else {
                        CompositeKind::Struct
                    },
                    name,
                    size: Some(*size),
                    alignment,
                    members: Some(list),
                    decl: None,
                };
                if let Some(n) = &c.name {
                    out.names.entry(n.clone()).or_default().push(ids[i]);
                    out.composites.push(ids[i]);
                }
                Type::Composite(c)
            }
            Raw::Enum { name: n, size } => {
                if let Some(n) = name(*n) {
                    out.names.entry(n.clone()).or_default().push(ids[i]);
                    Type::Enum {
                        name: Some(n),
                        size: *size,
                    }
                } else {
                    Type::Enum {
                        name: None,
                        size: *size,
                    }
                }
            }
            Raw::Fwd { union, name: n } => Type::Composite(Composite {
                kind: if *union {
                    CompositeKind::Union
                } else {
                    CompositeKind::Struct
                },
                name: name(*n),
                size: None,
                alignment: None,
                members: None,
                decl: None,
            }),
            Raw::Typedef { name: n, target } => {
                let n = name(*n).unwrap_or_default();
                out.names.entry(n.clone()).or_default().push(ids[i]);
                Type::Typedef {
                    name: n,
                    target: id_of(*target, i)?,
                }
            }
            // A type tag changes nothing in the layout: a const-like no-op.
            Raw::Qualified(q, t) => Type::Qualified {
                qualifier: *q,
                target: id_of(*t, i)?,
            },
            Raw::TypeTag(t) => Type::Typedef {
                name: String::new(),
                target: id_of(*t, i)?,
            },
            Raw::FuncProto {
                ret,
                params,
                variadic,
            } => Type::Function {
                ret: id_of(*ret, i)?,
                params: params
                    .iter()
                    .map(|p| id_of(*p, i))
                    .collect::<Result<_, _>>()?,
                variadic: *variadic,
            },
        };
        out.table.set(ids[i], ty);
    }
    flexible_arrays(&mut out);
    Ok(out)
}

/// BTF writes a flexible array member (`a[]`) with a count of 0, as it
/// writes a GNU `a[0]`, and nothing tells them apart. As pahole prints
/// them, a count-0 array is taken for a flexible one where it ends a named
/// struct of more than one named member (where C allows one), and is
/// `a[0]` elsewhere; it gets its own array type, since BTF shares one type
/// among members. Either reading is wrong for some structs (the kernel's
/// `min_heap_char` ends in `preallocated[0]`).
fn flexible_arrays(out: &mut BtfTypes) {
    for &id in &out.composites {
        let last = match out.table.get(id) {
            Type::Composite(c) if c.kind == CompositeKind::Struct => c
                .members
                .as_ref()
                .filter(|m| m.iter().filter(|m| m.name.is_some()).count() > 1)
                .and_then(|m| m.last())
                .filter(|m| m.name.is_some())
                .map(|m| m.ty),
            _ => None,
        };
        let Some(ty) = last else { continue };
        let Type::Array { element, dims } = out.table.get(ty) else {
            continue;
        };
        if dims.first() != Some(&Some(0)) {
            continue;
        }
        let mut flexible = dims.clone();
        flexible[0] = None;
        let flex = out.table.push(Type::Array {
            element: *element,
            dims: flexible,
        });
        if let Type::Composite(c) = out.table.get_mut(id)
            && let Some(last) = c.members.as_mut().and_then(|m| m.last_mut())
        {
            last.ty = flex;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A little-endian BTF blob from (name_off, info, size_or_type, extra words).
    fn blob(types: &[(u32, u32, u32, &[u32])], strings: &[u8]) -> Vec<u8> {
        let mut t = Vec::new();
        for (name, info, st, extra) in types {
            for w in [*name, *info, *st].iter().chain(extra.iter()) {
                t.extend(w.to_le_bytes());
            }
        }
        let mut out = Vec::new();
        out.extend(MAGIC.to_le_bytes());
        out.extend([1u8, 0]);
        for w in [
            24u32,
            0,
            t.len() as u32,
            t.len() as u32,
            strings.len() as u32,
        ] {
            out.extend(w.to_le_bytes());
        }
        out.extend(t);
        out.extend(strings);
        out
    }

    const fn info(kind: u32, vlen: u32, kind_flag: bool) -> u32 {
        (kind << 24) | vlen | if kind_flag { 1 << 31 } else { 0 }
    }

    #[test]
    fn a_struct_with_a_bitfield_and_a_2d_array_reads_like_dwarf() {
        // strings: 1 "int", 5 "s", 7 "a", 9 "b", 11 "arr"
        let strings = b"\0int\0s\0a\0b\0arr\0";
        let types: &[(u32, u32, u32, &[u32])] = &[
            (1, info(1, 0, false), 4, &[32]),      // 1: int
            (0, info(3, 0, false), 0, &[3, 1, 2]), // 2: int[2][3]: 2 of type 3
            (0, info(3, 0, false), 0, &[1, 1, 3]), // 3: int[3]
            (
                5,
                info(4, 3, true),
                32,
                &[7, 1, 0, 9, 1, (3 << 24) | 4, 11, 2, 64],
            ),
        ];
        let t = parse(&[&blob(types, strings)], 8, 64).unwrap();
        let s = t.names["s"][0];
        let c = t.table.composite(s).unwrap();
        let m = c.members.as_ref().unwrap();
        assert_eq!(m[1].name.as_deref(), Some("b"));
        assert_eq!((m[1].bit_offset, m[1].bit_size), (4, Some(3)));
        match t.table.get(m[2].ty) {
            Type::Array { dims, .. } => assert_eq!(dims, &vec![Some(2), Some(3)]),
            other => panic!("{other:?}"),
        }
        assert_eq!(t.table.size_of(m[2].ty), Some(24));
    }

    #[test]
    fn hostile_blobs_are_errors_or_notes_never_panics() {
        let strings = b"\0int\0";
        let good = blob(&[(1, info(1, 0, false), 4, &[32])], strings);
        for cut in 0..good.len() {
            let _ = parse(&[&good[..cut]], 8, 64);
        }
        let dangling = blob(&[(0, info(2, 0, false), 99, &[])], strings);
        assert!(
            parse(&[&dangling], 8, 64)
                .unwrap_err()
                .contains("refers to type 99")
        );
        let unknown = blob(
            &[
                (1, info(1, 0, false), 4, &[32]),
                (0, info(31, 0, false), 0, &[]),
            ],
            strings,
        );
        let t = parse(&[&unknown], 8, 64).unwrap();
        assert!(t.notes[0].contains("BTF kind 31"), "{:?}", t.notes);
        let self_array = blob(&[(0, info(3, 0, false), 0, &[1, 1, 2])], strings);
        assert!(parse(&[&self_array], 8, 64).is_err());
        let huge_vlen = blob(&[(0, info(4, 0xffff, false), 0, &[])], strings);
        assert!(parse(&[&huge_vlen], 8, 64).is_err());
    }
}
