//! `cachelint audit --source-tree DIR BUILD...`: the false sharing of the
//! structs a whole tree writes from many CPUs (drafted and checked, see
//! [`layout`]) and the needless stores of its code (see
//! [`crate::analysis::needless`]), each ranked, from the tree's evidence
//! index.

mod layout;

use std::path::PathBuf;

use crate::analysis::needless::needless_stores;
use crate::error::{Error, Result};
use crate::evidence::source::Said;
use crate::report::audit::{AuditReport, StoreFinding};
use crate::rules::Rules;
use crate::run::{ContendedIn, Run, Want};

/// Everything `audit` needs besides the run (its builds).
#[derive(Clone, Debug, Default)]
pub struct AuditOptions {
    /// `--source-tree`: the kernel tree to audit.
    pub source_tree: PathBuf,
    /// `--arch`: the machine whose `arch/` code to read (default: the
    /// first build's).
    pub arch: Option<String>,
    /// `--under`: audit only the code in files under these paths of the
    /// tree: the stores it makes, the structs it writes from many CPUs
    /// (the whole tree is still read: who calls, who shares, who reads).
    pub under: Vec<PathBuf>,
    /// `--top`: at most this many findings of each half (0: all).
    pub top: usize,
    /// `--rules-out`: the directory the drafted rules files of the
    /// structs with a pair are written to.
    pub rules_out: Option<PathBuf>,
}

impl AuditOptions {
    /// What `audit` reads of each build: which struct each member leads
    /// to, and the running task (`current`).
    pub fn want(&self, _rules: &Rules) -> Result<Want> {
        Ok(Want {
            names: vec!["task_struct".to_owned()],
            member_types: true,
            built: true,
            contended_in: Some(ContendedIn {
                tree: self.source_tree.clone(),
                arch: self.arch.clone(),
                under: self.under.clone(),
            }),
            ..Want::default()
        })
    }
}

/// Runs `audit`.
pub fn audit(run: &Run, opts: &AuditOptions) -> Result<AuditReport> {
    let tree = &opts.source_tree;
    for u in &opts.under {
        if u.is_absolute() || !tree.join(u).exists() {
            return Err(Error::Usage(format!(
                "--under {}: not a path in {}",
                u.display(),
                tree.display()
            )));
        }
    }
    let first = run.first()?;
    let mut report = AuditReport {
        read: vec![format!(
            "build {}: {}",
            first.build.config,
            first.build.path.display()
        )],
        ..AuditReport::default()
    };
    if run.builds.len() > 1 {
        report.notes.push(format!(
            "stores are read through the first build ({}); the others are not used yet",
            first.build.config
        ));
    }
    let declarations = run.needless_stores(tree, opts.arch.as_deref())?;
    // Code the build does not have never runs on it.
    let declarations = match &first.built {
        Some(built) => {
            let (kept, dropped) =
                crate::analysis::needless::in_build(declarations, &built.units, &built.functions);
            match dropped {
                Some(n) => report.read.push(format!(
                    "build {}: {} functions in {} units; {n} accesses in functions it does \
                     not define (a config it has off) left out",
                    first.build.config,
                    built.functions.len(),
                    built.units.len()
                )),
                None => report.notes.push(format!(
                    "{} defines under a tenth of the tree's functions: it is not this tree's \
                     build, so no code is left out as missing from it",
                    first.build.config
                )),
            }
            kept
        }
        None => declarations,
    };
    // Tested stores are read too (the values a member is given), but are
    // no candidates.
    report.candidates = declarations
        .iter()
        .filter(|d| matches!(&d.said, Said::Needless(n) if !n.tested))
        .count();
    let found = needless_stores(&declarations, &opts.under);
    let under = match opts.under.is_empty() {
        true => String::new(),
        false => format!(
            " under {}",
            opts.under
                .iter()
                .map(|u| u.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    report.read.push(format!(
        "source {}: {} needless-store candidates, {} on a hot path and a shared member{under}",
        tree.display(),
        report.candidates,
        found.len(),
    ));
    report.total = found.len();
    // perf's samples on the members stored to rank first, the score after
    // (a stable sort keeps its order among equals).
    let mut ranked: Vec<_> = found
        .iter()
        .map(|f| (f, run.samples_on_member(&f.at.ty, &f.at.path)))
        .collect();
    ranked.sort_by(|(_, a), (_, b)| b.unwrap_or(0.0).total_cmp(&a.unwrap_or(0.0)));
    let shown = match opts.top {
        0 => ranked.len(),
        n => n.min(ranked.len()),
    };
    report.findings = ranked
        .into_iter()
        .take(shown)
        .enumerate()
        .map(|(i, (f, samples))| StoreFinding {
            samples,
            ..StoreFinding::new(i + 1, f)
        })
        .collect();
    // What each drafted rules file says it was drafted from.
    let mut drafted_from: Vec<String> = run
        .builds
        .iter()
        .map(|b| format!("build {}: {}", b.build.config, b.build.path.display()))
        .collect();
    drafted_from.push(format!(
        "source {}: its evidence index, by cachelint audit",
        tree.display()
    ));
    let perf_read = run.perf_read();
    drafted_from.extend(perf_read.iter().cloned());
    report.read.extend(perf_read);
    let pairs = layout::pairs(run, tree, opts.arch.as_deref(), &drafted_from)?;
    report.structs = pairs.structs;
    report.holders = pairs.holders;
    report.layout_total = pairs.total;
    report.read.push(format!(
        "layout: {} structs the code{} writes from many CPUs and {} holding one drafted and \
         checked, {} pairs sharing a line in {} of them",
        pairs.structs,
        match under.is_empty() {
            true => " of the tree".to_owned(),
            false => under,
        },
        pairs.holders,
        pairs.total,
        pairs.rules.len()
    ));
    let shown = match opts.top {
        0 => pairs.worst.len(),
        n => n.min(pairs.worst.len()),
    };
    report.layout = pairs.worst.into_iter().take(shown).collect();
    let rules = pairs.rules;
    if let Some(dir) = &opts.rules_out {
        for f in &mut report.layout {
            f.rules_file = Some(dir.join(format!("{}.toml", f.root)).display().to_string());
        }
    }
    report.rules = rules;
    report.seconds = run.started.elapsed().as_secs_f64();
    Ok(report)
}
