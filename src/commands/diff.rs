//! `cachelint diff OLD NEW TYPE...`: what changed in each struct between
//! two builds, why its size changed, and (with rules) which annotated
//! fields changed lines and which findings came or went. Exit code 1 when
//! anything differs, so it works as a gate (codiff always exits 0).

use std::collections::HashSet;
use std::path::PathBuf;

use super::analyze::{Roots, analyze_loaded};
use super::check::rules_fit;
use crate::analysis::compare::compare;
use crate::diff::{self, ListDepth, Side};
use crate::error::Result;
use crate::kconfig;
use crate::load::{self, Build, Loaded, Reading, tagged};
use crate::report::diff::{ConfigReport, DiffReport, MovedField, TypeReport};
use crate::rules::Rules;

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
    /// How deep changed members are listed.
    pub depth: ListDepth,
    /// Cacheline size override.
    pub cacheline: Option<u64>,
    /// DWARF, BTF, or whichever the files have (the same for both).
    pub reading: Reading,
}

/// The new build, labelled `LABEL-planned` when a plan lays it out and
/// it would otherwise carry the old build's label.
pub(crate) fn planned_label(old: &Build, new: &Build, reading: &Reading) -> Build {
    let mut new = new.clone();
    if reading.plan.is_some() && new.config == old.config {
        new.config.push_str("-planned");
    }
    new
}

/// Runs `diff`.
pub fn diff(opts: &DiffOptions) -> Result<DiffReport> {
    let rules = if opts.rules.is_empty() {
        None
    } else {
        Some(Rules::load(&opts.rules)?)
    };
    // A plan lays out the new build only: `diff --plan P B B` is what
    // the plan changes in B.
    let new_build = planned_label(&opts.old, &opts.new, &opts.reading);
    let old_reading = opts.reading.compiled();
    let (cacheline, types, configs, mut notes) = load::open(&opts.old, &old_reading, |old| {
        load::open(&new_build, &opts.reading, |new| {
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
                        let mut d = diff::diff(
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
                        d.limit_depth(opts.depth);
                        (Some(d), "both".to_owned())
                    }
                    (None, None) => return Err(old.unknown_type(name)),
                    (Some(_), None) => (None, opts.old.config.clone()),
                    (None, Some(_)) => (None, new_build.config.clone()),
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
            let mut notes = tagged(&opts.old.config, old.notes());
            notes.extend(tagged(&new_build.config, new.notes()));
            if let Some(rules) = &rules {
                for report in out.iter_mut().filter(|r| r.diff.is_some()) {
                    notes.extend(with_rules(report, old, new, rules, opts)?);
                }
            }
            Ok((line, out, (old.kernel_config(), new.kernel_config()), notes))
        })
    })?;
    let config = config_report(configs);
    let differ = types.iter().any(TypeReport::differs);
    let report = DiffReport {
        cacheline,
        old: opts.old.config.clone(),
        new: new_build.config.clone(),
        types,
        config,
        differ,
        notes: Vec::new(),
    };
    let mut seen = HashSet::new();
    notes.retain(|n| seen.insert(n.clone()));
    Ok(DiffReport { notes, ..report })
}

/// Adds to `report` what the rules say changed: annotated fields on other
/// lines, findings fixed and introduced; returns the analyses' notes.
fn with_rules(
    report: &mut TypeReport,
    old: &mut Loaded<'_, '_>,
    new: &mut Loaded<'_, '_>,
    rules: &Rules,
    opts: &DiffOptions,
) -> Result<Vec<String>> {
    let root = Roots::Only(&report.name);
    let old = analyze_loaded(old, rules, opts.cacheline, root)?;
    let new = analyze_loaded(new, rules, opts.cacheline, root)?;
    let builds = [opts.old.clone(), opts.new.clone()];
    let mut notes = rules_fit(rules, &builds, &opts.reading, &[&old.checks, &new.checks])?;
    notes.extend(old.notes.iter().chain(&new.notes).cloned());
    let c = compare(&old.roots[0].analysis, &new.roots[0].analysis);
    report.moved_fields = c
        .moved
        .iter()
        .map(|m| MovedField {
            path: m.path.clone(),
            class: m.class.name().to_owned(),
            old_lines: m.old.into(),
            new_lines: m.new.into(),
        })
        .collect();
    report.findings_fixed = c.fixed().into_iter().cloned().collect();
    report.findings_introduced = c.introduced().into_iter().cloned().collect();
    Ok(notes)
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
