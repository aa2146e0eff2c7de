//! Cacheline diagrams for changelogs: plain ASCII, at most `width` columns,
//! line numbers and byte ranges counted from the root. Three styles share
//! one model: the bytes of each drawn line cut into [`Segment`]s (a field or
//! the fields sharing its bytes, a hole, tail padding).
//!
//! - [`boxes`]: one box row per line, a cell per field or run of same-class
//!   fields, and the two-CPU story of the worst pair on a flagged line;
//! - [`strip`]: one character per byte (or per few bytes), a whole struct at
//!   a glance;
//! - [`table`]: field, bytes, line, class, as authors paste them today.

pub mod boxes;
pub mod compare;
mod page;
pub mod strip;
pub mod table;

use crate::analysis::{Analysis, Finding, Span};
use crate::rules::{Class, Severity};

/// Everything a drawing of one root needs.
pub struct Drawing<'a> {
    /// The analysed root.
    pub analysis: &'a Analysis,
    /// Tail padding inside the root, `[start, end)`.
    pub paddings: &'a [(u64, u64)],
    /// Lines to draw, ascending.
    pub lines: Vec<u64>,
    /// Maximum output width in columns.
    pub width: usize,
    /// perf's share of each member, by path (`--perf`).
    pub shares: &'a std::collections::BTreeMap<String, String>,
}

/// What a run of bytes on a line is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Leaf members (indexes into the analysis' spans) in offset order: one
    /// member, or several that share bytes (bitfields of one byte, union
    /// alternatives), none of which a byte-granular drawing can separate.
    Fields(Vec<usize>),
    /// Bytes between members that belong to nobody.
    Hole,
    /// Tail padding of a struct.
    Padding,
}

/// A run of bytes of one line, `first..=last` from the root's start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// What the bytes are.
    pub piece: Piece,
    /// First byte.
    pub first: u64,
    /// Last byte.
    pub last: u64,
}

impl Segment {
    /// Number of bytes.
    pub fn bytes(&self) -> u64 {
        self.last - self.first + 1
    }
}

impl<'a> Drawing<'a> {
    /// perf's share of span `path`, or of the nearest member enclosing it.
    pub(crate) fn share_of(&self, path: &str) -> Option<&'a String> {
        let mut p = path;
        loop {
            if let Some(s) = self.shares.get(p) {
                return Some(s);
            }
            p = &p[..p.rfind(['.', '['])?];
        }
    }

    /// Bytes `first..=last` of `line` inside the root (the last line may be short).
    pub fn line_bytes(&self, line: u64) -> Option<(u64, u64)> {
        let a = self.analysis;
        let first = line * a.cacheline;
        (first < a.size).then(|| (first, (first + a.cacheline).min(a.size) - 1))
    }

    /// The line cut into segments, in byte order, covering it exactly.
    pub fn segments(&self, line: u64) -> Vec<Segment> {
        let Some((start, end)) = self.line_bytes(line) else {
            return Vec::new();
        };
        let spans = &self.analysis.annotated.spans;
        let mut out: Vec<Segment> = Vec::new();
        let mut cursor = start;
        let mut on_line: Vec<usize> = (0..spans.len())
            .filter(|&i| spans[i].size > 0 && spans[i].offset <= end && spans[i].end() > start)
            .collect();
        // Stable: fields at one offset stay in declaration order.
        on_line.sort_by_key(|&i| spans[i].offset);
        for i in on_line {
            let s = &spans[i];
            let last = (s.end() - 1).min(end);
            // Sorted by offset: a span starting inside the bytes drawn last
            // shares them, and joins that segment.
            if let Some(Segment {
                piece: Piece::Fields(ids),
                last: drawn,
                ..
            }) = out.last_mut()
                && s.offset <= *drawn
            {
                ids.push(i);
                *drawn = (*drawn).max(last);
                cursor = *drawn + 1;
                continue;
            }
            if s.offset > cursor {
                self.push_gap(&mut out, cursor, s.offset - 1);
            }
            out.push(Segment {
                piece: Piece::Fields(vec![i]),
                first: cursor.max(s.offset),
                last,
            });
            cursor = last + 1;
        }
        if cursor <= end {
            self.push_gap(&mut out, cursor, end);
        }
        out
    }

    fn push_gap(&self, out: &mut Vec<Segment>, first: u64, last: u64) {
        for b in first..=last {
            let piece = if self.paddings.iter().any(|&(s, e)| b >= s && b < e) {
                Piece::Padding
            } else {
                Piece::Hole
            };
            match out.last_mut() {
                Some(seg) if seg.piece == piece && seg.last + 1 == b => seg.last = b,
                _ => out.push(Segment {
                    piece,
                    first: b,
                    last: b,
                }),
            }
        }
    }

    /// Findings on `line` (with the root at the start of a line), worst first.
    pub fn findings_on(&self, line: u64) -> Vec<&Finding> {
        self.analysis
            .findings
            .iter()
            .filter(|f| f.allowed.is_none() && f.placement == 0 && f.lines.contains(&line))
            .collect()
    }

    /// The spans behind a segment (none for a hole or padding).
    pub fn spans(&self, seg: &Segment) -> Vec<&Span> {
        match &seg.piece {
            Piece::Fields(ids) => ids
                .iter()
                .map(|&i| &self.analysis.annotated.spans[i])
                .collect(),
            _ => Vec::new(),
        }
    }

    /// A note for roots not aligned to a line, which are drawn at byte 0 of one.
    pub fn placement_note(&self) -> Option<String> {
        let a = self.analysis;
        (a.alignment < a.cacheline).then(|| {
            format!(
                "struct {} is {}-byte aligned: drawn starting at byte 0 of a line",
                a.root, a.alignment
            )
        })
    }
}

/// One letter per class, for cells and strips.
pub fn class_letter(class: Option<Class>) -> char {
    class.map_or('-', Class::letter)
}

/// `W lockless-write  R hot-read ...` for the classes in `classes`, in a
/// fixed order, as legend items.
pub fn class_legend(classes: &[Option<Class>]) -> Vec<String> {
    let mut order: Vec<Option<Class>> = Class::ALL.into_iter().map(Some).collect();
    order.sort_by_key(|c| c.map_or(u8::MAX, Class::disruption));
    order.push(None);
    order
        .iter()
        .filter(|c| classes.contains(c))
        .map(|c| {
            let name = c.map_or("not annotated", |c| c.name());
            format!("{} {name}", class_letter(*c))
        })
        .collect()
}

/// Legend items joined by two spaces, as many per line as fit `width`.
pub fn legend_lines(items: &[String], width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for item in items {
        let item = shorten(item, width);
        match lines.last_mut() {
            Some(line) if line.len() + 2 + item.len() <= width => {
                line.push_str("  ");
                line.push_str(&item);
            }
            _ => lines.push(item),
        }
    }
    lines
}

/// The worst finding on a line: the first of the highest severity
/// (findings come worst first, then by offset).
pub fn worst<'f>(findings: &[&'f Finding]) -> Option<&'f Finding> {
    let top = findings.iter().map(|f| f.severity).max()?;
    findings.iter().copied().find(|f| f.severity == top)
}

/// The verdict on a line: the worst finding's kind, in capitals, with its
/// severity when that is not an error.
pub fn verdict(findings: &[&Finding]) -> Option<String> {
    let worst = worst(findings)?;
    let kind = worst.kind.name().replace('-', " ").to_uppercase();
    Some(match worst.severity {
        Severity::Error => kind,
        other => format!("{kind} ({other})"),
    })
}

/// Labels for the spans drawn: the shortest dotted suffix of each path that
/// no other drawn span shares, and the legend lines for the prefixes cut
/// off (`in lruvec.lrugen: refaulted, enabled`).
pub fn labels(spans: &[&Span]) -> (Vec<String>, Vec<String>) {
    let parts: Vec<Vec<&str>> = spans.iter().map(|s| s.path.split('.').collect()).collect();
    let mut labels = Vec::new();
    let mut prefixes: Vec<(String, Vec<String>)> = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let mut keep = 1;
        while keep < p.len() {
            let suffix = &p[p.len() - keep..];
            let clash = parts.iter().enumerate().any(|(j, q)| {
                j != i && q.len() >= keep && &q[q.len() - keep..] == suffix && q != p
            });
            if !clash {
                break;
            }
            keep += 1;
        }
        let label = p[p.len() - keep..].join(".");
        if keep < p.len() {
            let prefix = p[..p.len() - keep].join(".");
            match prefixes.iter_mut().find(|(x, _)| *x == prefix) {
                Some((_, names)) if !names.contains(&label) => names.push(label.clone()),
                Some(_) => {}
                None => prefixes.push((prefix, vec![label.clone()])),
            }
        }
        labels.push(label);
    }
    let legend = prefixes
        .into_iter()
        .map(|(prefix, names)| format!("in {prefix}: {}", names.join(", ")))
        .collect();
    (labels, legend)
}

/// Wraps `text` at spaces to `width` columns; continuation lines start
/// with `indent`. Words longer than a line are shortened with `~`.
pub fn wrap(text: &str, width: usize, indent: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if !current.is_empty() && current.len() + 1 + word.len() <= width {
            current.push(' ');
            current.push_str(word);
            continue;
        }
        if !current.is_empty() {
            lines.push(std::mem::take(&mut current));
        }
        let lead = if lines.is_empty() { "" } else { indent };
        current = format!(
            "{lead}{}",
            shorten(word, width.saturating_sub(lead.len()).max(1))
        );
    }
    if !current.is_empty() || lines.is_empty() {
        lines.push(current);
    }
    lines
}

/// `text` if it fits in `width`, else its first `width - 1` characters and `~`.
pub fn shorten(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_owned()
    } else {
        let keep: String = text.chars().take(width.saturating_sub(1)).collect();
        format!("{keep}~")
    }
}

/// Replaces anything outside printable ASCII, so output stays plain ASCII
/// whatever names the debug info holds.
pub fn ascii(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' || c == '\n' {
                c
            } else {
                '?'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_to_the_width_and_marks_cut_words() {
        for line in wrap(
            "CPU A: writes lruvec.lrugen.refaulted[0][1][2] (no lock) -> line 23 invalidated",
            30,
            "       ",
        ) {
            assert!(line.len() <= 30, "{line}");
        }
        assert_eq!(shorten("refaulted", 5), "refa~");
        assert_eq!(shorten("gen", 5), "gen");
        assert_eq!(wrap("a_very_long_name", 6, "  "), ["a_ver~"]);
    }
}
