//! One build analysed under the rules: types looked up, rules validated,
//! roots discovered (or given), every root analysed. Shared by `check` and
//! `diagram`; the results are owned data, usable after the file is closed.

use std::collections::{HashMap, HashSet};

use crate::analysis::{self, Analysis, validate::Check};
use crate::error::Result;
use crate::layout::{self, Depth, Item};
use crate::load::{self, Build, Loaded, Reading, tagged};
use crate::lookup;
use crate::model::{TypeId, TypeTable};
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

/// Analyses `build` under `rules`, from whichever debug format `source`
/// picks.
pub(crate) fn analyze_build(
    build: &Build,
    rules: &Rules,
    cacheline: Option<u64>,
    roots: Roots<'_>,
    reading: &Reading,
) -> Result<Analyzed> {
    load::open(build, reading, |loaded| {
        analyze_loaded(loaded, rules, cacheline, roots)
    })
}

/// Analyses a build already open (`diff` has it open for its layouts).
pub(crate) fn analyze_loaded(
    loaded: &mut Loaded<'_, '_>,
    rules: &Rules,
    cacheline: Option<u64>,
    roots: Roots<'_>,
) -> Result<Analyzed> {
    let mut names = needed_names(rules);
    names.extend(
        rules
            .types
            .iter()
            .flat_map(|t| t.aliases.iter().map(|(a, _)| a.as_str())),
    );
    match roots {
        Roots::Only(name) => {
            names.insert(name);
        }
        Roots::Types(types) => names.extend(types.iter().map(String::as_str)),
        Roots::FromRules => {}
    }
    let line = cacheline.or(rules.cacheline).unwrap_or(loaded.cacheline);
    let mut present = loaded.find_present(&names)?;
    let renames = alias_renames(rules, &present.types, loaded.table(), &loaded.build)?;
    let rules = &*renamed(rules, &renames);
    let as_built = |name: &str| {
        renames
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_owned())
    };
    let root_names: Vec<String> = match roots {
        Roots::Only(name) => {
            let name = as_built(name);
            if !present.types.contains_key(&name) {
                return Err(loaded.unknown_type(&name));
            }
            vec![name]
        }
        Roots::Types(types) => types
            .iter()
            .map(|t| as_built(t))
            .filter(|t| present.types.contains_key(t))
            .collect(),
        Roots::FromRules => {
            let mut names = rules_roots(rules, &present.types);
            let discover = discovered_present(rules, &present.types);
            if !discover.is_empty() {
                for root in loaded.discover_roots(&mut present, &discover)? {
                    if !names.contains(&root) {
                        names.push(root);
                    }
                }
            }
            names
        }
    };
    // The other names of a type the build has under one name are no
    // types of the rules here.
    for ty in &rules.types {
        for (alias, _) in &ty.aliases {
            if *alias != ty.name && !root_names.contains(alias) {
                present.types.remove(alias);
            }
        }
    }
    let notes = tagged(&loaded.build.config, loaded.notes());
    analyze_roots(
        &loaded.build,
        rules,
        loaded.table(),
        &present.types,
        &root_names,
        line,
        notes,
    )
}

/// `rules` in a build's names (`renames`, from [`alias_renames`]).
pub(super) fn renamed<'r>(
    rules: &'r Rules,
    renames: &HashMap<String, String>,
) -> std::borrow::Cow<'r, Rules> {
    match renames.is_empty() {
        true => std::borrow::Cow::Borrowed(rules),
        false => std::borrow::Cow::Owned(rules.renamed(renames)),
    }
}

/// For each type of the rules with aliases, the alias `build` defines it
/// under when it lacks the type's own name. A build that defines two of
/// its names with different layouts is an error at the second alias: the
/// rules cannot tell which one they describe. The same layout under two
/// names (a typedef, a copy) is the type's own name.
pub(super) fn alias_renames(
    rules: &Rules,
    found: &HashMap<String, lookup::Found>,
    table: &TypeTable,
    build: &Build,
) -> Result<HashMap<String, String>> {
    let mut renames = HashMap::new();
    for ty in rules.types.iter().filter(|t| !t.aliases.is_empty()) {
        let mut first: Option<(&str, TypeId)> =
            found.get(&ty.name).map(|f| (ty.name.as_str(), f.id));
        for (alias, at) in &ty.aliases {
            let Some(f) = found.get(alias) else {
                continue;
            };
            match first {
                None => first = Some((alias, f.id)),
                Some((name, id)) => {
                    if lookup::layout_key(table, id) != lookup::layout_key(table, f.id) {
                        return Err(at.error(format!(
                            "{} defines both '{name}' and its alias '{alias}' of [{}], with different layouts: \
                             the rules cannot tell which one they describe (drop the alias, or annotate each in a table of its own)",
                            build.path.display(),
                            ty.name
                        )));
                    }
                }
            }
        }
        if let Some((name, _)) = first
            && name != ty.name
        {
            renames.insert(ty.name.clone(), name.to_owned());
        }
    }
    Ok(renames)
}

/// Every type name the rules mention: annotated types, roots, `[[allow]]`
/// types and the owners of `TYPE.member` locks.
fn needed_names(rules: &Rules) -> HashSet<&str> {
    let mut names: HashSet<&str> = rules.types.iter().map(|t| t.name.as_str()).collect();
    names.extend(rules.roots.iter().map(|(n, _)| n.as_str()));
    names.extend(
        rules
            .allow
            .iter()
            .flat_map(|a| a.fields.iter().map(|f| f.ty.as_str())),
    );
    for ty in &rules.types {
        for lock in ty.fields.iter().filter_map(|f| f.lock.as_ref()) {
            if let Some((owner, _)) = lock.text.split_once('.') {
                names.insert(owner);
            }
        }
    }
    names
}

fn rules_roots(rules: &Rules, found: &HashMap<String, lookup::Found>) -> Vec<String> {
    rules
        .roots
        .iter()
        .map(|(n, _)| n.clone())
        .filter(|n| found.contains_key(n))
        .collect()
}

/// The types present whose roots are discovered (not restricted by their
/// file's `roots`).
fn discovered_present<'r>(
    rules: &'r Rules,
    found: &HashMap<String, lookup::Found>,
) -> Vec<&'r str> {
    rules
        .discovered_types()
        .into_iter()
        .filter(|n| found.contains_key(*n))
        .collect()
}

/// Validates the rules and analyses each root in `table`.
fn analyze_roots(
    build: &Build,
    rules: &Rules,
    table: &TypeTable,
    found: &HashMap<String, lookup::Found>,
    root_names: &[String],
    line: u64,
    mut notes: Vec<String>,
) -> Result<Analyzed> {
    let types: HashMap<String, TypeId> = found.iter().map(|(n, f)| (n.clone(), f.id)).collect();
    let checks = analysis::validate::validate(table, &types, rules);
    let tag = |text: &str| format!("[{}] {text}", build.config);
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
        config: build.config.clone(),
        file: build.path.display().to_string(),
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
