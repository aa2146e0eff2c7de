//! `cachelint diff OLD NEW TYPE...`: what changed in each struct between
//! two builds, why its size changed, and (with rules) which annotated
//! fields changed lines and which findings came or went. Exit code 1 when
//! anything differs, so it works as a gate (codiff always exits 0).

use crate::analysis::compare::compare;
use crate::diff::{self, ListDepth, Side};
use crate::error::{Error, Result};
use crate::kconfig;
use crate::report::diff::{ConfigReport, DiffReport, MovedField, TypeReport};
use crate::rules::Rules;
use crate::run::{self, Roots, Run, View, Want};

/// Everything `diff` needs besides the run (its two builds, OLD then
/// NEW, and the rules, if any).
#[derive(Clone, Debug)]
pub struct DiffOptions {
    /// Types to compare.
    pub types: Vec<String>,
    /// How deep changed members are listed.
    pub depth: ListDepth,
}

impl DiffOptions {
    /// What `diff` reads of each build: the types, and the configs.
    pub fn want(&self, _rules: &Rules) -> Result<Want> {
        Ok(Want {
            names: self.types.clone(),
            kernel_config: true,
            ..Want::default()
        })
    }
}

/// Runs `diff`.
pub fn diff(run: &Run, opts: &DiffOptions) -> Result<DiffReport> {
    let [old_build, new_build] = run.builds.as_slice() else {
        return Err(Error::Usage("diff reads two builds: OLD NEW".into()));
    };
    // A plan lays out the new build only: `diff --plan P B B` is what
    // the plan changes in B.
    let old = old_build.compiled();
    let mut new = run.view(new_build)?;
    new.label_against(&old);
    let line = run.cacheline.unwrap_or(new_build.build_line);
    if run.cacheline.is_none() && old_build.build_line != new_build.build_line {
        return Err(Error::Mismatch(format!(
            "the builds have different cacheline sizes ({} and {}); pass --cacheline",
            old_build.build_line, new_build.build_line
        )));
    }
    let mut types = Vec::new();
    for name in &opts.types {
        let (diff, present) = match (old_build.present.get(name), new_build.present.get(name)) {
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
            (None, None) => return Err(run.unknown_type(old_build, name)),
            (Some(_), None) => (None, old.config.clone()),
            (None, Some(_)) => (None, new.config.clone()),
        };
        types.push(TypeReport {
            name: name.clone(),
            present,
            diff,
            moved_fields: Vec::new(),
            findings_fixed: Vec::new(),
            findings_introduced: Vec::new(),
        });
    }
    let mut notes = old.tagged_notes();
    notes.extend(new.tagged_notes());
    if !run.rules_files.is_empty() {
        for report in types.iter_mut().filter(|r| r.diff.is_some()) {
            notes.extend(with_rules(run, report, &old, &new)?);
        }
    }
    let config = config_report((
        old_build.kernel_config.clone(),
        new_build.kernel_config.clone(),
    ));
    let differ = types.iter().any(TypeReport::differs);
    Ok(DiffReport {
        cacheline: line,
        old: old.config.clone(),
        new: new.config.clone(),
        types,
        config,
        differ,
        notes: crate::report::unique_notes(notes),
    })
}

/// Adds to `report` what the rules say changed: annotated fields on other
/// lines, findings fixed and introduced; returns the analyses' notes.
fn with_rules(
    run: &Run,
    report: &mut TypeReport,
    old: &View<'_>,
    new: &View<'_>,
) -> Result<Vec<String>> {
    let root = Roots::Only(&report.name);
    let analyzed = |view: &View<'_>| {
        let line = run.line(view.opened);
        run::analyze(run, view, &run.rules, line, root)
    };
    let (old_a, new_a) = (analyzed(old)?, analyzed(new)?);
    let mut notes = run::rules_fit(run, &[old, new], &[&old_a.checks, &new_a.checks])?;
    notes.extend(old_a.notes.iter().chain(&new_a.notes).cloned());
    let c = compare(&old_a.roots[0].analysis, &new_a.roots[0].analysis);
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
