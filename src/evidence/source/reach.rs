//! Which functions the kernel's fast entry points reach: system calls,
//! hardware interrupts, softirq, the scheduler, the page fault, packet
//! transmit and receive, block I/O, page reclaim. A function one of them
//! calls, through the calls seen in the files read (a few levels down),
//! runs on a path that is taken often, unless it handles a failure (an
//! oops, an error); one none reaches may still (a call through a pointer,
//! a file not read), so reach ranks, it does not rule.

use std::collections::{HashMap, HashSet, VecDeque};

use super::callers::Call;
use super::graph::spelled;
use super::vocabulary::is_failure;

/// Levels of calls followed down from an entry point.
const MAX_DEPTH: usize = 6;

/// The packet path's transmit entry points.
const PACKET_TRANSMIT: [&str; 2] = ["__dev_queue_xmit", "dev_queue_xmit"];

/// The packet path's receive entry points, with the protocols' receive
/// handlers, which it calls through pointers (a packet_type's func, a
/// net_protocol's handler).
const PACKET_RECEIVE: [&str; 10] = [
    "__netif_receive_skb_core",
    "netif_receive_skb",
    "napi_gro_receive",
    "ip_rcv",
    "ipv6_rcv",
    "ip_local_deliver",
    "tcp_v4_rcv",
    "tcp_v6_rcv",
    "udp_rcv",
    "udpv6_rcv",
];

/// The kind of fast entry point a function is, by its name (a system
/// call's body, `sys_brk`, is known by the walk, not by its name).
pub(crate) fn entry_kind(name: &str) -> Option<&'static str> {
    const SOFTIRQ: [&str; 9] = [
        "net_rx_action",
        "net_tx_action",
        "__napi_poll",
        "napi_poll",
        "handle_softirqs",
        "__do_softirq",
        "run_timer_softirq",
        "tasklet_action",
        "rcu_core",
    ];
    const SCHEDULER: [&str; 10] = [
        "__schedule",
        "schedule",
        "sched_tick",
        "scheduler_tick",
        "try_to_wake_up",
        "wake_up_new_task",
        "pick_next_task",
        "enqueue_task",
        "dequeue_task",
        "finish_task_switch",
    ];
    const FAULT: [&str; 6] = [
        "handle_mm_fault",
        "__handle_mm_fault",
        "do_user_addr_fault",
        "exc_page_fault",
        "do_page_fault",
        "handle_pte_fault",
    ];
    // The interrupt flow handlers and the actions' loop they call.
    const HARDIRQ: [&str; 8] = [
        "handle_irq_event",
        "handle_irq_event_percpu",
        "__handle_irq_event_percpu",
        "generic_handle_domain_irq",
        "handle_edge_irq",
        "handle_fasteoi_irq",
        "handle_level_irq",
        "handle_percpu_devid_irq",
    ];
    let network = PACKET_TRANSMIT.contains(&name) || PACKET_RECEIVE.contains(&name);
    const BLOCK: [&str; 3] = ["blk_mq_submit_bio", "submit_bio", "blk_mq_complete_request"];
    // Page reclaim's loops over folios and page tables: kswapd and direct
    // reclaim, eviction, and the multi-gen LRU's aging walk.
    const RECLAIM: [&str; 7] = [
        "kswapd",
        "balance_pgdat",
        "try_to_free_pages",
        "shrink_node",
        "shrink_folio_list",
        "evict_folios",
        "try_to_inc_max_seq",
    ];
    // A system call's body is one of the graph's `syscalls` (see
    // [`reached`]); these are the names the kernel gives its wrappers.
    let syscall = ["__x64_sys_", "__arm64_sys_", "__do_sys_", "__se_sys_"]
        .iter()
        .any(|p| name.starts_with(p));
    Some(if syscall {
        "a system call"
    } else if HARDIRQ.contains(&name) {
        "a hardware interrupt"
    } else if SOFTIRQ.contains(&name) {
        "softirq"
    } else if SCHEDULER.contains(&name) {
        "the scheduler"
    } else if FAULT.contains(&name) {
        "the page fault"
    } else if network {
        "packet transmit and receive"
    } else if BLOCK.contains(&name) {
        "block I/O"
    } else if RECLAIM.contains(&name) {
        "page reclaim"
    } else {
        return None;
    })
}

/// A network path of execution, as the kernel's `net_cachelines` tables
/// name them: the object's owner on that path at that moment writes, one
/// CPU at a time (the transmit queue's lock, the socket's, the NAPI
/// instance), and the other path's CPU reads beside it.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum NetPath {
    /// Receive: the NAPI poll and the protocols' receive handlers up to
    /// `recvmsg()`.
    Receive,
    /// Transmit: `sendmsg()` down to the queue discipline and the driver.
    Transmit,
}

impl NetPath {
    /// The context a rules file names it by (`rx`, `tx`).
    pub fn context(self) -> &'static str {
        match self {
            NetPath::Receive => "rx",
            NetPath::Transmit => "tx",
        }
    }

    /// In words, for evidence.
    pub fn words(self) -> &'static str {
        match self {
            NetPath::Receive => "the receive path",
            NetPath::Transmit => "the transmit path",
        }
    }

    /// The network path a function starts, by its name.
    fn of_entry(name: &str) -> Option<NetPath> {
        // The NAPI poll, and recvmsg() down to the protocols'.
        const RECEIVE: [&str; 9] = [
            "net_rx_action",
            "__napi_poll",
            "napi_poll",
            "netif_rx",
            "sock_recvmsg",
            "inet_recvmsg",
            "tcp_recvmsg",
            "udp_recvmsg",
            "udpv6_recvmsg",
        ];
        // sendmsg() down to the protocols', the queue discipline and the
        // driver.
        const TRANSMIT: [&str; 9] = [
            "net_tx_action",
            "__netdev_start_xmit",
            "__qdisc_run",
            "sock_sendmsg",
            "__sock_sendmsg",
            "inet_sendmsg",
            "tcp_sendmsg",
            "udp_sendmsg",
            "udpv6_sendmsg",
        ];
        if RECEIVE.contains(&name) || PACKET_RECEIVE.contains(&name) {
            Some(NetPath::Receive)
        } else if TRANSMIT.contains(&name) || PACKET_TRANSMIT.contains(&name) {
            Some(NetPath::Transmit)
        } else {
            None
        }
    }
}

/// The kernel function that calls, through a pointer, the function a
/// file-scope initializer puts in member `field` of an ops table
/// (`.ndo_start_xmit = e1000_xmit_frame` is called by
/// `__netdev_start_xmit()`), on a network path.
pub(super) fn dispatcher_of_member(field: &str) -> Option<&'static str> {
    Some(match field {
        "ndo_start_xmit" => "__netdev_start_xmit",
        // A `proto_ops`' or a `proto`'s: `sock_sendmsg()` reaches both.
        "sendmsg" => "sock_sendmsg",
        "recvmsg" => "sock_recvmsg",
        _ => return None,
    })
}

/// The kernel function that calls, through a pointer, the function passed
/// as argument `index` of a call to `callee` (a NAPI instance's poll,
/// `netif_napi_add_weight(dev, napi, poll, weight)`, called by
/// `__napi_poll()`).
pub(super) fn dispatcher_of_argument(callee: &str, index: usize) -> Option<&'static str> {
    (callee.starts_with("netif_napi_add") && index == 2).then_some("__napi_poll")
}

/// How a fast entry point reaches a function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Reached {
    /// The nearest entry point, in words (`the scheduler (__schedule)`).
    pub(super) entry: String,
    /// The function that calls it on the way; none for the entry point.
    pub(super) caller: Option<String>,
}

/// The calls from the entry point that reaches `function` down to it
/// (`__schedule`, `context_switch`, `lru_gen_use_mm`); empty when none
/// does.
pub(super) fn path(reached: &HashMap<String, Reached>, function: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = Some(function);
    while let Some(f) = at.filter(|_| out.len() <= MAX_DEPTH) {
        let Some(r) = reached.get(f) else {
            return Vec::new();
        };
        out.push(spelled(f).to_owned());
        at = r.caller.as_deref();
    }
    out.reverse();
    out
}

/// Per caller, the functions it calls in `calls`, the control path's
/// left out (an ioctl or a netlink handler is no fast path, whoever calls
/// it), and so are calls in code marked rare (`if (unlikely(...))`), a
/// failure's handlers (the page fault's oops, page reclaim's
/// `handle_write_error()`: see [`is_failure`]), and the ops tables'
/// dispatches unless `dispatched`.
fn callees(calls: &[Call], dispatched: bool) -> HashMap<&str, Vec<&str>> {
    let mut callees: HashMap<&str, Vec<&str>> = HashMap::new();
    for c in calls.iter().filter(|c| {
        !c.control && !c.rare && (dispatched || !c.dispatched) && !is_failure(spelled(&c.callee))
    }) {
        callees.entry(&c.caller).or_default().push(&c.callee);
    }
    callees
}

/// Per function on a network path through `calls` (at most [`MAX_DEPTH`]
/// calls down from one of its entry points, and not through the other
/// path's), the paths that reach it, in order: a function both reach
/// (`tcp_ack()` sends from the receive path) is on both.
pub(super) fn net_paths(calls: &[Call]) -> HashMap<String, Vec<NetPath>> {
    let callees = callees(calls, true);
    let mut out: HashMap<String, Vec<NetPath>> = HashMap::new();
    for path in [NetPath::Receive, NetPath::Transmit] {
        let mut seen: HashSet<&str> = calls
            .iter()
            .flat_map(|c| [c.caller.as_str(), c.callee.as_str()])
            .filter(|n| NetPath::of_entry(spelled(n)) == Some(path))
            .collect();
        let mut queue: VecDeque<(&str, usize)> = seen.iter().map(|&n| (n, 0)).collect();
        while let Some((f, depth)) = queue.pop_front() {
            if depth >= MAX_DEPTH {
                continue;
            }
            // The other path's entry starts that path (a forwarded
            // packet is transmitted from the receive softirq, under the
            // queue's lock as any transmit): not followed.
            for &callee in callees.get(f).into_iter().flatten() {
                let other = NetPath::of_entry(spelled(callee)).is_some_and(|p| p != path);
                if !other && seen.insert(callee) {
                    queue.push_back((callee, depth + 1));
                }
            }
        }
        for f in seen {
            out.entry(f.to_owned()).or_default().push(path);
        }
    }
    out
}

/// Per function reached from a fast entry point through `calls` (at most
/// [`MAX_DEPTH`] calls down), the nearest such entry point and the caller
/// on the way; an entry point reaches itself. `syscalls` are the system
/// calls' bodies.
pub(super) fn reached(calls: &[Call], syscalls: &HashSet<String>) -> HashMap<String, Reached> {
    let callees = callees(calls, false);
    let kind = |name: &str| match syscalls.contains(name) {
        true => Some("a system call"),
        false => entry_kind(spelled(name)),
    };
    let mut out: HashMap<String, Reached> = HashMap::new();
    let mut queue: VecDeque<(&str, usize)> = VecDeque::new();
    let mut names: Vec<&str> = calls
        .iter()
        .flat_map(|c| [c.caller.as_str(), c.callee.as_str()])
        .filter(|n| kind(n).is_some())
        .collect();
    // Each entry point in name order, so the nearest one is chosen the
    // same way on every run.
    names.sort_unstable();
    names.dedup();
    for name in names {
        let kind = kind(name).expect("filtered");
        out.insert(
            name.to_owned(),
            Reached {
                entry: format!("{kind} ({})", spelled(name)),
                caller: None,
            },
        );
        queue.push_back((name, 0));
    }
    while let Some((f, depth)) = queue.pop_front() {
        if depth >= MAX_DEPTH {
            continue;
        }
        let entry = out[f].entry.clone();
        for &callee in callees.get(f).into_iter().flatten() {
            if !out.contains_key(callee) {
                out.insert(
                    callee.to_owned(),
                    Reached {
                        entry: entry.clone(),
                        caller: Some(f.to_owned()),
                    },
                );
                queue.push_back((callee, depth + 1));
            }
        }
    }
    out
}

/// Per function called in `calls`, how many distinct functions call it,
/// the control path's, pointers' and calls in code marked rare left out,
/// and how many of those `reached` has (a fast entry point reaches them).
pub(super) fn callers<'c>(
    calls: &'c [Call],
    reached: &HashMap<String, Reached>,
) -> HashMap<&'c str, (usize, usize)> {
    let mut pairs: Vec<(&str, &str)> = calls
        .iter()
        .filter(|c| c.caller != c.callee && !c.control && !c.pointer && !c.rare)
        .map(|c| (c.callee.as_str(), c.caller.as_str()))
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    let mut out: HashMap<&str, (usize, usize)> = HashMap::new();
    for (callee, caller) in pairs {
        let (all, hot) = out.entry(callee).or_default();
        *all += 1;
        *hot += usize::from(reached.contains_key(caller));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(caller: &str, callee: &str) -> Call {
        Call::between(caller, callee)
    }

    #[test]
    fn the_network_paths_reach_their_callees_and_a_function_both_reach_is_on_both() {
        let calls = [
            call("__dev_queue_xmit", "dev_hard_start_xmit"),
            call("dev_hard_start_xmit", "txq_trans_update"),
            call("tcp_v4_rcv", "tcp_ack"),
            call("tcp_ack", "tcp_snd_una_update"),
            call("tcp_sendmsg", "tcp_push"),
            call("tcp_push", "tcp_snd_una_update"),
            call("dev_watchdog", "netif_trans_update"),
            // Forwarding: the receive path hands the packet to transmit.
            call("ip_rcv", "ip_forward"),
            call("ip_forward", "dev_queue_xmit"),
            call("dev_queue_xmit", "__dev_queue_xmit"),
            Call {
                control: true,
                ..call("dev_ioctl", "txq_trans_update")
            },
        ];
        let p = net_paths(&calls);
        assert_eq!(p["txq_trans_update"], [NetPath::Transmit]);
        assert_eq!(p["tcp_ack"], [NetPath::Receive]);
        assert_eq!(
            p["tcp_snd_una_update"],
            [NetPath::Receive, NetPath::Transmit]
        );
        assert_eq!(p["tcp_v4_rcv"], [NetPath::Receive]);
        assert_eq!(p["ip_forward"], [NetPath::Receive]);
        assert_eq!(p["dev_queue_xmit"], [NetPath::Transmit]);
        assert!(!p.contains_key("netif_trans_update"));
        assert!(!p.contains_key("dev_ioctl"));
        assert_eq!(NetPath::Transmit.context(), "tx");
    }

    #[test]
    fn entry_points_reach_their_callees_a_few_levels_down() {
        let calls = [
            call("__schedule", "context_switch"),
            call("context_switch", "switch_mm_irqs_off"),
            call("sys_brk", "do_brk_flags"),
            call("membarrier_register", "sync_runqueues_membarrier_state"),
            call("a0", "a1"),
            // lib/sys_info.c's, after a panic: no system call.
            call("sys_info", "ftrace_dump"),
            call("handle_fasteoi_irq", "handle_irq_event"),
            call("handle_irq_event", "note_interrupt"),
            // An oops on the way: what it calls runs once, as it dies.
            call("do_user_addr_fault", "page_fault_oops"),
            call("page_fault_oops", "oops_begin"),
            call("oops_begin", "tracing_off"),
            call("__schedule", "__schedule_bug"),
            // In an `if (unlikely(...))` branch: no fast path.
            Call {
                rare: true,
                ..call("sys_brk", "brk_slow")
            },
        ];
        let syscalls: HashSet<String> = ["sys_brk".to_owned(), "sys_x".to_owned()].into();
        let r = reached(&calls, &syscalls);
        assert!(!r.contains_key("brk_slow"));
        let mut twice = calls.to_vec();
        twice.push(call("sys_brk", "context_switch"));
        twice.push(call("sys_brk", "context_switch"));
        twice.push(call("a1", "context_switch"));
        // Three callers, a1 among them, which nothing fast reaches.
        assert_eq!(callers(&twice, &r)["context_switch"], (3, 2));
        assert_eq!(r["switch_mm_irqs_off"].entry, "the scheduler (__schedule)");
        assert_eq!(r["do_brk_flags"].entry, "a system call (sys_brk)");
        assert_eq!(r["__schedule"].entry, "the scheduler (__schedule)");
        assert_eq!(
            path(&r, "switch_mm_irqs_off"),
            ["__schedule", "context_switch", "switch_mm_irqs_off"]
        );
        assert!(path(&r, "sync_runqueues_membarrier_state").is_empty());
        assert!(!r.contains_key("sync_runqueues_membarrier_state"));
        assert!(!r.contains_key("ftrace_dump"));
        for failed in [
            "page_fault_oops",
            "oops_begin",
            "tracing_off",
            "__schedule_bug",
        ] {
            assert!(!r.contains_key(failed), "{failed}");
        }
        assert_eq!(
            r["note_interrupt"].entry,
            "a hardware interrupt (handle_irq_event)"
        );
        // Deeper than MAX_DEPTH: not reached.
        let chain: Vec<Call> = (0..=MAX_DEPTH)
            .map(|i| call(&format!("f{i}"), &format!("f{}", i + 1)))
            .chain([call("sys_x", "f0")])
            .collect();
        let r = reached(&chain, &syscalls);
        assert!(r.contains_key(&format!("f{}", MAX_DEPTH - 1)));
        assert!(!r.contains_key(&format!("f{}", MAX_DEPTH)));
    }
}
