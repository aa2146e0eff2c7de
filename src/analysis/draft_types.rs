//! A draft as data: the rule drafted for each member with the evidence
//! that backs it, the contexts and placements the rules use, and the
//! report of a whole draft. [`super::draft`] and [`super::draft_report`]
//! make them; `report::draft` hands them to the renderers.

use serde::Serialize;

/// How a piece of evidence was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mark {
    /// Said by the source (an annotation, a lock held around a write, an
    /// atomic operation on the member).
    Declared,
    /// Measured by perf (samples, loads and stores).
    Measured,
    /// Read off the member's type (a lock type, an atomic).
    Inferred,
}

impl Mark {
    /// Its name: `declared`, `measured`, `inferred`.
    pub fn name(self) -> &'static str {
        match self {
            Mark::Declared => "declared",
            Mark::Measured => "measured",
            Mark::Inferred => "inferred",
        }
    }
}

/// One piece of evidence about a member.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// How it was obtained.
    pub mark: Mark,
    /// What it says, with where (file:line and function, samples, type).
    pub text: String,
}

/// The rule drafted for a member.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "rule")]
pub enum DraftRule {
    /// A class without a lock: `hot-read`, `lockless-write`, `lock`.
    Class {
        /// The class name.
        class: String,
    },
    /// `lock-protected` by a lock of the struct or an enclosing one.
    LockProtected {
        /// The lock: `lock`, or `TYPE.member`.
        lock: String,
    },
    /// A context rule: the contexts reading and writing it.
    Contexts {
        /// Contexts that only read it.
        read: Vec<String>,
        /// Contexts that write it.
        write: Vec<String>,
    },
}

impl DraftRule {
    /// Its TOML value, as a rules file writes it: `"hot-read"`,
    /// `{ class = "lock-protected", lock = "lock" }`,
    /// `{ read = ["a"], write = ["b"] }`.
    pub fn toml(&self) -> String {
        let list = |v: &[String]| {
            let quoted: Vec<String> = v.iter().map(|c| format!("\"{c}\"")).collect();
            format!("[{}]", quoted.join(", "))
        };
        match self {
            DraftRule::Class { class } => format!("\"{class}\""),
            DraftRule::LockProtected { lock } => {
                format!("{{ class = \"lock-protected\", lock = \"{lock}\" }}")
            }
            DraftRule::Contexts { read, write } => match (read.is_empty(), write.is_empty()) {
                (false, false) => format!("{{ read = {}, write = {} }}", list(read), list(write)),
                (true, _) => format!("{{ write = {} }}", list(write)),
                (false, true) => format!("{{ read = {} }}", list(read)),
            },
        }
    }
}

/// One member of a drafted struct.
#[derive(Clone, Debug, Serialize)]
pub struct DraftField {
    /// Its path in the struct (a direct member).
    pub path: String,
    /// The rule, when some evidence gives one.
    pub rule: Option<DraftRule>,
    /// The kind of evidence the rule rests on.
    pub mark: Option<Mark>,
    /// Everything found about it, strongest first.
    pub evidence: Vec<Evidence>,
    /// Evidence that disagrees with the rule, not resolved.
    pub conflicts: Vec<String>,
    /// How hot it is (see `[heat]` in the rules), when anything says.
    pub heat: Option<u64>,
    /// How hot its fast-path stores are (the heat of the functions
    /// storing to it), when any does.
    pub write_heat: Option<u64>,
}

/// A drafted struct.
#[derive(Clone, Debug, Serialize)]
pub struct DraftType {
    /// Its name, as a rules table names it.
    pub name: String,
    /// Its members, in order.
    pub fields: Vec<DraftField>,
}

/// A context the draft declares: a function that writes members with
/// plain stores.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DraftContext {
    /// Its name (the function's, or the lock's holders').
    pub name: String,
    /// `serialized`.
    pub writers: String,
    /// Why it is one.
    pub why: String,
}

/// Where a drafted struct's objects start, with the sites that say so.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DraftPlacement {
    /// The struct.
    pub ty: String,
    /// The `[placement]` rule: every object starts at a multiple of this
    /// many bytes from a line boundary, the line size meaning "on a line";
    /// `None` when the sites give no more than the struct's alignment.
    pub start: Option<u64>,
    /// The line size it was drafted for.
    pub cacheline: u64,
    /// The struct's own alignment.
    pub alignment: u64,
    /// Each site and embedding, `file:line: what it gives`.
    pub evidence: Vec<String>,
    /// Some site makes objects of it on their own, not only inside a
    /// struct the build holds: it gets a rule even at its alignment, so
    /// that `check` counts lines from it as a root.
    pub alone: bool,
}

/// `cachelint draft`: a rules file with its evidence.
#[derive(Clone, Debug, Serialize)]
pub struct DraftReport {
    /// What was read: the builds, the perf outputs (with their event and
    /// how far to trust it), the source tree.
    pub read: Vec<String>,
    /// Contexts the rules use.
    pub contexts: Vec<DraftContext>,
    /// The drafted structs, then the enclosing structs whose locks they
    /// name.
    pub types: Vec<DraftType>,
    /// Where the drafted structs' objects start, for those the source
    /// says anything of.
    pub placements: Vec<DraftPlacement>,
    /// Notes: samples that do not fit the layout, members absent in some
    /// builds.
    pub notes: Vec<String>,
}
