//! `cachelint suggest --rules R BUILD... TYPE`: a member order for TYPE
//! that the rules like better on every build, found by
//! [`crate::search`] and laid out by the plan engine.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use super::asserts::{AssertsOptions, asserts};
use super::builds;
use super::diagram::{DEFAULT_WIDTH, DiagramOptions, Selection, diagram};
use crate::error::{Error, Result};
use crate::layout;
use crate::load::{self, Build, Reading};
use crate::plan::Plan;
use crate::report::layout::LayoutReport;
use crate::report::suggest::{
    AloneBuild, AloneOrder, Gap, Growth, Method, PerConfig, Placement, Role, Size, SuggestBuild,
    SuggestReport,
};
use crate::rules::Rules;
use crate::search::{self, Entry, Snapshot};

/// Everything `suggest` needs.
#[derive(Clone, Debug)]
pub struct SuggestOptions {
    /// Rules files.
    pub rules: Vec<PathBuf>,
    /// Builds (configs) the suggestion must hold on.
    pub builds: Vec<Build>,
    /// The struct to reorder.
    pub ty: String,
    /// Where to write the plan file.
    pub plan_out: Option<PathBuf>,
    /// Lines a root may grow by, at most (`--no-grow` is 0).
    pub max_growth: Option<u64>,
    /// Let no context touch more lines of the struct than as compiled.
    pub keep_footprint: bool,
    /// Members, or kernel groups, kept at their compiled offsets.
    pub pin: Vec<String>,
    /// `--rank`: the objectives most important first (comma-separated
    /// names; the rest follow in the default order).
    pub rank: Option<String>,
    /// The kernel source tree the build comes from: write the header patch.
    pub source_tree: Option<PathBuf>,
    /// Draw the first build's struct compiled against suggested.
    pub diagram: bool,
    /// Write the check function of the suggested layout on the first build.
    pub asserts: bool,
    /// Cacheline size override.
    pub cacheline: Option<u64>,
    /// DWARF, BTF, or whichever the files have.
    pub reading: Reading,
}

/// The rules `suggest` reads (none: packing only), refusing a `--plan`.
pub(super) fn suggest_rules(opts: &SuggestOptions) -> Result<Rules> {
    if opts.reading.plan.is_some() {
        return Err(Error::Usage(
            "suggest starts from the compiled layout: it takes no --plan \
             (check its suggestion with --plan afterwards)"
                .into(),
        ));
    }
    match opts.rules.is_empty() {
        true => Ok(Rules::default()),
        false => Rules::load(&opts.rules),
    }
}

/// Runs `suggest`.
pub fn suggest(opts: &SuggestOptions) -> Result<SuggestReport> {
    let rules = suggest_rules(opts)?;
    if std::path::Path::new(&opts.ty).is_file() {
        return Err(Error::Usage(format!(
            "the last argument is the struct to reorder, and '{}' is a file (a build?): \
             give BUILD... TYPE",
            opts.ty
        )));
    }
    // The rules' type TYPE names, by its name or an alias.
    let canonical = rules
        .types
        .iter()
        .find(|t| t.names().any(|n| n == opts.ty))
        .map(|t| t.name.clone());
    if !opts.rules.is_empty() && canonical.is_none() {
        return Err(Error::Usage(format!(
            "the rules annotate no field of '{}': suggest reorders an annotated struct",
            opts.ty
        )));
    }
    let loaded = builds::in_order(&opts.builds, |build| {
        snapshot(build, &rules, &opts.ty, opts.cacheline, &opts.reading)
    })?;
    // A build may have a rules type under an alias (lru_gen_folio was
    // lru_gen_struct before 6.2): the search reads the rules and writes the
    // plan in the build's names, so every build must use the same ones.
    let renames = loaded[0].1.clone();
    if let Some((other, _)) = loaded
        .iter()
        .zip(&opts.builds)
        .find(|((_, r), _)| *r != renames)
    {
        return Err(Error::Usage(format!(
            "the builds name the rules' types differently ({} in {}, {} in {}): one plan \
             names one struct, so suggest builds that agree (aliases: {})",
            names_of(&renames, canonical.as_deref(), &opts.ty),
            opts.builds[0].config,
            names_of(&other.1, canonical.as_deref(), &opts.ty),
            other.0.config,
            opts.ty
        )));
    }
    let snaps: Vec<Snapshot> = loaded.into_iter().map(|(s, _)| s).collect();
    if renames.is_empty() {
        return from_snapshots(opts, rules, snaps);
    }
    let built = snaps[0].target_name.clone();
    let opts = SuggestOptions {
        ty: built,
        ..opts.clone()
    };
    from_snapshots(&opts, rules.renamed(&renames), snaps)
}

/// TYPE as a build names it, for a message.
fn names_of(
    renames: &std::collections::HashMap<String, String>,
    canonical: Option<&str>,
    ty: &str,
) -> String {
    let name = canonical.unwrap_or(ty);
    renames
        .get(name)
        .cloned()
        .unwrap_or_else(|| name.to_owned())
}

/// `suggest` of `opts.ty` on its builds, loaded (one snapshot per build).
pub(crate) fn from_snapshots(
    opts: &SuggestOptions,
    rules: Rules,
    snaps: Vec<Snapshot>,
) -> Result<SuggestReport> {
    let packing = opts.rules.is_empty();
    // One order for every build, over the union of their members: a
    // member under an #ifdef some config lacks is optional in the plan.
    let lists: Vec<(&str, Vec<search::Unit>)> = snaps
        .iter()
        .map(|s| {
            (
                s.config.as_str(),
                search::units(&s.table, s.target, &opts.ty, &rules),
            )
        })
        .collect();
    let merged = search::members::merge(&opts.ty, &lists)?;
    let units = merged.units;
    if units.len() > search::MAX_UNITS && rules.contexts.is_empty() && !packing {
        return Err(Error::Usage(format!(
            "struct {} has {} members to order: suggest climbs up to {} so far (its \
             neighbourhood grows with the square of the members); with context rules it \
             compares a context order instead",
            opts.ty,
            units.len(),
            search::MAX_UNITS
        )));
    }
    let per_config: Vec<PerConfig> = units
        .iter()
        .zip(&merged.present)
        .filter(|(u, _)| u.optional)
        .map(|(u, p)| PerConfig {
            member: u.name.clone(),
            configs: p.iter().map(|&b| snaps[b].config.clone()).collect(),
        })
        .collect();
    if opts.keep_footprint && rules.contexts.is_empty() {
        return Err(Error::Usage(
            "--keep-footprint keeps the lines each context touches: the rules have no contexts"
                .into(),
        ));
    }
    let limits = search::Limits {
        max_growth: opts.max_growth.map(|l| l.min(i64::MAX as u64) as i64),
        keep_footprint: opts.keep_footprint,
        pinned: search::pinned(&opts.ty, &units, &opts.pin)
            .map_err(|e| Error::Usage(format!("--pin: {e}")))?,
        rank: rank(opts, packing)?,
    };
    let (found, mut notes) = match packing {
        true => super::suggest_packing::search(&opts.ty, &units, &snaps, &limits)?,
        false => (
            search::search(&opts.ty, &units, &snaps, &rules, &limits)?,
            Vec::new(),
        ),
    };
    if found.score.over > 0 {
        notes.push(format!(
            "no order found within --max-growth {}: the best grows a root by {} lines",
            opts.max_growth.unwrap_or(0),
            found.score.growth_lines
        ));
    }
    if found.score.regress > 0 {
        notes.push(format!(
            "no order found that keeps every context's lines (--keep-footprint): the best \
             touches {} more, over the contexts and builds",
            found.score.regress
        ));
    }
    let mut report = SuggestReport {
        name: opts.ty.clone(),
        members: units.len(),
        tried: found.tried,
        rounds: found.rounds,
        budget: found.budget,
        gap: None,
        exact: found.method == Method::Exhaustive,
        method: found.method,
        order: order_names(&found.order, &units, &opts.ty),
        moved: found.score.moved,
        removed: found
            .removed
            .iter()
            .map(|u| units[*u].name.clone())
            .collect(),
        per_config,
        plan: found.plan_text.clone(),
        plan_out: None,
        patch: None,
        rank: match packing {
            true => vec!["size".into(), "moved".into()],
            false => limits.rank.0.iter().map(|o| o.name().to_owned()).collect(),
        },
        builds: Vec::new(),
        c: None,
        diagram: None,
        asserts: None,
        alone: found
            .alone
            .iter()
            .map(|a| alone_order(a, &found.outcomes, &snaps, &units, &opts.ty))
            .collect(),
        notes,
        packing,
    };
    for ((before, after), snap) in found
        .before
        .outcomes
        .iter()
        .zip(&found.outcomes)
        .zip(&snaps)
    {
        let (old, new) = after.target;
        let mut sizes = vec![size(&opts.ty, Role::Struct, old, new, snap.line)];
        sizes.extend(
            after
                .roots
                .iter()
                .map(|r| size(&r.root, Role::Root, r.old, r.new, snap.line)),
        );
        report.builds.push(SuggestBuild {
            config: after.config.clone(),
            errors: [before.errors, after.errors],
            warnings: [before.warnings, after.warnings],
            sizes,
            footprint: before
                .footprint
                .iter()
                .zip(&after.footprint)
                .map(|(b, a)| (a.context.clone(), b.lines, a.lines, a.optimum))
                .collect(),
            least: match packing {
                true => least_size(snap)?,
                false => None,
            },
        });
    }
    if !packing {
        report.gap = Some(gap(&report.builds));
    }
    // The suggestion as a plan file, as `--plan` would read it: for its C
    // here, and for `diagram` and `asserts` below.
    let path = opts
        .plan_out
        .clone()
        .unwrap_or_else(|| PathBuf::from("suggested.plan.toml"));
    let plan = Arc::new(Plan::parse(&path, &found.plan_text)?);
    report.c = Some(c_declaration(&plan, &snaps[0], opts.plan_out.as_deref())?);
    if let Some(tree) = &opts.source_tree {
        report.patch = Some(header_patch(
            tree,
            &snaps,
            &units,
            &found.order,
            &found.removed,
            &opts.ty,
        )?);
    }
    if let Some(path) = &opts.plan_out {
        std::fs::write(path, &found.plan_text).map_err(|e| {
            Error::Usage(format!("--plan-out {}: cannot write: {e}", path.display()))
        })?;
        report.plan_out = Some(path.display().to_string());
    }
    if opts.diagram || opts.asserts {
        // What `diagram` and `asserts` give reading the plan file: the
        // same commands, on the first build.
        let reading = Reading {
            plan: Some(plan),
            ..opts.reading.clone()
        };
        let build = &opts.builds[0];
        if opts.diagram {
            let drawn = diagram(&DiagramOptions {
                rules: opts.rules.clone(),
                build: build.clone(),
                ty: opts.ty.clone(),
                selection: Selection::Flagged,
                width: DEFAULT_WIDTH,
                style: None,
                compare: Some(build.clone()),
                cacheline: opts.cacheline,
                reading: reading.clone(),
                explain: None,
            })?;
            report.notes.extend(drawn.notes.iter().cloned());
            report.diagram = Some(drawn);
        }
        let grouped = found.order.iter().any(|e| match e {
            Entry::Unit(u) => units[*u].marker,
            Entry::Group(_) | Entry::Named(..) => true,
        });
        if opts.asserts && !grouped {
            report.notes.push(format!(
                "the suggested layout of struct {} has no cacheline group: no check function \
                 to write (--asserts)",
                opts.ty
            ));
        } else if opts.asserts {
            let written = asserts(&AssertsOptions {
                rules: opts.rules.clone(),
                build: build.clone(),
                ty: opts.ty.clone(),
                against: None,
                cacheline: opts.cacheline,
                reading,
            })?;
            report.notes.extend(written.notes.iter().cloned());
            report.asserts = Some(written);
        }
        let mut seen = HashSet::new();
        report.notes.retain(|n| seen.insert(n.clone()));
    }
    Ok(report)
}

/// How far the suggested builds are from the objectives' bounds.
fn gap(builds: &[SuggestBuild]) -> Gap {
    Gap {
        errors: builds.iter().map(|b| b.errors[1]).sum(),
        warnings: builds.iter().map(|b| b.warnings[1]).sum(),
        growth_lines: builds
            .iter()
            .flat_map(|b| &b.sizes)
            .map(|s| s.growth.lines)
            .max()
            .unwrap_or(0)
            .max(0),
        footprint_lines: builds
            .iter()
            .flat_map(|b| &b.footprint)
            .map(|(_, _, lines, optimum)| (*lines as u64).saturating_sub(*optimum))
            .sum(),
    }
}

/// Packing's bound on `snap`: the least size any order of its struct
/// could have.
fn least_size(snap: &Snapshot) -> Result<Option<u64>> {
    let compiled = layout::layout(&snap.table, snap.target, snap.line, layout::Depth::Direct)?;
    Ok(search::packing::least_size(&compiled))
}

/// The objectives' order `--rank` asks for (the default without it).
fn rank(opts: &SuggestOptions, packing: bool) -> Result<search::Rank> {
    match &opts.rank {
        None => Ok(search::Rank::default()),
        Some(_) if packing => Err(Error::Usage(
            "--rank orders the rules' objectives: without --rules suggest packs (the \
             smallest size, then the fewest members moved)"
                .into(),
        )),
        Some(list) => search::Rank::parse(list).map_err(|e| Error::Usage(format!("--rank: {e}"))),
    }
}

/// The struct as the suggestion lays it out on `snap`, to print as C.
fn c_declaration(
    plan: &Arc<Plan>,
    snap: &Snapshot,
    plan_out: Option<&std::path::Path>,
) -> Result<LayoutReport> {
    let (table, laid) = snap.planned(plan)?;
    Ok(LayoutReport {
        table,
        layouts: vec![(laid, None)],
        expand: false,
        macros: true,
        planned_by: Some(match plan_out {
            Some(p) => p.display().to_string(),
            None => "cachelint suggest".to_owned(),
        }),
        notes: Vec::new(),
    })
}

/// An order in words: a unit's name, a group as `G: a, b`.
fn order_names(order: &[Entry], units: &[search::Unit], ty: &str) -> Vec<String> {
    let names = |g: &[usize]| {
        g.iter()
            .map(|u| units[*u].name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    order
        .iter()
        .map(|e| match e {
            Entry::Unit(u) => units[*u].name.clone(),
            Entry::Named(n, g) => format!("{n}: {}", names(g)),
            Entry::Group(g) => format!("{ty}_lockless (aligned): {}", names(g)),
        })
        .collect()
}

/// What an order a single build likes better gives on every build.
fn alone_order(
    a: &search::Alone,
    suggested: &[search::Outcome],
    snaps: &[Snapshot],
    units: &[search::Unit],
    ty: &str,
) -> AloneOrder {
    let growth = |o: &search::Outcome, line: u64| {
        o.roots
            .iter()
            .map(|r| r.new.div_ceil(line) as i64 - r.old.div_ceil(line) as i64)
            .max()
            .unwrap_or(0)
    };
    AloneOrder {
        config: snaps[a.build].config.clone(),
        order: order_names(&a.order, units, ty),
        plan: a.plan_text.clone(),
        builds: a
            .everywhere
            .iter()
            .zip(suggested)
            .zip(snaps)
            .map(|((o, s), snap)| AloneBuild {
                config: o.config.clone(),
                errors: [s.errors, o.errors],
                warnings: [s.warnings, o.warnings],
                growth_lines: [growth(s, snap.line), growth(o, snap.line)],
            })
            .collect(),
        offsets: snaps
            .iter()
            .flat_map(|snap| {
                snap.roots.iter().filter_map(|(root, id)| {
                    let offset = offset_in(&snap.table, *id, snap.target, 0)?;
                    Some(Placement {
                        config: snap.config.clone(),
                        root: root.clone(),
                        offset,
                        in_line: offset % snap.line,
                    })
                })
            })
            .collect(),
    }
}

/// The byte offset of the first instance of struct `target` in `ty`.
fn offset_in(
    table: &crate::model::TypeTable,
    ty: crate::model::TypeId,
    target: crate::model::TypeId,
    depth: usize,
) -> Option<u64> {
    let ty = table.strip(ty);
    if ty == target {
        return Some(0);
    }
    if depth > crate::model::MAX_TYPE_DEPTH {
        return None;
    }
    let members = table.composite(ty)?.members.as_ref()?;
    members.iter().find_map(|m| {
        let inner = offset_in(table, m.ty, target, depth + 1)?;
        Some(m.bit_offset / 8 + inner)
    })
}

/// A size row: bytes and the lines of `line` bytes they take, compiled
/// and suggested.
fn size(ty: &str, role: Role, old: u64, new: u64, line: u64) -> Size {
    let lines = [old.div_ceil(line), new.div_ceil(line)];
    Size {
        ty: ty.to_owned(),
        role,
        bytes: [old, new],
        lines,
        growth: Growth {
            bytes: new as i64 - old as i64,
            lines: lines[1] as i64 - lines[0] as i64,
        },
    }
}

/// One build loaded: the roots of the rules' types, decoded, with TYPE.
fn snapshot(
    build: &Build,
    rules: &Rules,
    ty: &str,
    cacheline: Option<u64>,
    reading: &Reading,
) -> Result<(Snapshot, std::collections::HashMap<String, String>)> {
    load::open(build, reading, |loaded| {
        let mut names: HashSet<&str> = rules.types.iter().flat_map(|t| t.names()).collect();
        names.extend(rules.roots.iter().map(|(n, _)| n.as_str()));
        names.insert(ty);
        let mut present = loaded.find_present(&names)?;
        let renames = super::analyze::alias_renames(rules, &present.types, loaded.table(), build)?;
        let rules = &*super::analyze::renamed(rules, &renames);
        // TYPE by the name this build has: its own, or the alias the build
        // defines the rules type under.
        let built = match present.types.contains_key(ty) {
            true => ty.to_owned(),
            false => renames.get(ty).cloned().unwrap_or_else(|| ty.to_owned()),
        };
        let Some(target) = present.types.get(&built).map(|f| f.id) else {
            return Err(loaded.unknown_type(ty));
        };
        let roots = rule_roots(loaded, &mut present, rules)?;
        let mut snap = Snapshot::new(
            build.config.clone(),
            loaded.table().clone(),
            roots,
            target,
            loaded.abi(),
            cacheline.or(rules.cacheline).unwrap_or(loaded.cacheline),
        );
        snap.target_name = built;
        Ok((snap, renames))
    })
}

/// The roots `check` analyses for `rules` in a loaded build: the rules'
/// `roots` it has, then those discovered (structs embedding the rules'
/// types), with their ids.
pub(super) fn rule_roots(
    loaded: &mut load::Loaded<'_, '_>,
    present: &mut crate::lookup::Present,
    rules: &Rules,
) -> Result<Vec<(String, crate::model::TypeId)>> {
    let discover: Vec<&str> = rules
        .discovered_types()
        .into_iter()
        .filter(|n| present.types.contains_key(*n))
        .collect();
    let mut roots: Vec<String> = rules
        .roots
        .iter()
        .map(|(n, _)| n.clone())
        .filter(|n| present.types.contains_key(n))
        .collect();
    for r in loaded.discover_roots(present, &discover)? {
        if !roots.contains(&r) {
            roots.push(r);
        }
    }
    Ok(roots
        .into_iter()
        .filter_map(|r| Some((r.clone(), present.types.get(&r)?.id)))
        .collect())
}

/// The unified diff of TYPE's header in `tree` for `order`. A member's
/// line comes from the first build that has it (every build is compiled
/// from the same header).
fn header_patch(
    tree: &std::path::Path,
    snaps: &[Snapshot],
    units: &[search::Unit],
    order: &[Entry],
    removed: &[usize],
    ty: &str,
) -> Result<String> {
    let refuse = |why: String| Error::Usage(format!("--source-tree: {why}"));
    let snap = &snaps[0];
    let c = snap
        .table
        .composite(snap.target)
        .expect("the target is a struct");
    let decl = c.decl.as_ref().ok_or_else(|| {
        refuse(format!(
            "the debug info gives no declaration line for struct {ty}"
        ))
    })?;
    let mut runs: Vec<(u64, u64)> = Vec::new();
    let mut line_of = |u: usize| -> Result<u64> {
        let name = &units[u].name;
        for snap in snaps {
            let table = &snap.table;
            let members = table
                .composite(snap.target)
                .and_then(|c| c.members.as_deref())
                .unwrap_or_default();
            let found = members.iter().position(|m| match &m.name {
                Some(n) => n == name,
                None => search::first_inner_name(table, m.ty).as_deref() == Some(name.as_str()),
            });
            let Some(i) = found else { continue };
            let m = &members[i];
            let line = match (&m.name, &m.decl) {
                (_, Some(d)) => d.line,
                // An anonymous struct or union: where its type is declared.
                (None, None) => table
                    .composite(table.strip(m.ty))
                    .and_then(|c| c.decl.as_ref())
                    .map(|d| d.line)
                    .ok_or_else(|| {
                        refuse(format!(
                            "the debug info gives no line for the anonymous member of {ty} \
                             holding '{name}'"
                        ))
                    })?,
                (Some(_), None) => {
                    return Err(refuse(format!("the debug info gives no line for '{name}'")));
                }
            };
            // A bitfield run moves whole, to its last bitfield.
            if m.bit_size.is_some() {
                let last = members[i..]
                    .iter()
                    .take_while(|m| m.bit_size.is_some())
                    .last()
                    .and_then(|m| m.decl.as_ref())
                    .map_or(line, |d| d.line);
                if last != line {
                    runs.push((line, last));
                }
            }
            return Ok(line);
        }
        Err(refuse(format!("no build places '{name}' of {ty}")))
    };
    let mut pieces = Vec::new();
    for e in order {
        pieces.push(match e {
            Entry::Unit(u) => crate::source_patch::Piece::Member(line_of(*u)?),
            Entry::Group(g) => crate::source_patch::Piece::AlignedGroup(
                format!("{ty}_lockless"),
                g.iter().map(|u| line_of(*u)).collect::<Result<_>>()?,
            ),
            Entry::Named(n, g) => crate::source_patch::Piece::Group(
                n.clone(),
                g.iter().map(|u| line_of(*u)).collect::<Result<_>>()?,
            ),
        });
    }
    let removed = removed
        .iter()
        .map(|u| line_of(*u))
        .collect::<Result<Vec<_>>>()?;
    let relative = decl.file.as_str();
    let path = tree.join(relative);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        refuse(format!(
            "{}: {e} (struct {ty} is declared in {}; give the tree the build comes from)",
            path.display(),
            decl.file
        ))
    })?;
    crate::source_patch::reorder(relative, &text, decl.line, &pieces, &removed, &runs)
}
