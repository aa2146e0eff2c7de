//! perf's verdict on a drafted struct's member: its shares and the
//! instructions sampled on it, per function, as evidence, and the class
//! they make (a locked update, plain stores and their functions, loads).

use std::collections::BTreeMap;

use super::{Facts, MemberFacts, Verdict, context_name, sorted};
use crate::analysis::draft_types::{Evidence, Mark};
use crate::analysis::samples::Placed;
use crate::evidence::perf::{Format, Op};
use crate::path::within;

/// perf's verdict on member `m`.
pub(super) fn measured(
    facts: &Facts<'_>,
    m: &MemberFacts,
    evidence: &mut Vec<Evidence>,
) -> Option<Verdict> {
    let mine: Vec<&Placed<'_>> = facts
        .placed
        .iter()
        .filter(|p| within(&p.path, &m.path))
        .collect();
    if mine.is_empty() {
        return None;
    }
    // Shares as perf printed them, per file.
    for p in mine.iter().filter(|p| p.sample.op.is_none()) {
        let of = match p.file.format {
            Format::Report => "of all samples".to_owned(),
            _ => format!("of {}'s samples", p.sample.ty),
        };
        evidence.push(Evidence {
            mark: Mark::Measured,
            text: format!(
                "{} {of}, about {:.0} ({}:{})",
                p.sample.shown,
                p.sample.samples,
                p.file.path.display(),
                p.sample.line
            ),
        });
    }
    // Instructions, per function and what they do.
    let mut by_function: BTreeMap<(String, Op), (f64, usize, String)> = BTreeMap::new();
    for p in mine.iter().filter(|p| p.sample.op.is_some()) {
        let key = (
            p.sample.function.clone().unwrap_or_default(),
            p.sample.op.unwrap_or(Op::Load),
        );
        let e = by_function.entry(key).or_insert((
            0.0,
            0,
            format!("{}:{}", p.file.path.display(), p.sample.line),
        ));
        e.0 += p.sample.samples;
        e.1 += 1;
    }
    let (mut stores, mut loads, mut locked) = (Vec::new(), Vec::new(), false);
    for ((function, op), (samples, n, first)) in &by_function {
        let what = match n {
            1 => op.name().to_owned(),
            n => format!("{n} {}s", op.name()),
        };
        evidence.push(Evidence {
            mark: Mark::Measured,
            text: format!("{what} in {function}, {samples:.0} samples ({first})"),
        });
        match op {
            Op::Locked => locked = true,
            Op::Store | Op::Update => stores.push(context_name(function)),
            Op::Load => loads.push(context_name(function)),
        }
    }
    Some(if locked {
        Verdict::Lockless
    } else if !stores.is_empty() {
        Verdict::Owned {
            write: sorted(stores),
            read: sorted(loads),
        }
    } else {
        Verdict::Read(sorted(loads))
    })
}
