//! What `asserts` found: the tabled members of one struct in each kernel
//! cacheline group of a build, the groups' measured sizes, and, with
//! `--against`, how the kernel's own check function differs.

use serde::Serialize;

/// `asserts`: the check function's content, and the comparison.
#[derive(Clone, Debug, Serialize)]
pub struct AssertsReport {
    /// The struct as C names it in the macros (`struct tcp_sock`).
    pub c_type: String,
    /// Its name (`tcp_sock`).
    pub name: String,
    /// The build's label.
    pub config: String,
    /// The build's file.
    pub file: String,
    /// The rules files read.
    pub rules: Vec<String>,
    /// The groups in offset order, each with its tabled members.
    pub groups: Vec<GroupAsserts>,
    /// Tabled members that no group holds whole: not asserted.
    pub outside: Vec<Outside>,
    /// With `--against`: the kernel's function compared.
    pub comparison: Option<Comparison>,
    /// Notes: rows that name no member of this build, groups without an
    /// end marker.
    pub notes: Vec<String>,
}

/// One group of the build.
#[derive(Clone, Debug, Serialize)]
pub struct GroupAsserts {
    /// Its name (`tcp_sock_read_tx`).
    pub name: String,
    /// Offset of `__cacheline_group_begin__NAME`.
    pub begin: u64,
    /// Offset of `__cacheline_group_end__NAME`.
    pub end: u64,
    /// `end - begin`: the measured size, what `CACHELINE_ASSERT_GROUP_SIZE`
    /// compares with its budget.
    pub size: u64,
    /// Tabled members inside it, in offset order: one
    /// `CACHELINE_ASSERT_GROUP_MEMBER` each.
    pub members: Vec<Member>,
    /// Tabled bitfields inside it: `offsetof` cannot name a bitfield, so
    /// they get no assert.
    pub bitfields: Vec<Member>,
}

/// One tabled member.
#[derive(Clone, Debug, Serialize)]
pub struct Member {
    /// As the table names it (its member path in the struct).
    pub name: String,
    /// `offsetof`.
    pub offset: u64,
    /// Size in bytes (for a bitfield, of the bytes its bits touch).
    pub size: u64,
    /// Its use: the contexts (`tx: read, rx: write`) or the class.
    pub access: String,
    /// The rule's place: `FILE:LINE:COL`.
    pub rule: String,
}

/// A tabled member no group holds whole.
#[derive(Clone, Debug, Serialize)]
pub struct Outside {
    /// The member.
    pub member: Member,
    /// The group it starts in and runs out of, if any.
    pub crosses: Option<String>,
}

/// Where a member is in the build, as the comparison tells it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "where", content = "group")]
pub enum Placement {
    /// Whole inside this group.
    Group(String),
    /// In no group.
    Outside,
    /// Starts in this group and ends past its end marker.
    Crosses(String),
    /// A bitfield.
    Bitfield,
    /// No such member in this build.
    Absent,
}

/// The kernel's function against the build and the table.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// The C file read.
    pub file: String,
    /// `CACHELINE_ASSERT_GROUP_MEMBER`s of the struct read in it.
    pub member_asserts: usize,
    /// `CACHELINE_ASSERT_GROUP_SIZE`s of the struct read in it.
    pub size_asserts: usize,
    /// Every difference, in the file's line order.
    pub differences: Vec<Difference>,
    /// Counts by weight.
    pub summary: ComparisonSummary,
}

/// Differences counted by weight.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ComparisonSummary {
    /// The kernel's asserts fail on this build.
    pub failures: usize,
    /// The table and the kernel's function disagree.
    pub drift: usize,
    /// Worth knowing: budgets above the measured size, budgets that are
    /// not numbers, asserts of members a config leaves out.
    pub info: usize,
}

/// How much a difference matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Weight {
    /// A `BUILD_BUG_ON` of the kernel's function fails on this build.
    Failure,
    /// The table and the function disagree: one of them is stale.
    Drift,
    /// Not a disagreement.
    Info,
}

/// One difference, at a line of the kernel's file.
#[derive(Clone, Debug, Serialize)]
pub struct Difference {
    /// 1-based line in the C file: the assert, or where a missing one goes.
    pub line: usize,
    /// How much it matters.
    pub weight: Weight,
    /// What differs.
    #[serde(flatten)]
    pub kind: DifferenceKind,
}

/// What differs.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum DifferenceKind {
    /// The kernel asserts `member` in `group`; the table does not put it
    /// there (`tabled: None`: not tabled at all).
    KernelOnly {
        /// The kernel's group.
        group: String,
        /// The member.
        member: String,
        /// Where the tabled member is in this build, when tabled.
        tabled: Option<Placement>,
    },
    /// Tabled in `group` in this build; the kernel asserts it nowhere.
    TableOnly {
        /// The group.
        group: String,
        /// The member.
        member: String,
        /// The rule's place.
        rule: String,
    },
    /// The kernel asserts `member` in `group`, and in this build it is
    /// not there: the assert fails, unless a config leaves it out.
    AssertFails {
        /// The kernel's group.
        group: String,
        /// The member.
        member: String,
        /// Where it is in this build.
        build: Placement,
        /// The `#if` lines around the assert.
        conditions: Vec<String>,
    },
    /// The kernel's budget is smaller than the measured size: its
    /// `CACHELINE_ASSERT_GROUP_SIZE` fails on this build.
    BudgetTooSmall {
        /// The group.
        group: String,
        /// The budget as written.
        budget: String,
        /// Its value.
        bytes: u64,
        /// The measured size.
        measured: u64,
    },
    /// The kernel's budget is larger than the measured size.
    Slack {
        /// The group.
        group: String,
        /// The budget as written.
        budget: String,
        /// Its value.
        bytes: u64,
        /// The measured size.
        measured: u64,
    },
    /// A budget that is not integer arithmetic (`sizeof`, a macro).
    Unevaluated {
        /// The group.
        group: String,
        /// The budget as written.
        budget: String,
        /// The measured size.
        measured: u64,
    },
    /// The kernel asserts a group this build does not have.
    GroupKernelOnly {
        /// The group.
        group: String,
    },
    /// The build has a group the kernel's function asserts nothing of.
    GroupBuildOnly {
        /// The group.
        group: String,
        /// Tabled members in it.
        tabled: usize,
    },
    /// The kernel asserts members of a group and not its size.
    NoSizeAssert {
        /// The group.
        group: String,
        /// The measured size.
        measured: u64,
    },
}

impl AssertsReport {
    /// The `CACHELINE_ASSERT_GROUP_MEMBER` lines of the function.
    pub fn member_asserts(&self) -> usize {
        self.groups.iter().map(|g| g.members.len()).sum()
    }

    /// True when `--against` found a failure or drift (exit code 1).
    pub fn differs(&self) -> bool {
        self.comparison
            .as_ref()
            .is_some_and(|c| c.summary.failures + c.summary.drift > 0)
    }
}
