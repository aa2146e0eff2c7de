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
        let measured = report
            .builds
            .iter()
            .flat_map(|b| &b.types)
            .filter(|t| t.name == name)
            .any(|t| t.contexts.iter().any(|c| c.samples.is_some()));
        let mut header = vec!["config", "context", "fields", "bytes", "lines", "optimum"];
        if measured {
            header.push("samples");
        }
        header.push("struct");
        table.set_header(header);
        let mut absent = Vec::new();
        let mut line = 64;
        for b in &report.builds {
            let Some(t) = b.types.iter().find(|t| t.name == name) else {
                continue;
            };
            line = t.cacheline;
            for c in &t.contexts {
                let mut row = vec![
                    b.config.clone(),
                    c.context.clone(),
                    c.fields.len().to_string(),
                    c.bytes.to_string(),
                    c.lines.len().to_string(),
                    c.optimum.to_string(),
                ];
                if measured {
                    row.push(c.samples.map_or_else(String::new, |n| n.to_string()));
                }
                row.push(format!("{} lines ({} bytes)", t.size_lines, t.size));
                table.add_row(row);
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
