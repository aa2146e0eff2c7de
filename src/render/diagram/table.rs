//! The table style: field, bytes, line and class, one row per field and
//! line (arrays split per line), as patch authors paste them today.

use comfy_table::{ContentArrangement, Table, presets};

use super::{Drawing, Piece, labels, wrap};
use crate::analysis::ranges;

/// Draws the selected lines as a table; `markdown` for a markdown table.
pub fn draw(d: &Drawing<'_>, markdown: bool) -> String {
    let drawn = super::boxes::drawn_spans(d);
    let (names, legend) = labels(&drawn);
    let mut table = Table::new();
    table
        .load_style(if markdown {
            presets::ASCII_MARKDOWN
        } else {
            presets::ASCII_FULL_CONDENSED
        })
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(u16::try_from(d.width).unwrap_or(u16::MAX))
        .set_header(["field", "bytes", "line", "class"]);
    for &line in &d.lines {
        for seg in d.segments(line) {
            let (field, class) = match seg.piece {
                Piece::Span(i) => {
                    let span = &d.analysis.annotated.spans[i];
                    let at = drawn.iter().position(|s| std::ptr::eq(*s, span));
                    let short = at.map_or(span.path.as_str(), |k| names[k].as_str());
                    let part = ranges::part_on_line(span, seg.first, seg.last);
                    let index = part.strip_prefix(span.path.as_str()).unwrap_or("");
                    let class = span
                        .class
                        .map_or("-".to_owned(), |c| match (&span.lock, c) {
                            (Some(l), crate::rules::Class::LockProtected) => format!("{c} ({l})"),
                            _ => c.name().to_owned(),
                        });
                    (format!("{short}{index}"), class)
                }
                Piece::Hole => ("(hole)".to_owned(), String::new()),
                Piece::Padding => ("(padding)".to_owned(), String::new()),
            };
            let bytes = if seg.first == seg.last {
                seg.first.to_string()
            } else {
                format!("{}-{}", seg.first, seg.last)
            };
            table.add_row([field, bytes, line.to_string(), class]);
        }
    }
    let mut out = format!("{table}\n");
    let notes: Vec<String> = legend.into_iter().chain(d.placement_note()).collect();
    if !notes.is_empty() {
        out.push('\n');
    }
    for l in notes {
        for w in wrap(&l, d.width, "  ") {
            out.push_str(&w);
            out.push('\n');
        }
    }
    out
}
