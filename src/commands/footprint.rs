//! `cachelint footprint --rules R BUILD... [TYPE...]`: per build, struct
//! and context, the cachelines the context touches against the fewest its
//! fields' bytes could fit in.

use super::analyze::{Roots, analyze_build};
use super::builds;
use crate::analysis::footprint::footprint;
use crate::analysis::validate::Check;
use crate::error::{Error, Result};
use crate::load::{Build, Reading};
use crate::report::footprint::{BuildFootprint, ContextRow, FootprintReport, TypeFootprint};
use crate::rules::Rules;

/// Runs `footprint` on `types`, or on every struct with context rules.
pub fn footprint_report(
    rules_files: &[std::path::PathBuf],
    builds_given: &[Build],
    types: &[String],
    cacheline: Option<u64>,
    reading: &Reading,
) -> Result<FootprintReport> {
    let rules = Rules::load(rules_files)?;
    let contexts: Vec<String> = rules.contexts.iter().map(|c| c.name.clone()).collect();
    let with_contexts: Vec<String> = rules
        .types
        .iter()
        .filter(|t| t.fields.iter().any(|f| f.access.is_some()))
        .map(|t| t.name.clone())
        .collect();
    if with_contexts.is_empty() {
        return Err(Error::Usage(
            "the rules give no field a context: a footprint needs context rules \
             (a net_cachelines table, or FIELD = { read = [...], write = [...] })"
                .into(),
        ));
    }
    let wanted: Vec<String> = if types.is_empty() {
        with_contexts.clone()
    } else {
        for t in types {
            if !with_contexts.contains(t) {
                return Err(Error::Usage(format!(
                    "the rules give no field of '{t}' a context; the structs with context rules are {}",
                    with_contexts.join(", ")
                )));
            }
        }
        types.to_vec()
    };
    let results = builds::in_order(builds_given, |build| {
        analyze_build(build, &rules, cacheline, Roots::Types(&wanted), reading)
    })?;
    let mut report = FootprintReport::default();
    for (build, analyzed) in builds_given.iter().zip(results) {
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
