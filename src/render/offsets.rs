//! `offsetof` and `offsets`: one line per path, or a table with a column
//! per build.

use std::fmt::Write;

use comfy_table::{Table, presets};
use serde::Serialize;

use super::{Format, Output, Render, to_json};
use crate::lines::Lines;
use crate::report::layout::{OffsetRow, OffsetofReport};
use crate::report::offsets::{Cell, OffsetsReport};

impl Render for OffsetofReport {
    const FORMATS: &'static [Format] = &[Format::Text, Format::Json];

    fn render(&self, format: Format) -> Output {
        let stdout = match format {
            Format::Json => to_json(&self.rows),
            _ => {
                let mut out = String::new();
                for r in &self.rows {
                    let _ = writeln!(out, "{}: {}", r.path, offsetof_text(r));
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
            highlights: Vec::new(),
        }
    }
}

/// Where one path lands, as a kernel developer reads it: `offset 1520
/// size 1 cacheline 23 (bytes 1520-1520)`, `bitfield: byte 1519, bits 0-1
/// (2 bits), cacheline 23`, `flexible array at byte 1344, cacheline 21`.
fn offsetof_text(r: &OffsetRow) -> String {
    let lines = if r.lines.first == r.lines.last {
        format!("cacheline {}", r.lines)
    } else {
        format!("cachelines {}", r.lines)
    };
    if let (Some(b), Some(w)) = (r.bit_offset, r.bit_size) {
        let end = b.saturating_add(w.max(1) - 1);
        let (first, last) = (b / 8, end / 8);
        let (lo, hi) = (b % 8, b % 8 + (end - b));
        let bits = if lo == hi {
            format!("bit {lo}")
        } else {
            format!("bits {lo}-{hi}")
        };
        let width = if w == 1 {
            "1 bit".to_owned()
        } else {
            format!("{w} bits")
        };
        return if first == last {
            format!("bitfield: byte {first}, {bits} ({width}), {lines}")
        } else {
            format!("bitfield: bytes {first}-{last}, {bits} from byte {first} ({width}), {lines}")
        };
    }
    if r.flexible_array {
        return format!("flexible array at byte {}, {lines}", r.offset);
    }
    let bytes = Lines::of(r.offset, r.size, 1);
    format!(
        "offset {} size {} {lines} (bytes {}-{})",
        r.offset, r.size, bytes.first, bytes.last
    )
}

#[derive(Serialize)]
struct RowJson<'a> {
    path: &'a str,
    lines_differ: bool,
    builds: Vec<BuildJson<'a>>,
}

/// One build's cell, a record like the builds of the other reports: the
/// cell's keys are null where the build lacks the path.
#[derive(Serialize)]
struct BuildJson<'a> {
    config: &'a str,
    present: bool,
    offset: Option<u64>,
    size: Option<u64>,
    cacheline: Option<u64>,
    last_cacheline: Option<u64>,
}

impl<'a> BuildJson<'a> {
    fn new(config: &'a str, cell: Option<Cell>) -> Self {
        BuildJson {
            config,
            present: cell.is_some(),
            offset: cell.map(|c| c.offset),
            size: cell.map(|c| c.size),
            cacheline: cell.map(|c| c.lines.first),
            last_cacheline: cell.map(|c| c.lines.last),
        }
    }
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
                            .zip(&r.cells)
                            .map(|(config, cell)| BuildJson::new(config, *cell))
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
            highlights: Vec::new(),
        }
    }
}
