//! `--explain FIELD`: for every line a field occupies, each annotated
//! neighbour on that line and the verdict on the pair, flagged or not,
//! with its reason: the reviewer's "nr_pages is updated even more often
//! than refaulted[], why isn't it false sharing?".

use super::Analysis;
use super::annotate::same_lock;
use super::contexts::{self, Usage};
use super::findings::classify;
use crate::lines::Lines;
use crate::rules::{Class, Kind, Rules, Severity};

/// The verdict on one neighbour.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The neighbour's span.
    pub span: usize,
    /// The kind, when the pair is flagged.
    pub kind: Option<Kind>,
    /// Its severity (`None` when not flagged or turned off).
    pub severity: Option<Severity>,
    /// Why, in words.
    pub reason: String,
}

/// One line the field occupies, with its neighbours.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineExplained {
    /// The field's span.
    pub span: usize,
    /// The line, counted from the root's start (the root on a line boundary).
    pub line: u64,
    /// Its first and last byte, clipped to the root.
    pub bytes: (u64, u64),
    /// Every annotated neighbour on the line.
    pub neighbours: Vec<Verdict>,
}

/// The spans `field` names: its path from the root, a path ending in it
/// (`lrugen.refaulted`, `refaulted`), or `TYPE.member` of an instance;
/// array indexes, in `field` or the spans' paths, are not compared (every
/// element of an array is named by it). `explain` and `diagram --around`
/// name fields this way.
pub fn matching(a: &Analysis, field: &str) -> Vec<usize> {
    let field = strip_indexes(field);
    let field = field.as_str();
    let spans = &a.annotated.spans;
    (0..spans.len())
        .filter(|&i| {
            let s = &spans[i];
            let bare = |p: &str| p.split('[').next().unwrap_or(p).to_owned();
            let path = strip_indexes(&s.path);
            path == field
                || path.ends_with(&format!(".{field}"))
                || s.owners
                    .iter()
                    .any(|(ty, p)| format!("{ty}.{}", bare(&strip_indexes(p))) == field)
        })
        .collect()
}

fn strip_indexes(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut depth = 0;
    for c in path.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Explains every line of each span in `spans` (from [`matching`]).
pub fn explain(a: &Analysis, spans_of_field: &[usize], rules: &Rules) -> Vec<LineExplained> {
    let spans = &a.annotated.spans;
    let usages: Vec<Usage<'_>> = (0..spans.len())
        .map(|i| Usage::of(spans, i, rules))
        .collect();
    let any_context = spans.iter().any(|s| s.access.is_some());
    let line = a.cacheline.max(1);
    let mut out = Vec::new();
    for &i in spans_of_field {
        let s = &spans[i];
        if s.size == 0 {
            continue;
        }
        let mine = Lines::of(s.offset, s.size, line);
        for l in mine.first..=mine.last {
            let (start, end) = (l * line, ((l + 1) * line).min(a.size).max(l * line + 1) - 1);
            let neighbours = (0..spans.len())
                .filter(|&j| j != i)
                .filter(|&j| {
                    let n = &spans[j];
                    n.class.is_some() && n.size > 0 && n.offset <= end && n.end() > start
                })
                .map(|j| {
                    let u = any_context.then_some(usages.as_slice());
                    match classify(spans, u, i, j) {
                        Some((_, _, kind)) => Verdict {
                            span: j,
                            kind: Some(kind),
                            severity: rules.severity.of(kind),
                            reason: kind.description().to_owned(),
                        },
                        None => Verdict {
                            span: j,
                            kind: None,
                            severity: None,
                            reason: why_not(a, i, j, &usages),
                        },
                    }
                })
                .collect();
            out.push(LineExplained {
                span: i,
                line: l,
                bytes: (start, end),
                neighbours,
            });
        }
    }
    out
}

/// Why a pair on one line is not flagged.
fn why_not(a: &Analysis, i: usize, j: usize, usages: &[Usage<'_>]) -> String {
    let spans = &a.annotated.spans;
    let (x, y) = (&spans[i], &spans[j]);
    if x.class == Some(Class::Cold) || y.class == Some(Class::Cold) {
        return "one of them is cold: never flagged".into();
    }
    if x.class.is_none() {
        return format!("{} has no rule", x.path);
    }
    if let (Some(lx), Some(ly)) = (&x.lock, &y.lock)
        && same_lock(lx, ly)
        && x.access.is_none()
        && y.access.is_none()
    {
        return format!(
            "both are written only under {lx}, which every user of the line holds: true sharing"
        );
    }
    match contexts::judge(&usages[i], &usages[j]) {
        Err(reason) if reason.starts_with("true sharing") => {
            let ctx = |s: &super::Span| s.access.as_ref().map(|acc| acc.describe());
            match (ctx(x), ctx(y)) {
                (Some(cx), Some(cy)) => format!(
                    "true sharing: every context that uses one also uses the other \
                     ({}: {cx}; {}: {cy})",
                    x.name(),
                    y.name()
                ),
                _ => reason.to_owned(),
            }
        }
        Err(reason) => reason.to_owned(),
        // The matrix judges two shorthand fields, and it is the verdict.
        Ok(_) => "the severity matrix does not flag this pair of classes".into(),
    }
}
