//! Locks: the kernel's lock types, and which fields are the same lock.

use std::collections::HashMap;

use super::{Origin, Span};
use crate::rules::Class;

/// Typedef and struct names the kernel uses for locks: a field of one of
/// these types inside an annotated struct is a `lock` without a rule.
pub const LOCK_TYPES: &[&str] = &[
    "spinlock_t",
    "raw_spinlock_t",
    "rwlock_t",
    "seqlock_t",
    "arch_spinlock_t",
    "arch_rwlock_t",
    "spinlock",
    "raw_spinlock",
    "qspinlock",
    "qrwlock",
    "mutex",
    "rt_mutex",
    "rt_mutex_base",
    "rw_semaphore",
    "semaphore",
    "percpu_rw_semaphore",
];

/// Types that are written locklessly in most uses: suggested, never assumed.
pub const ATOMIC_TYPES: &[&str] = &["atomic_t", "atomic_long_t", "atomic64_t", "refcount_t"];

/// True when two lock identities name the same lock (one may be a member
/// of the other: `lru_lock` and `lru_lock.rlock`).
pub fn same_lock(a: &str, b: &str) -> bool {
    fn inside(outer: &str, inner: &str) -> bool {
        inner
            .strip_prefix(outer)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
    }
    inside(a, b) || inside(b, a)
}

/// Any member named as a lock is one, even without a rule of its own.
pub(super) fn mark_named_locks(spans: &mut [Span]) {
    let named: Vec<String> = spans
        .iter()
        .filter(|s| s.class == Some(Class::LockProtected))
        .filter_map(|s| s.lock.clone())
        .collect();
    let locks = LockIndex::new(&named);
    for span in spans.iter_mut().filter(|s| s.class.is_none()) {
        if let Some(lock) = locks.first_same(&span.path) {
            span.class = Some(Class::Lock);
            span.lock = Some(lock.to_owned());
            span.origin = Origin::NamedLock;
        }
    }
}

/// Named locks, found by path in time linear in the path's length (the
/// first of `names` that is the [`same_lock`] as it), where scanning them
/// all for each unclassified span was quadratic in the spans of corrupt
/// roots.
struct LockIndex<'n> {
    names: &'n [String],
    /// Each name, to the position of its first occurrence.
    whole: HashMap<&'n str, usize>,
    /// Each proper prefix of a name ending before a `.` or `[`, to the
    /// first position of a name that has it.
    outer: HashMap<&'n str, usize>,
}

impl<'n> LockIndex<'n> {
    fn new(names: &'n [String]) -> Self {
        let mut whole = HashMap::new();
        let mut outer = HashMap::new();
        for (i, name) in names.iter().enumerate() {
            whole.entry(name.as_str()).or_insert(i);
            for cut in member_cuts(name) {
                outer.entry(&name[..cut]).or_insert(i);
            }
        }
        LockIndex {
            names,
            whole,
            outer,
        }
    }

    /// The first name that `path` is, is a member of, or holds.
    fn first_same(&self, path: &str) -> Option<&'n str> {
        let holds = self.outer.get(path).copied();
        let inside = member_cuts(path)
            .chain([path.len()])
            .filter_map(|cut| self.whole.get(&path[..cut]).copied());
        let first = holds.into_iter().chain(inside).min()?;
        Some(&self.names[first])
    }
}

/// Where `path` splits into an outer member and the rest: before each `.`
/// or `[`.
fn member_cuts(path: &str) -> impl Iterator<Item = usize> + '_ {
    path.match_indices(['.', '[']).map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_index_finds_the_first_same_lock() {
        let names: Vec<String> = ["b.lock", "a.l", "a.l.rlock", "c[2].m", "a.l", "[1].k"]
            .map(String::from)
            .into();
        let index = LockIndex::new(&names);
        let paths = [
            "a.l",
            "a.l.rlock",
            "a",
            "a.l.rlock.raw",
            "a.lock",
            "b.lock",
            "b",
            "b.lock[1]",
            "c",
            "c[2]",
            "c[2].m.x",
            "c[1].m",
            "x",
            "",
            "[1]",
            "[1].k.j",
            ".",
        ];
        for path in paths {
            let slow = names
                .iter()
                .find(|l| same_lock(l, path))
                .map(String::as_str);
            assert_eq!(index.first_same(path), slow, "{path}");
        }
    }

    #[test]
    fn lock_identities_match_through_members() {
        assert!(same_lock("lruvec.lru_lock", "lruvec.lru_lock.rlock"));
        assert!(same_lock("a.l", "a.l"));
        assert!(!same_lock("a.l", "a.lock"));
    }
}
