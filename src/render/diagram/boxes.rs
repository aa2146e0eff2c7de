//! The box style: one row of cells per cacheline, as reviewers asked for.
//!
//! ```text
//! line 23 (1472-1535)                                   FALSE SHARING
//! +----------------------+-------------------+------+-----------+
//! | refaulted            | enabled, gen, seg | hole | list      |
//! | [0][0][2]..[0][1][3] |                   |      |           |
//! | 1472-1519          W | 1520-1522       R | 5    | 1528-1535 |
//! ...
//! CPU A: writes refaulted[0][0][2] (no lock) -> line 23 invalidated
//! CPU B: reads enabled                       -> misses on line 23
//! ```

use std::collections::HashMap;

use super::{
    Drawing, Piece, Segment, class_legend, class_letter, labels, legend_lines, verdict, worst, wrap,
};
use crate::analysis::{Finding, Span, ranges};
use crate::rules::{Class, Kind};

/// Draws the selected lines as boxes.
pub fn draw(d: &Drawing<'_>) -> String {
    let spans: Vec<&Span> = drawn_spans(d);
    let (names, legend) = labels(&spans);
    let label: HashMap<&str, &str> = spans
        .iter()
        .zip(&names)
        .map(|(s, n)| (s.path.as_str(), n.as_str()))
        .collect();
    let mut out = String::new();
    for (i, &line) in d.lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&draw_line(d, line, &label));
    }
    let mut tail = Vec::new();
    tail.extend(legend);
    tail.extend(d.placement_note());
    if !tail.is_empty() {
        out.push('\n');
        for t in tail {
            for l in wrap(&t, d.width, "  ") {
                out.push_str(&l);
                out.push('\n');
            }
        }
    }
    out
}

/// Every span that appears on a drawn line.
pub fn drawn_spans<'a>(d: &'a Drawing<'_>) -> Vec<&'a Span> {
    let mut seen = Vec::new();
    for &line in &d.lines {
        for seg in d.segments(line) {
            if let Piece::Fields(ids) = seg.piece {
                for i in ids {
                    if !seen.contains(&i) {
                        seen.push(i);
                    }
                }
            }
        }
    }
    seen.into_iter()
        .map(|i| &d.analysis.annotated.spans[i])
        .collect()
}

/// One box cell before layout.
struct Cell {
    /// Names, joined by ", " and wrapped at spaces.
    names: String,
    /// Array elements on the line, if any.
    index: Option<String>,
    /// Left part of the last row (the byte range, or a hole's size).
    range: String,
    /// Class letters (one per class of the fields, most disruptive
    /// first), right-aligned on the last row; empty for a hole.
    letters: String,
}

impl Cell {
    fn natural(&self) -> usize {
        self.names
            .len()
            .max(self.index.as_ref().map_or(0, String::len))
            .max(self.footer_min())
    }

    fn minimum(&self) -> usize {
        let longest_name = self.names.split(' ').map(str::len).max().unwrap_or(0);
        let index = self.index.as_ref().map_or(0, |i| {
            i.split_inclusive("..").map(str::len).max().unwrap_or(0)
        });
        longest_name.max(index).max(self.footer_min())
    }

    fn footer_min(&self) -> usize {
        self.range.len()
            + if self.letters.is_empty() {
                0
            } else {
                self.letters.len() + 1
            }
    }

    /// The cell's text rows at inner width `w`.
    fn rows(&self, w: usize) -> Vec<String> {
        let mut rows = wrap(&self.names, w, "");
        if let Some(index) = &self.index {
            if index.len() <= w {
                rows.push(index.clone());
            } else {
                rows.extend(index.split_inclusive("..").flat_map(|p| wrap(p, w, "")));
            }
        }
        let footer = if self.letters.is_empty() {
            self.range.clone()
        } else {
            let pad = w.saturating_sub(self.letters.len());
            format!("{:<pad$}{}", self.range, self.letters)
        };
        rows.push(footer);
        rows
    }
}

fn draw_line(d: &Drawing<'_>, line: u64, label: &HashMap<&str, &str>) -> String {
    let Some((start, end)) = d.line_bytes(line) else {
        return String::new();
    };
    let segments = d.segments(line);
    let cells = cells(d, &segments, label);
    let rows = pack(&cells, d.width);
    let findings = d.findings_on(line);
    let mut out = String::new();
    let inside: Vec<&str> = d
        .analysis
        .annotated
        .groups
        .iter()
        .filter(|g| g.begin < start && g.end.is_some_and(|e| e > end))
        .map(|g| g.name.as_str())
        .collect();
    let header = if inside.is_empty() {
        format!("line {line} ({start}-{end})")
    } else {
        format!("line {line} ({start}-{end}) in group {}", inside.join(", "))
    };
    let table_width = rows.first().map_or(0, |r| r.width);
    match verdict(&findings) {
        Some(v) if header.len() + 2 + v.len() <= d.width => {
            let right = table_width.max(header.len() + 2 + v.len());
            out.push_str(&format!("{header}{v:>pad$}\n", pad = right - header.len()));
        }
        Some(v) => out.push_str(&format!("{header}\n{v}\n")),
        None => out.push_str(&format!("{header}\n")),
    }
    // Group brackets; an end marker is the byte after the group, so a
    // group ending at a line boundary closes after the line before it.
    let groups = &d.analysis.annotated.groups;
    for g in groups.iter().filter(|g| (start..=end).contains(&g.begin)) {
        out.push_str(&format!("[ group {} begins at {}\n", g.name, g.begin));
    }
    for row in &rows {
        out.push_str(&row.text);
    }
    for g in groups {
        if let Some(e) = g.end
            && e > start
            && e <= end + 1
        {
            out.push_str(&format!("] group {} ends at {e}\n", g.name));
        }
    }
    let classes: Vec<Option<Class>> = segments
        .iter()
        .flat_map(|s| d.spans(s))
        .map(|span| span.class)
        .collect();
    for l in legend_lines(&class_legend(&classes), d.width) {
        out.push_str(&l);
        out.push('\n');
    }
    if let Some(worst) = worst(&findings) {
        out.push_str(&story(d, worst, line, start, label));
    }
    out
}

fn cells(d: &Drawing<'_>, segments: &[Segment], label: &HashMap<&str, &str>) -> Vec<Cell> {
    let mut cells: Vec<Cell> = Vec::new();
    let mut last_class: Option<Option<Class>> = None;
    for seg in segments {
        let ids = match &seg.piece {
            Piece::Hole | Piece::Padding => {
                last_class = None;
                cells.push(Cell {
                    names: if seg.piece == Piece::Hole {
                        "hole"
                    } else {
                        "pad"
                    }
                    .to_owned(),
                    index: None,
                    range: seg.bytes().to_string(),
                    letters: String::new(),
                });
                continue;
            }
            Piece::Fields(ids) => ids,
        };
        let spans: Vec<&Span> = ids
            .iter()
            .map(|&i| &d.analysis.annotated.spans[i])
            .collect();
        // Each field's name with the elements of it on the line, if any.
        let parts: Vec<(&str, Option<String>)> = spans
            .iter()
            .map(|s| {
                let name = label.get(s.path.as_str()).copied().unwrap_or(&s.path);
                let part = ranges::part_on_line(s, seg.first.max(s.offset), seg.last);
                let index = part.strip_prefix(s.path.as_str()).unwrap_or("");
                (name, (!index.is_empty()).then(|| index.to_owned()))
            })
            .collect();
        let mut classes: Vec<Option<Class>> = Vec::new();
        for s in &spans {
            if !classes.contains(&s.class) {
                classes.push(s.class);
            }
        }
        classes.sort_by_key(|c| c.map_or(u8::MAX, Class::disruption));
        let one_class = (classes.len() == 1).then(|| classes[0]);
        let (names, index) = match parts.as_slice() {
            [(name, index)] => ((*name).to_owned(), index.clone()),
            _ => (
                parts
                    .iter()
                    .map(|(n, i)| format!("{n}{}", i.as_deref().unwrap_or("")))
                    .collect::<Vec<_>>()
                    .join(", "),
                None,
            ),
        };
        let merge = index.is_none()
            && one_class.is_some()
            && last_class == one_class
            && cells
                .last()
                .is_some_and(|c| c.index.is_none() && !c.letters.is_empty());
        if merge && let Some(prev) = cells.last_mut() {
            prev.names = format!("{}, {names}", prev.names);
            let first = prev.range.split('-').next().unwrap_or("").to_owned();
            prev.range = format!("{first}-{}", seg.last);
        } else {
            cells.push(Cell {
                names,
                range: if seg.first == seg.last {
                    seg.first.to_string()
                } else {
                    format!("{}-{}", seg.first, seg.last)
                },
                letters: classes.iter().map(|c| class_letter(*c)).collect(),
                index: index.clone(),
            });
        }
        last_class = if index.is_none() { one_class } else { None };
    }
    cells
}

/// A box row: its text and width.
struct Row {
    text: String,
    width: usize,
}

/// Sizes the cells to fit `width` (shrinking the widest first, then
/// starting another box row), and draws them.
fn pack(cells: &[Cell], width: usize) -> Vec<Row> {
    let mut widths: Vec<usize> = cells.iter().map(Cell::natural).collect();
    let total = |w: &[usize]| w.iter().map(|x| x + 3).sum::<usize>() + 1;
    while total(&widths) > width {
        let Some(i) = (0..cells.len())
            .filter(|&i| widths[i] > cells[i].minimum())
            .max_by_key(|&i| widths[i])
        else {
            break;
        };
        widths[i] -= 1;
    }
    for w in &mut widths {
        *w = (*w).min(width.saturating_sub(4)).max(1);
    }
    let mut rows = Vec::new();
    let mut from = 0;
    while from < cells.len() {
        let mut to = from + 1;
        while to < cells.len() && total(&widths[from..=to]) <= width {
            to += 1;
        }
        rows.push(draw_row(&cells[from..to], &widths[from..to]));
        from = to;
    }
    rows
}

fn draw_row(cells: &[Cell], widths: &[usize]) -> Row {
    let border: String = widths
        .iter()
        .map(|w| format!("+{}", "-".repeat(w + 2)))
        .collect::<String>()
        + "+\n";
    let texts: Vec<Vec<String>> = cells.iter().zip(widths).map(|(c, w)| c.rows(*w)).collect();
    let height = texts.iter().map(Vec::len).max().unwrap_or(0);
    let mut text = border.clone();
    for r in 0..height {
        for (t, w) in texts.iter().zip(widths) {
            // The byte-range row is the last one of every cell.
            let content = if r + 1 == height {
                t.last().cloned().unwrap_or_default()
            } else if r + 1 < t.len() {
                t[r].clone()
            } else {
                String::new()
            };
            text.push_str(&format!("| {content:<w$} "));
        }
        text.push_str("|\n");
    }
    text.push_str(&border);
    Row {
        width: border.len() - 1,
        text,
    }
}

/// The two CPUs of the worst pair on the line: who writes, who reads, what misses.
fn story(
    d: &Drawing<'_>,
    f: &Finding,
    line: u64,
    start: u64,
    label: &HashMap<&str, &str>,
) -> String {
    let spans = &d.analysis.annotated.spans;
    let name = |i: usize| {
        let s = &spans[i];
        let short = label.get(s.path.as_str()).copied().unwrap_or(&s.path);
        let one = ranges::part_on_line(s, s.offset.max(start), s.offset.max(start));
        format!("{short}{}", one.strip_prefix(s.path.as_str()).unwrap_or(""))
    };
    let lock = |i: usize| {
        let l = spans[i].lock.clone().unwrap_or_default();
        label.get(l.as_str()).map_or(l.clone(), |s| (*s).to_owned())
    };
    let (a, b) = (f.a.span, f.b.span);
    let (na, nb) = (name(a), name(b));
    let inval = format!("line {line} invalidated");
    let miss = format!("misses on line {line}");
    let bounce = format!("line {line} bounces");
    let (act_a, eff_a, act_b, eff_b) = match f.kind {
        Kind::FalseSharing => (
            format!("writes {na} (no lock)"),
            inval,
            format!("reads {nb}"),
            miss,
        ),
        Kind::WriteVsLocked => (
            format!("writes {na} (no lock)"),
            inval,
            format!("holds {}, updates {nb}", lock(b)),
            format!("loses line {line} to CPU A"),
        ),
        Kind::WriteVsLock => (
            format!("writes {na} (no lock)"),
            inval,
            format!("takes {nb}"),
            miss,
        ),
        Kind::ReadVsLocked => (
            format!("holds {}, writes {na}", lock(a)),
            inval,
            format!("reads {nb}"),
            miss,
        ),
        Kind::ReadVsLock => (format!("takes {na}"), inval, format!("reads {nb}"), miss),
        Kind::WriteVsWrite => (
            format!("writes {na} (no lock)"),
            bounce.clone(),
            format!("writes {nb} (no lock)"),
            bounce,
        ),
        Kind::LocksMixed => (
            format!("holds {}, writes {na}", lock(a)),
            bounce.clone(),
            format!("holds {}, writes {nb}", lock(b)),
            bounce,
        ),
        Kind::LockedVsOtherLock => (
            format!("takes {na}"),
            inval,
            format!("holds {}, writes {nb}", lock(b)),
            miss,
        ),
        Kind::TwoLocks => (
            format!("takes {na}"),
            bounce.clone(),
            format!("takes {nb}"),
            bounce,
        ),
        Kind::CrossContext => {
            let (writes_in, others) = f.meeting.as_ref().map_or_else(
                || (String::new(), String::new()),
                |m| (m.writes_in.join("/"), m.others.join("/")),
            );
            (
                format!("in {writes_in}, writes {na}"),
                inval,
                format!("in {others}, uses {nb}"),
                miss,
            )
        }
        Kind::AdjacentLines => (
            format!("writes {na}"),
            format!("line {line} and its pair invalidated"),
            format!("uses {nb}"),
            "misses the prefetched pair".into(),
        ),
    };
    let pad = act_a.len().max(act_b.len());
    let aligned = |act: &str, eff: &str, cpu: &str| format!("CPU {cpu}: {act:<pad$} -> {eff}");
    let fits = [("A", &act_a, &eff_a), ("B", &act_b, &eff_b)]
        .iter()
        .all(|(cpu, act, eff)| aligned(act, eff, cpu).len() <= d.width);
    let mut out = String::new();
    for (cpu, act, eff) in [("A", &act_a, &eff_a), ("B", &act_b, &eff_b)] {
        let one = if fits {
            aligned(act, eff, cpu)
        } else {
            format!("CPU {cpu}: {act} -> {eff}")
        };
        let lines = if one.len() <= d.width {
            vec![one]
        } else {
            // The effect on a line of its own, under the action.
            let mut lines = wrap(&format!("CPU {cpu}: {act}"), d.width, "       ");
            lines.extend(
                wrap(&format!("-> {eff}"), d.width - 7, "   ")
                    .into_iter()
                    .map(|l| format!("       {l}")),
            );
            lines
        };
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
    }
    out
}
