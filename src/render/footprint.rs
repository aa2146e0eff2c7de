//! `footprint`: one table per struct, a row per build and context.

use std::fmt::Write;

use comfy_table::{Table, presets};

use super::{Format, Output, Render, to_json};
use crate::report::footprint::FootprintReport;

impl Render for FootprintReport {
    const FORMATS: &'static [Format] = &[Format::Text, Format::Json, Format::Markdown];

    fn render(&self, format: Format) -> Output {
        let stdout = match format {
            Format::Json => to_json(self),
            _ => tables(self, format == Format::Markdown),
        };
        Output {
            stdout,
            notes: self.notes.clone(),
            failed: false,
            highlights: Vec::new(),
        }
    }
}

fn tables(report: &FootprintReport, markdown: bool) -> String {
    let mut names: Vec<&str> = Vec::new();
    for t in report.builds.iter().flat_map(|b| &b.types) {
        if !names.contains(&t.name.as_str()) {
            names.push(&t.name);
        }
    }
    let mut out = String::new();
    for name in names {
        let mut table = Table::new();
        table.load_style(if markdown {
            presets::ASCII_MARKDOWN
        } else {
            presets::ASCII_FULL_CONDENSED
        });
        table.set_header([
            "config", "context", "fields", "bytes", "lines", "optimum", "struct",
        ]);
        let mut absent = Vec::new();
        let mut line = 64;
        for b in &report.builds {
            let Some(t) = b.types.iter().find(|t| t.name == name) else {
                continue;
            };
            line = t.cacheline;
            for c in &t.contexts {
                table.add_row([
                    b.config.clone(),
                    c.context.clone(),
                    c.fields.len().to_string(),
                    c.bytes.to_string(),
                    c.lines.len().to_string(),
                    c.optimum.to_string(),
                    format!("{} lines ({} bytes)", t.size_lines, t.size),
                ]);
            }
            if !t.absent.is_empty() {
                absent.push((b.config.as_str(), &t.absent));
            }
        }
        let _ = writeln!(
            out,
            "struct {name}: cachelines of {line} bytes each context touches, counted from the \
             struct's start; optimum = ceil(bytes / {line})"
        );
        let _ = writeln!(out, "{table}");
        for (config, rows) in absent {
            let shown: Vec<&str> = rows
                .iter()
                .take(8)
                .map(|r| r.rsplit(": ").next().unwrap_or(r))
                .collect();
            let more = if rows.len() > shown.len() {
                ", ..."
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "[{config}] {} tabled members are not in this build, counted in no context: {}{more}",
                rows.len(),
                shown.join(", ")
            );
        }
        out.push('\n');
    }
    out
}
