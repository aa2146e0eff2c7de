//! The summary after a before/after drawing: which fields changed lines,
//! which findings were fixed or introduced, and how the size of each
//! struct on the way changed.

use std::collections::HashMap;

use super::wrap;
use crate::analysis::{Analysis, Span};

/// One side of a comparison.
pub struct Side<'a> {
    /// Config label.
    pub config: &'a str,
    /// The analysed root.
    pub analysis: &'a Analysis,
    /// Sizes of the structs found in that build.
    pub type_sizes: &'a HashMap<String, u64>,
}

/// The summary text; `focus` are the span paths the drawing was about
/// (empty: every annotated field).
pub fn summary(old: &Side<'_>, new: &Side<'_>, focus: &[String], width: usize) -> String {
    let in_focus = |path: &str| focus.is_empty() || focus.iter().any(|f| f == path);
    // Fields that changed lines.
    let lines_of = |a: &Analysis, s: &Span| {
        let first = s.offset / a.cacheline;
        let last = (s.end().max(s.offset + 1) - 1) / a.cacheline;
        if first == last {
            format!("{first}")
        } else {
            format!("{first}-{last}")
        }
    };
    let annotated = |s: &&Span| s.class.is_some() && in_focus(&s.path);
    let mut named: Vec<&Span> = Vec::new();
    let mut moved = Vec::new();
    let mut gone = Vec::new();
    for s in old.analysis.annotated.spans.iter().filter(annotated) {
        match new
            .analysis
            .annotated
            .spans
            .iter()
            .find(|n| n.path == s.path)
        {
            Some(n) => {
                let (before, after) = (lines_of(old.analysis, s), lines_of(new.analysis, n));
                if before != after {
                    moved.push((s.path.clone(), format!("{before} -> {after}")));
                    named.push(s);
                }
            }
            None => {
                gone.push(s.path.clone());
                named.push(s);
            }
        }
    }
    // Findings fixed and introduced, grouped by kind and first field.
    let pairs = |a: &Analysis| -> Vec<(String, String, String)> {
        let mut v: Vec<_> = a
            .findings
            .iter()
            .filter(|f| f.allowed.is_none())
            .map(|f| {
                (
                    f.kind.name().to_owned(),
                    a.span(&f.a).path.clone(),
                    a.span(&f.b).path.clone(),
                )
            })
            .collect();
        v.dedup();
        v
    };
    let (before, after) = (pairs(old.analysis), pairs(new.analysis));
    let related = |p: &(String, String, String)| in_focus(&p.1) || in_focus(&p.2);
    for (a, list) in [(old.analysis, &before), (new.analysis, &after)] {
        for p in list.iter().filter(|p| related(p)) {
            for path in [&p.1, &p.2] {
                if let Some(s) = a.annotated.spans.iter().find(|s| &s.path == path)
                    && !named.iter().any(|n| n.path == s.path)
                {
                    named.push(s);
                }
            }
        }
    }
    let (labels, legend) = super::labels(&named);
    let short = |path: &str| {
        named
            .iter()
            .position(|s| s.path == path)
            .map_or(path.to_owned(), |i| labels[i].clone())
    };
    let mut items: Vec<(String, String)> = Vec::new();
    const MAX_LISTED: usize = 12;
    if moved.is_empty() {
        items.push(("lines".into(), "no annotated field changed lines".into()));
    } else {
        let more = moved.len().saturating_sub(MAX_LISTED);
        let mut list: Vec<String> = moved
            .iter()
            .take(MAX_LISTED)
            .map(|(p, change)| format!("{} {change}", short(p)))
            .collect();
        if more > 0 {
            list.push(format!("and {more} more"));
        }
        items.push(("lines".into(), list.join(", ")));
    }
    if !gone.is_empty() {
        let list: Vec<String> = gone.iter().map(|p| short(p)).collect();
        items.push((format!("only in {}", old.config), list.join(", ")));
    }
    let mut others = (0, 0);
    for (word, from, to) in [("fixed", &before, &after), ("introduced", &after, &before)] {
        let changed: Vec<&(String, String, String)> =
            from.iter().filter(|p| !to.contains(p)).collect();
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for p in changed.iter().filter(|p| related(p)) {
            let head = format!("{} {}", p.0, short(&p.1));
            match groups.iter_mut().find(|(h, _)| *h == head) {
                Some((_, bs)) => bs.push(short(&p.2)),
                None => groups.push((head, vec![short(&p.2)])),
            }
        }
        let unrelated = changed.iter().filter(|p| !related(p)).count();
        if word == "fixed" {
            others.0 = unrelated;
        } else {
            others.1 = unrelated;
        }
        let text = if groups.is_empty() {
            "none".to_owned()
        } else {
            groups
                .iter()
                .map(|(h, bs)| format!("{h} / {}", bs.join(", ")))
                .collect::<Vec<_>>()
                .join("; ")
        };
        items.push((word.into(), text));
    }
    if others != (0, 0) {
        items.push((
            "elsewhere".into(),
            format!("{} fixed, {} introduced (run check)", others.0, others.1),
        ));
    }
    // Sizes of the structs on the way to the fields.
    let mut types: Vec<String> = vec![old.analysis.root.clone()];
    for s in old.analysis.annotated.spans.iter().filter(annotated) {
        for (ty, _) in &s.owners {
            if !types.contains(ty) {
                types.push(ty.clone());
            }
        }
    }
    let sizes: Vec<String> = types
        .iter()
        .map(|t| match (old.type_sizes.get(t), new.type_sizes.get(t)) {
            (Some(a), Some(b)) if a == b => format!("{t} {a} (same)"),
            (Some(a), Some(b)) => {
                let delta = *b as i128 - *a as i128;
                let line = old.analysis.cacheline;
                let lines = b.div_ceil(line) as i128 - a.div_ceil(line) as i128;
                let unit = if lines.abs() == 1 { "line" } else { "lines" };
                format!("{t} {a} -> {b} ({delta:+} bytes, {lines:+} {unit})")
            }
            (Some(a), None) => format!("{t} {a} -> absent"),
            (None, Some(b)) => format!("{t} absent -> {b}"),
            (None, None) => format!("{t} (size unknown)"),
        })
        .collect();
    items.push(("sizes".into(), sizes.join(", ")));
    let mut out = format!("summary ({} -> {}):\n", old.config, new.config);
    for (label, text) in items.iter().chain(
        legend
            .iter()
            .map(|l| (String::new(), l.clone()))
            .collect::<Vec<_>>()
            .iter(),
    ) {
        let line = if label.is_empty() {
            text.clone()
        } else {
            format!("{label}: {text}")
        };
        for l in wrap(&line, width.saturating_sub(2), "    ") {
            out.push_str("  ");
            out.push_str(&l);
            out.push('\n');
        }
    }
    out
}
