//! `check`: compiler-style diagnostics, the JSON report, or SARIF.

use super::{Format, Output, Render, diagnostics, explain, sarif, to_json};
use crate::report::Checked;

impl Render for Checked {
    const FORMATS: &'static [Format] = &[Format::Text, Format::Json, Format::Sarif];

    fn render(&self, format: Format) -> Output {
        let stdout = match format {
            Format::Json => to_json(&self.report),
            Format::Sarif => to_json(&sarif::report(&self.report)),
            _ => diagnostics::report(&self.report) + &explain::text(&self.report.explained),
        };
        // JSON and SARIF carry the notes inside.
        let notes = match format {
            Format::Text => self.report.notes.clone(),
            _ => Vec::new(),
        };
        Output {
            stdout,
            notes,
            failed: self.failed,
        }
    }
}
