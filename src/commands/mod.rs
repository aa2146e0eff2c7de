//! The commands, as library functions returning their output, so the
//! binary stays a thin argument parser and tests can call them directly.

mod analyze;
mod check;
mod diagram;
mod diff;
mod offsets;

pub use crate::load::{Build, Source};
pub use check::{CheckFormat, CheckOptions, check};
pub use diagram::{DiagramFormat, DiagramOptions, DiagramStyle, MIN_WIDTH, Selection, diagram};
pub use diff::{DiffFormat, DiffOptions, diff};
pub use offsets::{OffsetsFormat, offsets};

use std::fmt::Write;
use std::path::Path;

use serde::Serialize;

use crate::error::Result;
use crate::layout::{self, Depth};
use crate::load;
use crate::lookup::TypeSpec;
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
    load::open(&Build::file(file), source, |build| {
        let found = build.find(&specs)?;
        let line = cacheline.unwrap_or(build.cacheline);
        let table = build.table();
        let notes = build.notes.clone();
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
    load::open(&Build::file(file), source, |build| {
        let found = build.find(&specs)?;
        let line = cacheline.unwrap_or(build.cacheline);
        let table = build.table();
        let notes = build.notes.clone();
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
    let lines = load::open(&Build::file(file), source, |build| build.sizes())?;
    let mut out = Output::default();
    for line in lines {
        let _ = writeln!(out.stdout, "{}\t{}\t{}", line.name, line.size, line.holes);
    }
    Ok(out)
}

pub(crate) fn to_json<T: Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("JSON of plain data");
    s.push('\n');
    s
}
