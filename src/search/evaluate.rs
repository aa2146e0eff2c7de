//! Scoring candidates: each plan laid out by the plan engine on every
//! build and every root analysed under the rules.
//!
//! The candidates of a round run in parallel, each worker on its own copy
//! of the builds (a candidate is laid out in place and undone). A
//! candidate is dropped as soon as what it has scored so far is already
//! worse than the best complete score (every part of a [`Score`] only
//! grows as builds and roots are added, so the rest could not save it):
//! roots are analysed smallest first, and builds one after the other. A
//! plan text scored once is not scored again.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use super::snapshot::{Snapshot, Tally};
use super::{Limits, Outcome, Score, Scored};
use crate::plan::Plan;
use crate::rules::Rules;

/// What scores candidates of one struct.
pub(super) struct Evaluator<'a> {
    name: &'a str,
    rules: &'a Rules,
    contexts: Vec<String>,
    limits: Limits,
    /// With `--keep-footprint`: per build, the lines each context touches
    /// as compiled.
    compiled_footprint: Option<Vec<Vec<usize>>>,
    /// The builds as loaded, copied for a worker that finds the pool empty.
    template: Vec<Snapshot>,
    /// Copies of the builds, one per worker at work.
    pool: Mutex<Vec<Vec<Snapshot>>>,
    /// Plan texts scored: the score, or `None` when the plan engine refused
    /// it or it was beaten before it was complete (bounds only fall, so it
    /// stays beaten).
    seen: HashMap<String, Option<Scored>>,
}

impl<'a> Evaluator<'a> {
    /// An evaluator of struct `name`'s candidates on `snaps`.
    pub(super) fn new(
        name: &'a str,
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
            name,
            rules,
            contexts: rules.contexts.iter().map(|c| c.name.clone()).collect(),
            limits: limits.clone(),
            compiled_footprint: None,
            template,
            pool: Mutex::new(pool),
            seen: HashMap::new(),
        }
    }

    /// Takes the compiled order's outcomes as what `--keep-footprint`
    /// keeps (when it is given).
    pub(super) fn compiled_footprint(&mut self, compiled: &[Outcome]) {
        if self.limits.keep_footprint {
            self.compiled_footprint = Some(
                compiled
                    .iter()
                    .map(|o| o.footprint.iter().map(|f| f.lines).collect())
                    .collect(),
            );
        }
    }

    /// Scores each `(plan text, members moved)`: `None` for a plan the
    /// engine refuses on some build, and, with a `bound`, for one whose
    /// score is worse than it or than a better one found meanwhile.
    pub(super) fn score(
        &mut self,
        candidates: &[(String, usize)],
        bound: Option<&Score>,
    ) -> Vec<Option<Scored>> {
        let mut todo: Vec<&(String, usize)> = Vec::new();
        {
            let mut queued = std::collections::HashSet::new();
            for c in candidates {
                if !self.seen.contains_key(&c.0) && queued.insert(&c.0) {
                    todo.push(c);
                }
            }
        }
        let best = Mutex::new(bound.cloned());
        let results: Vec<Option<Scored>> = todo
            .par_iter()
            .with_max_len(1)
            .map(|(text, moved)| {
                let plan = Arc::new(Plan::parse(Path::new("suggested.plan.toml"), text).ok()?);
                let mut set = self.pool.lock().ok()?.pop();
                let set = set.get_or_insert_with(|| self.template.clone());
                let scored = self.score_one(set, &plan, *moved, &best);
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
        for (c, r) in todo.iter().zip(results) {
            self.seen.insert(c.0.clone(), r);
        }
        candidates
            .iter()
            .map(|c| self.seen.get(&c.0).cloned().flatten())
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
        let mut tally = Tally::new(moved, self.limits.max_growth, self.limits.rank);
        let mut outcomes = Vec::with_capacity(set.len());
        for (b, snap) in set.iter_mut().enumerate() {
            tally.kept = self.compiled_footprint.as_ref().map(|f| f[b].clone());
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
                    self.name,
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
