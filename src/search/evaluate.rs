//! Scoring candidates: each plan laid out by the plan engine on every
//! build and every root analysed under the rules.
//!
//! The candidates of a round run in parallel, each worker on its own copy
//! of the builds (a candidate is laid out in place and undone). A
//! candidate is dropped as soon as what it has scored so far is already
//! worse than the best complete score (every part of a [`Score`] only
//! grows as builds and roots are added, so the rest could not save it):
//! roots are analysed smallest first, and builds one after the other. A
//! candidate scored once is not scored again.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use super::candidate::{Candidate, Target};
use super::score::{Limits, Outcome, Score, Scored};
use super::snapshot::{Snapshot, Tally};
use crate::plan::Plan;
use crate::rules::Rules;

/// A candidate scored.
#[derive(Clone)]
pub(super) struct Evaluated {
    /// The candidate.
    pub(super) candidate: Candidate,
    /// Its score and outcomes.
    pub(super) scored: Scored,
}

/// What scores candidates of one struct.
pub(super) struct Evaluator<'a> {
    /// The struct, and how a candidate becomes its plan.
    target: &'a Target<'a>,
    rules: &'a Rules,
    contexts: Vec<String>,
    limits: Limits,
    /// With `--keep-footprint`: per build, the lines each context touches
    /// as compiled.
    compiled_footprint: Option<Vec<Vec<usize>>>,
    /// With the default order ([`super::score::Limits::guard`]): per build, the
    /// errors, warnings and notes as compiled.
    compiled_findings: Option<Vec<[usize; 3]>>,
    /// The builds as loaded, copied for a worker that finds the pool empty.
    template: Vec<Snapshot>,
    /// Copies of the builds, one per worker at work.
    pool: Mutex<Vec<Vec<Snapshot>>>,
    /// Candidates scored: the score, or `None` when the plan engine
    /// refused it or it was beaten before it was complete (bounds only
    /// fall, so it stays beaten).
    seen: HashMap<Candidate, Option<Scored>>,
}

impl<'a> Evaluator<'a> {
    /// An evaluator of `target`'s candidates on `snaps`.
    pub(super) fn new(
        target: &'a Target<'a>,
        snaps: &[Snapshot],
        rules: &'a Rules,
        limits: &Limits,
        pinned: &[&str],
    ) -> Evaluator<'a> {
        let mut template = snaps.to_vec();
        for snap in &mut template {
            snap.pin(pinned);
        }
        let pool = (0..rayon::current_num_threads())
            .map(|_| template.clone())
            .collect();
        Evaluator {
            target,
            rules,
            contexts: rules.contexts.iter().map(|c| c.name.clone()).collect(),
            limits: limits.clone(),
            compiled_footprint: None,
            compiled_findings: None,
            template,
            pool: Mutex::new(pool),
            seen: HashMap::new(),
        }
    }

    /// True when an order of the units keeps the limits' barriers.
    pub(super) fn allows(&self, order: &[super::candidate::Entry]) -> bool {
        super::candidate::keeps(order, &[], &self.limits.barriers)
    }

    /// Takes the compiled order's outcomes as what `--keep-footprint`
    /// keeps (when it is given), and as the findings no build may be
    /// worse than.
    pub(super) fn compiled(&mut self, compiled: &[Outcome]) {
        self.compiled_findings = self.limits.guard.then(|| {
            compiled
                .iter()
                .map(|o| [o.errors, o.warnings, o.notes])
                .collect()
        });
        // The guard keeps the footprint too: a context in more lines than
        // compiled is worse for it.
        if self.limits.keep_footprint || self.limits.guard {
            self.compiled_footprint = Some(
                compiled
                    .iter()
                    .map(|o| o.footprint.iter().map(|f| f.lines).collect())
                    .collect(),
            );
        }
    }

    /// Scores `candidates`, in their order, leaving out one the plan
    /// engine refuses on some build (a flexible array not last: simply not
    /// a layout) and, with a `bound`, one whose score is worse than it or
    /// than a better one found meanwhile.
    pub(super) fn evaluate(
        &mut self,
        candidates: Vec<Candidate>,
        bound: Option<&Score>,
    ) -> Vec<Evaluated> {
        let mut todo: Vec<&Candidate> = Vec::new();
        {
            let mut queued = HashSet::new();
            for c in &candidates {
                if self.seen.contains_key(c) || !queued.insert(c) {
                    continue;
                }
                match super::candidate::keeps(&c.order, &c.removed, &self.limits.barriers) {
                    true => todo.push(c),
                    // Across the author's isolation: not a layout allowed.
                    false => {
                        self.seen.insert(c.clone(), None);
                    }
                }
            }
        }
        let best = Mutex::new(bound.cloned());
        let results: Vec<Option<Scored>> = todo
            .par_iter()
            .with_max_len(1)
            .map(|c| {
                let plan = Arc::new(self.target.plan(c)?);
                let mut set = self.pool.lock().ok()?.pop();
                let set = set.get_or_insert_with(|| self.template.clone());
                let scored = self.score_one(set, &plan, c.moved(), &best);
                if let Ok(mut pool) = self.pool.lock() {
                    pool.push(std::mem::take(set));
                }
                let scored = scored?;
                if let Ok(mut b) = best.lock()
                    && b.as_ref().is_none_or(|b| scored.score < *b)
                {
                    *b = Some(scored.score.clone());
                }
                Some(scored)
            })
            .collect();
        for (c, r) in todo.into_iter().zip(results) {
            self.seen.insert(c.clone(), r);
        }
        candidates
            .into_iter()
            .filter_map(|candidate| {
                let scored = self.seen.get(&candidate).cloned().flatten()?;
                Some(Evaluated { candidate, scored })
            })
            .collect()
    }

    /// One candidate on every build of `set`, or `None` (refused, or worse
    /// than `best` before the end).
    fn score_one(
        &self,
        set: &mut [Snapshot],
        plan: &Arc<Plan>,
        moved: usize,
        best: &Mutex<Option<Score>>,
    ) -> Option<Scored> {
        let mut tally = Tally::new(
            moved,
            self.limits.max_growth,
            self.limits.rank,
            self.limits.keep_footprint,
        );
        let mut outcomes = Vec::with_capacity(set.len());
        for (b, snap) in set.iter_mut().enumerate() {
            tally.kept = self.compiled_footprint.as_ref().map(|f| f[b].clone());
            tally.compiled = self.compiled_findings.as_ref().map(|f| f[b]);
            let beaten = |t: &Tally| {
                best.lock()
                    .ok()
                    .and_then(|b| b.as_ref().map(|b| t.score() > *b))
                    .unwrap_or(false)
            };
            let outcome = snap
                .lay_out(
                    plan,
                    self.rules,
                    self.target.rules_name(),
                    &self.contexts,
                    &mut tally,
                    &beaten,
                )
                .ok()??;
            outcomes.push(outcome);
        }
        Some(Scored {
            score: tally.score(),
            outcomes,
        })
    }
}
