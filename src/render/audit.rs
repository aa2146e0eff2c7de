//! `audit`: compiler-style lines, most worth a patch first: the pairs
//! sharing a line, each with its members' evidence and drafted rules
//! file, then the needless stores, each with why it is hot and who shares
//! the member; JSON in rank order; markdown tables; SARIF for code
//! scanning.

use std::fmt::Write;

use serde_json::json;

use super::diagnostics::plural;
use super::{Format, Output, Render, to_json};
use crate::report::audit::{AuditReport, LayoutFinding, StoreFinding};

impl Render for AuditReport {
    const FORMATS: &'static [Format] =
        &[Format::Text, Format::Json, Format::Markdown, Format::Sarif];

    fn render(&self, format: Format) -> Output {
        let stdout = match format {
            Format::Json => to_json(self),
            Format::Sarif => to_json(&sarif(self)),
            Format::Markdown => markdown(self),
            Format::Text => text(self),
        };
        Output {
            stdout,
            notes: self.notes.clone(),
            failed: false,
            highlights: Vec::new(),
        }
    }
}

/// How many other functions share the member, with a few named.
fn sharers(f: &StoreFinding) -> String {
    let shown: Vec<&str> = f.sharers.iter().take(4).map(String::as_str).collect();
    let n = plural(f.sharers.len(), "other function");
    match f.sharers.len() - shown.len() {
        _ if shown.is_empty() => String::from("no other function seen"),
        0 => format!("{n} ({})", shown.join(", ")),
        more => format!("{n} ({} and {more} more)", shown.join(", ")),
    }
}

fn summary(report: &AuditReport) -> String {
    format!(
        "{} sharing a line in {} of {} structs many CPUs write{}; {} (of {} candidates){} in {:.1} s",
        plural(report.layout_total, "pair"),
        report.rules.len(),
        report.structs,
        match report.layout.len() < report.rules.len() {
            true => format!(", the top {} structs shown", report.layout.len()),
            false => String::new(),
        },
        plural(report.total, "needless store"),
        report.candidates,
        match report.findings.len() < report.total {
            true => format!(", the top {} shown", report.findings.len()),
            false => String::new(),
        },
        report.seconds
    )
}

/// Where a pair's first member is declared, as a diagnostic's start.
fn declared(f: &LayoutFinding) -> String {
    match f.line {
        0 => f.root.clone(),
        n => format!("{}:{n}", f.file),
    }
}

fn text(report: &AuditReport) -> String {
    let mut out = String::new();
    for r in &report.read {
        let _ = writeln!(out, "# {r}");
    }
    for f in &report.layout {
        let _ = writeln!(
            out,
            "{}: {}: {} [{}]",
            declared(f),
            f.severity,
            f.message,
            f.kind
        );
        let _ = writeln!(
            out,
            "    hot: heat {}; {} lockless stores to {} on fast paths; in {}",
            f.heat,
            f.stores,
            match &f.holds {
                Some(held) => format!("{held}, which {} holds,", f.root),
                None => f.root.clone(),
            },
            f.configs.join(", ")
        );
        for e in &f.evidence {
            let _ = writeln!(out, "    {e}");
        }
        if f.pairs > 1 {
            let _ = writeln!(
                out,
                "    {} in {}: {}{}",
                plural(f.pairs - 1, "more pair"),
                f.root,
                f.others.join(", "),
                match f.pairs - 1 - f.others.len() {
                    0 => String::new(),
                    n => format!(" and {n} more"),
                }
            );
        }
        if let Some(file) = &f.rules_file {
            let _ = writeln!(out, "    rules: {file}");
        }
    }
    for f in &report.findings {
        store(&mut out, f, "");
    }
    let _ = writeln!(out, "{}", summary(report));
    out
}

/// Needless store `f` as compiler-style text, its first line after
/// `mark`: where, then why it is hot and who shares the member.
pub(super) fn store(out: &mut String, f: &StoreFinding, mark: &str) {
    let _ = writeln!(
        out,
        "{mark}{}:{}: {}: {} [{}]",
        f.file, f.line, f.severity, f.message, f.kind
    );
    let _ = writeln!(out, "    hot: {}: {}", f.entry, f.hot_path.join(" -> "));
    if let Some(n) = f.samples {
        let _ = writeln!(
            out,
            "    perf: {n:.0} samples on {}.{}",
            f.root,
            f.members.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "    shared: {}; {} touch {}.{} on fast paths",
        f.shared_by
            .iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join(", "),
        sharers(f),
        f.root,
        f.members.join(", ")
    );
}

fn markdown(report: &AuditReport) -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = String::from(
        "| # | struct | members | classes | severity | heat | pairs | where |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for f in &report.layout {
        let _ = writeln!(
            out,
            "| {} | `{}` | `{}` | {} | {} | {} | {} | `{}` |",
            f.rank,
            f.root,
            cell(&f.members.join("`, `")),
            f.classes.join(", "),
            f.severity,
            f.heat,
            f.pairs,
            declared(f)
        );
    }
    out.push_str(
        "\n| # | where | function | member | store | hot path | shared with |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for f in &report.findings {
        let _ = writeln!(
            out,
            "| {} | `{}:{}` | `{}()` | `{}.{}` | {} `{}` | {} | {} |",
            f.rank,
            f.file,
            f.line,
            f.function,
            f.root,
            f.members.join(", "),
            f.how,
            cell(&f.value),
            cell(&f.hot_path.join(" → ")),
            cell(&sharers(f))
        );
    }
    let _ = writeln!(out, "\n{}", summary(report));
    out
}

fn sarif(report: &AuditReport) -> serde_json::Value {
    let pairs = report.layout.iter().map(|f| {
        json!({
            "ruleId": f.kind,
            "level": f.severity,
            "message": { "text": f.message },
            "locations": [{ "physicalLocation": {
                "artifactLocation": { "uri": f.file },
                "region": { "startLine": f.line.max(1) },
            }}],
            "partialFingerprints": {
                "cachelint/pair/v1": format!("{}/{}/{}", f.root, f.kind, f.members.join(",")),
            },
            "properties": {
                "rank": f.rank,
                "classes": f.classes,
                "configs": f.configs,
                "heat": f.heat,
                "score": f.score,
                "pairs": f.pairs,
                "evidence": f.evidence,
            },
        })
    });
    let stores = report
        .findings
        .iter()
        .map(|f| {
            json!({
                "ruleId": f.kind,
                "level": f.severity,
                "message": { "text": f.message },
                "locations": [{ "physicalLocation": {
                    "artifactLocation": { "uri": f.file },
                    "region": { "startLine": f.line },
                }}],
                "partialFingerprints": {
                    "cachelint/store/v1": format!("{}/{}/{}.{}", f.function, f.how, f.root, f.members.join(",")),
                },
                "properties": {
                    "rank": f.rank,
                    "store": f.store,
                    "hotPath": f.hot_path,
                    "sharers": f.sharers,
                    "score": f.score,
                },
            })
        });
    let results: Vec<serde_json::Value> = pairs.chain(stores).collect();
    let mut kinds: Vec<&str> = report.layout.iter().map(|f| f.kind.as_str()).collect();
    kinds.sort();
    kinds.dedup();
    let mut rules: Vec<serde_json::Value> = kinds
        .into_iter()
        .map(|k| {
            json!({
                "id": k,
                "shortDescription": { "text": format!("two members of a struct many CPUs write share a cacheline ({k})") },
                "defaultConfiguration": { "level": "warning" },
            })
        })
        .collect();
    rules.push(json!({
        "id": "needless-store",
        "shortDescription": { "text": "a store on a hot path that may write the value already there, taking a shared cacheline exclusive for nothing" },
        "defaultConfiguration": { "level": "warning" },
    }));
    super::sarif::log(
        rules,
        results,
        &report.notes,
        json!({
            "total": report.total,
            "candidates": report.candidates,
            "pairs": report.layout_total,
            "structs": report.structs,
        }),
    )
}
