//! `cachelint draft [--source-tree DIR] [--perf FILE]... BUILD... TYPE...`:
//! a rules file for the types, each class with the evidence that backs
//! it (declared in the source, measured by perf, inferred from the type)
//! and the evidence that disagrees.

use std::path::PathBuf;

use crate::analysis::draft::{Drafted, Facts, MemberFacts, draft as draft_type};
use crate::error::Result;
use crate::evidence::source::Declaration;
use crate::layout::{self, Depth};
use crate::lookup::TypeSpec;
use crate::model::{Type, TypeId, TypeTable};
use crate::report::draft::{DraftField, DraftReport, DraftType, Evidence};
use crate::rules::Rules;
use crate::run::{Run, Want};

/// Everything `draft` needs besides the run (its builds and perf files).
#[derive(Clone, Debug, Default)]
pub struct DraftOptions {
    /// The types to draft.
    pub types: Vec<String>,
    /// `--source-tree`: the kernel tree whose declarations to read.
    pub source_tree: Option<PathBuf>,
}

impl DraftOptions {
    /// What `draft` reads of each build: the types, which must exist, and
    /// the structs that embed them (whose locks they may be under); the
    /// run adds the types perf sampled.
    pub fn want(&self, _rules: &Rules) -> Result<Want> {
        Ok(Want {
            specs: self
                .types
                .iter()
                .map(|t| TypeSpec::parse(t))
                .collect::<Result<_>>()?,
            // Named too: embedders are discovered for the types present.
            // With a source tree, the running task as well: `current` is
            // a `task_struct` (`current->mm->mmap_lock`), read when the
            // build has it.
            names: match self.source_tree {
                Some(_) => self
                    .types
                    .iter()
                    .cloned()
                    .chain(std::iter::once("task_struct".to_owned()))
                    .collect(),
                None => self.types.clone(),
            },
            embedders_of: self.types.clone(),
            ..Want::default()
        })
    }
}

/// Runs `draft`.
pub fn draft(run: &Run, opts: &DraftOptions) -> Result<DraftReport> {
    let mut report = DraftReport {
        read: Vec::new(),
        contexts: Vec::new(),
        types: Vec::new(),
        notes: Vec::new(),
    };
    for b in &run.builds {
        report.read.push(format!(
            "build {}: {}",
            b.build.config,
            b.build.path.display()
        ));
    }
    for f in &run.perf {
        report.read.push(format!(
            "perf {}: {} ({} typed rows); {}",
            f.path.display(),
            f.format.command(),
            f.samples.len(),
            f.skid()
        ));
    }
    // The source is read once, for every build: what it says of the types
    // and of the structs embedding them.
    let first = run.first()?;
    let first_view = run.view(first)?;
    let mut wanted: Vec<String> = Vec::new();
    for f in &first.found {
        if let Some(name) = tag(first_view.table(), f.id) {
            wanted.push(name.clone());
            for e in enclosing(first_view.table(), f.id) {
                if !wanted.contains(&e) {
                    wanted.push(e);
                }
            }
        }
    }
    let declarations: Vec<Declaration> = match &opts.source_tree {
        Some(tree) => {
            let d = run.declarations(tree, &wanted)?;
            report.read.push(format!(
                "source {}: {} declarations about {}",
                tree.display(),
                d.len(),
                wanted.join(", ")
            ));
            d
        }
        None => Vec::new(),
    };
    let mut drafted: Vec<(String, Drafted)> = Vec::new();
    for opened in &run.builds {
        let view = run.view(opened)?;
        let table = view.table();
        let line = run.build_line(opened);
        for f in &opened.found {
            let Some(name) = tag(table, f.id) else {
                continue;
            };
            let (placed, misfits) = run.samples_on(&view, f.id, line).unwrap_or_default();
            report.notes.extend(misfits);
            let facts = Facts {
                ty: name.clone(),
                members: members(table, f.id, line)?,
                placed,
                declarations: declarations.iter().collect(),
                enclosing: enclosing(table, f.id),
            };
            drafted.push((opened.build.config.clone(), draft_type(&facts)));
        }
    }
    merge(&mut report, drafted);
    report.notes.sort();
    report.notes.dedup();
    Ok(report)
}

/// The drafts of every build as one rules file: a struct's members in
/// the first build's order (then those only later builds have), with
/// every build's evidence.
fn merge(report: &mut DraftReport, drafted: Vec<(String, Drafted)>) {
    let mut locks: Vec<(String, String, Vec<Evidence>)> = Vec::new();
    for (config, d) in drafted {
        for c in d.contexts {
            if !report.contexts.iter().any(|x| x.name == c.name) {
                report.contexts.push(c);
            }
        }
        for (ty, member, ev) in d.locks {
            match locks.iter_mut().find(|(t, m, _)| *t == ty && *m == member) {
                Some((_, _, e)) => add_evidence(e, ev),
                None => locks.push((ty, member, ev)),
            }
        }
        let ty = match report.types.iter_mut().find(|t| t.name == d.ty.name) {
            Some(t) => t,
            None => {
                report.types.push(DraftType {
                    name: d.ty.name.clone(),
                    fields: Vec::new(),
                });
                report.types.last_mut().expect("just pushed")
            }
        };
        for field in d.ty.fields {
            match ty.fields.iter_mut().find(|f| f.path == field.path) {
                Some(f) => merge_field(f, field, &config),
                None => ty.fields.push(field),
            }
        }
    }
    report.contexts.sort_by(|a, b| a.name.cmp(&b.name));
    for (ty, member, evidence) in locks {
        if report.types.iter().any(|t| t.name == ty) {
            continue;
        }
        report.types.push(DraftType {
            name: ty,
            fields: vec![DraftField {
                path: member,
                rule: Some(crate::report::draft::DraftRule::Class {
                    class: "lock".into(),
                }),
                mark: Some(crate::report::draft::Mark::Declared),
                evidence,
                conflicts: Vec::new(),
            }],
        });
    }
}

fn add_evidence(to: &mut Vec<Evidence>, more: Vec<Evidence>) {
    for e in more {
        if !to.contains(&e) {
            to.push(e);
        }
    }
}

/// Another build's draft of the same member.
fn merge_field(f: &mut DraftField, other: DraftField, config: &str) {
    add_evidence(&mut f.evidence, other.evidence);
    for c in other.conflicts {
        if !f.conflicts.contains(&c) {
            f.conflicts.push(c);
        }
    }
    match (&f.rule, other.rule) {
        (None, Some(r)) => {
            f.rule = Some(r);
            f.mark = other.mark;
        }
        (Some(a), Some(b)) if *a != b => f
            .conflicts
            .push(format!("build {config} gives {}", b.toml())),
        _ => {}
    }
}

/// The tag (or typedef name) of struct `id`.
fn tag(table: &TypeTable, id: TypeId) -> Option<String> {
    match table.get(id) {
        Type::Composite(c) => c.name.clone(),
        Type::Typedef { name, .. } => Some(name.clone()),
        _ => None,
    }
}

/// The structs of `table` that hold struct `id` by value, however deep
/// (`lruvec`, then `pglist_data` and `mem_cgroup_per_node`).
fn enclosing(table: &TypeTable, id: TypeId) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut frontier = vec![table.strip(id)];
    for _ in 0..MAX_ENCLOSING_DEPTH {
        let mut next = Vec::new();
        for id in frontier {
            for (outer, name) in holders_of(table, id) {
                if !out.contains(&name) {
                    out.push(name);
                    next.push(outer);
                }
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    out
}

/// Levels of embedding followed up from a drafted struct.
const MAX_ENCLOSING_DEPTH: usize = 8;

/// The structs of `table` with a member (or array of them) of struct `id`.
fn holders_of(table: &TypeTable, id: TypeId) -> Vec<(TypeId, String)> {
    let mut out = Vec::new();
    for i in 0..table.len() {
        let Some(c) = table.composite(TypeId(i)) else {
            continue;
        };
        let (Some(name), Some(members)) = (&c.name, &c.members) else {
            continue;
        };
        let holds = members.iter().any(|m| {
            let mut t = table.strip(m.ty);
            if let Type::Array { element, .. } = table.get(t) {
                t = table.strip(*element);
            }
            t == id
        });
        if holds {
            out.push((TypeId(i), name.clone()));
        }
    }
    out
}

/// The direct members of struct `id` (those of anonymous structs and
/// unions included, as C names them), with the names of their types.
fn members(table: &TypeTable, id: TypeId, line: u64) -> Result<Vec<MemberFacts>> {
    let l = layout::layout(table, id, line, Depth::Direct)?;
    Ok(l.fields()
        // The kernel's group markers (`__cacheline_group_begin__frag`,
        // `__cacheline_group_pad__frag`) are no members to rule.
        .filter(|f| f.name.is_some() && !f.path.contains('.'))
        .filter(|f| !f.path.starts_with("__cacheline_group_"))
        .map(|f| MemberFacts {
            path: f.path.clone(),
            type_names: crate::analysis::validate::type_names(table, f.ty),
            group: l
                .groups
                .iter()
                .find(|g| g.begin <= f.offset && g.end.is_some_and(|e| f.offset < e))
                .map(|g| g.name.clone()),
        })
        .collect())
}
