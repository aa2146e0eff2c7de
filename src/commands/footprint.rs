//! `cachelint footprint --rules R BUILD... [TYPE...]`: per build, struct
//! and context, the cachelines the context touches against the fewest its
//! fields' bytes could fit in.

use crate::analysis::footprint::footprint;
use crate::analysis::validate::Check;
use crate::error::{Error, Result};
use crate::report::footprint::{BuildFootprint, ContextRow, FootprintReport, TypeFootprint};
use crate::rules::Rules;
use crate::run::{self, Roots, Run, Want};

/// Everything `footprint` needs besides the run.
#[derive(Clone, Debug, Default)]
pub struct FootprintOptions {
    /// `--type`: the structs, or none for every struct with context rules.
    pub types: Vec<String>,
}

impl FootprintOptions {
    /// The structs to measure: those asked for, which must have context
    /// rules, or every struct that has them.
    fn wanted(&self, rules: &Rules) -> Result<Vec<String>> {
        let with_contexts: Vec<String> = rules
            .types
            .iter()
            .filter(|t| t.fields.iter().any(|f| f.access.is_some()))
            .map(|t| t.name.clone())
            .collect();
        if with_contexts.is_empty() {
            return Err(Error::Mismatch(
                "the rules give no field a context: a footprint needs context rules \
                 (a net_cachelines table, or FIELD = { read = [...], write = [...] })"
                    .into(),
            ));
        }
        if self.types.is_empty() {
            return Ok(with_contexts);
        }
        for t in &self.types {
            if !with_contexts.contains(t) {
                return Err(Error::Mismatch(format!(
                    "the rules give no field of '{t}' a context; the structs with context rules are {}",
                    with_contexts.join(", ")
                )));
            }
        }
        Ok(self.types.clone())
    }

    /// What `footprint` reads of each build (the rules' types); the
    /// structs asked for are checked against the rules first.
    pub fn want(&self, rules: &Rules) -> Result<Want> {
        self.wanted(rules)?;
        Ok(Want::default())
    }
}

/// Runs `footprint` on the structs asked for, or on every struct with
/// context rules.
pub fn footprint_report(run: &Run, opts: &FootprintOptions) -> Result<FootprintReport> {
    let rules = &run.rules;
    let types = &opts.types;
    let contexts: Vec<String> = rules.contexts.iter().map(|c| c.name.clone()).collect();
    let wanted = opts.wanted(rules)?;
    let views = run.views()?;
    let results = run::in_order(&views, |view| {
        let line = run.line(view.opened);
        run::analyze(run, view, rules, line, Roots::Types(&wanted))
    })?;
    let mut report = FootprintReport {
        notes: run.perf_notes(),
        ..FootprintReport::default()
    };
    for (opened, analyzed) in run.builds.iter().zip(results) {
        let build = &opened.build;
        report.notes.extend(analyzed.notes.iter().cloned());
        let mut out = BuildFootprint {
            config: analyzed.config.clone(),
            file: analyzed.file.clone(),
            types: Vec::new(),
        };
        for name in &wanted {
            // Under the alias a build calls it by, when it has one.
            let names: Vec<&str> = match rules.type_rules(name) {
                Some(t) => t.names().collect(),
                None => vec![name.as_str()],
            };
            let Some(root) = analyzed
                .roots
                .iter()
                .find(|r| names.contains(&r.analysis.root.as_str()))
            else {
                if !types.is_empty() {
                    return Err(Error::Usage(format!(
                        "{}: no struct named '{name}'",
                        build.path.display()
                    )));
                }
                report
                    .notes
                    .push(format!("[{}] no struct named '{name}'", build.config));
                continue;
            };
            let f = footprint(&root.analysis, &contexts);
            let samples_of = measured(run, &views, opened, root, &mut report.notes);
            let absent = rules
                .type_rules(name)
                .map(|t| {
                    t.fields
                        .iter()
                        .filter(|field| {
                            analyzed
                                .checks
                                .iter()
                                .any(|(at, c)| at == &field.at && !matches!(c, Check::Fits))
                        })
                        .map(|field| format!("{}: {}", field.at, field.path))
                        .collect()
                })
                .unwrap_or_default();
            out.types.push(TypeFootprint {
                name: f.ty,
                size: f.size,
                cacheline: f.cacheline,
                size_lines: f.size_lines,
                contexts: f
                    .contexts
                    .into_iter()
                    .map(|c| ContextRow {
                        samples: samples_of.as_ref().map(|s| s(&c.fields)),
                        context: c.context,
                        fields: c.fields,
                        bytes: c.bytes,
                        lines: c.lines,
                        optimum: c.optimum,
                    })
                    .collect(),
                absent,
            });
        }
        report.builds.push(out);
    }
    Ok(report)
}

/// With `--perf`: a function giving the samples perf took on the bytes
/// of a context's fields (span paths) in `root` of `opened`.
fn measured<'r>(
    run: &Run,
    views: &[run::View<'_>],
    opened: &run::Opened,
    root: &'r run::RootAnalysis,
    notes: &mut Vec<String>,
) -> Option<impl Fn(&[String]) -> u64 + 'r> {
    let view = views.iter().find(|v| std::ptr::eq(v.opened, opened))?;
    let (placed, misfits) = run.samples_on_named(view, &root.analysis.root, run.line(opened))?;
    notes.extend(misfits);
    // Each span's samples, by path: placed samples do not outlive the run.
    let by_path: std::collections::HashMap<String, f64> = root
        .analysis
        .annotated
        .spans
        .iter()
        .map(|s| {
            let n = crate::analysis::samples::samples_in(&placed, s.offset, s.size);
            (s.path.clone(), n)
        })
        .collect();
    Some(move |fields: &[String]| {
        fields
            .iter()
            .filter_map(|f| by_path.get(f))
            .sum::<f64>()
            .round() as u64
    })
}
