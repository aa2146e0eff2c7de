//! The kernel's words for locking and writing, as the walk recognises
//! them in calls: locks taken, asserted and released, shared holds,
//! atomics and bit operations.

/// Asserts a lock held: `lockdep_assert_held`, `rwsem_assert_held_write`.
pub(super) fn is_assertion(name: &str) -> bool {
    name.starts_with("lockdep_assert_held") || name.starts_with("rwsem_assert_held")
}

/// Takes or asserts a lock shared: `down_read`, `read_lock`,
/// `lockdep_assert_held_read`; `rwsem_assert_held` (either way).
pub(super) fn is_shared(name: &str) -> bool {
    let words: Vec<&str> = name.split('_').collect();
    words.contains(&"read") || name.starts_with("rwsem_assert_held") && !words.contains(&"write")
}

/// Takes a lock: `spin_lock_irq`, `mutex_lock`, `down_write`, ...
pub(super) fn is_lock(name: &str) -> bool {
    const PREFIXES: [&str; 12] = [
        "spin_lock",
        "raw_spin_lock",
        "read_lock",
        "write_lock",
        "mutex_lock",
        "down_read",
        "down_write",
        "local_lock",
        "spin_trylock",
        "raw_spin_trylock",
        "mutex_trylock",
        "pthread_mutex_lock",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p))
        && !name.contains("unlock")
        && !name.ends_with("_init")
        && !name.contains("_is_")
}

/// Releases one.
pub(super) fn is_unlock(name: &str) -> bool {
    name.contains("_unlock") || name == "up_read" || name == "up_write" || name == "up"
}

/// An atomic or bit operation that writes (not `atomic_read`, `test_bit`).
pub(super) fn is_atomic_write(name: &str) -> bool {
    let atomic = [
        "atomic_",
        "atomic64_",
        "atomic_long_",
        "refcount_",
        "local_",
        "local64_",
    ]
    .iter()
    .any(|p| name.starts_with(p))
        && !name.ends_with("_read")
        && !name.contains("_read_")
        && !name.starts_with("local_lock")
        && !name.starts_with("local_irq")
        && !name.starts_with("local_bh");
    atomic
        || is_bitop(name) && !name.trim_start_matches('_').starts_with("test_bit")
        || matches!(
            name,
            "xchg" | "cmpxchg" | "try_cmpxchg" | "cmpxchg64" | "xchg_relaxed"
        )
}

/// `set_bit(nr, addr)` and its kin: the address is the second argument.
pub(super) fn is_bitop(name: &str) -> bool {
    let n = name.trim_start_matches('_');
    [
        "set_bit",
        "clear_bit",
        "change_bit",
        "test_and_set_bit",
        "test_and_clear_bit",
        "test_and_change_bit",
        "test_bit",
    ]
    .iter()
    .any(|b| n.starts_with(b))
}
