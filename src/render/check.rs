//! `check`: compiler-style diagnostics, the JSON report, or SARIF.

use super::{Format, Output, Render, diagnostics, explain, sarif, to_json};
use crate::report::Checked;

impl Render for Checked {
    const FORMATS: &'static [Format] = &[Format::Text, Format::Json, Format::Sarif];

    fn render(&self, format: Format) -> Output {
        let (stdout, highlights) = match format {
            Format::Json => (to_json(&self.report), Vec::new()),
            Format::Sarif => (to_json(&sarif::report(&self.report)), Vec::new()),
            _ => {
                let mut text = diagnostics::report(&self.report);
                text.push_str(&explain::text(&self.report.explained));
                (text.text, text.highlights)
            }
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
            highlights,
        }
    }
}
