//! What `asserts` found: the tabled members of one struct in each kernel
//! cacheline group of a build, the groups' measured sizes, and, with
//! `--against`, how the kernel's own check function differs; and that
//! comparison of the kernel's check function with the generated one:
//! which members each asserts in which group, and the budgets against the
//! measured sizes. Each difference is placed at a line of the kernel's
//! file: its assert, or for a member the kernel does not assert, the
//! group's `CACHELINE_ASSERT_GROUP_SIZE` (where an assert would go).

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::csource::check_function::{Asserted, KernelAssert};

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

/// Compares the kernel's `asserts` (read from `file`) with `report`;
/// `build` says where a member the table does not name is in the build.
pub(crate) fn compare(
    file: &str,
    asserts: &[KernelAssert],
    report: &AssertsReport,
    build: impl Fn(&str) -> Placement,
) -> Comparison {
    let tabled = tabled_placements(report);
    let measured: HashMap<&str, u64> = report
        .groups
        .iter()
        .map(|g| (g.name.as_str(), g.size))
        .collect();
    let mut diffs = Vec::new();
    let mut push = |line, weight, kind| {
        diffs.push(Difference { line, weight, kind });
    };
    let first_line = asserts.first().map_or(1, |a| a.line);
    // Where an assert of `group` the kernel lacks would go.
    let line_for = |group: &str| {
        let mut of_group = asserts.iter().filter(|a| a.group == group);
        of_group
            .clone()
            .find(|a| matches!(a.what, Asserted::Size { .. }))
            .or_else(|| of_group.next_back())
            .map_or(first_line, |a| a.line)
    };
    let mut kernel_groups: Vec<&str> = Vec::new();
    let mut asserted: HashSet<&str> = HashSet::new();
    let mut sized: HashSet<&str> = HashSet::new();
    for a in asserts {
        let group = a.group.as_str();
        if !kernel_groups.contains(&group) {
            kernel_groups.push(group);
            if !measured.contains_key(group) {
                push(
                    a.line,
                    Weight::Failure,
                    DifferenceKind::GroupKernelOnly {
                        group: group.to_owned(),
                    },
                );
            }
        }
        let Some(&size) = measured.get(group) else {
            continue;
        };
        match &a.what {
            Asserted::Member(member) => {
                if !asserted.insert(member) {
                    continue;
                }
                let here = Placement::Group(group.to_owned());
                let placed = build(member);
                if placed != here {
                    // A member a config leaves out, under an #if: expected.
                    let weight = if placed == Placement::Absent && !a.conditions.is_empty() {
                        Weight::Info
                    } else {
                        Weight::Failure
                    };
                    push(
                        a.line,
                        weight,
                        DifferenceKind::AssertFails {
                            group: group.to_owned(),
                            member: member.clone(),
                            build: placed,
                            conditions: a.conditions.clone(),
                        },
                    );
                }
                let t = tabled.get(member.as_str());
                if t != Some(&here) && t != Some(&Placement::Bitfield) {
                    push(
                        a.line,
                        Weight::Drift,
                        DifferenceKind::KernelOnly {
                            group: group.to_owned(),
                            member: member.clone(),
                            tabled: t.cloned(),
                        },
                    );
                }
            }
            Asserted::Size { text, value } => {
                sized.insert(group);
                let budget = text.clone();
                let group = group.to_owned();
                match *value {
                    None => push(
                        a.line,
                        Weight::Info,
                        DifferenceKind::Unevaluated {
                            group,
                            budget,
                            measured: size,
                        },
                    ),
                    Some(bytes) if bytes < size => push(
                        a.line,
                        Weight::Failure,
                        DifferenceKind::BudgetTooSmall {
                            group,
                            budget,
                            bytes,
                            measured: size,
                        },
                    ),
                    Some(bytes) if bytes > size => push(
                        a.line,
                        Weight::Info,
                        DifferenceKind::Slack {
                            group,
                            budget,
                            bytes,
                            measured: size,
                        },
                    ),
                    Some(_) => {}
                }
            }
        }
    }
    for g in &report.groups {
        if !kernel_groups.contains(&g.name.as_str()) {
            // A group neither the table nor the function covers (an
            // aligned group for another purpose) is no disagreement.
            let weight = if g.members.is_empty() {
                Weight::Info
            } else {
                Weight::Drift
            };
            push(
                first_line,
                weight,
                DifferenceKind::GroupBuildOnly {
                    group: g.name.clone(),
                    tabled: g.members.len(),
                },
            );
            continue;
        }
        if !sized.contains(g.name.as_str()) {
            push(
                line_for(&g.name),
                Weight::Drift,
                DifferenceKind::NoSizeAssert {
                    group: g.name.clone(),
                    measured: g.size,
                },
            );
        }
        for m in g
            .members
            .iter()
            .filter(|m| !asserted.contains(m.name.as_str()))
        {
            push(
                line_for(&g.name),
                Weight::Drift,
                DifferenceKind::TableOnly {
                    group: g.name.clone(),
                    member: m.name.clone(),
                    rule: m.rule.clone(),
                },
            );
        }
    }
    diffs.sort_by_key(|d| d.line);
    let count = |w: Weight| diffs.iter().filter(|d| d.weight == w).count();
    let summary = ComparisonSummary {
        failures: count(Weight::Failure),
        drift: count(Weight::Drift),
        info: count(Weight::Info),
    };
    let of = |member: bool| {
        asserts
            .iter()
            .filter(|a| matches!(a.what, Asserted::Member(_)) == member)
            .count()
    };
    Comparison {
        file: file.to_owned(),
        member_asserts: of(true),
        size_asserts: of(false),
        differences: diffs,
        summary,
    }
}

/// Where each tabled member is, by its name in the table.
fn tabled_placements(report: &AssertsReport) -> HashMap<&str, Placement> {
    let mut out = HashMap::new();
    for g in &report.groups {
        for m in &g.members {
            out.insert(m.name.as_str(), Placement::Group(g.name.clone()));
        }
        for m in &g.bitfields {
            out.insert(m.name.as_str(), Placement::Bitfield);
        }
    }
    for o in &report.outside {
        let p = match &o.crosses {
            Some(g) => Placement::Crosses(g.clone()),
            None => Placement::Outside,
        };
        out.insert(o.member.name.as_str(), p);
    }
    out
}
