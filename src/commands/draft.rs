//! `cachelint draft [--source-tree DIR] [--perf FILE]... BUILD... TYPE...`:
//! a rules file for the types, each class with the evidence that backs
//! it (declared in the source, measured by perf, inferred from the type)
//! and the evidence that disagrees.

use std::path::PathBuf;

use std::collections::HashMap;

use crate::analysis::draft::{Drafted, Facts, MemberFacts, draft as draft_type};
use crate::analysis::placement::{self, Embedding, Object, Placed};
use crate::error::Result;
use crate::evidence::source::{Declaration, Said, Site};
use crate::layout::{self, Depth};
use crate::lookup::TypeSpec;
use crate::model::{Type, TypeId, TypeTable};
use crate::report::draft::{DraftField, DraftPlacement, DraftReport, DraftType, Evidence};
use crate::rules::Rules;
use crate::run::{Run, Want};

/// Everything `draft` needs besides the run (its builds and perf files).
#[derive(Clone, Debug, Default)]
pub struct DraftOptions {
    /// The types to draft.
    pub types: Vec<String>,
    /// `--source-tree`: the kernel tree whose declarations to read.
    pub source_tree: Option<PathBuf>,
    /// `--arch`: the machine whose `arch/` code to read (default: the
    /// first build's).
    pub arch: Option<String>,
    /// `--index`: read the tree's evidence index (built on first use).
    pub index: bool,
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
            member_types: self.source_tree.is_some(),
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
        placements: Vec::new(),
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
            let mut d = run.declarations(tree, &wanted, opts.arch.as_deref(), opts.index)?;
            // Needless stores are audit's: a draft classes members.
            d.retain(|d| !matches!(d.said, Said::Needless(_)));
            // Of a kernel tree's arch/, only one machine is read.
            let arch = opts
                .arch
                .as_deref()
                .or(first.abi.arch)
                .filter(|_| tree.join("arch").is_dir());
            let through = first.member_types.as_ref().map_or(String::new(), |m| {
                format!(
                    "; accesses followed through the build's {} structs",
                    m.len()
                )
            });
            report.read.push(format!(
                "source {}{}: {} declarations about {}{through}",
                tree.display(),
                arch.map_or(String::new(), |a| format!(" (of arch/, arch/{a} only)")),
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
        let mut placer = Placer {
            table,
            line,
            declarations: &declarations,
            memo: HashMap::new(),
        };
        for f in &opened.found {
            let Some(name) = tag(table, f.id) else {
                continue;
            };
            if opts.source_tree.is_some() {
                let placed = placer.placed(f.id, 0);
                add_placement(&mut report.placements, table, f.id, &name, line, placed);
            }
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

/// Embeddings shown per struct, at most: `sock` is embedded in dozens.
const MAX_EMBEDDINGS_SHOWN: usize = 8;

/// Levels of containers followed for a placement.
const MAX_PLACEMENT_DEPTH: usize = 6;

/// Where a struct's objects start, or its placement in another build:
/// builds that disagree keep the smaller start.
fn add_placement(
    to: &mut Vec<DraftPlacement>,
    table: &TypeTable,
    id: TypeId,
    name: &str,
    line: u64,
    placed: Placed,
) {
    if placed.evidence.is_empty() {
        return;
    }
    let alignment = table.alignment_of(id);
    // A rule only for more than the struct's own alignment gives.
    let start = placed.start.filter(|&s| s > alignment);
    let mut evidence = placed.evidence;
    let sites = evidence
        .iter()
        .filter(|e| !e.starts_with("embedded "))
        .count();
    let embedded = evidence.len() - sites;
    if embedded > MAX_EMBEDDINGS_SHOWN {
        evidence.truncate(sites + MAX_EMBEDDINGS_SHOWN);
        evidence.push(format!(
            "and embedded in {} more places",
            embedded - MAX_EMBEDDINGS_SHOWN
        ));
    }
    match to.iter_mut().find(|p| p.ty == name) {
        Some(p) => {
            p.start = match (p.start, start) {
                (Some(a), Some(b)) => Some(a.min(b)),
                _ => None,
            };
            add_evidence_lines(&mut p.evidence, evidence);
        }
        None => to.push(DraftPlacement {
            ty: name.to_owned(),
            start,
            cacheline: line,
            alignment,
            evidence,
        }),
    }
}

fn add_evidence_lines(to: &mut Vec<String>, more: Vec<String>) {
    for e in more {
        if !to.contains(&e) {
            to.push(e);
        }
    }
}

/// Works out where structs' objects start, from the source's sites and
/// the structs that embed them, each struct once.
struct Placer<'a> {
    table: &'a TypeTable,
    line: u64,
    declarations: &'a [Declaration],
    memo: HashMap<TypeId, Placed>,
}

impl Placer<'_> {
    /// Where objects of struct `id` start.
    fn placed(&mut self, id: TypeId, depth: usize) -> Placed {
        let table = self.table;
        let id = table.strip(id);
        if let Some(p) = self.memo.get(&id) {
            return p.clone();
        }
        if depth > MAX_PLACEMENT_DEPTH {
            // Too deep to tell: its alignment.
            return Placed {
                start: None,
                evidence: Vec::new(),
            };
        }
        let object = Object {
            size: table.size_of(id).unwrap_or(0),
            alignment: table.alignment_of(id),
        };
        let name = tag(table, id);
        let holders = embeddings_of(table, id);
        // A container the build holds is followed below, with its offset.
        let held = |c: &str| {
            holders
                .iter()
                .any(|(o, ..)| tag(table, *o).as_deref() == Some(c))
        };
        let sites: Vec<(&Site, String)> = self
            .declarations
            .iter()
            .filter(|d| Some(&d.ty) == name.as_ref())
            .filter_map(|d| match &d.said {
                Said::Placed(Site::Embedded { container }) if held(container) => None,
                Said::Placed(site) => Some((site, format!("{}:{}", d.file.display(), d.line))),
                _ => None,
            })
            .collect();
        let mut embeddings = Vec::new();
        for (outer, place, offset, stride) in holders {
            let container = self.placed(outer, depth + 1);
            embeddings.push(Embedding {
                place,
                offset,
                stride,
                container: container.start.unwrap_or_else(|| table.alignment_of(outer)),
            });
        }
        let placed = placement::placed(object, self.line, &sites, &embeddings);
        self.memo.insert(id, placed.clone());
        placed
    }
}

/// Every member of a struct (named or anonymous) of `table` that holds
/// struct `id` by value: the holder, `holder.member`, its offset, and for
/// an array the element size.
fn embeddings_of(table: &TypeTable, id: TypeId) -> Vec<(TypeId, String, u64, Option<u64>)> {
    let mut out = Vec::new();
    for i in 0..table.len() {
        let Some(c) = table.composite(TypeId(i)) else {
            continue;
        };
        let Some(members) = &c.members else { continue };
        for m in members {
            let mut t = table.strip(m.ty);
            let mut stride = None;
            if let Type::Array { element, .. } = table.get(t) {
                t = table.strip(*element);
                stride = table.size_of(t);
            }
            if t == id {
                let place = format!(
                    "{}.{}",
                    c.name.as_deref().unwrap_or("(anonymous)"),
                    m.name.as_deref().unwrap_or("(anonymous)")
                );
                out.push((TypeId(i), place, m.byte_offset(), stride));
            }
        }
    }
    out
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
                heat: None,
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
    f.heat = f.heat.max(other.heat);
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

/// The named structs of `table` with a member (or array of them) of
/// struct `id`, each once.
fn holders_of(table: &TypeTable, id: TypeId) -> Vec<(TypeId, String)> {
    let mut out: Vec<(TypeId, String)> = Vec::new();
    for (outer, ..) in embeddings_of(table, id) {
        if let Some(name) = tag(table, outer)
            && !out.iter().any(|(o, _)| *o == outer)
        {
            out.push((outer, name));
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
