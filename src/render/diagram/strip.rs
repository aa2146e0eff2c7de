//! The strip style: one character per byte (or per 2, 4, ... bytes when a
//! line would not fit the width), the whole struct at a glance.
//!
//! ```text
//!   22 |PPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPWWWWWWWWWWWWWWWW|!
//!   23 |WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWRRR.....RRRRRRRR|!
//! ```

use super::{Drawing, Piece, class_legend, class_letter, legend_lines, wrap};
use crate::rules::{Class, Severity};

/// Draws the selected lines as strips.
pub fn draw(d: &Drawing<'_>) -> String {
    let a = d.analysis;
    let number_width = d.lines.last().map_or(1, |l| l.to_string().len()).max(4);
    // "NNNN |" + cells + "|" + mark
    let overhead = number_width + 2 + 2;
    let mut per_char = 1;
    while (a.cacheline.div_ceil(per_char) as usize) + overhead > d.width && per_char < a.cacheline {
        per_char *= 2;
    }
    let mut out = String::new();
    let mut classes = Vec::new();
    let mut marks = (false, false);
    for &line in &d.lines {
        let Some((start, end)) = d.line_bytes(line) else {
            continue;
        };
        for g in &a.annotated.groups {
            if (start..=end).contains(&g.begin) {
                out.push_str(&format!(
                    "{:>number_width$}  [ {} ({}-)\n",
                    "", g.name, g.begin
                ));
            }
        }
        let segments = d.segments(line);
        let mut chars = String::new();
        let mut b = start;
        while b <= end {
            let last = (b + per_char - 1).min(end);
            let mut best: Option<(u8, char)> = None;
            for seg in segments.iter().filter(|s| s.first <= last && s.last >= b) {
                let candidates: Vec<(u8, char)> = match &seg.piece {
                    Piece::Fields(ids) => ids
                        .iter()
                        .filter(|&&i| {
                            let span = &a.annotated.spans[i];
                            span.offset <= last && span.end() > b
                        })
                        .map(|&i| {
                            let class = a.annotated.spans[i].class;
                            if !classes.contains(&class) {
                                classes.push(class);
                            }
                            // Writers first; an unannotated field before a hole.
                            (class.map_or(5, Class::disruption), class_letter(class))
                        })
                        .collect(),
                    Piece::Hole | Piece::Padding => vec![(9, '.')],
                };
                for (rank, c) in candidates {
                    if best.is_none_or(|(r, _)| rank < r) {
                        best = Some((rank, c));
                    }
                }
            }
            chars.push(best.map_or(' ', |(_, c)| c));
            b = last + 1;
        }
        let full = a.cacheline.div_ceil(per_char) as usize;
        let findings = d.findings_on(line);
        let mark = match findings.iter().map(|f| f.severity).max() {
            Some(Severity::Error) => {
                marks.0 = true;
                "!"
            }
            Some(_) => {
                marks.1 = true;
                "?"
            }
            None => "",
        };
        out.push_str(&format!("{line:>number_width$} |{chars:<full$}|{mark}\n"));
        for g in &a.annotated.groups {
            if let Some(e) = g.end
                && e > start
                && e <= end + 1
            {
                out.push_str(&format!("{:>number_width$}  ] {} (-{e})\n", "", g.name));
            }
        }
    }
    let mut legend = class_legend(&classes);
    legend.push(". hole or padding".into());
    if marks.0 {
        legend.push("! error on the line".into());
    }
    if marks.1 {
        legend.push("? warning or note".into());
    }
    if per_char > 1 {
        legend.push(format!("(1 character = {per_char} bytes)"));
    }
    for l in legend_lines(&legend, d.width) {
        out.push_str(&l);
        out.push('\n');
    }
    if let Some(note) = d.placement_note() {
        for l in wrap(&note, d.width, "  ") {
            out.push_str(&l);
            out.push('\n');
        }
    }
    out
}
