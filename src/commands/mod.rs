//! The commands, as library functions over a [`Run`] returning their
//! report (plain data, [`crate::report`]), so the binary stays a thin
//! argument parser and tests can call them directly;
//! [`crate::render::output`] writes a report in the format asked for.
//!
//! Every command is a leaf: `fn x(&Run, &XOptions) -> Result<XReport>`,
//! with `XOptions::want` saying what the run must read of each build. No
//! command calls another or names another's module; what two commands
//! share is an operation of [`crate::run`].
//!
//! To add a command: a module here with its options, their `want`, and a
//! function that reads the run and returns a report; a report type in
//! [`crate::report`] and its [`crate::render::Render`] in
//! [`crate::render`]; in the binary, a file `src/cli/NAME.rs` with its
//! clap arguments and an `exec` that builds the options and calls it, and
//! a variant of `Command` in `main.rs` that dispatches to that `exec`.

mod asserts;
mod audit;
mod check;
mod diagram;
mod diff;
mod draft;
mod footprint;
mod offsets;
mod review;
mod suggest;

pub use crate::diff::ListDepth;
pub use crate::lines::is_cacheline_size;
pub use crate::load::{Build, IndexCache, Reading, Source, SourceRoot};
pub use crate::plan::Plan;
pub use crate::rules::{Class, Kind, Rules, Severity};
pub use crate::run::{DEFAULT_WIDTH, MIN_WIDTH, Selection};
pub use asserts::{AssertsOptions, asserts};
pub use audit::{AuditOptions, audit};
pub use check::{CheckOptions, check};
pub use diagram::{DiagramOptions, diagram};
pub use diff::{DiffOptions, diff};
pub use draft::{DraftOptions, draft};
pub use footprint::{FootprintOptions, footprint_report};
pub use offsets::{OffsetsOptions, offsets};
pub use review::{review, review_want};
pub use suggest::{SuggestOptions, suggest};

use crate::error::Result;
use crate::layout::{self, Depth};
use crate::lines::Lines;
use crate::load::lookup::TypeSpec;
use crate::path::{self, MemberPath};
use crate::report::layout::{LayoutReport, OffsetRow, OffsetofReport, SizesReport};
use crate::run::{Run, Want};

/// Everything `layout` needs besides the run (its one build).
#[derive(Clone, Debug, Default)]
pub struct LayoutOptions {
    /// The types: `NAME`, `NAME#N`, `NAME@FILE`.
    pub types: Vec<String>,
    /// `--expand`: every nested member with its dotted path.
    pub expand: bool,
    /// `--macros`: kernel group markers as the kernel's macros.
    pub macros: bool,
}

impl LayoutOptions {
    /// What `layout` reads: the types, each of which must exist.
    pub fn want(&self, _rules: &Rules) -> Result<Want> {
        specs_want(&self.types)
    }
}

/// A [`Want`] of types that must exist.
fn specs_want<'a>(types: impl IntoIterator<Item = &'a String>) -> Result<Want> {
    Ok(Want {
        specs: types
            .into_iter()
            .map(|t| TypeSpec::parse(t))
            .collect::<Result<_>>()?,
        ..Want::default()
    })
}

/// `cachelint layout FILE TYPE...`
pub fn layout(run: &Run, opts: &LayoutOptions) -> Result<LayoutReport> {
    let opened = run.single("layout")?;
    let view = run.view(opened)?;
    let line = run.build_line(opened);
    let depth = if opts.expand {
        Depth::Expand
    } else {
        Depth::Direct
    };
    let layouts = opened
        .found
        .iter()
        .map(|f| {
            Ok((
                layout::layout(view.table(), f.id, line, depth)?,
                f.note.clone(),
            ))
        })
        .collect::<Result<_>>()?;
    let mut notes = view.notes();
    notes.extend(run.perf_notes());
    let mut shares = Vec::new();
    for f in &opened.found {
        if let Some((placed, misfits)) = run.samples_on(&view, f.id, line) {
            notes.extend(misfits);
            shares.push(crate::analysis::samples::shares(&placed));
        }
    }
    let planned_by = view.planned_by.clone();
    Ok(LayoutReport {
        shares,
        table: view.into_table(),
        layouts,
        expand: opts.expand,
        macros: opts.macros,
        planned_by,
        notes,
    })
}

/// Everything `offsetof` needs besides the run (its one build).
#[derive(Clone, Debug, Default)]
pub struct OffsetofOptions {
    /// The member paths: `TYPE.member.member[index]...`.
    pub paths: Vec<String>,
}

impl OffsetofOptions {
    /// The paths, parsed.
    fn parsed(&self) -> Result<Vec<MemberPath>> {
        self.paths.iter().map(|p| MemberPath::parse(p)).collect()
    }

    /// What `offsetof` reads: the paths' root types, which must exist.
    pub fn want(&self, _rules: &Rules) -> Result<Want> {
        let roots: Vec<String> = self.parsed()?.into_iter().map(|p| p.root).collect();
        specs_want(&roots)
    }
}

/// `cachelint offsetof FILE PATH...`
pub fn offsetof(run: &Run, opts: &OffsetofOptions) -> Result<OffsetofReport> {
    let parsed = opts.parsed()?;
    let opened = run.single("offsetof")?;
    let view = run.view(opened)?;
    let line = run.build_line(opened);
    let table = view.table();
    let mut rows = Vec::new();
    for ((text, p), f) in opts.paths.iter().zip(&parsed).zip(&opened.found) {
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
            note: f.note.clone(),
            planned_by: view.planned_by.clone(),
        });
    }
    Ok(OffsetofReport {
        rows,
        notes: view.notes(),
    })
}

/// What `sizes` reads: every struct's size and holes.
pub fn sizes_want(_rules: &Rules) -> Result<Want> {
    Ok(Want {
        sizes: true,
        ..Want::default()
    })
}

/// `cachelint sizes FILE`: `NAME<TAB>SIZE<TAB>HOLES`, as `pahole --sizes`.
pub fn sizes(run: &Run) -> Result<SizesReport> {
    Ok(SizesReport {
        lines: run.single("sizes")?.sizes.clone(),
    })
}
