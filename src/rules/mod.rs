//! Rules: how the fields of each struct type are used. Parsed from a TOML
//! rules file ([`toml`]) or from the kernel's own
//! `Documentation/networking/net_cachelines/*.rst` tables ([`rst`]), into
//! one model that the analysis reads. Every rule keeps the place in its
//! file it came from, so that a rule that does not fit the binary can be
//! reported as `FILE:LINE:COL: ...`.

pub(crate) mod rst;
pub(crate) mod toml;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};

/// How a field is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Read on hot paths by many CPUs, rarely written.
    HotRead,
    /// Written on hot paths without a lock (atomics, counters, WRITE_ONCE).
    LocklessWrite,
    /// Read and written under a lock.
    LockProtected,
    /// A lock word: every acquirer writes it.
    Lock,
    /// Explicitly not hot; never flagged.
    Cold,
    /// Written in a context whose writers are one CPU at a time (the
    /// owner of the object, or a lock holder): how a context rule's field
    /// is shown. Not a shorthand of its own: see `Access`.
    OwnerWrite,
}

impl Class {
    /// The classes a rules file may write as shorthands, in the order it
    /// documents them.
    pub const SHORTHANDS: [Class; 5] = [
        Class::HotRead,
        Class::LocklessWrite,
        Class::LockProtected,
        Class::Lock,
        Class::Cold,
    ];

    /// Every class a field can be shown with: the shorthands, then the
    /// class of a context rule's owner-written field.
    pub const ALL: [Class; 6] = [
        Class::HotRead,
        Class::LocklessWrite,
        Class::LockProtected,
        Class::Lock,
        Class::Cold,
        Class::OwnerWrite,
    ];

    /// The name used in rules files and output.
    pub fn name(self) -> &'static str {
        match self {
            Class::HotRead => "hot-read",
            Class::LocklessWrite => "lockless-write",
            Class::LockProtected => "lock-protected",
            Class::Lock => "lock",
            Class::Cold => "cold",
            Class::OwnerWrite => "owner-write",
        }
    }

    /// Parses a shorthand class name.
    pub fn parse(text: &str) -> Option<Class> {
        Class::SHORTHANDS.into_iter().find(|c| c.name() == text)
    }

    /// How disruptive the class is on a shared line, 0 = most (writers
    /// first): a finding names its more disruptive field first, a diagram
    /// character covering several classes shows the most disruptive, and
    /// legends list classes in this order.
    pub fn disruption(self) -> u8 {
        match self {
            Class::LocklessWrite => 0,
            Class::Lock => 1,
            Class::OwnerWrite => 2,
            Class::LockProtected => 3,
            Class::HotRead => 4,
            Class::Cold => 5,
        }
    }

    /// The letter diagrams draw the class with.
    pub fn letter(self) -> char {
        match self {
            Class::HotRead => 'R',
            Class::LocklessWrite => 'W',
            Class::LockProtected => 'P',
            Class::Lock => 'L',
            Class::Cold => 'C',
            Class::OwnerWrite => 'O',
        }
    }

    /// What one field of the class and one of `other` on a line are, when
    /// that is worth flagging; `same_lock` says whether both are the same
    /// lock or under it (for a lockless writer: whether it holds the
    /// other's lock, as a lockref does). `self` is the more disruptive of
    /// the two.
    pub fn pair_kind(self, other: Class, same_lock: bool) -> Option<Kind> {
        use Class::*;
        Some(match (self, other) {
            (LocklessWrite, LocklessWrite) => Kind::WriteVsWrite,
            (LocklessWrite, Lock) if !same_lock => Kind::WriteVsLock,
            (LocklessWrite, LockProtected) if !same_lock => Kind::WriteVsLocked,
            (LocklessWrite, HotRead) => Kind::FalseSharing,
            (Lock, Lock) if !same_lock => Kind::TwoLocks,
            (Lock, LockProtected) if !same_lock => Kind::LockedVsOtherLock,
            (Lock, HotRead) => Kind::ReadVsLock,
            (LockProtected, LockProtected) if !same_lock => Kind::LocksMixed,
            (LockProtected, HotRead) => Kind::ReadVsLocked,
            _ => return None,
        })
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A place in a rules file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    /// The rules file.
    pub file: Arc<Path>,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
}

impl Location {
    /// The location of byte `offset` of `text`, read from `file`.
    pub fn at(file: &Arc<Path>, text: &str, offset: usize) -> Location {
        let offset = offset.min(text.len());
        let before = &text[..text.floor_char_boundary(offset)];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Location {
            file: file.clone(),
            line,
            column: before[line_start..].chars().count() + 1,
        }
    }

    /// An error at this place.
    pub fn error(&self, message: impl Into<String>) -> Error {
        Error::Rules {
            at: self.to_string(),
            message: message.into(),
        }
    }

    /// An error at this place of a variant file.
    pub fn variant_error(&self, message: impl Into<String>) -> Error {
        Error::VariantFile {
            at: self.to_string(),
            message: message.into(),
        }
    }

    /// An error at this place of a plan file.
    pub fn plan_error(&self, message: impl Into<String>) -> Error {
        Error::Plan {
            at: self.to_string(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

/// A lock named by a `lock-protected` rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockRef {
    /// The path as written: `lru_lock` (a member of the same struct) or
    /// `lruvec.lru_lock` (a member of the nearest enclosing `lruvec`).
    pub text: String,
    /// Where it is written.
    pub at: Location,
}

/// Who writes a field in a context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Writers {
    /// One CPU at a time: the owner of the object (the socket's, the
    /// device's) or the holder of a lock.
    Serialized,
    /// Many CPUs at once, without a lock.
    Lockless,
}

impl Writers {
    /// The name used in rules files and output.
    pub fn name(self) -> &'static str {
        match self {
            Writers::Serialized => "serialized",
            Writers::Lockless => "lockless",
        }
    }

    /// Words for output: who the writers are.
    pub fn words(self) -> &'static str {
        match self {
            Writers::Serialized => "one CPU at a time",
            Writers::Lockless => "many CPUs at once",
        }
    }
}

/// A path of execution (`tx`, `rx`, `refault`, `reclaim`), named in
/// `[contexts]` or implied by a net_cachelines table's columns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Context {
    /// Its name.
    pub name: String,
    /// Who writes in it.
    pub writers: Writers,
    /// Where it is declared (or the table that implies it).
    pub at: Location,
    /// True when a net_cachelines table implies it: a declaration in a
    /// rules file then overrides it.
    pub implied: bool,
}

/// Which contexts read a field and which write it: a context rule.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Access {
    /// Contexts that read it (and do not write it).
    pub reads: Vec<String>,
    /// Contexts that write it (and may read it).
    pub writes: Vec<String>,
}

impl Access {
    /// Every context that uses the field, readers first.
    pub fn uses(&self) -> impl Iterator<Item = &str> {
        self.reads.iter().chain(&self.writes).map(String::as_str)
    }

    /// `tx: write, rx: read`, in the order of `contexts`.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self.writes.iter().map(|c| format!("{c}: write")).collect();
        parts.extend(self.reads.iter().map(|c| format!("{c}: read")));
        parts.join(", ")
    }
}

/// One field annotation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldRule {
    /// Dotted member path inside the struct (`refaulted`, `lrugen.max_seq`).
    pub path: String,
    /// Its class: the shorthand written, or for a context rule the class
    /// it is shown with ([`Rules::class_of`]).
    pub class: Class,
    /// The contexts that read and write it, for a context rule.
    pub access: Option<Arc<Access>>,
    /// The protecting lock, for [`Class::LockProtected`].
    pub lock: Option<LockRef>,
    /// Where the rule is written.
    pub at: Location,
    /// Which kind of file it comes from.
    pub source: Source,
    /// The member's names in other releases (`was = ["state"]` on
    /// `__state`): a build that lacks `path` has the rule under the first
    /// of these it has.
    pub was: Vec<String>,
}

/// The kind of file a rule comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A cachelint rules file: every rule must fit some build.
    Rules,
    /// A kernel net_cachelines table: documentation, whose rows may name
    /// macro aliases (`inet_daddr` for `sk.__sk_common.skc_daddr`) that
    /// DWARF does not record; such rows are skipped with a note.
    NetCachelines,
}

/// The rules of one struct type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeRules {
    /// The struct (or union, or typedef) name.
    pub name: String,
    /// Where its table starts.
    pub at: Location,
    /// Field annotations, in file order.
    pub fields: Vec<FieldRule>,
    /// For a net_cachelines table: the member every row names, with or
    /// without an access (a row without one documents the member).
    pub rows: Vec<String>,
    /// Other names of the type, each where it is written (`aliases =
    /// ["lru_gen_struct"]`: `lru_gen_folio` before 6.2): a build that
    /// lacks `name` has the rules under the alias it defines.
    pub aliases: Vec<(String, Location)>,
}

impl TypeRules {
    /// The name, then the aliases: what a build may call the type.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name.as_str()).chain(self.aliases.iter().map(|(a, _)| a.as_str()))
    }
}

/// A member named as `TYPE.path` (in `[[allow]]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldRef {
    /// The struct type.
    pub ty: String,
    /// The dotted member path inside it.
    pub path: String,
    /// Where it is written.
    pub at: Location,
}

impl fmt::Display for FieldRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.ty, self.path)
    }
}

/// An accepted pair: findings between these two fields are reported as allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allow {
    /// The two fields.
    pub fields: [FieldRef; 2],
    /// Why the pair is accepted.
    pub reason: String,
    /// Where the entry is written.
    pub at: Location,
}

/// How serious a finding is.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; fails a check only with `--fail-on note`.
    Note,
    /// Fails a check with `--fail-on warning` (or note).
    Warning,
    /// Fails a check by default.
    Error,
}

impl Severity {
    /// The name used in rules files and output.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What kind of sharing two classes on one line make. Its serialized
/// name is [`Kind::name`].
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// hot-read × lockless-write.
    FalseSharing,
    /// hot-read × lock-protected.
    ReadVsLocked,
    /// hot-read × lock.
    ReadVsLock,
    /// lockless-write × lockless-write.
    WriteVsWrite,
    /// lockless-write × lock-protected.
    WriteVsLocked,
    /// lockless-write × lock.
    WriteVsLock,
    /// lock-protected (X) × lock-protected (Y ≠ X).
    LocksMixed,
    /// lock-protected (X) × lock (Y ≠ X).
    LockedVsOtherLock,
    /// lock × lock.
    TwoLocks,
    /// Written in one context by one CPU at a time, and the line used in
    /// another context that does not touch the written field.
    CrossContext,
    /// Two fields that would be flagged on one line, on the two lines of
    /// one 128-byte aligned pair (the spatial prefetcher pulls both).
    AdjacentLines,
}

impl Kind {
    /// Every kind, in the order of the severity matrix.
    pub const ALL: [Kind; 11] = [
        Kind::FalseSharing,
        Kind::ReadVsLocked,
        Kind::ReadVsLock,
        Kind::WriteVsWrite,
        Kind::WriteVsLocked,
        Kind::WriteVsLock,
        Kind::LocksMixed,
        Kind::LockedVsOtherLock,
        Kind::TwoLocks,
        Kind::CrossContext,
        Kind::AdjacentLines,
    ];

    /// The name used in `[severity]`, JSON and SARIF rule ids.
    pub fn name(self) -> &'static str {
        match self {
            Kind::FalseSharing => "false-sharing",
            Kind::ReadVsLocked => "read-vs-locked",
            Kind::ReadVsLock => "read-vs-lock",
            Kind::WriteVsWrite => "write-vs-write",
            Kind::WriteVsLocked => "write-vs-locked",
            Kind::WriteVsLock => "write-vs-lock",
            Kind::LocksMixed => "locks-mixed",
            Kind::LockedVsOtherLock => "locked-vs-other-lock",
            Kind::TwoLocks => "two-locks",
            Kind::CrossContext => "cross-context",
            Kind::AdjacentLines => "adjacent-lines",
        }
    }

    /// One line on what goes wrong.
    pub fn description(self) -> &'static str {
        match self {
            Kind::FalseSharing => "false sharing: lockless writes invalidate the readers' line",
            Kind::ReadVsLocked => "writes under a lock invalidate the readers' line",
            Kind::ReadVsLock => "every lock acquisition invalidates the readers' line",
            Kind::WriteVsWrite => "two lockless writers bounce one line",
            Kind::WriteVsLocked => "lockless writes steal the line from the lock holder",
            Kind::WriteVsLock => "lockless writes bounce the lock's line",
            Kind::LocksMixed => "data under different locks on one line",
            Kind::LockedVsOtherLock => "data under one lock next to another lock",
            Kind::TwoLocks => "two locks on one line",
            Kind::CrossContext => {
                "writes in one context invalidate the line for another that does not need them"
            }
            Kind::AdjacentLines => {
                "on the two lines of one 128-byte pair, which the spatial prefetcher pulls together"
            }
        }
    }

    /// The two classes that make the kind, more disruptive first, as the
    /// help and docs/rules.md list them (`hot-read x lockless-write`).
    pub fn pair(self) -> String {
        let (a, b) = match self {
            Kind::FalseSharing => ("hot-read", "lockless-write"),
            Kind::ReadVsLocked => ("hot-read", "lock-protected"),
            Kind::ReadVsLock => ("hot-read", "lock"),
            Kind::WriteVsWrite => ("lockless-write", "lockless-write"),
            Kind::WriteVsLocked => ("lockless-write", "lock-protected"),
            Kind::WriteVsLock => ("lockless-write", "lock"),
            Kind::LocksMixed => ("lock-protected X", "lock-protected Y"),
            Kind::LockedVsOtherLock => ("lock-protected X", "lock Y"),
            Kind::TwoLocks => ("lock", "lock"),
            Kind::CrossContext => ("written in context A", "used in context B"),
            Kind::AdjacentLines => ("any flagged pair", "on adjacent lines of a pair"),
        };
        format!("{a} x {b}")
    }

    /// The default severity (the severity matrix of docs/rules.md, "Kinds and severities").
    pub fn default_severity(self) -> Severity {
        match self {
            Kind::FalseSharing | Kind::WriteVsLocked | Kind::WriteVsLock => Severity::Error,
            Kind::WriteVsWrite | Kind::AdjacentLines => Severity::Note,
            _ => Severity::Warning,
        }
    }

    /// Parses a kind name.
    pub fn parse(text: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == text)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Severity per kind: the defaults, changed by `[severity]`; `None` = off.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Severities(Vec<(Kind, Option<Severity>)>);

impl Default for Severities {
    fn default() -> Self {
        Severities(
            Kind::ALL
                .into_iter()
                .map(|k| (k, Some(k.default_severity())))
                .collect(),
        )
    }
}

impl Severities {
    /// The severity of `kind`, `None` when turned off.
    pub fn of(&self, kind: Kind) -> Option<Severity> {
        self.0
            .iter()
            .find(|(k, _)| *k == kind)
            .and_then(|(_, s)| *s)
    }

    /// Changes the severity of `kind`.
    pub fn set(&mut self, kind: Kind, severity: Option<Severity>) {
        if let Some(entry) = self.0.iter_mut().find(|(k, _)| *k == kind) {
            entry.1 = severity;
        }
    }
}

/// A build's names for member rules written under another release's
/// name: (type as the build names it, the rule's path) → the `was` name
/// the build has.
pub type MemberRenames = HashMap<(String, String), String>;

/// Everything the rules files say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rules {
    /// Cacheline size, when the rules fix it.
    pub cacheline: Option<u64>,
    /// Roots named by the rules files (`roots = [...]`). They restrict
    /// only the types of the file that names them: see
    /// `Rules::discovered_types`.
    pub roots: Vec<(String, Location)>,
    /// Per-type annotations.
    pub types: Vec<TypeRules>,
    /// Accepted pairs.
    pub allow: Vec<Allow>,
    /// Severity per kind.
    pub severity: Severities,
    /// Contexts declared or implied, in file order.
    pub contexts: Vec<Context>,
    /// Opt-in: also report pairs on the two lines of one 128-byte
    /// aligned pair (`adjacent-lines = true`, or `--adjacent-lines`).
    pub adjacent_lines: bool,
    /// What the files say that is not a rule (an enum table, an index of
    /// tables), for the notes.
    pub notes: Vec<String>,
    /// Where the objects of some structs start (`[placement]`), as their
    /// allocator places them.
    pub placement: Vec<Placement>,
    /// How hot members are (`[heat.TYPE]`, as `draft` writes it): `check`
    /// ranks findings of one severity by it.
    pub heat: Vec<Heat>,
    /// `absent-members = "note"`: a member rule that fits no build is a
    /// note, not an error (a file written for several releases, checked
    /// on one that predates a member).
    pub absent_members_note: bool,
}

/// Where every object of a struct starts (`[placement]`): what its
/// allocator guarantees beyond the struct's own alignment (a slab cache
/// with `SLAB_HWCACHE_ALIGN` starts every object on a line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The struct.
    pub ty: String,
    /// Where its objects start.
    pub start: Start,
    /// Where it is written.
    pub at: Location,
}

/// How hot a member is: a number only compared with others (`draft`
/// writes fast-path functions that touch it, those a fast entry point
/// reaches counted twice with their callers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heat {
    /// The struct.
    pub ty: String,
    /// The member's path in it.
    pub path: String,
    /// How hot.
    pub value: u64,
    /// Where it is written.
    pub at: Location,
}

/// Where the objects of a struct start, from a line boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// On a line boundary (`"line"`).
    Line,
    /// At a multiple of this many bytes (a power of two).
    Bytes(u64),
}

impl Start {
    /// The alignment it gives on lines of `cacheline` bytes.
    pub fn bytes(self, cacheline: u64) -> u64 {
        match self {
            Start::Line => cacheline,
            Start::Bytes(n) => n.min(cacheline),
        }
    }
}

impl Rules {
    /// Reads and merges rules files: `.rst` files as net_cachelines tables,
    /// anything else as TOML.
    pub fn load(paths: &[PathBuf]) -> Result<Rules> {
        /// The largest rules file read: the kernel's largest net_cachelines
        /// table is 12 KB (net_device.rst in 6.12); a hand-written TOML
        /// file is smaller.
        const MAX_RULES_BYTES: u64 = 16 << 20;
        let mut rules = Rules::default();
        for path in paths {
            // One read: a build given as the rules (`--rules vmlinux
            // rq.toml`) is told by its magic, before its size.
            let bytes = crate::input::head(path, MAX_RULES_BYTES + 1)?;
            let btf = crate::btf::MAGIC;
            if bytes.starts_with(b"\x7fELF")
                || bytes.starts_with(&btf.to_le_bytes())
                || bytes.starts_with(&btf.to_be_bytes())
            {
                return Err(Error::Content {
                    path: path.clone(),
                    line: None,
                    message: "not a rules file (TOML or a net_cachelines .rst table): an ELF or BTF file, a build; give it after the options".into(),
                });
            }
            let bytes = crate::input::within(path, bytes, MAX_RULES_BYTES, "a rules file")?;
            let text = String::from_utf8(bytes).map_err(|e| Error::Content {
                path: path.clone(),
                line: None,
                message: format!(
                    "not a text file (invalid UTF-8 at byte {}): a rules file is TOML or a net_cachelines .rst table",
                    e.utf8_error().valid_up_to()
                ),
            })?;
            let file: Arc<Path> = Arc::from(path.as_path());
            let parsed = if path.extension().is_some_and(|e| e == "rst") {
                rst::parse(&file, &text)?
            } else {
                toml::parse(&file, &text)?
            };
            if parsed == Rules::default() {
                return Err(Error::Content {
                    path: path.clone(),
                    line: None,
                    message: "no rules in this file (nothing but comments and blank lines): \
                              annotate a struct with [TYPE] and FIELD = \"CLASS\" lines"
                        .into(),
                });
            }
            rules.merge(parsed)?;
        }
        rules.resolve_contexts()?;
        if rules.types.is_empty() && rules.notes.is_empty() {
            let files: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            return Err(Error::Mismatch(format!(
                "no struct is annotated in the rules ({}): add a [TYPE] table with FIELD = \"CLASS\" lines",
                files.join(", ")
            )));
        }
        Ok(rules)
    }

    /// The rules of a TOML text, as [`Rules::load`] reads a file at
    /// `file` (a drafted file checked before it is written); `None` when it
    /// annotates no struct.
    pub(crate) fn from_toml(file: &Path, text: &str) -> Result<Option<Rules>> {
        let mut rules = toml::parse(&Arc::from(file), text)?;
        rules.resolve_contexts()?;
        Ok((!rules.types.is_empty()).then_some(rules))
    }

    /// Adds the rules of another file. A struct may be annotated in several
    /// files, but each field only once.
    pub fn merge(&mut self, other: Rules) -> Result<()> {
        if let Some(line) = other.cacheline {
            if self.cacheline.is_some_and(|l| l != line) {
                return Err(Error::Mismatch(format!(
                    "rules files disagree on the cacheline size ({} and {line})",
                    self.cacheline.unwrap_or_default()
                )));
            }
            self.cacheline = Some(line);
        }
        self.roots.extend(other.roots);
        self.notes.extend(other.notes);
        self.adjacent_lines |= other.adjacent_lines;
        self.absent_members_note |= other.absent_members_note;
        for context in other.contexts {
            match self.contexts.iter_mut().find(|c| c.name == context.name) {
                None => self.contexts.push(context),
                Some(mine) if context.implied => {
                    if mine.implied && mine.writers != context.writers {
                        return Err(context.at.error(format!(
                            "context '{}' is {} here and {} at {}",
                            context.name,
                            context.writers.name(),
                            mine.writers.name(),
                            mine.at
                        )));
                    }
                }
                Some(mine) if mine.implied => *mine = context,
                Some(mine) => {
                    return Err(context.at.error(format!(
                        "context '{}' is already declared at {}",
                        context.name, mine.at
                    )));
                }
            }
        }
        for ty in other.types {
            match self.types.iter_mut().find(|t| t.name == ty.name) {
                Some(mine) => {
                    for rule in ty.fields {
                        if let Some(first) = mine.fields.iter().find(|f| f.path == rule.path) {
                            return Err(rule.at.error(format!(
                                "'{}.{}' is already annotated at {}",
                                ty.name, rule.path, first.at
                            )));
                        }
                        mine.fields.push(rule);
                    }
                    mine.rows.extend(ty.rows);
                    for alias in ty.aliases {
                        if !mine.aliases.iter().any(|(a, _)| *a == alias.0) {
                            mine.aliases.push(alias);
                        }
                    }
                }
                None => self.types.push(ty),
            }
        }
        self.check_aliases()?;
        for h in other.heat {
            if let Some(first) = self.heat.iter().find(|x| x.ty == h.ty && x.path == h.path) {
                return Err(h.at.error(format!(
                    "the heat of {}.{} is already given at {}",
                    h.ty, h.path, first.at
                )));
            }
            self.heat.push(h);
        }
        for p in other.placement {
            if let Some(first) = self.placement.iter().find(|q| q.ty == p.ty) {
                return Err(p.at.error(format!(
                    "the placement of {} is already given at {}",
                    p.ty, first.at
                )));
            }
            self.placement.push(p);
        }
        self.allow.extend(other.allow);
        if other.severity != Severities::default() {
            self.severity = other.severity;
        }
        Ok(())
    }

    /// An alias names one type only, and no type annotated under its own
    /// name.
    fn check_aliases(&self) -> Result<()> {
        for (i, ty) in self.types.iter().enumerate() {
            for (alias, at) in &ty.aliases {
                if let Some(other) = self.types.iter().find(|t| t.name == *alias) {
                    return Err(at.error(format!(
                        "'{alias}' is an alias of {} and annotated at {}: \
                         annotate it under one name",
                        ty.name, other.at
                    )));
                }
                let claimed = self.types[..i]
                    .iter()
                    .find_map(|t| t.aliases.iter().find(|(a, _)| a == alias).map(|a| (t, a)));
                if let Some((other, (_, first))) = claimed {
                    return Err(at.error(format!(
                        "'{alias}' is an alias of {} here and of {} at {first}",
                        ty.name, other.name
                    )));
                }
            }
        }
        Ok(())
    }

    /// The rules as a build that calls some types by an alias reads them:
    /// each type in `renames` (name → the alias the build defines) renamed
    /// in its table, in `roots`, `[[allow]]` fields and `TYPE.member` locks.
    /// And each member rule in `members` (the type as the build names it
    /// and the rule's path → the `was` name the build has) under that name.
    pub(crate) fn renamed(
        &self,
        renames: &HashMap<String, String>,
        members: &MemberRenames,
    ) -> Rules {
        let rename = |name: &mut String| {
            if let Some(to) = renames.get(name.as_str()) {
                name.clone_from(to);
            }
        };
        let mut rules = self.clone();
        for ty in &mut rules.types {
            rename(&mut ty.name);
            for lock in ty.fields.iter_mut().filter_map(|f| f.lock.as_mut()) {
                if let Some((owner, member)) = lock.text.split_once('.')
                    && let Some(to) = renames.get(owner)
                {
                    lock.text = format!("{to}.{member}");
                }
            }
        }
        for (root, _) in &mut rules.roots {
            rename(root);
        }
        for field in rules.allow.iter_mut().flat_map(|a| a.fields.iter_mut()) {
            rename(&mut field.ty);
        }
        for p in &mut rules.placement {
            rename(&mut p.ty);
        }
        for h in &mut rules.heat {
            rename(&mut h.ty);
            if let Some(to) = members.get(&(h.ty.clone(), h.path.clone())) {
                h.path.clone_from(to);
            }
        }
        for ty in &mut rules.types {
            for f in &mut ty.fields {
                if let Some(to) = members.get(&(ty.name.clone(), f.path.clone())) {
                    f.path.clone_from(to);
                }
            }
        }
        rules
    }

    /// How hot a span is whose owners (struct, path in it) are `owners`:
    /// the hottest `[heat]` entry of a member holding it.
    pub fn heat_of(&self, owners: &[(String, String)]) -> Option<u64> {
        owners
            .iter()
            .flat_map(|(ty, path)| {
                self.heat
                    .iter()
                    .filter(move |h| h.ty == *ty && crate::path::within(path, &h.path))
            })
            .map(|h| h.value)
            .max()
    }

    /// The alignment struct `ty`'s objects really have on lines of
    /// `cacheline` bytes, when `[placement]` says.
    pub fn placement_of(&self, ty: &str, cacheline: u64) -> Option<u64> {
        self.placement
            .iter()
            .find(|p| p.ty == ty)
            .map(|p| p.start.bytes(cacheline))
    }

    /// The annotated types whose roots are discovered in the binary: those
    /// annotated in a file that names no `roots`. A file's `roots` are the
    /// roots of its own types only, so one file's roots never hide another
    /// file's types.
    pub(crate) fn discovered_types(&self) -> Vec<&str> {
        let restricted: HashSet<&Path> = self.roots.iter().map(|(_, at)| &*at.file).collect();
        self.types
            .iter()
            .filter(|t| {
                std::iter::once(&t.at)
                    .chain(t.fields.iter().map(|f| &f.at))
                    .any(|at| !restricted.contains(&*at.file))
            })
            .map(|t| t.name.as_str())
            .collect()
    }

    /// Checks that every context a rule names is declared, and gives each
    /// context rule the class it is shown with.
    pub(crate) fn resolve_contexts(&mut self) -> Result<()> {
        let names: Vec<String> = self.contexts.iter().map(|c| c.name.clone()).collect();
        for ty in &mut self.types {
            for field in &mut ty.fields {
                let Some(access) = &field.access else {
                    continue;
                };
                if let Some(unknown) = access.uses().find(|u| !names.iter().any(|n| n == u)) {
                    let hint =
                        crate::suggest::did_you_mean(unknown, names.iter().map(String::as_str));
                    let known = if names.is_empty() {
                        "; declare it under [contexts], e.g. tx = \"serialized\"".to_owned()
                    } else if hint.is_empty() {
                        format!("; the contexts are {}", names.join(", "))
                    } else {
                        hint
                    };
                    return Err(field.at.error(format!(
                        "'{}' names context '{unknown}', which is not declared{known}",
                        field.path
                    )));
                }
            }
        }
        for ty in &mut self.types {
            for field in &mut ty.fields {
                if let Some(access) = &field.access {
                    field.class = class_of(&self.contexts, access);
                }
            }
        }
        Ok(())
    }

    /// The writers of context `name` (serialized when undeclared).
    pub fn writers(&self, name: &str) -> Writers {
        writers_in(&self.contexts, name)
    }

    /// The rules of type `name`.
    pub fn type_rules(&self, name: &str) -> Option<&TypeRules> {
        self.types.iter().find(|t| t.name == name)
    }
}

/// The writers of context `name` among `contexts` (serialized when it is
/// not declared).
fn writers_in(contexts: &[Context], name: &str) -> Writers {
    contexts
        .iter()
        .find(|c| c.name == name)
        .map_or(Writers::Serialized, |c| c.writers)
}

/// The class a context rule is shown with: lockless-write when a context
/// that writes it writes locklessly, owner-write when it is written one
/// CPU at a time, hot-read when only read.
fn class_of(contexts: &[Context], access: &Access) -> Class {
    if access
        .writes
        .iter()
        .any(|w| writers_in(contexts, w) == Writers::Lockless)
    {
        Class::LocklessWrite
    } else if !access.writes.is_empty() {
        Class::OwnerWrite
    } else if access.reads.is_empty() {
        Class::Cold
    } else {
        Class::HotRead
    }
}

/// Checks that a dotted member path is made of C identifiers.
fn valid_member_path(path: &str) -> bool {
    !path.is_empty()
        && path.split('.').all(|part| {
            !part.is_empty()
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !part.starts_with(|c: char| c.is_ascii_digit())
        })
}

#[cfg(test)]
mod tests {
    #[test]
    fn serialized_names_are_the_rules_file_names() {
        for k in Kind::ALL {
            assert_eq!(serde_json::to_value(k).unwrap(), k.name());
        }
        for s in [Severity::Note, Severity::Warning, Severity::Error] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
        }
    }

    use super::*;

    #[test]
    fn locations_count_lines_and_characters() {
        let file: Arc<Path> = Arc::from(Path::new("r.toml"));
        let text = "a = 1\n[é]\nbad";
        assert_eq!(Location::at(&file, text, 0).to_string(), "r.toml:1:1");
        assert_eq!(Location::at(&file, text, 7).to_string(), "r.toml:2:2");
        assert_eq!(Location::at(&file, text, 11).to_string(), "r.toml:3:1");
    }

    #[test]
    fn every_kind_and_class_round_trips_through_its_name() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.name()), Some(k));
        }
        for c in Class::SHORTHANDS {
            assert_eq!(Class::parse(c.name()), Some(c));
        }
        // A context rule's owner-written field is shown, never written.
        assert_eq!(Class::parse(Class::OwnerWrite.name()), None);
    }

    #[test]
    fn member_paths_are_identifiers() {
        assert!(valid_member_path("lrugen.max_seq"));
        assert!(!valid_member_path("refaulted[0]"));
        assert!(!valid_member_path("a..b"));
        assert!(!valid_member_path("1a"));
    }
}
