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

use super::{ContextLines, Limits, Outcome, RootSize, Score, Scored, Snapshot};
use crate::analysis;
use crate::error::Result;
use crate::layout::{self, Layout};
use crate::model::{TypeId, TypeTable};
use crate::plan::Plan;
use crate::plan::apply::Planner;
use crate::rules::{Rules, Severity};

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
            snap.pins = pinned
                .iter()
                .filter_map(|n| Some((n.to_string(), snap.offset_of(n)?)))
                .collect();
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

/// A score being added up, root by root and build by build.
pub(super) struct Tally {
    max_growth: Option<i64>,
    /// The build's lines per context as compiled, to keep.
    kept: Option<Vec<usize>>,
    score: Score,
}

impl Tally {
    fn new(moved: usize, max_growth: Option<i64>, rank: super::Rank) -> Tally {
        Tally {
            max_growth,
            kept: None,
            score: Score {
                rank,
                over: 0,
                regress: 0,
                errors: 0,
                warnings: 0,
                growth_lines: i64::MIN,
                growth_bytes: i64::MIN,
                footprint: 0,
                moved,
            },
        }
    }

    /// The score so far: no part of it falls when more is added.
    fn score(&self) -> Score {
        let mut s = self.score.clone();
        if s.growth_lines == i64::MIN {
            // No root yet (or none at all): nothing grew.
            s.growth_lines = 0;
            s.growth_bytes = 0;
        }
        if let Some(max) = self.max_growth {
            s.over = s.growth_lines.saturating_sub(max).max(0);
        }
        s
    }
}

impl Snapshot {
    /// The bit offset of member `name` in the struct as it is laid out now.
    fn offset_of(&self, name: &str) -> Option<u64> {
        crate::path::find_member(&self.table, self.target, name)
            .ok()
            .flatten()
            .map(|(_, at)| at)
    }

    /// Lays `plan` out on this build, analyses every root (smallest first)
    /// and the struct `name` itself (its footprint in `contexts`), adds
    /// them to `tally`, and undoes the layout. `Ok(None)` when `beaten`
    /// says the tally is already worse than the best.
    /// The struct as `plan` lays it out on this build, with the table its
    /// member types are named from (for printing it as C).
    pub(crate) fn planned(&self, plan: &Arc<Plan>) -> Result<(TypeTable, Layout)> {
        let mut table = self.table.clone();
        let mut planner = Planner::knowing(plan.clone(), self.abi, self.line, self.known.clone());
        planner.apply(&mut table, &[self.target])?;
        let laid = layout::layout(&table, self.target, self.line, layout::Depth::Direct)?;
        Ok((table, laid))
    }

    pub(super) fn lay_out(
        &mut self,
        plan: &Arc<Plan>,
        rules: &Rules,
        name: &str,
        contexts: &[String],
        tally: &mut Tally,
        beaten: &dyn Fn(&Tally) -> bool,
    ) -> Result<Option<Outcome>> {
        let ids: Vec<TypeId> = self
            .roots
            .iter()
            .map(|(_, id)| *id)
            .chain(std::iter::once(self.target))
            .collect();
        // The struct itself is laid out too (its footprint): a lookup's
        // copy of it may not be the one a root holds.
        let mut planner = Planner::knowing(plan.clone(), self.abi, self.line, self.known.clone());
        let applied = planner.apply(&mut self.table, &ids);
        let scored = applied.map(|()| self.tally(rules, name, contexts, tally, beaten));
        planner.undo(&mut self.table, &mut self.known, self.len);
        self.table.truncate(self.len);
        let Some(analysed) = scored? else {
            return Ok(None);
        };
        let mut outcome = Outcome {
            config: self.config.clone(),
            target: (
                self.table.size_of(self.target).unwrap_or(0),
                analysed.planned,
            ),
            roots: Vec::with_capacity(analysed.roots.len()),
            errors: 0,
            warnings: 0,
            footprint: analysed.footprint,
        };
        for ((name, id), root) in self.roots.iter().zip(analysed.roots) {
            outcome.errors += root.errors;
            outcome.warnings += root.warnings;
            outcome.roots.push(RootSize {
                root: name.clone(),
                old: self.table.size_of(*id).unwrap_or(0),
                new: root.size,
            });
        }
        Ok(Some(outcome))
    }

    /// The planned layout's part of the score, root by root; `None` once
    /// `beaten`.
    fn tally(
        &self,
        rules: &Rules,
        name: &str,
        contexts: &[String],
        tally: &mut Tally,
        beaten: &dyn Fn(&Tally) -> bool,
    ) -> Option<Analysed> {
        let planned = self.table.size_of(self.target).unwrap_or(0);
        if self
            .pins
            .iter()
            .any(|(n, at)| self.offset_of(n) != Some(*at))
        {
            // A pinned member moved: not a layout the user allows.
            return None;
        }
        let mut roots = vec![RootFindings::default(); self.roots.len()];
        for &i in &self.by_size {
            let (root, id) = &self.roots[i];
            let a = analysis::analyze(&self.table, *id, root, self.line, rules);
            let (mut errors, mut warnings) = (0, 0);
            for f in a.findings.iter().filter(|f| f.allowed.is_none()) {
                match f.severity {
                    Severity::Error => errors += 1,
                    Severity::Warning => warnings += 1,
                    Severity::Note => {}
                }
            }
            let old = self.sizes[i];
            let s = &mut tally.score;
            s.errors += errors;
            s.warnings += warnings;
            s.growth_bytes = s.growth_bytes.max(a.size as i64 - old as i64);
            s.growth_lines = s
                .growth_lines
                .max(a.size.div_ceil(self.line) as i64 - old.div_ceil(self.line) as i64);
            roots[i] = RootFindings {
                size: a.size,
                errors,
                warnings,
            };
            if beaten(tally) {
                return None;
            }
        }
        if self.roots.is_empty() {
            // Packing only (no rules, so no roots): the struct's own growth
            // in bytes is the growth; its lines follow from its bytes.
            let s = &mut tally.score;
            s.growth_lines = s.growth_lines.max(0);
            s.growth_bytes = s.growth_bytes.max(planned as i64 - self.size as i64);
        }
        let footprint: Vec<ContextLines> = if contexts.is_empty() {
            Vec::new()
        } else {
            let own = analysis::analyze(&self.table, self.target, name, self.line, rules);
            analysis::footprint::footprint(&own, contexts)
                .contexts
                .into_iter()
                .map(|c| ContextLines {
                    context: c.context,
                    lines: c.lines.len(),
                    optimum: c.optimum,
                })
                .collect()
        };
        tally.score.footprint += footprint.iter().map(|f| f.lines).sum::<usize>();
        if let Some(kept) = &tally.kept {
            tally.score.regress += footprint
                .iter()
                .zip(kept)
                .map(|(f, k)| f.lines.saturating_sub(*k))
                .sum::<usize>();
            if beaten(tally) {
                return None;
            }
        }
        Some(Analysed {
            planned,
            roots,
            footprint,
        })
    }
}

/// What one build's planned layout gives, before it becomes an
/// [`Outcome`].
struct Analysed {
    /// The struct's own size as planned.
    planned: u64,
    /// Per root, in root order.
    roots: Vec<RootFindings>,
    /// The struct's footprint, per context.
    footprint: Vec<ContextLines>,
}

/// One root as planned: its size and the finding pairs in it.
#[derive(Clone, Default)]
struct RootFindings {
    /// Bytes.
    size: u64,
    /// Error pairs.
    errors: usize,
    /// Warning pairs.
    warnings: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tally_only_grows_and_a_build_without_roots_grew_nothing() {
        let mut t = Tally::new(3, Some(1), crate::search::Rank::default());
        assert_eq!(t.score().growth_lines, 0);
        assert_eq!(t.score().over, 0);
        t.score.growth_lines = 4;
        t.score.growth_bytes = 200;
        // Over the limit by 3 lines; moved stays what it was given.
        assert_eq!(t.score().over, 3);
        assert_eq!(t.score().moved, 3);
    }
}
