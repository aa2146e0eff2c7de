//! `suggest BUILD... TYPE...`: several structs in one run. Each build is
//! loaded once, with every TYPE and the rules' roots decoded together;
//! each TYPE is then searched on its own copy of the build's types, as
//! `suggest BUILD... TYPE` would search it alone. One TYPE is exactly the
//! single-struct `suggest`.

use std::collections::HashSet;

use super::builds;
use super::suggest::{SuggestOptions, from_snapshots, suggest};
use crate::error::{Error, Result};
use crate::load::{self, Build, Reading};
use crate::model::{TypeId, TypeTable};
use crate::plan::abi::Abi;
use crate::report::suggest::SuggestReports;
use crate::rules::Rules;
use crate::search::Snapshot;

/// Runs `suggest` for every type of `types` (`opts.ty` is not used). A
/// type that cannot be searched (absent from a build, other members on
/// two builds) is refused with the reason and the others go on;
/// `--plan-out` writes the plans of all of them into one plan file.
pub fn suggest_types(opts: &SuggestOptions, types: &[String]) -> Result<SuggestReports> {
    if let [ty] = types {
        let one = SuggestOptions {
            ty: ty.clone(),
            ..opts.clone()
        };
        let report = suggest(&one)?;
        return Ok(SuggestReports {
            reports: vec![Ok(report)],
        });
    }
    let rules = super::suggest::suggest_rules(opts)?;
    let names: Vec<&str> = types.iter().map(String::as_str).collect();
    let loaded = builds::in_order(&opts.builds, |build| {
        snapshots(build, &rules, &names, opts.cacheline, &opts.reading)
    })?;
    let mut reports = Vec::new();
    for (i, ty) in types.iter().enumerate() {
        let one = SuggestOptions {
            ty: ty.clone(),
            plan_out: None,
            ..opts.clone()
        };
        // A copy of each build's types for this type only: a candidate
        // is laid out in place.
        let report = loaded
            .iter()
            .map(|b| b.snapshot(i))
            .collect::<std::result::Result<Vec<_>, String>>()
            .and_then(|snaps| {
                check_type(&one, &rules)
                    .and_then(|()| from_snapshots(&one, rules.clone(), snaps))
                    .map_err(|e| e.to_string())
            });
        reports.push(report.map_err(|why| (ty.clone(), why)));
    }
    if let Some(path) = &opts.plan_out {
        let text: Vec<&str> = reports
            .iter()
            .filter_map(|r| r.as_ref().ok())
            .map(|r| r.plan.as_str())
            .collect();
        std::fs::write(path, text.join("\n")).map_err(|e| {
            Error::Usage(format!("--plan-out {}: cannot write: {e}", path.display()))
        })?;
        for r in reports.iter_mut().flatten() {
            r.plan_out = Some(path.display().to_string());
        }
    }
    Ok(SuggestReports { reports })
}

/// What `suggest` checks of TYPE before it loads anything.
fn check_type(opts: &SuggestOptions, rules: &Rules) -> Result<()> {
    if std::path::Path::new(&opts.ty).is_file() {
        return Err(Error::Usage(format!(
            "'{}' is a file (a build?): give BUILD... TYPE...",
            opts.ty
        )));
    }
    if !opts.rules.is_empty() && rules.type_rules(&opts.ty).is_none() {
        return Err(Error::Usage(format!(
            "the rules annotate no field of '{}': suggest reorders an annotated struct",
            opts.ty
        )));
    }
    Ok(())
}

/// One build loaded for every type.
struct Shared {
    config: String,
    table: TypeTable,
    roots: Vec<(String, TypeId)>,
    /// Per type: its id, or why it is not there.
    targets: Vec<std::result::Result<TypeId, String>>,
    abi: Abi,
    line: u64,
}

impl Shared {
    /// The snapshot of type `i`, on a copy of the decoded types.
    fn snapshot(&self, i: usize) -> std::result::Result<Snapshot, String> {
        let target = self.targets[i].clone()?;
        Ok(Snapshot::new(
            self.config.clone(),
            self.table.clone(),
            self.roots.clone(),
            target,
            self.abi,
            self.line,
        ))
    }
}

/// One build loaded once for every type: the roots of the rules' types and
/// every type decoded together.
fn snapshots(
    build: &Build,
    rules: &Rules,
    types: &[&str],
    cacheline: Option<u64>,
    reading: &Reading,
) -> Result<Shared> {
    load::open(build, reading, |loaded| {
        let mut names: HashSet<&str> = rules.types.iter().map(|t| t.name.as_str()).collect();
        names.extend(rules.roots.iter().map(|(n, _)| n.as_str()));
        names.extend(types.iter().copied());
        let mut present = loaded.find_present(&names)?;
        let roots = super::suggest::rule_roots(loaded, &mut present, rules)?;
        let line = cacheline.or(rules.cacheline).unwrap_or(loaded.cacheline);
        let targets = types
            .iter()
            .map(|ty| match present.types.get(*ty) {
                Some(found) => Ok(found.id),
                None => Err(loaded.unknown_type(ty).to_string()),
            })
            .collect();
        Ok(Shared {
            config: build.config.clone(),
            table: loaded.table().clone(),
            roots,
            targets,
            abi: loaded.abi(),
            line,
        })
    })
}
