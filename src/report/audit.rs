//! `audit`'s result: the needless stores of a tree, ranked, as plain data.

use serde::Serialize;

/// A whole `audit` run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AuditReport {
    /// What was read: the build, the tree, the index.
    pub read: Vec<String>,
    /// The findings, most worth a patch first (at most `--top`).
    pub findings: Vec<StoreFinding>,
    /// Needless stores found before `--top`.
    pub total: usize,
    /// Candidates the source reader saw, before the hot-path and sharing
    /// tests.
    pub candidates: usize,
    /// Notes.
    pub notes: Vec<String>,
    /// Seconds the run took.
    pub seconds: f64,
}

/// One needless store.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StoreFinding {
    /// Its rank, from 1.
    pub rank: usize,
    /// What kind of finding: `needless-store`.
    pub kind: String,
    /// What kind of store: `constant`, `exchange`, `copy`, `bit`.
    pub store: String,
    /// `warning`.
    pub severity: String,
    /// The struct stored to (as `check`'s `root`).
    pub root: String,
    /// The members stored to, as paths in `root`.
    pub members: Vec<String>,
    /// The file, relative to the tree.
    pub file: String,
    /// Its line (1-based).
    pub line: usize,
    /// The storing function.
    pub function: String,
    /// The operator or call that stores (`WRITE_ONCE`, `try_cmpxchg`).
    pub how: String,
    /// The value stored, as written.
    pub value: String,
    /// The message, one line.
    pub message: String,
    /// Why it is hot: the entry point, in words.
    pub entry: String,
    /// The calls from the entry point down to the function.
    pub hot_path: Vec<String>,
    /// The other functions that touch the member on a fast path.
    pub sharers: Vec<String>,
    /// The accesses that say other CPUs touch it at the same time.
    pub shared_by: Vec<String>,
    /// The rank's score (higher: more worth a patch).
    pub score: u64,
}
