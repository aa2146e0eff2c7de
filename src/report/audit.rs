//! `audit`'s result: the false sharing of the structs a tree writes from
//! many CPUs and the needless stores of its code, each ranked, as plain
//! data.

use serde::Serialize;

use crate::analysis::needless::Finding;
use crate::evidence::source::Store;

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
    /// The false-sharing pairs of the structs many CPUs write: each
    /// struct's worst pair, with how many more it has, the structs most
    /// worth a patch first (at most `--top`).
    pub layout: Vec<LayoutFinding>,
    /// Pairs found in every struct, before `--top`.
    pub layout_total: usize,
    /// Structs drafted and checked: those the tree writes from many CPUs
    /// that the build has.
    pub structs: usize,
    /// Structs holding one of those by value, drafted with it and checked
    /// for their pairs across the two.
    pub holders: usize,
    /// The drafted rules of each struct with a pair, as `check --rules`
    /// reads them: (struct, file text), written by `--rules-out`.
    #[serde(skip)]
    pub rules: Vec<(String, String)>,
    /// Notes.
    pub notes: Vec<String>,
    /// Seconds the run took.
    pub seconds: f64,
}

/// One pair of members sharing a line, as `check` reports it under the
/// struct's drafted rules.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LayoutFinding {
    /// Its rank, from 1.
    pub rank: usize,
    /// `check`'s kind (`false-sharing`, `lock-contention`, ...).
    pub kind: String,
    /// `error` or `warning`, as `check` gives it.
    pub severity: String,
    /// The struct (as `check`'s `root`).
    pub root: String,
    /// The two members, as paths in `root`: the writer (or lock) first.
    pub members: Vec<String>,
    /// Their drafted classes, in the same order.
    pub classes: Vec<String>,
    /// The builds the pair shares a line in.
    pub configs: Vec<String>,
    /// Where the first member is declared, relative to the tree (empty
    /// when the index does not say).
    pub file: String,
    /// Its line (1-based; 0 when unknown).
    pub line: usize,
    /// The message, one line.
    pub message: String,
    /// How hot the pair is: the geometric mean of its members' drafted
    /// heats (0 when either has none).
    pub heat: u64,
    /// The rank's score (higher: more worth a patch).
    pub score: u64,
    /// The pairs the struct has in all, this one included.
    pub pairs: usize,
    /// The next of them, most worth a patch first (at most ten):
    /// `a / b (kind)`.
    pub others: Vec<String>,
    /// The fast-path lockless stores to the struct the tree makes.
    pub stores: usize,
    /// For a struct holding a contended one by value, the one it holds
    /// (the stores are to it, the pair across the two).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holds: Option<String>,
    /// The evidence of each member's class, the first few lines.
    pub evidence: Vec<String>,
    /// The drafted rules file that reproduces it in `check`, `diagram`
    /// and `suggest` (with `--rules-out`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules_file: Option<String>,
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
    /// With `--perf`: perf's samples on the members stored to, which rank
    /// before the score.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples: Option<f64>,
}

impl StoreFinding {
    /// Needless store `f` as a report says it, ranked `rank`.
    pub(crate) fn new(rank: usize, f: &Finding<'_>) -> StoreFinding {
        let d = f.at;
        let s = f.store;
        let function = d.function.clone().unwrap_or_default();
        let member = format!("{}.{}", d.ty, d.path);
        let message = match s.kind {
            Store::Constant => format!(
                "{function}() stores {} to {member} ({}) without testing it first; \
             when it usually holds that value already, test it and skip the store",
                s.value, s.how
            ),
            Store::Copy => format!(
                "{function}() copies {} to {member} ({}) without testing it first; \
             when it is usually the same, test it and skip the store",
                s.value, s.how
            ),
            Store::Exchange if s.how == "set_mask_bits" => format!(
                "{function}() writes {member} with set_mask_bits(), a compare-and-exchange \
             loop that stores even when the bits already match; test them first"
            ),
            Store::Exchange => format!(
                "{function}() writes {member} with {}() even when {} equals the value read; \
             leave the loop when nothing changes",
                s.how, s.value
            ),
            Store::Bit => format!(
                "{function}() {} bit {} of {member} ({}) without testing it first; \
             when it usually is already, test_bit() first",
                match s.how.contains("clear") {
                    true => "clears",
                    false => "sets",
                },
                s.value,
                s.how
            ),
        };
        StoreFinding {
            rank,
            kind: "needless-store".into(),
            store: format!("{:?}", s.kind).to_lowercase(),
            severity: "warning".into(),
            root: d.ty.clone(),
            members: vec![d.path.clone()],
            file: d.file.display().to_string(),
            line: d.line,
            function,
            how: s.how.clone(),
            value: s.value.clone(),
            message,
            entry: d.entry.clone().unwrap_or_default(),
            hot_path: s.path.clone(),
            sharers: f.sharers.iter().map(|s| s.to_string()).collect(),
            shared_by: f.shared_by.clone(),
            score: f.score,
            samples: None,
        }
    }
}
