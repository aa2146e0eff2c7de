//! `review`: for a reviewer, one table per struct (size and lines per
//! variant, base to HEAD), its groups, and the kernel's asserts that fail
//! somewhere; or the report as JSON.

use std::fmt::Write;

use comfy_table::{Table, presets};

use super::{Format, Output, Render, to_json};
use crate::report::review::{ReviewReport, Shape, Verdict};

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

fn shape(s: Option<Shape>) -> String {
    s.map_or_else(
        || "-".to_owned(),
        |s| format!("{} B, {} lines", s.size, s.lines),
    )
}

fn change(base: Option<Shape>, head: Option<Shape>) -> String {
    match (base, head) {
        (Some(b), Some(h)) if b == h => "same".to_owned(),
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
                false => change(on.base, on.head),
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
        let mut groups: Vec<&str> = Vec::new();
        for on in &s.on {
            for g in &on.groups {
                if !groups.contains(&g.name.as_str()) {
                    groups.push(&g.name);
                }
            }
        }
        if !groups.is_empty() {
            let mut header = vec!["group (bytes, base -> head)".to_owned()];
            header.extend(s.on.iter().map(|o| o.variant.clone()));
            let mut t = table(header);
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
                let _ = writeln!(out, "    + {} {} - {}", p.kind, p.a, p.b);
            }
            for p in &f.fixed {
                let _ = writeln!(out, "    - {} {} - {}", p.kind, p.a, p.b);
            }
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
    let broken = match r.broken_at_head.is_empty() {
        true => String::new(),
        false => format!("HEAD does not compile on {}, ", r.broken_at_head.join(", ")),
    };
    let _ = writeln!(
        out,
        "\ncachelint: review: {} struct(s) on {} variant(s): {broken}{} kernel assert(s) fail at HEAD, {} struct(s) take more cachelines{}",
        r.structs.len(),
        r.variants.len(),
        r.failures,
        r.grown,
        match r.findings.is_empty() {
            true => String::new(),
            false => format!(", {} pair(s) of fields introduced", r.introduced),
        }
    );
    out
}
