//! One build analysed under the rules: the rules validated against its
//! types, every root (given, or the rules' own) analysed, with the notes
//! tagged with its label. The results are owned data.

use std::collections::HashMap;

use super::{Run, View};
use crate::analysis::{self, Analysis, validate::Check};
use crate::error::Result;
use crate::layout::{self, Depth, Item};
use crate::load::lookup;
use crate::model::TypeId;
use crate::rules::{Location, Rules};

/// Which roots to analyse.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Roots<'a> {
    /// `roots = [...]` of the files that name them, and the discovered
    /// outermost containers of the types of the files that do not.
    FromRules,
    /// Exactly this type, which must exist.
    Only(&'a str),
    /// Each of these types, as its own root; those the build lacks are
    /// left out with a note.
    Types(&'a [String]),
}

/// One root analysed.
pub(crate) struct RootAnalysis {
    /// Spans and findings.
    pub analysis: Analysis,
    /// Tail padding of every struct inside the root: `[start, end)`.
    pub paddings: Vec<(u64, u64)>,
}

/// One build analysed.
pub(crate) struct Analyzed {
    /// Config label.
    pub config: String,
    /// The file.
    pub file: String,
    /// Line size used.
    pub cacheline: u64,
    /// The roots.
    pub roots: Vec<RootAnalysis>,
    /// Every rule, checked against this build.
    pub checks: Vec<(Location, Check)>,
    /// Notes, tagged with the config.
    pub notes: Vec<String>,
    /// Sizes of the annotated types and roots found in this build.
    pub type_sizes: HashMap<String, u64>,
}

/// Analyses `view` under `rules` (in the run's names; renamed here to
/// the build's) at `line` bytes a line.
pub(crate) fn analyze(
    run: &Run,
    view: &View<'_>,
    rules: &Rules,
    line: u64,
    roots: Roots<'_>,
) -> Result<Analyzed> {
    let opened = view.opened;
    let rules = &*renamed(rules, &opened.renames, &opened.member_renames);
    let as_built = |name: &str| {
        opened
            .renames
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_owned())
    };
    let mut present = opened.present.clone();
    let root_names: Vec<String> = match roots {
        Roots::Only(name) => {
            let name = as_built(name);
            if !present.contains_key(&name) {
                return Err(run.unknown_type(opened, &name));
            }
            vec![name]
        }
        Roots::Types(types) => types
            .iter()
            .map(|t| as_built(t))
            .filter(|t| present.contains_key(t))
            .collect(),
        Roots::FromRules => opened.roots.clone(),
    };
    // The other names of a type the build has under one name are no
    // types of the rules here.
    for ty in &rules.types {
        for (alias, _) in &ty.aliases {
            if *alias != ty.name && !root_names.contains(alias) {
                present.remove(alias);
            }
        }
    }
    analyze_roots(view, rules, &present, &root_names, line)
}

/// `rules` in a build's names (`renames`: a rules type → the alias the
/// build has it under).
pub(crate) fn renamed<'r>(
    rules: &'r Rules,
    renames: &HashMap<String, String>,
    members: &crate::rules::MemberRenames,
) -> std::borrow::Cow<'r, Rules> {
    match renames.is_empty() && members.is_empty() {
        true => std::borrow::Cow::Borrowed(rules),
        false => std::borrow::Cow::Owned(rules.renamed(renames, members)),
    }
}

/// Validates the rules and analyses each root in the view's types.
fn analyze_roots(
    view: &View<'_>,
    rules: &Rules,
    found: &HashMap<String, lookup::Located>,
    root_names: &[String],
    line: u64,
) -> Result<Analyzed> {
    let table = view.table();
    let mut notes = view.tagged_notes();
    let types: HashMap<String, TypeId> = found.iter().map(|(n, f)| (n.clone(), f.id)).collect();
    let checks = analysis::validate::validate(table, &types, rules);
    let tag = |text: &str| format!("[{}] {text}", view.config);
    notes.extend(
        analysis::validate::lint_tables(table, &types, rules)
            .iter()
            .map(|n| tag(n)),
    );
    notes.extend(found.values().filter_map(|f| f.note.as_deref()).map(tag));
    let mut analysed = Vec::new();
    for root in root_names {
        let Some(f) = found.get(root) else {
            continue;
        };
        let a = analysis::analyze(table, f.id, root, line, rules);
        if !a.annotated.spans.iter().any(|s| s.class.is_some()) {
            notes.push(tag(&format!("root '{root}' holds no annotated field")));
        }
        notes.extend(a.annotated.notes.iter().map(|n| tag(n)));
        let paddings = layout::layout(table, f.id, line, Depth::Expand)?
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Padding { offset, size, .. } => Some((*offset, offset + size)),
                _ => None,
            })
            .collect();
        analysed.push(RootAnalysis {
            analysis: a,
            paddings,
        });
    }
    let type_sizes = found
        .iter()
        .filter_map(|(n, f)| Some((n.clone(), table.size_of(f.id)?)))
        .collect();
    Ok(Analyzed {
        config: view.config.clone(),
        file: view.opened.build.path.display().to_string(),
        cacheline: line,
        roots: analysed,
        checks,
        notes,
        type_sizes,
    })
}

/// `--explain FIELD` on every root of a build analysed.
pub(crate) fn explained(
    analyzed: &Analyzed,
    field: &str,
    rules: &Rules,
) -> Vec<crate::report::explain::ExplainedLine> {
    let mut out = Vec::new();
    for root in &analyzed.roots {
        let a = &root.analysis;
        let spans = analysis::explain::matching(a, field);
        for line in analysis::explain::explain(a, &spans, rules) {
            out.push(crate::report::explain::ExplainedLine::new(
                &analyzed.config,
                a,
                &line,
            ));
        }
    }
    out
}
