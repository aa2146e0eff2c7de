//! The kernel-style check function (`tcp_struct_check()`) of one struct
//! in one view of a build: a `CACHELINE_ASSERT_GROUP_MEMBER` for every
//! tabled member a cacheline group holds, a `CACHELINE_ASSERT_GROUP_SIZE`
//! per group with the size measured. The `asserts` command writes it (and
//! compares it with the kernel's), and `suggest --asserts` its suggestion's.

use std::collections::HashSet;

use super::analyze::renamed;
use super::{Run, View};
use crate::error::{Error, Result};
use crate::layout::{self, Depth, Group};
use crate::load::lookup::Located;
use crate::model::{TypeId, TypeTable};
use crate::path::{self, MemberPath};
use crate::report::asserts::{AssertsReport, GroupAsserts, Member, Outside, Placement};
use crate::rules::{Class, FieldRule, Rules};

/// The check function of a struct, and where its groups are, to place
/// other members by.
pub(crate) struct CheckFunction {
    /// The function as a report.
    pub(crate) report: AssertsReport,
    groups: Vec<Closed>,
    root: TypeId,
}

impl CheckFunction {
    /// Where `member` is in `view` (the view the function was made in).
    pub(crate) fn placement(&self, view: &View<'_>, member: &str) -> Placement {
        placement(view.table(), self.root, member, &self.groups)
    }
}

/// The check function of `found` (struct or union `name`) in `view`.
pub(crate) fn check_function(
    run: &Run,
    view: &View<'_>,
    found: &Located,
    name: &str,
) -> Result<CheckFunction> {
    let opened = view.opened;
    let rules = renamed(&run.rules, &opened.renames, &opened.member_renames);
    let root = found.id;
    let mut notes = view.tagged_notes();
    notes.extend(found.note.clone());
    let line = run.line(opened);
    let table = view.table();
    let laid = layout::layout(table, root, line, Depth::Direct)?;
    let c_type = format!("{} {}", laid.kind.keyword(), name);
    let groups = closed_groups(&laid.groups, &c_type, &mut notes);
    if groups.is_empty() {
        return Err(Error::Mismatch(format!(
            "{c_type} has no cacheline groups (__cacheline_group_begin/end markers) in {}: \
             nothing to assert",
            opened.build.path.display()
        )));
    }
    let tabled = tabled(&rules, name);
    if tabled.is_empty() {
        return Err(Error::Mismatch(format!(
            "the rules name no member of {c_type} with an access: nothing to assert"
        )));
    }
    let mut report = AssertsReport {
        c_type,
        name: name.to_owned(),
        config: view.config.clone(),
        file: opened.build.path.display().to_string(),
        rules: run
            .rules_files
            .iter()
            .map(|r| r.display().to_string())
            .collect(),
        groups: groups
            .iter()
            .map(|g| GroupAsserts {
                name: g.name.clone(),
                begin: g.begin,
                end: g.end,
                size: g.end - g.begin,
                members: Vec::new(),
                bitfields: Vec::new(),
            })
            .collect(),
        outside: Vec::new(),
        comparison: None,
        notes,
    };
    for rule in tabled {
        place_rule(table, root, rule, &groups, &mut report);
    }
    for g in &mut report.groups {
        // Stable: members at one offset (a union's) keep table order.
        g.members.sort_by_key(|m| m.offset);
        g.bitfields.sort_by_key(|m| m.offset);
    }
    report.outside.sort_by_key(|o| o.member.offset);
    if !report.outside.is_empty() {
        let names: Vec<&str> = report
            .outside
            .iter()
            .map(|o| o.member.name.as_str())
            .collect();
        let (count, lie) = match names.len() {
            1 => ("1 tabled member".to_owned(), "lies"),
            n => (format!("{n} tabled members"), "lie"),
        };
        report.notes.push(format!(
            "{count} of {} {lie} in no group whole, not asserted: {}",
            report.c_type,
            names.join(", ")
        ));
    }
    report.notes.dedup();
    Ok(CheckFunction {
        report,
        groups,
        root,
    })
}

/// A group with both markers, as the macros measure it.
#[derive(Clone, Debug)]
struct Closed {
    name: String,
    begin: u64,
    end: u64,
}

/// The groups with an end marker, in offset order; a note for the others.
fn closed_groups(groups: &[Group], c_type: &str, notes: &mut Vec<String>) -> Vec<Closed> {
    let mut out: Vec<Closed> = Vec::new();
    for g in groups {
        match g.end {
            Some(end) => out.push(Closed {
                name: g.name.clone(),
                begin: g.begin,
                end,
            }),
            None => notes.push(format!(
                "{c_type}: group {} has no __cacheline_group_end__{} marker; not asserted",
                g.name, g.name
            )),
        }
    }
    out.sort_by_key(|g| g.begin);
    out
}

/// The rules of `name` that give a use (a context rule, or any class but
/// cold), one per path, in file order.
fn tabled<'r>(rules: &'r Rules, name: &str) -> Vec<&'r FieldRule> {
    let mut seen = HashSet::new();
    rules
        .types
        .iter()
        .filter(|t| t.name == name)
        .flat_map(|t| &t.fields)
        .filter(|f| f.access.is_some() || f.class != Class::Cold)
        .filter(|f| seen.insert(f.path.as_str()))
        .collect()
}

/// Offset, size and bitfield-ness of `member` of `root`; `None` when the
/// build has no such member.
pub(crate) fn locate(table: &TypeTable, root: TypeId, member: &str) -> Option<(u64, u64, bool)> {
    let parsed = MemberPath::parse(&format!("T.{member}")).ok()?;
    let r = path::resolve(table, root, &parsed.steps, member).ok()?;
    Some(match r.bits {
        // The bytes its bits touch.
        Some((b, w)) => (b / 8, b.saturating_add(w.max(1)).div_ceil(8) - b / 8, true),
        None => (r.offset, r.size, false),
    })
}

/// Where bytes `[offset, offset + size)` are: in the group that holds them
/// whole as `CACHELINE_ASSERT_GROUP_MEMBER` checks it (offset at or after
/// the begin marker, end at or before the end marker), else crossing out
/// of the group they start in, else outside.
fn group_of(groups: &[Closed], offset: u64, size: u64) -> Placement {
    let end = offset.saturating_add(size);
    let starts_in = |g: &&Closed| g.begin <= offset && offset < g.end;
    let holds = |g: &&Closed| g.begin <= offset && end <= g.end;
    if let Some(g) = groups.iter().filter(holds).find(starts_in) {
        return Placement::Group(g.name.clone());
    }
    if let Some(g) = groups.iter().find(holds) {
        return Placement::Group(g.name.clone());
    }
    match groups.iter().find(starts_in) {
        Some(g) => Placement::Crosses(g.name.clone()),
        None => Placement::Outside,
    }
}

/// Where `member` is in the build.
fn placement(table: &TypeTable, root: TypeId, member: &str, groups: &[Closed]) -> Placement {
    match locate(table, root, member) {
        None => Placement::Absent,
        Some((_, _, true)) => Placement::Bitfield,
        Some((offset, size, false)) => group_of(groups, offset, size),
    }
}

/// Puts one tabled member into its group's list, or `outside`, or a note
/// when the build has no such member.
fn place_rule(
    table: &TypeTable,
    root: TypeId,
    rule: &FieldRule,
    groups: &[Closed],
    report: &mut AssertsReport,
) {
    let Some((offset, size, bitfield)) = locate(table, root, &rule.path) else {
        report.notes.push(format!(
            "{}: {}.{} is not a member in {}; not asserted",
            rule.at, report.name, rule.path, report.config
        ));
        return;
    };
    let member = Member {
        name: rule.path.clone(),
        offset,
        size,
        access: match &rule.access {
            Some(a) => a.describe(),
            None => rule.class.name().to_owned(),
        },
        rule: rule.at.to_string(),
    };
    match group_of(groups, offset, size) {
        Placement::Group(name) => {
            let Some(g) = report.groups.iter_mut().find(|g| g.name == name) else {
                unreachable!("the report has a group for every closed group");
            };
            if bitfield {
                g.bitfields.push(member);
            } else {
                g.members.push(member);
            }
        }
        Placement::Crosses(g) => report.outside.push(Outside {
            member,
            crosses: Some(g),
        }),
        _ => report.outside.push(Outside {
            member,
            crosses: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups() -> Vec<Closed> {
        // a: [8, 24), b: [24, 40) adjacent, c: [64, 64) empty.
        [("a", 8, 24), ("b", 24, 40), ("c", 64, 64)]
            .into_iter()
            .map(|(n, begin, end)| Closed {
                name: n.into(),
                begin,
                end,
            })
            .collect()
    }

    #[test]
    fn a_member_is_in_the_group_that_holds_it_whole() {
        let g = groups();
        let group = |n: &str| Placement::Group(n.into());
        assert_eq!(group_of(&g, 8, 16), group("a"));
        assert_eq!(group_of(&g, 24, 8), group("b"), "starts where a ends");
        assert_eq!(group_of(&g, 20, 8), Placement::Crosses("a".into()));
        assert_eq!(group_of(&g, 0, 8), Placement::Outside);
        assert_eq!(group_of(&g, 40, 4), Placement::Outside);
        // Zero-size members at a shared boundary: the group they start in.
        assert_eq!(group_of(&g, 24, 0), group("b"));
        assert_eq!(
            group_of(&g, 40, 0),
            group("b"),
            "the macro holds at b's end"
        );
        assert_eq!(group_of(&g, 64, 0), group("c"));
    }
}
