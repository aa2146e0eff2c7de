//! The search's vocabulary: what a suggestion may not do ([`Limits`]),
//! how a candidate scores ([`Score`], per build an [`Outcome`]), and what
//! the search found ([`Best`]).

use super::candidate::Entry;
use super::rank::{Objective, Rank};
use crate::report::suggest::Method;

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
pub(crate) struct Best {
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
