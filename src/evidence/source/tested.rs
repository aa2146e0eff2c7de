//! Stores every caller tests for first: a function that sets or clears a
//! bit of its parameter's member, called only after a test of that bit
//! (`blk_mq_sched_restart()`'s `if (test_bit(BLK_MQ_S_SCHED_RESTART,
//! &hctx->state)) __blk_mq_sched_restart(hctx);`) or of its twin
//! (`if (bdev_test_flag(b, F)) return false; bdev_set_flag(b, F);`),
//! stores only on a change, as if it tested the bit itself (see
//! [`super::Write::Tested`]): no needless store, and no fast path's
//! writer of the member.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use super::callers::{Sites, Test};
use super::graph::{Graph, Own, tests_of};
use super::{Declaration, Needless, Said, Store, Write, setters};

/// Per function, the tests every call of it seen makes first.
pub(super) type Tested = HashMap<String, Box<[Test]>>;

/// The tests every call of each function of `sites` makes first (of
/// the graph's `tests`, see [`super::callers::Call::tested`]); none for
/// a function also called through a pointer (`pointed`), whose calls
/// nobody sees.
pub(super) fn by_callers(
    sites: &Sites<'_>,
    pointed: &HashSet<&str>,
    tests: &[Box<[Test]>],
) -> Tested {
    sites
        .iter()
        .filter(|(f, _)| !pointed.contains(*f))
        .filter_map(|(f, calls)| {
            let (first, rest) = calls.split_first()?;
            let mut common: Vec<&Test> = tests_of(tests, first).iter().collect();
            for c in rest {
                if common.is_empty() {
                    break;
                }
                common.retain(|t| tests_of(tests, c).contains(t));
            }
            (!common.is_empty()).then(|| (f.to_string(), common.into_iter().cloned().collect()))
        })
        .collect()
}

/// Does test `t` cover needless store `n` through parameter `param` to
/// member `path`: a twin's test any store, a bit's test its bit?
fn covers(t: &Test, param: usize, path: &str, n: &Needless) -> bool {
    match t {
        Test::Twin => true,
        Test::Bit { arg, member, bit } => {
            n.kind == Store::Bit
                && *arg == param
                && (member.as_ref() == path || member.ends_with(&format!(".{path}")))
                && bit
                    .chars()
                    .eq(n.value.chars().filter(|c| !c.is_whitespace()))
        }
    }
}

/// Where a store is said: function, file, line, struct and member.
type At = (String, PathBuf, usize, String, String);

/// Marks in `declarations` the stores `tested` says every caller tests
/// for first: a needless bit store's candidate, and the write at the
/// same place, as made only on a change; with a twin's test, every
/// setting through a parameter. `own` names a file's own functions as
/// the graph does.
pub(super) fn mark(declarations: &mut [Declaration], tested: &Tested, own: &Own) {
    if tested.is_empty() {
        return;
    }
    let tests = |d: &Declaration| -> Option<(&[Test], usize)> {
        let (f, p) = (d.function.as_ref()?, d.param?);
        tested
            .get(Graph::key(own, f, &d.file).as_ref())
            .map(|t| (&t[..], p))
    };
    let at = |d: &Declaration| -> At {
        (
            d.function.clone().unwrap_or_default(),
            d.file.clone(),
            d.line,
            d.ty.clone(),
            d.path.clone(),
        )
    };
    let mut stores: HashSet<At> = HashSet::new();
    for d in declarations.iter_mut() {
        let Some((t, p)) = tests(d) else {
            continue;
        };
        let covered = match &d.said {
            Said::Needless(n) if !n.tested => t.iter().any(|t| covers(t, p, &d.path, n)),
            _ => false,
        };
        if covered {
            stores.insert(at(d));
            if let Said::Needless(n) = &mut d.said {
                n.tested = true;
            }
        }
    }
    for d in declarations.iter_mut() {
        let Some((t, _)) = tests(d) else {
            continue;
        };
        let twin = t.contains(&Test::Twin);
        let tested = match &d.said {
            Said::Written(Write::Tested(_), _) => false,
            Said::Written(w, _) => (twin && setters::sets(w)) || stores.contains(&at(d)),
            _ => false,
        };
        if tested && let Said::Written(w, _) = &mut d.said {
            *w = w.clone().on_change();
        }
    }
}
