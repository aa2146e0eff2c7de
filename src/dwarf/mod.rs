//! DWARF → model. Zero-copy over the mapped sections (`gimli::EndianSlice`),
//! in two steps: a parallel [`index`] of the named type definitions at the
//! top level of every unit, then [`decode`] of only the types a command
//! prints.

pub mod contains;
pub mod decode;
pub(crate) mod def_kind;
pub(crate) mod fingerprint;
pub mod functions;
pub mod index;
pub mod layouts;
pub(crate) mod member_structs;
pub(crate) mod name_index;
pub mod raw_dies;

use std::sync::Arc;

use gimli::{AttributeValue, DebugStrOffsetsBase, UnitHeader, UnitOffset};

use crate::error::{Error, Result};
use crate::input::{ByteOrder, DebugSections};

/// The reader type: a slice of the mapped (or decompressed) section.
pub type Reader<'a> = gimli::EndianSlice<'a, gimli::RunTimeEndian>;

/// A file's DWARF with its unit headers parsed once.
pub struct DwarfFile<'a> {
    /// The gimli sections.
    pub dwarf: gimli::Dwarf<Reader<'a>>,
    /// Every unit of `.debug_info`, in file order.
    pub units: Vec<UnitHeader<Reader<'a>>>,
    /// True for big-endian targets (bitfield numbering depends on it).
    pub big_endian: bool,
}

impl<'a> DwarfFile<'a> {
    /// Wraps the sections and reads the unit headers (not their DIEs).
    pub fn new(sections: &'a DebugSections<'a>) -> Result<Self> {
        let endian = match sections.byte_order {
            ByteOrder::Little => gimli::RunTimeEndian::Little,
            ByteOrder::Big => gimli::RunTimeEndian::Big,
        };
        let dwarf = gimli::Dwarf::load(|id| -> Result<Reader<'a>> {
            Ok(gimli::EndianSlice::new(sections.get(id.name()), endian))
        })?;
        let mut units = Vec::new();
        let mut headers = dwarf.units();
        loop {
            let offset = units
                .last()
                .map_or(0, |h: &UnitHeader<Reader<'a>>| unit_end(h));
            match headers.next() {
                Ok(Some(header)) => units.push(header),
                Ok(None) => break,
                Err(e) => return Err(Error::dwarf(offset as u64, format!("unit header: {e}"))),
            }
        }
        if units.is_empty() {
            return Err(Error::dwarf(0, ".debug_info holds no units"));
        }
        Ok(DwarfFile {
            dwarf,
            units,
            big_endian: sections.byte_order == ByteOrder::Big,
        })
    }

    /// Index of the unit that contains `.debug_info` offset `offset`.
    pub fn unit_containing(&self, offset: usize) -> Option<usize> {
        let i = self
            .units
            .partition_point(|h| unit_start(h) <= offset)
            .checked_sub(1)?;
        (offset < unit_end(&self.units[i])).then_some(i)
    }

    /// Opens unit `index` for reading DIEs.
    pub fn unit(&self, index: usize) -> Result<UnitCtx<'a>> {
        let header = self.units[index];
        let base = unit_start(&header) as u64;
        let abbrevs = header
            .abbreviations(&self.dwarf.debug_abbrev)
            .map_err(|e| {
                let at = header.debug_abbrev_offset().0 as u64;
                Error::abbrev(at, format!("the table of the unit at {base:#x}: {e}"))
            })?;
        let mut ctx = UnitCtx {
            index,
            header,
            abbrevs: Arc::new(abbrevs),
            str_offsets_base: DebugStrOffsetsBase(0),
            stmt_list: None,
            comp_dir: None,
            name: None,
        };
        let root = header
            .entry(&ctx.abbrevs, header.root_offset())
            .map_err(|e| Error::dwarf(base, format!("unit root: {e}")))?;
        if let Some(AttributeValue::DebugStrOffsetsBase(b)) =
            root.attr_value(gimli::DW_AT_str_offsets_base)
        {
            ctx.str_offsets_base = b;
        }
        if let Some(AttributeValue::DebugLineRef(off)) = root.attr_value(gimli::DW_AT_stmt_list) {
            ctx.stmt_list = Some(off);
        }
        if let Some(v) = root.attr_value(gimli::DW_AT_comp_dir) {
            ctx.comp_dir = self.attr_bytes(&ctx, v);
        }
        if let Some(v) = root.attr_value(gimli::DW_AT_name) {
            ctx.name = self.attr_bytes(&ctx, v);
        }
        Ok(ctx)
    }

    /// The bytes of a string attribute, whatever its form.
    pub fn attr_bytes(
        &self,
        ctx: &UnitCtx<'a>,
        value: AttributeValue<Reader<'a>>,
    ) -> Option<Reader<'a>> {
        let d = &self.dwarf;
        match value {
            AttributeValue::String(s) => Some(s),
            AttributeValue::DebugStrRef(o) => d.debug_str.get_str(o).ok(),
            AttributeValue::DebugLineStrRef(o) => d.debug_line_str.get_str(o).ok(),
            AttributeValue::DebugStrOffsetsIndex(i) => {
                let o = d
                    .debug_str_offsets
                    .get_str_offset(ctx.header.format(), ctx.str_offsets_base, i)
                    .ok()?;
                d.debug_str.get_str(o).ok()
            }
            _ => None,
        }
    }

    /// The bytes of a string, without its NUL.
    pub fn name_bytes(&self, name: NameRef<'a>) -> Option<&'a [u8]> {
        let found = match name {
            NameRef::Inline(bytes) => return Some(bytes),
            NameRef::Str(o) => self
                .dwarf
                .debug_str
                .get_str(gimli::DebugStrOffset(usize::try_from(o).ok()?)),
            NameRef::LineStr(o) => self
                .dwarf
                .debug_line_str
                .get_str(gimli::DebugLineStrOffset(usize::try_from(o).ok()?)),
        };
        found.ok().map(|r| r.slice())
    }

    /// Every offset in `.debug_str` where `s` starts and runs to a NUL:
    /// where a `strp` naming `s` can point (a linker may merge a string
    /// into the tail of a longer one).
    pub fn string_offsets(&self, s: &str) -> Vec<u64> {
        if s.as_bytes().contains(&0) {
            return Vec::new();
        }
        let needle = [s.as_bytes(), &[0]].concat();
        let table = gimli::Section::reader(&self.dwarf.debug_str).slice();
        memchr::memmem::find_iter(table, &needle)
            .map(|at| at as u64)
            .collect()
    }

    /// A string as UTF-8 (`None` if it is not).
    pub fn name_str(&self, name: NameRef<'a>) -> Option<&'a str> {
        std::str::from_utf8(self.name_bytes(name)?).ok()
    }

    /// A string attribute as UTF-8 (`None` if absent, of another form, or not UTF-8).
    pub fn attr_str(
        &self,
        ctx: &UnitCtx<'a>,
        value: AttributeValue<Reader<'a>>,
    ) -> Option<&'a str> {
        std::str::from_utf8(self.attr_bytes(ctx, value)?.slice()).ok()
    }
}

/// A string of the file, not yet read: an offset in `.debug_str` or
/// `.debug_line_str`, or the bytes of an inline string. In a linked file
/// equal strings are merged, so equal offsets mean equal strings (but an
/// unmerged copy may have another offset).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NameRef<'a> {
    /// An offset in `.debug_str`.
    Str(u64),
    /// An offset in `.debug_line_str`.
    LineStr(u64),
    /// A `DW_FORM_string`'s bytes.
    Inline(&'a [u8]),
}

/// One unit opened for reading: header, abbreviations and the few root
/// attributes needed to read strings and source files.
pub struct UnitCtx<'a> {
    /// Position of the unit in [`DwarfFile::units`].
    pub index: usize,
    /// The unit header.
    pub header: UnitHeader<Reader<'a>>,
    /// Its abbreviation table.
    pub abbrevs: Arc<gimli::Abbreviations>,
    /// `DW_AT_str_offsets_base` (DWARF 5 `strx` forms, as clang emits them).
    pub str_offsets_base: DebugStrOffsetsBase<usize>,
    /// `DW_AT_stmt_list`, to resolve `DW_AT_decl_file`.
    pub stmt_list: Option<gimli::DebugLineOffset<usize>>,
    /// `DW_AT_comp_dir`.
    pub comp_dir: Option<Reader<'a>>,
    /// `DW_AT_name` of the unit.
    pub name: Option<Reader<'a>>,
}

impl UnitCtx<'_> {
    /// Absolute `.debug_info` offset of a unit-relative offset.
    pub fn absolute(&self, offset: UnitOffset<usize>) -> u64 {
        (unit_start(&self.header) + offset.0) as u64
    }
}

/// `.debug_info` offset of a unit's header.
pub fn unit_start(header: &UnitHeader<Reader<'_>>) -> usize {
    header.offset().0
}

/// `.debug_info` offset just past a unit.
pub fn unit_end(header: &UnitHeader<Reader<'_>>) -> usize {
    unit_start(header) + header.length_including_self()
}
