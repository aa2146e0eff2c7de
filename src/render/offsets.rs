//! `offsetof` and `offsets`: one line per path, or a table with a column
//! per build.

use std::fmt::Write;

use comfy_table::{Table, presets};
use serde::Serialize;

use super::{Format, Output, Render, to_json};
use crate::lines::Lines;
use crate::report::layout::OffsetofReport;
use crate::report::offsets::{Cell, OffsetsReport};

impl Render for OffsetofReport {
    const FORMATS: &'static [Format] = &[Format::Text, Format::Json];

    fn render(&self, format: Format) -> Output {
        let stdout = match format {
            Format::Json => to_json(&self.rows),
            _ => {
                let mut out = String::new();
                for r in &self.rows {
                    let bytes = Lines::of(r.offset, r.size, 1);
                    let lines = if r.lines.first == r.lines.last {
                        format!("cacheline {}", r.lines)
                    } else {
                        format!("cachelines {}", r.lines)
                    };
                    let bits = match (r.bit_offset, r.bit_size) {
                        (Some(b), Some(w)) => format!(" bits {b}+{w}"),
                        _ => String::new(),
                    };
                    let _ = writeln!(
                        out,
                        "{}: offset {} size {}{bits} {lines} (bytes {}-{})",
                        r.path, r.offset, r.size, bytes.first, bytes.last
                    );
                }
                out
            }
        };
        let mut notes = self.notes.clone();
        notes.extend(self.rows.iter().filter_map(|r| r.note.clone()));
        Output {
            stdout,
            notes,
            failed: false,
        }
    }
}

#[derive(Serialize)]
struct RowJson<'a> {
    path: &'a str,
    lines_differ: bool,
    builds: Vec<(&'a str, Option<Cell>)>,
}

impl Render for OffsetsReport {
    const FORMATS: &'static [Format] = &[Format::Text, Format::Json, Format::Markdown];

    fn render(&self, format: Format) -> Output {
        let stdout = match format {
            Format::Json => to_json(
                &self
                    .rows
                    .iter()
                    .map(|r| RowJson {
                        path: &r.path,
                        lines_differ: r.lines_differ,
                        builds: self
                            .configs
                            .iter()
                            .map(String::as_str)
                            .zip(r.cells.iter().copied())
                            .collect(),
                    })
                    .collect::<Vec<_>>(),
            ),
            _ => {
                let mut table = Table::new();
                table.load_style(if format == Format::Markdown {
                    presets::ASCII_MARKDOWN
                } else {
                    presets::ASCII_FULL_CONDENSED
                });
                let mut header = vec!["path".to_owned()];
                header.extend(self.configs.iter().cloned());
                header.push("lines".into());
                table.set_header(header);
                for r in &self.rows {
                    let mut row = vec![r.path.clone()];
                    row.extend(r.cells.iter().map(|c| match c {
                        Some(c) => format!("{} +{} L{}", c.offset, c.size, c.lines),
                        None => "absent".to_owned(),
                    }));
                    row.push(if r.lines_differ {
                        "differ".into()
                    } else {
                        String::new()
                    });
                    table.add_row(row);
                }
                format!(
                    "{table}\nEach cell: offset +size Lcacheline(s), counted from the start of the path's type.\n"
                )
            }
        };
        Output {
            stdout,
            notes: self.notes.clone(),
            failed: false,
        }
    }
}
