//! `review`: for a reviewer, one table per struct (size and lines per
//! variant, base to HEAD), its groups, and the kernel's asserts that fail
//! somewhere; or the report as JSON.

use std::fmt::Write;

use comfy_table::{Table, presets};

use super::{Format, Output, Render, to_json};
use crate::diff::{Change, MemberChange};
use crate::report::review::{HoleChange, ReviewReport, Shape, StructOn, StructReview, Verdict};

/// The most members a struct's table of moves lists in text.
const MOVES_SHOWN: usize = 40;

impl Render for ReviewReport {
    const FORMATS: &'static [Format] = &[Format::Text, Format::Json];

    fn render(&self, format: Format) -> Output {
        let stdout = match format {
            Format::Json => to_json(self),
            _ => text(self),
        };
        Output {
            stdout,
            notes: self.notes.clone(),
            failed: self.failed,
            highlights: Vec::new(),
        }
    }
}

fn table(header: Vec<String>) -> Table {
    let mut t = Table::new();
    t.load_style(presets::ASCII_MARKDOWN);
    t.set_header(header);
    t
}

/// A table whose first column is `what` and whose others are `s`'s
/// variants.
fn per_variant(what: &str, s: &StructReview) -> Table {
    let mut header = vec![what.to_owned()];
    header.extend(s.on.iter().map(|o| o.variant.clone()));
    table(header)
}

/// `names` each once, in the order first met: a row per group or member
/// that some variant has.
fn first_seen<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for n in names {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

fn shape(s: Option<Shape>) -> String {
    s.map_or_else(
        || "-".to_owned(),
        |s| format!("{} B, {} lines", s.size, s.lines),
    )
}

fn change(on: &StructOn) -> String {
    match (on.base, on.head) {
        (Some(b), Some(h)) if b == h && on.members.is_empty() && on.holes.is_empty() => {
            "same".to_owned()
        }
        (Some(b), Some(h)) if b == h => "same size".to_owned(),
        (Some(b), Some(h)) => {
            let bytes = h.size as i64 - b.size as i64;
            let lines = h.lines as i64 - b.lines as i64;
            match lines {
                0 => format!("{bytes:+} B"),
                n => format!(
                    "{bytes:+} B, {n:+} line{}",
                    if n.abs() == 1 { "" } else { "s" }
                ),
            }
        }
        (None, Some(_)) => "new".to_owned(),
        (Some(_), None) => "gone".to_owned(),
        (None, None) => "absent".to_owned(),
    }
}

fn verdict(v: &Verdict) -> String {
    match v {
        Verdict::Holds { measured } => format!("ok ({measured})"),
        Verdict::Fails { why, .. } => format!("FAILS: {why}"),
        Verdict::Skipped { why } => format!("not evaluated ({why})"),
    }
}

fn text(r: &ReviewReport) -> String {
    let mut out = String::new();
    let short = |c: &str| c.chars().take(12).collect::<String>();
    let _ = writeln!(
        out,
        "review of {} \"{}\" against {} ({}) in {}, on {}",
        short(&r.head_commit),
        r.subject,
        r.base,
        short(&r.base_commit),
        r.tree,
        r.variants.join(", ")
    );
    for s in &r.structs {
        let _ = writeln!(out);
        let place = match s.header.is_empty() {
            true => String::new(),
            false => format!(" ({})", s.header),
        };
        let _ = writeln!(out, "struct {}{place}", s.name);
        let mut t = table(vec![
            "variant".into(),
            "line".into(),
            "base".into(),
            "head".into(),
            "change".into(),
        ]);
        for on in &s.on {
            let broken = |side: &str| {
                r.broken
                    .iter()
                    .any(|b| b.variant == on.variant && b.side == side)
            };
            let cell = |side: &str, s: Option<Shape>| match broken(side) {
                true => "does not compile".to_owned(),
                false => shape(s),
            };
            let changed = match broken("base") || broken("head") {
                true => "-".to_owned(),
                false => change(on),
            };
            t.add_row(vec![
                on.variant.clone(),
                on.cacheline.to_string(),
                cell("base", on.base),
                cell("head", on.head),
                changed,
            ]);
        }
        let _ = writeln!(out, "{t}");
        let groups = first_seen(s.on.iter().flat_map(|o| &o.groups).map(|g| g.name.as_str()));
        if !groups.is_empty() {
            let mut t = per_variant("group (bytes, base -> head)", s);
            for name in groups {
                let mut row = vec![name.to_owned()];
                for on in &s.on {
                    let size = |v: Option<u64>| v.map_or("-".to_owned(), |v| v.to_string());
                    row.push(match on.groups.iter().find(|g| g.name == name) {
                        Some(g) if g.base == g.head => size(g.head),
                        Some(g) => format!("{} -> {}", size(g.base), size(g.head)),
                        None => "-".to_owned(),
                    });
                }
                t.add_row(row);
            }
            let _ = writeln!(out, "{t}");
        }
        moves(&mut out, s);
    }
    // The kernel's asserts: those failing somewhere, at either revision.
    let failing: Vec<_> = r
        .asserts
        .iter()
        .filter(|a| {
            a.on.iter().any(|(b, h)| {
                matches!(b, Verdict::Fails { .. }) || matches!(h, Verdict::Fails { .. })
            })
        })
        .collect();
    if !r.asserts.is_empty() {
        let _ = writeln!(out);
        let files: Vec<&str> = {
            let mut f: Vec<&str> = r.asserts.iter().map(|a| a.file.as_str()).collect();
            f.dedup();
            f
        };
        let _ = writeln!(
            out,
            "kernel asserts ({}): {} evaluated per variant, {} fail at HEAD somewhere",
            files.join(", "),
            r.asserts.len(),
            r.failures
        );
        if !failing.is_empty() {
            let mut header = vec!["assert".to_owned()];
            header.extend(r.variants.iter().map(|v| format!("{v} (base / head)")));
            let mut t = table(header);
            for a in failing {
                let mut row = vec![format!("{}:{} {}", a.file, a.line, a.text)];
                for (b, h) in &a.on {
                    row.push(format!("{} / {}", verdict(b), verdict(h)));
                }
                t.add_row(row);
            }
            let _ = writeln!(out, "{t}");
        }
    }
    if !r.findings.is_empty() {
        let _ = writeln!(out, "\nfindings of the rules, base -> head:");
        for f in &r.findings {
            let _ = writeln!(
                out,
                "  [{}] {}: {} introduced, {} fixed",
                f.variant,
                f.root,
                f.introduced.len(),
                f.fixed.len()
            );
            for p in &f.introduced {
                let _ = writeln!(out, "    + {} {} {} - {}", p.severity, p.kind, p.a, p.b);
            }
            for p in &f.fixed {
                let _ = writeln!(out, "    - {} {} {} - {}", p.severity, p.kind, p.a, p.b);
            }
        }
    }
    if let Some(stores) = &r.stores {
        let _ = writeln!(
            out,
            "\nneedless stores in the {} file(s) the patch changes, base -> head: {} added, {} removed",
            stores.files.len(),
            stores.added.len(),
            stores.removed.len()
        );
        for f in &stores.added {
            super::audit::store(&mut out, f, "  + ");
        }
        for f in &stores.removed {
            super::audit::store(&mut out, f, "  - ");
        }
    }
    if !r.broken.is_empty() {
        let _ = writeln!(out);
        for b in &r.broken {
            let _ = writeln!(
                out,
                "{} does not compile at {}: {}",
                b.variant, b.side, b.why
            );
        }
    }
    if let Some(c) = &r.compared {
        let roots = match c.roots.is_empty() {
            true => {
                "none of their roots is in a variant that compiles at both revisions".to_owned()
            }
            false => format!(
                "{} compared at the base and HEAD on {}",
                c.roots.join(", "),
                c.variants.join(", ")
            ),
        };
        let rules = match c.drafted.is_empty() {
            true => c.files.join(", "),
            false => "drafted from the tree's source".to_owned(),
        };
        let _ = writeln!(out, "\nrules {rules}: {roots}");
    }
    let broken = match r.broken_at_head.is_empty() {
        true => String::new(),
        false => format!("HEAD does not compile on {}, ", r.broken_at_head.join(", ")),
    };
    let failing: Vec<String> = r
        .asserts
        .iter()
        .filter(|a| !a.fails_on.is_empty())
        .map(|a| format!("{} on {}", a.text, a.fails_on.join(", ")))
        .collect();
    let grown: Vec<String> = r
        .structs
        .iter()
        .filter(|s| !s.grew_on.is_empty())
        .map(|s| format!("{} on {}", s.name, s.grew_on.join(", ")))
        .collect();
    let _ = writeln!(
        out,
        "\ncachelint: review: {} struct(s) on {} variant(s): {broken}{} kernel assert(s) fail at HEAD{}, {} struct(s) take more cachelines{}{}{}",
        r.structs.len(),
        r.variants.len(),
        r.failures,
        named(&failing),
        r.grown,
        named(&grown),
        match r.compared.is_none() {
            true => String::new(),
            false => format!(
                ", {} pair(s) of fields introduced ({} error(s))",
                r.introduced, r.introduced_errors
            ),
        },
        match r.stores.is_none() {
            true => String::new(),
            false => format!(", {} needless store(s) added", r.stores_added),
        }
    );
    out
}

/// ` (A; B; C; and N more)`, or nothing for no names: the summary names
/// what fails, for a maintainer who reads only that line.
fn named(names: &[String]) -> String {
    const SHOWN: usize = 3;
    match names.len() {
        0 => String::new(),
        n if n <= SHOWN => format!(" ({})", names.join("; ")),
        n => format!(" ({}; and {} more)", names[..SHOWN].join("; "), n - SHOWN),
    }
}

/// Struct `s`'s members that the patch adds, removes, moves or resizes,
/// one row each and a column per variant, and the holes it opens or
/// closes.
fn moves(out: &mut String, s: &StructReview) {
    let paths = first_seen(
        s.on.iter()
            .flat_map(|o| &o.members)
            .map(|m| m.path.as_str()),
    );
    if !paths.is_empty() {
        let mut t = per_variant("member (offset, line: base -> head)", s);
        for path in paths.iter().take(MOVES_SHOWN) {
            let mut row = vec![(*path).to_owned()];
            for on in &s.on {
                row.push(match on.members.iter().find(|m| m.path == *path) {
                    Some(m) => member(m),
                    None => "-".to_owned(),
                });
            }
            t.add_row(row);
        }
        let _ = writeln!(out, "{t}");
        if paths.len() > MOVES_SHOWN {
            let _ = writeln!(
                out,
                "... and {} more members (--format json lists them all)",
                paths.len() - MOVES_SHOWN
            );
        }
    }
    for on in s.on.iter().filter(|o| !o.holes.is_empty()) {
        let holes: Vec<String> = on.holes.iter().map(hole).collect();
        let _ = writeln!(out, "holes on {}: {}", on.variant, holes.join("; "));
    }
}

/// One member's change on one variant: `16 -> 72, line 0 -> 1`.
fn member(m: &MemberChange) -> String {
    let lines = |a: u64, b: u64| match a == b {
        true => String::new(),
        false => format!(", line {a} -> {b}"),
    };
    match (m.change, m.old, m.new) {
        (Change::Added, _, Some(n)) => format!("new at {}, line {}", n.offset, n.line),
        (Change::Removed, Some(o), _) => format!("gone (was at {}, line {})", o.offset, o.line),
        (Change::Resized, Some(o), Some(n)) => format!("{} -> {} B", o.size, n.size),
        (Change::MovedResized, Some(o), Some(n)) => format!(
            "{} -> {}{}, {} -> {} B",
            o.offset,
            n.offset,
            lines(o.line, n.line),
            o.size,
            n.size
        ),
        (_, Some(o), Some(n)) => {
            format!("{} -> {}{}", o.offset, n.offset, lines(o.line, n.line))
        }
        _ => m.change.word().to_owned(),
    }
}

/// `opened 4 B at 36, after x`.
fn hole(h: &HoleChange) -> String {
    format!(
        "{} {} B at {}{}",
        if h.opened { "opened" } else { "closed" },
        h.size,
        h.offset,
        h.after
            .as_ref()
            .map_or_else(String::new, |a| format!(", after {a}"))
    )
}
