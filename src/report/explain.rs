//! `--explain FIELD`'s result: for each line the field occupies, every
//! annotated neighbour and the verdict on the pair, as plain data.

use serde::{Deserialize, Serialize};

use crate::analysis::Analysis;
use crate::analysis::explain::LineExplained;
use crate::rules::{Kind, Severity};

/// One line of the field explained.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ExplainedLine {
    /// Config label.
    pub config: String,
    /// The root whose lines are counted.
    pub root: String,
    /// The field's path from the root.
    pub field: String,
    /// The line.
    pub line: u64,
    /// Its first and last byte from the root's start.
    pub bytes: [u64; 2],
    /// Every annotated neighbour on the line.
    pub neighbours: Vec<Neighbour>,
}

/// One neighbour and the verdict.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Neighbour {
    /// Its path from the root.
    pub path: String,
    /// Its class.
    pub class: String,
    /// Its contexts, for a context rule.
    pub contexts: Option<String>,
    /// Its first and last byte.
    pub bytes: [u64; 2],
    /// The kind, when flagged.
    pub kind: Option<Kind>,
    /// The severity, when flagged (and not turned off).
    pub severity: Option<Severity>,
    /// Why.
    pub reason: String,
}

impl ExplainedLine {
    /// The report of one explained line of `a` in build `config`.
    pub fn new(config: &str, a: &Analysis, e: &LineExplained) -> Self {
        let spans = &a.annotated.spans;
        ExplainedLine {
            config: config.to_owned(),
            root: a.root.clone(),
            field: spans[e.span].path.clone(),
            line: e.line,
            bytes: [e.bytes.0, e.bytes.1],
            neighbours: e
                .neighbours
                .iter()
                .map(|v| {
                    let s = &spans[v.span];
                    Neighbour {
                        path: s.path.clone(),
                        class: s.class.map(|c| c.name().to_owned()).unwrap_or_default(),
                        contexts: s.access.as_ref().map(|acc| acc.describe()),
                        bytes: [s.offset, s.end().saturating_sub(1)],
                        kind: v.kind,
                        severity: v.severity,
                        reason: v.reason.clone(),
                    }
                })
                .collect(),
        }
    }
}
