//! `layout` (pahole-style text or JSON) and `sizes` (pahole's `--sizes`
//! lines).

use std::fmt::Write;

use super::{Format, Output, Render, json, text, to_json};
use crate::report::layout::{LayoutReport, SizesReport};

impl Render for LayoutReport {
    const FORMATS: &'static [Format] = &[Format::Text, Format::Json];

    fn render(&self, format: Format) -> Output {
        let mut out = Output {
            notes: self.notes.clone(),
            ..Output::default()
        };
        match format {
            Format::Json => {
                let all: Vec<json::LayoutJson> = self
                    .layouts
                    .iter()
                    .map(|(l, note)| {
                        json::layout(&self.table, l, note.clone(), self.planned_by.clone())
                    })
                    .collect();
                out.stdout = to_json(&all);
            }
            _ => {
                for (i, (l, note)) in self.layouts.iter().enumerate() {
                    if i > 0 {
                        out.stdout.push('\n');
                    }
                    // A planned layout pasted anywhere still says so.
                    if let Some(plan) = &self.planned_by {
                        let _ = writeln!(out.stdout, "/* planned by {plan}, not compiled */");
                    }
                    let shares = self.shares.get(i).cloned().unwrap_or_default();
                    out.stdout.push_str(&text::layout(
                        &self.table,
                        l,
                        self.expand,
                        self.macros,
                        &shares,
                    ));
                    out.notes.extend(note.clone());
                }
            }
        }
        out
    }
}

impl Render for SizesReport {
    const FORMATS: &'static [Format] = &[Format::Text];

    fn render(&self, _: Format) -> Output {
        let mut stdout = String::new();
        for line in &self.lines {
            let _ = writeln!(stdout, "{}\t{}\t{}", line.name, line.size, line.holes);
        }
        Output {
            stdout,
            ..Output::default()
        }
    }
}
