//! One build analysed under the rules: types looked up, rules validated,
//! roots discovered (or given), every root analysed. Shared by `check` and
//! `diagram`; the results are owned data, usable after the file is closed.

use std::collections::{HashMap, HashSet};

use super::check::Build;
use super::with_dwarf;
use crate::analysis::{self, Analysis, validate::Check};
use crate::dwarf::contains::Contains;
use crate::dwarf::decode::Decoder;
use crate::error::Result;
use crate::layout::{self, Depth, Item};
use crate::lookup;
use crate::model::TypeId;
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

/// Analyses `build` under `rules`.
pub(crate) fn analyze_build(
    build: &Build,
    rules: &Rules,
    cacheline: Option<u64>,
    roots: Roots<'_>,
) -> Result<Analyzed> {
    with_dwarf(&build.path, |dwarf, sections| {
        let line = cacheline.or(rules.cacheline).unwrap_or(sections.cacheline);
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
        if let Roots::Only(name) = roots {
            names.insert(name);
        }
        let mut decoder = Decoder::new(dwarf);
        let lookup::Present {
            types: mut found,
            units,
        } = lookup::find_present(dwarf, &mut decoder, &names)?;
        let types: HashMap<String, TypeId> = found.iter().map(|(n, f)| (n.clone(), f.id)).collect();
        let checks = analysis::validate::validate(&decoder.table, &types, rules);
        let tag = |text: &str| format!("[{}] {text}", build.config);
        let mut notes: Vec<String> = found
            .values()
            .filter_map(|f| f.note.as_deref())
            .map(tag)
            .collect();
        let root_names: Vec<String> = match roots {
            Roots::Only(name) => {
                if !found.contains_key(name) {
                    return Err(lookup::unknown_type(dwarf, name));
                }
                vec![name.to_owned()]
            }
            Roots::FromRules if !rules.roots.is_empty() => rules
                .roots
                .iter()
                .map(|(n, _)| n.clone())
                .filter(|n| found.contains_key(n))
                .collect(),
            Roots::FromRules => {
                let annotated: Vec<&str> = rules
                    .types
                    .iter()
                    .map(|t| t.name.as_str())
                    .filter(|n| found.contains_key(*n))
                    .collect();
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
                let mut discovered: Vec<String> =
                    annotated.iter().flat_map(|n| contains.roots(n)).collect();
                discovered.sort();
                discovered.dedup();
                for root in &discovered {
                    if let (false, Some((unit, offset))) =
                        (found.contains_key(root), contains.definition(root))
                    {
                        let id = decoder.type_at(unit, offset)?;
                        decoder.load_deep(id)?;
                        found.insert(
                            root.clone(),
                            lookup::Found {
                                id,
                                variants: 1,
                                picked: 1,
                                note: None,
                            },
                        );
                    }
                }
                discovered
            }
        };
        let mut analysed = Vec::new();
        for root in &root_names {
            let Some(f) = found.get(root) else {
                continue;
            };
            let a = analysis::analyze(&decoder.table, f.id, root, line, rules);
            if !a.annotated.spans.iter().any(|s| s.class.is_some()) {
                notes.push(tag(&format!("root '{root}' holds no annotated field")));
            }
            notes.extend(a.annotated.notes.iter().map(|n| tag(n)));
            let paddings = layout::layout(&decoder.table, f.id, line, Depth::Expand)?
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
            .filter_map(|(n, f)| Some((n.clone(), decoder.table.size_of(f.id)?)))
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
    })
}
