//! A struct's rules drafted from evidence: for each direct member, the
//! class the strongest evidence gives (declared in the source, then
//! measured by perf, then inferred from the type), every piece of
//! evidence as text, and the evidence that disagrees, listed and not
//! resolved. Who touches one object at once decides the contexts: plain
//! stores with no lock are the object's owner's (one context, one CPU at
//! a time), a lock's holders are one context named by the lock's struct
//! and member, a `WRITE_ONCE` store's function is a path of its own
//! unless it stores plainly to the object too (then it is the owner);
//! writes made while the object is built or torn down, or on the control
//! path, are not counted, and a member read by several fast paths and written on none
//! is read-mostly.

mod member_heat;
mod perf_verdict;
mod source_verdict;
mod type_verdict;
pub(crate) use type_verdict::is_primitive;
mod write_verdict;

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::draft_types::{
    DraftContext, DraftField, DraftRule, DraftType, Evidence, Mark,
};
use crate::analysis::samples::Placed;
use crate::evidence::source::{Declaration, Role, Said};
use crate::path::within;
use member_heat::{heat, write_heat};
use perf_verdict::measured;
use source_verdict::{declared, remotely_read};
use type_verdict::inferred;

/// A direct member of the drafted struct.
#[derive(Clone, Debug)]
pub(crate) struct MemberFacts {
    /// Its name (its path in the struct).
    pub path: String,
    /// The names its type goes by: typedefs, then the tag.
    pub type_names: Vec<String>,
    /// The kernel cacheline group it sits in (`tcp_sock_read_tx`).
    pub group: Option<String>,
}

impl MemberFacts {
    /// Is it a pointer (through typedefs and qualifiers)?
    pub(crate) fn is_pointer(&self) -> bool {
        self.type_names
            .last()
            .is_some_and(|n| n == crate::analysis::validate::POINTER)
    }
}

/// Everything known about one struct of one build.
pub(crate) struct Facts<'a> {
    /// The struct.
    pub ty: String,
    /// Its direct members, in order.
    pub members: Vec<MemberFacts>,
    /// perf's samples placed on it.
    pub placed: Vec<Placed<'a>>,
    /// What the source says of its members and of the locks its writers
    /// hold.
    pub declarations: Vec<&'a Declaration>,
    /// The structs that embed it by value, whose locks it may be under.
    pub enclosing: Vec<String>,
}

/// What a drafted struct needs besides its own table.
pub(crate) struct Drafted {
    /// The struct.
    pub ty: DraftType,
    /// The contexts its rules use.
    pub contexts: Vec<DraftContext>,
    /// Locks of enclosing structs its rules name: the struct, the member
    /// and the evidence.
    pub locks: Vec<(String, String, Vec<Evidence>)>,
}

/// The context of plain stores made with no lock: the object's owner.
/// An object passed from owner to owner (an skb in a queue, a napi in
/// its poll) is written by one CPU at a time, whichever function it is.
const OWNER: &str = "owner";

/// Functions named in one line of evidence.
const MAX_FUNCTIONS_LISTED: usize = 5;

/// A function is initialisation when its name says so: its writes are
/// made before anyone else sees the struct.
fn is_init(function: &str) -> bool {
    function.contains("init") || function.contains("setup")
}

/// What the draft of one member needs to know of the whole struct.
struct Whole<'a> {
    /// Its direct members' names, but for pointers: those that can be a
    /// lock or hold one (`&h->ehash_locks[i]` is a lock of the array
    /// `ehash_locks` points to, not of `h`).
    member_names: Vec<&'a str>,
    /// The functions that store to its members on the fast path with plain
    /// stores and no lock held.
    plain_writers: BTreeSet<&'a str>,
}

impl<'a> Whole<'a> {
    /// What the draft of each member of `facts`' struct needs of the rest.
    fn of(facts: &'a Facts<'a>) -> Self {
        Whole {
            member_names: facts
                .members
                .iter()
                .filter(|m| !m.is_pointer())
                .map(|m| m.path.as_str())
                .collect(),
            plain_writers: plain_writers(facts),
        }
    }
}

/// The functions of `facts` that store to a member of its struct on the
/// fast path with a plain store and no lock held (a lock held shared is
/// none): each has the object to itself, by ownership or by a lock its
/// callers hold, or its plain stores would race.
fn plain_writers<'a>(facts: &Facts<'a>) -> BTreeSet<&'a str> {
    facts
        .declarations
        .iter()
        .filter(|d| d.ty == facts.ty && not_counted(d).is_none())
        .filter(|d| match &d.said {
            Said::Written(w, held) => !w.lockless() && !w.marked() && held.iter().all(|h| h.shared),
            _ => false,
        })
        .filter_map(|d| d.function.as_deref())
        .collect()
}

/// Why an access of `d` is not the fast path's: made while the object is
/// built or torn down, on the control path, or in a function named as an
/// initialiser. `None` for a fast-path access, which counts.
fn not_counted(d: &Declaration) -> Option<&'static str> {
    match d.role {
        Role::Construction => Some("while the object is built"),
        Role::Control => Some("on the control path"),
        Role::Teardown => Some("while the object is torn down"),
        Role::Failure => Some("when something went wrong (an error's handler)"),
        Role::Fast if is_init(d.function.as_deref().unwrap_or("")) => {
            Some("in initialisation, by name")
        }
        Role::Fast => None,
    }
}

/// What one kind of evidence concludes about a member.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Verdict {
    Lock,
    Protected(String),
    Lockless,
    /// Written with plain stores by these contexts, read by those.
    Owned {
        write: Vec<String>,
        read: Vec<String>,
    },
    /// Only read, by these functions (none: sampled, functions unknown).
    Read(Vec<String>),
}

impl Verdict {
    fn describe(&self) -> String {
        match self {
            Verdict::Lock => "a lock".into(),
            Verdict::Protected(l) => format!("lock-protected by {l}"),
            Verdict::Lockless => "lockless-write".into(),
            Verdict::Owned { write, .. } => {
                format!("written with plain stores in {}", write.join(", "))
            }
            Verdict::Read(_) => "only read".into(),
        }
    }

    /// Two verdicts that cannot both hold. Reads never conflict (samples
    /// are partial), nor plain writes with a lock (its holders write).
    fn conflicts(&self, other: &Verdict) -> bool {
        use Verdict::*;
        match (self, other) {
            (Read(_), _) | (_, Read(_)) => false,
            (Protected(a), Protected(b)) => a != b,
            (Protected(_), Owned { .. }) | (Owned { .. }, Protected(_)) => false,
            (Owned { .. }, Owned { .. }) => false,
            (a, b) => std::mem::discriminant(a) != std::mem::discriminant(b),
        }
    }
}

/// Drafts the rules of `facts`' struct: each member's field, then the
/// reads of functions that are no context dropped.
pub(crate) fn draft(facts: &Facts<'_>) -> Drafted {
    let mut contexts: BTreeMap<String, String> = BTreeMap::new();
    let mut locks: Vec<(String, String, Vec<Evidence>)> = Vec::new();
    let whole = Whole::of(facts);
    let mut fields: Vec<DraftField> = facts
        .members
        .iter()
        .map(|m| field(facts, m, &whole, &mut contexts, &mut locks))
        .collect();
    drop_non_context_readers(&mut fields, &contexts);
    Drafted {
        ty: DraftType {
            name: facts.ty.clone(),
            fields,
        },
        contexts: contexts
            .into_iter()
            .map(|(name, why)| DraftContext {
                name,
                writers: "serialized".into(),
                why,
            })
            .collect(),
        locks,
    }
}

/// The draft of member `m`: the verdicts of the source, perf and the
/// type, the one chosen and those that disagree with it, its heat, and
/// the evidence of each. The contexts its rule names join `contexts`,
/// the locks of enclosing structs its writers hold `locks`.
fn field(
    facts: &Facts<'_>,
    m: &MemberFacts,
    whole: &Whole<'_>,
    contexts: &mut BTreeMap<String, String>,
    locks: &mut Vec<(String, String, Vec<Evidence>)>,
) -> DraftField {
    let mut evidence = Vec::new();
    let mut conflicts = Vec::new();
    let declared = declared(
        facts,
        m,
        whole,
        &mut evidence,
        contexts,
        locks,
        &mut conflicts,
    );
    // Another CPU's copy read while its owner writes: the readers are a
    // context of their own.
    let declared = declared.map(|v| remotely_read(facts, m, v, &mut evidence, contexts));
    let measured = measured(facts, m, &mut evidence);
    let inferred = inferred(m, &mut evidence);
    // Reads by perf name the contexts that read a written member.
    let mut verdicts: Vec<(Mark, Verdict)> = [
        (Mark::Declared, declared),
        (Mark::Measured, measured),
        (Mark::Inferred, inferred),
    ]
    .into_iter()
    .filter_map(|(mark, v)| v.map(|v| (mark, v)))
    .collect();
    merge_owned(&mut verdicts);
    let read =
        |(mark, v): &(Mark, Verdict)| *mark == Mark::Declared && matches!(v, Verdict::Read(_));
    let typed = |(mark, v): &(Mark, Verdict)| *mark == Mark::Inferred && *v == Verdict::Lockless;
    if verdicts.iter().any(read)
        && verdicts.iter().any(typed)
        && source_verdict::set_by_control_only(facts, m)
    {
        // Set by the control path, read on fast ones: a limit, whatever
        // its type.
        verdicts.retain(|v| !typed(v));
        evidence.push(declared_evidence(
            "stored only on the control path, when not built or torn down: read-mostly whatever its type"
                .to_owned(),
        ));
    } else {
        type_first(&mut verdicts);
    }
    let chosen = chosen(&verdicts);
    if let Some((mark, v)) = &chosen {
        for (other_mark, other) in &verdicts {
            if v.conflicts(other) {
                conflicts.push(format!(
                    "{} evidence says {}, {} says {}",
                    mark.name(),
                    v.describe(),
                    other_mark.name(),
                    other.describe()
                ));
            }
        }
    }
    if let Some((_, Verdict::Owned { write, .. })) = &chosen {
        for c in write {
            contexts.entry(c.clone()).or_insert_with(|| {
                format!(
                    "stores to {} with plain stores: one writer at a time",
                    m.path
                )
            });
        }
    }
    let heat = heat(facts, m);
    if let Some((_, why)) = &heat {
        evidence.push(declared_evidence(why.clone()));
    }
    DraftField {
        path: m.path.clone(),
        rule: chosen.as_ref().map(|(_, v)| rule_of(v)),
        mark: chosen.as_ref().map(|(mark, _)| *mark),
        evidence,
        conflicts,
        heat: heat.map(|(h, _)| h),
        write_heat: write_heat(facts, m),
    }
}

/// A refcount, lockref or atomic is written by many CPUs at once
/// whatever its plain initial stores look like: its type's lockless-write
/// outranks owner writes and reads, first among `verdicts`.
fn type_first(verdicts: &mut Vec<(Mark, Verdict)>) {
    if let Some(k) = verdicts
        .iter()
        .position(|(mark, v)| *mark == Mark::Inferred && *v == Verdict::Lockless)
        && verdicts.iter().all(|(_, v)| {
            matches!(
                v,
                Verdict::Owned { .. } | Verdict::Read(_) | Verdict::Lockless
            )
        })
        && verdicts[0].1 != Verdict::Lockless
    {
        let inferred = verdicts.remove(k);
        verdicts.insert(0, inferred);
    }
}

/// The verdict a member's rule takes of `verdicts` (strongest first): a
/// write's, else perf's reads, which name their readers, else the first.
fn chosen(verdicts: &[(Mark, Verdict)]) -> Option<(Mark, Verdict)> {
    verdicts
        .iter()
        .find(|(_, v)| !matches!(v, Verdict::Read(_)))
        .or_else(|| {
            verdicts
                .iter()
                .find(|(mark, v)| *mark == Mark::Measured && matches!(v, Verdict::Read(_)))
        })
        .or_else(|| verdicts.first())
        .cloned()
}

/// A read by a function that is no context is a plain hot read: such
/// readers leave the rules of `fields`, and a rule left with no context
/// is hot-read.
fn drop_non_context_readers(fields: &mut [DraftField], contexts: &BTreeMap<String, String>) {
    for f in fields {
        if let Some(DraftRule::Contexts { read, write }) = &mut f.rule {
            read.retain(|r| contexts.contains_key(r));
            if write.is_empty() && read.is_empty() {
                f.rule = Some(DraftRule::Class {
                    class: "hot-read".into(),
                });
            }
        }
    }
}

/// Plain writes measured and declared name the same member's writers:
/// the chosen verdict gets both sets, and the readers perf saw.
fn merge_owned(verdicts: &mut [(Mark, Verdict)]) {
    let mut writes: Vec<String> = Vec::new();
    let mut reads: Vec<String> = Vec::new();
    for (_, v) in verdicts.iter() {
        match v {
            Verdict::Owned { write, read } => {
                writes.extend(write.iter().cloned());
                reads.extend(read.iter().cloned());
            }
            Verdict::Read(r) => reads.extend(r.iter().cloned()),
            _ => {}
        }
    }
    for (_, v) in verdicts.iter_mut() {
        if let Verdict::Owned { write, read } = v {
            *write = sorted(writes.clone());
            *read = sorted(
                reads
                    .iter()
                    .filter(|r| !writes.contains(r))
                    .cloned()
                    .collect(),
            );
        }
    }
    // Only read by perf, never written by anyone: hot-read with readers.
    if writes.is_empty() {
        for (_, v) in verdicts.iter_mut() {
            if let Verdict::Read(r) = v {
                *r = sorted(reads.clone());
            }
        }
    }
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v.dedup();
    v
}

fn rule_of(v: &Verdict) -> DraftRule {
    let class = |c: &str| DraftRule::Class { class: c.into() };
    match v {
        Verdict::Lock => class("lock"),
        Verdict::Protected(lock) => DraftRule::LockProtected { lock: lock.clone() },
        Verdict::Lockless => class("lockless-write"),
        Verdict::Owned { write, read } => DraftRule::Contexts {
            read: read.clone(),
            write: write.clone(),
        },
        Verdict::Read(read) if read.is_empty() => class("hot-read"),
        Verdict::Read(read) => DraftRule::Contexts {
            read: read.clone(),
            write: Vec::new(),
        },
    }
}

/// Evidence the source gives.
fn declared_evidence(text: String) -> Evidence {
    Evidence {
        mark: Mark::Declared,
        text,
    }
}

/// Is declaration `d` about member `m`?
fn about(d: &Declaration, ty: &str, m: &str) -> bool {
    d.ty == ty && within(&d.path, m)
}

fn at(d: &Declaration) -> String {
    match &d.function {
        Some(f) => format!("in {f} ({}:{})", d.file.display(), d.line),
        None => format!("({}:{})", d.file.display(), d.line),
    }
}

/// A context name for a lock that is no member of a known struct: its
/// expression's identifiers (`&subsys->lock` → `subsys-lock`).
fn holders(text: &str) -> String {
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    context_name(&words.join("-"))
}

/// `name` as a rules file's context name: letters, digits, '-' and '_',
/// starting with a letter or '_' (`____napi_schedule` as it is).
pub(crate) fn context_name(name: &str) -> String {
    let name: String = name
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                true => c,
                false => '-',
            },
        )
        .collect();
    match name.chars().next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => name,
        _ => format!("lock-{name}"),
    }
}

/// The first `n` of `names`, then how many more.
fn listed(names: &[String], n: usize) -> String {
    match names.len() > n {
        true => format!("{} and {} more", names[..n].join(", "), names.len() - n),
        false => names.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::source_verdict::{REMOTE, group_verdict};
    use super::*;
    use crate::evidence::source::{Held, NetPath, Said, Write};

    #[test]
    fn plain_writes_and_reads_conflict_as_they_should() {
        let owned = Verdict::Owned {
            write: vec!["a".into()],
            read: vec![],
        };
        assert!(!owned.conflicts(&Verdict::Protected("l".into())));
        assert!(Verdict::Lockless.conflicts(&Verdict::Protected("l".into())));
        assert!(!Verdict::Read(vec![]).conflicts(&Verdict::Lock));
        assert!(Verdict::Lock.conflicts(&Verdict::Lockless));
        assert_eq!(holders("&subsys->lock"), "subsys-lock");
        let member = |group: &str| MemberFacts {
            path: "x".into(),
            type_names: Vec::new(),
            group: Some(group.into()),
        };
        let (mut ev, mut ctx) = (Vec::new(), BTreeMap::new());
        assert_eq!(
            group_verdict(&member("tcp_sock_read_txrx"), &mut ev, &mut ctx),
            Some(Verdict::Read(vec!["rx".into(), "tx".into()]))
        );
        assert_eq!(
            group_verdict(&member("net_device_write_tx"), &mut ev, &mut ctx),
            Some(Verdict::Owned {
                write: vec!["tx".into()],
                read: vec![]
            })
        );
        assert_eq!(
            group_verdict(&member("tcp_sock_write"), &mut ev, &mut ctx),
            None
        );
        assert_eq!(
            group_verdict(&member("page_pool_frag"), &mut ev, &mut ctx),
            None
        );
        assert_eq!(holders("&kfence_freelist_lock"), "kfence_freelist_lock");
    }

    #[test]
    fn the_lock_most_functions_hold_wins_others_conflict_and_shared_holds_serialise_nothing() {
        let held = |lock: &str, shared: bool| Held {
            member: Some(("s".into(), lock.into())),
            chain: vec![("s".into(), lock.into())],
            text: format!("&s->{lock}"),
            how: if shared { "down_read" } else { "spin_lock" }.into(),
            shared,
            global_mutex: false,
        };
        let write = |path: &str, function: &str, line: usize, h: Vec<Held>| Declaration {
            ty: "s".into(),
            path: path.into(),
            said: Said::Written(Write::Assign, h),
            function: Some(function.into()),
            file: "s.c".into(),
            line,
            role: crate::evidence::source::Role::Fast,
            param: None,
            entry: None,
            callers: 0,
            hot_callers: 0,
            paths: Vec::new(),
        };
        // a: under l1 in two functions, under l2 three times in one.
        let ds = [
            write("a", "f1", 1, vec![held("l1", false)]),
            write("a", "f2", 2, vec![held("l1", false)]),
            write("a", "g", 3, vec![held("l2", false)]),
            write("a", "g", 4, vec![held("l2", false)]),
            write("a", "g", 5, vec![held("l2", false)]),
            // x: only under l1 taken shared.
            write("x", "h", 6, vec![held("l1", true)]),
        ];
        let member = |path: &str| MemberFacts {
            path: path.into(),
            type_names: Vec::new(),
            group: None,
        };
        let facts = Facts {
            ty: "s".into(),
            members: ["a", "l1", "l2", "x"].map(member).into(),
            placed: Vec::new(),
            declarations: ds.iter().collect(),
            enclosing: Vec::new(),
        };
        let drafted = draft(&facts);
        let field = |p: &str| drafted.ty.fields.iter().find(|f| f.path == p).unwrap();
        let a = field("a");
        assert_eq!(a.rule, Some(DraftRule::LockProtected { lock: "l1".into() }));
        assert_eq!(
            a.conflicts,
            ["the writes hold different locks (l1, l2): l1 is the one most functions hold"]
        );
        assert!(
            a.evidence
                .iter()
                .any(|e| e.text == "2 of 5 writes hold l1; 3 hold l2 (in g)"),
            "{:?}",
            a.evidence
        );
        let x = field("x");
        assert_eq!(
            x.rule,
            Some(DraftRule::Contexts {
                read: Vec::new(),
                write: vec!["owner".into()]
            })
        );
        assert!(
            x.evidence.iter().any(|e| e
                .text
                .contains("no lock held but &s->l1 shared (down_read())")),
            "{:?}",
            x.evidence
        );
    }

    trait WithPath {
        fn with_path(self, path: &str) -> Self;
    }
    impl WithPath for Declaration {
        fn with_path(mut self, path: &str) -> Self {
            self.path = path.into();
            self
        }
    }

    /// A declaration of `said` about `path` of struct `s` in `function`.
    fn decl(path: &str, function: &str, said: Said, role: Role) -> Declaration {
        Declaration {
            ty: "s".into(),
            path: path.into(),
            said,
            function: Some(function.into()),
            file: "s.c".into(),
            line: 1,
            role,
            param: None,
            entry: None,
            callers: 0,
            hot_callers: 0,
            paths: Vec::new(),
        }
    }

    /// A fast-path function's read of member `path`.
    fn read_decl(path: &str, function: &str, once: bool, remote: bool) -> Declaration {
        decl(path, function, Said::Read { once, remote }, Role::Fast)
    }

    fn draft_of(members: &[&str], ds: &[Declaration]) -> Drafted {
        let untyped: Vec<(&str, &str)> = members.iter().map(|m| (*m, "")).collect();
        draft_typed(&untyped, ds)
    }

    /// A draft of struct `s` whose members are (name, type name; "" for
    /// none).
    fn draft_typed(members: &[(&str, &str)], ds: &[Declaration]) -> Drafted {
        let member = |(path, ty): &(&str, &str)| MemberFacts {
            path: (*path).into(),
            type_names: [*ty]
                .iter()
                .filter(|t| !t.is_empty())
                .map(|t| t.to_string())
                .collect(),
            group: None,
        };
        draft(&Facts {
            ty: "s".into(),
            members: members.iter().map(member).collect(),
            placed: Vec::new(),
            declarations: ds.iter().collect(),
            enclosing: Vec::new(),
        })
    }

    fn rule(d: &Drafted, path: &str) -> Option<DraftRule> {
        d.ty.fields.iter().find(|f| f.path == path)?.rule.clone()
    }

    /// Lock `text`, member `path` of `ty`, taken with `spin_lock()`.
    fn spin_held(ty: &str, path: &str, text: &str) -> Held {
        Held {
            member: Some((ty.into(), path.into())),
            chain: vec![(ty.into(), path.into())],
            text: text.into(),
            how: "spin_lock".into(),
            shared: false,
            global_mutex: false,
        }
    }

    /// A fast-path function's plain store to `path` with `h` held.
    fn under(path: &str, function: &str, h: Held) -> Declaration {
        decl(
            path,
            function,
            Said::Written(Write::Assign, vec![h]),
            Role::Fast,
        )
    }

    #[test]
    fn a_pointer_to_locks_is_no_lock_of_the_struct() {
        // inet_hashinfo: `spinlock_t *ehash_locks`, taken as
        // `&h->ehash_locks[i]`; `ring` an array of locks in the struct.
        let held = |path: &str| spin_held("s", path, &format!("&h->{path}[i]"));
        let locked = |path: &str| decl(path, "f", Said::Locked("spin_lock".into()), Role::Fast);
        let ds = [
            locked("locks"),
            locked("ring"),
            under("n", "f", held("locks")),
            under("n", "g", held("locks")),
            under("m", "f", held("ring")),
            under("m", "g", held("ring")),
        ];
        let d = draft_typed(
            &[
                ("locks", "a pointer"),
                ("ring", "spinlock_t"),
                ("n", ""),
                ("m", ""),
            ],
            &ds,
        );
        assert_ne!(
            rule(&d, "locks"),
            Some(DraftRule::Class {
                class: "lock".into()
            })
        );
        assert_eq!(
            rule(&d, "ring"),
            Some(DraftRule::Class {
                class: "lock".into()
            })
        );
        assert!(
            !matches!(rule(&d, "n"), Some(DraftRule::LockProtected { .. })),
            "{:?}",
            rule(&d, "n")
        );
        assert_eq!(
            rule(&d, "m"),
            Some(DraftRule::LockProtected {
                lock: "ring".into()
            })
        );
    }

    #[test]
    fn a_lock_few_writers_hold_is_no_members_lock() {
        let held = spin_held("s", "l", "&s->l");
        let plain = |f: &str| decl("q", f, Said::Written(Write::Assign, vec![]), Role::Fast);
        let locked = |p: &str, f: &str| {
            decl(
                p,
                f,
                Said::Written(Write::Assign, vec![held.clone()]),
                Role::Fast,
            )
        };
        // q: 1 of 5 writing functions under l; m: 2 of 5 (a minority, as
        // callers not seen leave it): still its lock.
        let mut ds = vec![
            locked("q", "a"),
            plain("b"),
            plain("c"),
            plain("d"),
            plain("e"),
        ];
        ds.extend([locked("m", "a"), locked("m", "b")]);
        ds.extend(["c", "d", "e"].map(|f| plain(f).with_path("m")));
        ds.push(decl("l", "a", Said::Locked("spin_lock".into()), Role::Fast));
        let d = draft_of(&["q", "m", "l"], &ds);
        assert_eq!(
            rule(&d, "q"),
            Some(DraftRule::Contexts {
                read: vec![],
                write: vec![OWNER.into()],
            })
        );
        let q = d.ty.fields.iter().find(|f| f.path == "q").unwrap();
        assert!(
            q.conflicts
                .iter()
                .any(|c| c == "1 of 5 functions writing it hold l: too few to make it its lock"),
            "{:?}",
            q.conflicts
        );
        assert_eq!(
            rule(&d, "m"),
            Some(DraftRule::LockProtected { lock: "l".into() })
        );
    }

    #[test]
    fn another_cpus_readers_of_an_owners_member_are_a_context() {
        let remote = |f: &str| read_decl("n", f, false, true);
        let ds = [
            decl(
                "n",
                "enqueue",
                Said::Written(Write::Assign, vec![]),
                Role::Fast,
            ),
            remote("load_balance"),
            remote("idle_cpu"),
            // A member only read, remotely too: still read-mostly.
            remote("load_balance").with_path("cap"),
            remote("idle_cpu").with_path("cap"),
        ];
        let d = draft_of(&["n", "cap"], &ds);
        assert_eq!(
            rule(&d, "n"),
            Some(DraftRule::Contexts {
                read: vec![REMOTE.into()],
                write: vec![OWNER.into()],
            })
        );
        assert!(d.contexts.iter().any(|c| c.name == REMOTE));
        let why = &d.ty.fields[0].evidence;
        assert!(
            why.iter()
                .any(|e| e.text == "read from another CPU's copy in idle_cpu, load_balance"),
            "{why:?}"
        );
        assert_eq!(
            rule(&d, "cap"),
            Some(DraftRule::Class {
                class: "hot-read".into()
            })
        );
    }

    #[test]
    fn heat_counts_fast_paths_and_twice_with_their_callers_those_an_entry_point_reaches() {
        let with = |mut d: Declaration, entry: Option<&str>, callers: usize| {
            d.entry = entry.map(str::to_owned);
            d.callers = callers;
            // The callers of a reached function are reached, but one.
            d.hot_callers = match entry {
                Some(_) => callers - 1,
                None => 0,
            };
            d
        };
        let ds = [
            // refcnt: one helper with 9 callers, none reached; its
            // control-path and construction writes count for nothing.
            with(
                decl(
                    "refcnt",
                    "get",
                    Said::Written(Write::Atomic("refcount_inc".into()), vec![]),
                    Role::Fast,
                ),
                None,
                9,
            ),
            decl(
                "refcnt",
                "change",
                Said::Written(Write::Assign, vec![]),
                Role::Control,
            ),
            decl(
                "refcnt",
                "alloc",
                Said::Written(Write::Assign, vec![]),
                Role::Construction,
            ),
            // state: two functions, one the scheduler reaches (3 callers),
            // read and written there (one function, once).
            with(
                read_decl("state", "tick", false, false),
                Some("the scheduler (__schedule)"),
                3,
            ),
            with(
                decl(
                    "state",
                    "tick",
                    Said::Written(Write::Assign, vec![]),
                    Role::Fast,
                ),
                Some("the scheduler (__schedule)"),
                3,
            ),
            read_decl("state", "peek", false, false),
        ];
        let d = draft_of(&["refcnt", "state", "cold"], &ds);
        let field = |p: &str| d.ty.fields.iter().find(|f| f.path == p).unwrap();
        // get() alone: its callers reach it from no fast entry point.
        assert_eq!(field("refcnt").heat, Some(1));
        // Stored by get() alone too; by tick() alone, which the
        // scheduler reaches with 2 of its callers; never.
        assert_eq!(field("refcnt").write_heat, Some(1));
        assert_eq!(field("state").write_heat, Some(6));
        assert_eq!(field("cold").write_heat, None);
        // (1 + 2) * 2 for tick, 1 for peek.
        assert_eq!(field("state").heat, Some(7));
        assert_eq!(field("cold").heat, None);
        let why: Vec<&str> = field("state")
            .evidence
            .iter()
            .map(|e| e.text.as_str())
            .filter(|t| t.starts_with("heat"))
            .collect();
        assert_eq!(
            why,
            [
                "heat 7: 2 fast-path functions touch it; 1 reached from the scheduler (__schedule), counted twice with the 2 callers reached too; 1 caller no fast entry point reaches not counted"
            ]
        );
        let why = |p: &str| {
            field(p)
                .evidence
                .iter()
                .map(|e| e.text.clone())
                .find(|t| t.starts_with("heat"))
        };
        assert_eq!(
            why("refcnt").as_deref(),
            Some(
                "heat 1: 1 fast-path function touches it; 9 callers no fast entry point reaches not counted"
            )
        );
    }

    #[test]
    fn a_marked_store_beside_the_owners_plain_stores_is_the_owners() {
        let store =
            |path: &str, f: &str, w: Write| decl(path, f, Said::Written(w, vec![]), Role::Fast);
        let ds = [
            // tcp_event_new_data_sent(): WRITE_ONCE(tp->snd_nxt, ..) beside
            // tp->packets_out += .., under the socket lock its callers hold.
            store("snd_nxt", "tcp_event_new_data_sent", Write::Once),
            store("packets_out", "tcp_event_new_data_sent", Write::Assign),
            // tcp_eat_skb() stores only copied_seq, which the owner stores
            // too (tcp_disconnect stores plainly beside it).
            store("copied_seq", "tcp_eat_skb", Write::Once),
            store("copied_seq", "tcp_disconnect", Write::Once),
            store("urg_data", "tcp_disconnect", Write::Assign),
            // pglist_data.kswapd_order: kswapd and the wakers, each with
            // WRITE_ONCE only and no lock: paths of their own.
            store("kswapd_order", "kswapd", Write::Once),
            store("kswapd_order", "wakeup_kswapd", Write::Once),
        ];
        let members = [
            "snd_nxt",
            "packets_out",
            "copied_seq",
            "urg_data",
            "kswapd_order",
        ];
        let d = draft_of(&members, &ds);
        let owner = Some(DraftRule::Contexts {
            read: vec![],
            write: vec!["owner".into()],
        });
        for m in ["snd_nxt", "packets_out", "copied_seq", "urg_data"] {
            assert_eq!(rule(&d, m), owner, "{m}");
        }
        assert_eq!(
            rule(&d, "kswapd_order"),
            Some(DraftRule::Contexts {
                read: vec![],
                write: vec!["kswapd".into(), "wakeup_kswapd".into()],
            })
        );
        let names: Vec<&str> = d.contexts.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["kswapd", "owner", "wakeup_kswapd"]);
        let texts = |path: &str| -> Vec<String> {
            let f = d.ty.fields.iter().find(|f| f.path == path).unwrap();
            f.evidence.iter().map(|e| e.text.clone()).collect()
        };
        assert!(
            texts("snd_nxt").contains(
                &"marked for lockless readers in tcp_event_new_data_sent, which stores plainly \
                  to s with no lock too: the owner's"
                    .to_owned()
            ),
            "{:?}",
            texts("snd_nxt")
        );
        assert!(
            texts("copied_seq").contains(
                &"marked for lockless readers in tcp_eat_skb, beside the owner's stores to it: \
                  the owner's too"
                    .to_owned()
            ),
            "{:?}",
            texts("copied_seq")
        );
    }

    #[test]
    fn marked_stores_on_a_network_path_are_that_paths_not_each_functions() {
        use NetPath::{Receive, Transmit};
        let store = |path: &str, f: &str, paths: &[NetPath]| Declaration {
            paths: paths.to_vec(),
            ..decl(path, f, Said::Written(Write::Once, vec![]), Role::Fast)
        };
        let ds = [
            // netdev_queue.trans_start: WRITE_ONCE in the transmit path's
            // helpers, under the queue's lock HARD_TX_LOCK() takes three
            // calls up; and in a watchdog no path reaches.
            store("trans_start", "txq_trans_update", &[Transmit]),
            store("trans_start", "txq_trans_cond_update", &[Transmit]),
            store("trans_start", "netif_trans_update", &[Transmit]),
            store("trans_start", "dev_watchdog", &[]),
            // A helper both paths reach (tcp_ack() sends from the receive
            // path): both.
            store("snd_una", "tcp_snd_una_update", &[Receive, Transmit]),
        ];
        let d = draft_of(&["trans_start", "snd_una"], &ds);
        assert_eq!(
            rule(&d, "trans_start"),
            Some(DraftRule::Contexts {
                read: vec![],
                write: vec!["dev_watchdog".into(), "tx".into()],
            })
        );
        assert_eq!(
            rule(&d, "snd_una"),
            Some(DraftRule::Contexts {
                read: vec![],
                write: vec!["rx".into(), "tx".into()],
            })
        );
        let names: Vec<&str> = d.contexts.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["dev_watchdog", "rx", "tx"]);
        // Read only on the transmit path (the queue's qdisc), or by one
        // reader off every path too (a hot read of its own).
        let read = |path: &str, f: &str, paths: &[NetPath]| Declaration {
            paths: paths.to_vec(),
            ..read_decl(path, f, false, false)
        };
        let reads = [
            read("qdisc", "__dev_xmit_skb", &[Transmit]),
            read("qdisc", "sch_direct_xmit", &[Transmit]),
            read("dev", "__dev_xmit_skb", &[Transmit]),
            read("dev", "dev_watchdog", &[]),
        ];
        let r = draft_of(&["qdisc", "dev"], &reads);
        assert_eq!(
            rule(&r, "qdisc"),
            Some(DraftRule::Contexts {
                read: vec!["tx".into()],
                write: vec![],
            })
        );
        assert_eq!(
            rule(&r, "dev"),
            Some(DraftRule::Class {
                class: "hot-read".into()
            })
        );
        let f =
            d.ty.fields
                .iter()
                .find(|f| f.path == "trans_start")
                .unwrap();
        assert!(
            f.evidence.iter().any(|e| e.text
                == "marked for lockless readers on the transmit path in netif_trans_update, \
                    txq_trans_cond_update, txq_trans_update: that path's, one CPU at a time"),
            "{:?}",
            f.evidence
        );
    }

    #[test]
    fn atomic_writes_by_few_writers_make_no_member_lockless() {
        let store =
            |path: &str, f: &str, w: Write| decl(path, f, Said::Written(w, vec![]), Role::Fast);
        let xchg = || Write::Atomic("xchg".into());
        // sock.sk_err: one xchg() in sock_error() among plain stores in
        // four other functions; `count`: one atomic writer of two.
        let ds = [
            store("sk_err", "sock_error", xchg()),
            store("sk_err", "tcp_reset", Write::Assign),
            store("sk_err", "tcp_done_with_error", Write::Assign),
            store("sk_err", "udp_err", Write::Assign),
            store("sk_err", "chtls_disconnect", Write::Assign),
            store("count", "get", Write::Atomic("atomic_inc".into())),
            store("count", "reset", Write::Assign),
        ];
        let d = draft_of(&["sk_err", "count"], &ds);
        assert_eq!(
            rule(&d, "sk_err"),
            Some(DraftRule::Contexts {
                read: vec![],
                write: vec!["owner".into()],
            })
        );
        let sk_err = d.ty.fields.iter().find(|f| f.path == "sk_err").unwrap();
        assert_eq!(
            sk_err.conflicts,
            [
                "1 of 5 functions writing it write atomically with no lock (sock_error): too few \
              to make it lockless-write"
            ]
        );
        assert_eq!(
            rule(&d, "count"),
            Some(DraftRule::Class {
                class: "lockless-write".into()
            })
        );
    }

    #[test]
    fn a_member_set_once_from_null_is_read_mostly() {
        // file.f_owner: published by file_f_owner_allocate() on first use,
        // read by the signal paths.
        let read = |f: &str| read_decl("f_owner", f, false, false);
        let ds = [
            decl(
                "f_owner",
                "file_f_owner_allocate",
                Said::Written(Write::Publish("cmpxchg".into()), vec![]),
                Role::Fast,
            ),
            read("send_sigio"),
            read("f_getown"),
        ];
        let d = draft_of(&["f_owner"], &ds);
        assert_eq!(
            rule(&d, "f_owner"),
            Some(DraftRule::Class {
                class: "hot-read".into()
            })
        );
        assert!(
            d.ty.fields[0].evidence.iter().any(|e| e.text
                == "written once, from NULL (a lazy initialisation), in file_f_owner_allocate: \
                    not counted"),
            "{:?}",
            d.ty.fields[0].evidence
        );
    }

    #[test]
    fn a_member_set_only_on_a_change_is_read_mostly() {
        // blk_mq_hw_ctx.state: __blk_mq_tag_busy() sets BLK_MQ_S_TAG_ACTIVE
        // only after test_bit() found it clear, and every dispatch reads
        // it; one blind set_bit() elsewhere is not enough to make it
        // lockless-write either.
        let read = |f: &str| read_decl("state", f, true, false);
        let tested = |f: &str| {
            decl(
                "state",
                f,
                Said::Written(
                    Write::Tested(Box::new(Write::Atomic("test_and_set_bit".into()))),
                    vec![],
                ),
                Role::Fast,
            )
        };
        let ds = [
            tested("__blk_mq_tag_busy"),
            tested("blk_mq_tag_wakeup"),
            read("blk_mq_dispatch_rq_list"),
            read("hctx_may_queue"),
        ];
        let d = draft_of(&["state"], &ds);
        assert_eq!(
            rule(&d, "state"),
            Some(DraftRule::Class {
                class: "hot-read".into()
            })
        );
        assert!(
            d.ty.fields[0].evidence.iter().any(|e| e.text
                == "written only on a change (a test of it comes first, there or in every caller) in __blk_mq_tag_busy, \
                    blk_mq_tag_wakeup: not counted"),
            "{:?}",
            d.ty.fields[0].evidence
        );
    }

    #[test]
    fn writes_under_a_mutex_of_the_whole_system_are_the_control_path() {
        // mem_cgroup_per_node.shrinker_info: replaced under shrinker_mutex
        // when a shrinker registers, read by reclaim.
        let global = Held {
            member: None,
            chain: Vec::new(),
            text: "&shrinker_mutex".into(),
            how: "lockdep_assert_held".into(),
            shared: false,
            global_mutex: true,
        };
        let read = |f: &str| read_decl("shrinker_info", f, true, false);
        let ds = [
            decl(
                "shrinker_info",
                "expand_one_shrinker_info",
                Said::Written(Write::Release("rcu_assign_pointer".into()), vec![global]),
                Role::Fast,
            ),
            read("shrink_slab_memcg"),
            read("set_shrinker_bit"),
        ];
        let d = draft_of(&["shrinker_info"], &ds);
        assert_eq!(
            rule(&d, "shrinker_info"),
            Some(DraftRule::Class {
                class: "hot-read".into()
            })
        );
        let f = &d.ty.fields[0];
        assert!(
            f.evidence.iter().any(|e| e.text
                == "written with a mutex of the whole system held, on the control path, in \
                    expand_one_shrinker_info: not counted"),
            "{:?}",
            f.evidence
        );
        assert!(d.contexts.is_empty());
    }

    #[test]
    fn plain_stores_are_the_owners_and_built_or_control_writes_leave_a_member_read_mostly() {
        let plain =
            |path: &str, f: &str, role| decl(path, f, Said::Written(Write::Assign, vec![]), role);
        let read = |path: &str, f: &str| read_decl(path, f, false, false);
        let ds = [
            plain("weight", "____napi_schedule", Role::Fast),
            plain("gro_bitmask", "__napi_poll", Role::Fast),
            plain("poll", "netif_napi_add_weight", Role::Construction),
            plain("limit", "tbf_change", Role::Control),
            read("poll", "__napi_poll"),
            read("poll", "busy_poll_stop"),
            read("limit", "tbf_enqueue"),
        ];
        let d = draft_of(&["weight", "gro_bitmask", "poll", "limit"], &ds);
        let owner = Some(DraftRule::Contexts {
            read: vec![],
            write: vec!["owner".into()],
        });
        assert_eq!(rule(&d, "weight"), owner);
        assert_eq!(rule(&d, "gro_bitmask"), owner);
        let names: Vec<&str> = d.contexts.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["owner"]);
        // Written only while built, read by two fast paths: read-mostly.
        assert_eq!(
            rule(&d, "poll"),
            Some(DraftRule::Class {
                class: "hot-read".into()
            })
        );
        let poll = d.ty.fields.iter().find(|f| f.path == "poll").unwrap();
        let texts: Vec<&str> = poll.evidence.iter().map(|e| e.text.as_str()).collect();
        assert!(
            texts.contains(
                &"written while the object is built in netif_napi_add_weight: not counted"
            ) && texts.contains(
                &"read in 2 functions: in __napi_poll (s.c:1), in busy_poll_stop (s.c:1)"
            ),
            "{texts:?}"
        );
        // One reader is not enough to call it read-mostly.
        assert_eq!(rule(&d, "limit"), None);
        // A lockref's plain initial stores do not make it the owner's.
        let ds = [plain("d_lockref", "d_alloc_parallel", Role::Fast)];
        let d = draft_typed(&[("d_lockref", "lockref")], &ds);
        assert_eq!(
            rule(&d, "d_lockref"),
            Some(DraftRule::Class {
                class: "lockless-write".into()
            })
        );
        let mark =
            |d: &Drafted, path: &str| d.ty.fields.iter().find(|f| f.path == path).unwrap().mark;
        assert_eq!(mark(&d, "d_lockref"), Some(Mark::Inferred));
        // An atomic the source shows written atomically stays declared.
        let ds = [decl(
            "evicted",
            "lru_gen_eviction",
            Said::Written(Write::Atomic("atomic_long_add".into()), vec![]),
            Role::Fast,
        )];
        let d = draft_typed(&[("evicted", "atomic_long_t")], &ds);
        assert_eq!(mark(&d, "evicted"), Some(Mark::Declared));
    }

    #[test]
    fn per_cpu_data_through_a_pointer_inside_a_member_leaves_the_member_its_writes() {
        // sock.__sk_common: `this_cpu_inc(*sk->sk_prot->orphan_count)`
        // reaches per-CPU data through skc_prot; skc_state is stored.
        let ds = [
            decl(
                "common.prot",
                "inet_child_forget",
                Said::PerCpu("this_cpu_inc".into()),
                Role::Fast,
            ),
            decl(
                "common.state",
                "tcp_set_state",
                Said::Written(Write::Assign, vec![]),
                Role::Fast,
            ),
            decl(
                "stats",
                "f",
                Said::PerCpu("this_cpu_inc".into()),
                Role::Fast,
            ),
            decl(
                "stats",
                "g",
                Said::Written(Write::Assign, vec![]),
                Role::Fast,
            ),
        ];
        let d = draft_of(&["common", "stats"], &ds);
        assert_eq!(
            rule(&d, "common"),
            Some(DraftRule::Contexts {
                read: vec![],
                write: vec!["owner".into()],
            })
        );
        // The member itself a per-CPU pointer: only read.
        assert_eq!(
            rule(&d, "stats"),
            Some(DraftRule::Class {
                class: "hot-read".into()
            })
        );
    }

    #[test]
    fn an_atomic_under_another_objects_lock_is_lockless_to_this_struct() {
        // lru_gen_eviction() adds to evicted under its caller's
        // mapping->host->i_lock; two functions store to it under the
        // struct's own lock.
        let i_lock = spin_held("inode", "i_lock", "&mapping->host->i_lock");
        let lock = || spin_held("s", "lock", "&s->lock");
        let store = |f: &str| under("evicted", f, lock());
        let ds = [
            decl(
                "evicted",
                "lru_gen_eviction",
                Said::Written(Write::Atomic("atomic_long_add".into()), vec![i_lock]),
                Role::Fast,
            ),
            store("inc_max_seq"),
            store("reset_batch_size"),
            decl("lock", "f", Said::Locked("spin_lock".into()), Role::Fast),
        ];
        let d = draft_of(&["evicted", "lock"], &ds);
        assert_eq!(
            rule(&d, "evicted"),
            Some(DraftRule::Class {
                class: "lockless-write".into()
            })
        );
    }

    #[test]
    fn locks_of_other_objects_a_lock_inside_a_member_and_no_table_named_after_a_member() {
        let q = || spin_held("sk_buff_head", "lock", "&q->lock");
        let ds = [
            // Every write of a under one other object's lock: its holders.
            under("a", "f", q()),
            under("a", "g", q()),
            // b: once under it, once with no lock: the owner's.
            under("b", "f", q()),
            decl("b", "h", Said::Written(Write::Assign, vec![]), Role::Fast),
            // removed.nr under removed.lock, a lock inside the member.
            under(
                "removed",
                "f",
                spin_held("s", "removed.lock", "&s->removed.lock"),
            ),
            decl("removed", "f", Said::Locked("spin_lock".into()), Role::Fast),
            // alloc under ring.producer_lock, a lock inside another member.
            under(
                "alloc",
                "f",
                spin_held("s", "ring.producer_lock", "&s->ring.producer_lock"),
            ),
            decl("ring", "f", Said::Locked("spin_lock".into()), Role::Fast),
        ];
        let ds: Vec<Declaration> = ds
            .into_iter()
            .map(|mut d| {
                if d.path == "removed" && matches!(d.said, Said::Written(..)) {
                    d.path = "removed.nr".into();
                }
                if d.path == "removed" || d.path == "ring" {
                    d.path.push_str(".lock");
                }
                d
            })
            .collect();
        let d = draft_of(&["a", "b", "removed", "alloc", "ring"], &ds);
        let write = |c: &str| {
            Some(DraftRule::Contexts {
                read: vec![],
                write: vec![c.into()],
            })
        };
        assert_eq!(rule(&d, "a"), write("sk_buff_head-lock"));
        assert_eq!(rule(&d, "b"), write("owner"));
        assert_eq!(rule(&d, "removed"), write("s-removed-lock"));
        assert_eq!(
            rule(&d, "alloc"),
            Some(DraftRule::LockProtected {
                lock: "ring.producer_lock".into()
            })
        );
        // A member holding a lock is no lock, and no table is named after it.
        assert_eq!(rule(&d, "ring"), None);
        assert!(d.locks.is_empty(), "{:?}", d.locks);
        for c in &d.contexts {
            assert_eq!(context_name(&c.name), c.name);
        }
        assert_eq!(context_name("____napi_schedule"), "____napi_schedule");
        assert_eq!(context_name("x.y z"), "x-y-z");
    }

    #[test]
    fn a_member_one_accessor_reads_for_its_many_callers_is_read_mostly() {
        // cfs_rq.rq: read in rq_of() alone, sched.h's, which the
        // scheduler calls everywhere; a member one function reads, called
        // once or a `.c` file's, is not.
        let called = |path: &str, function: &str, callers: usize, file: &str| Declaration {
            callers,
            file: file.into(),
            ..read_decl(path, function, false, false)
        };
        let d = draft_of(
            &["rq", "x", "y"],
            &[
                called("rq", "rq_of", 27, "kernel/sched/sched.h"),
                called("x", "f", 1, "x.h"),
                called("y", "kill_ioctx", 4, "fs/aio.c"),
            ],
        );
        assert_eq!(
            rule(&d, "rq"),
            Some(DraftRule::Class {
                class: "hot-read".into()
            })
        );
        let rq = &d
            .ty
            .fields
            .iter()
            .find(|f| f.path == "rq")
            .unwrap()
            .evidence;
        let said = "read in rq_of, a header's, which 27 functions call: read for each of them";
        assert!(rq.iter().any(|e| e.text == said), "{rq:?}");
        assert_eq!(rule(&d, "x"), None);
        assert_eq!(rule(&d, "y"), None);
    }

    #[test]
    fn an_atomic_only_the_control_path_stores_is_read_mostly() {
        // pids_cgroup.limit: an atomic64_t that pids_max_write() sets and
        // the charge reads. An atomic only built has its type's class, as
        // one the fast path writes too.
        let written = |path: &str, function: &str, role: Role| {
            decl(
                path,
                function,
                Said::Written(Write::Assign, Vec::new()),
                role,
            )
        };
        let ds = [
            written("limit", "pids_max_write", Role::Control),
            written("limit", "pids_css_alloc", Role::Construction),
            read_decl("limit", "pids_try_charge", true, false),
            read_decl("limit", "pids_max_show", true, false),
            written("count", "pids_css_alloc", Role::Construction),
            read_decl("count", "f", true, false),
            read_decl("count", "g", true, false),
            written("n", "pids_max_write", Role::Control),
            written("n", "pids_charge", Role::Fast),
            read_decl("n", "f", true, false),
            read_decl("n", "g", true, false),
        ];
        let d = draft_typed(
            &[
                ("limit", "atomic64_t"),
                ("count", "atomic_t"),
                ("n", "atomic_t"),
            ],
            &ds,
        );
        let class = |c: &str| Some(DraftRule::Class { class: c.into() });
        assert_eq!(rule(&d, "limit"), class("hot-read"));
        assert_eq!(rule(&d, "count"), class("lockless-write"));
        assert_ne!(rule(&d, "n"), class("hot-read"));
    }
}
