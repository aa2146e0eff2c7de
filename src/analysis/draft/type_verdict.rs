//! The type's verdict on a drafted struct's member: a kernel lock is a
//! lock, an atomic or a reference count is written locklessly.

use super::{MemberFacts, Verdict};
use crate::analysis::annotate::{ATOMIC_TYPES, LOCK_TYPES};
use crate::analysis::draft_types::{Evidence, Mark};

/// Reference counts that are structs of their own, taken and dropped
/// with atomics (a lockref's count beside its lock, with cmpxchg; 6.13's
/// `file_ref_t` of `struct file` and `rcuref_t` of dst entries, whose
/// helpers take the count's address and are not followed into).
const REFCOUNTS: &[&str] = &["lockref", "kref", "file_ref_t", "rcuref_t"];

/// Is struct or typedef `name` one of the kernel's primitives, a lock, an
/// atomic, a reference count: its own members (`atomic64_t.counter`) are
/// written by the primitive's implementation (`arch_atomic64_set()`), and
/// a struct holding one is judged by the primitive's type, so it is never
/// drafted as a struct of its own.
pub(crate) fn is_primitive(name: &str) -> bool {
    [LOCK_TYPES, ATOMIC_TYPES, REFCOUNTS]
        .iter()
        .any(|set| set.contains(&name))
        || name == "refcount_struct"
}

/// The type's verdict on member `m`.
pub(super) fn inferred(m: &MemberFacts, evidence: &mut Vec<Evidence>) -> Option<Verdict> {
    let named = |set: &[&str]| {
        m.type_names
            .iter()
            .find(|n| set.contains(&n.as_str()))
            .cloned()
    };
    if let Some(t) = named(LOCK_TYPES) {
        evidence.push(Evidence {
            mark: Mark::Inferred,
            text: format!("its type is {t}, a kernel lock"),
        });
        return Some(Verdict::Lock);
    }
    if let Some(t) = named(ATOMIC_TYPES).or_else(|| named(REFCOUNTS)) {
        evidence.push(Evidence {
            mark: Mark::Inferred,
            text: format!("its type is {t}, written with atomic operations"),
        });
        return Some(Verdict::Lockless);
    }
    None
}
