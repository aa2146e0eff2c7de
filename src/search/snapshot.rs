//! One build as the search holds it: the types decoded for the struct and
//! its roots, on which a candidate's plan is laid out in place, analysed
//! root by root into a [`Tally`], and undone.

use std::collections::HashMap;
use std::sync::Arc;

use super::rank::Rank;
use super::score::{ContextLines, Outcome, RootSize, Score};
use crate::analysis;
use crate::error::Result;
use crate::layout::{self, Layout};
use crate::model::{TypeId, TypeTable};
use crate::plan::Plan;
use crate::plan::abi::Abi;
use crate::plan::infer::Known;
use crate::plan::planner::Planner;
use crate::rules::{Rules, Severity};

/// One build as loaded: the model holding the struct and its roots.
#[derive(Clone)]
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
    /// Its name in this build (a rules alias, or the name asked for).
    pub(crate) target_name: String,
    /// The machine's C ABI.
    pub(crate) abi: Abi,
    /// Line size.
    pub(crate) line: u64,
    /// The roots' sizes as compiled, in root order.
    sizes: Vec<u64>,
    /// The struct's own size as compiled.
    size: u64,
    /// Root indexes, smallest root first: the order they are analysed in,
    /// so that a candidate beaten early costs little.
    by_size: Vec<usize>,
    /// What planners read of the compiled structs, for the next.
    known: Arc<Known>,
    /// Pinned members: name and compiled bit offset in the struct.
    pins: Vec<(String, u64)>,
    /// perf's samples (`--perf`) on the struct's annotated fields as
    /// compiled, by their path in it: they follow a field wherever a
    /// candidate moves it. Empty without samples.
    weights: HashMap<String, u64>,
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
        let sizes: Vec<u64> = roots
            .iter()
            .map(|(_, id)| table.size_of(*id).unwrap_or(0))
            .collect();
        let mut by_size: Vec<usize> = (0..roots.len()).collect();
        by_size.sort_by_key(|&i| sizes[i]);
        let size = table.size_of(target).unwrap_or(0);
        Snapshot {
            config,
            len: table.len(),
            table,
            roots,
            target,
            target_name: String::new(),
            abi,
            line,
            size,
            sizes,
            by_size,
            known: Default::default(),
            pins: Vec::new(),
            weights: HashMap::new(),
        }
    }

    /// Weighs the struct's fields by perf's samples on them as compiled:
    /// `weights` by path in the struct (named `target_name`'s outermost
    /// struct, as the rules' spans' owners name it).
    pub(crate) fn weigh(&mut self, weights: HashMap<String, u64>) {
        self.weights = weights;
    }

    /// The samples on a span of a root: on the field of the struct it
    /// lies in, found through the struct instance among its owners.
    fn weight(&self, span: &analysis::Span) -> u64 {
        if self.weights.is_empty() {
            return 0;
        }
        let outer = crate::plan::outer(&self.target_name);
        span.owners
            .iter()
            .rev()
            .find(|(ty, _)| ty == outer)
            .and_then(|(_, path)| self.weights.get(path))
            .copied()
            .unwrap_or(0)
    }

    /// Pins the members `names` at their offsets as compiled: a candidate
    /// that moves one is not a layout.
    pub(super) fn pin(&mut self, names: &[&str]) {
        self.pins = names
            .iter()
            .filter_map(|n| Some((n.to_string(), self.offset_of(n)?)))
            .collect();
    }

    /// The bit offset of member `name` in the struct as it is laid out now.
    fn offset_of(&self, name: &str) -> Option<u64> {
        crate::path::find_member(&self.table, self.target, name)
            .ok()
            .flatten()
            .map(|(_, at)| at)
    }

    /// The struct as `plan` lays it out on this build, with the table its
    /// member types are named from (for printing it as C).
    pub(crate) fn planned(&self, plan: &Arc<Plan>) -> Result<(TypeTable, Layout)> {
        let mut table = self.table.clone();
        let mut planner = Planner::knowing(plan.clone(), self.abi, self.line, self.known.clone());
        planner.apply(&mut table, &[self.target])?;
        let laid = layout::layout(&table, self.target, self.line, layout::Depth::Direct)?;
        Ok((table, laid))
    }

    /// Lays `plan` out on this build, analyses every root (smallest first)
    /// and the struct `name` itself (its footprint in `contexts`), adds
    /// them to `tally`, and undoes the layout. `Ok(None)` when `beaten`
    /// says the tally is already worse than the best.
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
            notes: 0,
            samples: 0,
            footprint: analysed.footprint,
        };
        for ((name, id), root) in self.roots.iter().zip(analysed.roots) {
            outcome.errors += root.errors;
            outcome.warnings += root.warnings;
            outcome.notes += root.notes;
            outcome.samples += root.samples;
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
            let (mut errors, mut warnings, mut notes, mut samples) = (0, 0, 0, 0);
            let spans = &a.annotated.spans;
            for f in a.findings.iter().filter(|f| f.allowed.is_none()) {
                match f.severity {
                    Severity::Error => errors += 1,
                    Severity::Warning => warnings += 1,
                    Severity::Note => notes += 1,
                }
                samples += [f.a.span, f.b.span]
                    .iter()
                    .filter_map(|&i| spans.get(i))
                    .map(|span| self.weight(span))
                    .sum::<u64>();
            }
            let old = self.sizes[i];
            let s = &mut tally.score;
            s.errors += errors;
            s.warnings += warnings;
            s.notes += notes;
            s.samples += samples;
            s.growth_bytes = s.growth_bytes.max(a.size as i64 - old as i64);
            s.growth_lines = s
                .growth_lines
                .max(crate::lines::growth(old, a.size, self.line));
            roots[i] = RootFindings {
                size: a.size,
                errors,
                warnings,
                notes,
                samples,
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
        let regress = tally.kept.as_ref().map_or(0, |kept| {
            footprint
                .iter()
                .zip(kept)
                .map(|(f, k)| f.lines.saturating_sub(*k))
                .sum::<usize>()
        });
        if tally.keep {
            tally.score.regress += regress;
        }
        if let Some(compiled) = tally.compiled {
            // Worse than compiled: more findings (errors, then warnings,
            // then notes; once worse a build stays worse as roots are
            // added, each count only growing) or a context in more lines.
            let sum = |f: fn(&RootFindings) -> usize| roots.iter().map(f).sum::<usize>();
            let here = [sum(|r| r.errors), sum(|r| r.warnings), sum(|r| r.notes)];
            if here > compiled || regress > 0 {
                tally.score.worse += 1;
            }
        }
        if beaten(tally) {
            return None;
        }
        Some(Analysed {
            planned,
            roots,
            footprint,
        })
    }
}

/// A score being added up, root by root and build by build.
pub(super) struct Tally {
    max_growth: Option<i64>,
    /// The build's lines per context as compiled.
    pub(super) kept: Option<Vec<usize>>,
    /// Keep them (`--keep-footprint`): lines beyond them are `regress`.
    keep: bool,
    /// The build's errors, warnings and notes as compiled, not to be
    /// worse than: with the default order only, and `None` while the
    /// compiled order itself is scored.
    pub(super) compiled: Option<[usize; 3]>,
    score: Score,
}

impl Tally {
    /// Nothing added yet, for a candidate that moved `moved` units.
    /// With `keep` (`--keep-footprint`), lines beyond `kept` are `regress`.
    pub(super) fn new(moved: usize, max_growth: Option<i64>, rank: Rank, keep: bool) -> Tally {
        Tally {
            max_growth,
            kept: None,
            keep,
            compiled: None,
            score: Score {
                rank,
                over: 0,
                regress: 0,
                worse: 0,
                errors: 0,
                warnings: 0,
                notes: 0,
                samples: 0,
                growth_lines: i64::MIN,
                growth_bytes: i64::MIN,
                footprint: 0,
                moved,
            },
        }
    }

    /// The score so far: no part of it falls when more is added.
    pub(super) fn score(&self) -> Score {
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
    /// Note pairs.
    notes: usize,
    /// perf's samples on their fields.
    samples: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tally_only_grows_and_a_build_without_roots_grew_nothing() {
        let mut t = Tally::new(3, Some(1), Rank::default(), true);
        assert_eq!(t.score().growth_lines, 0);
        assert_eq!(t.score().over, 0);
        t.score.growth_lines = 4;
        t.score.growth_bytes = 200;
        // Over the limit by 3 lines; moved stays what it was given.
        assert_eq!(t.score().over, 3);
        assert_eq!(t.score().moved, 3);
    }
}
