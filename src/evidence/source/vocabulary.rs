//! The kernel's words for locking and writing, as the walk recognises
//! them in calls: locks taken, asserted and released, shared holds,
//! atomics and bit operations.

use super::Write;
use super::wrappers::{Act, Effect};

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

/// One of the kernel's own locking words, read as the vocabulary says
/// wherever it is defined (`spin_lock()` is itself a function of
/// spinlock.h): a lock, an assertion, or the release of one of them
/// (`spin_unlock`, `up_write`), not a wrapper's name (`mmap_write_unlock`),
/// even one that starts as the kernel's do (RCU's
/// `raw_spin_lock_irq_rcu_node`): every word of it is a locking word.
pub(super) fn is_vocabulary(name: &str) -> bool {
    const WORDS: [&str; 30] = [
        "spin",
        "raw",
        "read",
        "write",
        "mutex",
        "down",
        "up",
        "lock",
        "unlock",
        "trylock",
        "irq",
        "irqsave",
        "irqrestore",
        "bh",
        "nested",
        "nest",
        "interruptible",
        "killable",
        "io",
        "local",
        "lockdep",
        "assert",
        "held",
        "rwsem",
        "once",
        "nolockdep",
        "non",
        "owner",
        "pthread",
        "",
    ];
    let primitive = name.split('_').all(|w| WORDS.contains(&w));
    primitive
        && (is_lock(name)
            || is_assertion(name)
            || matches!(name, "up_read" | "up_write" | "up")
            || (is_unlock(name) && is_lock(&name.replacen("unlock", "lock", 1))))
}

/// May C text `text` take, assert or release a lock by the kernel's
/// words? A test of its text only, before any reading.
pub(super) fn may_lock(text: &str) -> bool {
    ["lock", "down_", "up_", "up("]
        .iter()
        .any(|w| text.contains(w))
}

/// Is function `name` named for a lock: one of its words (between
/// underscores) ends in "lock" (`netif_tx_lock`, `xfs_iunlock`,
/// `pipe_double_lock`), and is no block or clock?
pub(super) fn named_for_a_lock(name: &str) -> bool {
    name.split('_')
        .any(|w| w.ends_with("lock") && !w.ends_with("block") && !w.ends_with("clock"))
}

/// A macro declaring an iteration state on an object (`XA_STATE(xas,
/// &mapping->i_pages, index)`, `MA_STATE(mas, &mm->mm_mt, 0, 0)`): the
/// state's member that points at the object, through which its lock
/// wrappers (`xas_lock_irq(&xas)`) take the object's lock.
pub(super) fn iteration_state(name: &str) -> Option<&'static str> {
    match name {
        "XA_STATE" | "XA_STATE_ORDER" => Some("xa"),
        "MA_STATE" => Some("tree"),
        _ => None,
    }
}

/// Releases one.
pub(super) fn is_unlock(name: &str) -> bool {
    name.contains("_unlock") || name == "up_read" || name == "up_write" || name == "up"
}

/// Of the atomic families (`atomic_`, `refcount_`, `local_` ...), not
/// `local_lock`, `local_irq_save` and the like.
fn is_atomic_family(name: &str) -> bool {
    [
        "atomic_",
        "atomic64_",
        "atomic_long_",
        "refcount_",
        "local_",
        "local64_",
    ]
    .iter()
    .any(|p| name.starts_with(p))
        && !name.starts_with("local_lock")
        && !name.starts_with("local_irq")
        && !name.starts_with("local_bh")
}

/// An atomic read or bit test, a load of the member whose address it
/// takes: `atomic_read(&files->count)`, `atomic_long_read_acquire`,
/// `refcount_read`, `kref_read`, `test_bit(NAPI_STATE_SCHED, &n->state)`;
/// and a list's emptiness, which `list_empty()` reads with `READ_ONCE`.
pub(super) fn is_atomic_read(name: &str) -> bool {
    is_atomic_family(name) && (name.ends_with("_read") || name.contains("_read_"))
        || matches!(
            name,
            "kref_read" | "list_empty" | "list_empty_careful" | "hlist_empty" | "llist_empty"
        )
        || is_bit_test(name)
}

/// A test of one bit, not one that sets or clears it too: `test_bit`,
/// `__test_bit`, `test_bit_acquire`, `variable_test_bit`.
pub(super) fn is_bit_test(name: &str) -> bool {
    name.trim_start_matches('_').starts_with("test_bit") || name == "variable_test_bit"
}

/// An atomic or bit operation that writes (not `atomic_read`, `test_bit`).
pub(super) fn is_atomic_write(name: &str) -> bool {
    let atomic = is_atomic_family(name) && !name.ends_with("_read") && !name.contains("_read_");
    atomic
        || is_bitop(name) && !is_bit_test(name)
        || matches!(
            name,
            "xchg" | "cmpxchg" | "try_cmpxchg" | "cmpxchg64" | "xchg_relaxed"
        )
}

/// A list or tree operation that links or unlinks the nodes and heads
/// whose addresses it is passed, and how it stores to them:
/// `list_add(&x->node, &y->list)`, `hlist_del_init(&n->hash)`,
/// `rb_erase(&n->rb, &root->rb)` are plain stores; the RCU variants
/// (`hlist_add_head_rcu`, `list_del_rcu`) release stores for lockless
/// readers; `llist_add` and `llist_del_all` atomic exchanges. Not the
/// reads (`list_empty`, `list_first_entry`, `list_for_each*`).
pub(super) fn list_write(name: &str) -> Option<Write> {
    const LISTS: [&str; 4] = ["list_", "hlist_", "hlist_nulls_", "hlist_bl_"];
    const LINKS: [&str; 9] = [
        "add",
        "del",
        "move",
        "splice",
        "replace",
        "rotate",
        "cut",
        "bulk_move",
        "swap",
    ];
    const TREES: [&str; 7] = [
        "rb_link_node",
        "rb_insert_color",
        "rb_erase",
        "rb_replace_node",
        "rb_add",
        "rb_add_cached",
        "rb_erase_cached",
    ];
    let name_ = name.trim_start_matches('_');
    if ["llist_add", "llist_del_all", "llist_del_first"]
        .iter()
        .any(|l| name_.starts_with(l))
    {
        return Some(Write::Atomic(name.to_owned()));
    }
    let linked = LISTS.iter().any(|l| {
        name_
            .strip_prefix(l)
            .is_some_and(|op| LINKS.iter().any(|k| op.starts_with(k)))
    }) || TREES.iter().any(|t| name_.starts_with(t));
    match (linked, name.ends_with("_rcu")) {
        (false, _) => None,
        (true, true) => Some(Write::Release(name.to_owned())),
        (true, false) => Some(Write::Assign),
    }
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

/// Views an object as another type, by its name, given the object alone:
/// a socket's (`inet_rsk(req)`, `tcp_sk(sk)`, `req_to_sk(req)`), a
/// device's private area (`netdev_priv(dev)`), the kernel's `to_*()`
/// (`to_pci_dev(d)`). What it returns is the same object.
pub(super) fn is_view(name: &str) -> bool {
    name.starts_with("to_")
        || name.contains("_to_")
        || ["_sk", "_csk", "_rsk", "_twsk", "_priv"]
            .iter()
            .any(|s| name.ends_with(s))
}

/// Allocates an object: `kmalloc`, `kzalloc`, `kmem_cache_alloc_node`,
/// `kvzalloc`, `netdev_alloc_skb`, `page_pool_alloc`...; not a free.
pub(super) fn is_allocation(name: &str) -> bool {
    name.contains("alloc") && !name.contains("free") && !name.contains("dealloc")
}

/// Initialises a lock, list, timer, work item, counter or queue that is
/// its first argument's member: the object it is a member of is being
/// built (`INIT_LIST_HEAD`, `spin_lock_init`, `mutex_init`, `init_rwsem`,
/// `hrtimer_init`, `timer_setup`, `refcount_set`, `kref_init`).
pub(super) fn is_member_init(name: &str) -> bool {
    // `list_del_init`, `list_splice_init`: a list emptied in use.
    const IN_USE: [&str; 3] = ["del_init", "splice_init", "splice_tail_init"];
    if IN_USE.iter().any(|w| name.contains(w)) {
        return false;
    }
    name.starts_with("INIT_")
        || name.starts_with("init_")
        || name.ends_with("_init")
        || matches!(
            name,
            "timer_setup" | "hrtimer_setup" | "refcount_set" | "kref_init" | "__init_rwsem"
        )
}

/// A function that handles a failure, by a word of its name: an oops, a
/// panic, a BUG or WARN report, an error's or a failure's handler
/// (`page_fault_oops`, `oops_begin`, `panic`, `__warn`, `report_bug`,
/// `handle_write_error`, `mapping_set_error`, `tcp_v4_err`); or a
/// diagnostic dump, by its first word (`show_rcu_gp_kthreads`,
/// `print_cpu_stall_info`, `dump_page`). It runs when something went
/// wrong or someone asked, not as the fast path that calls it runs.
pub(super) fn is_failure(name: &str) -> bool {
    let first = name.trim_start_matches('_').split('_').next();
    matches!(first, Some("show" | "print" | "dump"))
        || name.split('_').any(|w| {
            matches!(
                w,
                "oops" | "panic" | "die" | "bug" | "warn" | "error" | "err" | "fail" | "failed"
            )
        })
}

/// A call whose arguments are evaluated only to print or trace, and only
/// when someone asked: a printk (`printk`, `pr_debug`, `dev_dbg`,
/// `netdev_warn_ratelimited`), a subsystem's debug macro (`kenter`,
/// `_debug`, `dbg`, compiled to `no_printk` in most builds), a
/// tracepoint (`trace_sched_switch`, behind a static key). The loads in
/// its arguments are no fast path's.
pub(super) fn is_diagnostic_call(name: &str) -> bool {
    const LEVELS: [&str; 10] = [
        "dbg", "info", "warn", "err", "notice", "crit", "alert", "emerg", "printk", "vdbg",
    ];
    const DEVICES: [&str; 6] = ["dev_", "netdev_", "netif_", "wiphy_", "ibdev_", "drm_"];
    const DEBUG_MACROS: [&str; 9] = [
        "kenter",
        "kleave",
        "kdebug",
        "enter",
        "leave",
        "debug",
        "dbg",
        "no_printk",
        "dprintk",
    ];
    let n = name.trim_start_matches('_');
    let n_plain = n
        .strip_suffix("_ratelimited")
        .or_else(|| n.strip_suffix("_once"))
        .unwrap_or(n);
    n == "printk"
        || n.starts_with("pr_")
        || n.starts_with("trace_") && !n.starts_with("trace_seq")
        || DEBUG_MACROS.contains(&n)
        || DEVICES.iter().any(|d| {
            n_plain
                .strip_prefix(d)
                .is_some_and(|level| LEVELS.contains(&level))
        })
}

/// A function that tears an object down, by its name: a word of it is
/// `destroy`, `destruct` or `destructor` (`inet_csk_destroy_sock`,
/// `__sk_destruct`, `caif_sock_destructor`). Not `free` or `release`:
/// `kmem_cache_free(s, x)` frees `x`, not the cache it writes, and
/// `sk_free()` and `release_sock()` run on objects in use.
pub(super) fn is_teardown(name: &str) -> bool {
    name.split('_')
        .any(|w| matches!(w, "destroy" | "destruct" | "destructor"))
}

/// A control-path function by its name or its parameters' types: a
/// netlink, sysctl, ioctl, ethtool or socket option handler, a sysfs
/// `*_store`, a `*_change` (a qdisc's, a class's), a cgroup interface
/// file's handler (`memory_max_write(struct kernfs_open_file *of, ...)`,
/// `cpu_shares_write_u64(.., struct cftype *cft, u64)`), a module
/// parameter's setter (`struct kernel_param`), a `seq_file` show
/// handler (`pids_max_show(struct seq_file *sf, void *v)`: a read of a
/// /proc, debugfs or cgroup file), a cgroup controller's callback as a
/// cgroup comes, goes or is reset (`mem_cgroup_css_reset`,
/// `cpu_cgroup_css_alloc`), a device driver's probe, remove or power
/// management callback (see [`is_device_callback`]). `declarator` is the
/// text of its declarator, its parameter list included.
pub(super) fn is_control(name: &str, declarator: &str) -> bool {
    const NAMES: [&str; 8] = [
        "ioctl",
        "sysctl",
        "setsockopt",
        "netlink",
        "change_mtu",
        "set_mtu",
        "ethtool",
        "_change_",
    ];
    const PARAMETERS: [&str; 10] = [
        "netlink_ext_ack",
        "struct nlattr",
        "genl_info",
        "ctl_table",
        "struct ethtool_",
        "struct device_attribute",
        "struct kernfs_open_file",
        "struct cftype",
        "struct kernel_param",
        "struct seq_file",
    ];
    const CGROUP_CALLBACKS: [&str; 6] = [
        "_css_alloc",
        "_css_online",
        "_css_offline",
        "_css_released",
        "_css_free",
        "_css_reset",
    ];
    name.ends_with("_change")
        || name.ends_with("_store")
        || CGROUP_CALLBACKS.iter().any(|c| name.ends_with(c))
        || NAMES.iter().any(|n| name.contains(n))
        || PARAMETERS.iter().any(|p| declarator.contains(p))
        || is_device_callback(name, declarator)
}

/// A system call that configures or administers the machine rather than
/// serves a workload (`keyctl`, `add_key`, `bpf`, `mount`, `fsopen`,
/// `init_module`, `swapon`, `acct`, `io_uring_register`), by its body's
/// name (`sys_keyctl`, `compat_sys_keyctl`): the control path, no fast
/// entry point.
pub(super) fn is_control_syscall(name: &str) -> bool {
    const ADMINISTRATION: [&str; 33] = [
        "keyctl",
        "add_key",
        "request_key",
        "bpf",
        "mount",
        "umount",
        "oldumount",
        "mount_setattr",
        "fsopen",
        "fsconfig",
        "fsmount",
        "fspick",
        "move_mount",
        "open_tree",
        "open_tree_attr",
        "pivot_root",
        "chroot",
        "init_module",
        "finit_module",
        "delete_module",
        "kexec_load",
        "kexec_file_load",
        "reboot",
        "swapon",
        "swapoff",
        "sethostname",
        "setdomainname",
        "acct",
        "quotactl",
        "quotactl_fd",
        "syslog",
        "io_uring_register",
        "settimeofday",
    ];
    name.strip_prefix("sys_")
        .or_else(|| name.strip_prefix("compat_sys_"))
        .is_some_and(|call| ADMINISTRATION.contains(&call))
}

/// A device driver's callback as a device comes, goes, sleeps or wakes:
/// a probe given its match (`const struct pci_device_id *id`), or a
/// `*_probe`, `*_remove`, `*_shutdown`, `*_suspend*` or `*_resume*`
/// whose first parameter is a device (`struct platform_device *pdev`,
/// `struct i2c_client *`, `struct device *dev`), not `tcp_mtu_probe(struct
/// sock *sk)`.
fn is_device_callback(name: &str, declarator: &str) -> bool {
    const CALLBACKS: [&str; 9] = [
        "_probe",
        "_remove",
        "_remove_new",
        "_shutdown",
        "_suspend",
        "_resume",
        "_freeze",
        "_thaw",
        "_poweroff",
    ];
    const EARLY_LATE: [&str; 4] = ["_noirq", "_late", "_early", "_common"];
    if declarator.contains("_device_id *") {
        return true;
    }
    let mut base = name;
    for suffix in EARLY_LATE {
        base = base.strip_suffix(suffix).unwrap_or(base);
    }
    if !CALLBACKS.iter().any(|c| base.ends_with(c)) {
        return false;
    }
    let Some(first) = declarator
        .split_once('(')
        .and_then(|(_, params)| params.split([',', ')']).next())
    else {
        return false;
    };
    let ty = first
        .trim()
        .trim_start_matches("const ")
        .strip_prefix("struct ")
        .and_then(|t| t.split_whitespace().next())
        .unwrap_or("");
    ty.ends_with("device")
        || ["_dev", "_client", "_interface", "_slave"]
            .iter()
            .any(|s| ty.ends_with(s))
}

/// The socket lock's calls (`lock_sock(sk)`, `release_sock(sk)`,
/// `bh_lock_sock(sk)`, `sock_owned_by_me(sk)`): each takes, asserts or
/// releases `&sk->sk_lock`. `lock_sock()` is defined in a `.c` file and
/// `bh_lock_sock()` is a macro, so no wrapper is found for them.
pub(super) fn socket_lock(name: &str) -> Option<Vec<Effect>> {
    let act = match name {
        "lock_sock"
        | "lock_sock_nested"
        | "lock_sock_fast"
        | "lock_sock_fast_nested"
        | "bh_lock_sock"
        | "bh_lock_sock_nested"
        | "sock_owned_by_me" => Act::Take { shared: false },
        "release_sock" | "unlock_sock_fast" | "bh_unlock_sock" => Act::Release,
        _ => return None,
    };
    Some(vec![Effect {
        param: 0,
        member: "sk_lock".into(),
        act,
    }])
}

/// The run queue lock's calls (`rq_lock(rq, rf)`, `raw_spin_rq_lock(rq)`,
/// `lockdep_assert_rq_held(rq)`, `double_rq_lock(a, b)` and their
/// unlocks): each takes, asserts or releases `&rq->__lock`. The kernel's
/// own go through `raw_spin_rq_lock_nested()`, whose body (in
/// kernel/sched/core.c) retries on whatever lock `__rq_lockp()` returns
/// and `lockdep_assert_rq_held()` asserts `__rq_lockp(rq)`: no wrapper is
/// found for them. With core scheduling a run queue may share its core's
/// lock; the evidence names the run queue's own.
pub(super) fn run_queue_lock(name: &str) -> Option<Vec<Effect>> {
    let take = Act::Take { shared: false };
    let (act, params): (Act, &[usize]) = match name {
        "raw_spin_rq_lock_nested"
        | "raw_spin_rq_lock"
        | "raw_spin_rq_lock_irq"
        | "rq_lock"
        | "rq_lock_irq"
        | "rq_lock_irqsave"
        | "lockdep_assert_rq_held" => (take, &[0]),
        "double_rq_lock" | "_double_lock_balance" | "double_lock_balance" => (take, &[0, 1]),
        "raw_spin_rq_unlock"
        | "raw_spin_rq_unlock_irq"
        | "rq_unlock"
        | "rq_unlock_irq"
        | "rq_unlock_irqrestore" => (Act::Release, &[0]),
        "double_rq_unlock" => (Act::Release, &[0, 1]),
        _ => return None,
    };
    Some(
        params
            .iter()
            .map(|&param| Effect {
                param,
                member: "__lock".into(),
                act,
            })
            .collect(),
    )
}

/// An expression for the running CPU (`smp_processor_id()`,
/// `raw_smp_processor_id()`, `this_cpu`): per-CPU data through it is the
/// CPU's own.
pub(super) fn is_this_cpu(expr: &str) -> bool {
    let e: String = expr.chars().filter(|c| !c.is_whitespace()).collect();
    matches!(
        e.as_str(),
        "smp_processor_id()" | "raw_smp_processor_id()" | "this_cpu" | "this_cpu_id"
    )
}

/// Calls that mark their function as the control path: the RTNL held or
/// asserted (`ASSERT_RTNL()`, `rtnl_lock()`), under which netdevice
/// configuration runs.
pub(super) fn is_control_call(name: &str) -> bool {
    matches!(
        name,
        "ASSERT_RTNL"
            | "rtnl_lock"
            | "rtnl_lock_killable"
            | "rtnl_trylock"
            | "lockdep_assert_rtnl_held"
    )
}
