//! `draft`: a rules file (TOML, as `check --rules` reads it) whose every
//! rule has its evidence above it as comments and its mark after it, or
//! the report as JSON.

use super::{Format, Output, Render, to_json};
use crate::report::draft::DraftReport;

impl Render for DraftReport {
    const FORMATS: &'static [Format] = &[Format::Text, Format::Json];

    fn render(&self, format: Format) -> Output {
        let stdout = match format {
            Format::Json => to_json(self),
            _ => self.rules_file(),
        };
        Output {
            stdout,
            notes: self.notes.clone(),
            failed: false,
            highlights: Vec::new(),
        }
    }
}
