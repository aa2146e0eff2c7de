//! A drafted struct's member by its writes on the fast path: each write
//! tallied by the locks it holds (the struct's, an enclosing struct's,
//! another object's or a global, none), atomic or marked, or not counted
//! (made while the object is built or torn down, on the control path,
//! once from NULL, under a mutex of the whole system); then weighed, in
//! order: atomics with no lock, the lock most writers hold, the owners
//! and holders the rest name.

use std::collections::{BTreeMap, BTreeSet};

use super::source_verdict::path_context;
use super::{
    Facts, MAX_FUNCTIONS_LISTED, MemberFacts, OWNER, Verdict, Whole, at, context_name,
    declared_evidence, holders, listed, not_counted, sorted,
};
use crate::analysis::draft_types::{Evidence, Mark};
use crate::evidence::source::{Declaration, Held, NetPath, Said, Write};

/// Writes listed one by one per member; the rest are counted.
const MAX_WRITES_SHOWN: usize = 8;

/// A lock is a member's, and atomic writes with no lock make it
/// lockless-write, when at least one in this many of the functions writing
/// it hold the lock, or write so.
const MIN_WRITER_SHARE: usize = 4;

/// The fast path's writes of one member, tallied by what they hold.
#[derive(Default)]
pub(super) struct Writes {
    /// The writes counted.
    pub(super) count: usize,
    /// The writes not counted, by why: their functions.
    ignored: BTreeMap<&'static str, Vec<String>>,
    /// Per lock: the functions whose writes hold it, and the writes.
    under: BTreeMap<String, (BTreeSet<String>, usize)>,
    /// The functions writing it atomically with no lock.
    atomic: BTreeSet<String>,
    /// A plain store with no lock writes it: the owner's.
    owner: bool,
    /// The functions writing it with no lock.
    unlocked: Vec<String>,
    /// Functions storing it with WRITE_ONCE or a release store and no
    /// lock, with the network paths that reach them: the owner's when
    /// they or the owner store to the object plainly too, else the
    /// paths', or each a path of its own, which others read locklessly.
    marked: BTreeMap<String, Vec<NetPath>>,
    /// Writes under a lock of another object or a global: the context
    /// and the lock.
    other_locks: Vec<(String, String)>,
}

/// A held lock as the rules name it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum LockName {
    /// A member of the drafted struct, by its path (`lock`, `ring.
    /// producer_lock`).
    Own(String),
    /// A member of a struct that embeds it (`lruvec`, `lru_lock`).
    Enclosing(String, String),
}

impl LockName {
    /// As a rule's `lock = "..."` names it.
    fn rules_name(&self) -> String {
        match self {
            LockName::Own(path) => path.clone(),
            LockName::Enclosing(ty, path) => format!("{ty}.{path}"),
        }
    }
}

/// The rules' name of held lock `h`: a member of the struct, of an
/// enclosing struct, or none.
fn lock_name<'h>(
    facts: &Facts<'_>,
    h: &'h Held,
    member_names: &[&str],
) -> Option<(LockName, &'h Held)> {
    let (ty, path) = h.member.as_ref()?;
    if *ty == facts.ty && member_names.contains(&path.split(['.', '[']).next().unwrap_or("")) {
        return Some((LockName::Own(path.clone()), h));
    }
    facts
        .enclosing
        .contains(ty)
        .then(|| (LockName::Enclosing(ty.clone(), path.clone()), h))
}

/// Why write `d` (a `write` with `held` held) is not counted, if it is
/// not: made while the object is built or torn down, on the control path
/// or in an initialiser ([`not_counted`]), once from NULL, only on a change,
/// or under a mutex of the whole system.
fn uncounted(d: &Declaration, write: &Write, held: &[Held]) -> Option<&'static str> {
    if let Some(why) = not_counted(d) {
        return Some(why);
    }
    // Set once from NULL, by whichever CPU gets there first
    // (`file.f_owner`): no writer after that.
    if matches!(write, Write::Publish(_)) {
        return Some("once, from NULL (a lazy initialisation),");
    }
    // Stored only when a test of it before found another value
    // (`__blk_mq_tag_busy()`'s `test_bit() || test_and_set_bit()`): the
    // line is taken on a change, and read on every pass.
    if matches!(write, Write::Tested(_)) {
        return Some("only on a change (a test of it comes first, there or in every caller)");
    }
    // A mutex of the whole system held (`shrinker_mutex` around
    // `mem_cgroup_per_node.shrinker_info`): no fast path takes one.
    if held.iter().any(|h| h.global_mutex && !h.shared) {
        return Some("with a mutex of the whole system held, on the control path,");
    }
    None
}

impl Writes {
    /// The writes among `ds` (the declarations about one member of
    /// `facts`' struct), each counted or set aside; the first told in
    /// `evidence`, the rest counted there. A lock of an enclosing struct
    /// they hold joins `locks`.
    pub(super) fn tally(
        facts: &Facts<'_>,
        ds: &[&Declaration],
        whole: &Whole<'_>,
        evidence: &mut Vec<Evidence>,
        locks: &mut Vec<(String, String, Vec<Evidence>)>,
    ) -> Writes {
        let mut writes = Writes::default();
        for d in ds {
            writes.record(facts, whole, d, evidence, locks);
        }
        if writes.count > MAX_WRITES_SHOWN {
            evidence.push(declared_evidence(format!(
                "and {} more writes",
                writes.count - MAX_WRITES_SHOWN
            )));
        }
        writes
    }

    /// Tallies `d` if a write: set aside if not counted; else counted by
    /// the lock it holds (a lock held shared serialises no writer: as if
    /// not held), and by how it writes with none, told in `evidence` when
    /// among the first.
    fn record(
        &mut self,
        facts: &Facts<'_>,
        whole: &Whole<'_>,
        d: &Declaration,
        evidence: &mut Vec<Evidence>,
        locks: &mut Vec<(String, String, Vec<Evidence>)>,
    ) {
        let Said::Written(write, held) = &d.said else {
            return;
        };
        let function = d.function.as_deref().unwrap_or("");
        if let Some(why) = uncounted(d, write, held) {
            self.ignored
                .entry(why)
                .or_default()
                .push(function.to_owned());
            return;
        }
        self.count += 1;
        let (shared, held): (Vec<&Held>, Vec<&Held>) = held.iter().partition(|h| h.shared);
        let lock = held
            .iter()
            .rev()
            .find_map(|h| lock_name(facts, h, &whole.member_names));
        let how = write.describe();
        let text = match &lock {
            Some((name, h)) => {
                let entry = self.under.entry(name.rules_name()).or_default();
                entry.0.insert(function.to_owned());
                entry.1 += 1;
                if let LockName::Enclosing(ty, member) = name
                    && !locks.iter().any(|(t, mm, _)| t == ty && mm == member)
                {
                    let ev = Evidence {
                        mark: Mark::Declared,
                        text: format!(
                            "held with {} around a write of {}.{} {}",
                            h.taken(),
                            facts.ty,
                            d.path,
                            at(d)
                        ),
                    };
                    locks.push((ty.clone(), member.clone(), vec![ev]));
                }
                format!("{how} {} with {} held ({})", at(d), h.text, h.taken())
            }
            None => match held.last() {
                // A lock of another object or a global: its holders
                // write, one at a time, whatever a caller calls it.
                Some(h) => {
                    let (c, what) = match &h.member {
                        Some((ty, path)) => (
                            context_name(&format!("{ty}-{path}")),
                            format!("{ty}.{path}"),
                        ),
                        None => (holders(&h.text), h.text.clone()),
                    };
                    self.other_locks.push((c, what));
                    format!("{how} {} with {} held ({})", at(d), h.text, h.taken())
                }
                None => {
                    self.unlocked.push(function.to_owned());
                    let why = match shared.last() {
                        Some(h) => format!(
                            "no lock held but {} shared ({}), which other holders hold too",
                            h.text,
                            h.taken()
                        ),
                        None => "no lock held".to_owned(),
                    };
                    format!("{how} {}, {why}", at(d))
                }
            },
        };
        // Evidence for the first writes; the rest are counted.
        if self.count <= MAX_WRITES_SHOWN {
            evidence.push(declared_evidence(text));
        }
        // An atomic under another object's lock only (`lru_gen_folio.
        // evicted`'s add in lru_gen_eviction(), whose caller holds the
        // inode's i_lock) is as lockless to this struct as one under none.
        match (write.lockless(), &lock, held.is_empty()) {
            (true, None, _) => {
                self.atomic.insert(function.to_owned());
            }
            (false, None, true) if write.marked() => {
                self.marked.insert(function.to_owned(), d.paths.clone());
            }
            (false, None, true) => self.owner = true,
            _ => {}
        }
    }

    /// A marking function that also stores plainly to the object has it
    /// to itself: its marks are for lockless readers, and it is the owner
    /// (tcp_sock's `WRITE_ONCE(tp->snd_nxt, ..)` beside `tp->packets_out
    /// += ..`, under the socket lock its caller holds). Told in `evidence`.
    pub(super) fn claim_owning_markers(
        &mut self,
        facts: &Facts<'_>,
        whole: &Whole<'_>,
        evidence: &mut Vec<Evidence>,
    ) {
        let (owning, marked): (BTreeMap<_, _>, BTreeMap<_, _>) = std::mem::take(&mut self.marked)
            .into_iter()
            .partition(|(f, _)| whole.plain_writers.contains(f.as_str()));
        self.marked = marked;
        let owning: Vec<String> = owning.into_keys().collect();
        if !owning.is_empty() {
            self.owner = true;
            evidence.push(declared_evidence(format!(
                "marked for lockless readers in {}, which store{} plainly to {} with no lock too: \
                 the owner's",
                listed(&owning, MAX_FUNCTIONS_LISTED),
                if owning.len() == 1 { "s" } else { "" },
                facts.ty
            )));
        }
    }

    /// The writes not counted, told in `evidence` by why.
    pub(super) fn tell_ignored(&self, evidence: &mut Vec<Evidence>) {
        for (why, functions) in &self.ignored {
            let functions = sorted(functions.clone());
            evidence.push(declared_evidence(format!(
                "written {why} in {}: not counted",
                listed(&functions, MAX_FUNCTIONS_LISTED)
            )));
        }
    }

    /// The functions whose counted writes hold a lock of the struct or
    /// of one enclosing it, or none.
    pub(super) fn writing(&self) -> BTreeSet<&str> {
        self.under
            .values()
            .flat_map(|(functions, _)| functions.iter().map(String::as_str))
            .chain(self.unlocked.iter().map(String::as_str))
            .collect()
    }

    /// An atomic written with no lock held: the lock serialises no one,
    /// lockless-write. Unless few of the `writing` functions write it so
    /// (`sock.sk_err`: one xchg() in sock_error() among a hundred
    /// functions' plain stores): a conflict, and the others decide, as for
    /// a lock few writers hold.
    pub(super) fn atomic_verdict(
        &self,
        writing: &BTreeSet<&str>,
        conflicts: &mut Vec<String>,
    ) -> Option<Verdict> {
        if self.atomic.is_empty() {
            return None;
        }
        if self.atomic.len() * MIN_WRITER_SHARE >= writing.len() {
            return Some(Verdict::Lockless);
        }
        let atomic: Vec<String> = self.atomic.iter().cloned().collect();
        conflicts.push(format!(
            "{} of {} functions writing it write atomically with no lock ({}): too few to make \
             it lockless-write",
            atomic.len(),
            writing.len(),
            listed(&atomic, MAX_FUNCTIONS_LISTED)
        ));
        None
    }

    /// The lock the most functions write under (a function's writes are
    /// one critical section), then the most writes, then by name: the
    /// member's, if enough of the `writing` functions hold it; the other
    /// locks and unlocked writes told.
    pub(super) fn lock_verdict(
        &self,
        writing: &BTreeSet<&str>,
        facts: &Facts<'_>,
        m: &MemberFacts,
        evidence: &mut Vec<Evidence>,
        contexts: &mut BTreeMap<String, String>,
        conflicts: &mut Vec<String>,
    ) -> Option<Verdict> {
        let chosen = self
            .under
            .iter()
            .min_by_key(|(lock, (functions, n))| (std::cmp::Reverse((functions.len(), *n)), *lock));
        // A lock few of the writing functions hold is no member's lock
        // (`Qdisc.qstats`: 1 of 34 functions under `seqlock`, the others
        // under the root lock their callers take): the rest decide.
        // Callers not seen leave many a locked write looking unlocked
        // (`mm_struct.map_count`: 3 of 7 functions under `mmap_lock`, all
        // of them in truth), so a minority is enough; a handful is not.
        let (lock, (_, n)) = chosen.filter(|(lock, (functions, _))| {
            let few = functions.len() * MIN_WRITER_SHARE < writing.len();
            if few {
                conflicts.push(format!(
                    "{} of {} functions writing it hold {lock}: too few to make it its lock",
                    functions.len(),
                    writing.len()
                ));
            }
            !few
        })?;
        if *n < self.count {
            self.tell_other_locks(lock, *n, evidence, conflicts);
        }
        // A lock inside the member itself (`cfs_rq.removed.lock` around
        // `removed.nr`): the member is no lock, and cannot be its own
        // lock's field; its writers are the lock's holders.
        if lock
            .strip_prefix(m.path.as_str())
            .is_some_and(|r| r.starts_with(['.', '[']))
        {
            let c = context_name(&format!("{}-{lock}", facts.ty));
            contexts.entry(c.clone()).or_insert_with(|| {
                format!(
                    "the holders of {}.{lock}, a lock inside {}",
                    facts.ty, m.path
                )
            });
            return Some(Verdict::Owned {
                write: vec![c],
                read: Vec::new(),
            });
        }
        Some(Verdict::Protected(lock.clone()))
    }

    /// The writes that do not hold `lock`, which `n` of them hold: the
    /// other locks and the functions with none, told in `evidence`; a
    /// conflict when the writes hold different locks.
    fn tell_other_locks(
        &self,
        lock: &str,
        n: usize,
        evidence: &mut Vec<Evidence>,
        conflicts: &mut Vec<String>,
    ) {
        let mut others: Vec<String> = self
            .under
            .iter()
            .filter(|(l, _)| *l != lock)
            .map(|(l, (functions, k))| {
                let functions: Vec<&str> = functions.iter().map(String::as_str).collect();
                format!("{k} hold {l} (in {})", functions.join(", "))
            })
            .collect();
        if !self.unlocked.is_empty() {
            others.push(format!(
                "no lock in {}",
                sorted(self.unlocked.clone()).join(", ")
            ));
        }
        evidence.push(declared_evidence(format!(
            "{n} of {} writes hold {lock}; {}",
            self.count,
            others.join("; ")
        )));
        if self.under.len() > 1 {
            let all: Vec<&str> = self.under.keys().map(String::as_str).collect();
            conflicts.push(format!(
                "the writes hold different locks ({}): {lock} is the one most functions hold",
                all.join(", ")
            ));
        }
    }

    /// With no lock of the struct's: the contexts that write the member.
    /// A lock of another object or a global serialises its writers when
    /// every write holds it; otherwise its holders are just the object's
    /// current owner (a driver's lock around an skb's write). Marked
    /// stores are each a path of their own, unless the owner also stores
    /// to the member; plain stores with no lock are the owner's.
    pub(super) fn owners_verdict(
        mut self,
        facts: &Facts<'_>,
        m: &MemberFacts,
        evidence: &mut Vec<Evidence>,
        contexts: &mut BTreeMap<String, String>,
    ) -> Verdict {
        let mut write = Vec::new();
        let one_lock = self.other_locks.first().filter(|(c, _)| {
            self.other_locks.len() == self.count && self.other_locks.iter().all(|o| o.0 == *c)
        });
        match one_lock {
            Some((c, what)) => {
                contexts.entry(c.clone()).or_insert_with(|| {
                    format!("the holders of {what}, which is no member of {}", facts.ty)
                });
                write.push(c.clone());
            }
            None => self.owner |= !self.other_locks.is_empty(),
        }
        // Marked stores to a member the owner also stores to are
        // serialized with the owner's (or those would race): the owner's
        // too, marked for lockless readers.
        if self.owner && !self.marked.is_empty() {
            let functions: Vec<String> = std::mem::take(&mut self.marked).into_keys().collect();
            evidence.push(declared_evidence(format!(
                "marked for lockless readers in {}, beside the owner's stores to it: the owner's too",
                listed(&functions, MAX_FUNCTIONS_LISTED)
            )));
        }
        // On a network path, the path's: its owner at that moment stores
        // (the queue's or the socket's lock a caller takes, the NAPI
        // instance), as the kernel's net_cachelines tables mean tx and rx.
        let mut on_paths: BTreeMap<NetPath, Vec<String>> = BTreeMap::new();
        for (f, paths) in self.marked {
            for p in &paths {
                on_paths.entry(*p).or_default().push(f.clone());
            }
            if paths.is_empty() {
                let c = context_name(&f);
                contexts.entry(c.clone()).or_insert_with(|| {
                    format!(
                        "{f}, storing {} with WRITE_ONCE or a release store: others read it \
                         locklessly",
                        m.path
                    )
                });
                write.push(c);
            }
        }
        for (p, functions) in on_paths {
            evidence.push(declared_evidence(format!(
                "marked for lockless readers on {} in {}: that path's, one CPU at a time",
                p.words(),
                listed(&functions, MAX_FUNCTIONS_LISTED)
            )));
            write.push(path_context(p, contexts));
        }
        // Plain stores with no lock: the object's owner's, one at a time.
        if self.owner {
            contexts.entry(OWNER.to_owned()).or_insert_with(|| {
                "plain stores with no lock held: the object's owner, one CPU at a time".to_owned()
            });
            write.push(OWNER.to_owned());
        }
        Verdict::Owned {
            write: sorted(write),
            read: Vec::new(),
        }
    }
}
