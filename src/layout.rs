//! Layout of one struct or union: members at absolute byte offsets with
//! dotted paths, holes and bit holes (computed exactly as pahole computes
//! them, so the counts agree), tail padding, cacheline boundaries and the
//! kernel's cacheline-group markers.

use crate::error::{Error, Result};
use crate::model::{Composite, CompositeKind, Member, SourceLoc, Type, TypeId, TypeTable};

/// Prefix of the kernel's `__cacheline_group_begin(GROUP)` marker members.
pub const GROUP_BEGIN: &str = "__cacheline_group_begin__";
/// Prefix of the kernel's `__cacheline_group_end(GROUP)` marker members.
pub const GROUP_END: &str = "__cacheline_group_end__";
/// The name prefix of the empty struct that pads an aligned group's end
/// (`__cacheline_group_end_aligned`).
pub const GROUP_PAD: &str = "__cacheline_group_pad__";
/// The type of `CACHELINE_PADDING()` members.
pub const PADDING_TYPE: &str = "cacheline_padding";

/// A data member placed in the root type.
#[derive(Clone, Debug)]
pub struct Field {
    /// Dotted path from the root as C spells it: anonymous struct and union
    /// levels are skipped (`lru_lock.rlock.raw_lock.val`).
    pub path: String,
    /// The member's own name (`None` for anonymous members).
    pub name: Option<String>,
    /// Declared type.
    pub ty: TypeId,
    /// Absolute byte offset. For bitfields, the offset of the storage unit
    /// as pahole shows it.
    pub offset: u64,
    /// Size in bytes (the storage unit for bitfields).
    pub size: u64,
    /// For bitfields: first bit within the storage unit, and the width.
    pub bits: Option<(u64, u64)>,
    /// Nesting depth (0 = member of the root).
    pub depth: usize,
    /// True when the member's own members follow it (`--expand`, or an
    /// anonymous struct/union, which is always shown inline).
    pub expanded: bool,
    /// Where the member is declared.
    pub decl: Option<SourceLoc>,
    /// Its `__attribute__((__aligned__(N)))`: recorded by the debug info,
    /// or inferred from the offsets where the format records none (BTF).
    pub alignment: Option<u64>,
}

impl Field {
    /// First byte past the member (at least `offset`).
    pub fn end(&self) -> u64 {
        self.offset.saturating_add(self.size)
    }
}

/// One row of a layout, in offset order as a reader scans it.
#[derive(Clone, Debug)]
pub enum Item {
    /// A data member.
    Member(Field),
    /// End of an inline-expanded member's body.
    Close {
        /// Depth of the member being closed.
        depth: usize,
        /// Its name (`None` for an anonymous member).
        name: Option<String>,
        /// Its declared type: the struct or union, or an array of one.
        ty: TypeId,
        /// Its offset.
        offset: u64,
        /// Its size.
        size: u64,
        /// The member's `__attribute__((__aligned__(N)))`.
        alignment: Option<u64>,
        /// The expanded struct type's own `__aligned__(N)` (`None` for
        /// unions, whose attribute pahole does not print).
        type_alignment: Option<u64>,
    },
    /// Bytes between two members that belong to nobody.
    Hole {
        /// First byte of the hole.
        offset: u64,
        /// Size in bytes.
        size: u64,
        /// Depth of the struct that has the hole.
        depth: usize,
    },
    /// Bits between two bitfields that belong to nobody.
    BitHole {
        /// Byte the unused bits are in.
        offset: u64,
        /// Number of bits.
        bits: u64,
        /// Depth of the struct.
        depth: usize,
    },
    /// Tail padding of a member's struct type, after the member (pahole's
    /// `XXX last struct has N bytes of padding`): for members of a struct
    /// declared directly as a struct type, not through a typedef.
    MemberPadding {
        /// Size in bytes.
        size: u64,
        /// Depth of the member.
        depth: usize,
    },
    /// The unnamed bitfield pahole shows after a bit hole, before the next
    /// bitfield: `TYPE :N;`, or `TYPE :0;` when the next bitfield starts a
    /// new storage unit (the kernel's `unsigned :0;`).
    UnnamedBits {
        /// The next bitfield's declared type.
        ty: TypeId,
        /// Width: the bit hole, or 0 for a new storage unit.
        bits: u64,
        /// Depth of the struct.
        depth: usize,
    },
    /// pahole's note that a bitfield shares its storage unit with the
    /// members before it (`Bitfield combined with previous fields`) or that
    /// the previous bitfield's unit reaches into the next members (`... with
    /// next fields`).
    Combined {
        /// True for `with next fields`.
        with_next: bool,
        /// Depth of the struct.
        depth: usize,
    },
    /// Bytes at the end of a struct added to round up its size.
    Padding {
        /// First padding byte.
        offset: u64,
        /// Size in bytes.
        size: u64,
        /// Depth of the padded struct.
        depth: usize,
    },
    /// The start of cacheline `line`, shown before the first member at or past it.
    Boundary {
        /// Line number from the root's start.
        line: u64,
        /// How far past the boundary the next member starts.
        ago: u64,
        /// Depth of the next member.
        depth: usize,
    },
    /// A `__cacheline_group_begin__G` / `_end__G` marker.
    Group {
        /// Group name (G).
        name: String,
        /// True for the begin marker.
        begin: bool,
        /// Absolute offset of the marker.
        offset: u64,
        /// The marker's `__attribute__((__aligned__(N)))` (the `_aligned`
        /// macros' begin has the group's, their end `sizeof(long)`).
        alignment: Option<u64>,
        /// Depth.
        depth: usize,
    },
    /// A `struct cacheline_padding` member (`CACHELINE_PADDING(name)`).
    LinePad {
        /// Dotted path of the padding member.
        path: String,
        /// Absolute offset.
        offset: u64,
        /// Depth.
        depth: usize,
    },
}

/// The extent of a kernel cacheline group, as `CACHELINE_ASSERT_GROUP_MEMBER`
/// computes it: from the begin marker's offset to the end marker's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// Group name.
    pub name: String,
    /// Offset of `__cacheline_group_begin__G`.
    pub begin: u64,
    /// Offset of `__cacheline_group_end__G` (`None` if missing).
    pub end: Option<u64>,
}

/// pahole-compatible totals for the root type.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Direct members of the root.
    pub members: usize,
    /// Sum of the byte sizes of non-bitfield direct members.
    pub sum_members: u64,
    /// Sum of the bit widths of direct bitfield members.
    pub sum_bitfield_bits: u64,
    /// Number of byte holes between direct members (pahole's `nr_holes`).
    pub holes: usize,
    /// Their total size.
    pub sum_holes: u64,
    /// Number of bit holes between direct bitfields.
    pub bit_holes: usize,
    /// Their total size in bits.
    pub sum_bit_holes: u64,
    /// Tail padding in bytes.
    pub padding: u64,
    /// Unused bits at the end of a trailing bitfield.
    pub bit_padding: u64,
    /// Direct members whose struct type ends in padding (pahole's
    /// `paddings`; see [`Item::MemberPadding`]).
    pub paddings: usize,
    /// Their padding bytes in total.
    pub sum_paddings: u64,
    /// Direct members with an alignment attribute (pahole's "forced
    /// alignments").
    pub forced_alignments: usize,
    /// Of those, how many follow a hole, and the holes' total size.
    pub forced_holes: usize,
    /// Total size of those holes.
    pub sum_forced_holes: u64,
}

/// The flattened layout of one root type.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The root type.
    pub ty: TypeId,
    /// `struct` or `union`.
    pub kind: CompositeKind,
    /// Name (`None` for anonymous roots reached through a typedef).
    pub name: Option<String>,
    /// Size in bytes.
    pub size: u64,
    /// Alignment (explicit, or inferred from the members).
    pub alignment: u64,
    /// The struct's own `__attribute__((__aligned__(N)))`, as recorded (or
    /// inferred where the format records none).
    pub attribute: Option<u64>,
    /// Cacheline size used for lines and boundaries.
    pub cacheline: u64,
    /// Rows in reading order.
    pub items: Vec<Item>,
    /// Cacheline groups found in the type.
    pub groups: Vec<Group>,
    /// Totals for the root's direct members.
    pub summary: Summary,
    /// Where the type is defined.
    pub decl: Option<SourceLoc>,
}

impl Layout {
    /// Number of cachelines the type spans (from offset 0).
    pub fn cachelines(&self) -> u64 {
        self.size.div_ceil(self.cacheline)
    }

    /// The data members, in order.
    pub fn fields(&self) -> impl Iterator<Item = &Field> {
        self.items.iter().filter_map(|i| match i {
            Item::Member(f) => Some(f),
            _ => None,
        })
    }
}

/// How much of the nesting to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// Direct members only (anonymous structs/unions still inline, as C reads them).
    Direct,
    /// Every struct/union embedded by value, recursively (`--expand`).
    Expand,
}

/// Computes the layout of composite `root`, whose members (and, for
/// [`Depth::Expand`], those of every embedded composite) must be loaded.
pub fn layout(table: &TypeTable, root: TypeId, cacheline: u64, depth: Depth) -> Result<Layout> {
    if cacheline == 0 {
        return Err(Error::BadType("cacheline size must be positive".into()));
    }
    let composite = loaded_composite(table, root)?;
    let size = composite
        .size
        .ok_or_else(|| Error::BadType(format!("{} has no size", display_name(composite))))?;
    let mut walker = Walker {
        table,
        depth_mode: depth,
        cacheline,
        line: 0,
        items: Vec::new(),
        active: Vec::new(),
        path_bytes: 0,
    };
    let summary = walker.walk(root, 0, "", 0)?;
    let items = walker.items;
    let groups = pair_group_markers(items.iter().filter_map(|i| match i {
        Item::Group {
            name,
            begin,
            offset,
            ..
        } => Some((name.clone(), *begin, *offset)),
        _ => None,
    }));
    Ok(Layout {
        ty: root,
        kind: composite.kind,
        name: composite.name.clone(),
        size,
        alignment: table.alignment_of(root),
        attribute: composite.alignment,
        cacheline,
        items,
        groups,
        summary,
        decl: composite.decl.clone(),
    })
}

/// `struct NAME`, or `struct <anonymous>`.
pub fn display_name(c: &Composite) -> String {
    format!(
        "{} {}",
        c.kind.keyword(),
        c.name.as_deref().unwrap_or("<anonymous>")
    )
}

fn loaded_composite(table: &TypeTable, id: TypeId) -> Result<&Composite> {
    let c = table
        .composite(id)
        .ok_or_else(|| Error::BadType("not a struct or union".into()))?;
    if c.members.is_none() {
        return Err(Error::BadType(format!(
            "{} is only declared here, not defined",
            display_name(c)
        )));
    }
    Ok(c)
}

/// Nesting limit for embedded composites; real kernels stay below 20.
const MAX_NESTING: usize = 64;

/// Rows of one layout, at most: expanded, the biggest structs of a distro
/// kernel have about a thousand (`kvm_vcpu` 910, `task_struct` 784); a
/// struct that holds another twice at every level would have 2^depth.
const MAX_ROWS: usize = 200_000;

/// Total length of the member paths of one layout, at most.
const MAX_PATH_BYTES: usize = 64 << 20;

struct Walker<'t> {
    table: &'t TypeTable,
    depth_mode: Depth,
    cacheline: u64,
    /// The last cacheline a boundary was shown for. Each member of a union
    /// starts again from the union's line, as pahole does, so a boundary
    /// crossed in one alternative is shown in the others and after the union.
    line: u64,
    items: Vec<Item>,
    /// Composites being walked, to refuse a type that contains itself.
    active: Vec<TypeId>,
    /// Bytes of member paths made so far (long names nested deep add up).
    path_bytes: usize,
}

impl Walker<'_> {
    fn walk(&mut self, id: TypeId, base: u64, prefix: &str, depth: usize) -> Result<Summary> {
        if depth > MAX_NESTING || self.active.contains(&id) {
            return Err(Error::BadType(
                "type contains itself by value (corrupt debug info)".into(),
            ));
        }
        if self.items.len() > MAX_ROWS {
            return Err(Error::BadType(format!(
                "the layout has more than {MAX_ROWS} rows (corrupt debug info, or show it without --expand)"
            )));
        }
        let table = self.table;
        let composite = loaded_composite(table, id)?;
        let size = composite.size.unwrap_or(0);
        let members = composite.members.as_deref().unwrap_or(&[]);
        let geometry: Vec<Geometry> = members.iter().map(|m| Geometry::of(table, m)).collect();
        let holes = match composite.kind {
            CompositeKind::Struct => find_holes(&geometry, size),
            CompositeKind::Union => Holes::none(members.len()),
        };
        self.active.push(id);
        if holes.pre_hole > 0 {
            self.items.push(Item::Hole {
                offset: base,
                size: holes.pre_hole as u64,
                depth,
            });
        }
        let is_struct = composite.kind == CompositeKind::Struct;
        let union_line = self.line;
        let (mut paddings, mut sum_paddings) = (0, 0u64);
        let (mut last, mut last_size): (Option<usize>, u64) = (None, 0);
        for (i, (member, geo)) in members.iter().zip(&geometry).enumerate() {
            if let Some(prev) = last.filter(|_| is_struct && last_size != 0) {
                self.bitfield_notes(
                    &geometry[prev],
                    holes.after[prev].1,
                    geo,
                    last_size,
                    member.ty,
                    depth,
                );
            }
            self.member(member, geo, base, prefix, depth)?;
            if !is_struct {
                self.line = union_line;
            }
            // pahole's `last_size`: the size of the member that started the
            // current offset (a bitfield's storage unit after a plain member
            // at the same offset).
            let moved = last
                .is_none_or(|p| last_size == 0 || geometry[p].storage_offset != geo.storage_offset);
            let into_bits =
                last.is_some_and(|p| geometry[p].bitfield.is_none() && geo.bitfield.is_some());
            if moved || into_bits {
                last_size = geo.byte_size;
            }
            last = Some(i);
            let (hole, bit_hole) = holes.after[i];
            let end = base
                .saturating_add(geo.storage_offset)
                .saturating_add(geo.byte_size);
            if let Some(padding) = is_struct
                .then(|| struct_padding(table, member.ty))
                .flatten()
            {
                paddings += 1;
                sum_paddings = sum_paddings.saturating_add(padding);
                self.items.push(Item::MemberPadding {
                    size: padding,
                    depth,
                });
            }
            if bit_hole > 0 {
                self.items.push(Item::BitHole {
                    offset: base.saturating_add(geo.storage_offset),
                    bits: bit_hole as u64,
                    depth,
                });
            }
            if hole > 0 {
                self.items.push(Item::Hole {
                    offset: end,
                    size: hole as u64,
                    depth,
                });
            }
        }
        if holes.padding > 0 && composite.kind == CompositeKind::Struct {
            self.items.push(Item::Padding {
                offset: base
                    .saturating_add(size)
                    .saturating_sub(holes.padding as u64),
                size: holes.padding as u64,
                depth,
            });
        }
        self.active.pop();
        Ok(Summary {
            paddings,
            sum_paddings,
            ..holes.summary(&geometry, members)
        })
    }

    fn member(
        &mut self,
        m: &Member,
        geo: &Geometry,
        base: u64,
        prefix: &str,
        depth: usize,
    ) -> Result<()> {
        let table = self.table;
        let offset = base.saturating_add(geo.storage_offset);
        let path = match &m.name {
            Some(name) => format!("{prefix}{name}"),
            None => prefix.trim_end_matches('.').to_owned(),
        };
        self.path_bytes += path.len();
        if self.path_bytes > MAX_PATH_BYTES {
            return Err(Error::BadType(format!(
                "the member paths of this layout exceed {} MB (corrupt debug info)",
                MAX_PATH_BYTES >> 20
            )));
        }
        self.boundary(offset, depth);
        if let Some(name) = m.name.as_deref() {
            for (marker, begin) in [(GROUP_BEGIN, true), (GROUP_END, false)] {
                if let Some(group) = name.strip_prefix(marker) {
                    self.items.push(Item::Group {
                        name: group.to_owned(),
                        begin,
                        offset,
                        alignment: m.alignment,
                        depth,
                    });
                    return Ok(());
                }
            }
        }
        let target = table.strip(m.ty);
        if matches!(table.get(target), Type::Composite(c) if c.name.as_deref() == Some(PADDING_TYPE))
        {
            self.items.push(Item::LinePad {
                path,
                offset,
                depth,
            });
            return Ok(());
        }
        // What is shown inline, and under which path: an anonymous member,
        // a member of an anonymous type (which has no name to look up on its
        // own) and, without --expand, the first element of an array of one,
        // as pahole shows them; with --expand, every struct by value.
        let anonymous =
            |id: TypeId| matches!(table.get(id), Type::Composite(c) if c.name.is_none());
        let inner = match table.get(m.ty) {
            Type::Array { element, dims }
                if self.depth_mode == Depth::Direct && anonymous(*element) =>
            {
                Some((*element, format!("{path}{}.", "[0]".repeat(dims.len()))))
            }
            _ if m.name.is_none() || anonymous(m.ty) || self.depth_mode == Depth::Expand => {
                let prefix = if path.is_empty() {
                    String::new()
                } else {
                    format!("{path}.")
                };
                Some((target, prefix))
            }
            _ => None,
        }
        .filter(|(id, _)| table.composite(*id).is_some_and(|c| c.members.is_some()));
        self.items.push(Item::Member(Field {
            path,
            name: m.name.clone(),
            ty: m.ty,
            offset,
            size: geo.byte_size,
            bits: m.bit_size.map(|w| (geo.bit_in_storage, w)),
            depth,
            expanded: inner.is_some(),
            decl: m.decl.clone(),
            alignment: m.alignment,
        }));
        if let Some((inner, child_prefix)) = inner {
            self.walk(inner, offset, &child_prefix, depth + 1)?;
            let type_alignment = table
                .composite(inner)
                .filter(|c| c.kind == CompositeKind::Struct)
                .and_then(|c| c.alignment);
            self.items.push(Item::Close {
                depth,
                name: m.name.clone(),
                ty: m.ty,
                offset,
                size: geo.byte_size,
                alignment: m.alignment,
                type_alignment,
            });
        }
        Ok(())
    }

    /// pahole's rows between two members of a struct, after the previous
    /// one's holes: the unnamed bitfield that fills a bit hole before the
    /// next bitfield, and the notes that a bitfield's storage unit overlaps
    /// the members around it.
    fn bitfield_notes(
        &mut self,
        prev: &Geometry,
        prev_bit_hole: i64,
        geo: &Geometry,
        last_size: u64,
        ty: TypeId,
        depth: usize,
    ) {
        let same_unit = prev.storage_offset == geo.storage_offset;
        if prev_bit_hole > 0 && geo.bitfield.is_some() {
            self.items.push(Item::UnnamedBits {
                ty,
                bits: if same_unit { prev_bit_hole as u64 } else { 0 },
                depth,
            });
        }
        if geo.storage_offset < prev.storage_offset
            || (same_unit && prev.bitfield.is_none() && geo.bitfield.is_some())
        {
            self.items.push(Item::Combined {
                with_next: false,
                depth,
            });
        } else {
            let ahead = geo.storage_offset - prev.storage_offset;
            if ahead > 0 && ahead < last_size {
                self.items.push(Item::Combined {
                    with_next: true,
                    depth,
                });
            }
        }
    }

    /// A boundary row before a row at `offset` on a later cacheline than the
    /// last one shown (pahole's `class__fprintf_cacheline_boundary`).
    fn boundary(&mut self, offset: u64, depth: usize) {
        let line = offset / self.cacheline;
        if line > self.line {
            self.items.push(Item::Boundary {
                line,
                ago: offset - line * self.cacheline,
                depth,
            });
            self.line = line;
        }
    }
}

/// The tail padding of `ty` when it is a struct type itself (not a typedef
/// of one) with its members loaded and padding at its end, as pahole
/// reports it after a member of that type.
fn struct_padding(table: &TypeTable, ty: TypeId) -> Option<u64> {
    let c = table.composite(ty)?;
    if c.kind != CompositeKind::Struct {
        return None;
    }
    let members = c.members.as_deref()?;
    let geometry: Vec<Geometry> = members.iter().map(|m| Geometry::of(table, m)).collect();
    let padding = find_holes(&geometry, c.size?).padding;
    u64::try_from(padding).ok().filter(|&p| p > 0)
}

/// A member's placement in pahole's terms.
#[derive(Clone, Copy, Debug)]
struct Geometry {
    /// Absolute first bit.
    bit_start: u64,
    /// Width for bitfields.
    bitfield: Option<u64>,
    /// Size of the member's type (the storage unit for bitfields).
    byte_size: u64,
    /// Byte offset of the storage unit (the member offset for non-bitfields).
    storage_offset: u64,
    /// First bit inside the storage unit.
    bit_in_storage: u64,
}

impl Geometry {
    fn of(table: &TypeTable, m: &Member) -> Self {
        let byte_size = table.size_of(m.ty).unwrap_or(0);
        match m.bit_size {
            Some(width) if byte_size > 0 => {
                // Saturating: corrupt input can claim sizes near 2^64.
                let unit_bits = byte_size.saturating_mul(8);
                let storage_offset = m.bit_offset / unit_bits * byte_size;
                Geometry {
                    bit_start: m.bit_offset,
                    bitfield: Some(width),
                    byte_size,
                    storage_offset,
                    bit_in_storage: m
                        .bit_offset
                        .saturating_sub(storage_offset.saturating_mul(8)),
                }
            }
            _ => Geometry {
                bit_start: m.bit_offset,
                bitfield: None,
                byte_size,
                storage_offset: m.bit_offset / 8,
                bit_in_storage: m.bit_offset % 8,
            },
        }
    }
}

/// Holes found in one struct, per member (the hole *after* it).
#[derive(Clone, Debug)]
pub struct Holes {
    /// (byte hole, bit hole) after each member.
    after: Vec<(i64, i64)>,
    pre_hole: i64,
    nr_holes: usize,
    nr_bit_holes: usize,
    padding: i64,
    bit_padding: i64,
}

impl Holes {
    fn none(n: usize) -> Self {
        Holes {
            after: vec![(0, 0); n],
            pre_hole: 0,
            nr_holes: 0,
            nr_bit_holes: 0,
            padding: 0,
            bit_padding: 0,
        }
    }

    fn summary(&self, geometry: &[Geometry], members: &[Member]) -> Summary {
        let forced: Vec<i64> = members
            .iter()
            .enumerate()
            .filter(|(_, m)| m.alignment.is_some())
            .map(|(i, _)| {
                if i == 0 {
                    self.pre_hole
                } else {
                    self.after[i - 1].0
                }
            })
            .collect();
        let positive = |v: i64| u64::try_from(v).unwrap_or(0);
        // Saturating: absurd member sizes in corrupt input must not overflow.
        let total = |it: &mut dyn Iterator<Item = u64>| it.fold(0u64, u64::saturating_add);
        let byte_holes = self.after.iter().map(|h| h.0).chain([self.pre_hole]);
        Summary {
            members: geometry.len(),
            sum_members: total(
                &mut geometry
                    .iter()
                    .filter(|g| g.bitfield.is_none())
                    .map(|g| g.byte_size),
            ),
            sum_bitfield_bits: total(&mut geometry.iter().filter_map(|g| g.bitfield)),
            holes: self.nr_holes,
            sum_holes: total(&mut byte_holes.map(positive)),
            bit_holes: self.nr_bit_holes,
            sum_bit_holes: total(&mut self.after.iter().map(|h| positive(h.1))),
            padding: positive(self.padding),
            bit_padding: positive(self.bit_padding),
            forced_alignments: forced.len(),
            forced_holes: forced.iter().filter(|&&h| h > 0).count(),
            sum_forced_holes: total(&mut forced.iter().map(|&h| positive(h))),
            // Filled by the walk, which looks at the members' types.
            paddings: 0,
            sum_paddings: 0,
        }
    }
}

/// Byte counts beyond 2^56 (only corrupt input has them) are clamped there,
/// so that [`find_holes`] works in `i64` bits without overflow; real sizes
/// and offsets are far below, and unchanged.
const MAX_HOLE_BYTES: u64 = 1 << 56;

/// A byte count as `i64` bits, clamped (see [`MAX_HOLE_BYTES`]).
fn bits_of_bytes(bytes: u64) -> i64 {
    bytes.min(MAX_HOLE_BYTES) as i64 * 8
}

/// A bit count as `i64`, clamped (see [`MAX_HOLE_BYTES`]).
fn bits(bits: u64) -> i64 {
    bits.min(MAX_HOLE_BYTES * 8) as i64
}

/// pahole's `class__find_holes`, transcribed so that hole counts agree with
/// `pahole --sizes` to the unit, including its handling of bitfields that
/// borrow bits from a previous storage unit.
fn find_holes(members: &[Geometry], size: u64) -> Holes {
    let mut holes = Holes::none(members.len());
    let size_bits = bits_of_bytes(size);
    let mut cur_bitfield_end = size_bits;
    let mut cur_bitfield_size: i64 = 0;
    let mut last_seen_bit: i64 = 0;
    let mut in_bitfield = false;
    let mut last: Option<usize> = None;
    for (i, m) in members.iter().enumerate() {
        let bit_start = bits(m.bit_start);
        let bit_end = bit_start + m.bitfield.map_or(bits_of_bytes(m.byte_size), bits);
        let mut bit_holes: i64 = 0;
        let mut byte_holes: i64 = 0;
        if in_bitfield {
            let bitfield_end = bit_start.min(cur_bitfield_end);
            bit_holes = bitfield_end - last_seen_bit;
            last_seen_bit = bitfield_end;
        }
        if m.bitfield.is_some() {
            let aligned_start = bits_of_bytes(m.storage_offset);
            if last_seen_bit < aligned_start && aligned_start <= bit_start {
                byte_holes = aligned_start / 8 - last_seen_bit / 8;
                last_seen_bit = aligned_start;
            }
            bit_holes += bit_start - last_seen_bit;
        } else {
            byte_holes = bit_start / 8 - last_seen_bit / 8;
        }
        last_seen_bit = bit_end;
        if m.bitfield.is_some() {
            in_bitfield = true;
            let storage_bits = bits_of_bytes(m.byte_size);
            if bit_end > cur_bitfield_end || storage_bits > cur_bitfield_size {
                cur_bitfield_size = storage_bits;
                cur_bitfield_end = bits_of_bytes(m.storage_offset) + cur_bitfield_size;
                if bit_end > cur_bitfield_end {
                    cur_bitfield_end += cur_bitfield_size;
                }
            }
        } else {
            in_bitfield = false;
            cur_bitfield_size = 0;
            cur_bitfield_end = bit_end;
        }
        match last {
            Some(l) => holes.after[l] = (byte_holes, bit_holes),
            None => holes.pre_hole = byte_holes,
        }
        if bit_holes != 0 {
            holes.nr_bit_holes += 1;
        }
        if byte_holes != 0 {
            holes.nr_holes += 1;
        }
        last = Some(i);
    }
    if in_bitfield {
        let bitfield_end = size_bits.min(cur_bitfield_end);
        holes.bit_padding = bitfield_end - last_seen_bit;
        last_seen_bit = bitfield_end;
    }
    holes.padding = size_bits / 8 - last_seen_bit / 8;
    holes
}

/// Number of byte holes of a struct's direct members, as `pahole --sizes`
/// counts them (0 for unions).
pub fn hole_count(table: &TypeTable, c: &Composite) -> usize {
    if c.kind == CompositeKind::Union {
        return 0;
    }
    let members = c.members.as_deref().unwrap_or(&[]);
    let geometry: Vec<Geometry> = members.iter().map(|m| Geometry::of(table, m)).collect();
    find_holes(&geometry, c.size.unwrap_or(0)).nr_holes
}

/// Pairs `(group, is_begin, offset)` markers, in member order, into
/// groups: an end marker closes the latest open group of its name that
/// begins at or before it. Shared by the layout and the analysis.
pub fn pair_group_markers(markers: impl IntoIterator<Item = (String, bool, u64)>) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for (name, begin, offset) in markers {
        if begin {
            groups.push(Group {
                name,
                begin: offset,
                end: None,
            });
        } else if let Some(g) = groups
            .iter_mut()
            .rev()
            .find(|g| g.name == name && g.end.is_none() && g.begin <= offset)
        {
            g.end = Some(offset);
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo(bit_start: u64, width: Option<u64>, byte_size: u64) -> Geometry {
        let storage_offset = match width {
            Some(_) => bit_start / (byte_size * 8) * byte_size,
            None => bit_start / 8,
        };
        Geometry {
            bit_start,
            bitfield: width,
            byte_size,
            storage_offset,
            bit_in_storage: bit_start - storage_offset * 8,
        }
    }

    #[test]
    fn holes_and_padding_of_a_plain_struct() {
        // struct { char c; long l; char d; }: 7-byte hole, 7 bytes padding.
        let h = find_holes(&[geo(0, None, 1), geo(64, None, 8), geo(128, None, 1)], 24);
        assert_eq!(h.after[0].0, 7);
        assert_eq!(h.nr_holes, 1);
        assert_eq!(h.padding, 7);
    }

    #[test]
    fn bitfields_leave_bit_holes_not_byte_holes() {
        // struct { unsigned a:3; unsigned b:7; int x; }: 22-bit hole in a's unit.
        let h = find_holes(
            &[geo(0, Some(3), 4), geo(3, Some(7), 4), geo(32, None, 4)],
            8,
        );
        assert_eq!(h.nr_holes, 0);
        assert_eq!(h.after[1].1, 22);
        assert_eq!(h.nr_bit_holes, 1);
        assert_eq!(h.padding, 0);
    }
}
