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
    source_root: SourceRoot,
    /// The directory paths are printed relative to, once resolved from
    /// `source_root` (`None`: as recorded).
    root_dir: Option<Option<String>>,
    depth: usize,
}

/// Where the source files a build records are printed from. Builds of one
/// tree record it under different prefixes (Debian's rt kernel under
/// `debian/build/source_rt/`, its other flavours at the top), so by
/// default the kernel source root is found in the build and the paths are
/// made relative to it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SourceRoot {
    /// The kernel source root found in the build's units
    /// (`kernel_source_root`); paths as recorded when none is found.
    #[default]
    Detect,
    /// Paths as recorded (only `.`, `..` and the build directory resolved).
    Keep,
    /// Paths under this directory (as the build records it) relative to it.
    Dir(String),
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
            source_root: SourceRoot::Detect,
            root_dir: None,
            depth: 0,
        }
    }

    /// A decoder that prints source files relative to `root`.
    pub fn with_source_root(file: &'f DwarfFile<'a>, root: SourceRoot) -> Self {
        Decoder {
            source_root: root,
            ..Decoder::new(file)
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
        let root = self.root_dir();
        Some(join_source_path(comp_dir, dir, name, root))
    }

    /// The directory source files are printed relative to, resolved on
    /// first use.
    fn root_dir(&mut self) -> Option<&str> {
        if self.root_dir.is_none() {
            self.root_dir = Some(match &self.source_root {
                SourceRoot::Keep => None,
                SourceRoot::Dir(dir) => Some(normalise(dir)),
                SourceRoot::Detect => self.detect_root(),
            });
        }
        self.root_dir.as_ref().and_then(|r| r.as_deref())
    }

    /// [`kernel_source_root`] of the names and line-table directories of
    /// up to [`ROOT_SAMPLE`] units spread over the file.
    fn detect_root(&mut self) -> Option<String> {
        let count = self.file.units.len();
        let sample = count.min(ROOT_SAMPLE);
        let mut paths = Vec::new();
        for i in 0..sample {
            let Ok(ctx) = self.file.unit(i * count / sample) else {
                continue;
            };
            let text = |r: Option<Reader<'a>>| r.and_then(|r| std::str::from_utf8(r.slice()).ok());
            let comp_dir = text(ctx.comp_dir);
            if let Some(name) = text(ctx.name) {
                paths.push(join_source_path(comp_dir, "", name, None));
            }
            let Some(program) = ctx.stmt_list.and_then(|offset| {
                let line = &self.file.dwarf.debug_line;
                line.program(offset, ctx.header.address_size(), ctx.comp_dir, ctx.name)
                    .ok()
            }) else {
                continue;
            };
            for dir in program.header().include_directories() {
                if let Some(dir) = self.file.attr_str(&ctx, *dir) {
                    // A directory: its last component counts too.
                    paths.push(format!("{}/", join_source_path(comp_dir, "", dir, None)));
                }
            }
        }
        kernel_source_root(paths.iter().map(String::as_str))
    }
}

/// How many units [`Decoder`] reads to find the kernel source root: every
/// unit of a kernel records the same one, and a sample keeps the cost
/// of opening a vmlinux's thousands of units away.
const ROOT_SAMPLE: usize = 64;

/// The kernel's top-level source directories that hold code built into a
/// kernel or module.
const KERNEL_TOP_DIRS: &[&str] = &[
    "arch", "block", "certs", "crypto", "drivers", "fs", "include", "init", "io_uring", "ipc",
    "kernel", "lib", "mm", "net", "rust", "samples", "security", "sound", "usr", "virt",
];

/// The kernel source root of a build, from the paths it records (unit
/// names, line-table directories, made relative to the build directory):
/// of the directories under which at least three different top-level
/// directories of a kernel tree sit ([`KERNEL_TOP_DIRS`]: `include`,
/// `arch` and a unit's own), not counting those inside another one's
/// top-level directories (a tree's `arch/x86`, which has its own `kernel`,
/// `mm` and `include`), the one with the most. Neither `/usr` (of
/// `/usr/include`) nor the generated sources of a build directory beside
/// the tree (Debian's rt kernel) have that many. `None` when that is no
/// kernel tree or the paths are already relative to its root.
pub(crate) fn kernel_source_root<'p>(paths: impl IntoIterator<Item = &'p str>) -> Option<String> {
    let mut under: HashMap<&'p str, HashSet<&'p str>> = HashMap::new();
    for path in paths {
        let mut start = 0;
        for component in path.split('/') {
            let end = start + component.len();
            if end < path.len() && KERNEL_TOP_DIRS.contains(&component) {
                under.entry(&path[..start]).or_default().insert(component);
            }
            start = end + 1;
        }
    }
    under.retain(|_, dirs| dirs.len() >= 3);
    let inside_another = |prefix: &str| {
        under.iter().any(|(outer, dirs)| {
            prefix
                .strip_prefix(outer)
                .and_then(|rest| rest.split_once('/'))
                .is_some_and(|(top, _)| dirs.contains(top))
        })
    };
    let (prefix, _) = under
        .iter()
        .filter(|(prefix, _)| !inside_another(prefix))
        .max_by_key(|(prefix, dirs)| (dirs.len(), prefix.len()))?;
    match *prefix {
        "" => None,
        "/" => Some("/".to_owned()),
        p => Some(p.trim_end_matches('/').to_owned()),
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
/// developer recognises: `.` and `..` resolved, relative to the build
/// directory `comp_dir` when under it, then relative to the source `root`
/// when under that (a directory as the build records it, or `/`).
pub(crate) fn join_source_path(
    comp_dir: Option<&str>,
    dir: &str,
    name: &str,
    root: Option<&str>,
) -> String {
    let full = if name.starts_with('/') || dir.is_empty() {
        normalise(name)
    } else {
        normalise(&format!("{dir}/{name}"))
    };
    let comp_dir = comp_dir.map(normalise);
    let path = comp_dir
        .as_deref()
        .and_then(|c| relative_to(&full, c))
        .unwrap_or(&full);
    root.and_then(|r| relative_to(path, r))
        .unwrap_or(path)
        .to_owned()
}

/// `path` relative to directory `dir`, when it is under it.
fn relative_to<'p>(path: &'p str, dir: &str) -> Option<&'p str> {
    if dir.is_empty() {
        return None;
    }
    let rest = path.strip_prefix(dir)?;
    let rest = if dir.ends_with('/') {
        rest
    } else {
        rest.strip_prefix('/')?
    };
    (!rest.is_empty()).then_some(rest)
}

/// `path` with its `.` components and empty ones dropped and each `..`
/// taking the component before it away (lexically: a kernel tree's
/// `io_uring/../fs/internal.h` is `fs/internal.h`); a `..` with nothing
/// before it stays.
fn normalise(path: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    for component in path.split('/') {
        match component {
            "" | "." => {}
            ".." if kept.last().is_some_and(|&c| c != "..") => {
                kept.pop();
            }
            c => kept.push(c),
        }
    }
    let joined = kept.join("/");
    if path.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::{join_source_path, kernel_source_root};

    #[test]
    fn source_paths_are_made_relative_to_the_build_directory() {
        assert_eq!(
            join_source_path(
                Some("/build/linux"),
                "/build/linux/include/linux",
                "mmzone.h",
                None
            ),
            "include/linux/mmzone.h"
        );
        assert_eq!(
            join_source_path(Some("/b"), "./include/linux", "mmzone.h", None),
            "include/linux/mmzone.h"
        );
        assert_eq!(
            join_source_path(None, "", "/usr/include/stdio.h", None),
            "/usr/include/stdio.h"
        );
        assert_eq!(join_source_path(Some("/b"), "/b", "lru.c", None), "lru.c");
        assert_eq!(
            join_source_path(Some("/b/"), "/b/./x/", "lru.c", None),
            "x/lru.c"
        );
    }

    #[test]
    fn dot_dot_is_resolved_lexically() {
        assert_eq!(
            join_source_path(None, "io_uring/../fs", "internal.h", None),
            "fs/internal.h"
        );
        assert_eq!(
            join_source_path(
                None,
                "arch/x86/kernel/../include/asm/trace/.",
                "irq.h",
                None
            ),
            "arch/x86/include/asm/trace/irq.h"
        );
        assert_eq!(join_source_path(None, "../x", "a.h", None), "../x/a.h");
        assert_eq!(join_source_path(None, "a/../..", "b.h", None), "../b.h");
        assert_eq!(join_source_path(None, "/..", "b.h", None), "/../b.h");
    }

    /// What Debian's 6.12 kernels record (`llvm-dwarfdump --debug-info`
    /// and `--debug-line` of the cloud and rt vmlinux): the rt flavour
    /// under `debian/build/source_rt/`, both with the build directory as
    /// `DW_AT_comp_dir` and its generated headers relative to it.
    #[test]
    fn the_kernel_source_root_is_found_and_taken_off() {
        let rt = [
            "debian/build/source_rt/init/main.c",
            "debian/build/source_rt/init/",
            "debian/build/source_rt/include/linux/",
            "debian/build/source_rt/arch/x86/include/asm/",
            "debian/build/source_rt/mm/vmscan.c",
            "debian/build/source_rt/kernel/sched/core.c",
            "debian/build/source_rt/net/core/",
            "debian/build/source_rt/arch/x86/kernel/cpu/common.c",
            "debian/build/source_rt/arch/x86/mm/init.c",
            "debian/build/source_rt/arch/x86/lib/",
            "arch/x86/include/generated/asm/",
            // Generated sources in the build directory.
            "crypto/",
            "lib/",
            "security/apparmor/",
            "arch/x86/entry/vdso/",
        ];
        let root = kernel_source_root(rt);
        assert_eq!(root.as_deref(), Some("debian/build/source_rt"));
        let cloud = [
            "init/main.c",
            "include/linux/",
            "arch/x86/include/asm/",
            "mm/vmscan.c",
        ];
        assert_eq!(kernel_source_root(cloud), None);
        let rt_path = join_source_path(
            Some("debian/build/build_amd64_rt_amd64"),
            "debian/build/source_rt/include/linux",
            "mmzone.h",
            root.as_deref(),
        );
        let cloud_path = join_source_path(
            Some("debian/build/build_amd64_none_cloud-amd64"),
            "include/linux",
            "mmzone.h",
            None,
        );
        assert_eq!(rt_path, "include/linux/mmzone.h");
        assert_eq!(rt_path, cloud_path);
        // A generated header of the build directory is left as it is.
        let generated = join_source_path(
            Some("debian/build/build_amd64_rt_amd64"),
            "./arch/x86/include/generated/asm",
            "rwonce.h",
            root.as_deref(),
        );
        assert_eq!(generated, "arch/x86/include/generated/asm/rwonce.h");
        // Not under the root: as recorded.
        assert_eq!(
            join_source_path(None, "debian/build/source", "x.h", root.as_deref()),
            "debian/build/source/x.h"
        );
    }

    #[test]
    fn an_absolute_tree_wins_over_its_parents_and_its_arch() {
        let paths = [
            "/usr/src/linux/kernel/fork.c",
            "/usr/src/linux/include/linux/",
            "/usr/src/linux/arch/x86/include/asm/",
            "/usr/src/linux/arch/x86/kernel/",
            "/usr/src/linux/arch/x86/mm/",
            "/usr/src/linux/arch/x86/lib/",
            "/usr/include/",
        ];
        assert_eq!(kernel_source_root(paths).as_deref(), Some("/usr/src/linux"));
        assert_eq!(
            join_source_path(
                None,
                "/usr/src/linux/include/linux",
                "mm.h",
                Some("/usr/src/linux")
            ),
            "include/linux/mm.h"
        );
        assert_eq!(
            join_source_path(None, "/usr/src/linux2", "mm.h", Some("/usr/src/linux")),
            "/usr/src/linux2/mm.h"
        );
    }

    #[test]
    fn a_program_that_is_no_kernel_has_no_source_root() {
        let fixture = ["src/fixture.c", "src/", "generated/", "/usr/include/"];
        assert_eq!(kernel_source_root(fixture), None);
        // Two top-level names are not enough.
        assert_eq!(kernel_source_root(["x/lib/a.c", "x/include/"]), None);
    }
}
