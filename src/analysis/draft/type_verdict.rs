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

/// A CPU's own counters, `local_t` and `local64_t`: changed only by the
/// CPU that owns them (`local64_add(delta, &event->count)`), with no
/// locked instruction.
const LOCAL_COUNTERS: &[&str] = &["local_t", "local64_t"];

/// Is struct or typedef `name` one of the kernel's primitives, a lock, an
/// atomic, a reference count, a CPU's own counter: its own members
/// (`atomic64_t.counter`, `local64_t.a`) are written by the primitive's
/// implementation (`arch_atomic64_set()`, asm-generic's
/// `local64_cmpxchg()` for every `local64_t` there is), and a struct
/// holding one is judged by what is done to its member, so it is never
/// drafted as a struct of its own.
pub(crate) fn is_primitive(name: &str) -> bool {
    [LOCK_TYPES, ATOMIC_TYPES, REFCOUNTS, LOCAL_COUNTERS]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpus_own_counter_is_a_primitive_as_an_atomic_is() {
        // The whole-7.3 audit drafted local64_t from asm-generic's
        // local64_cmpxchg(), and joined its writes into perf_event.count.
        for t in ["atomic_t", "lockref", "spinlock_t", "local64_t", "local_t"] {
            assert!(is_primitive(t), "{t}");
        }
        assert!(!is_primitive("perf_event"));
    }
}
