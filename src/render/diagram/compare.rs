//! The summary after a before/after drawing: which fields changed lines,
//! which findings were fixed or introduced, and how the size of each
//! struct on the way changed.

use std::collections::{HashMap, HashSet};

use super::wrap;
use crate::analysis::compare::{Comparison, Moved, Pair};
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

/// The summary text of `c`, the comparison of `old` with `new`; `focus`
/// are the span paths the drawing was about (empty: every annotated
/// field).
pub fn summary(
    old: &Side<'_>,
    new: &Side<'_>,
    c: &Comparison,
    focus: &[String],
    width: usize,
) -> String {
    let in_focus = |path: &str| focus.is_empty() || focus.iter().any(|f| f == path);
    let mut named: Vec<&Span> = Vec::new();
    // Fields that changed lines, and those gone, in the old build's order.
    let moved: Vec<&Moved> = c.moved.iter().filter(|m| in_focus(&m.path)).collect();
    let gone: Vec<&String> = c.gone.iter().filter(|p| in_focus(p)).collect();
    let changed: HashSet<&str> = moved
        .iter()
        .map(|m| m.path.as_str())
        .chain(gone.iter().map(|p| p.as_str()))
        .collect();
    named.extend(
        old.analysis
            .annotated
            .spans
            .iter()
            .filter(|s| changed.contains(s.path.as_str())),
    );
    // Then the fields of the findings about the focus.
    let related = |p: &Pair| in_focus(&p.a) || in_focus(&p.b);
    for (a, list) in [(old.analysis, &c.old_pairs), (new.analysis, &c.new_pairs)] {
        for p in list.iter().filter(|p| related(p)) {
            for path in [&p.a, &p.b] {
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
            .map(|m| format!("{} {} -> {}", short(&m.path), m.old, m.new))
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
    // Fixed and introduced pairs that do not touch the focus: counted.
    let mut others = [0, 0];
    for (i, (word, changed)) in [("fixed", c.fixed()), ("introduced", c.introduced())]
        .into_iter()
        .enumerate()
    {
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for p in changed.iter().filter(|p| related(p)) {
            let head = format!("{} {}", p.kind.name(), short(&p.a));
            match groups.iter_mut().find(|(h, _)| *h == head) {
                Some((_, bs)) => bs.push(short(&p.b)),
                None => groups.push((head, vec![short(&p.b)])),
            }
        }
        others[i] = changed.iter().filter(|p| !related(p)).count();
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
    if others != [0, 0] {
        items.push((
            "elsewhere".into(),
            format!("{} fixed, {} introduced (run check)", others[0], others[1]),
        ));
    }
    // Sizes of the structs on the way to the fields.
    let mut types: Vec<String> = vec![old.analysis.root.clone()];
    let annotated = |s: &&Span| s.class.is_some() && in_focus(&s.path);
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
