//! Every output format, chosen in one place. A command returns a report
//! (plain data, see [`crate::report`]); [`output`] checks that the report
//! can be written in the format asked for and writes it. Renderers read
//! the model, layouts and reports; they never read DWARF or BTF, and they
//! compute nothing a report does not already hold.
//!
//! To add a format: a [`Format`] variant, and an arm in the `render` of
//! each report that can be written in it (listing it in that report's
//! [`Render::FORMATS`]); the command line offers it from there.

mod asserts;
mod audit;
pub(crate) mod cdecl;
mod check;
mod diagnostics;
mod diagram;
mod diff;
mod draft;
pub(crate) mod explain;
mod footprint;
mod json;
mod layout;
mod offsets;
mod review;
mod sarif;
mod style;
mod suggest;
mod text;

use serde::Serialize;

use crate::error::{Error, Result};

pub use style::{Highlight, Marked, Tone, paint};

/// An output format. Each report says which it can be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Human text: pahole-style layouts, tables, compiler-style diagnostics.
    Text,
    /// JSON for scripts (`check`'s is also a `--baseline` input).
    Json,
    /// Markdown: tables and fenced drawings, for a changelog or a review.
    Markdown,
    /// SARIF 2.1.0, for code-scanning services.
    Sarif,
}

impl Format {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Markdown => "markdown",
            Format::Sarif => "sarif",
        }
    }
}

/// What a command printed: standard output, notes for standard error, and
/// its verdict.
#[derive(Debug, Default)]
pub struct Output {
    /// Printed on standard output.
    pub stdout: String,
    /// Printed on standard error as `note: ...`.
    pub notes: Vec<String>,
    /// True when the command's verdict is "fail" (exit code 1): findings
    /// at or above `--fail-on`, or differences for `diff`.
    pub failed: bool,
    /// The spans of `stdout` a terminal shows in colour: the location and
    /// severity of compiler-style diagnostics ([`paint`] applies them).
    /// None in JSON, SARIF, tables or drawings.
    pub highlights: Vec<Highlight>,
}

/// A command's report, writable in some formats.
pub trait Render {
    /// The formats this report can be written in, the default first.
    const FORMATS: &'static [Format];

    /// Writes the report in `format`, one of [`Render::FORMATS`].
    fn render(&self, format: Format) -> Output;
}

/// Writes `report` in `format`, or says which formats `command` has.
pub fn output<R: Render>(report: &R, format: Format, command: &str) -> Result<Output> {
    if !R::FORMATS.contains(&format) {
        let names: Vec<&str> = R::FORMATS.iter().map(|f| f.name()).collect();
        return Err(Error::Usage(format!(
            "{command} cannot write {}; it writes {}",
            format.name(),
            names.join(", ")
        )));
    }
    Ok(report.render(format))
}

/// Pretty JSON with a final newline.
pub(crate) fn to_json<T: Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("JSON of plain data");
    s.push('\n');
    s
}
