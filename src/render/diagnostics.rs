//! `check`'s text output: compiler-style diagnostics in the
//! `FILE:LINE: error: message` form kernel CI bots already parse, followed
//! by indented detail lines; then the allowed pairs and a summary. Pairs
//! that differ only in their second field are told in one diagnostic
//! ([`diagnostics`]).

use std::fmt::Write;

use super::style::Marked;
use crate::report::cross_line::{self, ContextOnLine};
use crate::report::{Report, ReportFinding, ReportSide, diagnostics};
use crate::rules::Kind;

/// The whole text report, each diagnostic's location and severity marked
/// for colour.
pub fn report(report: &Report) -> Marked {
    let mut out = Marked::default();
    for group in diagnostics(&report.findings) {
        diagnostic(&mut out, group);
    }
    for f in &report.allowed {
        let _ = writeln!(
            out,
            "allowed: [{}] {} '{}' and {} '{}' share cacheline {} of {}: {}",
            f.config,
            f.a.class,
            f.a.path,
            f.b.class,
            f.b.path,
            f.cacheline,
            f.root,
            f.allowed.as_deref().unwrap_or_default()
        );
    }
    let s = &report.summary;
    let _ = writeln!(
        out,
        "cachelint: {} in {} ({} of fields; {} allowed, {} in the baseline){}",
        counts(s.errors, s.warnings, s.notes),
        plural(report.builds.len(), "build"),
        plural(s.pairs, "pair"),
        s.allowed,
        s.in_baseline,
        match s.messages {
            0 => String::new(),
            n => format!("; {}", plural(n, "message")),
        }
    );
    out
}

/// One diagnostic for findings that share their first field and line:
/// the headline, then a detail line per field.
fn diagnostic(out: &mut Marked, group: &[ReportFinding]) {
    let f = &group[0];
    out.diagnostic_head(
        &location(&f.a).unwrap_or_else(|| f.config.clone()),
        f.severity,
    );
    let sides: Vec<&ReportSide> = match f.kind {
        Kind::CrossContext => {
            cross_context_head(out, group);
            // Each field once: the writers, then the fields used.
            let mut sides: Vec<&ReportSide> = Vec::new();
            for s in group.iter().map(|g| &g.a).chain(group.iter().map(|g| &g.b)) {
                if !sides.iter().any(|x| x.part == s.part) {
                    sides.push(s);
                }
            }
            sides
        }
        _ => {
            let partners: Vec<String> = group.iter().map(|g| format!("'{}'", g.b.name)).collect();
            let _ = writeln!(
                out,
                "[{}] {} '{}' shares cacheline {} of {} with {} {}{} ({})",
                f.config,
                f.a.class,
                f.a.name,
                f.cacheline,
                f.root,
                f.b.class,
                partners.join(", "),
                in_each(f),
                f.description
            );
            std::iter::once(&f.a)
                .chain(group.iter().map(|g| &g.b))
                .collect()
        }
    };
    let width = sides.iter().map(|s| s.part.len()).max().unwrap_or(0);
    for side in sides {
        let _ = write!(
            out,
            "    {:<14} {:<width$}  bytes {}-{} (member at {}, {}",
            side.class,
            side.part,
            side.bytes[0],
            side.bytes[1],
            side.offset,
            plural(side.size as usize, "byte")
        );
        if let Some(lock) = &side.lock
            && side.class == "lock-protected"
        {
            let _ = write!(out, ", under {lock}");
        }
        if let Some(group) = &side.group {
            let _ = write!(out, ", group {group}");
        }
        if let Some(contexts) = &side.contexts {
            let _ = write!(out, ", {contexts}");
        }
        if let Some(n) = side.samples {
            let _ = write!(out, ", {}", plural(n as usize, "sample"));
        }
        match location(side) {
            Some(at) => {
                let _ = writeln!(out, ", {at})");
            }
            None => out.push_str(")\n"),
        }
    }
    let _ = write!(
        out,
        "    cacheline {} = bytes {}-{} of struct {}",
        f.cacheline, f.cacheline_bytes[0], f.cacheline_bytes[1], f.root
    );
    let mut more: Vec<u64> = group
        .iter()
        .flat_map(|g| g.cachelines[1..].iter().copied())
        .collect();
    more.sort_unstable();
    more.dedup();
    if !more.is_empty() {
        let others: Vec<String> = more.iter().map(u64::to_string).collect();
        let also = match f.elements {
            Some(_) => "; and in the other elements, cacheline",
            None => "; they also share cacheline",
        };
        let _ = write!(out, "{also} {}", others.join(", "));
    }
    out.push('\n');
    if let Some(p) = &f.placement {
        let _ = writeln!(
            out,
            "    struct {} is not cacheline-aligned: the pair shares a line in {} of {} placements; lines shown with the struct at byte {} of a line",
            f.root, p.sharing, p.of, p.root_offset
        );
    }
    if let Some(heat) = f.heat {
        let _ = writeln!(
            out,
            "    heat {heat}: the colder side's, from the rules' [heat] (findings come hottest first)"
        );
    }
}

/// The headline of one line's cross-context sharing, and a line per
/// context: what it writes, and what the others' writes cost it.
fn cross_context_head(out: &mut Marked, group: &[ReportFinding]) {
    let f = &group[0];
    let contexts = cross_line::contexts_on_line(group);
    let quoted = |v: &[String]| {
        v.iter()
            .map(|p| format!("'{p}'"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let writers: Vec<&str> = contexts
        .iter()
        .filter(|c| !c.writes.is_empty())
        .map(|c| c.context.as_str())
        .collect();
    let _ = writeln!(
        out,
        "[{}] cacheline {} of {} is written in {} and used without those writes in {} \
         ({} of fields{}; {})",
        f.config,
        f.cacheline,
        f.root,
        writers.join(", "),
        contexts
            .iter()
            .filter(|c| !c.uses.is_empty())
            .map(|c| c.context.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        plural(group.len(), "pair"),
        in_each(f),
        Kind::CrossContext.description()
    );
    for c in contexts.iter().filter(|c| !c.writes.is_empty()) {
        let _ = writeln!(out, "    {} writes {}", c.context, quoted(&c.writes));
    }
    for ContextOnLine {
        context,
        uses,
        bytes,
        from,
        ..
    } in &contexts
    {
        if !uses.is_empty() {
            let _ = writeln!(
                out,
                "    {context} uses {} of the line ({}), and loses it to every write of {}",
                plural(*bytes as usize, "byte"),
                quoted(uses),
                from.join(", ")
            );
        }
    }
}

/// `lockless-write 'refaulted' shares cacheline 23 of mem_cgroup_per_node
/// with hot-read 'enabled' (false sharing: ...)`.
pub fn headline(f: &ReportFinding) -> String {
    format!(
        "{} '{}' shares cacheline {} of {} with {} '{}'{} ({})",
        f.a.class,
        f.a.name,
        f.cacheline,
        f.root,
        f.b.class,
        f.b.name,
        in_each(f),
        f.description
    )
}

/// ` in each of node_zones[0..4]` for a finding repeated per element (its
/// line is the first element's), else nothing.
fn in_each(f: &ReportFinding) -> String {
    f.elements
        .as_ref()
        .map(|e| format!(" in each of {}", e.range()))
        .unwrap_or_default()
}

fn location(side: &ReportSide) -> Option<String> {
    Some(format!("{}:{}", side.decl_file.as_ref()?, side.decl_line?))
}

/// `n` and `word`, plural but for one: `1 warning`, `3 warnings`.
pub(super) fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn counts(errors: usize, warnings: usize, notes: usize) -> String {
    format!(
        "{}, {}, {}",
        plural(errors, "error"),
        plural(warnings, "warning"),
        plural(notes, "note")
    )
}
