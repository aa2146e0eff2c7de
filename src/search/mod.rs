//! The search behind `suggest`: member orders of one struct, each laid out
//! by the plan engine on every build (so every candidate is a layout the
//! compiler would give), scored by the findings of every root and the
//! growth of the roots, best first. A hill climb from the compiled order:
//! each round tries every move of one member whose fields are in a finding
//! to every position, and the struct's lockless writers gathered into one
//! cacheline-aligned kernel group at every position, and keeps the best
//! while it improves.

use std::sync::Arc;

use rayon::prelude::*;

use crate::analysis;
use crate::error::Result;
use crate::layout::{GROUP_BEGIN, GROUP_END, GROUP_PAD};
use crate::model::{TypeId, TypeTable};
use crate::plan::Plan;
use crate::plan::abi::Abi;
use crate::plan::apply::Planner;
use crate::rules::{Class, Rules, Severity};

pub(crate) mod packing;

/// Members (units) of a struct the search orders, at most: a round tries
/// about 4 n^2 layouts on every build.
pub(crate) const MAX_UNITS: usize = 40;

/// Rounds of the climb, at most.
const MAX_ROUNDS: usize = 8;

/// One build as loaded: the model holding the struct and its roots.
pub(crate) struct Snapshot {
    /// Config label.
    pub(crate) config: String,
    /// The types decoded for the roots; a candidate is laid out in place
    /// and undone (the planner hands back the structs it changed).
    pub(crate) table: TypeTable,
    /// The table's length as compiled: the types a candidate adds go.
    pub(crate) len: u32,
    /// The roots: name and id.
    pub(crate) roots: Vec<(String, TypeId)>,
    /// The struct searched.
    pub(crate) target: TypeId,
    /// The machine's C ABI.
    pub(crate) abi: Abi,
    /// Line size.
    pub(crate) line: u64,
}

impl Snapshot {
    /// A snapshot of `table` for roots `roots` and the struct `target`.
    pub(crate) fn new(
        config: String,
        table: TypeTable,
        roots: Vec<(String, TypeId)>,
        target: TypeId,
        abi: Abi,
        line: u64,
    ) -> Snapshot {
        Snapshot {
            config,
            len: table.len(),
            table,
            roots,
            target,
            abi,
            line,
        }
    }
}

/// A unit of the order: one member, an anonymous struct or union (named by
/// its first member), or a run of bitfields (named by the first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unit {
    /// The name a plan calls it by.
    pub(crate) name: String,
    /// The contexts that read it and write it, from its rules (and those of
    /// the members inside it), sorted; empty for a field without them.
    pub(crate) reads: Vec<String>,
    /// See `reads`.
    pub(crate) writes: Vec<String>,
    /// A kernel group marker or pad: dropped by a context order, which
    /// makes no groups of its own.
    pub(crate) marker: bool,
    /// Alignment and size, for packing.
    pub(crate) align: u64,
    /// See `align`.
    pub(crate) size: u64,
    /// True when it is written locklessly (gathered in the group).
    pub(crate) lockless: bool,
}

/// An entry of a candidate order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A unit, by index.
    Unit(usize),
    /// An aligned kernel cacheline group of units.
    Group(Vec<usize>),
    /// A kernel cacheline group (not aligned) of units, by name.
    Named(String, Vec<usize>),
}

/// How good a candidate is, compared field by field in this order.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Score {
    /// Lines some root grows by beyond the limit (`--max-growth`), worst
    /// build: 0 when within it.
    pub(crate) over: i64,
    /// Error findings over every root of every build.
    pub(crate) errors: usize,
    /// Warning findings.
    pub(crate) warnings: usize,
    /// Growth of the roots in lines, worst build.
    pub(crate) growth_lines: i64,
    /// Growth of the roots in bytes, worst build.
    pub(crate) growth_bytes: i64,
    /// Lines the contexts touch in the struct, summed over contexts (their
    /// union included) and builds.
    pub(crate) footprint: usize,
    /// Units moved (not in the longest run kept in order).
    pub(crate) moved: usize,
}

/// Per build, what a candidate gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// Config label.
    pub(crate) config: String,
    /// The struct's own size: as compiled, as planned.
    pub(crate) target: (u64, u64),
    /// Per root: name, size as compiled, size as planned.
    pub(crate) roots: Vec<(String, u64, u64)>,
    /// Errors and warnings over the roots.
    pub(crate) errors: usize,
    /// Warnings.
    pub(crate) warnings: usize,
    /// The struct's footprint: per context, the lines it touches and the
    /// fewest its bytes fit in (see [`crate::analysis::footprint`]).
    pub(crate) footprint: Vec<(String, usize, u64)>,
}

/// A candidate: the order, and the units it removes (old group markers).
pub(crate) type Candidate = (Vec<Entry>, Vec<usize>);

/// The best candidate found.
pub(crate) struct Found {
    /// Its order.
    pub(crate) order: Vec<Entry>,
    /// Its plan file text.
    pub(crate) plan_text: String,
    /// Its score.
    pub(crate) score: Score,
    /// Per build.
    pub(crate) outcomes: Vec<Outcome>,
    /// The compiled order's score and outcomes.
    pub(crate) before: (Score, Vec<Outcome>),
    /// Candidates laid out and scored.
    pub(crate) tried: usize,
    /// Rounds of the climb (0: too many members to climb; the compiled
    /// order and the context order were compared).
    pub(crate) rounds: usize,
    /// The units the suggestion removes.
    pub(crate) removed: Vec<usize>,
}

/// Searches orders of struct `name`, whose units are `units`, over every
/// build in `snaps`.
pub(crate) fn search(
    name: &str,
    units: &[Unit],
    snaps: &mut [Snapshot],
    rules: &Rules,
    max_growth: Option<i64>,
) -> Result<Found> {
    search_seeded(name, units, snaps, rules, max_growth, Vec::new(), true)
}

/// [`search`] with more seeds compared before the climb (the packing
/// seeds), and the climb only when `climb`.
pub(crate) fn search_seeded(
    name: &str,
    units: &[Unit],
    snaps: &mut [Snapshot],
    rules: &Rules,
    max_growth: Option<i64>,
    seeds: Vec<Candidate>,
    climb: bool,
) -> Result<Found> {
    let original: Candidate = ((0..units.len()).map(Entry::Unit).collect(), Vec::new());
    let group = format!("{name}_lockless");
    let contexts: Vec<String> = rules.contexts.iter().map(|c| c.name.clone()).collect();
    let evaluate = |snaps: &mut [Snapshot], orders: &[Candidate]| {
        let texts: Vec<String> = orders
            .iter()
            .map(|(o, r)| plan_text(name, &group, units, o, r))
            .collect();
        let plans: Vec<Option<Arc<Plan>>> = texts
            .iter()
            .map(|t| {
                Plan::parse(std::path::Path::new("suggested.plan.toml"), t)
                    .ok()
                    .map(Arc::new)
            })
            .collect();
        // Each build lays every candidate out in its own model: the builds
        // run in parallel.
        let per_build: Vec<Vec<Option<Laid>>> = snaps
            .par_iter_mut()
            .map(|snap| {
                plans
                    .iter()
                    .map(|p| {
                        p.as_ref()
                            .and_then(|p| snap.lay_out(p, rules, name, &contexts).ok())
                    })
                    .collect()
            })
            .collect();
        let mut out = Vec::with_capacity(orders.len());
        for (i, ((order, removed), text)) in orders.iter().zip(texts).enumerate() {
            // A candidate the engine refuses on some build (a flexible
            // array not last) is simply not a layout.
            let laid: Option<Vec<&Laid>> = per_build.iter().map(|b| b[i].as_ref()).collect();
            out.push(laid.map(|laid| {
                let mut score = combine(&laid, moved(order) + removed.len());
                if let Some(max) = max_growth {
                    score.over = (score.growth_lines - max).max(0);
                }
                let outcomes = laid.iter().map(|l| l.outcome.clone()).collect();
                (score, outcomes, text)
            }));
        }
        out
    };
    let before = evaluate(snaps, std::slice::from_ref(&original))
        .pop()
        .flatten()
        .ok_or_else(|| {
            crate::error::Error::Usage(format!(
                "struct {name} cannot be laid out again in its own order on every build"
            ))
        })?;
    let mut best = (original.clone(), before.clone());
    let mut tried = 1;
    // The context order: the only candidate beside the compiled order for
    // a struct too large to climb, the climb's other seed otherwise.
    if !contexts.is_empty() {
        let seed = by_context(name, units, &contexts);
        tried += 1;
        if let Some(r) = evaluate(snaps, std::slice::from_ref(&seed)).pop().flatten()
            && r.0 < best.1.0
        {
            best = (seed, r);
        }
    }
    tried += seeds.len();
    let results = evaluate(snaps, &seeds);
    for (seed, r) in seeds.into_iter().zip(results) {
        if let Some(r) = r.filter(|r| r.0 < best.1.0) {
            best = (seed, r);
        }
    }
    let mut rounds = 0;
    while climb && units.len() <= MAX_UNITS && rounds < MAX_ROUNDS {
        rounds += 1;
        let candidates: Vec<Candidate> = neighbours(&best.0.0, units)
            .into_iter()
            .map(|o| (o, best.0.1.clone()))
            .collect();
        tried += candidates.len();
        let results = evaluate(snaps, &candidates);
        let winner = candidates
            .into_iter()
            .zip(results)
            .filter_map(|(c, r)| Some((c, r?)))
            .min_by(|x, y| x.1.0.cmp(&y.1.0));
        match winner {
            Some(w) if w.1.0 < best.1.0 => best = w,
            _ => break,
        }
    }
    let ((order, removed), (score, outcomes, plan_text)) = best;
    Ok(Found {
        order,
        removed,
        plan_text,
        score,
        outcomes,
        before: (before.0, before.1),
        tried,
        rounds,
    })
}

/// Every order one step from `order`: a block of one to three entries
/// moved to another place, two entries swapped, and the lockless writers
/// gathered into one aligned group at every place.
fn neighbours(order: &[Entry], units: &[Unit]) -> Vec<Vec<Entry>> {
    let mut out = Vec::new();
    let n = order.len();
    // Every unit moves, flagged or not: an unflagged one shifts the
    // offsets of the rest, which is what puts an array on lines of its own.
    for len in 1..=3.min(n) {
        for i in 0..=n - len {
            let mut rest = order.to_vec();
            let block: Vec<Entry> = rest.drain(i..i + len).collect();
            for pos in 0..=rest.len() {
                if pos == i {
                    continue;
                }
                let mut c = rest.clone();
                c.splice(pos..pos, block.iter().cloned());
                out.push(c);
            }
        }
    }
    for i in 0..n {
        for j in i + 2..n {
            let mut c = order.to_vec();
            c.swap(i, j);
            out.push(c);
        }
    }
    let writers: Vec<usize> = order
        .iter()
        .filter_map(|e| match e {
            Entry::Unit(u) if units[*u].lockless => Some(*u),
            _ => None,
        })
        .collect();
    let has_group = order.iter().any(|e| matches!(e, Entry::Group(_)));
    if !writers.is_empty() && !has_group {
        let rest: Vec<Entry> = order
            .iter()
            .filter(|e| !matches!(e, Entry::Unit(u) if writers.contains(u)))
            .cloned()
            .collect();
        for pos in 0..=rest.len() {
            let mut c = rest.clone();
            c.insert(pos, Entry::Group(writers.clone()));
            out.push(c);
        }
    }
    out
}

/// Units not in the longest subsequence kept in the compiled order.
fn moved(order: &[Entry]) -> usize {
    let flat: Vec<usize> = order
        .iter()
        .flat_map(|e| match e {
            Entry::Unit(u) => vec![*u],
            Entry::Group(g) | Entry::Named(_, g) => g.clone(),
        })
        .collect();
    // Longest increasing subsequence of the original indexes.
    let mut tails: Vec<usize> = Vec::new();
    for &x in &flat {
        match tails.binary_search(&x) {
            Ok(_) => {}
            Err(p) if p == tails.len() => tails.push(x),
            Err(p) => tails[p] = x,
        }
    }
    let groups = order
        .iter()
        .filter(|e| matches!(e, Entry::Group(_) | Entry::Named(..)))
        .count();
    flat.len() - tails.len() + groups
}

/// One candidate laid out on one build.
struct Laid {
    outcome: Outcome,
    /// Worst growth of a root, in lines and in bytes.
    growth_lines: i64,
    growth_bytes: i64,
}

impl Snapshot {
    /// Lays `plan` out on this build, analyses every root and the struct
    /// `name` itself (its footprint in `contexts`), and undoes it.
    fn lay_out(
        &mut self,
        plan: &Arc<Plan>,
        rules: &Rules,
        name: &str,
        contexts: &[String],
    ) -> Result<Laid> {
        let ids: Vec<TypeId> = self
            .roots
            .iter()
            .map(|(_, id)| *id)
            .chain(std::iter::once(self.target))
            .collect();
        // The struct itself is laid out too (its footprint): a lookup's
        // copy of it may not be the one a root holds.
        let mut planner = Planner::new(plan.clone(), self.abi, self.line);
        let applied = planner.apply(&mut self.table, &ids);
        let analyses = applied.map(|()| {
            let planned = self.table.size_of(self.target).unwrap_or(0);
            let roots = self
                .roots
                .iter()
                .map(|(name, id)| analysis::analyze(&self.table, *id, name, self.line, rules))
                .collect::<Vec<_>>();
            let footprint = (!contexts.is_empty()).then(|| {
                let own = analysis::analyze(&self.table, self.target, name, self.line, rules);
                analysis::footprint::footprint(&own, contexts)
            });
            (planned, roots, footprint)
        });
        planner.undo(&mut self.table);
        self.table.truncate(self.len);
        let (planned, analyses, footprint) = analyses?;
        let mut laid = Laid {
            outcome: Outcome {
                config: self.config.clone(),
                target: (self.table.size_of(self.target).unwrap_or(0), planned),
                roots: Vec::new(),
                errors: 0,
                warnings: 0,
                footprint: footprint
                    .map(|f| {
                        f.contexts
                            .into_iter()
                            .map(|c| (c.context, c.lines.len(), c.optimum))
                            .collect()
                    })
                    .unwrap_or_default(),
            },
            growth_lines: i64::MIN,
            growth_bytes: i64::MIN,
        };
        for ((name, id), a) in self.roots.iter().zip(&analyses) {
            for f in a.findings.iter().filter(|f| f.allowed.is_none()) {
                match f.severity {
                    Severity::Error => laid.outcome.errors += 1,
                    Severity::Warning => laid.outcome.warnings += 1,
                    Severity::Note => {}
                }
            }
            let old = self.table.size_of(*id).unwrap_or(0);
            let grow = a.size as i64 - old as i64;
            let lines = a.size.div_ceil(self.line) as i64 - old.div_ceil(self.line) as i64;
            laid.growth_bytes = laid.growth_bytes.max(grow);
            laid.growth_lines = laid.growth_lines.max(lines);
            laid.outcome.roots.push((name.clone(), old, a.size));
        }
        Ok(laid)
    }
}

/// The score of a candidate from its layouts on every build. Without
/// roots (packing only, no rules) the struct's own growth in bytes is the
/// growth; its lines follow from its bytes, so they are left 0.
fn combine(laid: &[&Laid], moved: usize) -> Score {
    let growth = |l: &&Laid| match l.outcome.roots.is_empty() {
        true => (0, l.outcome.target.1 as i64 - l.outcome.target.0 as i64),
        false => (l.growth_lines, l.growth_bytes),
    };
    Score {
        over: 0,
        errors: laid.iter().map(|l| l.outcome.errors).sum(),
        warnings: laid.iter().map(|l| l.outcome.warnings).sum(),
        growth_lines: laid.iter().map(|l| growth(l).0).max().unwrap_or(0),
        growth_bytes: laid.iter().map(|l| growth(l).1).max().unwrap_or(0),
        footprint: laid
            .iter()
            .flat_map(|l| l.outcome.footprint.iter().map(|f| f.1))
            .sum(),
        moved,
    }
}

/// The plan file of an order.
pub(crate) fn plan_text(
    name: &str,
    group: &str,
    units: &[Unit],
    order: &[Entry],
    removed: &[usize],
) -> String {
    let quoted = |u: &usize| format!("\"{}\"", units[*u].name);
    let items: Vec<String> = order
        .iter()
        .map(|e| match e {
            Entry::Unit(u) => quoted(u),
            Entry::Group(g) => format!(
                "{{ group = \"{group}\", aligned = true, members = [{}] }}",
                g.iter().map(quoted).collect::<Vec<_>>().join(", ")
            ),
            Entry::Named(n, g) => format!(
                "{{ group = \"{n}\", members = [{}] }}",
                g.iter().map(quoted).collect::<Vec<_>>().join(", ")
            ),
        })
        .collect();
    let remove = if removed.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = removed.iter().map(quoted).collect();
        format!("remove = [{}]\n", names.join(", "))
    };
    format!(
        "[{name}]\n{remove}order = [\n  {},\n]\n",
        items.join(",\n  ")
    )
}

/// The units of struct `id` in `table`, those the rules say are written
/// locklessly marked.
pub(crate) fn units(table: &TypeTable, id: TypeId, name: &str, rules: &Rules) -> Vec<Unit> {
    let mut out: Vec<Unit> = Vec::new();
    let Some(members) = table.composite(id).and_then(|c| c.members.as_ref()) else {
        return out;
    };
    let type_rules = rules.type_rules(name);
    let class_of = |m: &str| {
        type_rules
            .and_then(|t| {
                t.fields
                    .iter()
                    .find(|f| f.path == m || f.path.starts_with(&format!("{m}.")))
            })
            .map(|f| f.class)
    };
    let mut previous_bitfield = false;
    for m in members {
        let bitfield = m.bit_size.is_some();
        let mut names = Vec::new();
        match &m.name {
            Some(n) => names.push(n.clone()),
            None => inner_names(table, m.ty, 0, &mut names),
        }
        if bitfield && previous_bitfield {
            // The same run: its contexts join the run's unit.
            if let Some(last) = out.last_mut() {
                add_contexts(last, type_rules, &names);
            }
            continue;
        }
        previous_bitfield = bitfield;
        let Some(name) = names.first().cloned() else {
            continue;
        };
        let marker = [GROUP_BEGIN, GROUP_END, GROUP_PAD]
            .iter()
            .any(|p| name.starts_with(p));
        let mut unit = Unit {
            lockless: class_of(&name) == Some(Class::LocklessWrite),
            reads: Vec::new(),
            writes: Vec::new(),
            marker,
            align: table.alignment_of(m.ty).max(1),
            size: table.size_of(m.ty).unwrap_or(0),
            name,
        };
        add_contexts(&mut unit, type_rules, &names);
        out.push(unit);
    }
    out
}

/// The named members inside an anonymous struct or union, in order.
fn inner_names(table: &TypeTable, ty: TypeId, depth: usize, out: &mut Vec<String>) {
    let Some(members) = table
        .composite(table.strip(ty))
        .and_then(|c| c.members.as_ref())
    else {
        return;
    };
    for m in members {
        match &m.name {
            Some(n) => out.push(n.clone()),
            None if depth < 8 => inner_names(table, m.ty, depth + 1, out),
            None => {}
        }
    }
}

/// Adds the contexts of the rules on `names` (and paths inside them).
fn add_contexts(unit: &mut Unit, rules: Option<&crate::rules::TypeRules>, names: &[String]) {
    let Some(rules) = rules else {
        return;
    };
    for f in &rules.fields {
        let head = f.path.split('.').next().unwrap_or(&f.path);
        if !names.iter().any(|n| n == head) {
            continue;
        }
        if let Some(access) = &f.access {
            unit.reads.extend(access.reads.iter().cloned());
            unit.writes.extend(access.writes.iter().cloned());
        }
    }
    for list in [&mut unit.reads, &mut unit.writes] {
        list.sort();
        list.dedup();
    }
    let writes = unit.writes.clone();
    unit.reads.retain(|r| !writes.contains(r));
}

/// A candidate made, not searched: the members grouped by the contexts
/// that use them, in kernel cacheline groups named as netdev names them
/// (`TYPE_read_tx`, `TYPE_read_txrx`, `TYPE_read_rx`, then the `write`
/// groups: a member written in a context goes to a write group named by
/// every context that uses it), each sorted by alignment and size so that
/// it packs; the members no context uses after them in their order; the
/// struct's first member kept first (the kernel's "base struct" idiom:
/// `tcp_sock` starts with its `inet_connection_sock`); the old group
/// markers dropped. Returns the order and the markers to remove.
pub(crate) fn by_context(ty: &str, units: &[Unit], contexts: &[String]) -> Candidate {
    let removed: Vec<usize> = (0..units.len()).filter(|&u| units[u].marker).collect();
    let kept: Vec<usize> = (0..units.len()).filter(|&u| !units[u].marker).collect();
    let Some((&first, rest)) = kept.split_first() else {
        return (Vec::new(), removed);
    };
    // (written, first context, last context) → the group's members.
    let mut groups: std::collections::BTreeMap<(bool, usize, usize), Vec<usize>> =
        Default::default();
    let mut unused = Vec::new();
    for &u in rest {
        let x = &units[u];
        let used: Vec<usize> = x
            .reads
            .iter()
            .chain(&x.writes)
            .filter_map(|c| contexts.iter().position(|k| k == c))
            .collect();
        match (used.iter().min(), used.iter().max()) {
            (Some(&lo), Some(&hi)) => groups
                .entry((!x.writes.is_empty(), lo, hi))
                .or_default()
                .push(u),
            _ => unused.push(u),
        }
    }
    let mut order = vec![Entry::Unit(first)];
    for ((written, lo, hi), mut members) in groups {
        members.sort_by_key(|&u| {
            (
                std::cmp::Reverse(units[u].align),
                std::cmp::Reverse(units[u].size),
                u,
            )
        });
        let names: String = contexts[lo..=hi].concat();
        let kind = if written { "write" } else { "read" };
        order.push(Entry::Named(format!("{ty}_{kind}_{names}"), members));
    }
    order.extend(unused.into_iter().map(Entry::Unit));
    (order, removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(name: &str, reads: &[&str], writes: &[&str], align: u64) -> Unit {
        Unit {
            name: name.into(),
            reads: reads.iter().map(|s| s.to_string()).collect(),
            writes: writes.iter().map(|s| s.to_string()).collect(),
            marker: name.starts_with("__cacheline_group_"),
            align,
            size: align,
            lockless: false,
        }
    }

    #[test]
    fn a_context_order_groups_by_context_as_netdev_names_them() {
        let units = [
            unit("base", &[], &[], 8),
            unit("__cacheline_group_begin__old", &[], &[], 1),
            unit("a", &["rx"], &[], 4),
            unit("b", &["tx", "rx"], &[], 2),
            unit("c", &["tx"], &[], 4),
            unit("d", &["tx"], &[], 8),
            unit("e", &["rx"], &["tx"], 8),
            unit("cold", &[], &[], 8),
        ];
        let contexts = ["tx".to_owned(), "rx".to_owned()];
        let (order, removed) = by_context("s", &units, &contexts);
        use Entry::*;
        assert_eq!(removed, [1]);
        assert_eq!(
            order,
            [
                Unit(0),
                Named("s_read_tx".into(), vec![5, 4]),
                Named("s_read_txrx".into(), vec![3]),
                Named("s_read_rx".into(), vec![2]),
                Named("s_write_txrx".into(), vec![6]),
                Unit(7),
            ]
        );
    }

    #[test]
    fn moved_counts_what_leaves_the_compiled_order() {
        use Entry::*;
        assert_eq!(moved(&[Unit(0), Unit(1), Unit(2)]), 0);
        assert_eq!(moved(&[Unit(2), Unit(0), Unit(1)]), 1);
        // A group counts once besides its members' moves.
        assert_eq!(moved(&[Unit(0), Group(vec![1, 2])]), 1);
    }
}
