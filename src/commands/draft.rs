//! `cachelint draft [--source-tree DIR] [--perf FILE]... BUILD... TYPE...`:
//! a rules file for the types, each class with the evidence that backs
//! it (declared in the source, measured by perf, inferred from the type)
//! and the evidence that disagrees.

use std::path::PathBuf;

use crate::analysis::draft::{Drafted, Facts, draft as draft_type};
use crate::analysis::draft_report::{Holders, Placer, enclosing, members, merge, tag};
use crate::error::Result;
use crate::evidence::source::{Declaration, Said};
use crate::load::lookup::TypeSpec;
use crate::report::draft::DraftReport;
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
    report.read.extend(run.perf_read());
    // The source is read once, for every build: what it says of the types
    // and of the structs embedding them.
    let first = run.first()?;
    let first_view = run.view(first)?;
    let first_holders = Holders::of_table(first_view.table());
    let mut wanted: Vec<String> = Vec::new();
    for f in &first.found {
        if let Some(name) = tag(first_view.table(), f.id) {
            wanted.push(name.clone());
            for e in enclosing(first_view.table(), &first_holders, f.id) {
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
        let holders = Holders::of_table(table);
        let mut placer = Placer::new(table, &holders, line, &declarations);
        for f in &opened.found {
            let Some(name) = tag(table, f.id) else {
                continue;
            };
            if opts.source_tree.is_some() {
                placer.add_placements(&mut report.placements, f.id, &name);
            }
            let (placed, misfits) = run.samples_on(&view, f.id, line).unwrap_or_default();
            report.notes.extend(misfits);
            let facts = Facts {
                ty: name.clone(),
                members: members(table, f.id, line)?,
                placed,
                declarations: declarations.iter().collect(),
                enclosing: enclosing(table, &holders, f.id),
            };
            drafted.push((opened.build.config.clone(), draft_type(&facts)));
        }
    }
    merge(&mut report, drafted);
    report.notes.sort();
    report.notes.dedup();
    Ok(report)
}
