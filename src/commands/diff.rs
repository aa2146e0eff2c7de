//! `cachelint diff OLD NEW TYPE...`: what changed in each struct between
//! two builds, why its size changed, and (with rules) which annotated
//! fields changed lines and which findings came or went. Exit code 1 when
//! anything differs, so it works as a gate (codiff always exits 0).

use std::collections::HashSet;
use std::fmt::Write;
use std::path::PathBuf;

use serde::Serialize;

use super::analyze::{Roots, analyze_build};
use super::check::rules_fit;
use super::{Output, to_json};
use crate::analysis::Analysis;
use crate::diff::{self, Side, TypeDiff};
use crate::error::Result;
use crate::kconfig;
use crate::load::{self, Build, Source};
use crate::rules::Rules;

/// Output format of `diff`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffFormat {
    /// Text.
    Text,
    /// JSON.
    Json,
}

/// Everything `diff` needs.
#[derive(Clone, Debug)]
pub struct DiffOptions {
    /// The old build.
    pub old: Build,
    /// The new build.
    pub new: Build,
    /// Types to compare.
    pub types: Vec<String>,
    /// Rules files (optional).
    pub rules: Vec<PathBuf>,
    /// Output format.
    pub format: DiffFormat,
    /// Cacheline size override.
    pub cacheline: Option<u64>,
    /// DWARF, BTF, or whichever the files have (the same for both).
    pub source: Source,
}

/// An annotated field on other lines.
#[derive(Clone, Debug, Serialize)]
struct MovedField {
    path: String,
    class: String,
    old_lines: (u64, u64),
    new_lines: (u64, u64),
}

/// A finding as `diff` lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
struct Pair {
    kind: String,
    a: String,
    b: String,
}

#[derive(Serialize)]
struct TypeReport {
    name: String,
    /// `both`, or the build the type exists in.
    present: String,
    diff: Option<TypeDiff>,
    moved_fields: Vec<MovedField>,
    findings_fixed: Vec<Pair>,
    findings_introduced: Vec<Pair>,
}

#[derive(Serialize)]
struct ConfigReport {
    old: Option<String>,
    new: Option<String>,
    layout_options: Vec<(String, String, String)>,
    other_options: usize,
}

#[derive(Serialize)]
struct DiffReport {
    cacheline: u64,
    old: String,
    new: String,
    types: Vec<TypeReport>,
    config: ConfigReport,
    differ: bool,
}

/// Runs `diff`.
pub fn diff(opts: &DiffOptions) -> Result<Output> {
    let (cacheline, mut types, configs) = load::open(&opts.old, &opts.source, |old| {
        load::open(&opts.new, &opts.source, |new| {
            let line = opts.cacheline.unwrap_or(new.cacheline);
            if opts.cacheline.is_none() && old.cacheline != new.cacheline {
                return Err(crate::error::Error::Usage(format!(
                    "the builds have different cacheline sizes ({} and {}); pass --cacheline",
                    old.cacheline, new.cacheline
                )));
            }
            let names: HashSet<&str> = opts.types.iter().map(String::as_str).collect();
            let old_found = old.find_present(&names)?.types;
            let new_found = new.find_present(&names)?.types;
            let mut out = Vec::new();
            for name in &opts.types {
                let (diff, present) = match (old_found.get(name), new_found.get(name)) {
                    (Some(o), Some(n)) => {
                        let d = diff::diff(
                            name,
                            Side {
                                table: old.table(),
                                id: o.id,
                            },
                            Side {
                                table: new.table(),
                                id: n.id,
                            },
                            line,
                        )?;
                        (Some(d), "both".to_owned())
                    }
                    (None, None) => return Err(new.unknown_type(name)),
                    (Some(_), None) => (None, opts.old.config.clone()),
                    (None, Some(_)) => (None, opts.new.config.clone()),
                };
                out.push(TypeReport {
                    name: name.clone(),
                    present,
                    diff,
                    moved_fields: Vec::new(),
                    findings_fixed: Vec::new(),
                    findings_introduced: Vec::new(),
                });
            }
            Ok((line, out, (old.kernel_config(), new.kernel_config())))
        })
    })?;
    let mut notes = Vec::new();
    if !opts.rules.is_empty() {
        let rules = Rules::load(&opts.rules)?;
        for report in types.iter_mut().filter(|r| r.diff.is_some()) {
            let builds = [opts.old.clone(), opts.new.clone()];
            let name = report.name.as_str();
            let old = analyze_build(
                &builds[0],
                &rules,
                opts.cacheline,
                Roots::Only(name),
                &opts.source,
            )?;
            let new = analyze_build(
                &builds[1],
                &rules,
                opts.cacheline,
                Roots::Only(name),
                &opts.source,
            )?;
            notes.extend(rules_fit(
                &rules,
                &builds,
                &opts.source,
                &[&old.checks, &new.checks],
            )?);
            notes.extend(old.notes.iter().chain(&new.notes).cloned());
            let (a, b) = (&old.roots[0].analysis, &new.roots[0].analysis);
            report.moved_fields = moved_fields(a, b);
            let (pa, pb) = (pairs(a), pairs(b));
            report.findings_fixed = pa.iter().filter(|p| !pb.contains(p)).cloned().collect();
            report.findings_introduced = pb.iter().filter(|p| !pa.contains(p)).cloned().collect();
        }
    }
    let config = config_report(configs);
    let differ = types.iter().any(|r| {
        r.present != "both"
            || r.diff.as_ref().is_some_and(|d| !d.is_same())
            || !r.moved_fields.is_empty()
            || !r.findings_fixed.is_empty()
            || !r.findings_introduced.is_empty()
    });
    let report = DiffReport {
        cacheline,
        old: opts.old.config.clone(),
        new: opts.new.config.clone(),
        types,
        config,
        differ,
    };
    let stdout = match opts.format {
        DiffFormat::Json => to_json(&report),
        DiffFormat::Text => text(&report),
    };
    let mut seen = HashSet::new();
    notes.retain(|n| seen.insert(n.clone()));
    Ok(Output {
        stdout,
        notes,
        failed: report.differ,
    })
}

fn lines(a: &Analysis, offset: u64, size: u64) -> (u64, u64) {
    (
        offset / a.cacheline,
        (offset + size.max(1) - 1) / a.cacheline,
    )
}

fn moved_fields(old: &Analysis, new: &Analysis) -> Vec<MovedField> {
    old.annotated
        .spans
        .iter()
        .filter(|s| s.class.is_some())
        .filter_map(|s| {
            let n = new.annotated.spans.iter().find(|n| n.path == s.path)?;
            let (a, b) = (lines(old, s.offset, s.size), lines(new, n.offset, n.size));
            (a != b).then(|| MovedField {
                path: s.path.clone(),
                class: s.class.map(|c| c.name().to_owned()).unwrap_or_default(),
                old_lines: a,
                new_lines: b,
            })
        })
        .collect()
}

fn pairs(a: &Analysis) -> Vec<Pair> {
    let mut out: Vec<Pair> = Vec::new();
    for f in a.findings.iter().filter(|f| f.allowed.is_none()) {
        let p = Pair {
            kind: f.kind.name().to_owned(),
            a: a.span(&f.a).path.clone(),
            b: a.span(&f.b).path.clone(),
        };
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

fn config_report(
    (a, b): (Option<kconfig::KernelConfig>, Option<kconfig::KernelConfig>),
) -> ConfigReport {
    let (layout_options, other_options) = match (&a, &b) {
        (Some(a), Some(b)) => kconfig::differences(a, b),
        _ => (Vec::new(), 0),
    };
    ConfigReport {
        old: a.map(|c| c.source),
        new: b.map(|c| c.source),
        layout_options,
        other_options,
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
