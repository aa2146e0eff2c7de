//! `diff` as text and JSON.

use std::fmt::Write;

use super::{Format, Output, Render, to_json};
use crate::diff;
use crate::report::diff::DiffReport;

impl Render for DiffReport {
    const FORMATS: &'static [Format] = &[Format::Text, Format::Json];

    fn render(&self, format: Format) -> Output {
        Output {
            stdout: match format {
                Format::Json => to_json(self),
                _ => text(self),
            },
            notes: self.notes.clone(),
            failed: self.differ,
            highlights: Vec::new(),
        }
    }
}

fn span_lines((a, b): (u64, u64)) -> String {
    if a == b {
        format!("line {a}")
    } else {
        format!("lines {a}-{b}")
    }
}

fn text(r: &DiffReport) -> String {
    let mut out = String::new();
    for t in &r.types {
        let name = &t.name;
        let Some(d) = &t.diff else {
            let _ = writeln!(out, "struct {name}: only in {}", t.present);
            continue;
        };
        let delta = d.size.1 as i64 - d.size.0 as i64;
        let _ = write!(out, "struct {name}: {} -> {} bytes", d.size.0, d.size.1);
        if delta != 0 {
            let lines = |s: u64| s.div_ceil(r.cacheline);
            let _ = write!(
                out,
                " ({delta:+}), {} -> {} lines of {}",
                lines(d.size.0),
                lines(d.size.1),
                r.cacheline
            );
        }
        if d.alignment.0 != d.alignment.1 {
            let _ = write!(out, ", alignment {} -> {}", d.alignment.0, d.alignment.1);
        }
        out.push('\n');
        if d.is_same()
            && t.moved_fields.is_empty()
            && t.findings_fixed.is_empty()
            && t.findings_introduced.is_empty()
        {
            out.push_str("  no difference\n");
            continue;
        }
        if !d.reasons.is_empty() {
            let _ = writeln!(out, "  where the {delta:+} bytes come from:");
            for reason in &d.reasons {
                let indent = "  ".repeat(reason.depth + 2);
                let _ = writeln!(out, "{indent}{:+5}  {}", reason.delta, reason.text);
            }
        }
        if !d.members.is_empty() {
            let width = d.members.iter().map(|m| m.path.len()).max().unwrap_or(0);
            let _ = writeln!(out, "  members:");
            for m in &d.members {
                let at = |p: Option<diff::Place>| {
                    p.map_or("-".to_owned(), |p| {
                        format!(
                            "{} +{} ({})",
                            p.offset,
                            p.size,
                            span_lines((p.line, p.last_line))
                        )
                    })
                };
                let _ = writeln!(
                    out,
                    "    {:<13} {:<width$}  {} -> {}",
                    m.change.word(),
                    m.path,
                    at(m.old),
                    at(m.new)
                );
            }
        }
        if !d.nested.is_empty() {
            let _ = writeln!(out, "  deeper members (--depth all lists them):");
            for n in &d.nested {
                let counts: Vec<String> = n
                    .counts()
                    .iter()
                    .enumerate()
                    .map(|(i, &(count, word))| match (i, count) {
                        (0, 1) => format!("1 nested member {word}"),
                        (0, _) => format!("{count} nested members {word}"),
                        _ => format!("{count} {word}"),
                    })
                    .collect();
                let _ = writeln!(out, "    {}: {}", n.parent, counts.join(", "));
            }
        }
        for g in &d.groups {
            let at = |x: Option<(u64, Option<u64>)>| {
                x.map_or("-".to_owned(), |(b, e)| {
                    e.map_or(format!("{b}- (no end marker)"), |e| format!("{b}-{e}"))
                })
            };
            let _ = writeln!(
                out,
                "  cacheline group {}: {} -> {}",
                g.name,
                at(g.old),
                at(g.new)
            );
        }
        if !t.moved_fields.is_empty() {
            let _ = writeln!(out, "  annotated fields on other lines:");
            for f in &t.moved_fields {
                let _ = writeln!(
                    out,
                    "    {} ({}): {} -> {}",
                    f.path,
                    f.class,
                    span_lines(f.old_lines),
                    span_lines(f.new_lines)
                );
            }
        }
        for (word, list) in [
            ("fixed", &t.findings_fixed),
            ("introduced", &t.findings_introduced),
        ] {
            for p in list {
                let _ = writeln!(out, "  finding {word}: {} {} / {}", p.kind, p.a, p.b);
            }
        }
    }
    let c = &r.config;
    match (&c.old, &c.new) {
        (Some(a), Some(b)) => {
            let _ = writeln!(out, "config: {a} -> {b}");
            for (name, x, y) in &c.layout_options {
                let _ = writeln!(out, "  {name}: {x} -> {y}");
            }
            if c.layout_options.is_empty() {
                out.push_str("  no option known to change struct layouts differs\n");
            }
            let _ = writeln!(out, "  {} other options differ", c.other_options);
        }
        (a, b) => {
            let missing: Vec<&str> = [(a, r.old.as_str()), (b, r.new.as_str())]
                .iter()
                .filter(|(c, _)| c.is_none())
                .map(|(_, n)| *n)
                .collect();
            let _ = writeln!(
                out,
                "config: none found for {} (no CONFIG_IKCONFIG in the image, no .config next to it)",
                missing.join(" and ")
            );
        }
    }
    out
}
