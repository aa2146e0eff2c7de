//! Locks a function's callers hold: a function that writes a member with
//! no lock of its own (`vma_complete()`, `lru_gen_update_size()`) is
//! under lock L when every call of it in the files read holds L, or is
//! made from a function itself under L. The least such assignment (from
//! nothing, rounds until nothing changes): a recursion entered only from
//! itself holds nothing.
//!
//! Calls through function pointers and calls in files not read are not
//! seen, so "every caller" means every call seen; the evidence says how
//! many.

use std::collections::{HashMap, HashSet};

use super::{Declaration, Held, Said};

/// Rounds of the fixpoint, at most: a chain of callers this deep.
const MAX_ROUNDS: usize = 16;

/// One call seen: who calls whom, with the locks held exclusively there.
#[derive(Clone, Debug)]
pub(crate) struct Call {
    /// The function called.
    pub(crate) callee: String,
    /// The function calling it.
    pub(crate) caller: String,
    /// The locks held exclusively at the call.
    pub(crate) held: Vec<Held>,
    /// What each argument passes.
    pub(crate) passed: Vec<Passed>,
    /// The caller runs on the control path (see [`super::Role::Control`]).
    pub(crate) control: bool,
    /// Not a call: the caller names the function as a value (`.rmap_one
    /// = folio_referenced_one`), to be called through the pointer later,
    /// with locks and arguments nobody sees here. For reach only.
    pub(crate) pointer: bool,
    /// Not a call seen: the kernel calls the function through an ops
    /// table on a network path (a driver's `.ndo_start_xmit`, a NAPI
    /// poll), from the function named as the caller. For the network
    /// paths only: heat and the hot paths of needless stores do not
    /// follow it (a poll function's error branch would rank as hot).
    pub(crate) dispatched: bool,
    /// Made in code its function marks as rare (an `if (unlikely(...))`
    /// branch, past an `if (likely(...))` that leaves: see the walker):
    /// for reach and heat, no fast path goes through it.
    pub(crate) rare: bool,
    /// The call's line in its caller's file (1-based; 0 for no call
    /// written there: a pointer's, a dispatch).
    pub(crate) line: u32,
    /// Its caller's file, by its index in the graph's files (see
    /// [`super::graph::Graph::files`]).
    pub(crate) file: u32,
    /// What its caller tests before it makes it (see [`Test`]): 1 + the
    /// index of the list in its walk's tests, then the graph's (see
    /// [`super::graph::Graph::tests`]); 0 for none. An index, not the
    /// list: a whole tree has millions of calls, few of them tested,
    /// and the index takes a call's padding.
    pub(crate) tested: u32,
}

/// A test a caller makes before a call, in a condition the call runs
/// under or past (an `if` around it, one before it that leaves, the left
/// side of `||`/`&&`): what makes the callee's store one on a change when
/// every caller makes it (see [`super::tested`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Test {
    /// The callee's twin, asking of the same arguments what it sets or
    /// clears: `bdev_test_flag(b, F)` before `bdev_set_flag(b, F)`,
    /// `folio_test_idle(f)` before `folio_clear_idle(f)`.
    Twin,
    /// A bit of a member of an argument: `test_bit(BLK_MQ_S_SCHED_RESTART,
    /// &hctx->state)` before `__blk_mq_sched_restart(hctx)`.
    Bit {
        /// The argument, by index.
        arg: usize,
        /// The member's path in the argument's object (`state`).
        member: Box<str>,
        /// The bit, as written, without whitespace.
        bit: Box<str>,
    },
}

impl Call {
    /// A call of `callee` from `caller` with nothing held or passed, on
    /// no path, at no line: what the others add to.
    pub(super) fn between(caller: &str, callee: &str) -> Call {
        Call {
            callee: callee.into(),
            caller: caller.into(),
            held: Vec::new(),
            passed: Vec::new(),
            control: false,
            pointer: false,
            dispatched: false,
            rare: false,
            line: 0,
            file: 0,
            tested: 0,
        }
    }

    /// The kernel's call of `callee` through an ops table, from
    /// `dispatcher` (see [`Call::dispatched`]).
    pub(crate) fn dispatch(dispatcher: &str, callee: &str) -> Call {
        Call {
            pointer: true,
            dispatched: true,
            ..Call::between(dispatcher, callee)
        }
    }
}

/// Moves `from`, the tests of `calls`, to the end of `to`, each call's
/// [`Call::tested`] made an index there.
pub(super) fn rebase(calls: &mut [Call], to: &mut Vec<Box<[Test]>>, from: &mut Vec<Box<[Test]>>) {
    if from.is_empty() {
        return;
    }
    let base = u32::try_from(to.len()).unwrap_or(u32::MAX);
    for c in calls.iter_mut().filter(|c| c.tested > 0) {
        c.tested = c.tested.saturating_add(base);
    }
    to.append(from);
}

/// What an argument of a call passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Passed {
    /// A variable whose object the caller builds (see
    /// [`super::Role::Construction`]).
    Built,
    /// An object the caller tears down (see [`super::Role::Teardown`]).
    Dying,
    /// The caller's own parameter, by index.
    Param(usize),
    /// Anything else.
    Other,
}

/// What a function's callers hold: the locks, and how many calls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Under {
    locks: Vec<Held>,
    calls: usize,
}

/// Two holds of one lock: the same member of its innermost struct
/// (`&pgdat->__lruvec.lru_lock` and `&lruvec->lru_lock` are both
/// `lruvec.lru_lock`), or, unresolved, the same text.
fn same(a: &Held, b: &Held) -> bool {
    match (a.chain.last(), b.chain.last()) {
        (Some(x), Some(y)) => x == y,
        (None, None) => a.text == b.text,
        _ => false,
    }
}

/// The calls of each function defined once, a function's calls of itself
/// and pointers left out: what the callers' locks, construction and the
/// control path are computed from.
pub(super) type Sites<'c> = HashMap<&'c str, Vec<&'c Call>>;

/// The [`Sites`] of `calls` (`defined` counts the definitions by name).
pub(super) fn sites<'c>(calls: &'c [Call], defined: &HashMap<String, usize>) -> Sites<'c> {
    let mut sites: HashMap<&str, Vec<&Call>> = HashMap::new();
    for c in calls {
        if defined.get(&c.callee) == Some(&1) && c.callee != c.caller && !c.pointer {
            sites.entry(c.callee.as_str()).or_default().push(c);
        }
    }
    sites
}

/// How many functions of each name the files define, as their callers
/// see them (the `defined` of [`sites`]), from each file's names (see
/// [`super::Bodies::defined`]) with whether it is a header, and those
/// of its names not `static`. A name one `.c` file defines for all
/// (not `static`) is that function, whatever headers define it too:
/// theirs are its stubs for the configurations that leave the file out
/// (`static inline int alloc_fair_sched_group(..) { return 1; }` in
/// kernel/sched/sched.h), as no build has both. Otherwise every
/// definition counts.
pub(super) fn definitions<'n>(
    files: impl Iterator<Item = (bool, &'n [String], &'n [String])>,
) -> HashMap<String, usize> {
    let (mut in_c, mut in_headers) = (HashMap::new(), HashMap::new());
    let mut external: HashSet<&str> = HashSet::new();
    for (header, defined, ext) in files {
        let counts = match header {
            true => &mut in_headers,
            false => {
                external.extend(ext.iter().map(String::as_str));
                &mut in_c
            }
        };
        for name in defined {
            *counts.entry(name.as_str()).or_insert(0usize) += 1;
        }
    }
    let mut out: HashMap<String, usize> = in_c
        .iter()
        .map(|(name, n)| (name.to_string(), *n))
        .collect();
    for (name, n) in in_headers {
        let the_c_files = in_c.get(name) == Some(&1) && external.contains(name);
        if !the_c_files {
            *out.entry(name.to_owned()).or_default() += n;
        }
    }
    out
}

/// The functions named as a value (`named`, and the callees of the
/// pointer calls in `calls`): called through a pointer too, from places
/// and with arguments nobody sees here.
pub(super) fn pointed<'c>(calls: &'c [Call], named: &'c HashSet<String>) -> HashSet<&'c str> {
    calls
        .iter()
        .filter(|c| c.pointer)
        .map(|c| c.callee.as_str())
        .chain(named.iter().map(String::as_str))
        .collect()
}

/// Per function of `sites`, the locks every call of it holds, directly
/// or through its caller.
pub(super) fn held_by_callers(sites: &Sites<'_>) -> HashMap<String, Under> {
    let mut under: HashMap<String, Under> = HashMap::new();
    for _ in 0..MAX_ROUNDS {
        let mut next: HashMap<String, Under> = HashMap::new();
        for (callee, calls) in sites {
            // By reference: a whole tree has millions of calls, and most
            // hold nothing.
            let mut common: Option<Vec<&Held>> = None;
            for c in calls {
                // Outermost first: the caller's callers', then its own.
                let callers = under.get(&c.caller).map_or(&[][..], |u| &u.locks[..]);
                let here = || callers.iter().chain(&c.held);
                common = Some(match common {
                    None => here().collect(),
                    Some(so_far) => so_far
                        .into_iter()
                        .filter(|h| here().any(|x| same(h, x)))
                        .collect(),
                });
                if common.as_ref().is_some_and(Vec::is_empty) {
                    break;
                }
            }
            let mut locks: Vec<Held> = common.unwrap_or_default().into_iter().cloned().collect();
            locks.dedup_by(|a, b| same(a, b));
            // A mutex of the whole system is one wherever a file that
            // defines it takes it (`sched_domains_mutex`, topology.c's):
            // other files' holds of it do not know.
            for lock in locks.iter_mut().filter(|l| !l.global_mutex) {
                lock.global_mutex = calls.iter().any(|c| {
                    let callers = under.get(&c.caller).map_or(&[][..], |u| &u.locks[..]);
                    callers
                        .iter()
                        .chain(&c.held)
                        .any(|x| x.global_mutex && same(x, lock))
                });
            }
            if !locks.is_empty() {
                next.insert(
                    (*callee).to_owned(),
                    Under {
                        locks,
                        calls: calls.len(),
                    },
                );
            }
        }
        if next == under {
            break;
        }
        under = next;
    }
    under
}

/// Adds to each write in `declarations` the locks its function's callers
/// hold (`under`, see [`held_by_callers`]) that it does not hold itself,
/// each said to be held by the callers: before its own, outermost first,
/// as taken (the innermost lock is the one that protects the write: the
/// `desc->lock` that `__setup_irq()` takes after `desc->request_mutex`).
pub(super) fn add_callers_locks(declarations: &mut [Declaration], under: &HashMap<String, Under>) {
    for d in declarations.iter_mut() {
        let Some(u) = d.function.as_ref().and_then(|f| under.get(f)) else {
            continue;
        };
        let function = d.function.clone().unwrap_or_default();
        let Said::Written(_, held) = &mut d.said else {
            continue;
        };
        let mut outer: Vec<Held> = u
            .locks
            .iter()
            .filter(|lock| !held.iter().any(|h| same(h, lock)))
            .map(|lock| Held {
                how: format!(
                    "{} in every caller of {function}, {} call{} seen",
                    lock.taken(),
                    u.calls,
                    if u.calls == 1 { "" } else { "s" }
                ),
                ..lock.clone()
            })
            .collect();
        outer.append(held);
        *held = outer;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock(name: &str) -> Held {
        Held {
            member: Some(("s".into(), name.into())),
            chain: vec![("s".into(), name.into())],
            text: format!("&s->{name}"),
            how: "spin_lock".into(),
            shared: false,
            global_mutex: false,
        }
    }

    fn call(caller: &str, callee: &str, held: &[&str]) -> Call {
        Call {
            held: held.iter().map(|l| lock(l)).collect(),
            ..Call::between(caller, callee)
        }
    }

    /// A fast-path plain store to member `path` of `s` in `function`,
    /// with lock `own` of `s` held.
    fn written(path: &str, function: &str, own: &str) -> Declaration {
        Declaration {
            ty: "s".into(),
            path: path.into(),
            said: Said::Written(super::super::Write::Assign, vec![lock(own)]),
            function: Some(function.into()),
            file: "s.c".into(),
            line: 1,
            role: super::super::Role::Fast,
            param: None,
            entry: None,
            callers: 0,
            hot_callers: 0,
            paths: Vec::new(),
        }
    }

    #[test]
    fn a_mutex_of_the_whole_system_stays_one_whoever_else_holds_it() {
        // topology.c defines sched_domains_mutex and holds it around
        // cpu_attach_domain(); its caller's caller, in another file,
        // holds it too, not knowing it is the whole system's.
        let mutex = |global_mutex: bool| Held {
            global_mutex,
            ..lock("sched_domains_mutex")
        };
        let mut attach = call("build", "cpu_attach_domain", &[]);
        attach.held = vec![mutex(true)];
        let mut build = call("cpuset", "build", &[]);
        build.held = vec![mutex(false)];
        let defined: HashMap<String, usize> = [("cpu_attach_domain", 1), ("build", 1)]
            .into_iter()
            .map(|(n, k)| (n.to_owned(), k))
            .collect();
        let calls = [attach, build];
        let under = held_by_callers(&sites(&calls, &defined));
        let locks = &under["cpu_attach_domain"].locks;
        assert_eq!(locks.len(), 1, "{locks:?}");
        assert!(locks[0].global_mutex, "{locks:?}");
    }

    #[test]
    fn callers_locks_come_before_the_writes_own_outermost_first() {
        // __setup_irq() takes request_mutex, then lock, and calls
        // irq_pm_install_action(), which its caller calls under outer:
        // the write's locks as taken, so the innermost is last.
        let calls = [
            call("caller", "__setup_irq", &["outer"]),
            call("__setup_irq", "install", &["request_mutex", "lock"]),
        ];
        let defined: HashMap<String, usize> = [("__setup_irq", 1), ("install", 1)]
            .into_iter()
            .map(|(n, k)| (n.to_owned(), k))
            .collect();
        let under = held_by_callers(&sites(&calls, &defined));
        let mut ds = [written("nr_actions", "install", "own")];
        add_callers_locks(&mut ds, &under);
        let Said::Written(_, held) = &ds[0].said else {
            unreachable!()
        };
        let texts: Vec<&str> = held.iter().map(|h| h.text.as_str()).collect();
        assert_eq!(
            texts,
            ["&s->outer", "&s->request_mutex", "&s->lock", "&s->own"]
        );
    }

    #[test]
    fn a_lock_every_call_holds_directly_or_through_its_caller() {
        let calls = [
            // leaf: called under l by a, and by b, which c calls under l.
            call("a", "leaf", &["l"]),
            call("b", "leaf", &[]),
            call("c", "b", &["l", "m"]),
            // partly: one call without the lock.
            call("a", "partly", &["l"]),
            call("d", "partly", &[]),
            // a recursion entered only from itself holds nothing.
            call("r", "r", &["l"]),
            // twice defined: no one knows which is called.
            call("a", "twice", &["l"]),
        ];
        let defined: HashMap<String, usize> =
            [("leaf", 1), ("b", 1), ("partly", 1), ("r", 1), ("twice", 2)]
                .into_iter()
                .map(|(n, k)| (n.to_owned(), k))
                .collect();
        let under = held_by_callers(&sites(&calls, &defined));
        let locks = |f: &str| {
            under
                .get(f)
                .map(|u| u.locks.iter().map(|h| h.text.clone()).collect::<Vec<_>>())
                .unwrap_or_default()
        };
        assert_eq!(locks("leaf"), ["&s->l"]);
        assert_eq!(locks("b"), ["&s->l", "&s->m"]);
        assert!(locks("partly").is_empty());
        assert!(locks("r").is_empty());
        assert!(locks("twice").is_empty());

        let mut ds = [written("x", "leaf", "m")];
        add_callers_locks(&mut ds, &held_by_callers(&sites(&calls, &defined)));
        let Said::Written(_, held) = &ds[0].said else {
            unreachable!()
        };
        let taken: Vec<String> = held.iter().map(Held::taken).collect();
        assert_eq!(
            taken,
            [
                "spin_lock() in every caller of leaf, 2 calls seen",
                "spin_lock()"
            ]
        );
    }
}
