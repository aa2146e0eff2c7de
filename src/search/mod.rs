//! The search behind `suggest`: member orders of one struct, each laid out
//! by the plan engine on every build (so every candidate is a layout the
//! compiler would give), scored by the findings of every root and the
//! growth of the roots, best first. A hill climb from the compiled order:
//! each round tries every move of one member whose fields are in a finding
//! to every position, and the struct's lockless writers gathered into one
//! cacheline-aligned kernel group at every position, and keeps the best
//! while it improves.

mod candidate;
mod evaluate;
mod progress;
mod snapshot;

pub(crate) mod members;
pub(crate) mod rank;

use crate::error::Result;
use crate::layout::{GROUP_BEGIN, GROUP_END, GROUP_PAD};
use crate::model::{TypeId, TypeTable};
use crate::report::suggest::Method;
use crate::rules::{Class, Rules};
use candidate::Target;
pub(crate) use candidate::{Candidate, Entry};
use evaluate::{Evaluated, Evaluator};
pub(crate) use rank::{Objective, Rank};
pub(crate) use snapshot::Snapshot;

pub(crate) mod packing;

/// Members (units) of a struct the search orders, at most: a round tries
/// about 4 n^2 layouts on every build.
pub(crate) const MAX_UNITS: usize = 40;

/// Structs of at most this many units (and no kernel group markers) are
/// searched exhaustively: every order of the units, and with lockless
/// writers every order with them as one aligned group ([`every_order`]):
/// at most 2 * 7! = 10080 layouts.
pub(crate) const EXACT_UNITS: usize = 7;

/// Rounds of the climb, at most.
const MAX_ROUNDS: usize = 8;

/// Layouts the climb of a struct of more than [`MAX_UNITS`] units tries,
/// at most: its neighbourhood is too large to try whole, so it takes the
/// first improvement in batches of [`BATCH`].
pub(crate) const LARGE_BUDGET: usize = 4000;

/// Candidates scored together (in parallel) by the climb of a large struct.
const BATCH: usize = 48;

/// What a suggestion may not do, ranked before the findings.
#[derive(Clone, Debug, Default)]
pub(crate) struct Limits {
    /// Lines some root may grow by (`--max-growth`).
    pub(crate) max_growth: Option<i64>,
    /// Let no context touch more lines than as compiled (`--keep-footprint`).
    pub(crate) keep_footprint: bool,
    /// Units that keep their compiled offset in every build (`--pin`).
    pub(crate) pinned: Vec<usize>,
    /// Units no other unit moves across, which keep their place in the
    /// order (the author's isolation), sorted.
    pub(crate) barriers: Vec<usize>,
    /// The order of the objectives (`--rank`).
    pub(crate) rank: Rank,
    /// Rank "worse than compiled on some build" right after the limits:
    /// the default order's promise, which an order of the user's own
    /// (`--rank`) does not make.
    pub(crate) guard: bool,
}

/// The units `--pin` names: a unit by name, or a kernel cacheline group
/// by name (its markers and every unit between them).
pub(crate) fn pinned(
    ty: &str,
    units: &[Unit],
    names: &[String],
) -> std::result::Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for name in names {
        if let Some(u) = units.iter().position(|u| &u.name == name) {
            out.push(u);
            continue;
        }
        let begin = units
            .iter()
            .position(|u| u.name == format!("{GROUP_BEGIN}{name}"));
        let end = units
            .iter()
            .position(|u| u.name == format!("{GROUP_END}{name}"));
        match (begin, end) {
            (Some(b), Some(e)) if b < e => out.extend(b..=e),
            _ => {
                let groups = units
                    .iter()
                    .filter_map(|u| u.name.strip_prefix(GROUP_BEGIN));
                let hint = crate::suggest::did_you_mean(
                    name,
                    units.iter().map(|u| u.name.as_str()).chain(groups),
                );
                return Err(format!(
                    "struct {ty} has no member or kernel group '{name}'{hint}"
                ));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
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
    /// For a bitfield run, its bitfields (empty for a whole member): packing
    /// places them by bit, where they can share bytes with their
    /// neighbours.
    pub(crate) bits: Vec<crate::plan::abi::Bitfield>,
    /// True when it is written locklessly (gathered in the group).
    pub(crate) lockless: bool,
    /// True when the rules class it (or a field inside it): the members a
    /// large struct's climb moves.
    pub(crate) classed: bool,
    /// True when some build lacks it (an `#ifdef` member): the plan lists
    /// it in `optional = [...]` ([`members::merge`] sets it).
    pub(crate) optional: bool,
    /// The author's isolation, when the member is one: a barrier no
    /// member crosses, unless `--unpin-aligned`.
    pub(crate) isolation: Option<Isolation>,
}

/// Why a member is the author's isolation, which `suggest` keeps where it
/// is by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isolation {
    /// A `CACHELINE_PADDING()` member: a line boundary put there.
    Padding,
    /// A member declared with an alignment beyond its type's, of a line
    /// or more (bytes): `____cacheline_aligned_in_smp`, or an aligned
    /// group's marker. (A smaller one, as `call_single_data_t`'s, is the
    /// ABI's need, not isolation.)
    Aligned(u64),
}

impl Isolation {
    /// Of member `m` (in `table`, of `line`-byte lines), if it is one. BTF
    /// records no member alignment: there only padding is known.
    fn of(table: &TypeTable, m: &crate::model::Member, line: u64) -> Option<Isolation> {
        let ty = table.strip(m.ty);
        let padding = table.composite(ty).and_then(|c| c.name.as_deref())
            == Some(crate::layout::PADDING_TYPE);
        match padding {
            true => Some(Isolation::Padding),
            false => m
                .alignment
                .filter(|&a| a > table.alignment_of(m.ty) && a >= line)
                .map(Isolation::Aligned),
        }
    }

    /// In words, for the note that lists what stays.
    pub(crate) fn describe(self) -> String {
        match self {
            Isolation::Padding => "CACHELINE_PADDING".into(),
            Isolation::Aligned(a) => format!("aligned({a})"),
        }
    }
}

/// How good a candidate is: the limits first (`over`, then `regress`),
/// then `worse`, then the objectives in the order of `rank`. No field falls as builds
/// and roots are added, so neither does the score in any such order (the
/// evaluation stops a candidate early on that).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Score {
    /// The order of the objectives (the same for every candidate of a
    /// search).
    pub(crate) rank: Rank,
    /// Lines some root grows by beyond the limit (`--max-growth`), worst
    /// build: 0 when within it.
    pub(crate) over: i64,
    /// With `--keep-footprint`: lines the contexts touch beyond what they
    /// touch as compiled, summed over contexts and builds.
    pub(crate) regress: usize,
    /// With the default order ([`Limits::guard`]): builds on which the
    /// candidate is worse than compiled (errors, then warnings, then
    /// notes; or a context in more lines), ranked right after the limits.
    /// 0 otherwise.
    pub(crate) worse: usize,
    /// Error findings over every root of every build.
    pub(crate) errors: usize,
    /// Warning findings.
    pub(crate) warnings: usize,
    /// Note findings (write-vs-write: two lockless writers bouncing one
    /// line; adjacent lines).
    pub(crate) notes: usize,
    /// Growth of the roots in lines, worst build.
    pub(crate) growth_lines: i64,
    /// Growth of the roots in bytes, worst build.
    pub(crate) growth_bytes: i64,
    /// perf's samples (`--perf`) on the two fields of every finding pair
    /// left, summed over pairs, roots and builds: 0 without samples.
    pub(crate) samples: u64,
    /// Lines the contexts touch in the struct, summed over contexts (their
    /// union included) and builds.
    pub(crate) footprint: usize,
    /// Units moved (not in the longest run kept in order).
    pub(crate) moved: usize,
}

impl Score {
    /// Its value for one objective.
    fn part(&self, o: Objective) -> (i64, i64) {
        let n = |v: usize| i64::try_from(v).unwrap_or(i64::MAX);
        match o {
            Objective::Errors => (n(self.errors), 0),
            Objective::Warnings => (n(self.warnings), 0),
            Objective::Notes => (n(self.notes), 0),
            Objective::Growth => (self.growth_lines, self.growth_bytes),
            Objective::Samples => (i64::try_from(self.samples).unwrap_or(i64::MAX), 0),
            Objective::Footprint => (n(self.footprint), 0),
            Objective::Moved => (n(self.moved), 0),
        }
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Score) -> std::cmp::Ordering {
        (self.over, self.regress, self.worse)
            .cmp(&(other.over, other.regress, other.worse))
            .then_with(|| self.rank.compare(|o| self.part(o), |o| other.part(o)))
    }
}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Score) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Per build, what a candidate gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// Config label.
    pub(crate) config: String,
    /// The struct's own size: as compiled, as planned.
    pub(crate) target: (u64, u64),
    /// Per root, in root order: its size as compiled and as planned.
    pub(crate) roots: Vec<RootSize>,
    /// Errors, warnings and notes over the roots.
    pub(crate) errors: usize,
    /// Warnings.
    pub(crate) warnings: usize,
    /// Notes.
    pub(crate) notes: usize,
    /// perf's samples on the fields of the pairs, summed (see
    /// [`Score::samples`]).
    pub(crate) samples: u64,
    /// The struct's footprint, per context (see
    /// [`crate::analysis::footprint`]).
    pub(crate) footprint: Vec<ContextLines>,
}

/// A root's size in one build: as compiled, as planned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RootSize {
    /// The root's name.
    pub(crate) root: String,
    /// Bytes as compiled.
    pub(crate) old: u64,
    /// Bytes as planned.
    pub(crate) new: u64,
}

/// The lines one context touches in the struct in one build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ContextLines {
    /// The context's name.
    pub(crate) context: String,
    /// Lines its members touch.
    pub(crate) lines: usize,
    /// The fewest lines its bytes fit in.
    pub(crate) optimum: u64,
}

/// A complete score, and what each build gives.
#[derive(Clone, Debug)]
pub(crate) struct Scored {
    /// The score over every build.
    pub(crate) score: Score,
    /// Per build, in build order.
    pub(crate) outcomes: Vec<Outcome>,
}

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
    pub(crate) before: Scored,
    /// How the orders were searched.
    pub(crate) method: Method,
    /// Candidates laid out and scored.
    pub(crate) tried: usize,
    /// Rounds of the climbs, both counted (0: none climbed).
    pub(crate) rounds: usize,
    /// The layout budget of a large struct's climb.
    pub(crate) budget: Option<usize>,
    /// The units the suggestion removes.
    pub(crate) removed: Vec<usize>,
    /// Orders single builds like better, when the suggestion leaves
    /// findings.
    pub(crate) alone: Vec<Alone>,
    /// The time the search took.
    pub(crate) elapsed: std::time::Duration,
}

/// The struct being searched: the moves of its units.
struct Searcher<'a> {
    units: &'a [Unit],
    /// The bar the layouts tried go to.
    progress: progress::Progress,
}

impl Searcher<'_> {
    /// The hill climb from `best`: the best order found, and the rounds.
    /// `tried` counts the layouts.
    fn climb(
        &self,
        evaluator: &mut Evaluator,
        mut best: Evaluated,
        tried: &mut usize,
    ) -> (Evaluated, usize) {
        let large = self.units.len() > MAX_UNITS;
        let mut rounds = 0;
        while rounds < MAX_ROUNDS && !(large && *tried >= LARGE_BUDGET) {
            // A large struct moves its classed members, and members inside
            // the groups of its context order (and the groups among
            // themselves): every move of every member is a neighbourhood
            // the square of 100 members, so it takes the first batch that
            // improves, within a budget.
            let mut steps = within_groups(&best.candidate.order);
            match large {
                true => steps.extend(classed_moves(&best.candidate.order, self.units)),
                false => steps.extend(neighbours(&best.candidate.order, self.units)),
            }
            steps.retain(|order| evaluator.allows(order));
            if steps.is_empty() {
                break;
            }
            rounds += 1;
            let candidates: Vec<Candidate> = steps
                .into_iter()
                .map(|order| Candidate {
                    order,
                    removed: best.candidate.removed.clone(),
                })
                .collect();
            let batch = if large { BATCH } else { candidates.len() };
            let mut improved = false;
            for chunk in candidates.chunks(batch) {
                let chunk = if large {
                    &chunk[..chunk.len().min(LARGE_BUDGET.saturating_sub(*tried))]
                } else {
                    chunk
                };
                if chunk.is_empty() {
                    break;
                }
                *tried += chunk.len();
                self.progress.tried(*tried);
                if let Some(w) = self.better(evaluator, chunk, &best) {
                    best = w;
                    improved = true;
                    break;
                }
            }
            if !improved {
                break;
            }
        }
        (best, rounds)
    }

    /// The first best of `candidates`, when it is better than `best` (as
    /// without the bound: only those worse than some complete score are
    /// dropped).
    fn better(
        &self,
        evaluator: &mut Evaluator,
        candidates: &[Candidate],
        best: &Evaluated,
    ) -> Option<Evaluated> {
        let bound = &best.scored.score;
        evaluator
            .evaluate(candidates.to_vec(), Some(bound))
            .into_iter()
            .min_by(|x, y| x.scored.score.cmp(&y.scored.score))
            .filter(|w| w.scored.score < *bound)
    }

    /// The best of every order ([`every_order`]), from `best`.
    fn exhaustive(
        &self,
        evaluator: &mut Evaluator,
        mut best: Evaluated,
        tried: &mut usize,
    ) -> Evaluated {
        let every = every_order(self.units);
        *tried += every.len();
        let start = *tried - every.len();
        for (i, chunk) in every.chunks(BATCH * 8).enumerate() {
            self.progress
                .tried(start + ((i + 1) * BATCH * 8).min(every.len()));
            if let Some(w) = self.better(evaluator, chunk, &best) {
                best = w;
            }
        }
        best
    }
}

/// Searches orders of struct `name`, whose units are `units`, over every
/// build in `snaps`.
pub(crate) fn search(
    name: &str,
    units: &[Unit],
    snaps: &[Snapshot],
    rules: &Rules,
    limits: &Limits,
) -> Result<Found> {
    search_seeded(name, units, snaps, rules, limits, Vec::new(), true)
}

/// [`search`] with more seeds, each kept when it is better than the best
/// so far, and the climb only when `climb`.
pub(crate) fn search_seeded(
    name: &str,
    units: &[Unit],
    snaps: &[Snapshot],
    rules: &Rules,
    limits: &Limits,
    seeds: Vec<Candidate>,
    climb: bool,
) -> Result<Found> {
    let original = Candidate {
        order: (0..units.len()).map(Entry::Unit).collect(),
        removed: Vec::new(),
    };
    let large = units.len() > MAX_UNITS;
    let searcher = Searcher {
        units,
        progress: progress::Progress::start(name, large.then_some(LARGE_BUDGET)),
    };
    let target = Target::new(name, units);
    let names: Vec<&str> = limits
        .pinned
        .iter()
        .map(|&u| units[u].name.as_str())
        .collect();
    let mut evaluator = Evaluator::new(&target, snaps, rules, limits, &names);
    let unlaid = || {
        crate::error::Error::Usage(format!(
            "struct {name} cannot be laid out again in its own order on every build"
        ))
    };
    let mut best = evaluator
        .evaluate(vec![original.clone()], None)
        .pop()
        .ok_or_else(unlaid)?;
    let before = best.scored.clone();
    evaluator.compiled(&before.outcomes);
    let compiled = best.clone();
    let mut tried = 1;
    // The context order: where a large struct's climb starts (it moves
    // members inside the groups), the other seed of a small one's.
    if !rules.contexts.is_empty() {
        let contexts: Vec<String> = rules.contexts.iter().map(|c| c.name.clone()).collect();
        tried += 1;
        let seed = by_context(name, units, &contexts);
        if let Some(seed) = evaluator.evaluate(vec![seed], None).pop()
            && (large || seed.scored.score < best.scored.score)
        {
            best = seed;
        }
    }
    // Seeds of the caller's (packing orders), each kept when better.
    tried += seeds.len();
    for seed in evaluator.evaluate(seeds, None) {
        if seed.scored.score < best.scored.score {
            best = seed;
        }
    }
    let start = best.candidate.clone();
    let exact = climb && units.len() <= EXACT_UNITS && !units.iter().any(|u| u.marker);
    let (mut best, mut rounds) = match (climb, exact) {
        (true, false) => searcher.climb(&mut evaluator, best, &mut tried),
        (true, true) => (searcher.exhaustive(&mut evaluator, best, &mut tried), 0),
        (false, _) => (best, 0),
    };
    // The climb follows the objectives' order, so it stops where no one
    // step improves the first of them: from an order that bought its
    // warnings with growth, one as good on warnings that grows less can be
    // several steps away. A second climb from the same start, with growth
    // ranked right after errors, and the better of the two by the order
    // asked for (rules only: packing has no findings to trade).
    let again = limits.rank.growth_after_errors();
    if climb && !exact && !large && !rules.types.is_empty() && again != limits.rank {
        let limits = Limits {
            rank: again,
            ..limits.clone()
        };
        let mut other = Evaluator::new(&target, snaps, rules, &limits, &names);
        other.compiled(&before.outcomes);
        if let Some(from) = other.evaluate(vec![start], None).pop() {
            tried += 1;
            let (found, more) = searcher.climb(&mut other, from, &mut tried);
            rounds += more;
            if let Some(found) = evaluator.evaluate(vec![found.candidate], None).pop()
                && found.scored.score < best.scored.score
            {
                best = found;
            }
        }
    }
    if compiled.scored.score < best.scored.score {
        // A large struct's climb found nothing better than as compiled.
        best = compiled;
    }
    // One order for every build may cost a build what an order of its own
    // would not: when the suggestion leaves findings, each build climbs
    // alone from it, and an order better there is scored on every build.
    let mut alone = Vec::new();
    let left = &best.scored.score;
    if snaps.len() > 1 && (left.errors > 0 || left.warnings > 0 || left.over > 0) {
        for (b, snap) in snaps.iter().enumerate() {
            let mut one =
                Evaluator::new(&target, std::slice::from_ref(snap), rules, limits, &names);
            one.compiled(std::slice::from_ref(&before.outcomes[b]));
            let start = match one.evaluate(vec![best.candidate.clone()], None).pop() {
                Some(s) => s,
                None => continue,
            };
            let joint = start.scored.score.clone();
            let (found, _) = searcher.climb(&mut one, start, &mut tried);
            let own = &found.scored.score;
            if own.errors + own.warnings + own.over as usize
                >= joint.errors + joint.warnings + joint.over as usize
            {
                continue;
            }
            if let Some(everywhere) = evaluator
                .evaluate(vec![found.candidate.clone()], None)
                .pop()
            {
                alone.push(Alone {
                    build: b,
                    plan_text: target.text(&found.candidate),
                    order: found.candidate.order,
                    everywhere: everywhere.scored.outcomes,
                });
            }
        }
    }
    let method = if exact {
        Method::Exhaustive
    } else if rounds == 0 {
        Method::Compared
    } else if large {
        Method::GroupClimb { batch: BATCH }
    } else {
        Method::Climb
    };
    // The suggestion's text, written once: for the report and `--plan-out`.
    let plan_text = target.text(&best.candidate);
    let Evaluated {
        candidate: Candidate { order, removed },
        scored: Scored { score, outcomes },
    } = best;
    Ok(Found {
        order,
        removed,
        plan_text,
        score,
        outcomes,
        before,
        method,
        tried,
        rounds,
        budget: large.then_some(LARGE_BUDGET),
        alone,
        elapsed: searcher.progress.finish(),
    })
}

/// An order one build alone likes better than the suggestion for all.
pub(crate) struct Alone {
    /// The build's index.
    pub(crate) build: usize,
    /// The order.
    pub(crate) order: Vec<Entry>,
    /// Its plan file text.
    pub(crate) plan_text: String,
    /// What this order gives on every build.
    pub(crate) everywhere: Vec<Outcome>,
}

/// Every order of `units` (no markers among them), and when some are
/// lockless writers, every order with them gathered into one aligned
/// group (every order inside it too): the exhaustive search's candidates.
fn every_order(units: &[Unit]) -> Vec<Candidate> {
    let all: Vec<usize> = (0..units.len()).collect();
    let mut out: Vec<Candidate> = permutations(&all)
        .into_iter()
        .map(|p| Candidate {
            order: p.into_iter().map(Entry::Unit).collect(),
            removed: Vec::new(),
        })
        .collect();
    let (writers, rest): (Vec<usize>, Vec<usize>) = all.iter().partition(|&&u| units[u].lockless);
    if !writers.is_empty() {
        // The group is one more entry among the rest, in each of its orders.
        for inner in permutations(&writers) {
            let mut entries: Vec<Entry> = rest.iter().map(|&u| Entry::Unit(u)).collect();
            entries.push(Entry::Group(inner));
            out.extend(permutations(&entries).into_iter().map(|order| Candidate {
                order,
                removed: Vec::new(),
            }));
        }
    }
    out
}

/// Every permutation of `items`, the identity first.
fn permutations<T: Clone>(items: &[T]) -> Vec<Vec<T>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut out = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.to_vec();
        let first = rest.remove(i);
        for mut tail in permutations(&rest) {
            tail.insert(0, first.clone());
            out.push(tail);
        }
    }
    out
}

/// Every order one step from `order`: a block of one to three entries
/// moved to another place, two entries swapped, and the lockless writers
/// gathered into one aligned group at every place.
fn neighbours(order: &[Entry], units: &[Unit]) -> Vec<Vec<Entry>> {
    let mut out = Vec::new();
    let n = order.len();
    // A kernel group's markers never move themselves: members may move in
    // and out of a group, but its begin stays before its end, and every
    // marker keeps its order among the rest.
    let marker = |e: &Entry| matches!(e, Entry::Unit(u) if units[*u].marker);
    // Every unit moves, flagged or not: an unflagged one shifts the
    // offsets of the rest, which is what puts an array on lines of its own.
    for len in 1..=3.min(n) {
        for i in 0..=n - len {
            if order[i..i + len].iter().any(marker) {
                continue;
            }
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
            if marker(&order[i]) || marker(&order[j]) {
                continue;
            }
            let mut c = order.to_vec();
            c.swap(i, j);
            out.push(c);
        }
    }
    out.extend(gathered(order, units));
    out
}

/// Every order one move of a classed unit from `order`, nearest places
/// first, and the lockless writers gathered into one aligned group at
/// every place: a large struct's neighbourhood, the classed units times
/// the places (not the square of the units).
fn classed_moves(order: &[Entry], units: &[Unit]) -> Vec<Vec<Entry>> {
    let mut moves: Vec<(usize, Vec<Entry>)> = Vec::new();
    for i in 0..order.len() {
        let Entry::Unit(u) = order[i] else { continue };
        if !units[u].classed || units[u].marker {
            continue;
        }
        let mut rest = order.to_vec();
        let entry = rest.remove(i);
        for pos in (0..=rest.len()).filter(|&p| p != i) {
            let mut c = rest.clone();
            c.insert(pos, entry.clone());
            moves.push((pos.abs_diff(i), c));
        }
    }
    moves.sort_by_key(|(distance, _)| *distance);
    let mut out: Vec<Vec<Entry>> = moves.into_iter().map(|(_, c)| c).collect();
    out.extend(gathered(order, units));
    out
}

/// `order` with its lockless writers gathered into one aligned group, at
/// every place (none when there is a group already or no writer).
fn gathered(order: &[Entry], units: &[Unit]) -> Vec<Vec<Entry>> {
    let writers: Vec<usize> = order
        .iter()
        .filter_map(|e| match e {
            Entry::Unit(u) if units[*u].lockless => Some(*u),
            _ => None,
        })
        .collect();
    let has_group = order.iter().any(|e| matches!(e, Entry::Group(_)));
    if writers.is_empty() || has_group {
        return Vec::new();
    }
    let rest: Vec<Entry> = order
        .iter()
        .filter(|e| !matches!(e, Entry::Unit(u) if writers.contains(u)))
        .cloned()
        .collect();
    (0..=rest.len())
        .map(|pos| {
            let mut c = rest.clone();
            c.insert(pos, Entry::Group(writers.clone()));
            c
        })
        .collect()
}

/// Every order one step from `order` inside its groups: a member of a
/// group moved to another place in it, and a group moved to another place
/// among the groups (the span from the first group to the last).
fn within_groups(order: &[Entry]) -> Vec<Vec<Entry>> {
    let mut out = Vec::new();
    let groups: Vec<usize> = (0..order.len())
        .filter(|&i| !matches!(order[i], Entry::Unit(_)))
        .collect();
    for &g in &groups {
        let members = match &order[g] {
            Entry::Group(m) | Entry::Named(_, m) => m,
            Entry::Unit(_) => continue,
        };
        for i in 0..members.len() {
            let mut rest = members.clone();
            let u = rest.remove(i);
            for pos in (0..=rest.len()).filter(|&p| p != i) {
                let mut moved = rest.clone();
                moved.insert(pos, u);
                let mut c = order.to_vec();
                c[g] = match &order[g] {
                    Entry::Named(n, _) => Entry::Named(n.clone(), moved),
                    _ => Entry::Group(moved),
                };
                out.push(c);
            }
        }
    }
    if let (Some(&first), Some(&last)) = (groups.first(), groups.last()) {
        for &g in &groups {
            let mut rest = order.to_vec();
            let entry = rest.remove(g);
            for pos in (first..=last).filter(|&p| p != g) {
                let mut c = rest.clone();
                c.insert(pos, entry.clone());
                out.push(c);
            }
        }
    }
    out
}

/// The units of struct `id` in `table`, those the rules say are written
/// locklessly marked.
pub(crate) fn units(
    table: &TypeTable,
    id: TypeId,
    name: &str,
    rules: &Rules,
    line: u64,
) -> Vec<Unit> {
    let mut out: Vec<Unit> = Vec::new();
    let Some(members) = table.composite(id).and_then(|c| c.members.as_ref()) else {
        return out;
    };
    let type_rules = rules.type_rules(name);
    // The rule on member `m`, or on a field inside it.
    let rule_on = |m: &str| {
        type_rules.and_then(|t| {
            t.fields
                .iter()
                .find(|f| f.path == m || f.path.starts_with(&format!("{m}.")))
        })
    };
    let classed = |names: &[String]| names.iter().any(|n| rule_on(n).is_some());
    let mut previous_bitfield = false;
    for m in members {
        let bitfield = m.bit_size.is_some();
        let mut names = Vec::new();
        match &m.name {
            Some(n) => names.push(n.clone()),
            None => inner_names(table, m.ty, 0, &mut names),
        }
        let field = bitfield.then(|| crate::plan::abi::Bitfield {
            width: m.bit_size.unwrap_or(0),
            unit_size: table.size_of(m.ty).unwrap_or(0),
            unit_align: table.alignment_of(m.ty).max(1),
        });
        if bitfield && previous_bitfield {
            // The same run: its contexts join the run's unit.
            if let Some(last) = out.last_mut() {
                add_contexts(last, type_rules, &names);
                last.bits.extend(field);
                last.classed |= classed(&names);
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
            lockless: rule_on(&name).map(|f| f.class) == Some(Class::LocklessWrite),
            classed: classed(&names),
            reads: Vec::new(),
            writes: Vec::new(),
            marker,
            align: table.alignment_of(m.ty).max(1),
            size: table.size_of(m.ty).unwrap_or(0),
            bits: field.into_iter().collect(),
            name,
            optional: false,
            isolation: Isolation::of(table, m, line),
        };
        add_contexts(&mut unit, type_rules, &names);
        out.push(unit);
    }
    out
}

/// The name a plan gives the anonymous struct or union of type `ty`: its
/// first named member, as [`units`] names it.
pub(crate) fn first_inner_name(table: &TypeTable, ty: TypeId) -> Option<String> {
    let mut names = Vec::new();
    inner_names(table, ty, 0, &mut names);
    names.into_iter().next()
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
        return Candidate {
            order: Vec::new(),
            removed,
        };
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
    Candidate { order, removed }
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
            optional: false,
            isolation: None,
            classed: false,
            bits: Vec::new(),
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
        let Candidate { order, removed } = by_context("s", &units, &contexts);
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
    fn inside_groups_a_member_moves_in_its_group_and_a_group_among_groups() {
        use Entry::*;
        let order = [
            Unit(0),
            Named("g".into(), vec![1, 2, 3]),
            Named("h".into(), vec![4]),
            Unit(5),
        ];
        let steps = within_groups(&order);
        // Each of g's 3 members to 2 other places; h's one member nowhere;
        // g after h and h before g (the span of the groups).
        assert_eq!(steps.len(), 3 * 2 + 2, "{steps:?}");
        assert!(steps.contains(&vec![
            Unit(0),
            Named("g".into(), vec![2, 3, 1]),
            Named("h".into(), vec![4]),
            Unit(5),
        ]));
        assert!(steps.contains(&vec![
            Unit(0),
            Named("h".into(), vec![4]),
            Named("g".into(), vec![1, 2, 3]),
            Unit(5),
        ]));
        // Members outside groups never move, and every step is a new order.
        assert!(steps.iter().all(|s| s[0] == Unit(0) && s[3] == Unit(5)));
        assert!(steps.iter().all(|s| s.as_slice() != order));
        assert!(within_groups(&[Unit(0), Unit(1)]).is_empty());
    }

    #[test]
    fn a_kernel_groups_markers_never_move() {
        use Entry::*;
        let units = [
            unit("a", &[], &[], 8),
            unit("__cacheline_group_begin__g", &[], &[], 1),
            unit("b", &[], &[], 8),
            unit("__cacheline_group_end__g", &[], &[], 1),
            unit("c", &[], &[], 8),
        ];
        let order: Vec<Entry> = (0..units.len()).map(Unit).collect();
        let steps = neighbours(&order, &units);
        assert!(!steps.is_empty());
        for s in &steps {
            // Begin and end keep their order, with every other entry
            // moving around them.
            let at = |u: usize| s.iter().position(|e| *e == Unit(u)).unwrap();
            assert!(at(1) < at(3), "{s:?}");
        }
        // b may still leave the group, and a may enter it.
        assert!(steps.contains(&vec![Unit(0), Unit(1), Unit(3), Unit(2), Unit(4)]));
        assert!(steps.contains(&vec![Unit(1), Unit(0), Unit(2), Unit(3), Unit(4)]));
    }

    #[test]
    fn every_order_is_every_permutation_and_every_placement_of_the_group() {
        // a, b plain; w1, w2 lockless: 4! orders, then the group [w1 w2]
        // or [w2 w1] among a and b, 3! each.
        let mut units = vec![
            unit("a", &[], &[], 8),
            unit("w1", &[], &[], 8),
            unit("b", &[], &[], 8),
            unit("w2", &[], &[], 8),
        ];
        units[1].lockless = true;
        units[3].lockless = true;
        let every = every_order(&units);
        assert_eq!(every.len(), 24 + 2 * 6);
        let distinct: std::collections::HashSet<String> =
            every.iter().map(|c| format!("{:?}", c.order)).collect();
        assert_eq!(distinct.len(), every.len());
        assert_eq!(every[0].order, (0..4).map(Entry::Unit).collect::<Vec<_>>());
        let grouped = every
            .iter()
            .filter(|c| c.order.contains(&Entry::Group(vec![3, 1])))
            .count();
        assert_eq!(grouped, 6);
    }
}
