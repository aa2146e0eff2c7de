//! `suggest`'s result, as plain data.

use serde::Serialize;

/// A whole `suggest` run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SuggestReport {
    /// The struct searched.
    pub name: String,
    /// Members (units: an anonymous struct or a bitfield run counts once)
    /// ordered.
    pub members: usize,
    /// Layouts tried.
    pub tried: usize,
    /// Rounds of the climb; 0 when the struct had too many members to
    /// climb, and the compiled order was compared with a context order.
    pub rounds: usize,
    /// The suggested member order (group members as `G: a, b`).
    pub order: Vec<String>,
    /// Units moved from the compiled order (and removed).
    pub moved: usize,
    /// Old group markers the suggestion removes.
    pub removed: Vec<String>,
    /// The plan file of the suggestion.
    pub plan: String,
    /// Where `--plan-out` wrote it.
    pub plan_out: Option<String>,
    /// With `--source-tree`: the header patch, a unified diff.
    pub patch: Option<String>,
    /// Per build.
    pub builds: Vec<SuggestBuild>,
    /// Notes.
    pub notes: Vec<String>,
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
    /// Per root: name, compiled size, suggested size.
    pub roots: Vec<(String, u64, u64)>,
    /// With context rules, the struct's footprint per context: name, lines
    /// touched as compiled and as suggested, and the optimum.
    pub footprint: Vec<(String, usize, usize, u64)>,
}
