//! `suggest`: the per-build tables (findings, sizes), the order and the
//! plan file.

use std::fmt::Write;

use comfy_table::{Table, presets};
use serde::Serialize;

use super::{Format, Output, Render, to_json};
use crate::report::suggest::{Method, Role, SuggestReport, SuggestReports};

impl Render for SuggestReport {
    const FORMATS: &'static [Format] = &[Format::Text, Format::Json];

    fn render(&self, format: Format) -> Output {
        let stdout = match format {
            Format::Json => to_json(&Json::of(self)),
            _ => text(self),
        };
        Output {
            stdout,
            notes: self.notes.clone(),
            failed: false,
            highlights: Vec::new(),
        }
    }
}

impl Render for SuggestReports {
    const FORMATS: &'static [Format] = SuggestReport::FORMATS;

    /// One type: its report as `suggest BUILD... TYPE` writes it. Several:
    /// the reports one after the other (text), or a JSON array of them, a
    /// refused type as `{"name": TYPE, "refused": WHY}`; the notes
    /// prefixed with their type; exit code 1 when a type was refused.
    fn render(&self, format: Format) -> Output {
        if let [Ok(one)] = self.reports.as_slice() {
            return one.render(format);
        }
        let mut notes = Vec::new();
        let mut texts = Vec::new();
        let mut values = Vec::new();
        for r in &self.reports {
            match r {
                Ok(report) => {
                    notes.extend(report.notes.iter().map(|n| format!("{}: {n}", report.name)));
                    match format {
                        Format::Json => values.push(
                            serde_json::to_value(Json::of(report)).expect("JSON of plain data"),
                        ),
                        _ => texts.push(text(report)),
                    }
                }
                Err((name, why)) => {
                    notes.push(format!("{name}: refused: {why}"));
                    match format {
                        Format::Json => {
                            values.push(serde_json::json!({ "name": name, "refused": why }))
                        }
                        _ => texts.push(format!("suggest struct {name}: refused: {why}\n")),
                    }
                }
            }
        }
        let notes = crate::report::unique_notes(notes);
        Output {
            stdout: match format {
                Format::Json => to_json(&values),
                _ => texts.join("\n"),
            },
            notes,
            failed: self.reports.iter().any(Result::is_err),
            highlights: Vec::new(),
        }
    }
}

/// The report in JSON, with the diagram as its text (`diagram` has no
/// JSON of its own).
#[derive(Serialize)]
struct Json<'a> {
    #[serde(flatten)]
    report: &'a SuggestReport,
    diagram: Option<String>,
    /// The struct in the suggested order, as C (`layout --plan`'s text).
    c: Option<String>,
}

impl<'a> Json<'a> {
    fn of(report: &'a SuggestReport) -> Json<'a> {
        Json {
            report,
            diagram: report
                .diagram
                .as_ref()
                .map(|d| d.render(Format::Text).stdout),
            c: report.c.as_ref().map(|c| c.render(Format::Text).stdout),
        }
    }
}

fn text(r: &SuggestReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "suggest struct {}: {}; searched in {:.2} s",
        r.name,
        method(r),
        r.seconds
    );
    if !r.packing {
        let _ = writeln!(out, "ranked by: {} (--rank)", r.rank.join(", "));
    }
    if let Some(g) = &r.gap {
        let at = g.errors == 0 && g.warnings == 0 && g.notes == 0 && g.footprint_lines == 0;
        let _ = writeln!(
            out,
            "from the bounds (no pair, each context in its fewest lines): {} error pairs, {} \
             warning pairs, {} note pairs, {} context lines over{}; worst growth {} lines",
            g.errors,
            g.warnings,
            g.notes,
            g.footprint_lines,
            if at {
                " (no order has fewer findings or a smaller footprint)"
            } else {
                ""
            },
            g.growth_lines
        );
    }
    out.push('\n');
    if !r.packing {
        let mut table = Table::new();
        table.load_style(presets::ASCII_FULL_CONDENSED);
        let sampled = r.builds.iter().any(|b| b.samples.is_some());
        let mut header = vec!["config", "error pairs", "warning pairs", "note pairs"];
        if sampled {
            header.push("perf samples on their fields");
        }
        table.set_header(header);
        for b in &r.builds {
            let mut row = vec![
                b.config.clone(),
                format!("{} -> {}", b.errors[0], b.errors[1]),
                format!("{} -> {}", b.warnings[0], b.warnings[1]),
                format!("{} -> {}", b.notes[0], b.notes[1]),
            ];
            if let Some([before, after]) = b.samples {
                row.push(format!("{before} -> {after}"));
            }
            table.add_row(row);
        }
        let _ = writeln!(out, "{table}");
    }
    let mut table = Table::new();
    table.load_style(presets::ASCII_FULL_CONDENSED);
    let least = r.builds.iter().any(|b| b.least.is_some());
    let mut header = vec!["config", "struct", "bytes", "cachelines", "growth"];
    if least {
        header.push("least any order gives");
    }
    table.set_header(header);
    for b in &r.builds {
        for s in &b.sizes {
            let name = match s.role {
                Role::Struct => s.ty.clone(),
                Role::Root => format!("{} (root)", s.ty),
            };
            let mut row = vec![
                b.config.clone(),
                name,
                format!("{} -> {}", s.bytes[0], s.bytes[1]),
                format!("{} -> {}", s.lines[0], s.lines[1]),
                growth(s.growth.bytes, s.growth.lines),
            ];
            if least {
                row.push(match b.least {
                    Some(n) if n == s.bytes[1] => format!("{n} (reached: the smallest)"),
                    Some(n) => n.to_string(),
                    None => "-".into(),
                });
            }
            table.add_row(row);
        }
    }
    if r.packing {
        let _ = writeln!(out, "size, compiled -> suggested:\n{table}");
    } else {
        let _ = writeln!(
            out,
            "\nsizes, compiled -> suggested: struct {}, then the roots that embed it\n{table}",
            r.name
        );
    }
    if r.builds.iter().any(|b| !b.footprint.is_empty()) {
        let mut table = Table::new();
        table.load_style(presets::ASCII_FULL_CONDENSED);
        table.set_header([
            "config",
            "context",
            "lines compiled",
            "suggested",
            "optimum",
        ]);
        for b in &r.builds {
            for (context, before, after, optimum) in &b.footprint {
                table.add_row([
                    b.config.clone(),
                    context.clone(),
                    before.to_string(),
                    after.to_string(),
                    optimum.to_string(),
                ]);
            }
        }
        let _ = writeln!(
            out,
            "\nlines of struct {} each context touches:\n{table}",
            r.name
        );
    }
    for a in &r.alone {
        let _ = writeln!(
            out,
            "\none order for every build costs {} what an order of its own does not: climbed \
             alone from the suggestion, {} finds\n  {}\nwhich gives, against the suggestion:",
            a.config,
            a.config,
            a.order.join(", ")
        );
        let mut table = Table::new();
        table.load_style(presets::ASCII_FULL_CONDENSED);
        table.set_header([
            "config",
            "error pairs",
            "warning pairs",
            "note pairs",
            "worst root growth",
        ]);
        for b in &a.builds {
            table.add_row([
                b.config.clone(),
                format!("{} -> {}", b.errors[0], b.errors[1]),
                format!("{} -> {}", b.warnings[0], b.warnings[1]),
                format!("{} -> {}", b.notes[0], b.notes[1]),
                format!("{:+} -> {:+} lines", b.growth_lines[0], b.growth_lines[1]),
            ]);
        }
        let _ = writeln!(out, "{table}");
        let at: Vec<String> = a
            .offsets
            .iter()
            .map(|p| {
                format!(
                    "{} {} in {} ({} into a line)",
                    p.root, p.offset, p.config, p.in_line
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "where struct {} starts decides the lines its members share: {}",
            r.name,
            at.join(", ")
        );
    }
    if !r.removed.is_empty() {
        let _ = writeln!(out, "\nremoved: {}", r.removed.join(", "));
    }
    if !r.per_config.is_empty() {
        let members: Vec<String> = r
            .per_config
            .iter()
            .map(|p| format!("{} ({})", p.member, p.configs.join(", ")))
            .collect();
        let _ = writeln!(
            out,
            "\nin some builds only (optional in the plan; laid out where present): {}",
            members.join(", ")
        );
    }
    let _ = writeln!(out, "\norder ({} moved): {}\n", r.moved, r.order.join(", "));
    match &r.plan_out {
        Some(p) => {
            let _ = writeln!(out, "plan written to {p}; check it with --plan {p}:");
        }
        None => out.push_str("plan (--plan-out FILE writes it; check it with --plan FILE):\n"),
    }
    out.push_str(&r.plan);
    if let (Some(c), Some(first)) = (&r.c, r.builds.first()) {
        let _ = writeln!(
            out,
            "\nthe struct in the new order, as C (on {}; layout --macros --plan PLAN BUILD TYPE):\n",
            first.config
        );
        out.push_str(&c.render(Format::Text).stdout);
    }
    if let Some(diagram) = &r.diagram {
        out.push_str("\ndiagram (diagram --plan PLAN BUILD TYPE --compare BUILD):\n\n");
        out.push_str(&diagram.render(Format::Text).stdout);
    }
    if let Some(asserts) = &r.asserts {
        out.push_str("\ncheck function (asserts --plan PLAN BUILD TYPE):\n\n");
        out.push_str(&asserts.render(Format::Text).stdout);
    }
    if let Some(patch) = &r.patch {
        out.push_str("\nheader patch (git apply takes it in the source tree):\n");
        out.push_str(patch);
    }
    out
}

/// A growth in bytes and lines, or `same`.
fn growth(bytes: i64, lines: i64) -> String {
    if bytes == 0 {
        return "same".to_owned();
    }
    let unit = if lines.abs() == 1 { "line" } else { "lines" };
    format!("{bytes:+} bytes, {lines:+} {unit}")
}

/// How the search went, in words.
fn method(r: &SuggestReport) -> String {
    let builds = match r.builds.len() {
        1 => "1 build".to_owned(),
        n => format!("{n} builds"),
    };
    let laid = "every layout is the plan engine's, as the compiler gives it";
    let packing = "packing only (no rules): the smallest size, then the fewest members moved";
    match (r.method, r.packing) {
        (Method::Exhaustive, true) => format!(
            "{packing}; exhaustive: every order of the members, {}: the best order there is; \
             {laid}; {} layouts on {builds}",
            r.members, r.tried
        ),
        (Method::Exhaustive, false) => format!(
            "exhaustive: every order of the members (and, with lockless writers, every order \
             with them as one cacheline-aligned group), {}: the best order there is; {laid}; {} \
             layouts on {builds}",
            r.members, r.tried
        ),
        (Method::Compared, true) => format!(
            "{packing}; {} members; the compiled order against packing orders (by alignment \
             then size, and holes filled), no climb; {laid}; {} layouts on {builds}",
            r.members, r.tried
        ),
        (Method::Climb, true) => format!(
            "{packing}; {} members; packing orders (by alignment then size, and holes filled), \
             then a hill climb from the best (moves of one to three members, swaps), {} \
             round(s): a local optimum, not proven best; {laid}; {} layouts on {builds}",
            r.members, r.rounds, r.tried
        ),
        (Method::GroupClimb { batch }, _) => {
            let stop = match r.budget {
                Some(budget) if r.tried >= budget => {
                    format!("stopped at its budget of {budget} layouts")
                }
                _ => "no move improved".to_owned(),
            };
            let contexts = r.builds.iter().any(|b| !b.footprint.is_empty());
            let (start, inside) = match contexts {
                true => (
                    "a context order (members grouped by the contexts that use them, kernel \
                     groups named as netdev names them, each packed by alignment)",
                    ", a member inside its group and a group among the groups",
                ),
                false => ("the compiled order", ""),
            };
            format!(
                "{} members, too many for a full climb: a climb from {start} in which each round \
                 tries moving one member the rules class to every place (nearest first){inside} \
                 and the lockless writers gathered into one cacheline-aligned group, and takes \
                 the first batch of {batch} that improves; {laid}; {} layouts on {builds} in {} \
                 rounds, {stop}: a local optimum, not proven best",
                r.members, r.tried, r.rounds
            )
        }
        (Method::Compared, false) => format!(
            "{} members, too many to climb: the compiled order against a context order \
             (members grouped by the contexts that use them, kernel groups named as netdev \
             names them, each packed by alignment); {laid}; {} layouts on {builds}",
            r.members, r.tried
        ),
        (Method::Climb, false) => format!(
            "hill climb from the compiled order (and from a context order, with context \
             rules): each round tries every move of a block of one to three members, every \
             swap of two, and the lockless writers gathered into one cacheline-aligned group, \
             and keeps the best; a second climb from the same start ranks growth right after \
             errors, and the better of the two is kept; {laid}; {} layouts on {builds} in {} \
             rounds: a local optimum, not proven best",
            r.tried, r.rounds
        ),
    }
}
