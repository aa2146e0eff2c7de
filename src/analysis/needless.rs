//! Needless stores, ranked: of the source reader's candidates (see
//! [`Needless`]), those a fast entry point reaches, on a member others
//! touch at the same time, most worth a patch first.
//!
//! A plain store (`p->m = 0`) is kept only when the source says the
//! member is shared: some function marks its accesses (`READ_ONCE`,
//! `WRITE_ONCE`, a release store), uses an atomic on it, or reads it on
//! another CPU's object. `WRITE_ONCE`, atomics and exchanges say so
//! themselves; except on a struct whose objects are all per-CPU data
//! (`DEFINE_PER_CPU(struct rcu_data, ...)`), which its own CPU marks its
//! accesses to for its interrupts: there only a read of another CPU's
//! object or an atomic says others touch it.
//!
//! A constant or a copy is usually the value already there only when it
//! is the one value the fast paths store to the member: a member given
//! `TASK_RUNNING` here and `TASK_WAKING` there (or any value the reader
//! cannot name) is a state, and each store a change of it. Bit
//! operations and atomics besides do not count: `mm->lru_gen.bitmap` is
//! set whole to -1 on every context switch and only cleared bit by bit.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::evidence::source::{Declaration, Needless, Role, Said, Site, Store, Write, is_header};

/// One needless store worth a look.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Finding<'d> {
    /// The candidate (its struct, member, function, file and line).
    pub(crate) at: &'d Declaration,
    /// What the source reader saw.
    pub(crate) store: &'d Needless,
    /// The other functions that read or write the member on a fast path,
    /// in name order.
    pub(crate) sharers: Vec<&'d str>,
    /// How the member's sharing is known: the accesses that say other
    /// CPUs touch it (`READ_ONCE in sk_busy_loop`).
    pub(crate) shared_by: Vec<String>,
    /// The rank's score: higher is more worth a patch.
    pub(crate) score: u64,
}

/// The declarations of `declarations` made in code a build has (its
/// `units`' files and the `functions` it defines): a function the build
/// does not define is dropped when its file is a header or one of the
/// build's units (it is under a config the build has off, or was never
/// used); a `.c` file the build has no unit of may be a module's, and is
/// kept. Gives the kept ones and how many were dropped; `None` when the
/// build defines under a tenth of the functions read: it is not this
/// tree's build (a test's stand-in, another version), and nothing is
/// left out.
pub(crate) fn in_build(
    declarations: Vec<Declaration>,
    units: &[String],
    functions: &HashSet<String>,
) -> (Vec<Declaration>, Option<usize>) {
    let read: HashSet<&str> = declarations
        .iter()
        .filter_map(|d| d.function.as_deref())
        .collect();
    let defined = read.iter().filter(|f| functions.contains(**f)).count();
    if defined * 10 < read.len() {
        return (declarations, None);
    }
    // Every tail of every unit's path: `mm/vmscan.c` of
    // `/build/linux/mm/vmscan.c`.
    let mut files: HashSet<&str> = HashSet::new();
    for unit in units {
        let mut rest = unit.as_str();
        files.insert(rest);
        while let Some((_, tail)) = rest.split_once('/') {
            files.insert(tail);
            rest = tail;
        }
    }
    let before = declarations.len();
    let kept: Vec<Declaration> = declarations
        .into_iter()
        .filter(|d| {
            let Some(f) = &d.function else {
                return true;
            };
            let header = is_header(&d.file);
            let compiled = d.file.to_str().is_some_and(|p| files.contains(p));
            functions.contains(f) || !(header || compiled)
        })
        .collect();
    let dropped = before - kept.len();
    (kept, Some(dropped))
}

/// The needless stores of `declarations` (the candidates and every other
/// declaration about their members) made in files under one of `under`
/// (all files when empty), reached from a fast entry point, on shared
/// members, ranked: highest score first, then by file and line.
pub(crate) fn needless_stores<'d>(
    declarations: &'d [Declaration],
    under: &[PathBuf],
) -> Vec<Finding<'d>> {
    // Per member: who touches it on a fast path, and what says it is shared.
    let mut touched: HashMap<(&str, &str), Touched<'d>> = HashMap::new();
    // The stores whose value the reader named.
    let named: BTreeSet<(&Path, usize)> = declarations
        .iter()
        .filter(|d| matches!(&d.said, Said::Needless(n) if matches!(n.kind, Store::Constant | Store::Copy)))
        .map(|d| (d.file.as_path(), d.line))
        .collect();
    let per_cpu = per_cpu_only(declarations);
    for d in declarations {
        let (Some(f), Role::Fast) = (&d.function, d.role) else {
            continue;
        };
        let own_cpu = per_cpu.contains(d.ty.as_str());
        let t = touched.entry((&d.ty, &d.path)).or_default();
        match &d.said {
            Said::Needless(n) if matches!(n.kind, Store::Constant | Store::Copy) => {
                t.values.insert(same_value(&n.value));
                continue;
            }
            Said::Written(w, _) => match w.untested() {
                Write::Assign | Write::Once | Write::Release(_)
                    if !named.contains(&(d.file.as_path(), d.line)) =>
                {
                    t.values
                        .insert(format!("(the value at {}:{})", d.file.display(), d.line));
                }
                // A counter (`atomic_inc`, `xchg`): moved, so a value set
                // whole is a reset. A bit operation is not.
                Write::Atomic(name) | Write::NonAtomic(name) | Write::Publish(name)
                    if !name.contains("_bit")
                        && !name.ends_with("_set")
                        && name != "set_mask_bits" =>
                {
                    t.values.insert(format!(
                        "(moved by {name} at {}:{})",
                        d.file.display(),
                        d.line
                    ));
                }
                _ => {}
            },
            _ => {}
        }
        let shared = match &d.said {
            Said::Written(w, _) if w.lockless() || (w.marked() && !own_cpu) => Some(w.describe()),
            Said::Read { remote: true, .. } => Some("read on another CPU's object".to_owned()),
            Said::Read { once: true, .. } if !own_cpu => Some("READ_ONCE".to_owned()),
            Said::Written(..) | Said::Read { .. } => None,
            _ => continue,
        };
        t.functions.insert(f);
        if let Some(how) = shared {
            t.shared.insert(format!("{how} in {f}"));
        }
    }
    let under_one = |file: &Path| under.is_empty() || under.iter().any(|u| file.starts_with(u));
    // One finding per store: of the structs its expression names, the
    // outermost (the longest path).
    let mut best: HashMap<(&Path, usize, &str), Finding<'d>> = HashMap::new();
    for d in declarations {
        let (Said::Needless(store), Some(f), Role::Fast) = (&d.said, &d.function, d.role) else {
            continue;
        };
        if store.tested || store.path.is_empty() || !under_one(&d.file) {
            continue;
        }
        let t = touched.get(&(d.ty.as_str(), d.path.as_str()));
        let state = t.is_some_and(|t| t.values.len() > 1);
        if state && matches!(store.kind, Store::Constant | Store::Copy) {
            continue;
        }
        let mut shared_by: Vec<String> =
            t.map_or_else(Vec::new, |t| t.shared.iter().cloned().collect());
        // A marked store, an atomic, an exchange: shared by its own say,
        // but for per-CPU data.
        let own = store.how != "=" && !per_cpu.contains(d.ty.as_str());
        if !own && shared_by.is_empty() {
            continue;
        }
        if own && shared_by.is_empty() {
            shared_by.push(format!("{} in {f}", store.how));
        }
        let sharers: Vec<&str> = t.map_or_else(Vec::new, |t| {
            t.functions
                .iter()
                .copied()
                .filter(|g| *g != f.as_str())
                .collect()
        });
        let finding = Finding {
            at: d,
            store,
            score: score(store, d.entry.as_deref(), sharers.len()),
            sharers,
            shared_by,
        };
        let key = (d.file.as_path(), d.line, store.how.as_str());
        match best.get(&key) {
            Some(b) if b.at.path.len() >= d.path.len() => {}
            _ => {
                best.insert(key, finding);
            }
        }
    }
    let mut out: Vec<Finding<'d>> = best.into_values().collect();
    out.sort_by(|a, b| {
        b.score
            .cmp(&a.score)
            .then_with(|| (&a.at.file, a.at.line).cmp(&(&b.at.file, b.at.line)))
    });
    out
}

/// The structs whose every placement the source shows is per-CPU data
/// (`DEFINE_PER_CPU`, `alloc_percpu`): each object is one CPU's.
fn per_cpu_only(declarations: &[Declaration]) -> HashSet<&str> {
    let mut placed: HashMap<&str, bool> = HashMap::new();
    for d in declarations {
        if let Said::Placed(site) = &d.said {
            let per_cpu = matches!(site, Site::PerCpu { .. });
            *placed.entry(d.ty.as_str()).or_insert(true) &= per_cpu;
        }
    }
    placed
        .into_iter()
        .filter_map(|(ty, only)| only.then_some(ty))
        .collect()
}

/// Who touches one member on a fast path.
#[derive(Default)]
struct Touched<'d> {
    /// The functions.
    functions: BTreeSet<&'d str>,
    /// The accesses that say other CPUs touch it at the same time.
    shared: BTreeSet<String>,
    /// The values the fast paths store to it whole (constants and copies
    /// as written, any other store as its place).
    values: BTreeSet<String>,
}

/// A value as stored, its integer suffixes and spaces dropped: `-1UL` is
/// `-1`.
fn same_value(value: &str) -> String {
    crate::csource::tokens(value)
        .iter()
        .map(|t| match t.chars().next() {
            Some(c) if c.is_ascii_digit() => t.trim_end_matches(['u', 'U', 'l', 'L']),
            _ => t.as_str(),
        })
        .collect()
}

/// How much a store is worth a patch: by its kind (a marked constant
/// or copy is usually the value already there, on a member others read
/// at once; an exchange often; a plain store less surely; a bit, who
/// knows), by how hot its entry point is (the scheduler, softirq, the
/// packet path and the page fault run most; a hardware interrupt, block
/// I/O and reclaim often; a system call may be any), nearer the entry point more, and by
/// the functions that touch the member besides the storing one, whose
/// lines it takes away (a few are enough to say it is shared).
fn score(store: &Needless, entry: Option<&str>, sharers: usize) -> u64 {
    let kind = match store.kind {
        Store::Constant | Store::Copy if store.how == "=" => 2,
        Store::Constant | Store::Copy => 4,
        Store::Exchange => 3,
        Store::Bit => 1,
    };
    let kind_of_entry = entry.map_or("", |e| e.split(" (").next().unwrap_or(""));
    let hot = match kind_of_entry {
        "the scheduler" | "softirq" | "packet transmit and receive" | "the page fault" => 3,
        "a hardware interrupt" | "block I/O" | "page reclaim" => 2,
        _ => 1,
    };
    let sharers = sharers.min(8) as u64;
    let depth = store.path.len() as u64;
    kind * hot * (4 + sharers) * 8 / (2 + depth)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::source::Held;

    fn decl(path: &str, f: &str, said: Said) -> Declaration {
        Declaration {
            ty: "s".into(),
            path: path.into(),
            said,
            function: Some(f.into()),
            file: PathBuf::from("kernel/a.c"),
            // A line of its own per function.
            line: f.bytes().fold(1, |a, b| (a * 131 + b as usize) % 1_000_003),
            role: Role::Fast,
            param: None,
            entry: Some("the scheduler (__schedule)".into()),
            callers: 1,
            hot_callers: 1,
            paths: Vec::new(),
        }
    }

    fn store(kind: Store, how: &str, path: &[&str]) -> Said {
        Said::Needless(Needless {
            kind,
            how: how.into(),
            value: "0".into(),
            tested: false,
            path: path.iter().map(|p| p.to_string()).collect(),
        })
    }

    #[test]
    fn code_the_build_lacks_is_left_out_but_a_file_it_has_no_unit_of_is_kept() {
        let at = |f: &str, file: &str| Declaration {
            file: PathBuf::from(file),
            ..decl("m", f, store(Store::Constant, "=", &["f"]))
        };
        let declarations = vec![
            // Built: a function the build defines.
            at("present", "kernel/a.c"),
            // A unit of the build without this function: a config off.
            at("config_off", "kernel/a.c"),
            // A header's inline the build never has.
            at("inline_off", "include/linux/x.h"),
            // A file the build has no unit of: a module's, kept.
            at("in_module", "drivers/net/y.c"),
        ];
        let units = [
            "/build/linux-6.12/kernel/a.c".to_owned(),
            "mm/b.c".to_owned(),
        ];
        let functions: HashSet<String> = ["present".to_owned()].into();
        let (kept, dropped) = in_build(declarations.clone(), &units, &functions);
        let names: Vec<&str> = kept.iter().filter_map(|d| d.function.as_deref()).collect();
        assert_eq!(names, ["present", "in_module"]);
        assert_eq!(dropped, Some(2));
        // A build that defines none of them is another tree's: all kept.
        let (kept, dropped) = in_build(declarations, &units, &HashSet::new());
        assert_eq!((kept.len(), dropped), (4, None));
    }

    #[test]
    fn a_plain_store_is_kept_only_on_a_member_others_touch_at_once_and_a_hot_path() {
        let hot = ["__schedule", "f"];
        let ds = vec![
            decl("a", "f", store(Store::Constant, "=", &hot)),
            decl("b", "ff", store(Store::Constant, "=", &hot)),
            decl(
                "b",
                "reader",
                Said::Read {
                    once: true,
                    remote: false,
                },
            ),
            decl("c", "fff", store(Store::Constant, "WRITE_ONCE", &[])),
            decl("d", "ffff", store(Store::Bit, "set_bit", &hot)),
            decl(
                "d",
                "r1",
                Said::Read {
                    once: false,
                    remote: false,
                },
            ),
            decl("d", "r2", Said::Written(Write::Assign, Vec::<Held>::new())),
        ];
        let found = needless_stores(&ds, &[]);
        let got: Vec<(&str, &str, Vec<&str>)> = found
            .iter()
            .map(|f| (f.at.path.as_str(), f.store.how.as_str(), f.sharers.clone()))
            .collect();
        // `a`: nobody marks it; `c`: no entry point reaches it. The
        // constant ranks above the bit, though the bit has more sharers.
        assert_eq!(
            got,
            [
                ("b", "=", vec!["reader"]),
                ("d", "set_bit", vec!["r1", "r2"])
            ]
        );
        assert_eq!(found[0].shared_by, ["READ_ONCE in reader"]);
        // Under another directory: nothing.
        assert!(needless_stores(&ds, &[PathBuf::from("net")]).is_empty());
        assert_eq!(needless_stores(&ds, &[PathBuf::from("kernel")]).len(), 2);
    }

    #[test]
    fn per_cpu_data_is_shared_only_by_another_cpus_read_or_an_atomic() {
        // rcu_data: rcu_do_batch()'s WRITE_ONCE(rdp->rcu_cpu_has_work, 1)
        // and a copy that its own CPU READ_ONCEs are one CPU's stores;
        // print_cpu_stall_info() reads another CPU's ticks_this_gp.
        let hot = ["rcu_core", "f"];
        let placed = |site: Site| Declaration {
            path: String::new(),
            function: None,
            ..decl("", "x", Said::Placed(site))
        };
        let read =
            |path: &str, f: &str, remote: bool| decl(path, f, Said::Read { once: true, remote });
        let mut ds = vec![
            decl("has_work", "f", store(Store::Constant, "WRITE_ONCE", &hot)),
            decl("needed", "g", store(Store::Copy, "WRITE_ONCE", &hot)),
            read("needed", "own_reader", false),
            decl("ticks", "h", store(Store::Constant, "WRITE_ONCE", &hot)),
            read("ticks", "print_cpu_stall_info", true),
            placed(Site::PerCpu {
                call: "DEFINE_PER_CPU".into(),
                aligned: false,
            }),
        ];
        let members = |ds: &[Declaration]| -> Vec<String> {
            needless_stores(ds, &[])
                .iter()
                .map(|f| f.at.path.clone())
                .collect()
        };
        assert_eq!(members(&ds), ["ticks"]);
        // Also allocated with kmalloc: not per-CPU only, all three count.
        ds.push(placed(Site::Kmalloc {
            call: "kmalloc".into(),
            exact: true,
            array: false,
        }));
        let mut all = members(&ds);
        all.sort();
        assert_eq!(all, ["has_work", "needed", "ticks"]);
    }

    #[test]
    fn a_member_given_different_values_is_a_state_and_its_stores_are_no_needless_ones() {
        let hot = ["__schedule", "f"];
        let tested = |path: &str, f: &str, value: &str| {
            let mut d = decl(path, f, store(Store::Constant, "WRITE_ONCE", &hot));
            if let Said::Needless(n) = &mut d.said {
                n.tested = true;
                n.value = value.into();
            }
            d
        };
        let mut two = decl("e", "g2", store(Store::Constant, "WRITE_ONCE", &hot));
        if let Said::Needless(n) = &mut two.said {
            n.value = "1".into();
        }
        let ds = vec![
            // `e`: 0 here, 1 there: a state.
            decl("e", "g1", store(Store::Constant, "WRITE_ONCE", &hot)),
            two,
            // `f`: 0 here, and 0UL behind a test there: one value.
            decl("f", "h1", store(Store::Constant, "WRITE_ONCE", &hot)),
            tested("f", "h22", "0UL"),
            // `g`: 0 here, and a value the reader cannot name there.
            decl("g", "k1", store(Store::Constant, "WRITE_ONCE", &hot)),
            decl("g", "k22", Said::Written(Write::Once, Vec::<Held>::new())),
            // `h`: 0 here, and bits cleared there: one value stored whole.
            decl("h", "m1", store(Store::Constant, "WRITE_ONCE", &hot)),
            decl(
                "h",
                "m22",
                Said::Written(Write::Atomic("clear_bit".into()), Vec::<Held>::new()),
            ),
            // `i`: 0 here, and counted up there: a reset.
            decl("i", "n1", store(Store::Constant, "atomic_set", &hot)),
            decl(
                "i",
                "n22",
                Said::Written(Write::Atomic("atomic_inc".into()), Vec::<Held>::new()),
            ),
        ];
        let found: Vec<&str> = needless_stores(&ds, &[])
            .iter()
            .map(|f| f.at.path.as_str())
            .collect();
        // `h` first: m22 shares it; nobody else touches `f`.
        assert_eq!(found, ["h", "f"]);
    }
}
