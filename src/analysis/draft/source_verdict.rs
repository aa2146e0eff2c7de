//! The source's verdict on a drafted struct's member, read from its
//! declarations in phases: what annotates the member (its use as a lock,
//! per-CPU data through it, `__guarded_by`), its writes on the fast path
//! (tallied and weighed in [`super::write_verdict`]), its readers there,
//! and for a member the fast path never writes, its cacheline group's
//! name; then its readers on other CPUs' copies.

use std::collections::{BTreeMap, BTreeSet};

use super::write_verdict::Writes;
use super::{
    Facts, MAX_FUNCTIONS_LISTED, MemberFacts, Verdict, Whole, about, at, declared_evidence,
    holders, listed, not_counted, sorted,
};
use crate::analysis::draft_types::Evidence;
use crate::evidence::source::{Declaration, NetPath, Role, Said, is_header};

/// Fast-path readers that make a member never written there read-mostly.
const MIN_READERS: usize = 2;

/// The context of reads of another CPU's per-CPU object.
pub(super) const REMOTE: &str = "remote-cpus";

/// The source's verdict on member `m`, every declaration about it told
/// in `evidence`: what annotates the member decides; else its writes on
/// the fast path do (the locks they hold, their atomics, their owners);
/// else, never written there, its cacheline group or its readers.
pub(super) fn declared(
    facts: &Facts<'_>,
    m: &MemberFacts,
    whole: &Whole<'_>,
    evidence: &mut Vec<Evidence>,
    contexts: &mut BTreeMap<String, String>,
    locks: &mut Vec<(String, String, Vec<Evidence>)>,
    conflicts: &mut Vec<String>,
) -> Option<Verdict> {
    let ds: Vec<&Declaration> = facts
        .declarations
        .iter()
        .copied()
        .filter(|d| about(d, &facts.ty, &m.path))
        .collect();
    let taken = taken_as_lock(&ds, m, evidence);
    let per_cpu = per_cpu(&ds, m, evidence);
    let decided = taken.is_some() || per_cpu.is_some();
    let guarded = guarded_by(facts, &ds, whole, decided, evidence, contexts);
    let annotated = taken.or(per_cpu).or(guarded);
    let mut writes = Writes::tally(facts, &ds, whole, evidence, locks);
    writes.claim_owning_markers(facts, whole, evidence);
    writes.tell_ignored(evidence);
    let readers = fast_readers(&ds, evidence);
    if annotated.is_some() {
        return annotated;
    }
    if writes.count == 0 {
        return unwritten(m, readers, evidence, contexts);
    }
    let writing = writes.writing();
    if let Some(v) = writes.atomic_verdict(&writing, conflicts) {
        return Some(v);
    }
    if let Some(v) = writes.lock_verdict(&writing, facts, m, evidence, contexts, conflicts) {
        return Some(v);
    }
    Some(writes.owners_verdict(facts, m, evidence, contexts))
}

/// Taken as a lock: the member itself, a lock; or a lock inside it
/// (`ring.producer_lock`), which makes the member no lock, told with how
/// often it is taken. A pointer is never the lock: what is taken is what
/// it points to (`&h->ehash_locks[i]`).
fn taken_as_lock(
    ds: &[&Declaration],
    m: &MemberFacts,
    evidence: &mut Vec<Evidence>,
) -> Option<Verdict> {
    let mut verdict = None;
    let mut inner: BTreeMap<&str, (usize, &Declaration)> = BTreeMap::new();
    for d in ds {
        if let Said::Locked(how) = &d.said {
            match d.path == m.path {
                true if m.is_pointer() => evidence.push(declared_evidence(format!(
                    "what it points to is taken with {how}() {}: a lock of its own, not this member",
                    at(d)
                ))),
                true => {
                    evidence.push(declared_evidence(format!("taken with {how}() {}", at(d))));
                    verdict = Some(Verdict::Lock);
                }
                false => inner.entry(&d.path).or_insert((0, d)).0 += 1,
            }
        }
    }
    for (path, (n, d)) in inner {
        evidence.push(declared_evidence(format!(
            "holds lock {path}, taken {n} time{} (first {})",
            if n == 1 { "" } else { "s" },
            at(d)
        )));
    }
    verdict
}

/// Per-CPU data through the member: the member itself is only read.
/// Through a pointer inside it (`sock.__sk_common`'s `skc_prot`, whose
/// `orphan_count` is per-CPU), that says nothing of the rest of it.
fn per_cpu(ds: &[&Declaration], m: &MemberFacts, evidence: &mut Vec<Evidence>) -> Option<Verdict> {
    let mut verdict = None;
    for d in ds {
        if let Said::PerCpu(how) = &d.said {
            evidence.push(declared_evidence(format!(
                "per-CPU data through it: {how}() {}",
                at(d)
            )));
            if d.path == m.path {
                verdict = Some(Verdict::Read(Vec::new()));
            }
        }
    }
    verdict
}

/// `__guarded_by` (and `__pt_guarded_by`, which guards the pointee and
/// says nothing of the member), every one told; unless `decided`, the
/// first guarding the member gives its verdict: its lock when a member of
/// the struct, else the lock's holders as a context.
fn guarded_by(
    facts: &Facts<'_>,
    ds: &[&Declaration],
    whole: &Whole<'_>,
    decided: bool,
    evidence: &mut Vec<Evidence>,
    contexts: &mut BTreeMap<String, String>,
) -> Option<Verdict> {
    let mut verdict = None;
    for d in ds {
        let Said::GuardedBy { locks: ls, pointee } = &d.said else {
            continue;
        };
        let word = if *pointee {
            "__pt_guarded_by"
        } else {
            "__guarded_by"
        };
        evidence.push(declared_evidence(format!(
            "{word}({}) {}",
            ls.join(", "),
            at(d)
        )));
        if *pointee || decided || verdict.is_some() {
            continue;
        }
        let first = ls.first().map(String::as_str).unwrap_or("");
        let name = first.strip_prefix('&').unwrap_or(first);
        verdict = Some(
            if first.starts_with('&') && whole.member_names.contains(&name) {
                Verdict::Protected(name.to_owned())
            } else {
                let c = holders(first);
                contexts.entry(c.clone()).or_insert_with(|| {
                    format!("the holders of {first}, which is no member of {}", facts.ty)
                });
                Verdict::Owned {
                    write: vec![c],
                    read: Vec::new(),
                }
            },
        );
    }
    verdict
}

/// Is member `m` stored by the control path, and elsewhere only while
/// built or torn down (`pids_cgroup.limit`, an `atomic64_t` only
/// `pids_max_write()` sets)? Then the source says who writes it,
/// whatever its type.
pub(super) fn set_by_control_only(facts: &Facts<'_>, m: &MemberFacts) -> bool {
    let mut control = false;
    for d in facts
        .declarations
        .iter()
        .filter(|d| about(d, &facts.ty, &m.path) && matches!(d.said, Said::Written(..)))
    {
        match not_counted(d) {
            None => return false,
            Some(_) => control |= d.role == Role::Control,
        }
    }
    control
}

/// The functions reading a member on the fast path.
struct Readers {
    /// How many.
    count: usize,
    /// The one reader when it is a header's (an accessor: `rq_of()` in
    /// kernel/sched/sched.h), with how many functions call it: it reads
    /// for each of them.
    accessor: Option<(String, usize)>,
    /// The network paths reaching them, when every one is on one (see
    /// [`NetPath`]); else none.
    paths: Vec<NetPath>,
}

/// The functions reading the member on the fast path, told (how many,
/// whether a marked read is among them, the first few).
fn fast_readers(ds: &[&Declaration], evidence: &mut Vec<Evidence>) -> Readers {
    let mut readers: BTreeMap<&str, &Declaration> = BTreeMap::new();
    let mut marked_read = false;
    for d in ds {
        if let (Said::Read { once, .. }, None) = (&d.said, not_counted(d)) {
            readers
                .entry(d.function.as_deref().unwrap_or(""))
                .or_insert(d);
            marked_read |= *once;
        }
    }
    if !readers.is_empty() {
        let first: Vec<String> = readers
            .values()
            .take(MAX_FUNCTIONS_LISTED)
            .map(|d| at(d))
            .collect();
        evidence.push(declared_evidence(format!(
            "read in {} function{}{}: {}{}",
            readers.len(),
            if readers.len() == 1 { "" } else { "s" },
            if marked_read {
                " (READ_ONCE, RCU or an atomic read among them)"
            } else {
                ""
            },
            first.join(", "),
            if readers.len() > MAX_FUNCTIONS_LISTED {
                ", ..."
            } else {
                ""
            }
        )));
    }
    let paths = match readers.values().all(|d| !d.paths.is_empty()) {
        true => readers
            .values()
            .flat_map(|d| d.paths.iter().copied())
            .collect::<BTreeSet<_>>(),
        false => BTreeSet::new(),
    };
    let accessor = match readers.len() {
        1 => readers
            .iter()
            .next()
            .filter(|(_, d)| is_header(&d.file))
            .map(|(f, d)| (f.to_string(), d.callers)),
        _ => None,
    };
    Readers {
        count: readers.len(),
        accessor,
        paths: paths.into_iter().collect(),
    }
}

/// The verdict on member `m`, which the fast path never writes: its
/// cacheline group's; else, read on fast paths by several functions
/// (`readers`), or by a header's one that several call (an accessor),
/// and written only while built or on the control path, read-mostly:
/// by the network paths that read it when only they do
/// (a field the transmit path alone reads beside one it alone writes is
/// true sharing, as the kernel's tables and groups mean it).
fn unwritten(
    m: &MemberFacts,
    readers: Readers,
    evidence: &mut Vec<Evidence>,
    contexts: &mut BTreeMap<String, String>,
) -> Option<Verdict> {
    let group = group_verdict(m, evidence, contexts);
    if group.is_some() {
        return group;
    }
    if readers.count < MIN_READERS {
        let (f, callers) = readers.accessor?;
        if callers < MIN_READERS {
            return None;
        }
        evidence.push(declared_evidence(format!(
            "read in {f}, a header's, which {callers} functions call: read for each of them"
        )));
    }
    if !readers.paths.is_empty() {
        let words: Vec<&str> = readers.paths.iter().map(|p| p.words()).collect();
        evidence.push(declared_evidence(format!(
            "every reader is on {}: read there",
            words.join(" or ")
        )));
    }
    Some(Verdict::Read(
        readers
            .paths
            .iter()
            .map(|p| path_context(*p, contexts))
            .collect(),
    ))
}

/// Network path `p`'s context, declared in `contexts` (its owner at that
/// moment writes, one CPU at a time, as the kernel's net_cachelines
/// tables take it): its name.
pub(super) fn path_context(p: NetPath, contexts: &mut BTreeMap<String, String>) -> String {
    contexts.entry(p.context().to_owned()).or_insert_with(|| {
        format!(
            "{}: the object's owner on it at that moment, one CPU at a time",
            p.words()
        )
    });
    p.context().to_owned()
}

/// What a kernel cacheline group's name declares of its members
/// (`tcp_sock_read_tx`, `net_device_write_rx`, `..._read_txrx`): read or
/// written, in the tx and rx contexts it names (serialized, as the
/// net_cachelines tables take them).
pub(super) fn group_verdict(
    m: &MemberFacts,
    evidence: &mut Vec<Evidence>,
    contexts: &mut BTreeMap<String, String>,
) -> Option<Verdict> {
    let group = m.group.as_deref()?;
    let words: Vec<&str> = group.split('_').collect();
    let read = words.contains(&"read");
    let write = words.contains(&"write");
    if read == write {
        return None;
    }
    let mut paths: Vec<String> = Vec::new();
    for w in &words {
        match *w {
            "tx" | "rx" => paths.push((*w).to_owned()),
            "txrx" | "rxtx" => paths.extend(["rx".to_owned(), "tx".to_owned()]),
            _ => {}
        }
    }
    let paths = sorted(paths);
    evidence.push(declared_evidence(format!(
        "in cacheline group {group}: {} by its name{}",
        if read { "read" } else { "written" },
        match paths.is_empty() {
            true => String::new(),
            false => format!(", in {}", paths.join(" and ")),
        }
    )));
    for p in &paths {
        contexts
            .entry(p.clone())
            .or_insert_with(|| format!("the {p} path, as the kernel's cacheline groups name it"));
    }
    // A written group that names no path says written, not by whom: no
    // class of its own.
    match (read, paths.is_empty()) {
        (true, _) => Some(Verdict::Read(paths)),
        (false, true) => None,
        (false, false) => Some(Verdict::Owned {
            write: paths,
            read: Vec::new(),
        }),
    }
}

/// `v` with the functions that read member `m` of another CPU's per-CPU
/// object (`cpu_rq(cpu)`, `per_cpu(x, cpu)`) as readers, when its writers
/// are contexts: the owner's stores then meet other CPUs' loads.
pub(super) fn remotely_read(
    facts: &Facts<'_>,
    m: &MemberFacts,
    v: Verdict,
    evidence: &mut Vec<Evidence>,
    contexts: &mut BTreeMap<String, String>,
) -> Verdict {
    let readers: BTreeSet<&str> = facts
        .declarations
        .iter()
        .filter(|d| about(d, &facts.ty, &m.path) && not_counted(d).is_none())
        .filter(|d| matches!(d.said, Said::Read { remote: true, .. }))
        .filter_map(|d| d.function.as_deref())
        .collect();
    if readers.is_empty() {
        return v;
    }
    let names: Vec<String> = readers.iter().map(|f| f.to_string()).collect();
    evidence.push(declared_evidence(format!(
        "read from another CPU's copy in {}",
        listed(&names, MAX_FUNCTIONS_LISTED)
    )));
    match v {
        Verdict::Owned { write, mut read } => {
            contexts.entry(REMOTE.to_owned()).or_insert_with(|| {
                "functions that read another CPU's per-CPU object (cpu_rq(cpu), per_cpu(x, cpu))"
                    .to_owned()
            });
            read.push(REMOTE.to_owned());
            Verdict::Owned {
                write,
                read: sorted(read),
            }
        }
        other => other,
    }
}
