//! The kernel's history as the judge (issue 29 §6): upstream layout fixes
//! whose before and after kernels Debian ships with debug info, here 6.1
//! (bookworm, CACHELINT_VMLINUX_OLD) and 6.12 (CACHELINT_VMLINUX). With
//! rules from the fix's own words, `check` on the kernel before flags what
//! the fix addressed; `suggest` there reaches the fix's footprint and
//! clears what it cleared; on the kernel after, `suggest` undoes nothing.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;
use crate::{env_path, kernel_source, vmlinux};

fn before() -> PathBuf {
    env_path(
        "CACHELINT_VMLINUX_OLD",
        "a 6.1 vmlinux (scripts/fetch-kernel.sh)",
    )
}

/// `COMMAND --rules RULES --format json [EXTRA] K=KERNEL [TYPE]`: the JSON.
fn json(command: &str, rules: &Path, extra: &[&str], kernel: &Path, ty: Option<&str>) -> Value {
    let r = rules.to_str().unwrap();
    let k = format!("k={}", kernel.display());
    let mut args = vec![command, "--rules", r, "--format", "json"];
    args.extend(extra);
    args.push(&k);
    args.extend(ty);
    let (code, out, err) = common::cachelint(&args);
    assert!(code <= 1, "{command} {}: {err}", kernel.display());
    serde_json::from_str(&out).unwrap()
}

/// Per context, the lines of the struct it touches: `[context, compiled,
/// suggested, optimum]` rows of a suggestion's first build.
fn footprint(report: &Value) -> Vec<(String, u64, u64)> {
    report["builds"][0]["footprint"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap().to_owned(),
                r[1].as_u64().unwrap(),
                r[2].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
#[ignore = "needs the 6.1 and 6.12 kernels and the 6.12 source: .ci/run sets CACHELINT_VMLINUX_OLD, CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn the_6_8_tcp_sock_reorganisation_is_what_suggest_finds_on_6_1() {
    // "tcp: reorganize tcp_sock fast path variables" (6.8) grouped
    // tcp_sock by the tx and rx fast paths its net_cachelines table (the
    // same series) lists. That table is the rules.
    let table = kernel_source().join("Documentation/networking/net_cachelines/tcp_sock.rst");
    let (old, new) = (before(), vmlinux());
    let warnings = |k: &Path| {
        json("check", &table, &[], k, None)["summary"]["warnings"]
            .as_u64()
            .unwrap()
    };
    let (w_old, w_new) = (warnings(&old), warnings(&new));
    // Before, more lines shared across contexts than after the fix.
    assert!(w_old > w_new, "6.1 {w_old} warnings, 6.12 {w_new}");
    let fixed = json("suggest", &table, &[], &new, Some("tcp_sock"));
    let suggested = json("suggest", &table, &[], &old, Some("tcp_sock"));
    // On 6.1, every context in no more lines than the fix puts it in.
    let shipped: Vec<(String, u64)> = footprint(&fixed)
        .into_iter()
        .map(|(c, compiled, _)| (c, compiled))
        .collect();
    for ((context, compiled, ours), (c, theirs)) in footprint(&suggested).into_iter().zip(&shipped)
    {
        assert_eq!(&context, c);
        assert!(
            ours <= *theirs,
            "{context}: 6.1 suggested {ours} lines, 6.12 shipped {theirs}"
        );
        assert!(
            ours < compiled,
            "{context}: 6.1 {compiled} lines, suggested {ours}"
        );
    }
    let pairs = |r: &Value, i: usize| r["builds"][0]["warnings"][i].as_u64().unwrap();
    assert!(
        pairs(&suggested, 1) * 2 <= pairs(&suggested, 0),
        "fewer than half cleared"
    );
    // On 6.12 it undoes nothing: no context touches more lines, no more
    // warning pairs.
    for (context, compiled, ours) in footprint(&fixed) {
        assert!(
            ours <= compiled,
            "6.12 {context}: {compiled} -> {ours} lines"
        );
    }
    assert!(pairs(&fixed, 1) <= pairs(&fixed, 0));
    println!(
        "tcp_sock: check 6.1 {w_old} warnings, 6.12 {w_new}; suggest on 6.1: warning pairs {} -> {} \
         (6.12 shipped {}), lines {:?}; on 6.12: {:?}",
        pairs(&suggested, 0),
        pairs(&suggested, 1),
        pairs(&fixed, 0),
        footprint(&suggested),
        footprint(&fixed)
    );
}

#[test]
#[ignore = "needs the 6.1 and 6.12 kernels: .ci/run sets CACHELINT_VMLINUX_OLD and CACHELINT_VMLINUX"]
fn mm_counts_own_line_is_what_suggest_finds_on_6_1_and_keeps_on_6_12() {
    // "mm: move mm_count into its own cache line" (6.3): "The mm_struct
    // mm_count field is frequently updated by mmgrab/mmdrop performed by
    // context switch. This causes false-sharing for surrounding mm_struct
    // fields which are read-mostly."
    let dir = std::env::temp_dir().join(format!("cachelint-history-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rules = dir.join("mm_count.toml");
    std::fs::write(
        &rules,
        "[mm_struct]\nmm_count = \"lockless-write\"\nmm_mt = \"hot-read\"\n\
         mmap_base = \"hot-read\"\nmmap_legacy_base = \"hot-read\"\ntask_size = \"hot-read\"\n\
         pgd = \"hot-read\"\nmembarrier_state = \"hot-read\"\n",
    )
    .unwrap();
    let (old, new) = (before(), vmlinux());
    let mm_count_errors = |k: &Path| {
        json("check", &rules, &[], k, None)["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == "error" && f["a"]["name"] == "mm_count")
            .count()
    };
    assert!(mm_count_errors(&old) > 0, "6.1: mm_count shares no line");
    assert_eq!(mm_count_errors(&new), 0, "6.12: mm_count shares a line");
    let errors = |r: &Value, i: usize| r["builds"][0]["errors"][i].as_u64().unwrap();
    let suggested = json("suggest", &rules, &[], &old, Some("mm_struct"));
    assert!(errors(&suggested, 0) > 0);
    assert_eq!(errors(&suggested, 1), 0, "6.1: errors left");
    let kept = json("suggest", &rules, &[], &new, Some("mm_struct"));
    assert_eq!(
        errors(&kept, 1),
        0,
        "6.12: the suggestion brings an error back"
    );
    let counts = |r: &Value, i: usize| {
        ["errors", "warnings", "notes"].map(|k| r["builds"][0][k][i].as_u64().unwrap())
    };
    assert!(counts(&kept, 1) <= counts(&kept, 0));
    let growth = |r: &Value| {
        r["builds"][0]["sizes"][0]["growth"]["bytes"]
            .as_i64()
            .unwrap()
    };
    println!(
        "mm_count: 6.1 errors {} -> {} (+{} bytes), 6.12 {:?} -> {:?}",
        errors(&suggested, 0),
        errors(&suggested, 1),
        growth(&suggested),
        counts(&kept, 0),
        counts(&kept, 1)
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// `draft --source-tree TREE KERNEL TYPES...` then `check` of the draft:
/// the check's JSON findings, and the draft.
fn drafted_check(tree: &Path, kernel: &Path, types: &[&str]) -> (Vec<Value>, String) {
    let draft = crate::evidence::draft_of(tree, kernel, types);
    let rules = std::env::temp_dir().join(format!(
        "cachelint-history-{}-{}.toml",
        types[0],
        std::process::id()
    ));
    std::fs::write(&rules, &draft).unwrap();
    let report = json("check", &rules, &[], kernel, None);
    let _ = std::fs::remove_file(&rules);
    (report["findings"].as_array().unwrap().clone(), draft)
}

/// The findings `keep` holds, each as a line a failure can print: its
/// root, severity, kind and the two members' paths.
fn pairs_where(findings: &[Value], keep: impl Fn(&Value) -> bool) -> Vec<String> {
    findings
        .iter()
        .filter(|f| keep(f))
        .map(|f| {
            format!(
                "{} {} {} {} ~ {}",
                f["root"], f["severity"], f["kind"], f["a"]["path"], f["b"]["path"]
            )
        })
        .collect()
}

/// The direct member a finding's side `side` ("a" or "b") is in
/// (`lruvec.lists[2]`: `lruvec`).
fn top_member(f: &Value, side: &str) -> String {
    f[side]["path"]
        .as_str()
        .unwrap()
        .split(['.', '['])
        .next()
        .unwrap()
        .to_owned()
}

/// The draft's rule line of `member` in table `[ty]`.
fn rule_line<'d>(draft: &'d str, ty: &str, member: &str) -> &'d str {
    draft
        .split(&format!("\n[{ty}]\n"))
        .nth(1)
        .and_then(|t| t.lines().find(|l| l.starts_with(&format!("{member} = "))))
        .unwrap_or("(no rule)")
}

#[test]
#[ignore = "needs the 6.1 and 6.12 kernels and trees: .ci/run sets CACHELINT_VMLINUX_OLD, CACHELINT_KERNEL_SOURCE_61, CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn mem_cgroup_per_nodes_read_mostly_pointers_meet_lruvecs_writes_on_6_1_and_not_on_6_12() {
    // fefc6e6631ff "memcg: rearrange fields of mem_cgroup_per_node"
    // (6.11): the read-only pointers first, then the fields "which get
    // updated often" (the lruvec, lru_zone_size), so that the pointers read
    // on every stat update no longer share a line with them. No rule by
    // hand: each kernel's own tree drafts the struct and the lruvec it
    // embeds.
    let read_mostly = ["lruvec_stats_percpu", "lruvec_stats", "memcg"];
    let fixed = |f: &Value| {
        let (a, b) = (top_member(f, "a"), top_member(f, "b"));
        f["root"] == "mem_cgroup_per_node"
            && (read_mostly.contains(&a.as_str())
                && matches!(b.as_str(), "lruvec" | "lru_zone_size")
                || read_mostly.contains(&b.as_str())
                    && matches!(a.as_str(), "lruvec" | "lru_zone_size"))
    };
    let old_tree = env_path(
        "CACHELINT_KERNEL_SOURCE_61",
        "Debian's linux-source-6.1 tree (scripts/fetch-source.sh 6.1)",
    );
    let types = ["mem_cgroup_per_node", "lruvec"];
    let (before_findings, before_draft) = drafted_check(&old_tree, &before(), &types);
    let (after_findings, after_draft) = drafted_check(&kernel_source(), &vmlinux(), &types);
    for (kernel, draft) in [("6.1", &before_draft), ("6.12", &after_draft)] {
        for m in [
            "lruvec_stats_percpu",
            "lruvec_stats",
            "memcg",
            "lru_zone_size",
        ] {
            eprintln!("{kernel} {}", rule_line(draft, "mem_cgroup_per_node", m));
        }
    }
    let pairs = |fs: &[Value]| pairs_where(fs, fixed);
    let before_pairs = pairs(&before_findings);
    eprintln!("6.1: {before_pairs:#?}");
    assert!(
        !before_pairs.is_empty(),
        "6.1 flags no read-mostly pointer next to the lruvec's writes"
    );
    // The lruvec's writers on 6.1 are the drafted ones, read from the tree.
    assert!(
        rule_line(&before_draft, "mem_cgroup_per_node", "lruvec_stats_percpu")
            .starts_with("lruvec_stats_percpu = \"hot-read\""),
        "{before_draft}"
    );
    let after_pairs = pairs(&after_findings);
    assert!(after_pairs.is_empty(), "6.12 still flags {after_pairs:#?}");
    // Nor anything else the fix left among the read-only pointers:
    // shrinker_info is replaced under shrinker_mutex (a mutex of the whole
    // system, mm/shrinker.c) when a shrinker registers, the control path.
    crate::evidence::line_of(
        &kernel_source(),
        "mm/shrinker.c",
        "DEFINE_MUTEX(shrinker_mutex);",
    );
    let among = pairs_where(&after_findings, |f| {
        f["root"] == "mem_cgroup_per_node"
            && (read_mostly.contains(&top_member(f, "a").as_str())
                || read_mostly.contains(&top_member(f, "b").as_str()))
    });
    assert!(among.is_empty(), "6.12 flags {among:#?}");
    assert!(
        rule_line(&after_draft, "mem_cgroup_per_node", "shrinker_info")
            .starts_with("shrinker_info = \"hot-read\""),
        "{after_draft}"
    );
    // lru_zone_size is written through a local pointer under lru_lock
    // (`lru_size = &mz->lru_zone_size[zid][lru]; *lru_size += nr_pages`).
    assert!(
        rule_line(&after_draft, "mem_cgroup_per_node", "lru_zone_size").contains("write = ["),
        "{after_draft}"
    );
}

#[test]
#[ignore = "needs the 6.12 and 7.3 kernels and trees: .ci/run sets CACHELINT_VMLINUX, CACHELINT_KERNEL_SOURCE, CACHELINT_VMLINUX_73 and CACHELINT_KERNEL_SOURCE_73"]
fn struct_files_count_meets_the_fields_every_read_reads_on_6_12_and_not_on_7_3() {
    // e249056c91a2 "fs: place f_ref to 3rd cache line in struct file to
    // resolve false sharing" (6.15), held back while the drafts were
    // built: "f_ref contends with the reading of f_mode, f_op, f_mapping,
    // f_inode, f_flags in the same cache line". 6.12's count is f_count
    // (an atomic_long_t), 7.3's f_ref (a file_ref_t). No rule by hand.
    let read = ["f_mode", "f_op", "f_mapping", "f_inode", "f_flags"];
    let pairs = |findings: &[Value], count: &str| {
        pairs_where(findings, |f| {
            // The member of file, in file or in a struct that embeds it
            // (backing_file's `file.f_count`).
            let member = |side: &str| {
                let path = f[side]["path"].as_str().unwrap();
                path.rsplit('.').next().unwrap().to_owned()
            };
            let (a, b) = (member("a"), member("b"));
            a == count && read.contains(&b.as_str()) || b == count && read.contains(&a.as_str())
        })
    };
    let (before, before_draft) = drafted_check(&kernel_source(), &vmlinux(), &["file"]);
    assert!(
        rule_line(&before_draft, "file", "f_count").starts_with("f_count = \"lockless-write\""),
        "{before_draft}"
    );
    // Where files live: their own line-aligned slab cache, and
    // backing_file's (fs/file_table.c), which holds one at byte 0. The
    // build's debug info holds backing_file, in the unit that defines it.
    assert!(
        before_draft.contains("\n# file: embedded as backing_file.file at byte 0 of objects"),
        "{before_draft}"
    );
    assert!(
        before_draft.contains("\nfile = \"line\"\n"),
        "{before_draft}"
    );
    let before_pairs = pairs(&before, "f_count");
    eprintln!("6.12: {before_pairs:#?}");
    assert!(
        !before_pairs.is_empty(),
        "6.12 flags no read field beside f_count in struct file: {before_pairs:#?}"
    );
    // Told for file itself, which the draft places (its own slab cache),
    // not for backing_file, which holds one at byte 0 with the same pairs.
    assert!(
        before_pairs.iter().all(|p| p.starts_with("\"file\" ")),
        "{before_pairs:#?}"
    );
    let tree = env_path("CACHELINT_KERNEL_SOURCE_73", "the 7.3 source tree");
    let kernel = env_path("CACHELINT_VMLINUX_73", "Debian's 7.3 vmlinux");
    let (after, after_draft) = drafted_check(&tree, &kernel, &["file"]);
    // The count is still a lockless writer on 7.3: only its place changed.
    assert!(
        rule_line(&after_draft, "file", "f_ref").starts_with("f_ref = \"lockless-write\""),
        "{after_draft}"
    );
    let after_pairs = pairs(&after, "f_ref");
    assert!(after_pairs.is_empty(), "7.3 still flags {after_pairs:#?}");
}

#[test]
#[ignore = "needs the 6.12 and 7.3 kernels and trees: .ci/run sets CACHELINT_VMLINUX, CACHELINT_KERNEL_SOURCE, CACHELINT_VMLINUX_73 and CACHELINT_KERNEL_SOURCE_73"]
fn rqs_lock_meets_the_load_balancers_lockless_reads_on_6_12_and_not_on_7_3() {
    // By 7.3, struct rq opens with the members "loaded together, without
    // holding the rq->lock, in an extremely hot loop in
    // update_sg_lb_stats()" on a line of their own, and "the next
    // cacheline holds the (hot) runqueue lock" (the tree's own comment,
    // checked below). On 6.12 __lock and nr_running share line 0. No rule
    // by hand: each tree drafts rq, whose nr_running the load balancer
    // reads through other CPUs' run queues (cpu_rq(cpu)).
    let counters = ["nr_running", "nr_numa_running", "nr_preferred_running"];
    let pairs = |findings: &[Value]| {
        pairs_where(findings, |f| {
            let (a, b) = (
                f["a"]["path"].as_str().unwrap(),
                f["b"]["path"].as_str().unwrap(),
            );
            f["root"] == "rq"
                && (a == "__lock" && counters.contains(&b)
                    || b == "__lock" && counters.contains(&a))
        })
    };
    let (before, before_draft) = drafted_check(&kernel_source(), &vmlinux(), &["rq"]);
    let before_pairs = pairs(&before);
    eprintln!("6.12: {before_pairs:#?}");
    assert!(
        before_pairs.iter().any(|p| p.contains("nr_running")),
        "6.12 flags no nr_running beside __lock: {before_pairs:#?}"
    );
    let tree = env_path("CACHELINT_KERNEL_SOURCE_73", "the 7.3 source tree");
    let kernel = env_path("CACHELINT_VMLINUX_73", "Debian's 7.3 vmlinux");
    let comment = "in an extremely hot loop in update_sg_lb_stats()";
    crate::evidence::line_of(&tree, "kernel/sched/sched.h", comment);
    let (after, after_draft) = drafted_check(&tree, &kernel, &["rq"]);
    // Both drafts see the same access: the lock is a lock, and other CPUs
    // read nr_running; only the layout changed.
    for (kernel, draft) in [("6.12", &before_draft), ("7.3", &after_draft)] {
        assert!(
            rule_line(draft, "rq", "__lock").starts_with("__lock = \"lock\""),
            "{kernel}: {draft}"
        );
        assert!(
            rule_line(draft, "rq", "nr_running").contains("read = [\"remote-cpus\"]"),
            "{kernel}: {draft}"
        );
    }
    let after_pairs = pairs(&after);
    assert!(after_pairs.is_empty(), "7.3 still flags {after_pairs:#?}");
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn a_struct_its_fast_path_only_reads_gets_no_error() {
    // kmem_cache: its geometry and flags are set when the cache is made
    // and read on every allocation; the per-CPU slabs sit behind a per-CPU
    // pointer.
    let (findings, draft) = drafted_check(&kernel_source(), &vmlinux(), &["kmem_cache"]);
    let errors: Vec<&Value> = findings
        .iter()
        .filter(|f| f["root"] == "kmem_cache" && f["severity"] == "error")
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{draft}");
    assert!(
        rule_line(&draft, "kmem_cache", "size").starts_with("size = \"hot-read\""),
        "{draft}"
    );
}

/// Per member of `struct sock` in `tree`'s include/net/sock.h, the kernel
/// cacheline group it sits in (`sock_write_rx`, ...), as the source says.
fn sock_groups(tree: &Path) -> std::collections::BTreeMap<String, String> {
    let text = std::fs::read_to_string(tree.join("include/net/sock.h")).unwrap();
    let body = text.split("\nstruct sock {").nth(1).unwrap();
    let body = body.split("\n};").next().unwrap();
    let mut group: Option<String> = None;
    let mut out = std::collections::BTreeMap::new();
    for line in body.lines() {
        if let Some(g) = line.trim().strip_prefix("__cacheline_group_begin(") {
            group = Some(g.trim_end_matches(");").to_owned());
        } else if line.contains("__cacheline_group_end(") {
            group = None;
        } else if let Some(g) = &group {
            // `type name;`, `} name;` (sk_backlog), `type *name;`.
            let declared = line.split(';').next().unwrap_or("");
            let name = declared
                .rsplit(|c: char| c.is_whitespace() || c == '*')
                .next()
                .unwrap_or("");
            if line.contains(';') && name.starts_with("sk_") {
                out.insert(name.to_owned(), g.clone());
            }
        }
    }
    out
}

#[test]
#[ignore = "needs the 6.1 and 6.12 kernels and trees: .ci/run sets CACHELINT_VMLINUX_OLD, CACHELINT_KERNEL_SOURCE_61, CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn struct_socks_rx_and_tx_fields_meet_on_6_1_and_not_after_its_groups_on_6_12() {
    // 5d4cc87414c5 "net: reorganize struct sock fields" (6.9) put the
    // fields into six groups, read-write and read-mostly fields of the rx
    // path, of both paths and of the tx path, without aligning them: a
    // line may still hold the end of one group and the start of the
    // next. What it addressed is told by its groups: the receive path's
    // writes no longer share a line with the fields the transmit path
    // reads or writes, nor the other way round. The groups, read from the
    // 6.12 tree, are the judge; the drafts, with no rule by hand, are from
    // each kernel's own tree (6.1 has no group).
    let groups = sock_groups(&kernel_source());
    assert_eq!(groups["sk_drops"], "sock_write_rx", "{groups:?}");
    assert_eq!(groups["sk_backlog"], "sock_write_rx", "{groups:?}");
    assert_eq!(groups["sk_sndtimeo"], "sock_read_tx", "{groups:?}");
    // A finding's two sock members as the groups name them (a sock sits at
    // byte 0 of every root: packet_sock, mptcp_sock ...), one line each.
    type Pairs = std::collections::BTreeSet<(String, String, String)>;
    let named = |findings: &[Value]| -> Pairs {
        let member = |f: &Value, side: &str| {
            f[side]["path"]
                .as_str()
                .unwrap()
                .split(['.', '['])
                .find(|c| groups.contains_key(*c))
                .map(str::to_owned)
        };
        findings
            .iter()
            .filter_map(|f| {
                let (a, b) = (member(f, "a")?, member(f, "b")?);
                let (a, b) = if a < b { (a, b) } else { (b, a) };
                Some((a, b, f["kind"].as_str().unwrap().to_owned()))
            })
            .collect()
    };
    let path = |m: &str| {
        let g = &groups[m];
        (
            g.ends_with("_rx"),
            g.ends_with("_tx"),
            g.contains("_write_"),
        )
    };
    // A write of one path beside a field the other path touches.
    let across = |pairs: &Pairs| -> Vec<String> {
        pairs
            .iter()
            .filter(|(a, b, _)| {
                let ((a_rx, a_tx, a_w), (b_rx, b_tx, b_w)) = (path(a), path(b));
                (a_rx && b_tx || a_tx && b_rx) && (a_w || b_w)
            })
            .map(|(a, b, kind)| format!("{a} ~ {b} ({kind})"))
            .collect()
    };
    let tree = env_path("CACHELINT_KERNEL_SOURCE_61", "the 6.1 source tree");
    let (before, _) = drafted_check(&tree, &before(), &["sock"]);
    let (after, _) = drafted_check(&kernel_source(), &vmlinux(), &["sock"]);
    let before_across = across(&named(&before));
    let after_across = across(&named(&after));
    eprintln!("6.1: {before_across:#?}\n6.12: {after_across:#?}");
    // pahole on 6.1: sk_peek_off (rx, written by MSG_PEEK reads) at 384
    // shares line 6 with sk_sndtimeo (tx) at 400; sk_rcvtimeo (rx) at 592
    // line 9 with sk_tskey (tx, written by timestamping sends) at 612.
    assert!(
        before_across.iter().any(|p| p.contains("sk_peek_off")),
        "6.1: no rx write beside a tx field: {before_across:#?}"
    );
    assert!(
        before_across
            .iter()
            .any(|p| p.contains("sk_tskey") || p.contains("sk_zckey")),
        "6.1: no tx write beside an rx field: {before_across:#?}"
    );
    assert!(
        after_across.is_empty(),
        "6.12 still flags {after_across:#?}"
    );
}

#[test]
#[ignore = "needs Debian's 5.10 and 6.1 kernels and trees: .ci/run sets CACHELINT_VMLINUX_510, CACHELINT_KERNEL_SOURCE_510, CACHELINT_VMLINUX_OLD and CACHELINT_KERNEL_SOURCE_61"]
fn page_counters_usage_meets_its_read_mostly_limits_on_5_10_and_not_on_6_1() {
    // The re-layout of struct page_counter (5.14), held back while the
    // drafts were built. 6.1's header says what it did: "Make sure
    // 'usage' does not share cacheline with any other field", and, after
    // a second pad, "Keep all the read most fields in a separete
    // cacheline": the limits every charge reads, which only the writes
    // to a cgroup's files (memory.max, ...) and its reset change.
    let old_tree = env_path("CACHELINT_KERNEL_SOURCE_510", "the 5.10 source tree");
    let old = env_path("CACHELINT_VMLINUX_510", "Debian's 5.10 vmlinux");
    let new_tree = env_path(
        "CACHELINT_KERNEL_SOURCE_61",
        "Debian's linux-source-6.1 tree (scripts/fetch-source.sh 6.1)",
    );
    let header = std::fs::read_to_string(new_tree.join("include/linux/page_counter.h")).unwrap();
    let body = header
        .split("struct page_counter {")
        .nth(1)
        .and_then(|b| b.split("\n}").next())
        .expect("6.1's struct page_counter");
    assert!(body.contains("Make sure 'usage' does not share cacheline"));
    let read_mostly: Vec<&str> = body
        .split("Keep all the read most fields")
        .nth(1)
        .expect("6.1's read-mostly block")
        .lines()
        .filter_map(|l| l.trim().strip_suffix(';'))
        .filter(|l| !l.contains('('))
        .filter_map(|l| l.rsplit([' ', '*']).next())
        .collect();
    assert_eq!(read_mostly.len(), 5, "{read_mostly:?}");
    // A finding's member, as the page_counter names it
    // (`memory.usage`, `hugepage[0..1].max`: `usage`, `max`).
    let member = |f: &Value, side: &str| {
        let path = f[side]["path"].as_str().unwrap();
        let last = path.rsplit('.').next().unwrap();
        last.split('[').next().unwrap().to_owned()
    };
    let involves = |f: &Value, names: &[&str]| {
        names.contains(&member(f, "a").as_str()) || names.contains(&member(f, "b").as_str())
    };
    let (before_findings, before_draft) = drafted_check(&old_tree, &old, &["page_counter"]);
    let (after_findings, after_draft) = drafted_check(&new_tree, &before(), &["page_counter"]);
    for (kernel, draft) in [("5.10", &before_draft), ("6.1", &after_draft)] {
        for m in read_mostly.iter().chain(&["usage"]) {
            let line = rule_line(draft, "page_counter", m);
            eprintln!("{kernel} {line}");
            if *m != "usage" {
                assert!(
                    line.starts_with(&format!("{m} = \"hot-read\"")),
                    "{kernel}: {line}"
                );
            }
        }
    }
    let fixed = pairs_where(&before_findings, |f| {
        f["severity"] == "error"
            && (member(f, "a") == "usage" && involves(f, &read_mostly)
                || member(f, "b") == "usage" && involves(f, &read_mostly))
    });
    eprintln!("5.10: {fixed:#?}");
    assert!(
        !fixed.is_empty(),
        "5.10 flags no usage beside a read-mostly limit"
    );
    let left = pairs_where(&after_findings, |f| {
        involves(f, &["usage"]) || involves(f, &read_mostly)
    });
    assert!(left.is_empty(), "6.1 still flags {left:#?}");
}

#[test]
#[ignore = "needs the 6.1 and 6.12 kernels and trees: .ci/run sets CACHELINT_VMLINUX_OLD, CACHELINT_KERNEL_SOURCE_61, CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn dentrys_lockref_meets_what_rcu_lookup_reads_on_6_1_and_not_on_6_12() {
    // "vfs: move d_lockref out of the area used by RCU lookup" (Mateusz
    // Guzik, 6.11), held back while the drafts were built:
    // "__d_lookup_rcu is participating in cacheline ping pong due to the
    // embedded name sharing a cacheline with lockref". The area is what
    // 6.12's __d_lookup_rcu() reads of a dentry, and the embedded name,
    // d_iname ("small names", which d_name.name points to).
    let dcache = std::fs::read_to_string(kernel_source().join("fs/dcache.c")).unwrap();
    let start = dcache
        .find("\nstruct dentry *__d_lookup_rcu(")
        .expect("6.12's __d_lookup_rcu()");
    let body = &dcache[start..start + dcache[start..].find("\n}\n").unwrap()];
    let mut area: Vec<String> = body
        .split("->")
        .skip(1)
        .map(|s| {
            s.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|m| m.starts_with("d_"))
        .collect();
    area.push("d_iname".into());
    area.sort();
    area.dedup();
    for m in ["d_seq", "d_parent", "d_name"] {
        assert!(area.iter().any(|a| a == m), "{area:?}");
    }
    let dcache_h = std::fs::read_to_string(kernel_source().join("include/linux/dcache.h")).unwrap();
    assert!(dcache_h.contains("d_iname[DNAME_INLINE_LEN];"));
    let fixed = |f: &Value| {
        let (a, b) = (top_member(f, "a"), top_member(f, "b"));
        f["root"] == "dentry"
            && (a == "d_lockref" && area.contains(&b) || b == "d_lockref" && area.contains(&a))
    };
    let old_tree = env_path(
        "CACHELINT_KERNEL_SOURCE_61",
        "Debian's linux-source-6.1 tree (scripts/fetch-source.sh 6.1)",
    );
    let (before_findings, before_draft) = drafted_check(&old_tree, &before(), &["dentry"]);
    let (after_findings, after_draft) = drafted_check(&kernel_source(), &vmlinux(), &["dentry"]);
    for (kernel, draft) in [("6.1", &before_draft), ("6.12", &after_draft)] {
        for m in ["d_lockref", "d_iname"] {
            eprintln!("{kernel} {}", rule_line(draft, "dentry", m));
        }
    }
    let before_pairs = pairs_where(&before_findings, fixed);
    eprintln!("6.1: {before_pairs:#?}");
    assert!(
        before_pairs.iter().any(|p| p.contains("d_iname")),
        "6.1 flags no lockref beside the embedded name: {before_pairs:#?}"
    );
    let after_pairs = pairs_where(&after_findings, fixed);
    assert!(after_pairs.is_empty(), "6.12 still flags {after_pairs:#?}");
}
