//! `cachelint suggest --rules R BUILD... TYPE...`: for each TYPE, a
//! member order that the rules like better on every build, found by
//! [`crate::search`] and laid out by the plan engine; without rules, the
//! order that packs it smallest ([`packing`]). One TYPE or several take
//! the same path: each is searched on its own copy of every build's
//! types; with several, a type that cannot be searched is refused with
//! the reason and the others go on.

mod header;
mod packing;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::analysis::members;
use crate::error::{Error, Result};
use crate::layout;
use crate::plan::Plan;
use crate::report::layout::LayoutReport;
use crate::report::suggest::{
    AloneBuild, AloneOrder, Gap, Growth, Method, PerConfig, Placement, Role, Size, SuggestBuild,
    SuggestReport, SuggestReports,
};
use crate::rules::Rules;
use crate::run::{self, DrawSpec, Opened, Run, Selection, Want};
use crate::search::{self, Entry, Snapshot};

/// Everything `suggest` needs besides the run (the rules, if any, and
/// the builds the suggestion must hold on).
#[derive(Clone, Debug, Default)]
pub struct SuggestOptions {
    /// The structs to reorder.
    pub types: Vec<String>,
    /// Where to write the plan file (every type's plan in one file).
    pub plan_out: Option<PathBuf>,
    /// Lines a root may grow by, at most (`--no-grow` is 0).
    pub max_growth: Option<u64>,
    /// Let no context touch more lines of the struct than as compiled.
    pub keep_footprint: bool,
    /// Members, or kernel groups, kept at their compiled offsets.
    pub pin: Vec<String>,
    /// Let padding, explicitly aligned members and aligned groups' markers
    /// move (`--unpin-aligned`): by default no member moves across them.
    pub unpin_aligned: bool,
    /// `--rank`: the objectives most important first (comma-separated
    /// names; the rest follow in the default order).
    pub rank: Option<String>,
    /// The kernel source tree the build comes from: write the header patch.
    pub source_tree: Option<PathBuf>,
    /// Draw the first build's struct compiled against suggested.
    pub diagram: bool,
    /// Write the check function of the suggested layout on the first build.
    pub asserts: bool,
}

impl SuggestOptions {
    /// What `suggest` reads of each build: the types, and the rules'
    /// types and roots.
    pub fn want(&self, _rules: &Rules) -> Result<Want> {
        Ok(Want {
            names: self.types.clone(),
            roots: true,
            ..Want::default()
        })
    }
}

/// Runs `suggest` for every type asked for. `--plan-out` writes the plans
/// of all of them into one plan file.
pub fn suggest(run: &Run, opts: &SuggestOptions) -> Result<SuggestReports> {
    let mut reports = Vec::new();
    for ty in &opts.types {
        let report = suggest_one(run, opts, ty);
        match (report, opts.types.len()) {
            (Err(e), 1) => return Err(e),
            (report, _) => reports.push(report.map_err(|e| (ty.clone(), e.to_string()))),
        }
    }
    if let Some(path) = &opts.plan_out {
        let text: Vec<&str> = reports
            .iter()
            .filter_map(|r| r.as_ref().ok())
            .map(|r| r.plan.as_str())
            .collect();
        std::fs::write(path, text.join("\n")).map_err(|e| Error::Write {
            what: "--plan-out",
            path: Some(path.to_owned()),
            reason: format!("cannot write: {e}"),
        })?;
        for r in reports.iter_mut().flatten() {
            r.plan_out = Some(path.display().to_string());
        }
    }
    Ok(SuggestReports { reports })
}

/// `suggest` of one type `ty` (as asked for: its name, or a rules alias).
fn suggest_one(run: &Run, opts: &SuggestOptions, ty: &str) -> Result<SuggestReport> {
    let rules = &run.rules;
    let packing = run.rules_files.is_empty();
    if std::path::Path::new(ty).is_file() {
        return Err(Error::Usage(format!(
            "the last argument is the struct to reorder, and '{ty}' is a file (a build?): \
             give BUILD... TYPE..."
        )));
    }
    // The rules' type TYPE names, by its name or an alias.
    let canonical = rules
        .types
        .iter()
        .find(|t| t.names().any(|n| n == ty))
        .map(|t| t.name.clone());
    if !packing && canonical.is_none() {
        return Err(Error::Mismatch(format!(
            "the rules annotate no field of '{ty}': suggest reorders an annotated struct"
        )));
    }
    // A build may have a rules type under an alias (lru_gen_folio was
    // lru_gen_struct before 6.2): the search reads the rules and writes the
    // plan in the build's names, so every build must use the same ones.
    let first = &run.builds[0];
    if let Some(other) = run.builds.iter().find(|b| b.renames != first.renames) {
        return Err(Error::Mismatch(format!(
            "the builds name the rules' types differently ({} in {}, {} in {}): one plan \
             names one struct, so suggest builds that agree (aliases: {ty})",
            names_of(&first.renames, canonical.as_deref(), ty),
            first.build.config,
            names_of(&other.renames, canonical.as_deref(), ty),
            other.build.config,
        )));
    }
    let mut snaps = run
        .builds
        .iter()
        .map(|b| snapshot(run, b, ty, canonical.as_deref()))
        .collect::<Result<Vec<_>>>()?;
    let built = snaps[0].target_name.clone();
    let rules = run::renamed(rules, &first.renames, &first.member_renames);
    let mut misfits = Vec::new();
    for (opened, snap) in run.builds.iter().zip(&mut snaps) {
        misfits.extend(weigh(run, opened, snap, &rules));
    }
    let mut report = from_snapshots(run, opts, &built, &rules, snaps)?;
    if !run.perf.is_empty() {
        report.notes.extend(run.perf_notes());
        report.notes.extend(misfits);
        report.notes = crate::report::unique_notes(std::mem::take(&mut report.notes));
    }
    Ok(report)
}

/// Weighs the fields of `snap`'s struct by `--perf`'s samples on it as
/// `opened` compiles it (its fields' spans under `rules`), and gives the
/// notes on the rows that do not fit it. Nothing without `--perf`.
fn weigh(run: &Run, opened: &Opened, snap: &mut Snapshot, rules: &Rules) -> Vec<String> {
    let outer = crate::plan::outer(&snap.target_name).to_owned();
    let Some(id) = opened.present.get(&outer).map(|f| f.id) else {
        return Vec::new();
    };
    let view = opened.compiled();
    let line = run.line(opened);
    let Some((placed, misfits)) = run.samples_on(&view, id, line) else {
        return Vec::new();
    };
    let own = crate::analysis::analyze(&opened.table, id, &outer, line, rules);
    let weights = own
        .annotated
        .spans
        .iter()
        .filter_map(|span| {
            let (ty, path) = span.owners.first()?;
            let n = crate::analysis::samples::samples_in(&placed, span.offset, span.size);
            (ty == &outer && n > 0.0).then(|| (path.clone(), n.round() as u64))
        })
        .collect();
    snap.weigh(weights);
    misfits
}

/// TYPE as a build names it, for a message.
fn names_of(renames: &HashMap<String, String>, canonical: Option<&str>, ty: &str) -> String {
    let name = canonical.unwrap_or(ty);
    renames
        .get(name)
        .cloned()
        .unwrap_or_else(|| name.to_owned())
}

/// The search's copy of `opened` for struct `ty`: its types, its roots
/// under the rules, and `ty` by the name the build has it under (its own,
/// or the alias of `canonical`, the rules type it names).
fn snapshot(run: &Run, opened: &Opened, ty: &str, canonical: Option<&str>) -> Result<Snapshot> {
    let present = &opened.present;
    let built = match (present.contains_key(ty), canonical) {
        (true, _) => ty.to_owned(),
        (false, Some(c)) if present.contains_key(c) => c.to_owned(),
        (false, Some(c)) => opened
            .renames
            .get(c)
            .cloned()
            .unwrap_or_else(|| ty.to_owned()),
        (false, None) => ty.to_owned(),
    };
    let Some(target) = present.get(&built).map(|f| f.id) else {
        return Err(run.unknown_type(opened, ty));
    };
    let (target, built) = wrapped(&opened.table, target, built);
    let roots = opened
        .roots
        .iter()
        .filter_map(|r| Some((r.clone(), present.get(r)?.id)))
        .collect();
    let mut snap = Snapshot::new(
        opened.build.config.clone(),
        opened.table.clone(),
        roots,
        target,
        opened.abi,
        run.line(opened),
    );
    snap.target_name = built;
    Ok(snap)
}

/// Where the members of struct `id` (named `name`) live: inside the one
/// anonymous struct that holds all of them when it is a wrapper (6.12
/// `mm_struct` is `struct { ... }; cpu_bitmap[]`), as deep as wrappers
/// go, with the plan's name for it (`mm_struct.mm_mt`); else itself.
fn wrapped(
    table: &crate::model::TypeTable,
    id: crate::model::TypeId,
    name: String,
) -> (crate::model::TypeId, String) {
    let (mut id, mut name) = (id, name);
    for _ in 0..crate::model::MAX_TYPE_DEPTH {
        let Some(members) = table.composite(id).and_then(|c| c.members.as_ref()) else {
            break;
        };
        let sized: Vec<_> = members
            .iter()
            .filter(|m| table.size_of(m.ty).unwrap_or(0) > 0)
            .collect();
        let [only] = sized.as_slice() else { break };
        let inner = table.strip(only.ty);
        let Some(c) = table.composite(inner) else {
            break;
        };
        let first = c.members.iter().flatten().find_map(|m| m.name.clone());
        match (&only.name, c.kind, first) {
            (None, crate::model::CompositeKind::Struct, Some(first)) => {
                id = inner;
                name = format!("{name}.{first}");
            }
            _ => break,
        }
    }
    (id, name)
}

/// `suggest` of struct `ty` (named as the builds have it) on its builds'
/// snapshots, under `rules` in the builds' names: the search, the report
/// of what it found, and the suggestion as a plan file, with the C, the
/// header patch, the diagram and the check function it gives.
fn from_snapshots(
    run: &Run,
    opts: &SuggestOptions,
    ty: &str,
    rules: &Rules,
    snaps: Vec<Snapshot>,
) -> Result<SuggestReport> {
    let packing = run.rules_files.is_empty();
    let searched = searched(run, opts, ty, rules, &snaps, packing)?;
    let mut report = report_of(run, ty, &searched, &snaps, packing)?;
    // The suggestion as a plan file, as `--plan` would read it: for its C
    // here, and for `diagram` and `asserts` below.
    let path = opts
        .plan_out
        .clone()
        .unwrap_or_else(|| PathBuf::from("suggested.plan.toml"));
    let plan = Arc::new(Plan::parse(&path, &searched.found.plan_text)?);
    report.c = Some(c_declaration(&plan, &snaps[0], opts.plan_out.as_deref())?);
    if let Some(tree) = &opts.source_tree {
        let (units, found) = (&searched.units, &searched.found);
        let patch = header::patch(tree, &snaps, units, &found.order, &found.removed, ty)?;
        match patch.is_empty() {
            true => report.notes.push(format!(
                "--source-tree: no header patch: the suggestion leaves every line of struct {ty} as it is"
            )),
            false => {
                report.notes.extend(compiled_as_planned(run, &plan, &patch, ty)?);
                report.patch = Some(patch);
            }
        }
    }
    if opts.diagram || opts.asserts {
        draw_and_assert(run, opts, ty, &plan, &searched, &mut report)?;
    }
    Ok(report)
}

/// What the search of one struct searched and found.
struct Searched {
    /// The struct's units over every build.
    units: Vec<search::Unit>,
    /// The members some builds lack, and the builds that have them.
    per_config: Vec<PerConfig>,
    /// The limits it searched under.
    limits: search::Limits,
    /// The best order.
    found: search::Best,
    /// The notes on the search and what it found.
    notes: Vec<String>,
}

/// The search of struct `ty` on `snaps` (`packing` when there are no
/// rules): its units over every build, its limits from `opts`, the order
/// found, and the notes on it.
fn searched(
    run: &Run,
    opts: &SuggestOptions,
    ty: &str,
    rules: &Rules,
    snaps: &[Snapshot],
    packing: bool,
) -> Result<Searched> {
    // An anonymous wrapper's plan (`OUTER.MEMBER`) is under OUTER's rules.
    let rules_ty = crate::plan::outer(ty);
    let (units, per_config) = merged_units(ty, rules_ty, rules, snaps)?;
    if opts.keep_footprint && rules.contexts.is_empty() {
        return Err(Error::Mismatch(
            "--keep-footprint keeps the lines each context touches: the rules have no contexts"
                .into(),
        ));
    }
    let pinned =
        search::pinned(ty, &units, &opts.pin).map_err(|e| Error::Usage(format!("--pin: {e}")))?;
    let isolation = isolation(ty, &units, opts.unpin_aligned);
    let limits = search::Limits {
        max_growth: opts.max_growth.map(|l| l.min(i64::MAX as u64) as i64),
        keep_footprint: opts.keep_footprint,
        pinned,
        barriers: isolation.barriers,
        rank: rank(opts, packing, run)?,
        guard: opts.rank.is_none(),
    };
    let (found, mut notes) = match packing {
        true => packing::search(ty, &units, snaps, &limits)?,
        false => (
            search::search(ty, &units, snaps, rules, &limits)?,
            Vec::new(),
        ),
    };
    if rules_ty != ty {
        let outer = rules_ty;
        notes.push(format!(
            "every member of struct {outer} lives in one anonymous struct: suggest orders the \
             members inside it, planned as [\"{ty}\"]"
        ));
    }
    notes.extend(isolation.note);
    notes.extend(found_notes(opts, ty, &found, &limits, packing));
    Ok(Searched {
        units,
        per_config,
        limits,
        found,
        notes,
    })
}

/// One order for every build, over the union of their members: the units
/// of struct `ty` (under the rules of `rules_ty`) merged over `snaps`,
/// and the members under an #ifdef some config lacks, optional in the
/// plan, with the builds that have them.
fn merged_units(
    ty: &str,
    rules_ty: &str,
    rules: &Rules,
    snaps: &[Snapshot],
) -> Result<(Vec<search::Unit>, Vec<PerConfig>)> {
    let lists: Vec<(&str, Vec<search::Unit>)> = snaps
        .iter()
        .map(|s| {
            (
                s.config.as_str(),
                search::units(&s.table, s.target, rules_ty, rules, s.line),
            )
        })
        .collect();
    let merged = search::members::merge(ty, &lists)?;
    let units = merged.units;
    let per_config: Vec<PerConfig> = units
        .iter()
        .zip(&merged.present)
        .filter(|(u, _)| u.optional)
        .map(|(u, p)| PerConfig {
            member: u.name.clone(),
            configs: p.iter().map(|&b| snaps[b].config.clone()).collect(),
        })
        .collect();
    Ok((units, per_config))
}

/// The notes on what the search of struct `ty` found under `limits`: the
/// compiled order kept, and why; pairs its isolation keeps; a suggestion
/// worse on some build; a limit no order kept to.
fn found_notes(
    opts: &SuggestOptions,
    ty: &str,
    found: &search::Best,
    limits: &search::Limits,
    packing: bool,
) -> Vec<String> {
    let mut notes = Vec::new();
    if found.score.moved == 0 && !packing {
        let (e, w) = (found.score.errors, found.score.warnings);
        let why = match e + w + found.score.notes {
            0 => "it has no finding pair to clear".to_owned(),
            _ => format!(
                "of the {} layouts tried none ranks better ({e} error and {w} warning pairs \
                 stay)",
                found.tried
            ),
        };
        notes.push(format!("struct {ty} keeps its compiled order: {why}"));
    }
    if !limits.barriers.is_empty() && found.score.errors + found.score.warnings > 0 {
        notes.push(format!(
            "struct {ty} keeps {} error and {} warning pairs with its isolation kept: \
             --unpin-aligned shows what moving it would give",
            found.score.errors, found.score.warnings
        ));
    }
    notes.extend(worse_note(found, opts));
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
    notes
}

/// The report of what the search of struct `ty` found: its order and how
/// it was found, the objectives it ranked by, and per build the figures
/// before and after.
fn report_of(
    run: &Run,
    ty: &str,
    searched: &Searched,
    snaps: &[Snapshot],
    packing: bool,
) -> Result<SuggestReport> {
    let Searched {
        units,
        found,
        limits,
        ..
    } = searched;
    let mut report = SuggestReport {
        name: ty.to_owned(),
        members: units.len(),
        tried: found.tried,
        seconds: found.elapsed.as_secs_f64(),
        rounds: found.rounds,
        budget: found.budget,
        gap: None,
        exact: found.method == Method::Exhaustive,
        method: found.method,
        order: order_names(&found.order, units, ty),
        moved: found.score.moved,
        removed: found
            .removed
            .iter()
            .map(|u| units[*u].name.clone())
            .collect(),
        per_config: searched.per_config.clone(),
        plan: found.plan_text.clone(),
        plan_out: None,
        patch: None,
        rank: match packing {
            true => vec!["size".into(), "moved".into()],
            // Without samples every layout has none: not an objective.
            false => limits
                .rank
                .0
                .iter()
                .filter(|&&o| o != search::Objective::Samples || !run.perf.is_empty())
                .map(|o| o.name().to_owned())
                .collect(),
        },
        builds: Vec::new(),
        c: None,
        diagram: None,
        asserts: None,
        alone: found
            .alone
            .iter()
            .map(|a| alone_order(a, &found.outcomes, snaps, units, ty))
            .collect(),
        notes: searched.notes.clone(),
        packing,
    };
    report.builds = builds(run, ty, found, snaps, packing)?;
    if !packing {
        report.gap = Some(gap(&report.builds));
    }
    Ok(report)
}

/// Per build of `snaps`, the figures of struct `ty` and its roots before
/// and after the order `found`: findings, samples, sizes, each context's
/// lines, and with `packing` the least size it could have.
fn builds(
    run: &Run,
    ty: &str,
    found: &search::Best,
    snaps: &[Snapshot],
    packing: bool,
) -> Result<Vec<SuggestBuild>> {
    let mut builds = Vec::new();
    for ((before, after), snap) in found.before.outcomes.iter().zip(&found.outcomes).zip(snaps) {
        let (old, new) = after.target;
        let mut sizes = vec![size(ty, Role::Struct, old, new, snap.line)];
        sizes.extend(
            after
                .roots
                .iter()
                .map(|r| size(&r.root, Role::Root, r.old, r.new, snap.line)),
        );
        builds.push(SuggestBuild {
            config: after.config.clone(),
            errors: [before.errors, after.errors],
            warnings: [before.warnings, after.warnings],
            notes: [before.notes, after.notes],
            samples: (!run.perf.is_empty()).then_some([before.samples, after.samples]),
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
    Ok(builds)
}

/// What `diagram` and `asserts` give reading `plan`, the suggestion of
/// struct `ty`, on the first build (compiled against planned, and the
/// planned groups), as `opts` asks, into `report`.
fn draw_and_assert(
    run: &Run,
    opts: &SuggestOptions,
    ty: &str,
    plan: &Arc<Plan>,
    searched: &Searched,
    report: &mut SuggestReport,
) -> Result<()> {
    let opened = &run.builds[0];
    let compiled = opened.compiled();
    let mut planned = opened.planned_by_name(plan)?;
    planned.label_against(&compiled);
    if opts.diagram {
        let spec = DrawSpec {
            ty: ty.to_owned(),
            selection: Selection::Flagged,
            width: run::DEFAULT_WIDTH,
            style: None,
            explain: None,
        };
        let drawn = run::draw(run, &[&compiled, &planned], &spec)?;
        report.notes.extend(drawn.notes.iter().cloned());
        report.diagram = Some(drawn);
    }
    let grouped = searched.found.order.iter().any(|e| match e {
        Entry::Unit(u) => searched.units[*u].marker,
        Entry::Group(_) | Entry::Named(..) => true,
    });
    if opts.asserts && !grouped {
        report.notes.push(format!(
            "the suggested layout of struct {ty} has no cacheline group: no check function \
             to write (--asserts)"
        ));
    } else if opts.asserts {
        let Some(found) = opened.present.get(ty) else {
            return Err(run.unknown_type(opened, ty));
        };
        let planned = opened.planned_by_name(plan)?;
        let written = run::check_function(run, &planned, found, ty)?.report;
        report.notes.extend(written.notes.iter().cloned());
        report.asserts = Some(written);
    }
    report.notes = crate::report::unique_notes(std::mem::take(&mut report.notes));
    Ok(())
}

/// The header patch `patch` compiled on every build that can be compiled
/// again (a variant), and struct `ty` as compiled held to the plan's
/// prediction: a note per build that agrees; a build that does not is an
/// error naming the members placed otherwise, never hidden.
fn compiled_as_planned(run: &Run, plan: &Arc<Plan>, patch: &str, ty: &str) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    for opened in &run.builds {
        let Some(compiled) = run.compiled_with_patch(opened, patch, ty) else {
            continue;
        };
        let (table, id) = compiled?;
        let planned = opened.planned_by_name(plan)?;
        let Some(found) = opened.present.get(ty) else {
            return Err(run.unknown_type(opened, ty));
        };
        let expected = members::placed(planned.table(), found.id);
        let got = members::placed(&table, id);
        let differences = members::differences(&expected, &got, 6);
        if !differences.is_empty() {
            return Err(Error::VariantBuild(format!(
                "[{}] the header patch, compiled, lays struct {ty} out otherwise than the plan \
                 predicts: {}",
                opened.build.config,
                differences.join("; ")
            )));
        }
        notes.push(format!(
            "[{}] the header patch compiled: struct {ty} is as planned ({} members, {} bytes)",
            opened.build.config,
            got.1.len(),
            got.0.unwrap_or(0)
        ));
    }
    Ok(notes)
}

/// The author's isolation in `units` of struct `ty`: the units no member
/// moves across (none with `--unpin-aligned`), and the note that says
/// which.
struct Kept {
    barriers: Vec<usize>,
    note: Option<String>,
}

/// See [`Kept`].
fn isolation(ty: &str, units: &[search::Unit], unpin: bool) -> Kept {
    let found: Vec<(usize, String)> = units
        .iter()
        .enumerate()
        .filter_map(|(i, u)| Some((i, format!("{} ({})", u.name, u.isolation?.describe()))))
        .collect();
    if found.is_empty() {
        return Kept {
            barriers: Vec::new(),
            note: None,
        };
    }
    let list: Vec<&str> = found.iter().map(|(_, n)| n.as_str()).collect();
    match unpin {
        true => Kept {
            barriers: Vec::new(),
            note: Some(format!(
                "--unpin-aligned: the author's isolation of struct {ty} may move: {}",
                list.join(", ")
            )),
        },
        false => Kept {
            barriers: found.iter().map(|(i, _)| *i).collect(),
            note: Some(format!(
                "the author's isolation of struct {ty} stays, and no member moves across \
                 it (--unpin-aligned lets it move): {}",
                list.join(", ")
            )),
        },
    }
}

/// When the suggestion is worse than the compiled layout on some build
/// (errors, then warnings, then notes; or a context in more lines), which
/// and why: only an order of the user's own (`--rank`) or a limit can
/// make it so.
fn worse_note(found: &search::Best, opts: &SuggestOptions) -> Option<String> {
    let counts = |o: &search::Outcome| [o.errors, o.warnings, o.notes];
    let wider = |b: &search::Outcome, a: &search::Outcome| -> Vec<String> {
        b.footprint
            .iter()
            .zip(&a.footprint)
            .filter(|(x, y)| y.lines > x.lines)
            .map(|(x, y)| format!("{} {} -> {} lines", x.context, x.lines, y.lines))
            .collect()
    };
    let worse: Vec<String> = found
        .before
        .outcomes
        .iter()
        .zip(&found.outcomes)
        .filter(|(b, a)| counts(a) > counts(b) || !wider(b, a).is_empty())
        .map(|(b, a)| {
            let [e0, w0, n0] = counts(b);
            let [e1, w1, n1] = counts(a);
            let mut parts = vec![format!(
                "errors {e0} -> {e1}, warnings {w0} -> {w1}, notes {n0} -> {n1}"
            )];
            parts.extend(wider(b, a));
            format!("{} ({})", a.config, parts.join(", "))
        })
        .collect();
    if worse.is_empty() {
        return None;
    }
    let why = match (&opts.rank, opts.max_growth, opts.keep_footprint) {
        (Some(r), _, _) => format!("--rank {r} ranks it so"),
        (None, Some(g), _) => format!("--max-growth {g} forces it"),
        (None, None, _) => "--keep-footprint forces it".to_owned(),
    };
    Some(format!(
        "the suggestion is worse than the compiled layout on {}: {why}",
        worse.join(", ")
    ))
}

/// How far the suggested builds are from the objectives' bounds.
fn gap(builds: &[SuggestBuild]) -> Gap {
    Gap {
        errors: builds.iter().map(|b| b.errors[1]).sum(),
        warnings: builds.iter().map(|b| b.warnings[1]).sum(),
        notes: builds.iter().map(|b| b.notes[1]).sum(),
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
fn rank(opts: &SuggestOptions, packing: bool, run: &Run) -> Result<search::Rank> {
    if packing && !run.perf.is_empty() {
        return Err(Error::Usage(
            "--perf: suggest weighs the pairs the rules find by perf's samples, and without \
             --rules it packs (`cachelint draft --perf FILE BUILD TYPE` writes rules to start from)"
                .into(),
        ));
    }
    let named = |o: search::Objective| {
        opts.rank
            .as_deref()
            .is_some_and(|l| l.split(',').any(|w| w.trim() == o.name()))
    };
    if named(search::Objective::Samples) {
        run.need_samples()?;
    }
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
        // The suggested order is laid out, not run: nothing measured.
        shares: Vec::new(),
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
            .map(|r| crate::lines::growth(r.old, r.new, line))
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
                notes: [s.notes, o.notes],
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
            lines: crate::lines::growth(old, new, line),
        },
    }
}
