//! The commands, as library functions returning their output, so the
//! binary stays a thin argument parser and tests can call them directly.

mod analyze;
mod check;
mod diagram;
mod diff;
mod offsets;

pub use check::{Build, CheckFormat, CheckOptions, check};
pub use diagram::{DiagramFormat, DiagramOptions, DiagramStyle, MIN_WIDTH, Selection, diagram};
pub use diff::{DiffFormat, DiffOptions, diff};
pub use offsets::{OffsetsFormat, offsets};

use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::dwarf::DwarfFile;
use crate::dwarf::decode::Decoder;
use crate::error::{Error, Result};
use crate::input::{DebugSections, MappedFile};
use crate::layout::{self, Depth};
use crate::lookup::{self, TypeSpec};
use crate::path::{self, MemberPath};
use crate::render;

/// Output format of `layout` and `offsetof`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Human text.
    Text,
    /// JSON.
    Json,
}

/// What a command produced: its standard output and notes for standard error.
#[derive(Debug, Default)]
pub struct Output {
    /// Printed on standard output.
    pub stdout: String,
    /// Printed on standard error as `note: ...`.
    pub notes: Vec<String>,
    /// True when the command's verdict is "fail" (exit code 1): findings
    /// at or above `--fail-on`.
    pub failed: bool,
}

/// Opens `path` and runs `f` on its DWARF. Errors that name no file get
/// this one.
pub(crate) fn with_dwarf<T>(
    path: &Path,
    f: impl FnOnce(&DwarfFile<'_>, &DebugSections<'_>) -> Result<T>,
) -> Result<T> {
    let mapped = MappedFile::open(path)?;
    let sections = DebugSections::load(mapped.path(), mapped.bytes())?;
    let dwarf = DwarfFile::new(&sections)?;
    f(&dwarf, &sections).map_err(|e| match e {
        Error::UnknownType { name, hint, .. } => Error::UnknownType {
            name,
            path: path.to_owned(),
            hint,
        },
        Error::Dwarf { offset, reason } => Error::Dwarf {
            offset,
            reason: format!("{reason} (in {})", path.display()),
        },
        other => other,
    })
}

/// `cachelint layout FILE TYPE...`
pub fn layout(
    file: &Path,
    types: &[String],
    expand: bool,
    format: Format,
    cacheline: Option<u64>,
    source: &Source,
) -> Result<Output> {
    let specs = types
        .iter()
        .map(|t| TypeSpec::parse(t))
        .collect::<Result<Vec<_>>>()?;
    with_types(file, source, &specs, |table, found, machine_line, notes| {
        let line = cacheline.unwrap_or(machine_line);
        let depth = if expand { Depth::Expand } else { Depth::Direct };
        let mut out = Output {
            notes,
            ..Output::default()
        };
        let mut json = Vec::new();
        for (i, f) in found.into_iter().enumerate() {
            let l = layout::layout(table, f.id, line, depth)?;
            match format {
                Format::Text => {
                    if i > 0 {
                        out.stdout.push('\n');
                    }
                    out.stdout
                        .push_str(&render::text::layout(table, &l, expand));
                    out.notes.extend(f.note);
                }
                Format::Json => json.push(render::json::layout(table, &l, f.note)),
            }
        }
        if format == Format::Json {
            out.stdout = to_json(&json);
        }
        Ok(out)
    })
}

#[derive(Serialize)]
struct OffsetJson {
    path: String,
    offset: u64,
    size: u64,
    cacheline: u64,
    last_cacheline: u64,
    bit_offset: Option<u64>,
    bit_size: Option<u64>,
    #[serde(rename = "type")]
    ty: Option<String>,
    decl_file: Option<String>,
    decl_line: Option<u64>,
    note: Option<String>,
}

/// `cachelint offsetof FILE PATH...`
pub fn offsetof(
    file: &Path,
    paths: &[String],
    format: Format,
    cacheline: Option<u64>,
    source: &Source,
) -> Result<Output> {
    let parsed = paths
        .iter()
        .map(|p| MemberPath::parse(p))
        .collect::<Result<Vec<_>>>()?;
    let specs = parsed
        .iter()
        .map(|p| TypeSpec::parse(&p.root))
        .collect::<Result<Vec<_>>>()?;
    with_types(file, source, &specs, |table, found, machine_line, notes| {
        let line = cacheline.unwrap_or(machine_line);
        let mut rows = Vec::new();
        let mut out = Output {
            notes,
            ..Output::default()
        };
        for ((text, p), f) in paths.iter().zip(&parsed).zip(found) {
            let r = path::resolve(table, f.id, &p.steps, text)?;
            let last = (r.offset + r.size).saturating_sub(1).max(r.offset) / line;
            rows.push(OffsetJson {
                path: text.clone(),
                offset: r.offset,
                size: r.size,
                cacheline: r.offset / line,
                last_cacheline: last,
                bit_offset: r.bits.map(|(b, _)| b),
                bit_size: r.bits.map(|(_, w)| w),
                ty: r.ty.map(|t| render::cdecl::type_name(table, t)),
                decl_file: r.decl.as_ref().map(|d| d.file.clone()),
                decl_line: r.decl.as_ref().map(|d| d.line),
                note: f.note.clone(),
            });
            out.notes.extend(f.note);
        }
        match format {
            Format::Json => out.stdout = to_json(&rows),
            Format::Text => {
                for r in &rows {
                    let lines = if r.last_cacheline == r.cacheline {
                        format!("cacheline {}", r.cacheline)
                    } else {
                        format!("cachelines {}-{}", r.cacheline, r.last_cacheline)
                    };
                    let bits = match (r.bit_offset, r.bit_size) {
                        (Some(b), Some(w)) => format!(" bits {b}+{w}"),
                        _ => String::new(),
                    };
                    let _ = writeln!(
                        out.stdout,
                        "{}: offset {} size {}{bits} {lines} (bytes {}-{})",
                        r.path,
                        r.offset,
                        r.size,
                        r.offset,
                        (r.offset + r.size).saturating_sub(1).max(r.offset)
                    );
                }
            }
        }
        Ok(out)
    })
}

/// `cachelint sizes FILE`: `NAME<TAB>SIZE<TAB>HOLES`, as `pahole --sizes`.
pub fn sizes(file: &Path, source: &Source) -> Result<Output> {
    let lines = match resolve_source(file, source)? {
        Resolved::Dwarf => with_dwarf(file, |dwarf, _| crate::sizes::struct_sizes(dwarf))?,
        Resolved::Btf(btf) => crate::sizes::btf_sizes(&btf.types),
    };
    let mut out = Output::default();
    for line in lines {
        let _ = writeln!(out.stdout, "{}\t{}\t{}", line.name, line.size, line.holes);
    }
    Ok(out)
}

/// Where types come from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Source {
    /// DWARF when the file has it, else BTF.
    #[default]
    Auto,
    /// DWARF only.
    Dwarf,
    /// BTF only: a `.BTF` section or a raw BTF file; `base` is the vmlinux
    /// BTF that split BTF (a module's) builds on.
    Btf {
        /// Base BTF for split BTF.
        base: Option<PathBuf>,
    },
}

/// BTF loaded for a command.
pub(crate) struct BtfInput {
    /// The types.
    pub types: crate::btf::BtfTypes,
    /// Cacheline size of the file's machine (64 for raw BTF).
    pub cacheline: u64,
}

/// The source chosen for a file.
pub(crate) enum Resolved {
    /// Read DWARF.
    Dwarf,
    /// BTF, already loaded.
    Btf(BtfInput),
}

/// The note every BTF-based output carries.
pub const BTF_NOTE: &str = "types from BTF: no source files or lines, alignment inferred from the members (BTF records no alignment attributes)";

pub(crate) fn resolve_source(file: &Path, source: &Source) -> Result<Resolved> {
    let base = match source {
        Source::Dwarf => return Ok(Resolved::Dwarf),
        Source::Btf { base } => base.as_deref(),
        Source::Auto => {
            let mapped = MappedFile::open(file)?;
            let no_dwarf = match DebugSections::load(mapped.path(), mapped.bytes()) {
                Ok(_) => return Ok(Resolved::Dwarf),
                Err(e @ (Error::NoDebugInfo { .. } | Error::NotElf { .. })) => e,
                Err(e) => return Err(e),
            };
            // Neither DWARF nor BTF: the DWARF error says what to do.
            if crate::input::btf_of(mapped.path(), mapped.bytes()).is_err() {
                return Err(no_dwarf);
            }
            None
        }
    };
    let mut blobs = Vec::new();
    let mut pointer = 8;
    let mut line = 64;
    for path in base.into_iter().chain(std::iter::once(file)) {
        let mapped = MappedFile::open(path)?;
        let (bytes, ptr, cacheline) = crate::input::btf_of(mapped.path(), mapped.bytes())?;
        (pointer, line) = (ptr, cacheline);
        blobs.push(bytes.into_owned());
    }
    let refs: Vec<&[u8]> = blobs.iter().map(Vec::as_slice).collect();
    let types = crate::btf::parse(&refs, pointer, line).map_err(|reason| Error::Section {
        path: file.to_owned(),
        section: ".BTF".into(),
        reason,
    })?;
    Ok(Resolved::Btf(BtfInput {
        types,
        cacheline: line,
    }))
}

/// Resolves `specs` from DWARF or BTF and runs `f` on the model, the types
/// found, the machine's cacheline size and notes about the source.
fn with_types<T>(
    file: &Path,
    source: &Source,
    specs: &[TypeSpec],
    f: impl FnOnce(&crate::model::TypeTable, Vec<lookup::Found>, u64, Vec<String>) -> Result<T>,
) -> Result<T> {
    match resolve_source(file, source)? {
        Resolved::Dwarf => with_dwarf(file, |dwarf, sections| {
            let mut decoder = Decoder::new(dwarf);
            let found = lookup::find_types(dwarf, &mut decoder, specs)?;
            f(&decoder.table, found, sections.cacheline, Vec::new())
        }),
        Resolved::Btf(btf) => {
            let found = lookup::find_in_btf(&btf.types, specs).map_err(|e| match e {
                Error::UnknownType { name, hint, .. } => Error::UnknownType {
                    name,
                    path: file.to_owned(),
                    hint,
                },
                other => other,
            })?;
            let mut notes = vec![BTF_NOTE.to_owned()];
            notes.extend(btf.types.notes.iter().cloned());
            f(&btf.types.table, found, btf.cacheline, notes)
        }
    }
}

pub(crate) fn to_json<T: Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("JSON of plain data");
    s.push('\n');
    s
}
