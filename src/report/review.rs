//! `review`: a layout patch on a matrix of variants, as plain data.

use serde::Serialize;

use super::audit::StoreFinding;

/// The review of one patch.
#[derive(Clone, Debug, Serialize)]
pub struct ReviewReport {
    /// The reviewed tree.
    pub tree: String,
    /// The base revision as given, and its commit.
    pub base: String,
    /// The base commit.
    pub base_commit: String,
    /// HEAD's commit.
    pub head_commit: String,
    /// HEAD's subject.
    pub subject: String,
    /// The variants, in order.
    pub variants: Vec<String>,
    /// Each reviewed struct.
    pub structs: Vec<StructReview>,
    /// The kernel's own asserts of the reviewed structs, evaluated on each
    /// variant at the base and at HEAD.
    pub asserts: Vec<AssertReview>,
    /// Asserts that fail at HEAD on some variant.
    pub failures: usize,
    /// The variants whose probe does not compile at one revision: the
    /// compiler's first errors (a static assert of a touched header, say).
    pub broken: Vec<Broken>,
    /// The variants among them that do not compile at HEAD.
    pub broken_at_head: Vec<String>,
    /// The review fails: an assert fails, or a variant does not compile,
    /// at HEAD.
    pub failed: bool,
    /// Structs that take more cachelines at HEAD on some variant.
    pub grown: usize,
    /// With rules: per variant and root, the pairs of fields the patch
    /// makes share a line, and those it parts.
    pub findings: Vec<FindingsChange>,
    /// Pairs introduced at HEAD, over every variant and root.
    pub introduced: usize,
    /// Those of them that are errors.
    pub introduced_errors: usize,
    /// What the rules given or drafted compared (`None`: none were).
    pub compared: Option<Compared>,
    /// The needless stores of the code the patch changes, at the base
    /// against HEAD (`None`: it changes no C code, or they could not be
    /// read: a note says why).
    pub stores: Option<StoresChange>,
    /// The needless stores the patch adds.
    pub stores_added: usize,
    /// What the review has to tell.
    pub notes: Vec<String>,
}

/// One struct on every variant.
#[derive(Clone, Debug, Serialize)]
pub struct StructReview {
    /// Its name.
    pub name: String,
    /// The header the patch touches it in (empty for one named by `--type`).
    pub header: String,
    /// Per variant, in order.
    pub on: Vec<StructOn>,
    /// The variants it takes more cachelines on at HEAD.
    pub grew_on: Vec<String>,
}

/// One struct on one variant.
#[derive(Clone, Debug, Serialize)]
pub struct StructOn {
    /// The variant.
    pub variant: String,
    /// Its cacheline size.
    pub cacheline: u64,
    /// At the base (`None`: the variant has no such struct there).
    pub base: Option<Shape>,
    /// At HEAD.
    pub head: Option<Shape>,
    /// Its kernel cacheline groups, base and head sizes.
    pub groups: Vec<GroupSizes>,
    /// Its own members that are added, removed, moved or resized, in
    /// HEAD's order (removed ones last): where each lands and on which
    /// line.
    pub members: Vec<crate::diff::MemberChange>,
    /// Holes between its own members opened or closed by the patch.
    pub holes: Vec<HoleChange>,
}

/// A hole between two members that one revision has and the other not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HoleChange {
    /// True when HEAD has it and the base not.
    pub opened: bool,
    /// Its first byte.
    pub offset: u64,
    /// Its size in bytes.
    pub size: u64,
    /// The member before it, at the revision that has it.
    pub after: Option<String>,
}

/// The needless stores (as `audit` finds them) in the files a patch
/// changes, found at HEAD and not at the base or the other way round.
#[derive(Clone, Debug, Serialize)]
pub struct StoresChange {
    /// The files compared (C files and headers the patch changes).
    pub files: Vec<String>,
    /// Found at HEAD, not at the base: ranked as `audit` ranks them.
    pub added: Vec<StoreFinding>,
    /// Found at the base, not at HEAD.
    pub removed: Vec<StoreFinding>,
}

/// What a review with rules compared.
#[derive(Clone, Debug, Serialize)]
pub struct Compared {
    /// The rules files.
    pub files: Vec<String>,
    /// Without rules files: the structs whose rules were drafted from the
    /// tree's source.
    pub drafted: Vec<String>,
    /// The rules' roots analysed at both revisions on some variant.
    pub roots: Vec<String>,
    /// The variants both revisions of which compiled.
    pub variants: Vec<String>,
}

/// A struct's size and lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Shape {
    /// Bytes.
    pub size: u64,
    /// Cachelines it spans from a line boundary.
    pub lines: u64,
}

/// One group's size (end marker minus begin marker) at the base and at
/// HEAD.
#[derive(Clone, Debug, Serialize)]
pub struct GroupSizes {
    /// The group.
    pub name: String,
    /// At the base.
    pub base: Option<u64>,
    /// At HEAD.
    pub head: Option<u64>,
}

/// One kernel assert on every variant.
#[derive(Clone, Debug, Serialize)]
pub struct AssertReview {
    /// The struct.
    pub ty: String,
    /// The C file, relative to the tree.
    pub file: String,
    /// Its line.
    pub line: usize,
    /// `GROUP <= BUDGET` or `MEMBER in GROUP`.
    pub text: String,
    /// Per variant: the verdict at the base and at HEAD.
    pub on: Vec<(Verdict, Verdict)>,
    /// The variants it fails on at HEAD.
    pub fails_on: Vec<String>,
}

/// What an assert gives on one build.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    /// It holds; the measured value.
    Holds {
        /// The group's size, or the member's offset.
        measured: u64,
    },
    /// It fails: the build would not compile.
    Fails {
        /// The group's size, or the member's offset.
        measured: Option<u64>,
        /// Why.
        why: String,
    },
    /// Not evaluated: under a condition the variant's config does not
    /// meet, or that cachelint does not read.
    Skipped {
        /// Why.
        why: String,
    },
}

/// A variant that does not compile at one revision.
#[derive(Clone, Debug, Serialize)]
pub struct Broken {
    /// The variant.
    pub variant: String,
    /// `base` or `head`.
    pub side: String,
    /// The error, with the compiler's first lines.
    pub why: String,
}

/// What the patch does to the rules' findings in one root on one variant.
#[derive(Clone, Debug, Serialize)]
pub struct FindingsChange {
    /// The variant.
    pub variant: String,
    /// The root.
    pub root: String,
    /// Pairs at HEAD the base did not have.
    pub introduced: Vec<crate::analysis::compare::Pair>,
    /// Pairs of the base HEAD no longer has.
    pub fixed: Vec<crate::analysis::compare::Pair>,
}
