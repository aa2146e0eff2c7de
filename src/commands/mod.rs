//! The commands, as library functions returning their report (plain data,
//! [`crate::report`]), so the binary stays a thin argument parser and
//! tests can call them directly; [`crate::render::output`] writes a report
//! in the format asked for.
//!
//! To add a command: a module here with its options and a function that
//! opens its builds with [`crate::load::open`] and returns a report; a
//! report type in [`crate::report`] and its [`crate::render::Render`] in
//! [`crate::render`]; a variant of `Command` in `main.rs`.

mod analyze;
mod asserts;
mod builds;
mod check;
mod diagram;
mod diff;
mod footprint;
mod offsets;
mod suggest;
mod suggest_many;
mod suggest_packing;

pub use crate::load::{Build, IndexCache, Reading, Source, SourceRoot};
pub use asserts::{AssertsOptions, asserts};
pub use check::{CheckOptions, check};
pub use diagram::{DEFAULT_WIDTH, DiagramOptions, MIN_WIDTH, Selection, diagram};
pub use diff::{DiffOptions, diff};
pub use footprint::footprint_report;
pub use offsets::offsets;
pub use suggest::{SuggestOptions, suggest};
pub use suggest_many::suggest_types;

use std::path::Path;

use crate::error::Result;
use crate::layout::{self, Depth};
use crate::lines::Lines;
use crate::load;
use crate::lookup::TypeSpec;
use crate::path::{self, MemberPath};
use crate::report::layout::{LayoutReport, OffsetRow, OffsetofReport, SizesReport};

/// `cachelint layout FILE TYPE...`
pub fn layout(
    file: &Path,
    types: &[String],
    expand: bool,
    macros: bool,
    cacheline: Option<u64>,
    reading: &Reading,
) -> Result<LayoutReport> {
    let specs = types
        .iter()
        .map(|t| TypeSpec::parse(t))
        .collect::<Result<Vec<_>>>()?;
    load::open(&Build::file(file), reading, |build| {
        let found = build.find(&specs)?;
        let line = cacheline.unwrap_or(build.cacheline);
        let depth = if expand { Depth::Expand } else { Depth::Direct };
        let layouts = found
            .into_iter()
            .map(|f| Ok((layout::layout(build.table(), f.id, line, depth)?, f.note)))
            .collect::<Result<_>>()?;
        Ok(LayoutReport {
            table: build.take_table(),
            layouts,
            expand,
            macros,
            planned_by: build.planned_by(),
            notes: build.notes(),
        })
    })
}

/// `cachelint offsetof FILE PATH...`
pub fn offsetof(
    file: &Path,
    paths: &[String],
    cacheline: Option<u64>,
    reading: &Reading,
) -> Result<OffsetofReport> {
    let parsed = paths
        .iter()
        .map(|p| MemberPath::parse(p))
        .collect::<Result<Vec<_>>>()?;
    let specs = parsed
        .iter()
        .map(|p| TypeSpec::parse(&p.root))
        .collect::<Result<Vec<_>>>()?;
    load::open(&Build::file(file), reading, |build| {
        let found = build.find(&specs)?;
        let line = cacheline.unwrap_or(build.cacheline);
        let table = build.table();
        let mut rows = Vec::new();
        for ((text, p), f) in paths.iter().zip(&parsed).zip(found) {
            let r = path::resolve(table, f.id, &p.steps, text)?;
            rows.push(OffsetRow {
                path: text.clone(),
                offset: r.offset,
                size: r.size,
                lines: match r.bits {
                    // The bytes its bits touch, not its storage unit's.
                    Some((b, w)) => {
                        Lines::of_range(b / 8, b.saturating_add(w.max(1)).div_ceil(8), line)
                    }
                    None => Lines::of(r.offset, r.size, line),
                },
                bit_offset: r.bits.map(|(b, _)| b),
                bit_size: r.bits.map(|(_, w)| w),
                flexible_array: r.ty.is_none() && r.size == 0,
                ty: r.ty.map(|t| crate::render::cdecl::type_name(table, t)),
                decl_file: r.decl.as_ref().map(|d| d.file.clone()),
                decl_line: r.decl.as_ref().map(|d| d.line),
                note: f.note,
                planned_by: build.planned_by(),
            });
        }
        Ok(OffsetofReport {
            rows,
            notes: build.notes(),
        })
    })
}

/// `cachelint sizes FILE`: `NAME<TAB>SIZE<TAB>HOLES`, as `pahole --sizes`.
pub fn sizes(file: &Path, source: &Source) -> Result<SizesReport> {
    let reading = Reading::from(source.clone());
    let lines = load::open(&Build::file(file), &reading, |build| build.sizes())?;
    Ok(SizesReport { lines })
}
