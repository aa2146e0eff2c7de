//! `suggest`'s result, as plain data.

use serde::Serialize;

use super::asserts::AssertsReport;
use super::diagram::DiagramReport;
use super::layout::LayoutReport;

/// A whole `suggest` run.
#[derive(Serialize)]
pub struct SuggestReport {
    /// The struct searched.
    pub name: String,
    /// Members (units: an anonymous struct or a bitfield run counts once)
    /// ordered.
    pub members: usize,
    /// Layouts tried.
    pub tried: usize,
    /// The time the search took, in seconds.
    pub seconds: f64,
    /// Rounds of the climb; 0 when the struct had too many members to
    /// climb, and the compiled order was compared with a context order.
    pub rounds: usize,
    /// For a struct of more members than a full neighbourhood allows: the
    /// layouts its climb (inside the context order's groups, first
    /// improvement taken) may try; `None` for a full climb.
    pub budget: Option<usize>,
    /// Every order of the members was tried (a struct of at most 7
    /// units): the suggestion is the best order there is.
    pub exact: bool,
    /// How the orders were searched (JSON: `method`, and a group climb's
    /// `batch`).
    #[serde(flatten)]
    pub method: Method,
    /// The suggested member order (group members as `G: a, b`).
    pub order: Vec<String>,
    /// Units moved from the compiled order (and removed).
    pub moved: usize,
    /// Old group markers the suggestion removes.
    pub removed: Vec<String>,
    /// The members some builds lack (under a config option), with the
    /// builds that have them; the plan lists them in `optional = [...]`.
    pub per_config: Vec<PerConfig>,
    /// The plan file of the suggestion.
    pub plan: String,
    /// Where `--plan-out` wrote it.
    pub plan_out: Option<String>,
    /// With `--source-tree`: the header patch, a unified diff.
    pub patch: Option<String>,
    /// The objectives in the order they ranked the candidates (`--rank`).
    pub rank: Vec<String>,
    /// With rules: how far the suggestion is from each objective's bound.
    pub gap: Option<Gap>,
    /// Per build.
    pub builds: Vec<SuggestBuild>,
    /// The struct in the suggested order on the first build, as `layout
    /// --plan` prints it: C with the debug info's type names (JSON
    /// carries its text).
    #[serde(skip)]
    pub c: Option<LayoutReport>,
    /// With `--diagram`: the first build's diagram of the struct, compiled
    /// against suggested, as `diagram --plan P BUILD TYPE --compare BUILD`
    /// draws it (JSON carries its text: `diagram` has no JSON).
    #[serde(skip)]
    pub diagram: Option<DiagramReport>,
    /// With `--asserts`: the check function of the suggested layout on the
    /// first build, as `asserts --plan P BUILD TYPE` writes it.
    pub asserts: Option<AssertsReport>,
    /// When the suggestion leaves findings: orders single builds like
    /// better (each build climbed alone from the suggestion), and what
    /// they give on every build.
    pub alone: Vec<AloneOrder>,
    /// Notes.
    pub notes: Vec<String>,
    /// Packing only (no rules): the objective is the struct's size, then
    /// the members moved. In JSON only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub packing: bool,
}

/// How `suggest` searched the orders of a struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "method", rename_all = "kebab-case")]
pub enum Method {
    /// Every order of the members (a struct of at most 7 units and no
    /// kernel group markers): the best order there is.
    Exhaustive,
    /// A hill climb from the best seed: each round every move of one to
    /// three members, every swap of two and the lockless writers'
    /// group; with rules, a second climb ranks growth right after errors.
    Climb,
    /// The climb of a struct too large for a full one: moves of the
    /// members the rules class (and, from a context order, moves inside
    /// its groups), the first batch that improves taken, within the
    /// report's `budget`.
    GroupClimb {
        /// Candidates scored together.
        batch: usize,
    },
    /// No climb: the compiled order compared with the seeds (a context
    /// order, or the packing orders).
    Compared,
}

/// How far a suggestion is from the bounds of its objectives: no finding
/// pair, each context in the fewest lines its bytes fit in (all zero: no
/// order does better on them), and its growth (not a bound: an order may
/// also shrink the roots).
#[derive(Clone, Debug, Serialize)]
pub struct Gap {
    /// Error pairs left, over the builds (bound 0).
    pub errors: usize,
    /// Warning pairs left (bound 0).
    pub warnings: usize,
    /// Note pairs left (bound 0).
    pub notes: usize,
    /// Worst growth of the struct or a root, in lines (0 when none grows).
    pub growth_lines: i64,
    /// Lines the contexts touch beyond their optimum, summed over
    /// contexts and builds (bound 0).
    pub footprint_lines: u64,
}

/// `suggest` of several types: a report per type, in the order given, or
/// the type and why it was refused.
pub struct SuggestReports {
    /// Per type.
    pub reports: Vec<Result<SuggestReport, (String, String)>>,
}

/// An order one build likes better than the suggestion for all.
#[derive(Clone, Debug, Serialize)]
pub struct AloneOrder {
    /// The build it was found on.
    pub config: String,
    /// The order (group members as `G: a, b`).
    pub order: Vec<String>,
    /// Its plan file text.
    pub plan: String,
    /// Per build: what this order gives, against the suggestion.
    pub builds: Vec<AloneBuild>,
    /// Where the struct sits in each build: per root, its offset in the
    /// root (the first instance), which decides what lines its members
    /// land on.
    pub offsets: Vec<Placement>,
}

/// One build under an [`AloneOrder`].
#[derive(Clone, Debug, Serialize)]
pub struct AloneBuild {
    /// Config label.
    pub config: String,
    /// Error pairs: the suggestion's, this order's.
    pub errors: [usize; 2],
    /// Warning pairs: the suggestion's, this order's.
    pub warnings: [usize; 2],
    /// Note pairs: the suggestion's, this order's.
    pub notes: [usize; 2],
    /// Worst growth of a root in lines: the suggestion's, this order's.
    pub growth_lines: [i64; 2],
}

/// The struct's offset in a root, in one build.
#[derive(Clone, Debug, Serialize)]
pub struct Placement {
    /// Config label.
    pub config: String,
    /// The root.
    pub root: String,
    /// Byte offset of the struct in it.
    pub offset: u64,
    /// That offset modulo the line size.
    pub in_line: u64,
}

/// A member in some builds only.
#[derive(Clone, Debug, Serialize)]
pub struct PerConfig {
    /// The unit's name (as the order names it).
    pub member: String,
    /// The config labels of the builds that have it.
    pub configs: Vec<String>,
}

/// One build, as compiled and as suggested.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SuggestBuild {
    /// Config label.
    pub config: String,
    /// Errors over the roots: compiled, suggested.
    pub errors: [usize; 2],
    /// Warnings: compiled, suggested.
    pub warnings: [usize; 2],
    /// Notes (write-vs-write, adjacent lines): compiled, suggested.
    pub notes: [usize; 2],
    /// With `--perf`: perf's samples on the two fields of every pair,
    /// summed: compiled, suggested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples: Option<[u64; 2]>,
    /// The struct's size, then each root's: compiled and suggested.
    pub sizes: Vec<Size>,
    /// With context rules, the struct's footprint per context: name, lines
    /// touched as compiled and as suggested, and the optimum.
    pub footprint: Vec<(String, usize, usize, u64)>,
    /// Packing only: the least size any order could give, its members'
    /// bytes and bits with no hole, rounded up to its alignment (a lower
    /// bound: a suggestion of this size is the smallest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub least: Option<u64>,
}

/// The size of the struct or of one root in one build, compiled and
/// suggested.
#[derive(Clone, Debug, Serialize)]
pub struct Size {
    /// The struct's name.
    #[serde(rename = "type")]
    pub ty: String,
    /// `struct` for the struct reordered, `root` for a struct embedding it.
    pub role: Role,
    /// Bytes: compiled, suggested.
    pub bytes: [u64; 2],
    /// Cachelines (of the build's line size) the bytes take: compiled,
    /// suggested.
    pub lines: [u64; 2],
    /// Suggested minus compiled.
    pub growth: Growth,
}

/// What a [`Size`] row is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The struct reordered.
    Struct,
    /// A struct that embeds it.
    Root,
}

/// A size change.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Growth {
    /// In bytes.
    pub bytes: i64,
    /// In cachelines.
    pub lines: i64,
}
