//! `review`: a layout patch (HEAD of a git tree) against its base, on a
//! matrix of variants: each touched struct's size and cachelines, its
//! kernel cacheline groups, and the kernel's own asserts of it
//! (`CACHELINE_ASSERT_GROUP_*` in its check function) evaluated on every
//! variant at both revisions. The run holds each variant twice, at the
//! base then at HEAD ([`crate::run::Setup::review`]).

use std::path::{Path, PathBuf};

use crate::analysis::compare::{self, Pair};
use crate::analysis::needless::needless_stores;
use crate::report::audit::StoreFinding;
use std::num::NonZeroUsize;

use crate::csource::check_function::{Asserted, KernelAssert};
use crate::diff::{self, ListDepth, MemberChange, Side};
use crate::error::{Error, Result};
use crate::layout::{self, Depth};
use crate::report::review::{
    AssertReview, Broken, Compared, FindingsChange, GroupSizes, HoleChange, ReviewReport, Shape,
    StoresChange, StructOn, StructReview, Verdict,
};
use crate::review::Review;
use crate::rules::{Rules, Severity};
use crate::run::{Draft, Opened, Roots, Run, View, Want, analyze};

/// What `review` needs read of each build: the reviewed structs, when a
/// variant has them; without rules, which struct each member leads to
/// (the source's accesses are followed through them to draft rules).
pub fn review_want(review: &Review, rules: &Rules) -> Want {
    Want {
        names: review.structs.iter().map(|(n, _)| n.clone()).collect(),
        // With rules, their roots are analysed at both revisions.
        roots: true,
        // The outermost structs that embed a reviewed one are reviewed too.
        embedders_of: review.structs.iter().map(|(n, _)| n.clone()).collect(),
        member_types: rules.types.is_empty(),
        ..Want::default()
    }
}

/// Runs `review` of `review` over `run`.
pub fn review(run: &Run, review: &Review) -> Result<ReviewReport> {
    let names = review.variant_names();
    if run.builds.len() != 2 * names.len() {
        return Err(Error::Usage(
            "a review's run holds each variant at the base and at HEAD".into(),
        ));
    }
    let pairs: Vec<(&Opened, &Opened)> = run
        .builds
        .chunks(2)
        .map(|pair| (&pair[0], &pair[1]))
        .collect();
    // A variant that compiles at neither revision says nothing of the
    // patch: its setup is wrong, and that is the error.
    let mut broken = Vec::new();
    for ((base, head), variant) in pairs.iter().zip(&names) {
        match (&base.failed, &head.failed) {
            (Some(_), Some(why)) => return Err(Error::VariantBuild(why.clone())),
            (b, h) => {
                for (side, why) in [("base", b), ("head", h)] {
                    if let Some(why) = why {
                        broken.push(Broken {
                            variant: variant.clone(),
                            side: side.to_owned(),
                            why: why.clone(),
                        });
                    }
                }
            }
        }
    }
    // The reviewed structs, then the roots embedding them on some variant.
    let mut reviewed: Vec<(String, String)> = review.structs.clone();
    for opened in &run.builds {
        for root in &opened.embedders {
            if !reviewed.iter().any(|(n, _)| n == root) {
                reviewed.push((root.clone(), EMBEDDING.to_owned()));
            }
        }
    }
    let mut structs = Vec::new();
    for (name, header) in &reviewed {
        let mut on = Vec::new();
        let mut grew_on = Vec::new();
        for ((base, head), variant) in pairs.iter().zip(&names) {
            // The line of a revision that compiled: a broken build has
            // no config to read it from.
            let line = match head.failed {
                Some(_) => run.line(base),
                None => run.line(head),
            };
            let b = shape(run, base, name, line)?;
            let h = shape(run, head, name, line)?;
            if matches!((&b, &h), (Some(b), Some(h)) if h.shape.lines > b.shape.lines) {
                grew_on.push(variant.clone());
            }
            let mut groups: Vec<GroupSizes> = Vec::new();
            for (side, s) in [(0, &b), (1, &h)] {
                for (group, size) in s.iter().flat_map(|s| s.groups.iter()) {
                    let at = match groups.iter().position(|g| g.name == *group) {
                        Some(i) => i,
                        None => {
                            groups.push(GroupSizes {
                                name: group.clone(),
                                base: None,
                                head: None,
                            });
                            groups.len() - 1
                        }
                    };
                    match side {
                        0 => groups[at].base = *size,
                        _ => groups[at].head = *size,
                    }
                }
            }
            let (members, holes) = match (&b, &h) {
                (Some(b), Some(h)) => (
                    moves(run, (base, head), name, line)?,
                    hole_changes(&b.holes, &h.holes),
                ),
                _ => (Vec::new(), Vec::new()),
            };
            on.push(StructOn {
                variant: variant.clone(),
                cacheline: line,
                base: b.map(|s| s.shape),
                head: h.map(|s| s.shape),
                groups,
                members,
                holes,
            });
        }
        structs.push(StructReview {
            name: name.clone(),
            header: header.clone(),
            on,
            grew_on,
        });
    }
    let grown = structs.iter().filter(|s| !s.grew_on.is_empty()).count();
    let mut asserts = Vec::new();
    for (ty, file) in &review.checks {
        let (_, found) = crate::csource::check_function::read(file, ty)?;
        let shown = file
            .strip_prefix(&review.tree)
            .unwrap_or(file)
            .display()
            .to_string();
        // Each build's layout of the struct once, for all its asserts.
        let laid: Vec<(Laid, Laid)> = pairs
            .iter()
            .map(|(base, head)| (laid_out(run, base, ty), laid_out(run, head, ty)))
            .collect();
        for a in &found {
            let on: Vec<(Verdict, Verdict)> = laid
                .iter()
                .map(|(base, head)| (verdict(base, ty, a), verdict(head, ty, a)))
                .collect();
            let fails_on = on
                .iter()
                .zip(&names)
                .filter(|((_, h), _)| matches!(h, Verdict::Fails { .. }))
                .map(|(_, v)| v.clone())
                .collect();
            asserts.push(AssertReview {
                ty: ty.clone(),
                file: shown.clone(),
                line: a.line,
                text: match &a.what {
                    Asserted::Size { text, .. } => format!("{} <= {text}", a.group),
                    Asserted::Member(m) => format!("{m} in {}", a.group),
                },
                on,
                fails_on,
            });
        }
    }
    // The rules given, or those drafted from the tree for the reviewed
    // structs: each draft with its struct as its one root.
    let mut notes = review.notes.clone();
    let drafts = match run.rules_files.is_empty() {
        true => drafted(run, review, &pairs, &reviewed, &mut notes)?,
        false => Vec::new(),
    };
    let roots: Vec<[String; 1]> = drafts.iter().map(|d| [d.name.clone()]).collect();
    let sets: Vec<(&Rules, Roots<'_>)> = match run.rules_files.is_empty() {
        true => drafts
            .iter()
            .zip(&roots)
            .filter_map(|(d, root)| Some((d.rules.as_ref()?, Roots::Types(root))))
            .collect(),
        false => vec![(&run.rules, Roots::FromRules)],
    };
    let (findings, compared) = match sets.is_empty() {
        true => (Vec::new(), None),
        false => {
            let (findings, roots, variants) = findings_changed(run, &pairs, &names, &sets)?;
            let compared = Compared {
                files: run
                    .rules_files
                    .iter()
                    .map(|f| f.display().to_string())
                    .collect(),
                drafted: drafts.iter().map(|d| d.name.clone()).collect(),
                roots,
                variants,
            };
            (findings, Some(compared))
        }
    };
    let stores = match review.code.is_empty() || !review.stores {
        true => None,
        false => match stores_changed(run, review, &pairs) {
            Ok(changed) => changed,
            Err(e) => {
                notes.push(format!("needless stores not compared: {e}"));
                None
            }
        },
    };
    let introduced = findings.iter().map(|f| f.introduced.len()).sum();
    let introduced_errors = findings
        .iter()
        .flat_map(|f| &f.introduced)
        .filter(|p| p.severity == Severity::Error)
        .count();
    let failures = asserts
        .iter()
        .filter(|a| a.on.iter().any(|(_, h)| matches!(h, Verdict::Fails { .. })))
        .count();
    let broken_at_head: Vec<String> = broken
        .iter()
        .filter(|b| b.side == "head")
        .map(|b| b.variant.clone())
        .collect();
    for opened in run.builds.iter().filter(|o| o.failed.is_none()) {
        notes.extend(run.view(opened)?.tagged_notes());
    }
    Ok(ReviewReport {
        tree: review.tree.display().to_string(),
        base: review.base.0.clone(),
        base_commit: review.base.1.clone(),
        head_commit: review.head.0.clone(),
        subject: review.head.1.clone(),
        variants: names,
        structs,
        asserts,
        failures,
        failed: failures > 0 || !broken_at_head.is_empty(),
        broken_at_head,
        broken,
        grown,
        findings,
        introduced,
        introduced_errors,
        compared,
        stores_added: stores.as_ref().map_or(0, |s| s.added.len()),
        stores,
        notes: crate::report::unique_notes(notes),
    })
}

/// What a root embedding a reviewed struct shows where a touched struct
/// shows its header.
const EMBEDDING: &str = "embeds a reviewed struct";

/// The rules of the reviewed structs drafted from the tree's source (as
/// `draft --source-tree` drafts them) on the variants that compile at
/// HEAD, with a note of what was read; none when no variant compiles
/// there.
fn drafted(
    run: &Run,
    review: &Review,
    pairs: &[(&Opened, &Opened)],
    reviewed: &[(String, String)],
    notes: &mut Vec<String>,
) -> Result<Vec<Draft>> {
    let heads: Vec<&Opened> = pairs
        .iter()
        .map(|(_, head)| *head)
        .filter(|h| h.failed.is_none())
        .collect();
    let Some(first) = heads.first() else {
        return Ok(Vec::new());
    };
    let names: Vec<String> = reviewed.iter().map(|(n, _)| n.clone()).collect();
    let wanted = run.with_enclosing(first, &names)?;
    let declarations = run.declarations_through(first, &review.tree, &wanted)?;
    let tree = review.tree.display();
    let read = vec![format!(
        "source {tree} at HEAD {}: drafted by cachelint review",
        review.head.0
    )];
    let drafts = run.drafts(&heads, &names, &declarations, &read)?;
    notes.push(format!(
        "no rules given: {} drafted from {tree} ({} declarations about {}) and checked at \
         the base and HEAD; `cachelint draft --source-tree {tree} BUILD {}` prints each draft",
        drafts
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        declarations.len(),
        wanted.join(", "),
        names.join(" ")
    ));
    Ok(drafts)
}

/// The needless stores (as `audit` finds them, from the evidence index of
/// each revision's whole tree) of the files the patch changes: those at
/// HEAD not at the base and the other way round. The base is the tree as
/// a private linked copy with the patch's files as the base has them.
/// `None` when no variant compiles (no types to follow accesses through).
fn stores_changed(
    run: &Run,
    review: &Review,
    pairs: &[(&Opened, &Opened)],
) -> Result<Option<StoresChange>> {
    let Some(through) = pairs
        .iter()
        .flat_map(|(base, head)| [*head, *base])
        .find(|o| o.failed.is_none())
    else {
        return Ok(None);
    };
    let revision = format!("{} {}", review.base.1, review.head.0);
    let base_tree = crate::variant::linked_copy(&review.tree, &revision, &review.code)?;
    let under: Vec<PathBuf> = review.code.iter().map(|(f, _)| PathBuf::from(f)).collect();
    let read = |tree: &Path| -> Result<Vec<StoreFinding>> {
        let declarations = run.needless_stores_through(through, tree, None)?;
        Ok(needless_stores(&declarations, &under)
            .iter()
            .enumerate()
            .map(|(i, f)| StoreFinding::new(i + 1, f))
            .collect())
    };
    let (base, head) = (read(&base_tree)?, read(&review.tree)?);
    // The same store is the same function storing the same value the
    // same way to the same member, wherever the patch moved its line.
    let key = |f: &StoreFinding| {
        (
            f.file.clone(),
            f.function.clone(),
            f.root.clone(),
            f.members.clone(),
            f.store.clone(),
            f.how.clone(),
            f.value.clone(),
        )
    };
    let only = |these: &[StoreFinding], not: &[StoreFinding]| -> Vec<StoreFinding> {
        let mut out: Vec<StoreFinding> = these
            .iter()
            .filter(|f| !not.iter().any(|n| key(n) == key(f)))
            .cloned()
            .collect();
        for (i, f) in out.iter_mut().enumerate() {
            f.rank = i + 1;
        }
        out
    };
    Ok(Some(StoresChange {
        files: review.code.iter().map(|(f, _)| f.clone()).collect(),
        added: only(&head, &base),
        removed: only(&base, &head),
    }))
}

/// Each rules set's findings at the base against those at HEAD, per
/// variant and root both revisions have: the pairs introduced and fixed;
/// and the roots and variants compared.
#[allow(clippy::type_complexity)]
fn findings_changed(
    run: &Run,
    pairs: &[(&Opened, &Opened)],
    names: &[String],
    sets: &[(&Rules, Roots<'_>)],
) -> Result<(Vec<FindingsChange>, Vec<String>, Vec<String>)> {
    let mut out = Vec::new();
    let (mut roots, mut variants) = (Vec::new(), Vec::new());
    for ((base, head), variant) in pairs.iter().zip(names) {
        if base.failed.is_some() || head.failed.is_some() {
            continue;
        }
        variants.push(variant.clone());
        for (rules, roots_of) in sets {
            let analysed = |o: &Opened| -> Result<_> {
                let view = run.view(o)?;
                analyze(run, &view, rules, run.line(o), *roots_of)
            };
            let (old, new) = (analysed(base)?, analysed(head)?);
            for n in &new.roots {
                let Some(o) = old
                    .roots
                    .iter()
                    .find(|o| o.analysis.root == n.analysis.root)
                else {
                    continue;
                };
                if !roots.contains(&n.analysis.root) {
                    roots.push(n.analysis.root.clone());
                }
                let c = compare::compare(&o.analysis, &n.analysis);
                let (introduced, fixed): (Vec<Pair>, Vec<Pair>) = (
                    c.introduced().into_iter().cloned().collect(),
                    c.fixed().into_iter().cloned().collect(),
                );
                if !introduced.is_empty() || !fixed.is_empty() {
                    out.push(FindingsChange {
                        variant: variant.clone(),
                        root: n.analysis.root.clone(),
                        introduced,
                        fixed,
                    });
                }
            }
        }
    }
    Ok((out, roots, variants))
}

/// One revision's struct, as `review` compares it.
struct Shaped {
    /// Its size and lines.
    shape: Shape,
    /// Its kernel cacheline groups' sizes.
    groups: Vec<(String, Option<u64>)>,
    /// Its holes: the member before each (by path) and its offset and size.
    holes: Vec<(Option<String>, u64, u64)>,
}

/// Struct `name` of `opened`, with lines of `line` bytes; `None` when the
/// build has no such struct.
fn shape(run: &Run, opened: &Opened, name: &str, line: u64) -> Result<Option<Shaped>> {
    let Some(found) = opened.present.get(name) else {
        return Ok(None);
    };
    let view = run.view(opened)?;
    let laid = layout::layout(view.table(), found.id, line, Depth::Direct)?;
    let groups = laid
        .groups
        .iter()
        .map(|g| (g.name.clone(), g.end.map(|e| e.saturating_sub(g.begin))))
        .collect();
    let mut holes = Vec::new();
    let mut before = None;
    for item in &laid.items {
        match item {
            layout::Item::Member(f) => before = Some(f.path.clone()),
            layout::Item::Hole { offset, size, .. } => holes.push((before.clone(), *offset, *size)),
            _ => {}
        }
    }
    Ok(Some(Shaped {
        shape: Shape {
            size: laid.size,
            lines: laid.size.div_ceil(line).max(1),
        },
        groups,
        holes,
    }))
}

/// Struct `name`'s own members that the patch adds, removes, moves or
/// resizes on one variant (the base and HEAD builds, both with it).
fn moves(
    run: &Run,
    (base, head): (&Opened, &Opened),
    name: &str,
    line: u64,
) -> Result<Vec<MemberChange>> {
    let (Some(b), Some(h)) = (base.present.get(name), head.present.get(name)) else {
        return Ok(Vec::new());
    };
    let (old, new) = (run.view(base)?, run.view(head)?);
    let old_side = Side {
        table: old.table(),
        id: b.id,
    };
    let new_side = Side {
        table: new.table(),
        id: h.id,
    };
    let mut d = diff::diff(name, old_side, new_side, line)?;
    d.limit_depth(ListDepth::Levels(NonZeroUsize::MIN));
    Ok(d.members)
}

/// The holes HEAD opens and closes: a hole is the same at both revisions
/// when it follows the same member and has the same size, wherever an
/// earlier change moved it.
fn hole_changes(
    base: &[(Option<String>, u64, u64)],
    head: &[(Option<String>, u64, u64)],
) -> Vec<HoleChange> {
    let absent = |from: &[(Option<String>, u64, u64)], h: &(Option<String>, u64, u64)| {
        !from.iter().any(|o| o.0 == h.0 && o.2 == h.2)
    };
    let change = |opened: bool, (after, offset, size): &(Option<String>, u64, u64)| HoleChange {
        opened,
        offset: *offset,
        size: *size,
        after: after.clone(),
    };
    let opened = head
        .iter()
        .filter(|h| absent(base, h))
        .map(|h| change(true, h));
    let closed = base
        .iter()
        .filter(|b| absent(head, b))
        .map(|b| change(false, b));
    opened.chain(closed).collect()
}

/// Struct `ty` as a build lays it out, for its kernel asserts.
enum Laid<'r> {
    /// The build did not compile.
    Broken,
    /// It has no such struct.
    Absent,
    /// Its types could not be laid out.
    Unlaid,
    /// Its groups, and its members' places.
    Out {
        /// The build's types.
        view: View<'r>,
        /// The struct.
        id: crate::model::TypeId,
        /// Its kernel cacheline groups.
        groups: Vec<layout::Group>,
    },
}

/// [`Laid`] of struct `ty` in `opened`.
fn laid_out<'r>(run: &'r Run, opened: &'r Opened, ty: &str) -> Laid<'r> {
    if opened.failed.is_some() {
        return Laid::Broken;
    }
    let Some(found) = opened.present.get(ty) else {
        return Laid::Absent;
    };
    let Ok(view) = run.view(opened) else {
        return Laid::Unlaid;
    };
    match layout::layout(view.table(), found.id, run.line(opened), Depth::Direct) {
        Ok(laid) => Laid::Out {
            view,
            id: found.id,
            groups: laid.groups,
        },
        Err(_) => Laid::Unlaid,
    }
}

/// Kernel assert `a` of struct `ty` on a build that laid it out as
/// `laid`, as the compiler would judge it (`BUILD_BUG_ON`): a group's end
/// minus begin at most the budget; a member's bytes inside its group.
fn verdict(laid: &Laid<'_>, ty: &str, a: &KernelAssert) -> Verdict {
    let skipped = |why: String| Verdict::Skipped { why };
    let (table, id, groups) = match laid {
        Laid::Broken => return skipped("does not compile".into()),
        _ if !a.conditions.is_empty() => return skipped(format!("under {}", a.conditions[0])),
        Laid::Absent => return skipped(format!("no struct {ty}")),
        Laid::Unlaid => return skipped("not laid out".into()),
        Laid::Out { view, id, groups } => (view.table(), *id, groups),
    };
    let Some(group) = groups.iter().find(|g| g.name == a.group) else {
        return Verdict::Fails {
            measured: None,
            why: format!("no group {}", a.group),
        };
    };
    let Some(end) = group.end else {
        return Verdict::Fails {
            measured: None,
            why: format!("group {} has no end marker", a.group),
        };
    };
    match &a.what {
        Asserted::Size { text, value } => {
            let measured = end.saturating_sub(group.begin);
            match value {
                None => Verdict::Skipped {
                    why: format!("budget '{text}' is not integer arithmetic"),
                },
                Some(budget) if measured <= *budget => Verdict::Holds { measured },
                Some(budget) => Verdict::Fails {
                    measured: Some(measured),
                    why: format!("{measured} bytes, over the budget of {budget}"),
                },
            }
        }
        Asserted::Member(member) => match crate::run::locate(table, id, member) {
            None => Verdict::Fails {
                measured: None,
                why: format!("no member {member}"),
            },
            Some((offset, size, _)) if offset >= group.begin && offset + size <= end => {
                Verdict::Holds { measured: offset }
            }
            Some((offset, size, _)) => Verdict::Fails {
                measured: Some(offset),
                why: format!(
                    "bytes {offset}-{} outside the group's {}-{end}",
                    offset + size,
                    group.begin
                ),
            },
        },
    }
}
