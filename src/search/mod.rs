//! The search behind `suggest`: member orders of one struct, each laid out
//! by the plan engine on every build (so every candidate is a layout the
//! compiler would give), scored by the findings of every root and the
//! growth of the roots, best first. A hill climb from the compiled order:
//! each round tries every move of one member whose fields are in a finding
//! to every position, and the struct's lockless writers gathered into one
//! cacheline-aligned kernel group at every position, and keeps the best
//! while it improves.
//!
//! This file is the driver: the climb, the exhaustive search of a small
//! struct and the seeds. What it drives is a file a job: `units` (what
//! is ordered), `moves` (the candidates tried from an order), `candidate`
//! (an order laid out on every build), `evaluate` and `snapshot` (a
//! candidate scored), `score` (the scores, the limits and what is found),
//! `rank` (the objectives' order), `packing` (the packing orders),
//! `members` (units merged over builds) and `progress` (the bar).

mod candidate;
mod evaluate;
mod moves;
mod progress;
mod score;
mod snapshot;
mod units;

pub(crate) mod members;
pub(crate) mod packing;
pub(crate) mod rank;

use crate::error::Result;
use crate::report::suggest::Method;
use crate::rules::Rules;
use candidate::Target;
pub(crate) use candidate::{Candidate, Entry};
use evaluate::{Evaluated, Evaluator};
use moves::{by_context, classed_moves, every_order, neighbours, within_groups};
pub(crate) use rank::{Objective, Rank};
pub(crate) use score::{Alone, Best, Limits, Outcome, Scored};
pub(crate) use snapshot::Snapshot;
pub(crate) use units::{Unit, first_inner_name, pinned, units};

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
) -> Result<Best> {
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
) -> Result<Best> {
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
        crate::error::Error::Mismatch(format!(
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
    Ok(Best {
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
