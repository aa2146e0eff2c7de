//! The calls of every file read, joined into one graph of functions by
//! name. A `.c` file's `static` function that another file defines too
//! (vmscan.c's `handle_write_error()` and dm-vdo's) is its file's own:
//! the calls it makes and its file's calls of it name it with the file
//! (`handle_write_error@mm/vmscan.c`), so that no path runs from one
//! file's function into the other's callees. The system calls are the
//! bodies of `SYSCALL_DEFINE`, not whatever is named `sys_*`
//! (lib/sys_info.c's `sys_info()` dumps state after a panic).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::Bodies;
use super::callers::{Call, Test, rebase};

/// What a walk of one file gives the graph (see [`Bodies`]).
pub(super) struct Walked {
    pub(super) calls: Vec<Call>,
    pub(super) tests: Vec<Box<[Test]>>,
    pub(super) defined: Vec<String>,
    pub(super) external: Vec<String>,
    pub(super) named: Vec<String>,
    pub(super) syscalls: Vec<String>,
    pub(super) one_liners: Vec<String>,
}

impl Walked {
    /// The calls and names of `bodies`.
    pub(super) fn of(bodies: Bodies) -> Walked {
        Walked {
            calls: bodies.calls,
            tests: bodies.tests,
            defined: bodies.defined,
            external: bodies.external,
            named: bodies.named,
            syscalls: bodies.syscalls,
            one_liners: bodies.one_liners,
        }
    }
}

/// The calls of the files read, and what the summary of them needs
/// besides.
#[derive(Default)]
pub(super) struct Graph {
    /// Every call, a file's own functions named with their file.
    pub(super) calls: Vec<Call>,
    /// What callers test before their calls, by [`Call::tested`] - 1.
    pub(super) tests: Vec<Box<[Test]>>,
    /// The functions named as a value (see [`Bodies::named`]).
    pub(super) named: HashSet<String>,
    /// The files' own functions: per name, the files that have one.
    pub(super) own: Own,
    /// The system calls' bodies (`sys_brk` of `SYSCALL_DEFINE1(brk, ..)`).
    pub(super) syscalls: HashSet<String>,
    /// The files added, in order: a call's [`Call::file`] indexes it.
    pub(super) files: Vec<PathBuf>,
    /// The functions whose body is one expression (see
    /// [`Bodies::one_liners`]), a file's own named with their file.
    pub(super) one_liners: HashSet<String>,
}

impl Graph {
    /// Adds what the walk of `file` gave, with `defined` (how many
    /// functions of each name the files define, see
    /// [`super::callers::definitions`]).
    pub(super) fn add(&mut self, file: &Path, walked: Walked, defined: &HashMap<String, usize>) {
        let Walked {
            mut calls,
            mut tests,
            defined: here,
            external,
            named,
            syscalls,
            mut one_liners,
        } = walked;
        let index = u32::try_from(self.files.len()).unwrap_or(u32::MAX);
        self.files.push(file.to_owned());
        for c in &mut calls {
            c.file = index;
        }
        // A header's `static inline` is every includer's: theirs to call
        // by its name.
        if !super::is_header(file) {
            let own: HashSet<&str> = here
                .iter()
                .filter(|n| defined.get(*n).is_some_and(|&c| c > 1))
                .filter(|n| external.binary_search(n).is_err())
                .map(String::as_str)
                .collect();
            if !own.is_empty() {
                for c in &mut calls {
                    for name in [&mut c.caller, &mut c.callee] {
                        if own.contains(name.as_str()) {
                            *name = with_file(name, file);
                        }
                    }
                }
                for name in &mut one_liners {
                    if own.contains(name.as_str()) {
                        *name = with_file(name, file);
                    }
                }
                for n in own {
                    self.own
                        .entry(n.to_owned())
                        .or_default()
                        .insert(file.to_owned());
                }
            }
        }
        rebase(&mut calls, &mut self.tests, &mut tests);
        self.calls.append(&mut calls);
        self.one_liners.extend(one_liners);
        self.named.extend(named);
        self.syscalls.extend(syscalls);
    }

    /// The name the graph knows function `name` of `file` by: made anew
    /// only for a file's own (every declaration asks).
    pub(super) fn key<'n>(own: &Own, name: &'n str, file: &Path) -> Cow<'n, str> {
        match own.get(name).is_some_and(|files| files.contains(file)) {
            true => Cow::Owned(with_file(name, file)),
            false => Cow::Borrowed(name),
        }
    }
}

/// The files' own functions (see [`Graph::own`]).
pub(super) type Own = HashMap<String, HashSet<PathBuf>>;

/// Function `name` of `file`, as the graph names a file's own.
fn with_file(name: &str, file: &Path) -> String {
    format!("{name}@{}", file.display())
}

/// A function's name as its source spells it, without its file.
pub(super) fn spelled(name: &str) -> &str {
    name.split_once('@').map_or(name, |(n, _)| n)
}

/// What the caller of `call` tests before it, of the graph's `tests`.
pub(super) fn tests_of<'t>(tests: &'t [Box<[Test]>], call: &Call) -> &'t [Test] {
    (call.tested as usize)
        .checked_sub(1)
        .and_then(|i| tests.get(i))
        .map_or(&[], |t| &t[..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(caller: &str, callee: &str) -> Call {
        Call::between(caller, callee)
    }

    fn walked(calls: Vec<Call>, defined: &[&str], external: &[&str]) -> Walked {
        Walked {
            calls,
            tests: Vec::new(),
            defined: defined.iter().map(|s| s.to_string()).collect(),
            external: external.iter().map(|s| s.to_string()).collect(),
            named: Vec::new(),
            syscalls: Vec::new(),
            one_liners: Vec::new(),
        }
    }

    #[test]
    fn each_calls_tests_are_its_own_in_the_graph() {
        // Each file's walk numbers its tests from 1; the graph keeps
        // every file's, each call pointing at its own.
        let tested = |callee: &str, test: Test| {
            let mut w = walked(vec![call("f", "x"), call("f", callee)], &["f"], &["f"]);
            w.calls[1].tested = 1;
            w.tests = vec![vec![test].into()];
            w
        };
        let defined = HashMap::from([("f".to_owned(), 2)]);
        let mut g = Graph::default();
        g.add(Path::new("a.h"), tested("set_a", Test::Twin), &defined);
        let bit = Test::Bit {
            arg: 0,
            member: "state".into(),
            bit: "B".into(),
        };
        g.add(Path::new("b.h"), tested("set_b", bit.clone()), &defined);
        let of = |callee: &str| -> Vec<Test> {
            g.calls
                .iter()
                .filter(|c| c.callee == callee)
                .flat_map(|c| tests_of(&g.tests, c).to_vec())
                .collect()
        };
        assert_eq!(of("set_a"), [Test::Twin]);
        assert_eq!(of("set_b"), [bit]);
        assert_eq!(of("x"), []);
    }

    #[test]
    fn a_static_function_two_files_define_is_each_files_own() {
        let defined: HashMap<String, usize> = [
            ("pageout", 1),
            ("handle_write_error", 2),
            ("enter_read_only", 1),
            ("folio_lock", 1),
            ("helper", 2),
        ]
        .map(|(n, c)| (n.to_owned(), c))
        .into();
        let mut g = Graph::default();
        g.add(
            Path::new("mm/vmscan.c"),
            walked(
                vec![
                    call("pageout", "handle_write_error"),
                    call("handle_write_error", "folio_lock"),
                ],
                &["handle_write_error", "pageout"],
                &[],
            ),
            &defined,
        );
        g.add(
            Path::new("drivers/md/block-map.c"),
            walked(
                vec![call("handle_write_error", "enter_read_only")],
                &["enter_read_only", "handle_write_error"],
                &["enter_read_only"],
            ),
            &defined,
        );
        // Not static here: every file's to call.
        g.add(
            Path::new("lib/helper.c"),
            walked(vec![call("helper", "folio_lock")], &["helper"], &["helper"]),
            &defined,
        );
        let pairs: Vec<(&str, &str)> = g
            .calls
            .iter()
            .map(|c| (c.caller.as_str(), c.callee.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("pageout", "handle_write_error@mm/vmscan.c"),
                ("handle_write_error@mm/vmscan.c", "folio_lock"),
                (
                    "handle_write_error@drivers/md/block-map.c",
                    "enter_read_only"
                ),
                ("helper", "folio_lock"),
            ]
        );
        assert_eq!(
            Graph::key(&g.own, "handle_write_error", Path::new("mm/vmscan.c")),
            "handle_write_error@mm/vmscan.c"
        );
        assert_eq!(
            Graph::key(&g.own, "pageout", Path::new("mm/vmscan.c")),
            "pageout"
        );
        assert_eq!(
            spelled("handle_write_error@mm/vmscan.c"),
            "handle_write_error"
        );
    }
}
