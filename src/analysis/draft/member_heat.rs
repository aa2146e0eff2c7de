//! How hot a drafted struct's member is: the fast paths of the source
//! that touch it, weighed by their callers and entry points, or, without
//! a source tree, perf's samples on it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::{Facts, MemberFacts, about, not_counted};
use crate::evidence::source::{Said, Write};
use crate::path::within;

/// Entry points named in a heat's evidence, at most.
const MAX_ENTRIES_LISTED: usize = 3;

/// How hot member `m` is, and why in words: from the source, the
/// functions that read or write it on a fast path (not while the object
/// is built, not on the control path, not in a function named as an
/// initialiser), each counted once, and those a fast entry point reaches
/// twice with each of their callers it reaches too (`free_irq()`, called
/// from 1,707 functions, drivers' teardowns, and reached from one rare
/// system call, is no hotter for them); without a source tree, perf's
/// samples on it.
pub(super) fn heat(facts: &Facts<'_>, m: &MemberFacts) -> Option<(u64, String)> {
    let touches = |said: &Said| {
        matches!(
            said,
            Said::Written(..) | Said::Read { .. } | Said::Locked(_)
        )
    };
    let functions = touching(facts, m, touches);
    if !functions.is_empty() {
        let entries: BTreeSet<&str> = functions.values().filter_map(|(e, ..)| *e).collect();
        let reached = functions.values().filter(|(e, ..)| e.is_some()).count();
        let hot: usize = functions
            .values()
            .filter(|(e, ..)| e.is_some())
            .map(|(_, _, h)| h)
            .sum();
        let all: usize = functions.values().map(|(_, c, _)| c).sum();
        let heat = weigh(&functions);
        let mut why = match functions.len() {
            1 => format!("heat {heat}: 1 fast-path function touches it"),
            n => format!("heat {heat}: {n} fast-path functions touch it"),
        };
        if reached > 0 {
            // `a system call (sys_brk)`, by kind: `a system call (sys_brk,
            // sys_mmap and 3 more)`.
            let mut kinds: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for e in &entries {
                let (kind, name) = e.split_once(" (").unwrap_or((e, ""));
                kinds
                    .entry(kind)
                    .or_default()
                    .push(name.trim_end_matches(')'));
            }
            let listed: Vec<String> = kinds
                .iter()
                .map(|(kind, names)| {
                    let more = names.len().saturating_sub(MAX_ENTRIES_LISTED);
                    let shown = names[..names.len().min(MAX_ENTRIES_LISTED)].join(", ");
                    match more {
                        0 => format!("{kind} ({shown})"),
                        _ => format!("{kind} ({shown} and {more} more)"),
                    }
                })
                .collect();
            let _ = write!(
                why,
                "; {reached} reached from {}, counted twice with the {} reached too",
                listed.join(", "),
                callers(hot)
            );
        }
        if all > hot {
            let _ = write!(
                why,
                "; {} no fast entry point reaches not counted",
                callers(all - hot)
            );
        }
        return Some((heat, why));
    }
    // One scale a struct: perf's samples only without a source tree.
    if !facts.declarations.is_empty() {
        return None;
    }
    let samples: f64 = facts
        .placed
        .iter()
        .filter(|p| within(&p.path, &m.path))
        .map(|p| p.sample.samples)
        .sum();
    (samples >= 1.0).then(|| {
        let heat = samples.round() as u64;
        (heat, format!("heat {heat}: perf's samples on it"))
    })
}

/// How hot member `m`'s stores are, how often its line is taken
/// exclusive: [`heat`] of the functions that store to it on the fast
/// path, a store made only on a change or once from NULL aside. `None`
/// when none does. A member every fast path reads and one setup path
/// writes dirties its line seldom, however hot its reads.
pub(super) fn write_heat(facts: &Facts<'_>, m: &MemberFacts) -> Option<u64> {
    let stores = |said: &Said| matches!(said, Said::Written(w, _) if !matches!(w, Write::Tested(_) | Write::Publish(_)));
    let functions = touching(facts, m, stores);
    (!functions.is_empty()).then(|| weigh(&functions))
}

/// The heat of `functions` (see [`touching`]): each function is a path
/// to the member; one a fast entry point reaches counts twice, and so
/// does each of its callers an entry point reaches. The other callers
/// say how widely it is used, not how often (a driver's teardown).
fn weigh(functions: &Touching<'_>) -> u64 {
    functions
        .values()
        .map(|(e, _, h)| if e.is_some() { 2 * (1 + h) } else { 1 })
        .sum::<usize>() as u64
}

/// Per function: the entry point reaching it, its callers, and those of
/// them an entry point reaches.
type Touching<'f> = BTreeMap<&'f str, (Option<&'f str>, usize, usize)>;

/// Per function whose fast-path declarations about `m` say what `wanted`
/// takes: the entry point reaching it, and its callers (all, and those
/// an entry point reaches).
fn touching<'f>(
    facts: &'f Facts<'_>,
    m: &MemberFacts,
    wanted: impl Fn(&Said) -> bool,
) -> Touching<'f> {
    let mut functions = Touching::new();
    for d in facts
        .declarations
        .iter()
        .filter(|d| about(d, &facts.ty, &m.path))
    {
        if let (true, None, Some(f)) = (wanted(&d.said), not_counted(d), &d.function) {
            let (entry, callers, hot) = functions.entry(f).or_default();
            if entry.is_none() {
                *entry = d.entry.as_deref();
            }
            (*callers, *hot) = (d.callers, d.hot_callers);
        }
    }
    functions
}

/// `n` callers, in words.
fn callers(n: usize) -> String {
    match n {
        1 => "1 caller".into(),
        n => format!("{n} callers"),
    }
}
