//! The raw DIE reader of the whole-file scans (`index`, `layouts`,
//! `contains`). A unit's abbreviation table is read from `.debug_abbrev`
//! and compiled, per scan, into short lists of steps: a run of fixed-size
//! attributes is skipped in one addition, only the attributes the scan
//! wants for that tag are decoded, and a DIE whose attributes all have
//! fixed sizes is read with one bounds check, its numbers at precomputed
//! offsets. gimli's `EntriesRaw` does the same job generically, one
//! attribute specification at a time, and its abbreviation parser
//! allocates per abbreviation; over the 12 million DIEs a `sizes` scan of
//! a kernel visits, that was most of the time (docs/performance.md).
//!
//! gimli decodes in full the few types a command prints (`decode`).

use gimli::{
    DebugStrOffsetsBase, DwAt, DwForm, DwTag, Endianity, RunTimeEndian, UnitHeader, UnitOffset,
    constants,
};

use super::{DwarfFile, NameRef, Reader, unit_start};
use crate::error::{Error, Result};

/// An attribute that a raw scan reads; every other one is skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// `DW_AT_name`.
    Name,
    /// `DW_AT_byte_size`.
    ByteSize,
    /// `DW_AT_declaration`.
    Declaration,
    /// `DW_AT_sibling`.
    Sibling,
    /// `DW_AT_type`.
    Type,
    /// `DW_AT_external` (a C++ static member).
    External,
    /// `DW_AT_data_member_location`.
    MemberLocation,
    /// `DW_AT_data_bit_offset`.
    DataBitOffset,
    /// `DW_AT_bit_offset` (DWARF 2/3 bitfields).
    BitOffset,
    /// `DW_AT_bit_size`.
    BitSize,
    /// `DW_AT_str_offsets_base` (read from unit DIEs by every scan).
    StrOffsetsBase,
}

const WANTS: usize = 11;

/// A set of [`Want`]s: what a scan reads of DIEs with a given tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wants(u16);

impl Wants {
    /// The set of `wants` (use in a `const` block).
    pub const fn of(wants: &[Want]) -> Wants {
        let mut bits = 0;
        let mut i = 0;
        while i < wants.len() {
            bits |= 1 << wants[i] as u16;
            i += 1;
        }
        Wants(bits)
    }

    fn contains(self, want: Want) -> bool {
        self.0 & (1 << want as u16) != 0
    }
}

/// What a scan reads, by tag.
pub type WantsByTag = fn(DwTag) -> Wants;

impl Want {
    fn of(name: DwAt) -> Option<Want> {
        Some(match name {
            constants::DW_AT_name => Want::Name,
            constants::DW_AT_byte_size => Want::ByteSize,
            constants::DW_AT_declaration => Want::Declaration,
            constants::DW_AT_sibling => Want::Sibling,
            constants::DW_AT_type => Want::Type,
            constants::DW_AT_external => Want::External,
            constants::DW_AT_data_member_location => Want::MemberLocation,
            constants::DW_AT_data_bit_offset => Want::DataBitOffset,
            constants::DW_AT_bit_offset => Want::BitOffset,
            constants::DW_AT_bit_size => Want::BitSize,
            constants::DW_AT_str_offsets_base => Want::StrOffsetsBase,
            _ => return None,
        })
    }
}

/// An attribute value as its form encodes it, nothing resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    /// `data1`..`data8`, `udata`, `sec_offset`, `addr`.
    Unsigned(u64),
    /// `sdata`, `implicit_const`.
    Signed(i64),
    /// `flag`, `flag_present`.
    Flag(bool),
    /// `strp`: an offset in `.debug_str`.
    Str(u64),
    /// `line_strp`: an offset in `.debug_line_str`.
    LineStr(u64),
    /// `strx`, `strx1`..`strx4`: an index into `.debug_str_offsets`.
    StrIndex(u64),
    /// `string`: the bytes in the DIE, without the NUL.
    Inline(&'a [u8]),
    /// A block, an expression or `data16`: its bytes.
    Block(&'a [u8]),
    /// `ref1`..`ref8`, `ref_udata`: an offset in the unit.
    UnitRef(u64),
    /// A form no scan interprets (`ref_addr`, `ref_sig8`, `addrx`, ...).
    Other,
}

impl Value<'_> {
    /// The value of a constant form, as pahole reads sizes and offsets.
    pub fn unsigned(self) -> Option<u64> {
        match self {
            Value::Unsigned(v) => Some(v),
            Value::Signed(v) => Some(v as u64),
            _ => None,
        }
    }
}

/// How a decoded attribute is to be read: [`Value`] without its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Unsigned,
    Signed,
    Flag,
    Str,
    LineStr,
    StrIndex,
    Inline,
    Block,
    UnitRef,
    Other,
}

/// A decoded attribute as plain fields: cheap to copy in the hot loop,
/// where an enum with a byte tag cost store-forwarding stalls.
#[derive(Clone, Copy)]
struct Raw<'a> {
    kind: Kind,
    number: u64,
    bytes: &'a [u8],
}

impl<'a> Raw<'a> {
    fn number(kind: Kind, number: u64) -> Self {
        Raw {
            kind,
            number,
            bytes: &[],
        }
    }

    fn bytes(kind: Kind, bytes: &'a [u8]) -> Self {
        Raw {
            kind,
            number: 0,
            bytes,
        }
    }

    #[inline]
    fn value(self) -> Value<'a> {
        match self.kind {
            Kind::Unsigned => Value::Unsigned(self.number),
            Kind::Signed => Value::Signed(self.number as i64),
            Kind::Flag => Value::Flag(self.number != 0),
            Kind::Str => Value::Str(self.number),
            Kind::LineStr => Value::LineStr(self.number),
            Kind::StrIndex => Value::StrIndex(self.number),
            Kind::Inline => Value::Inline(self.bytes),
            Kind::Block => Value::Block(self.bytes),
            Kind::UnitRef => Value::UnitRef(self.number),
            Kind::Other => Value::Other,
        }
    }
}

/// The wanted attributes of one DIE. Reused from DIE to DIE: only the
/// bits of `present` are cleared.
#[derive(Clone, Copy)]
pub struct Values<'a> {
    present: u16,
    slots: [Raw<'a>; WANTS],
}

impl Default for Values<'_> {
    fn default() -> Self {
        Values {
            present: 0,
            slots: [Raw::number(Kind::Other, 0); WANTS],
        }
    }
}

impl<'a> Values<'a> {
    /// The attribute, when the DIE has it.
    #[inline]
    pub fn get(&self, want: Want) -> Option<Value<'a>> {
        (self.present & (1 << want as u16) != 0).then(|| self.slots[want as usize].value())
    }

    /// An attribute as two words for a fingerprint: its encoding (0 when
    /// absent, else one more than its kind) and its value, with blocks and
    /// inline strings reduced by `hash_bytes`. Equal words mean equal values,
    /// except for the forms no scan interprets ([`Value::Other`]), which
    /// all read as one value.
    #[inline]
    pub fn words(&self, want: Want, hash_bytes: impl Fn(&[u8]) -> u64) -> (u64, u64) {
        if self.present & (1 << want as u16) == 0 {
            return (0, 0);
        }
        let raw = &self.slots[want as usize];
        let word = match raw.kind {
            Kind::Inline | Kind::Block => hash_bytes(raw.bytes),
            _ => raw.number,
        };
        (raw.kind as u64 + 1, word)
    }

    /// A constant attribute's value.
    #[inline]
    pub fn unsigned(&self, want: Want) -> Option<u64> {
        self.get(want)?.unsigned()
    }

    /// True when a flag attribute is present and set.
    #[inline]
    pub fn flag(&self, want: Want) -> bool {
        let slot = &self.slots[want as usize];
        self.present & (1 << want as u16) != 0 && slot.kind == Kind::Flag && slot.number != 0
    }

    /// A reference attribute inside the unit.
    #[inline]
    pub fn unit_ref(&self, want: Want) -> Option<UnitOffset<usize>> {
        match self.get(want)? {
            Value::UnitRef(o) => usize::try_from(o).ok().map(UnitOffset),
            _ => None,
        }
    }
}

/// One step over a DIE's attribute bytes.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// Skip this many bytes (a run of fixed-size attributes).
    Skip(usize),
    /// Skip one attribute of a variable-size form.
    SkipForm(DwForm),
    /// Decode a wanted number of fixed size, read as `Kind`.
    Number(Want, Kind, u8),
    /// A wanted value that the abbreviation holds (`implicit_const`,
    /// `flag_present`).
    Known(Want, Kind, u64),
    /// Decode a wanted attribute of any other form.
    Read(Want, DwForm),
    /// In a plan of fixed length: a wanted number of this size at this
    /// offset in the DIE.
    At(Want, Kind, u8, u32),
}

/// Rewrites a plan's steps for a DIE of fixed length (only skips of known
/// size, numbers and known values): each number gets its offset, the skips
/// go. Returns the length, or `None` (steps untouched) when a step has a
/// variable size.
fn fix_offsets(steps: &mut [Step]) -> Option<u32> {
    let mut length: u32 = 0;
    for step in steps.iter() {
        let size = match *step {
            Step::Skip(n) => u32::try_from(n).ok()?,
            Step::Number(_, _, n) => u32::from(n),
            Step::Known(..) => 0,
            Step::SkipForm(_) | Step::Read(..) | Step::At(..) => return None,
        };
        length = length.checked_add(size)?;
    }
    let mut at = 0;
    for step in steps.iter_mut() {
        match *step {
            Step::Skip(n) => at += n as u32,
            Step::Number(want, kind, n) => {
                *step = Step::At(want, kind, n, at);
                at += u32::from(n);
            }
            _ => {}
        }
    }
    Some(length)
}

/// How a wanted attribute of `form` is read.
fn read_step(want: Want, form: DwForm, implicit: i64, encoding: gimli::Encoding) -> Step {
    match form {
        constants::DW_FORM_implicit_const => Step::Known(want, Kind::Signed, implicit as u64),
        constants::DW_FORM_flag_present => Step::Known(want, Kind::Flag, 1),
        _ => match (number_kind(form), fixed_size(form, encoding)) {
            (Some(kind), Some(n @ (1 | 2 | 3 | 4 | 8))) => Step::Number(want, kind, n as u8),
            _ => Step::Read(want, form),
        },
    }
}

/// What a form that holds a number of fixed size (given by [`fixed_size`])
/// means, or `None` for every other form.
fn number_kind(form: DwForm) -> Option<Kind> {
    Some(match form {
        constants::DW_FORM_data1
        | constants::DW_FORM_data2
        | constants::DW_FORM_data4
        | constants::DW_FORM_data8
        | constants::DW_FORM_sec_offset
        | constants::DW_FORM_addr => Kind::Unsigned,
        constants::DW_FORM_flag => Kind::Flag,
        constants::DW_FORM_strp => Kind::Str,
        constants::DW_FORM_line_strp => Kind::LineStr,
        constants::DW_FORM_strx1
        | constants::DW_FORM_strx2
        | constants::DW_FORM_strx3
        | constants::DW_FORM_strx4 => Kind::StrIndex,
        constants::DW_FORM_ref1
        | constants::DW_FORM_ref2
        | constants::DW_FORM_ref4
        | constants::DW_FORM_ref8 => Kind::UnitRef,
        _ => return None,
    })
}

/// A compiled abbreviation: its tag, and its steps in the unit's arena.
#[derive(Clone, Copy, Debug)]
struct Plan {
    tag: DwTag,
    has_children: bool,
    steps: (u32, u32),
    /// The DIE's length when every attribute has a fixed size; its steps
    /// are then [`Step::At`] and [`Step::Known`].
    fixed: Option<u32>,
}

/// Appends one attribute's step to the plan that starts at `start`,
/// folding runs of fixed-size skips into one.
fn push_step(steps: &mut Vec<Step>, start: usize, step: Step) {
    match (steps.len() > start, steps.last_mut(), step) {
        (true, Some(Step::Skip(run)), Step::Skip(n)) => *run += n,
        (_, _, Step::Skip(0)) => {}
        _ => steps.push(step),
    }
}

/// Reads the wanted attributes of a DIE of fixed length, `die` its bytes.
#[inline(always)]
fn read_fixed<'a>(steps: &[Step], die: &[u8], endian: RunTimeEndian, values: &mut Values<'a>) {
    values.present = 0;
    for step in steps {
        match *step {
            Step::At(want, kind, size, at) => {
                let at = at as usize;
                let number = die
                    .get(at..at + usize::from(size))
                    .map_or(0, |b| number_of(endian, b));
                values.slots[want as usize] = Raw::number(kind, number);
                values.present |= 1 << want as u16;
            }
            Step::Known(want, kind, number) => {
                values.slots[want as usize] = Raw::number(kind, number);
                values.present |= 1 << want as u16;
            }
            _ => {}
        }
    }
}

/// An unsigned number in the file's byte order. The usual widths (1, 2, 4,
/// 8 bytes) are read directly; any other one, as `strx3` or a corrupt unit's
/// address size, byte by byte, keeping the first 8 bytes of a longer one.
#[inline(always)]
fn number_of(endian: RunTimeEndian, b: &[u8]) -> u64 {
    match b.len() {
        1 => u64::from(b[0]),
        2 => u64::from(endian.read_u16(b)),
        4 => u64::from(endian.read_u32(b)),
        8 => endian.read_u64(b),
        _ => number_of_odd_width(endian, b),
    }
}

/// [`number_of`] for the rare widths, out of the hot loop.
#[cold]
fn number_of_odd_width(endian: RunTimeEndian, b: &[u8]) -> u64 {
    let b = &b[..b.len().min(8)];
    let push = |acc: u64, byte: &u8| (acc << 8) | u64::from(*byte);
    if endian.is_big_endian() {
        b.iter().fold(0, push)
    } else {
        b.iter().rev().fold(0, push)
    }
}

/// Reads the attributes of one DIE at the cursor into `values`, keeping
/// the wanted ones.
#[inline(always)]
fn run_steps<'a>(
    steps: &[Step],
    cursor: &mut Cursor<'a>,
    values: &mut Values<'a>,
) -> std::result::Result<(), &'static str> {
    values.present = 0;
    for step in steps {
        match *step {
            Step::Skip(n) => cursor.skip(n)?,
            Step::SkipForm(form) => {
                cursor.value(form)?;
            }
            Step::Number(want, kind, size) => {
                values.slots[want as usize] = Raw::number(kind, cursor.fixed(size.into())?);
                values.present |= 1 << want as u16;
            }
            Step::Known(want, kind, number) => {
                values.slots[want as usize] = Raw::number(kind, number);
                values.present |= 1 << want as u16;
            }
            Step::Read(want, form) => {
                values.slots[want as usize] = cursor.value(form)?;
                values.present |= 1 << want as u16;
            }
            // Only in plans of fixed length, which `read_fixed` runs.
            Step::At(..) => {}
        }
    }
    Ok(())
}

/// The size of a form that has one, given the unit's encoding.
fn fixed_size(form: DwForm, encoding: gimli::Encoding) -> Option<usize> {
    let word = usize::from(encoding.format.word_size());
    let address = usize::from(encoding.address_size);
    Some(match form {
        constants::DW_FORM_flag_present | constants::DW_FORM_implicit_const => 0,
        constants::DW_FORM_data1
        | constants::DW_FORM_flag
        | constants::DW_FORM_ref1
        | constants::DW_FORM_strx1
        | constants::DW_FORM_addrx1 => 1,
        constants::DW_FORM_data2
        | constants::DW_FORM_ref2
        | constants::DW_FORM_strx2
        | constants::DW_FORM_addrx2 => 2,
        constants::DW_FORM_strx3 | constants::DW_FORM_addrx3 => 3,
        constants::DW_FORM_data4
        | constants::DW_FORM_ref4
        | constants::DW_FORM_ref_sup4
        | constants::DW_FORM_strx4
        | constants::DW_FORM_addrx4 => 4,
        constants::DW_FORM_data8
        | constants::DW_FORM_ref8
        | constants::DW_FORM_ref_sig8
        | constants::DW_FORM_ref_sup8 => 8,
        constants::DW_FORM_data16 => 16,
        constants::DW_FORM_addr => address,
        constants::DW_FORM_strp
        | constants::DW_FORM_line_strp
        | constants::DW_FORM_sec_offset
        | constants::DW_FORM_strp_sup
        | constants::DW_FORM_GNU_strp_alt
        | constants::DW_FORM_GNU_ref_alt => word,
        // DWARF 2 sized references like addresses; later versions like offsets.
        constants::DW_FORM_ref_addr if encoding.version == 2 => address,
        constants::DW_FORM_ref_addr => word,
        _ => return None,
    })
}

/// A position in a unit's DIE bytes.
#[derive(Clone)]
pub struct Cursor<'a> {
    bytes: &'a [u8],
    /// Unit offset of `bytes[0]` (the header size).
    base: usize,
    pos: usize,
    endian: RunTimeEndian,
    encoding: gimli::Encoding,
}

impl<'a> Cursor<'a> {
    /// Unit offset of the next byte.
    pub fn offset(&self) -> UnitOffset<usize> {
        UnitOffset(self.base + self.pos)
    }

    /// True when the unit's bytes are used up.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// Moves to a unit offset at or after the current one (a sibling).
    pub fn jump_forward(&mut self, to: UnitOffset<usize>) -> std::result::Result<(), &'static str> {
        match to.0.checked_sub(self.base) {
            Some(pos) if pos >= self.pos && pos <= self.bytes.len() => {
                self.pos = pos;
                Ok(())
            }
            _ => Err("DW_AT_sibling does not point forward inside the unit"),
        }
    }

    #[inline]
    fn skip(&mut self, n: usize) -> std::result::Result<(), &'static str> {
        if n > self.bytes.len() - self.pos {
            return Err("attribute runs past the end of the unit");
        }
        self.pos += n;
        Ok(())
    }

    #[inline]
    fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], &'static str> {
        let start = self.pos;
        self.skip(n)?;
        Ok(&self.bytes[start..self.pos])
    }

    #[inline(always)]
    fn fixed(&mut self, n: usize) -> std::result::Result<u64, &'static str> {
        let b = self.take(n)?;
        Ok(number_of(self.endian, b))
    }

    /// Reads an unsigned LEB128 number (the DIE's abbreviation code, say).
    #[inline]
    pub fn uleb(&mut self) -> std::result::Result<u64, &'static str> {
        // Most numbers (codes, small sizes) fit one byte.
        if let Some(&byte) = self.bytes.get(self.pos)
            && byte < 0x80
        {
            self.pos += 1;
            return Ok(u64::from(byte));
        }
        self.uleb_long()
    }

    fn uleb_long(&mut self) -> std::result::Result<u64, &'static str> {
        let mut result = 0u64;
        let mut shift = 0u32;
        loop {
            let Some(&byte) = self.bytes.get(self.pos) else {
                return Err("LEB128 number runs past the end of the unit");
            };
            self.pos += 1;
            if shift < 64 {
                result |= u64::from(byte & 0x7f) << shift;
            } else if byte & 0x7f != 0 {
                return Err("LEB128 number overflows 64 bits");
            }
            if byte & 0x80 == 0 {
                return Ok(result);
            }
            shift = shift.saturating_add(7);
        }
    }

    fn sleb(&mut self) -> std::result::Result<i64, &'static str> {
        let start = self.pos;
        self.uleb()?;
        let bytes = &self.bytes[start..self.pos];
        let mut result = 0i64;
        let mut shift = 0u32;
        for &byte in bytes {
            if shift < 64 {
                result |= i64::from(byte & 0x7f) << shift;
            }
            shift = shift.saturating_add(7);
        }
        let last = bytes[bytes.len() - 1];
        if shift < 64 && last & 0x40 != 0 {
            result |= -1i64 << shift;
        }
        Ok(result)
    }

    fn length(&mut self, n: u64) -> std::result::Result<&'a [u8], &'static str> {
        let n = usize::try_from(n).map_err(|_| "block longer than the unit")?;
        self.take(n)
    }

    /// Decodes one attribute of `form` (not `implicit_const`, whose value
    /// is in the abbreviation: see [`Step::Known`]).
    #[inline(always)]
    fn value(&mut self, form: DwForm) -> std::result::Result<Raw<'a>, &'static str> {
        if form != constants::DW_FORM_indirect {
            return self.direct(form);
        }
        let actual = u16::try_from(self.uleb()?).map_err(|_| "unknown attribute form")?;
        if DwForm(actual) == constants::DW_FORM_indirect {
            return Err("DW_FORM_indirect names itself");
        }
        self.direct(DwForm(actual))
    }

    /// Decodes one attribute of `form`, which is not `indirect`.
    #[inline(always)]
    fn direct(&mut self, form: DwForm) -> std::result::Result<Raw<'a>, &'static str> {
        if let (Some(kind), Some(n)) = (number_kind(form), fixed_size(form, self.encoding)) {
            return Ok(Raw::number(kind, self.fixed(n)?));
        }
        Ok(match form {
            constants::DW_FORM_udata => Raw::number(Kind::Unsigned, self.uleb()?),
            constants::DW_FORM_sdata => Raw::number(Kind::Signed, self.sleb()? as u64),
            constants::DW_FORM_flag_present => Raw::number(Kind::Flag, 1),
            constants::DW_FORM_strx | constants::DW_FORM_GNU_str_index => {
                Raw::number(Kind::StrIndex, self.uleb()?)
            }
            constants::DW_FORM_string => {
                let rest = &self.bytes[self.pos..];
                let Some(len) = memchr::memchr(0, rest) else {
                    return Err("string runs past the end of the unit");
                };
                self.pos += len + 1;
                Raw::bytes(Kind::Inline, &rest[..len])
            }
            constants::DW_FORM_ref_udata => Raw::number(Kind::UnitRef, self.uleb()?),
            constants::DW_FORM_block1 | constants::DW_FORM_block2 | constants::DW_FORM_block4 => {
                let width = match form {
                    constants::DW_FORM_block1 => 1,
                    constants::DW_FORM_block2 => 2,
                    _ => 4,
                };
                let n = self.fixed(width)?;
                Raw::bytes(Kind::Block, self.length(n)?)
            }
            constants::DW_FORM_block | constants::DW_FORM_exprloc => {
                let n = self.uleb()?;
                Raw::bytes(Kind::Block, self.length(n)?)
            }
            constants::DW_FORM_data16 => Raw::bytes(Kind::Block, self.take(16)?),
            constants::DW_FORM_addrx
            | constants::DW_FORM_GNU_addr_index
            | constants::DW_FORM_loclistx
            | constants::DW_FORM_rnglistx => {
                self.uleb()?;
                Raw::number(Kind::Other, 0)
            }
            other => match fixed_size(other, self.encoding) {
                Some(n) => {
                    self.skip(n)?;
                    Raw::number(Kind::Other, 0)
                }
                None => return Err("unknown attribute form"),
            },
        })
    }
}

impl Plans {
    /// Reads the abbreviation table at the cursor into plans.
    fn compile(
        cursor: &mut Cursor<'_>,
        encoding: gimli::Encoding,
        wants: WantsByTag,
    ) -> std::result::Result<Plans, &'static str> {
        let mut plans = Plans::default();
        let u16_of = |v: u64| u16::try_from(v).map_err(|_| "tag, attribute or form over 0xffff");
        loop {
            let code = cursor.uleb()?;
            if code == 0 {
                return Ok(plans);
            }
            let tag = DwTag(u16_of(cursor.uleb()?)?);
            let has_children = match cursor.take(1)?[0] {
                0 => false,
                1 => true,
                _ => {
                    // The error is located at the byte, not past it.
                    cursor.pos -= 1;
                    return Err("bad DW_CHILDREN value");
                }
            };
            let mut wanted = wants(tag);
            if UNIT_TAGS.contains(&tag) {
                wanted.0 |= const { Wants::of(&[Want::StrOffsetsBase]) }.0;
            }
            let start = plans.steps.len();
            loop {
                let name = cursor.uleb()?;
                let form = DwForm(u16_of(cursor.uleb()?)?);
                if name == 0 && form.0 == 0 {
                    break;
                }
                let implicit = if form == constants::DW_FORM_implicit_const {
                    cursor.sleb()?
                } else {
                    0
                };
                let want = u16::try_from(name)
                    .ok()
                    .and_then(|n| Want::of(DwAt(n)))
                    .filter(|w| wanted.contains(*w));
                let step = match want {
                    Some(want) => read_step(want, form, implicit, encoding),
                    None => match fixed_size(form, encoding) {
                        Some(n) => Step::Skip(n),
                        None => Step::SkipForm(form),
                    },
                };
                push_step(&mut plans.steps, start, step);
            }
            let fixed = fix_offsets(&mut plans.steps[start..]);
            if fixed.is_some() {
                // Skips are folded into the offsets.
                let mut kept = start;
                for i in start..plans.steps.len() {
                    if !matches!(plans.steps[i], Step::Skip(_)) {
                        plans.steps[kept] = plans.steps[i];
                        kept += 1;
                    }
                }
                plans.steps.truncate(kept);
            }
            let to_u32 = |n: usize| u32::try_from(n).map_err(|_| "abbreviation table too large");
            let plan = Plan {
                tag,
                has_children,
                steps: (to_u32(start)?, to_u32(plans.steps.len() - start)?),
                fixed,
            };
            let slot = if code < MAX_INDEXED_CODE {
                let index = code as usize;
                if index >= plans.by_code.len() {
                    plans.by_code.resize(index + 1, None);
                }
                &mut plans.by_code[index]
            } else {
                if plans.spilled.contains_key(&code) {
                    return Err("duplicate abbreviation code");
                }
                plans.spilled.insert(code, plan);
                continue;
            };
            if slot.replace(plan).is_some() {
                return Err("duplicate abbreviation code");
            }
        }
    }

    /// The plan of an abbreviation code.
    #[inline(always)]
    fn get(&self, code: u64) -> Option<&Plan> {
        match self.by_code.get(code as usize) {
            Some(Some(plan)) if code < MAX_INDEXED_CODE => Some(plan),
            _ => self.spilled.get(&code),
        }
    }

    /// A plan's steps.
    #[inline(always)]
    fn steps(&self, plan: &Plan) -> &[Step] {
        let (start, len) = (plan.steps.0 as usize, plan.steps.1 as usize);
        &self.steps[start..start + len]
    }
}

/// A DIE read by [`UnitScan::next`].
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// Its offset in the unit.
    pub offset: UnitOffset<usize>,
    /// Its tag.
    pub tag: DwTag,
    /// Whether children follow it.
    pub has_children: bool,
}

/// One unit ready for a raw scan: its abbreviations compiled into plans
/// (read straight from `.debug_abbrev`, without gimli's per-abbreviation
/// allocations), and what its unit DIE says about strings.
pub struct UnitScan<'a> {
    header: UnitHeader<Reader<'a>>,
    str_offsets_base: DebugStrOffsetsBase<usize>,
    plans: Plans,
}

/// A unit's abbreviation table compiled for one scan.
#[derive(Default)]
struct Plans {
    /// Plans by abbreviation code, for the dense codes compilers emit.
    by_code: Vec<Option<Plan>>,
    /// Plans of codes too large to index `by_code` (hostile input only).
    spilled: foldhash::HashMap<u64, Plan>,
    /// Every plan's steps, one after the other.
    steps: Vec<Step>,
}

/// Codes below this index a vector; compilers number them from 1 densely.
const MAX_INDEXED_CODE: u64 = 1 << 16;

/// The tags of unit DIEs, whose `DW_AT_str_offsets_base` every scan reads.
const UNIT_TAGS: [DwTag; 4] = [
    constants::DW_TAG_compile_unit,
    constants::DW_TAG_partial_unit,
    constants::DW_TAG_type_unit,
    constants::DW_TAG_skeleton_unit,
];

impl<'a> UnitScan<'a> {
    /// Compiles unit `index`'s abbreviations for a scan that reads
    /// `wants(tag)` of each DIE.
    pub fn open(file: &DwarfFile<'a>, index: usize, wants: WantsByTag) -> Result<Self> {
        let header = file.units[index];
        let table = gimli::Section::reader(&file.dwarf.debug_abbrev).slice();
        let start = header.debug_abbrev_offset().0;
        let at_unit = |offset: usize, reason: &str| {
            Error::abbrev(
                offset as u64,
                format!(
                    "abbreviations of the unit at .debug_info offset {:#x}: {reason}",
                    unit_start(&header)
                ),
            )
        };
        let bytes = table
            .get(start..)
            .ok_or_else(|| at_unit(start, "offset past the end of .debug_abbrev"))?;
        let mut cursor = Cursor {
            bytes,
            base: 0,
            pos: 0,
            endian: RunTimeEndian::Little,
            encoding: header.encoding(),
        };
        let plans = Plans::compile(&mut cursor, header.encoding(), wants)
            .map_err(|e| at_unit(start + cursor.pos, e))?;
        Ok(UnitScan {
            header,
            str_offsets_base: DebugStrOffsetsBase(0),
            plans,
        })
    }

    /// The error for corrupt bytes in the DIE at `offset`.
    pub fn corrupt(&self, offset: UnitOffset<usize>, reason: impl std::fmt::Display) -> Error {
        Error::dwarf((unit_start(&self.header) + offset.0) as u64, reason)
    }

    /// A cursor at a unit offset.
    fn cursor_at(&self, offset: UnitOffset<usize>) -> Result<Cursor<'a>> {
        let header = &self.header;
        let bytes: Reader<'a> = header
            .range_from(header.root_offset()..)
            .map_err(|e| self.corrupt(offset, e))?;
        let mut cursor = Cursor {
            bytes: bytes.slice(),
            base: header.root_offset().0,
            pos: 0,
            endian: gimli::Reader::endian(&bytes),
            encoding: header.encoding(),
        };
        cursor
            .jump_forward(offset)
            .map_err(|_| self.corrupt(offset, "offset outside its unit"))?;
        Ok(cursor)
    }

    /// Reads the next DIE's code and wanted attributes, or `None` for the
    /// null entry that ends a list of children.
    #[inline(always)]
    pub fn next(&self, cursor: &mut Cursor<'a>, values: &mut Values<'a>) -> Result<Option<Entry>> {
        let offset = cursor.offset();
        let code = cursor.uleb().map_err(|e| self.corrupt(offset, e))?;
        if code == 0 {
            return Ok(None);
        }
        let plan = self
            .plans
            .get(code)
            .ok_or_else(|| self.corrupt(offset, format!("unknown abbreviation code {code}")))?;
        let steps = self.plans.steps(plan);
        match plan.fixed {
            Some(length) => {
                let die = cursor
                    .take(length as usize)
                    .map_err(|e| self.corrupt(offset, e))?;
                read_fixed(steps, die, cursor.endian, values);
            }
            None => run_steps(steps, cursor, values).map_err(|e| self.corrupt(offset, e))?,
        }
        Ok(Some(Entry {
            offset,
            tag: plan.tag,
            has_children: plan.has_children,
        }))
    }

    /// A cursor at the unit's first top-level DIE (the unit DIE read, its
    /// `DW_AT_str_offsets_base` kept), or `None` when the unit has no
    /// children.
    pub fn top_level(&mut self) -> Result<Option<Cursor<'a>>> {
        let mut cursor = self.cursor_at(self.header.root_offset())?;
        let mut values = Values::default();
        let Some(root) = self.next(&mut cursor, &mut values)? else {
            return Ok(None);
        };
        if let Some(base) = values
            .unsigned(Want::StrOffsetsBase)
            .and_then(|b| usize::try_from(b).ok())
        {
            self.str_offsets_base = DebugStrOffsetsBase(base);
        }
        Ok(root.has_children.then_some(cursor))
    }

    /// Where a string value of this unit lives (`strx` indexes resolved
    /// to `.debug_str` offsets), or `None` for a non-string form.
    #[inline]
    pub fn name_ref(&self, file: &DwarfFile<'a>, value: Value<'a>) -> Option<NameRef<'a>> {
        Some(match value {
            Value::Inline(bytes) => NameRef::Inline(bytes),
            Value::Str(o) => NameRef::Str(o),
            Value::LineStr(o) => NameRef::LineStr(o),
            Value::StrIndex(i) => {
                let o = file
                    .dwarf
                    .debug_str_offsets
                    .get_str_offset(
                        self.header.format(),
                        self.str_offsets_base,
                        gimli::DebugStrOffsetsIndex(usize::try_from(i).ok()?),
                    )
                    .ok()?;
                NameRef::Str(o.0 as u64)
            }
            _ => return None,
        })
    }

    /// A string value of this unit as UTF-8.
    pub fn name_str(&self, file: &DwarfFile<'a>, value: Value<'a>) -> Option<&'a str> {
        file.name_str(self.name_ref(file, value)?)
    }
}

/// A depth-first walk over a unit's DIEs from its top level: keeps the
/// depth across the null entries that end lists of children, and steps
/// past children through `DW_AT_sibling` when asked to.
pub struct Walk {
    /// Depth of the next DIE: 1 = a direct child of the unit.
    depth: usize,
}

impl Walk {
    /// A walk that starts among the unit's top-level DIEs.
    pub fn top_level() -> Self {
        Walk { depth: 1 }
    }

    /// Depth of the DIE that [`Walk::next`] returned last (1 = top level).
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The next DIE with its wanted values in `die`, or `None` once the
    /// unit's children (or bytes) end.
    #[inline(always)]
    pub fn next<'a>(
        &mut self,
        scan: &UnitScan<'a>,
        cursor: &mut Cursor<'a>,
        die: &mut Values<'a>,
    ) -> Result<Option<Entry>> {
        while !cursor.is_empty() {
            match scan.next(cursor, die)? {
                Some(entry) => return Ok(Some(entry)),
                None if self.depth == 1 => return Ok(None),
                None => self.depth -= 1,
            }
        }
        Ok(None)
    }

    /// After `entry` (its values in `die`): when `skip` and the compiler
    /// recorded its sibling, moves past its children; otherwise, if it has
    /// children, the walk goes into them.
    pub fn children<'a>(
        &mut self,
        scan: &UnitScan<'a>,
        cursor: &mut Cursor<'a>,
        entry: &Entry,
        die: &Values<'a>,
        skip: bool,
    ) -> Result<()> {
        if !entry.has_children {
            return Ok(());
        }
        match die.unit_ref(Want::Sibling) {
            Some(sibling) if skip => cursor
                .jump_forward(sibling)
                .map_err(|e| scan.corrupt(entry.offset, e)),
            _ => {
                self.depth += 1;
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor(bytes: &[u8]) -> Cursor<'_> {
        Cursor {
            bytes,
            base: 11,
            pos: 0,
            endian: RunTimeEndian::Little,
            encoding: gimli::Encoding {
                format: gimli::Format::Dwarf32,
                version: 5,
                address_size: 8,
            },
        }
    }

    #[test]
    fn leb128_numbers_decode_as_the_dwarf_standard_examples() {
        // DWARF 5, section 7.6, tables 7.7 and 7.8.
        let mut c = cursor(&[2, 127, 0x80, 1, 0x81, 1, 0x82, 1, 0xb9, 0x64]);
        let unsigned: Vec<u64> = (0..5).map(|_| c.uleb().unwrap()).collect();
        assert_eq!(unsigned, [2, 127, 128, 129, 130]);
        assert_eq!(c.uleb().unwrap(), 12857);
        let mut c = cursor(&[2, 0x7e, 0xff, 0, 0x81, 0x7f, 0x80, 1, 0x80, 0x7f]);
        let signed: Vec<i64> = (0..6).map(|_| c.sleb().unwrap()).collect();
        assert_eq!(signed, [2, -2, 127, -127, 128, -128]);
        assert!(c.is_empty());
        assert!(cursor(&[0x80, 0x80]).uleb().is_err());
        let eleven = [0xff; 10].into_iter().chain([0x01]).collect::<Vec<_>>();
        assert!(cursor(&eleven).uleb().is_err());
    }

    #[test]
    fn forms_decode_and_stop_at_the_end_of_the_unit() {
        let mut c = cursor(&[0x34, 0x12, b'a', b'b', 0, 3, 9, 8, 7, 0x2c, 0, 0, 0]);
        assert_eq!(
            c.value(constants::DW_FORM_data2).map(Raw::value),
            Ok(Value::Unsigned(0x1234))
        );
        assert_eq!(
            c.value(constants::DW_FORM_string).map(Raw::value),
            Ok(Value::Inline(b"ab"))
        );
        assert_eq!(
            c.value(constants::DW_FORM_exprloc).map(Raw::value),
            Ok(Value::Block(&[9, 8, 7]))
        );
        assert_eq!(c.offset(), UnitOffset(11 + 9));
        assert_eq!(
            c.value(constants::DW_FORM_ref4).map(Raw::value),
            Ok(Value::UnitRef(0x2c))
        );
        assert!(c.value(constants::DW_FORM_data1).is_err());
        assert!(cursor(&[5, 1]).value(constants::DW_FORM_block1).is_err());
        assert!(cursor(b"x").value(constants::DW_FORM_string).is_err());
        assert_eq!(
            cursor(&[0x0b, 0x7f])
                .value(constants::DW_FORM_indirect)
                .map(Raw::value),
            Ok(Value::Unsigned(0x7f))
        );
        assert!(
            cursor(&[0x16, 0x16])
                .value(constants::DW_FORM_indirect)
                .is_err()
        );
        assert!(cursor(&[0]).value(DwForm(0x7777)).is_err());
        let mut c = cursor(&[1, 2, 3]);
        assert!(c.jump_forward(UnitOffset(13)).is_ok());
        assert!(c.jump_forward(UnitOffset(12)).is_err());
        assert!(c.jump_forward(UnitOffset(15)).is_err());
    }

    #[test]
    fn fixed_length_plans_read_numbers_at_their_offsets() {
        let mut steps = vec![
            Step::Number(Want::Name, Kind::Str, 4),
            Step::Skip(3),
            Step::Known(Want::Declaration, Kind::Flag, 1),
            Step::Number(Want::MemberLocation, Kind::Unsigned, 2),
        ];
        assert_eq!(fix_offsets(&mut steps), Some(9));
        steps.retain(|s| !matches!(s, Step::Skip(_)));
        let die = [0x10, 0, 0, 0, 9, 9, 9, 0x34, 0x12];
        let mut values = Values::default();
        read_fixed(&steps, &die, RunTimeEndian::Little, &mut values);
        assert_eq!(values.get(Want::Name), Some(Value::Str(0x10)));
        assert!(values.flag(Want::Declaration));
        assert_eq!(values.unsigned(Want::MemberLocation), Some(0x1234));
        assert_eq!(values.get(Want::Type), None);
        // A variable-size form keeps the plan on the step-by-step path.
        let mut variable = vec![Step::Skip(2), Step::SkipForm(constants::DW_FORM_string)];
        assert_eq!(fix_offsets(&mut variable), None);
        assert!(matches!(variable[0], Step::Skip(2)));
    }

    fn all_wanted(_: DwTag) -> Wants {
        const {
            Wants::of(&[
                Want::Name,
                Want::ByteSize,
                Want::Sibling,
                Want::Type,
                Want::MemberLocation,
            ])
        }
    }

    fn compile(table: &[u8]) -> std::result::Result<Plans, &'static str> {
        Plans::compile(&mut cursor(table), cursor(&[]).encoding, all_wanted)
    }

    #[test]
    fn abbreviation_tables_compile_into_plans() {
        // 1: structure_type, children, name strp, byte_size data1, sibling ref4.
        // 0x10000 (over the indexed range): member, name string, type ref4,
        //   data_member_location exprloc.
        let table = [
            1, 0x13, 1, 0x03, 0x0e, 0x0b, 0x0b, 0x01, 0x13, 0, 0, //
            0x80, 0x80, 0x04, 0x0d, 0, 0x03, 0x08, 0x49, 0x13, 0x38, 0x18, 0, 0, //
            0,
        ];
        let plans = compile(&table).unwrap();
        let structure = plans.get(1).unwrap();
        assert_eq!(structure.tag, constants::DW_TAG_structure_type);
        assert!(structure.has_children);
        assert_eq!(structure.fixed, Some(9), "strp 4 + data1 1 + ref4 4");
        let member = plans.get(0x10000).unwrap();
        assert_eq!(member.tag, constants::DW_TAG_member);
        assert_eq!(member.fixed, None, "a string and an expression vary");
        assert_eq!(plans.steps(member).len(), 3);
        assert!(plans.get(2).is_none());
        assert!(plans.get(0).is_none());
    }

    #[test]
    fn bad_abbreviation_tables_are_errors() {
        let duplicate = [1, 0x13, 0, 0, 0, 1, 0x0d, 0, 0, 0, 0];
        assert_eq!(
            compile(&duplicate).err(),
            Some("duplicate abbreviation code")
        );
        let spilled_twice = [
            0x80, 0x80, 0x04, 0x13, 0, 0, 0, 0x80, 0x80, 0x04, 0x13, 0, 0, 0, 0,
        ];
        assert_eq!(
            compile(&spilled_twice).err(),
            Some("duplicate abbreviation code")
        );
        assert_eq!(
            compile(&[1, 0x13, 2, 0, 0, 0]).err(),
            Some("bad DW_CHILDREN value")
        );
        assert!(
            compile(&[1, 0x80, 0x80, 0x04, 0, 0, 0, 0]).is_err(),
            "tag over 0xffff"
        );
        assert!(compile(&[1, 0x13, 0, 0x03]).is_err(), "truncated");
        assert!(compile(&[]).is_err(), "no terminating code");
    }

    #[test]
    fn numbers_of_any_width_read_without_panicking() {
        let le = RunTimeEndian::Little;
        assert_eq!(number_of(le, &[0x56, 0x34, 0x12]), 0x12_3456);
        assert_eq!(
            number_of(RunTimeEndian::Big, &[0x12, 0x34, 0x56]),
            0x12_3456
        );
        assert_eq!(number_of(le, &[1, 0, 0, 0, 0, 2]), 0x0200_0000_0001);
        assert_eq!(number_of(le, &[]), 0);
        assert_eq!(number_of(le, &[1; 12]), 0x0101_0101_0101_0101);
        // A unit header may claim any address size; DW_FORM_addr follows it.
        for address_size in [0, 3, 6, 16] {
            let mut c = cursor(&[7; 16]);
            c.encoding.address_size = address_size;
            let raw = c.value(constants::DW_FORM_addr).map(Raw::value);
            assert!(
                matches!(raw, Ok(Value::Unsigned(_))),
                "{address_size}: {raw:?}"
            );
            assert_eq!(c.offset(), UnitOffset(11 + usize::from(address_size)));
        }
    }
}
