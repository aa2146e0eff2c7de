//! The kernel's check function against the generated one: which members
//! each asserts in which group, and the budgets against the measured
//! sizes. Each difference is placed at a line of the kernel's file: its
//! assert, or for a member the kernel does not assert, the group's
//! `CACHELINE_ASSERT_GROUP_SIZE` (where an assert would go).

use std::collections::{HashMap, HashSet};

use crate::csource::asserts::{Asserted, KernelAssert};
use crate::report::asserts::{
    AssertsReport, Comparison, ComparisonSummary, Difference, DifferenceKind, Placement, Weight,
};

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
