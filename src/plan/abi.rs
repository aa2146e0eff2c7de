//! The C ABI's placement rules, as the System V ABIs of the kernel's
//! machines (and gcc and clang on them) apply them: each member at the
//! next offset its alignment allows; a bitfield where the previous one
//! ended unless it would span more units of its type's alignment than its
//! type has; a struct's alignment the largest of its members' and its own
//! attribute's, its size rounded up to it; a union's members all at 0.
//! Packed structs place everything at the next bit (members keep only an
//! explicit `aligned` attribute).
//!
//! [`Recipe`] is what a compiled struct says about itself: which members
//! move together, and the alignment attributes behind its offsets —
//! recorded by the debug info (`DW_AT_alignment`) or inferred, as pahole
//! infers them, where an offset is larger than natural alignment explains.
//! [`lay_out`] places [`Piece`]s by the rules. A recipe is checked by
//! laying the struct out again in its own order: it must give back every
//! compiled offset and the size, or the struct is refused.

use crate::model::{Composite, CompositeKind, Member};

/// The machine facts placement needs beyond the debug info.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Abi {
    /// Largest alignment of a scalar inside a struct: 4 on i386, where
    /// `long long` and `double` members are 4-aligned; 16 elsewhere.
    pub max_scalar_align: u64,
    /// `sizeof(void *)` and `sizeof(long)`.
    pub pointer_size: u64,
    /// The L1 cacheline (`SMP_CACHE_BYTES`): the alignment inferred for a
    /// member whose offset it divides and explains.
    pub cacheline: u64,
    /// The kernel's `arch/` directory of the machine (`x86`, `arm64`),
    /// when the file names one.
    pub arch: Option<&'static str>,
}

/// A 64-bit machine that aligns scalars to their size (x86-64, arm64,
/// s390x, ppc64, riscv64): what raw BTF, which names no machine, gets.
impl Default for Abi {
    fn default() -> Self {
        Abi {
            max_scalar_align: 16,
            pointer_size: 8,
            cacheline: 64,
            arch: None,
        }
    }
}

impl Abi {
    /// The ABI of an ELF machine with `pointer_size`-byte pointers.
    pub fn new(architecture: object::Architecture, pointer_size: u64) -> Abi {
        let cacheline = crate::input::cacheline_for(architecture);
        let max_scalar_align = match architecture {
            object::Architecture::I386 => 4,
            _ => 16,
        };
        Abi {
            max_scalar_align,
            pointer_size,
            cacheline,
            arch: crate::input::kernel_arch(architecture),
        }
    }

    /// Alignment of a scalar (integer, enum, pointer, float) of `size`
    /// bytes inside a struct.
    pub fn scalar_align(self, size: u64) -> u64 {
        let natural = if size == 0 {
            1
        } else {
            1 << size.trailing_zeros().min(12)
        };
        natural.min(self.max_scalar_align)
    }
}

/// One bitfield of a run: its width and its declared type's size and
/// alignment (bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bitfield {
    /// Width in bits.
    pub width: u64,
    /// `sizeof` the declared type.
    pub unit_size: u64,
    /// Alignment of the declared type inside a struct.
    pub unit_align: u64,
}

/// What [`lay_out`] places.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// One member: its size and the alignment it is placed at.
    Whole {
        /// `sizeof` the member.
        size: u64,
        /// Its effective alignment (type's or attribute's, whichever is
        /// larger; in a packed struct the attribute's only).
        align: u64,
    },
    /// A run of consecutive bitfields, which moves as one.
    Bits {
        /// The bitfields in their order.
        fields: Vec<Bitfield>,
        /// Set when the compiled run holds padding the debug info does not
        /// show (an unnamed or zero-width bitfield): the run then keeps
        /// its bit positions relative to its start.
        rigid: Option<Rigid>,
    },
}

/// A bitfield run kept as compiled: its bits relative to its first, and
/// where in its unit the first bit sat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rigid {
    /// Bit offset of each field from the first.
    pub relative: Vec<u64>,
    /// The first bit's offset modulo `8 * unit`.
    pub phase: u64,
    /// The largest unit alignment of the run, bytes.
    pub unit: u64,
}

/// Where [`lay_out`] put the pieces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Laid {
    /// Bit offset of each piece's fields (one for a whole member).
    pub bit_offsets: Vec<Vec<u64>>,
    /// The struct's size.
    pub size: u64,
    /// The struct's alignment.
    pub align: u64,
}

fn align_up(value: u64, align: u64) -> Option<u64> {
    value.checked_next_multiple_of(align.max(1))
}

/// Places `pieces` in order into a struct (or union) with at least
/// alignment `min_align`; `None` when an offset overflows.
pub fn lay_out(
    pieces: &[Piece],
    kind: CompositeKind,
    packed: bool,
    min_align: u64,
) -> Option<Laid> {
    let mut cur: u64 = 0; // bits
    let mut end: u64 = 0; // bits
    let mut align = min_align.max(1);
    let mut bit_offsets = Vec::with_capacity(pieces.len());
    for piece in pieces {
        if kind == CompositeKind::Union {
            cur = 0;
        }
        match piece {
            Piece::Whole { size, align: a } => {
                let at = align_up(cur.div_ceil(8), *a)?;
                bit_offsets.push(vec![at.checked_mul(8)?]);
                cur = at.checked_add(*size)?.checked_mul(8)?;
                align = align.max(*a);
            }
            Piece::Bits { fields, rigid } => {
                let offsets = place_bits(cur, fields, rigid.as_ref(), packed)?;
                cur = offsets
                    .iter()
                    .zip(fields)
                    .map(|(o, f)| o + f.width)
                    .max()
                    .unwrap_or(cur);
                if !packed {
                    align = fields.iter().map(|f| f.unit_align).fold(align, u64::max);
                }
                bit_offsets.push(offsets);
            }
        }
        end = end.max(cur);
    }
    let size = align_up(end.div_ceil(8), align)?;
    Some(Laid {
        bit_offsets,
        size,
        align,
    })
}

/// Bit offsets of a run's fields when the run starts at bit `cur` or
/// after.
fn place_bits(
    cur: u64,
    fields: &[Bitfield],
    rigid: Option<&Rigid>,
    packed: bool,
) -> Option<Vec<u64>> {
    if let Some(r) = rigid {
        let unit = r.unit.checked_mul(8)?;
        let base = cur.checked_sub(cur % unit)?.checked_add(r.phase)?;
        let start = if base >= cur {
            base
        } else {
            base.checked_add(unit)?
        };
        return r.relative.iter().map(|d| start.checked_add(*d)).collect();
    }
    let mut p = cur;
    let mut out = Vec::with_capacity(fields.len());
    for f in fields {
        if !packed && f.width > 0 {
            let unit = f.unit_align.max(1) * 8;
            let units = (f.unit_size * 8).div_ceil(unit).max(1);
            let spanned = ((p % unit) + f.width).div_ceil(unit);
            if spanned > units {
                p = align_up(p, unit)?;
            }
        }
        out.push(p);
        p = p.checked_add(f.width)?;
    }
    Some(out)
}

/// Bit offsets of a run's bitfields laid out from bit `cur` in a struct
/// that is not packed; `None` when an offset overflows.
pub(crate) fn bits_from(cur: u64, fields: &[Bitfield]) -> Option<Vec<u64>> {
    place_bits(cur, fields, None, false)
}

/// The layout rules behind one compiled struct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recipe {
    /// Packed (a member sits below its natural alignment).
    pub packed: bool,
    /// The struct's own alignment attribute (1 when none).
    pub struct_align: u64,
    /// The members as they move: whole members and bitfield runs, in the
    /// compiled order.
    pub parts: Vec<Part>,
}

/// Members that move as one, and the alignment attribute of a whole one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// Indexes into the struct's members (more than one for a bitfield run).
    pub members: Vec<usize>,
    /// Alignment attribute on a whole member (recorded or inferred; 1 when
    /// none).
    pub attr_align: u64,
    /// For a bitfield run the compiler padded invisibly.
    pub rigid: Option<Rigid>,
}

/// What a recipe needs to know of the members' types.
pub trait Types {
    /// `sizeof` the type of member `m`.
    fn size(&self, m: &Member) -> Option<u64>;
    /// Natural alignment of the type of member `m`.
    fn align(&self, m: &Member) -> u64;
    /// The largest alignment an unrecorded attribute is taken to be when
    /// several explain an offset: the machine's cacheline.
    fn largest_guess(&self) -> u64;
}

/// Why a compiled struct cannot be re-laid out.
pub type Unexplained = String;

/// Reads the recipe of a compiled struct. `packed` overrides the
/// inference (debug info does not record `packed`).
pub fn recipe(
    c: &Composite,
    types: &dyn Types,
    packed: Option<bool>,
) -> Result<Recipe, Unexplained> {
    let members = c.members.as_deref().unwrap_or(&[]);
    let size = c.size.ok_or("it has no size")?;
    let union = c.kind == CompositeKind::Union;
    // Group bitfield runs.
    let mut parts: Vec<Part> = Vec::new();
    for (i, m) in members.iter().enumerate() {
        let continues = m.is_bitfield()
            && !union
            && i > 0
            && members[i - 1].is_bitfield()
            && parts
                .last()
                .is_some_and(|p| p.members.last() == Some(&(i - 1)));
        if continues {
            parts.last_mut().unwrap().members.push(i);
        } else {
            parts.push(Part {
                members: vec![i],
                attr_align: 1,
                rigid: None,
            });
        }
    }
    let packed = packed.unwrap_or_else(|| looks_packed(members, size, types));
    let mut cur: u64 = 0;
    let mut natural_align: u64 = 1;
    for part in &mut parts {
        if union {
            cur = 0;
        }
        let first = &members[part.members[0]];
        if first.is_bitfield() {
            let fields = bitfields(members, &part.members, types)?;
            let compiled: Vec<u64> = part
                .members
                .iter()
                .map(|&i| members[i].bit_offset)
                .collect();
            let placed = place_bits(cur, &fields, None, packed).ok_or("offsets overflow")?;
            if placed != compiled {
                let unit = fields
                    .iter()
                    .map(|f| f.unit_align)
                    .max()
                    .unwrap_or(1)
                    .max(1);
                part.rigid = Some(Rigid {
                    relative: compiled.iter().map(|o| o - compiled[0]).collect(),
                    phase: compiled[0] % (unit * 8),
                    unit,
                });
            }
            if !packed {
                natural_align = fields
                    .iter()
                    .map(|f| f.unit_align)
                    .fold(natural_align, u64::max);
            }
            cur = compiled
                .iter()
                .zip(&fields)
                .map(|(o, f)| o + f.width)
                .max()
                .unwrap_or(cur)
                .max(cur);
            continue;
        }
        let name = first.name.as_deref().unwrap_or("(anonymous)");
        let msize = types
            .size(first)
            .ok_or_else(|| format!("member '{name}' has no size"))?;
        let base = if packed { 1 } else { types.align(first) };
        let explicit = first.alignment.unwrap_or(1);
        let mut a = base.max(explicit);
        let offset = first.byte_offset();
        let next = align_up(cur.div_ceil(8), a).ok_or("offsets overflow")?;
        let natural = if union { 0 } else { next };
        if offset > natural {
            let from = cur.div_ceil(8);
            // Every alignment from the smallest that explains the offset to
            // the largest power of two dividing it explains it; like
            // pahole, take the largest up to the cacheline
            // (`____cacheline_aligned` is the attribute kernels use most).
            let explains = |cand: u64| align_up(from, cand) == Some(offset);
            let smallest = (a.trailing_zeros()..=16)
                .map(|k| 1u64 << k)
                .find(|&c| explains(c));
            let largest = (a.trailing_zeros()..=types.largest_guess().trailing_zeros())
                .rev()
                .map(|k| 1u64 << k)
                .find(|&c| explains(c));
            a = largest.or(smallest).ok_or_else(|| {
                    format!(
                        "member '{name}' is at byte {offset}, where no alignment after byte {from} puts it"
                    )
                })?;
        } else if offset < natural {
            return Err(format!(
                "member '{name}' is at byte {offset}, below its alignment ({a} bytes) after byte {}",
                cur.div_ceil(8)
            ));
        }
        part.attr_align = if a > base { a } else { explicit };
        natural_align = natural_align.max(a);
        cur = offset
            .checked_add(msize)
            .and_then(|e| e.checked_mul(8))
            .ok_or("offsets overflow")?
            .max(if union { cur } else { 0 });
    }
    let end = if union {
        members
            .iter()
            .map(|m| member_end(m, types))
            .max()
            .unwrap_or(0)
    } else {
        cur.div_ceil(8)
    };
    // gcc records a struct's alignment (DW_AT_alignment) when a member has
    // an alignment attribute, the struct none: an alignment its members
    // explain is theirs, and goes with them when a plan removes them
    // (tcp_sock's aligned group markers: the module built without them is
    // 8-aligned).
    let mut struct_align = c.alignment.filter(|&a| a > natural_align).unwrap_or(1);
    let natural_size = align_up(end, natural_align.max(struct_align)).ok_or("size overflows")?;
    if size > natural_size {
        struct_align = (natural_align.trailing_zeros()..=16)
            .map(|k| 1u64 << k)
            .find(|&cand| align_up(end, cand) == Some(size))
            .ok_or_else(|| {
                format!("its size {size} is not its end {end} rounded to any alignment")
            })?;
    } else if size < natural_size {
        return Err(format!(
            "its size {size} is below its end {end} rounded to its alignment"
        ));
    }
    let recipe = Recipe {
        packed,
        struct_align,
        parts,
    };
    // The recipe must give the compiled struct back.
    let pieces = recipe.pieces(members, types)?;
    let laid = lay_out(&pieces, c.kind, packed, struct_align).ok_or("offsets overflow")?;
    let compiled: Vec<Vec<u64>> = recipe
        .parts
        .iter()
        .map(|p| p.members.iter().map(|&i| members[i].bit_offset).collect())
        .collect();
    if laid.bit_offsets != compiled || laid.size != size {
        return Err(format!(
            "the C ABI rules do not give back its compiled layout (size {size}, laid out {})",
            laid.size
        ));
    }
    Ok(recipe)
}

/// End byte of a member of a union.
fn member_end(m: &Member, types: &dyn Types) -> u64 {
    match m.bit_size {
        Some(w) => (m.bit_offset + w).div_ceil(8),
        None => m.byte_offset() + types.size(m).unwrap_or(0),
    }
}

/// A struct is packed when a member sits below its type's alignment, or
/// its size is not a multiple of its members' alignment.
fn looks_packed(members: &[Member], size: u64, types: &dyn Types) -> bool {
    let mut max_align = 1;
    for m in members {
        let a = types.align(m);
        if !m.is_bitfield() {
            if m.alignment.is_none() && !m.byte_offset().is_multiple_of(a) {
                return true;
            }
            max_align = max_align.max(a.max(m.alignment.unwrap_or(1)));
        }
    }
    !members.is_empty() && !size.is_multiple_of(max_align)
}

fn bitfields(
    members: &[Member],
    run: &[usize],
    types: &dyn Types,
) -> Result<Vec<Bitfield>, Unexplained> {
    run.iter()
        .map(|&i| {
            let m = &members[i];
            Ok(Bitfield {
                width: m.bit_size.unwrap_or(0),
                unit_size: types.size(m).ok_or("a bitfield's type has no size")?,
                unit_align: types.align(m),
            })
        })
        .collect()
}

impl Recipe {
    /// The pieces of the compiled order, as `types` now sizes and aligns
    /// the members' types.
    pub fn pieces(&self, members: &[Member], types: &dyn Types) -> Result<Vec<Piece>, Unexplained> {
        self.parts
            .iter()
            .map(|p| self.piece(p, members, types, 1))
            .collect()
    }

    /// The piece for `part`, with an extra alignment attribute `extra`.
    pub fn piece(
        &self,
        part: &Part,
        members: &[Member],
        types: &dyn Types,
        extra: u64,
    ) -> Result<Piece, Unexplained> {
        let first = &members[part.members[0]];
        if first.is_bitfield() {
            return Ok(Piece::Bits {
                fields: bitfields(members, &part.members, types)?,
                rigid: part.rigid.clone(),
            });
        }
        let size = types.size(first).ok_or_else(|| {
            format!(
                "member '{}' has no size",
                first.name.as_deref().unwrap_or("?")
            )
        })?;
        let attr = part.attr_align.max(extra);
        let align = if self.packed {
            attr
        } else {
            attr.max(types.align(first))
        };
        Ok(Piece::Whole { size, align })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TypeId;

    /// Member types are given as (size, align) by their TypeId: id n is
    /// a scalar of size n.
    struct Sizes;
    impl Types for Sizes {
        fn size(&self, m: &Member) -> Option<u64> {
            Some(u64::from(m.ty.0))
        }
        fn align(&self, m: &Member) -> u64 {
            Abi::default().scalar_align(u64::from(m.ty.0))
        }
        fn largest_guess(&self) -> u64 {
            64
        }
    }

    fn member(name: &str, size: u32, byte: u64) -> Member {
        Member {
            name: Some(name.into()),
            ty: TypeId(size),
            bit_offset: byte * 8,
            bit_size: None,
            alignment: None,
            decl: None,
        }
    }

    fn bits(name: &str, size: u32, bit: u64, width: u64) -> Member {
        Member {
            bit_offset: bit,
            bit_size: Some(width),
            ..member(name, size, 0)
        }
    }

    fn strukt(size: u64, members: Vec<Member>) -> Composite {
        Composite {
            kind: CompositeKind::Struct,
            name: Some("s".into()),
            size: Some(size),
            alignment: None,
            members: Some(members),
            decl: None,
        }
    }

    #[test]
    fn natural_layout_needs_no_attribute() {
        // struct { char a; long b; int c; } = 0, 8, 16; size 24
        let c = strukt(
            24,
            vec![member("a", 1, 0), member("b", 8, 8), member("c", 4, 16)],
        );
        let r = recipe(&c, &Sizes, None).unwrap();
        assert!(!r.packed);
        assert_eq!(r.struct_align, 1);
        assert!(r.parts.iter().all(|p| p.attr_align == 1));
    }

    #[test]
    fn forced_alignment_is_inferred_from_offsets_and_size() {
        // struct { char a; int b __aligned(64); } __aligned(256): b at 64, size 256
        let c = strukt(256, vec![member("a", 1, 0), member("b", 4, 64)]);
        let r = recipe(&c, &Sizes, None).unwrap();
        assert_eq!(r.parts[1].attr_align, 64);
        assert_eq!(r.struct_align, 256);
        // Reversed: b first at 0 (64-aligned), a at 4, size 256.
        let members = c.members.as_ref().unwrap();
        let pieces = vec![
            r.piece(&r.parts[1], members, &Sizes, 1).unwrap(),
            r.piece(&r.parts[0], members, &Sizes, 1).unwrap(),
        ];
        let laid = lay_out(&pieces, CompositeKind::Struct, false, r.struct_align).unwrap();
        assert_eq!(laid.bit_offsets, vec![vec![0], vec![32]]);
        assert_eq!(laid.size, 256);
    }

    #[test]
    fn a_struct_alignment_its_members_explain_is_not_an_attribute() {
        // struct { int a; char m[0] __aligned(64); int b; }: gcc writes
        // DW_AT_alignment 64 on the struct as on m; m at 64, size 128.
        let mut c = strukt(
            128,
            vec![member("a", 4, 0), member("m", 0, 64), member("b", 4, 64)],
        );
        c.alignment = Some(64);
        c.members.as_mut().unwrap()[1].alignment = Some(64);
        let r = recipe(&c, &Sizes, None).unwrap();
        assert_eq!(r.parts[1].attr_align, 64);
        assert_eq!(r.struct_align, 1);
        // Without m (a plan removing the marker): a, b at 0, 4; size 8.
        let members = c.members.as_ref().unwrap();
        let pieces = vec![
            r.piece(&r.parts[0], members, &Sizes, 1).unwrap(),
            r.piece(&r.parts[2], members, &Sizes, 1).unwrap(),
        ];
        let laid = lay_out(&pieces, CompositeKind::Struct, false, r.struct_align).unwrap();
        assert_eq!(laid.size, 8);
        // A struct aligned beyond its members keeps its attribute.
        c.alignment = Some(128);
        c.size = Some(128);
        assert_eq!(recipe(&c, &Sizes, None).unwrap().struct_align, 128);
    }

    #[test]
    fn packed_structs_are_recognised() {
        // struct __packed { char a; int b; } = 0, 1; size 5
        let c = strukt(5, vec![member("a", 1, 0), member("b", 4, 1)]);
        let r = recipe(&c, &Sizes, None).unwrap();
        assert!(r.packed);
        let members = c.members.as_ref().unwrap();
        let pieces = vec![
            r.piece(&r.parts[1], members, &Sizes, 1).unwrap(),
            r.piece(&r.parts[0], members, &Sizes, 1).unwrap(),
        ];
        let laid = lay_out(&pieces, CompositeKind::Struct, true, 1).unwrap();
        assert_eq!(laid.bit_offsets, vec![vec![0], vec![32]]);
        assert_eq!(laid.size, 5);
    }

    #[test]
    fn bitfields_do_not_straddle_their_unit() {
        // struct { char c; unsigned int a:20, b:20; } : a at bit 8, b at 32
        let c = strukt(
            8,
            vec![member("c", 1, 0), bits("a", 4, 8, 20), bits("b", 4, 32, 20)],
        );
        let r = recipe(&c, &Sizes, None).unwrap();
        assert_eq!(r.parts.len(), 2);
        assert_eq!(r.parts[1].members, vec![1, 2]);
        assert!(r.parts[1].rigid.is_none());
        // The run first: a at 0, b at 32, c at byte 7.
        let members = c.members.as_ref().unwrap();
        let pieces = vec![
            r.piece(&r.parts[1], members, &Sizes, 1).unwrap(),
            r.piece(&r.parts[0], members, &Sizes, 1).unwrap(),
        ];
        let laid = lay_out(&pieces, CompositeKind::Struct, false, 1).unwrap();
        assert_eq!(laid.bit_offsets, vec![vec![0, 32], vec![56]]);
        assert_eq!(laid.size, 8);
    }

    #[test]
    fn invisible_bitfield_padding_keeps_the_run_rigid() {
        // struct { int a:3; int :0; int b:3; }: b at 32, which the rules
        // alone would put at 3.
        let c = strukt(8, vec![bits("a", 4, 0, 3), bits("b", 4, 32, 3)]);
        let r = recipe(&c, &Sizes, None).unwrap();
        let rigid = r.parts[0].rigid.as_ref().unwrap();
        assert_eq!(rigid.relative, vec![0, 32]);
        let laid = lay_out(
            &[
                Piece::Whole { size: 1, align: 1 },
                r.piece(&r.parts[0], c.members.as_ref().unwrap(), &Sizes, 1)
                    .unwrap(),
            ],
            CompositeKind::Struct,
            false,
            1,
        )
        .unwrap();
        assert_eq!(laid.bit_offsets[1], vec![32, 64]);
    }

    #[test]
    fn unions_and_unexplained_layouts() {
        let mut u = strukt(8, vec![member("a", 4, 0), member("b", 8, 0)]);
        u.kind = CompositeKind::Union;
        assert!(recipe(&u, &Sizes, None).is_ok());
        // A member below where its alignment could put it is refused.
        let bad = strukt(
            16,
            vec![member("a", 8, 0), member("b", 8, 4), member("c", 4, 12)],
        );
        assert!(recipe(&bad, &Sizes, Some(false)).is_err());
    }

    #[test]
    fn i386_aligns_long_long_to_four() {
        let abi = Abi::new(object::Architecture::I386, 4);
        assert_eq!(abi.scalar_align(8), 4);
        assert_eq!(abi.scalar_align(12), 4);
        assert_eq!(Abi::default().scalar_align(8), 8);
        assert_eq!(Abi::default().scalar_align(16), 16);
    }
}
