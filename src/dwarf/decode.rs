//! Decoding of individual type DIEs into the model, on demand.
//!
//! [`Decoder::type_at`] decodes one type *shallowly*: a struct gets its name
//! and size but not its members, so following pointers never pulls in the
//! whole kernel type graph. [`Decoder::load_members`] fills one struct's
//! members, and [`Decoder::load_deep`] every struct embedded by value below it.

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::rc::Rc;

use gimli::{AttributeValue, DebuggingInformationEntry, UnitOffset};

use super::{DwarfFile, Reader, UnitCtx, unit_start};
use crate::error::{Error, Result};
use crate::model::{
    Composite, CompositeKind, MAX_TYPE_DEPTH, Member, Qualifier, SourceLoc, Type, TypeId, TypeTable,
};

type Entry<'a> = DebuggingInformationEntry<Reader<'a>>;

/// Decodes DIEs of one file into a [`TypeTable`], each DIE at most once.
pub struct Decoder<'f, 'a> {
    file: &'f DwarfFile<'a>,
    /// The types decoded so far.
    pub table: TypeTable,
    memo: HashMap<u64, TypeId>,
    origins: HashMap<TypeId, (usize, UnitOffset<usize>)>,
    units: HashMap<usize, Rc<UnitCtx<'a>>>,
    lines: HashMap<usize, Option<gimli::IncompleteLineProgram<Reader<'a>>>>,
    source_locations: bool,
    depth: usize,
}

impl<'f, 'a> Decoder<'f, 'a> {
    /// A decoder that also resolves `DW_AT_decl_file` to file names.
    pub fn new(file: &'f DwarfFile<'a>) -> Self {
        Decoder {
            file,
            table: TypeTable::new(),
            memo: HashMap::new(),
            origins: HashMap::new(),
            units: HashMap::new(),
            lines: HashMap::new(),
            source_locations: true,
            depth: 0,
        }
    }

    /// A decoder that skips source locations (no line program parsing),
    /// for whole-file statistics.
    pub fn without_source_locations(file: &'f DwarfFile<'a>) -> Self {
        Decoder {
            source_locations: false,
            ..Decoder::new(file)
        }
    }

    fn ctx(&mut self, unit: usize) -> Result<Rc<UnitCtx<'a>>> {
        if let Some(ctx) = self.units.get(&unit) {
            return Ok(ctx.clone());
        }
        let ctx = Rc::new(self.file.unit(unit)?);
        self.units.insert(unit, ctx.clone());
        Ok(ctx)
    }

    /// Decodes the type DIE at `offset` of unit `unit` (shallowly).
    pub fn type_at(&mut self, unit: usize, offset: UnitOffset<usize>) -> Result<TypeId> {
        let ctx = self.ctx(unit)?;
        let abs = ctx.absolute(offset);
        if let Some(&id) = self.memo.get(&abs) {
            return Ok(id);
        }
        if self.depth > MAX_TYPE_DEPTH * 4 {
            return Err(Error::dwarf(
                abs,
                "type references nest too deeply (a cycle?)",
            ));
        }
        let id = self.table.push(Type::Void);
        self.memo.insert(abs, id);
        self.depth += 1;
        let decoded = self.decode(&ctx, offset, id);
        self.depth -= 1;
        let ty = decoded?;
        self.table.set(id, ty);
        Ok(id)
    }

    fn decode(&mut self, ctx: &UnitCtx<'a>, offset: UnitOffset<usize>, id: TypeId) -> Result<Type> {
        let abs = ctx.absolute(offset);
        let entry = ctx
            .header
            .entry(&ctx.abbrevs, offset)
            .map_err(|e| Error::dwarf(abs, e))?;
        let name = entry
            .attr_value(gimli::DW_AT_name)
            .and_then(|v| self.file.attr_str(ctx, v))
            .map(str::to_owned);
        let byte_size = entry
            .attr(gimli::DW_AT_byte_size)
            .and_then(|a| a.udata_value());
        Ok(match entry.tag() {
            gimli::DW_TAG_base_type => Type::Base {
                name: name.unwrap_or_else(|| "<unnamed>".into()),
                size: byte_size
                    .or_else(|| {
                        let bits = entry.attr(gimli::DW_AT_bit_size)?.udata_value()?;
                        Some(bits.div_ceil(8))
                    })
                    .unwrap_or(0),
            },
            gimli::DW_TAG_pointer_type
            | gimli::DW_TAG_reference_type
            | gimli::DW_TAG_rvalue_reference_type
            | gimli::DW_TAG_ptr_to_member_type => Type::Pointer {
                target: self.type_ref(ctx, &entry)?,
                size: byte_size.unwrap_or(u64::from(ctx.header.address_size())),
            },
            gimli::DW_TAG_const_type => self.qualified(ctx, &entry, Qualifier::Const)?,
            gimli::DW_TAG_volatile_type => self.qualified(ctx, &entry, Qualifier::Volatile)?,
            gimli::DW_TAG_restrict_type => self.qualified(ctx, &entry, Qualifier::Restrict)?,
            gimli::DW_TAG_atomic_type => self.qualified(ctx, &entry, Qualifier::Atomic)?,
            gimli::DW_TAG_typedef => Type::Typedef {
                name: name.unwrap_or_else(|| "<unnamed>".into()),
                target: self.type_ref(ctx, &entry)?,
            },
            gimli::DW_TAG_array_type => Type::Array {
                element: self.type_ref(ctx, &entry)?,
                dims: self.array_dims(ctx, offset)?,
            },
            gimli::DW_TAG_enumeration_type => {
                let size = match byte_size {
                    Some(size) => size,
                    None => {
                        let underlying = self.type_ref(ctx, &entry)?;
                        self.table.size_of(underlying).unwrap_or(4)
                    }
                };
                Type::Enum { name, size }
            }
            gimli::DW_TAG_subroutine_type => self.function(ctx, &entry)?,
            tag @ (gimli::DW_TAG_structure_type
            | gimli::DW_TAG_class_type
            | gimli::DW_TAG_union_type) => {
                let declaration = matches!(
                    entry.attr_value(gimli::DW_AT_declaration),
                    Some(AttributeValue::Flag(true))
                );
                self.origins.insert(id, (ctx.index, offset));
                Type::Composite(Composite {
                    kind: if tag == gimli::DW_TAG_union_type {
                        CompositeKind::Union
                    } else {
                        CompositeKind::Struct
                    },
                    name,
                    size: if declaration { None } else { byte_size },
                    alignment: entry
                        .attr(gimli::DW_AT_alignment)
                        .and_then(|a| a.udata_value()),
                    members: None,
                    decl: self.decl(ctx, &entry),
                })
            }
            _ => Type::Void,
        })
    }

    fn qualified(&mut self, ctx: &UnitCtx<'a>, entry: &Entry<'a>, q: Qualifier) -> Result<Type> {
        Ok(Type::Qualified {
            qualifier: q,
            target: self.type_ref(ctx, entry)?,
        })
    }

    /// Resolves `DW_AT_type` of `entry` (absent means `void`).
    fn type_ref(&mut self, ctx: &UnitCtx<'a>, entry: &Entry<'a>) -> Result<TypeId> {
        match entry.attr_value(gimli::DW_AT_type) {
            None => Ok(TypeTable::VOID),
            Some(value) => self.resolve_ref(ctx, value, ctx.absolute(entry.offset())),
        }
    }

    fn resolve_ref(
        &mut self,
        ctx: &UnitCtx<'a>,
        value: AttributeValue<Reader<'a>>,
        from: u64,
    ) -> Result<TypeId> {
        match value {
            AttributeValue::UnitRef(o) => {
                let end = ctx.header.length_including_self();
                if o.0 >= end {
                    return Err(Error::dwarf(
                        from,
                        format!("type reference {:#x} outside its unit", o.0),
                    ));
                }
                self.type_at(ctx.index, o)
            }
            AttributeValue::DebugInfoRef(o) => {
                let unit = self.file.unit_containing(o.0).ok_or_else(|| {
                    Error::dwarf(
                        from,
                        format!("type reference {:#x} outside .debug_info", o.0),
                    )
                })?;
                let base = unit_start(&self.file.units[unit]);
                self.type_at(unit, UnitOffset(o.0 - base))
            }
            _ => Ok(TypeTable::VOID),
        }
    }

    fn array_dims(
        &mut self,
        ctx: &UnitCtx<'a>,
        offset: UnitOffset<usize>,
    ) -> Result<Vec<Option<u64>>> {
        let abs = ctx.absolute(offset);
        let err = |e| Error::dwarf(abs, e);
        let mut tree = ctx
            .header
            .entries_tree(&ctx.abbrevs, Some(offset))
            .map_err(err)?;
        let root = tree.root().map_err(err)?;
        let mut children = root.children();
        let mut dims = Vec::new();
        while let Some(child) = children.next().map_err(err)? {
            let e = child.entry();
            if !matches!(
                e.tag(),
                gimli::DW_TAG_subrange_type | gimli::DW_TAG_enumeration_type
            ) {
                continue;
            }
            dims.push(subrange_count(e));
        }
        if dims.is_empty() {
            dims.push(None);
        }
        Ok(dims)
    }

    fn function(&mut self, ctx: &UnitCtx<'a>, entry: &Entry<'a>) -> Result<Type> {
        let ret = self.type_ref(ctx, entry)?;
        let abs = ctx.absolute(entry.offset());
        let err = |e| Error::dwarf(abs, e);
        let mut refs = Vec::new();
        let mut variadic = false;
        {
            let mut tree = ctx
                .header
                .entries_tree(&ctx.abbrevs, Some(entry.offset()))
                .map_err(err)?;
            let root = tree.root().map_err(err)?;
            let mut children = root.children();
            while let Some(child) = children.next().map_err(err)? {
                let e = child.entry();
                match e.tag() {
                    gimli::DW_TAG_formal_parameter => refs.push(e.attr_value(gimli::DW_AT_type)),
                    gimli::DW_TAG_unspecified_parameters => variadic = true,
                    _ => {}
                }
            }
        }
        let mut params = Vec::with_capacity(refs.len());
        for r in refs {
            params.push(match r {
                Some(v) => self.resolve_ref(ctx, v, abs)?,
                None => TypeTable::VOID,
            });
        }
        Ok(Type::Function {
            ret,
            params,
            variadic,
        })
    }

    /// Fills the members of composite `id` (no-op if loaded or not from DWARF).
    pub fn load_members(&mut self, id: TypeId) -> Result<()> {
        match self.table.get(id) {
            Type::Composite(c) if c.members.is_none() && c.size.is_some() => {}
            _ => return Ok(()),
        }
        let Some(&(unit, offset)) = self.origins.get(&id) else {
            return Ok(());
        };
        let ctx = self.ctx(unit)?;
        let abs = ctx.absolute(offset);
        let err = |e| Error::dwarf(abs, e);
        let mut raw = Vec::new();
        {
            let mut tree = ctx
                .header
                .entries_tree(&ctx.abbrevs, Some(offset))
                .map_err(err)?;
            let root = tree.root().map_err(err)?;
            let mut children = root.children();
            while let Some(child) = children.next().map_err(err)? {
                let e = child.entry();
                if !matches!(e.tag(), gimli::DW_TAG_member | gimli::DW_TAG_inheritance) {
                    continue;
                }
                let flag = |at| matches!(e.attr_value(at), Some(AttributeValue::Flag(true)));
                if flag(gimli::DW_AT_external) || flag(gimli::DW_AT_declaration) {
                    continue; // C++ static data member
                }
                raw.push(e.clone());
            }
        }
        let mut members = Vec::with_capacity(raw.len());
        for e in &raw {
            members.push(self.member(&ctx, e)?);
        }
        if let Type::Composite(c) = self.table.get_mut(id) {
            c.members = Some(members);
        }
        Ok(())
    }

    fn member(&mut self, ctx: &UnitCtx<'a>, e: &Entry<'a>) -> Result<Member> {
        let abs = ctx.absolute(e.offset());
        let ty = self.type_ref(ctx, e)?;
        let udata = |at| e.attr(at).and_then(|a| a.udata_value());
        let location = match e.attr_value(gimli::DW_AT_data_member_location) {
            None => 0,
            Some(AttributeValue::Exprloc(expr)) => {
                constant_location(expr, ctx.header.encoding())
                    .ok_or_else(|| Error::dwarf(abs, "member location is not a constant offset"))?
            }
            Some(v) => v
                .udata_value()
                .ok_or_else(|| Error::dwarf(abs, "member location of an unsupported form"))?,
        };
        let bit_size = udata(gimli::DW_AT_bit_size);
        let bit_offset = if let Some(data_bit_offset) = udata(gimli::DW_AT_data_bit_offset) {
            Some(data_bit_offset)
        } else if let (Some(bits), Some(msb_offset)) =
            (bit_size, signed(e, gimli::DW_AT_bit_offset))
        {
            // DWARF 2-4: DW_AT_bit_offset counts from the most significant bit
            // of a storage unit of DW_AT_byte_size bytes at the member location.
            let storage = udata(gimli::DW_AT_byte_size)
                .or_else(|| self.table.size_of(ty))
                .ok_or_else(|| Error::dwarf(abs, "bitfield without a storage size"))?;
            let base = i128::from(location) * 8;
            let bit = if self.file.big_endian {
                base + i128::from(msb_offset)
            } else {
                // clang writes a negative DW_AT_bit_offset when a bitfield
                // spills past its storage unit (i386 `long long x:30`).
                base + i128::from(storage) * 8 - i128::from(msb_offset) - i128::from(bits)
            };
            Some(u64::try_from(bit).map_err(|_| Error::dwarf(abs, "bitfield before its struct"))?)
        } else {
            None
        };
        let bit_offset = match bit_offset {
            Some(b) => b,
            None => location
                .checked_mul(8)
                .ok_or_else(|| Error::dwarf(abs, "member offset overflows"))?,
        };
        Ok(Member {
            name: e
                .attr_value(gimli::DW_AT_name)
                .and_then(|v| self.file.attr_str(ctx, v))
                .map(str::to_owned),
            ty,
            bit_offset,
            bit_size,
            alignment: udata(gimli::DW_AT_alignment),
            decl: self.decl(ctx, e),
        })
    }

    /// Loads `id`'s members and, recursively, those of every composite it
    /// embeds by value (directly or in arrays).
    pub fn load_deep(&mut self, id: TypeId) -> Result<()> {
        let mut seen = HashSet::new();
        let mut stack = vec![id];
        while let Some(id) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            self.load_members(id)?;
            let Some(members) = self.table.composite(id).and_then(|c| c.members.as_ref()) else {
                continue;
            };
            for m in members {
                let mut t = self.table.strip(m.ty);
                if let Type::Array { element, .. } = self.table.get(t) {
                    t = self.table.strip(*element);
                }
                if self.table.composite(t).is_some() {
                    stack.push(t);
                }
            }
        }
        Ok(())
    }

    fn decl(&mut self, ctx: &UnitCtx<'a>, e: &Entry<'a>) -> Option<SourceLoc> {
        if !self.source_locations {
            return None;
        }
        let line = e.attr(gimli::DW_AT_decl_line)?.udata_value()?;
        let file_index = match e.attr_value(gimli::DW_AT_decl_file)? {
            AttributeValue::FileIndex(i) => i,
            v => v.udata_value()?,
        };
        let file = self.file_name(ctx, file_index)?;
        Some(SourceLoc { file, line })
    }

    fn file_name(&mut self, ctx: &UnitCtx<'a>, index: u64) -> Option<String> {
        let dwarf = &self.file.dwarf;
        let program = self.lines.entry(ctx.index).or_insert_with(|| {
            let offset = ctx.stmt_list?;
            dwarf
                .debug_line
                .program(offset, ctx.header.address_size(), ctx.comp_dir, ctx.name)
                .ok()
        });
        let header = program.as_ref()?.header();
        let entry = header.file(index)?;
        let name = self.file.attr_str(ctx, entry.path_name())?;
        let dir = entry
            .directory(header)
            .and_then(|d| self.file.attr_str(ctx, d))
            .unwrap_or("");
        let comp_dir = ctx
            .comp_dir
            .and_then(|c| std::str::from_utf8(c.slice()).ok());
        Some(join_source_path(comp_dir, dir, name))
    }
}

/// A constant attribute read as signed: `DW_FORM_sdata`, or a `data8`
/// holding a two's complement value.
fn signed(e: &Entry<'_>, at: gimli::DwAt) -> Option<i64> {
    match e.attr_value_raw(at)? {
        AttributeValue::Sdata(v) => Some(v),
        AttributeValue::Data8(v) | AttributeValue::Udata(v) => Some(v as i64),
        v => v.udata_value().and_then(|v| i64::try_from(v).ok()),
    }
}

/// Number of elements described by a `DW_TAG_subrange_type`: `None` for a
/// flexible array, `Some(0)` for a zero-length one.
fn subrange_count(e: &Entry<'_>) -> Option<u64> {
    if let Some(count) = e.attr(gimli::DW_AT_count).and_then(|a| a.udata_value()) {
        return Some(count);
    }
    let lower = e
        .attr(gimli::DW_AT_lower_bound)
        .and_then(|a| a.udata_value())
        .unwrap_or(0);
    let upper = match e.attr_value(gimli::DW_AT_upper_bound)? {
        // Older GCC spells `x[0]` as an upper bound of -1.
        AttributeValue::Sdata(-1) => return Some(0),
        AttributeValue::Data4(u32::MAX) | AttributeValue::Data8(u64::MAX) => return Some(0),
        AttributeValue::Sdata(v) if v < 0 => return Some(0),
        v => v.udata_value()?,
    };
    if upper < lower {
        return Some(0);
    }
    (upper - lower).checked_add(1)
}

/// Evaluates the DWARF 2 form of a member location: `DW_OP_plus_uconst N`
/// (or a plain constant).
fn constant_location(
    expr: gimli::Expression<Reader<'_>>,
    encoding: gimli::Encoding,
) -> Option<u64> {
    let mut ops = expr.operations(encoding);
    let value = match ops.next().ok()?? {
        gimli::Operation::PlusConstant { value } => value,
        gimli::Operation::UnsignedConstant { value } => value,
        _ => return None,
    };
    ops.next().ok()?.is_none().then_some(value)
}

/// Joins a line-table directory and file name into the path a kernel
/// developer recognises: relative to the build directory when possible.
pub fn join_source_path(comp_dir: Option<&str>, dir: &str, name: &str) -> String {
    let full = if name.starts_with('/') || dir.is_empty() {
        name.to_owned()
    } else {
        format!("{}/{}", dir.trim_end_matches('/'), name)
    };
    let relative = comp_dir
        .filter(|c| !c.is_empty())
        .and_then(|c| full.strip_prefix(c.trim_end_matches('/')))
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or(&full);
    let mut path = relative;
    while let Some(rest) = path.strip_prefix("./") {
        path = rest;
    }
    path.to_owned()
}

#[cfg(test)]
mod tests {
    use super::join_source_path;

    #[test]
    fn source_paths_are_made_relative_to_the_build_directory() {
        assert_eq!(
            join_source_path(
                Some("/build/linux"),
                "/build/linux/include/linux",
                "mmzone.h"
            ),
            "include/linux/mmzone.h"
        );
        assert_eq!(
            join_source_path(Some("/b"), "./include/linux", "mmzone.h"),
            "include/linux/mmzone.h"
        );
        assert_eq!(
            join_source_path(None, "", "/usr/include/stdio.h"),
            "/usr/include/stdio.h"
        );
        assert_eq!(join_source_path(Some("/b"), "/b", "lru.c"), "lru.c");
    }
}
