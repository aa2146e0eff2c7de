//! The result of a `check` run as plain data: what the renderers print
//! (text diagnostics, JSON, SARIF) and what `--baseline` reads back from a
//! saved JSON report. Findings here are self-contained: paths, classes,
//! offsets and source lines, no references into the type model.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::analysis::{Analysis, Finding, Origin, Side};
use crate::rules::{Kind, Severity};
pub use elements::Elements;

pub mod asserts;
pub mod audit;
pub mod cross_line;
pub mod diagram;
pub mod diff;
pub mod draft;
pub(crate) mod elements;
pub mod explain;
pub mod footprint;
pub mod layout;
pub mod offsets;
pub mod review;
mod rules_file;
pub(crate) mod stands_for;
pub mod suggest;

/// `check`'s result: the report and its verdict under `--fail-on`.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The report (also what `--format json` writes).
    pub report: Report,
    /// True when a finding is at or above `--fail-on` (exit code 1).
    pub failed: bool,
}

/// Version of the JSON report; bumped when a key changes meaning (2: the
/// summary counts diagnostics, not pairs).
pub const REPORT_VERSION: u32 = 2;

/// A whole run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Report {
    /// [`REPORT_VERSION`].
    pub version: u32,
    /// The builds checked.
    pub builds: Vec<BuildInfo>,
    /// Findings to act on (not allowed, not in the baseline), worst first:
    /// by severity, then in the order of the builds given, of the roots
    /// analysed, and by line, first field, kind and second field.
    pub findings: Vec<ReportFinding>,
    /// Findings silenced by `[[allow]]`, with their reasons.
    pub allowed: Vec<ReportFinding>,
    /// Notes: absent types per config, suggestions, locks outside roots.
    pub notes: Vec<String>,
    /// `--explain FIELD`: every line of the field, its neighbours and the
    /// verdicts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub explained: Vec<explain::ExplainedLine>,
    /// Counts.
    pub summary: Summary,
}

/// One build (config) checked.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct BuildInfo {
    /// The config label (`rt` in `rt=vmlinux-rt`, else the file name).
    pub config: String,
    /// The file.
    pub file: String,
    /// Line size used.
    pub cacheline: u64,
    /// Roots analysed.
    pub roots: Vec<RootInfo>,
}

/// A root struct of a build.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RootInfo {
    /// Its name.
    pub name: String,
    /// Size in bytes.
    pub size: u64,
    /// Alignment in bytes.
    pub alignment: u64,
    /// Annotated fields in it.
    pub annotated_fields: usize,
}

/// Counts of a run, of what is printed: a diagnostic tells one field
/// against every field of one class it shares a line with
/// ([`diagnostics`]), so it stands for one pair of fields or several.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Summary {
    /// Diagnostics of severity error.
    pub errors: usize,
    /// Of severity warning.
    pub warnings: usize,
    /// Of severity note.
    pub notes: usize,
    /// Informational messages on the rules and builds (printed as
    /// `note:` on stderr, hidden by `--quiet`): not findings, so counted
    /// apart.
    #[serde(default)]
    pub messages: usize,
    /// Pairs of fields behind the diagnostics: the findings.
    #[serde(default)]
    pub pairs: usize,
    /// Pairs silenced by `[[allow]]`.
    pub allowed: usize,
    /// Pairs left out because the baseline has them.
    pub in_baseline: usize,
}

/// One finding.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ReportFinding {
    /// Config label of the build.
    pub config: String,
    /// Root struct whose lines are counted.
    pub root: String,
    /// The kind (`false-sharing`, ...).
    pub kind: Kind,
    /// `error`, `warning` or `note`.
    pub severity: Severity,
    /// What goes wrong, in words.
    pub description: String,
    /// The cacheline shown, counted from the root's start.
    pub cacheline: u64,
    /// First and last byte of that line, from the root's start.
    pub cacheline_bytes: [u64; 2],
    /// Every line the pair shares.
    pub cachelines: Vec<u64>,
    /// For roots not aligned to a line: where the root starts in its line
    /// for the lines shown, and in how many placements the pair shares.
    pub placement: Option<Placement>,
    /// The more disruptive side (writer or lock).
    pub a: ReportSide,
    /// The other side.
    pub b: ReportSide,
    /// The `[[allow]]` reason, when silenced.
    pub allowed: Option<String>,
    /// The elements of an array of structs this finding is repeated in,
    /// told once (its paths then name the range: `node_zones[0..4].lock`).
    #[serde(default)]
    pub elements: Option<Elements>,
    /// For a pair of a context rule: the contexts writing the first side,
    /// and those using the line through the second only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meeting: Option<ReportMeeting>,
    /// How hot the pair is, from the rules' `[heat]`: findings of one
    /// severity come hottest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heat: Option<u64>,
}

/// The contexts of a context rule's pair.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ReportMeeting {
    /// The contexts writing the first side.
    pub writes_in: Vec<String>,
    /// The contexts using the line through the second side only.
    pub others: Vec<String>,
}

/// A finding as `--baseline` matches it, in any config.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PairKey {
    /// Root struct.
    pub root: String,
    /// The kind.
    pub kind: Kind,
    /// Path of the first field.
    pub a: String,
    /// Its class.
    pub a_class: String,
    /// Path of the second field.
    pub b: String,
    /// Its class.
    pub b_class: String,
}

/// A finding as `--baseline` matches it in one config.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Identity {
    /// Config label.
    pub config: String,
    /// The pair.
    pub pair: PairKey,
}

/// Placement of an unaligned root.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Placement {
    /// Offset of the root from the start of its first line, for the lines shown.
    pub root_offset: u64,
    /// Placements in which the pair shares a line.
    pub sharing: usize,
    /// Placements tried (line size / alignment).
    pub of: usize,
}

/// One side of a finding.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ReportSide {
    /// The member's own name (`refaulted`).
    pub name: String,
    /// Full path from the root (`lruvec.lrugen.refaulted`).
    pub path: String,
    /// The path with the elements on the line shown (`...refaulted[0][1][*]`).
    pub part: String,
    /// Class name.
    pub class: String,
    /// Lock identity (for lock-protected fields and locks).
    pub lock: Option<String>,
    /// Offset of the whole member from the root's start.
    pub offset: u64,
    /// Its size.
    pub size: u64,
    /// First and last byte of it on the line shown.
    pub bytes: [u64; 2],
    /// Source file of the member's declaration.
    pub decl_file: Option<String>,
    /// Source line of the member's declaration.
    pub decl_line: Option<u64>,
    /// Kernel cacheline group it sits in.
    pub group: Option<String>,
    /// The contexts that use it, for a context rule (`tx: write, rx: read`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contexts: Option<String>,
    /// Why it has its class: the rule (`FILE:LINE:COL` in the rules file),
    /// a kernel lock type, being named as a lock, or an enclosing member's rule.
    #[serde(default)]
    pub why: String,
    /// perf's samples on its bytes (`--perf`), as perf counted them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<u64>,
}

impl ReportFinding {
    /// Builds the finding `f` of analysis `a` in build `config`.
    pub fn new(config: &str, a: &Analysis, f: &Finding) -> Self {
        let side = |s: &Side| {
            let span = a.span(s);
            ReportSide {
                name: span.name().to_owned(),
                path: span.path.clone(),
                part: s.part.clone(),
                class: span.class.map(|c| c.name().to_owned()).unwrap_or_default(),
                lock: span.lock.clone(),
                offset: span.offset,
                size: span.size,
                bytes: [s.bytes.0, s.bytes.1],
                decl_file: span.decl.as_ref().map(|d| d.file.clone()),
                decl_line: span.decl.as_ref().map(|d| d.line),
                group: span.group.clone(),
                contexts: span.access.as_ref().map(|a| a.describe()),
                why: why(&span.origin),
                samples: None,
            }
        };
        ReportFinding {
            config: config.to_owned(),
            root: a.root.clone(),
            kind: f.kind,
            severity: f.severity,
            description: description(a, f),
            cacheline: f.line,
            cacheline_bytes: [f.line_bytes.0, f.line_bytes.1],
            cachelines: f.lines.clone(),
            placement: (f.placements > 1).then_some(Placement {
                root_offset: f.placement,
                sharing: f.sharing_placements,
                of: f.placements,
            }),
            a: side(&f.a),
            b: side(&f.b),
            allowed: f.allowed.clone(),
            elements: None,
            meeting: f.meeting.as_ref().map(|m| ReportMeeting {
                writes_in: m.writes_in.clone(),
                others: m.others.clone(),
            }),
            heat: f.heat,
        }
    }

    /// True when `other` differs from this finding only in its second
    /// field: both are told in one diagnostic.
    fn same_diagnostic(&self, other: &ReportFinding) -> bool {
        // Cross-context sharing is told once per line ([`cross_line`]).
        if self.kind == Kind::CrossContext && other.kind == Kind::CrossContext {
            let key = |f: &ReportFinding| {
                (
                    f.config.clone(),
                    f.root.clone(),
                    f.severity,
                    f.cacheline,
                    f.allowed.clone(),
                )
            };
            return key(self) == key(other);
        }
        let key = |f: &ReportFinding| {
            (
                f.config.clone(),
                f.root.clone(),
                f.kind,
                f.severity,
                f.a.part.clone(),
                f.cacheline,
                f.b.class.clone(),
                f.allowed.clone(),
                f.description.clone(),
            )
        };
        key(self) == key(other)
    }

    /// What `--baseline` matches on: config, root, kind, both fields and
    /// their classes; never offsets or lines, which a patch moves.
    pub fn identity(&self) -> Identity {
        Identity {
            config: self.config.clone(),
            pair: PairKey {
                root: self.root.clone(),
                kind: self.kind,
                a: self.a.path.clone(),
                a_class: self.a.class.clone(),
                b: self.b.path.clone(),
                b_class: self.b.class.clone(),
            },
        }
    }
}

/// What goes wrong, in words; for a pair with a context rule, which
/// contexts meet on the line and who writes.
fn description(a: &Analysis, f: &Finding) -> String {
    let kind = f.kind.description();
    let Some(m) = &f.meeting else {
        return kind.to_owned();
    };
    let writer = a.span(&f.a).name();
    format!(
        "{kind}: {} {} {writer} ({}); {} {} the line and not {writer}",
        m.writes_in.join(" and "),
        agreeing(&m.writes_in, "writes", "write"),
        m.writers.words(),
        m.others.join(" and "),
        agreeing(&m.others, "uses", "use"),
    )
}

/// The verb for `names` as its subject: singular for one context (`tx
/// writes`), plural for several or for a group (`the holders of L use`).
fn agreeing<'v>(names: &[String], singular: &'v str, plural: &'v str) -> &'v str {
    match names {
        [one] if !one.starts_with("the ") => singular,
        _ => plural,
    }
}

/// Words for a span's [`Origin`].
fn why(origin: &Origin) -> String {
    match origin {
        Origin::Rule { ty, at } => format!("rule of {ty} at {at}"),
        Origin::Inherited { from } => format!("inherited from the rule on {from}"),
        Origin::LockType(name) => format!("a {name} is a lock"),
        Origin::NamedLock => "named as the lock of a lock-protected field".into(),
        Origin::None => "no rule".into(),
    }
}

impl Summary {
    /// Counts the diagnostics of `findings`, the `messages` on the rules
    /// and builds, and the pairs allowed and in the baseline.
    pub fn count(
        findings: &[ReportFinding],
        messages: usize,
        allowed: usize,
        in_baseline: usize,
    ) -> Self {
        let of = |s: Severity| diagnostics(findings).filter(|g| g[0].severity == s).count();
        Summary {
            errors: of(Severity::Error),
            warnings: of(Severity::Warning),
            notes: of(Severity::Note),
            messages,
            pairs: findings.len(),
            allowed,
            in_baseline,
        }
    }
}

/// The findings told as one diagnostic each: runs of findings that differ
/// only in their second field (`refaulted` with `enabled`, `gen`, `seg`
/// and `list` on one line), and the cross-context findings of one line
/// (which `check` gathers next to each other).
pub fn diagnostics(findings: &[ReportFinding]) -> impl Iterator<Item = &[ReportFinding]> {
    findings.chunk_by(ReportFinding::same_diagnostic)
}

/// `notes` with each note once, in first-seen order: how every report
/// lists the notes of several builds, types and operations. A note that
/// several builds give alike (`[before] x`, `[after] x`) is told once with
/// their labels (`[before, after] x`).
pub(crate) fn unique_notes(notes: Vec<String>) -> Vec<String> {
    // The note's text without its build tag, and the tag.
    fn split(note: &str) -> (Option<&str>, &str) {
        note.strip_prefix('[')
            .and_then(|rest| rest.split_once("] "))
            .filter(|(label, _)| !label.is_empty() && !label.contains(['[', ']']))
            .map_or((None, note), |(label, text)| (Some(label), text))
    }
    let mut order: Vec<(&str, Vec<&str>)> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    let mut plain = std::collections::HashSet::new();
    for note in &notes {
        match split(note) {
            (Some(label), text) => {
                let i = *at.entry(text).or_insert_with(|| {
                    order.push((text, Vec::new()));
                    order.len() - 1
                });
                if !order[i].1.contains(&label) {
                    order[i].1.push(label);
                }
            }
            (None, text) => {
                if plain.insert(text) {
                    order.push((text, Vec::new()));
                }
            }
        }
    }
    order
        .into_iter()
        .map(|(text, labels)| match labels.is_empty() {
            true => text.to_owned(),
            false => format!("[{}] {text}", labels.join(", ")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{agreeing, unique_notes};

    #[test]
    fn a_group_of_holders_or_users_takes_a_plural_verb() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(agreeing(&names(&["tx"]), "writes", "write"), "writes");
        assert_eq!(agreeing(&names(&["tx", "rx"]), "uses", "use"), "use");
        assert_eq!(
            agreeing(&names(&["the holders of sem"]), "uses", "use"),
            "use"
        );
    }

    #[test]
    fn a_note_of_several_builds_is_told_once_with_their_labels() {
        let notes = [
            "[before] 'lruvec.x' (atomic_long_t) has no rule",
            "no label",
            "[after] 'lruvec.x' (atomic_long_t) has no rule",
            "[after] only after",
            "no label",
            "[before] 'lruvec.x' (atomic_long_t) has no rule",
            "[a]b] not a label",
        ];
        assert_eq!(
            unique_notes(notes.iter().map(|n| n.to_string()).collect()),
            [
                "[before, after] 'lruvec.x' (atomic_long_t) has no rule",
                "no label",
                "[after] only after",
                "[a]b] not a label",
            ]
        );
    }
}
