//! One build analysed under the rules: types looked up, rules validated,
//! roots discovered (or given), every root analysed. Shared by `check` and
//! `diagram`; the results are owned data, usable after the file is closed.

use std::collections::{HashMap, HashSet};

use super::check::Build;
use super::{BTF_NOTE, Resolved, Source, resolve_source, with_dwarf};
use crate::analysis::{self, Analysis, validate::Check};
use crate::dwarf::contains::Contains;
use crate::dwarf::decode::Decoder;
use crate::error::{Error, Result};
use crate::layout::{self, Depth, Item};
use crate::lookup;
use crate::model::{TypeId, TypeTable};
use crate::rules::{Location, Rules};

/// Which roots to analyse.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Roots<'a> {
    /// `roots = [...]` from the rules, else the discovered outermost containers.
    FromRules,
    /// Exactly this type, which must exist.
    Only(&'a str),
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

/// Analyses `build` under `rules`, from DWARF or BTF as `source` says.
pub(crate) fn analyze_build(
    build: &Build,
    rules: &Rules,
    cacheline: Option<u64>,
    roots: Roots<'_>,
    source: &Source,
) -> Result<Analyzed> {
    let mut names = needed_names(rules);
    if let Roots::Only(name) = roots {
        names.insert(name);
    }
    match resolve_source(&build.path, source)? {
        Resolved::Dwarf => with_dwarf(&build.path, |dwarf, sections| {
            let line = cacheline.or(rules.cacheline).unwrap_or(sections.cacheline);
            let mut decoder = Decoder::new(dwarf);
            let lookup::Present {
                types: mut found,
                units,
            } = lookup::find_present(dwarf, &mut decoder, &names)?;
            let root_names: Vec<String> = match roots {
                Roots::Only(name) => {
                    if !found.contains_key(name) {
                        return Err(lookup::unknown_type(dwarf, name));
                    }
                    vec![name.to_owned()]
                }
                Roots::FromRules if !rules.roots.is_empty() => rules_roots(rules, &found),
                Roots::FromRules => {
                    let annotated = annotated_present(rules, &found);
                    let scan_units: HashSet<usize> = annotated
                        .iter()
                        .flat_map(|n| units.get(*n).into_iter().flatten().copied())
                        .collect();
                    let min_size = annotated
                        .iter()
                        .filter_map(|n| decoder.table.size_of(found[*n].id))
                        .min()
                        .unwrap_or(0);
                    let contains = Contains::scan(dwarf, &scan_units, min_size)?;
                    let discovered = discover(&contains, &annotated);
                    for root in &discovered {
                        if let (false, Some((unit, offset))) =
                            (found.contains_key(root), contains.definition(root))
                        {
                            let id = decoder.type_at(unit, offset)?;
                            decoder.load_deep(id)?;
                            found.insert(root.clone(), single(id));
                        }
                    }
                    discovered
                }
            };
            analyze_roots(
                build,
                rules,
                &decoder.table,
                &found,
                &root_names,
                line,
                Vec::new(),
            )
        }),
        Resolved::Btf(btf) => {
            let line = cacheline.or(rules.cacheline).unwrap_or(btf.cacheline);
            let table = &btf.types.table;
            // The first layout of a name, as `layout NAME` picks it.
            let first = |name: &str| {
                let spec = lookup::TypeSpec {
                    name: name.to_owned(),
                    pick: lookup::Pick::First,
                };
                lookup::find_in_btf(&btf.types, &[spec])
                    .map(|mut f| f.remove(0))
                    .map_err(|e| with_path(e, &build.path))
            };
            let mut found: HashMap<String, lookup::Found> = names
                .iter()
                .filter_map(|n| Some(((*n).to_owned(), first(n).ok()?)))
                .collect();
            let root_names: Vec<String> = match roots {
                Roots::Only(name) => {
                    if !found.contains_key(name) {
                        return Err(first(name).err().unwrap_or_else(|| {
                            Error::BadType(format!("no struct '{name}' in BTF"))
                        }));
                    }
                    vec![name.to_owned()]
                }
                Roots::FromRules if !rules.roots.is_empty() => rules_roots(rules, &found),
                Roots::FromRules => {
                    let annotated = annotated_present(rules, &found);
                    let edges = analysis::containment(table, &btf.types.composites);
                    let pairs: Vec<(&str, &str)> = edges
                        .iter()
                        .map(|(a, b)| (a.as_str(), b.as_str()))
                        .collect();
                    let discovered = discover(&Contains::from_edges(&pairs), &annotated);
                    for root in &discovered {
                        if !found.contains_key(root) {
                            found.insert(root.clone(), first(root)?);
                        }
                    }
                    discovered
                }
            };
            let mut notes = vec![format!("[{}] {BTF_NOTE}", build.config)];
            notes.extend(
                btf.types
                    .notes
                    .iter()
                    .map(|n| format!("[{}] {n}", build.config)),
            );
            analyze_roots(build, rules, table, &found, &root_names, line, notes)
        }
    }
}

fn with_path(e: Error, path: &std::path::Path) -> Error {
    match e {
        Error::UnknownType { name, hint, .. } => Error::UnknownType {
            name,
            path: path.to_owned(),
            hint,
        },
        other => other,
    }
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

fn annotated_present<'r>(rules: &'r Rules, found: &HashMap<String, lookup::Found>) -> Vec<&'r str> {
    rules
        .types
        .iter()
        .map(|t| t.name.as_str())
        .filter(|n| found.contains_key(*n))
        .collect()
}

fn discover(contains: &Contains<'_>, annotated: &[&str]) -> Vec<String> {
    let mut roots: Vec<String> = annotated.iter().flat_map(|n| contains.roots(n)).collect();
    roots.sort();
    roots.dedup();
    roots
}

fn single(id: TypeId) -> lookup::Found {
    lookup::Found { id, note: None }
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
