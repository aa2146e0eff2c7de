//! The table style: field, bytes, line and class, one row per field and
//! line (arrays split per line), as patch authors paste them today.

use comfy_table::{ContentArrangement, Table, presets};

use super::{Drawing, Piece, labels, wrap};
use crate::analysis::ranges;

/// Draws the selected lines as a table, wrapped to the width; `markdown`
/// for a markdown table, whose cells are never wrapped.
pub fn draw(d: &Drawing<'_>, markdown: bool) -> String {
    let drawn = super::boxes::drawn_spans(d);
    let (names, legend) = labels(&drawn);
    let mut table = Table::new();
    if markdown {
        // A wrapped cell would become rows of its own in markdown: its
        // cells stay whole, whatever the width.
        table.load_style(presets::ASCII_MARKDOWN);
    } else {
        table
            .load_style(presets::ASCII_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(u16::try_from(d.width).unwrap_or(u16::MAX));
    }
    let perf = !d.shares.is_empty();
    match perf {
        true => table.set_header(["field", "bytes", "line", "class", "perf"]),
        false => table.set_header(["field", "bytes", "line", "class"]),
    };
    for &line in &d.lines {
        for seg in d.segments(line) {
            let bytes = |first: u64, last: u64| {
                if first == last {
                    first.to_string()
                } else {
                    format!("{first}-{last}")
                }
            };
            let ids = match &seg.piece {
                Piece::Fields(ids) => ids,
                Piece::Hole | Piece::Padding => {
                    let what = if seg.piece == Piece::Hole {
                        "(hole)"
                    } else {
                        "(padding)"
                    };
                    let mut row = vec![
                        what.to_owned(),
                        bytes(seg.first, seg.last),
                        line.to_string(),
                        String::new(),
                    ];
                    if perf {
                        row.push(String::new());
                    }
                    table.add_row(row);
                    continue;
                }
            };
            // A row per field, with its own bytes: bitfields sharing a byte
            // each get theirs.
            for &i in ids {
                let span = &d.analysis.annotated.spans[i];
                let (first, last) = (seg.first.max(span.offset), seg.last.min(span.end() - 1));
                let at = drawn.iter().position(|s| std::ptr::eq(*s, span));
                let short = at.map_or(span.path.as_str(), |k| names[k].as_str());
                let part = ranges::part_on_line(span, first, last);
                let index = part.strip_prefix(span.path.as_str()).unwrap_or("");
                let class = span
                    .class
                    .map_or("-".to_owned(), |c| match (&span.lock, c) {
                        (Some(l), crate::rules::Class::LockProtected) => format!("{c} ({l})"),
                        _ => c.name().to_owned(),
                    });
                let mut row = vec![
                    format!("{short}{index}"),
                    bytes(first, last),
                    line.to_string(),
                    class,
                ];
                if perf {
                    row.push(d.share_of(&span.path).cloned().unwrap_or_default());
                }
                table.add_row(row);
            }
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
