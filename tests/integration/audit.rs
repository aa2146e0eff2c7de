//! `audit` on `fixtures/audit`, a small C tree whose needless stores
//! (and stores that are not) its README and comments say.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde_json::Value;

fn tree() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/audit")
        .display()
        .to_string()
}

/// Any ELF: the fixture's accesses resolve through its own declarations.
fn build() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/perf/ring")
        .display()
        .to_string()
}

fn cache() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cachelint-audit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `audit ARGS --source-tree fixtures/audit ring`, its index in a cache of
/// its own.
fn audit(args: &[&str]) -> (i32, String, String) {
    let cache = cache();
    let env = [("CACHELINT_CACHE_DIR", cache.as_os_str())];
    let (tree, build) = (tree(), build());
    let mut all = vec!["audit", "--source-tree", tree.as_str()];
    all.extend_from_slice(args);
    all.push(build.as_str());
    crate::common::cachelint_with_env(&env, &all)
}

#[test]
fn the_needless_stores_of_a_tree_are_found_ranked_with_their_hot_path() {
    let (code, out, err) = audit(&["--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let got: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{}:{} {} {}.{} {}",
                f["file"].as_str().unwrap(),
                f["line"],
                f["function"].as_str().unwrap(),
                f["root"].as_str().unwrap(),
                f["members"][0].as_str().unwrap(),
                f["store"].as_str().unwrap()
            )
        })
        .collect();
    // The fixture's three needless stores, the constant store the others
    // read first, then the exchange, then the untested bit; not the
    // tested store, the object being built, the member nobody shares or
    // the counter.
    assert_eq!(
        got,
        [
            "include/linux/mm_types.h:12 use_mm mm_struct.bitmap constant",
            "mm/vmscan.c:15 folio_update_gen folio.flags exchange",
            "kernel/sched.c:11 context_switch mm_struct.flags bit",
        ],
        "{out}"
    );
    let first = &report["findings"][0];
    assert_eq!(first["rank"], 1);
    assert_eq!(first["kind"], "needless-store");
    assert_eq!(
        first["hot_path"],
        serde_json::json!(["__schedule", "context_switch", "use_mm"])
    );
    assert_eq!(
        first["sharers"],
        serde_json::json!(["use_mm_tested", "walk_one"])
    );
    assert_eq!(
        report["findings"][1]["entry"],
        "page reclaim (shrink_folio_list)"
    );
    // Text: a compiler-style line each, then why it is hot.
    let (code, text, err) = audit(&["--top", "1"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.contains(
            "include/linux/mm_types.h:12: warning: use_mm() stores -1 to mm_struct.bitmap (WRITE_ONCE) without testing it first"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "    hot: the scheduler (__schedule): __schedule -> context_switch -> use_mm"
        ),
        "{text}"
    );
    assert!(text.contains("3 needless stores (of "), "{text}");
    assert!(text.contains("the top 1 shown"), "{text}");
    assert!(!text.contains("mm/vmscan.c:15"), "{text}");
}

#[test]
fn under_keeps_the_stores_of_some_files_and_names_a_missing_path() {
    let (code, out, err) = audit(&["--under", "mm", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let files: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["mm/vmscan.c"]);
    let (code, _, err) = audit(&["--under", "nosuchdir"]);
    assert_eq!(code, 2);
    assert!(err.contains("--under nosuchdir: not a path in"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn under_keeps_the_structs_the_code_under_it_writes_from_many_cpus() {
    // netq's count is taken in net/, mm_struct's bitmap stored in kernel/:
    // each audit drafts the structs its own code writes, with the whole
    // tree's evidence.
    let roots = |report: &Value| -> Vec<String> {
        report["layout"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["root"].as_str().unwrap().to_owned())
            .collect()
    };
    let all_dir = std::env::temp_dir().join(format!("cachelint-under-all-{}", std::process::id()));
    let (_, all, _) = audit_layout(&[], &all_dir);
    let net_dir = std::env::temp_dir().join(format!("cachelint-under-net-{}", std::process::id()));
    let (_, net, netq) = audit_layout(&["--under", "net"], &net_dir);
    for dir in [&all_dir, &net_dir] {
        let _ = std::fs::remove_dir_all(dir);
    }
    assert!(roots(&all).contains(&"mm_struct".to_owned()), "{all}");
    assert!(!roots(&net).contains(&"mm_struct".to_owned()), "{net}");
    assert_eq!(net["structs"], 1, "{net}");
    // The draft of the queue is the whole tree's: its count's writer is
    // in net/, its readers everywhere.
    let mut netq = netq;
    let mut whole = all["layout"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["root"] == "netq")
        .unwrap()
        .clone();
    for f in [&mut netq, &mut whole] {
        f["rules_file"] = Value::Null;
    }
    assert_eq!(netq, whole);
    assert!(
        net["read"].as_array().unwrap().iter().any(|l| l
            .as_str()
            .unwrap()
            .starts_with("layout: 1 structs the code under net writes")),
        "{net}"
    );
}

#[test]
fn audit_needs_the_cache_for_its_index_and_a_tree() {
    let (tree, build) = (tree(), build());
    let (code, _, err) =
        crate::common::cachelint(&["audit", "--no-cache", "--source-tree", &tree, &build]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("the tree's evidence index is kept in the cache directory"),
        "{err}"
    );
    let env = [("CACHELINT_CACHE_DIR", OsStr::new("/tmp"))];
    let args = ["audit", "--source-tree", "/nonexistent", &build];
    let (code, _, err) = crate::common::cachelint_with_env(&env, &args);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--source-tree /nonexistent: not a directory"),
        "{err}"
    );
    let (code, _, err) = crate::common::cachelint_with_env(&env, &["audit", &build]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--source-tree"), "{err}");
}

/// The line of `needle` in the fixture tree's `file` (1-based).
fn line_in(file: &str, needle: &str) -> u64 {
    let text = std::fs::read_to_string(Path::new(&tree()).join(file)).unwrap();
    let at = text.lines().position(|l| l.contains(needle)).unwrap();
    at as u64 + 1
}

/// Audits the tree against the build of its structs
/// (`fixtures/bin/audit-types.o`) as JSON, with `extra` arguments and the
/// drafted rules written to `out_dir`: the build, the report and netq's
/// finding.
fn audit_layout(extra: &[&str], out_dir: &Path) -> (String, Value, Value) {
    let build = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/bin/audit-types.o")
        .display()
        .to_string();
    let cache = cache();
    let env = [("CACHELINT_CACHE_DIR", cache.as_os_str())];
    let (tree, rules_out) = (tree(), out_dir.display().to_string());
    let mut args = vec!["audit", "--source-tree", &tree];
    args.extend_from_slice(extra);
    args.extend(["--rules-out", &rules_out, "--format", "json", &build]);
    let (code, out, err) = crate::common::cachelint_with_env(&env, &args);
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let netq = report["layout"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["root"] == "netq")
        .unwrap_or_else(|| panic!("no netq pair: {out}"))
        .clone();
    (build, report, netq)
}

#[test]
fn the_layout_half_drafts_the_structs_many_cpus_write_and_its_rules_reproduce_in_check() {
    // A build with the tree's structs: netq's refcount, taken and dropped
    // on every packet, shares its line with the limit and weight every
    // packet reads (the fixture's header says so).
    let out_dir = cache().join("rules-out");
    let (build, report, netq) = audit_layout(&[], &out_dir);
    let out = report.to_string();
    assert_eq!(netq["kind"], "false-sharing", "{netq}");
    assert_eq!(netq["members"][0], "refcnt", "{netq}");
    assert_eq!(
        netq["classes"],
        serde_json::json!(["lockless-write", "hot-read"])
    );
    assert!(
        ["limit", "weight"].contains(&netq["members"][1].as_str().unwrap()),
        "{netq}"
    );
    // Both readers pair with the refcount; the member nobody touches and
    // the ops pointer nobody reads on a fast path do not.
    assert_eq!(netq["pairs"], 2, "{netq}");
    let all = format!("{} {}", netq["members"], netq["others"]);
    assert!(all.contains("limit") && all.contains("weight"), "{all}");
    assert!(!all.contains("drops") && !all.contains("ops"), "{all}");
    assert_eq!(netq["file"], "include/linux/netq.h");
    assert_eq!(
        netq["line"].as_u64(),
        Some(line_in("include/linux/netq.h", "atomic_t refcnt;"))
    );
    let rules_file = out_dir.join("netq.toml");
    assert_eq!(netq["rules_file"], rules_file.display().to_string());
    // The drafted rules file says the same to `check`, which checks netq
    // where the build holds it (in netdev, its outermost holder) and, as
    // netq_alloc() makes queues of their own, netq itself: the draft
    // places those (kmalloc-32); the copy at byte 8 of netdev is netdev's.
    let rules = rules_file.display().to_string();
    let drafted = std::fs::read_to_string(&rules_file).unwrap();
    assert!(drafted.contains("\nnetq = 32\n"), "{drafted}");
    let (code, text, err) = crate::common::cachelint(&["check", "--rules", &rules, &build]);
    assert_eq!(code, 1, "{err}");
    assert!(
        text.contains(
            "lockless-write 'refcnt' shares cacheline 0 of netq with hot-read 'limit', 'weight'"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "lockless-write 'refcnt' shares cacheline 0 of netdev with hot-read 'limit', 'weight'"
        ),
        "{text}"
    );
    // mm_struct, which the scheduler's path writes, is drafted too; the
    // ring build has none of these structs, so its audit drafts none.
    assert!(out_dir.join("mm_struct.toml").exists());
    assert_eq!(report["structs"], 2, "{out}");
    // netdev holds a netq by value: its mtu and flags, which every packet
    // reads, share the line of the queue's count (netdev.h says so). The
    // pair is across the two, so it is netdev's, drafted with netq.
    assert_eq!(report["holders"], 1, "{out}");
    let netdev = report["layout"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["root"] == "netdev")
        .unwrap_or_else(|| panic!("no netdev pair: {out}"));
    assert_eq!(netdev["holds"], "netq", "{netdev}");
    assert_eq!(netdev["kind"], "false-sharing", "{netdev}");
    assert_eq!(netdev["members"][0], "q.refcnt", "{netdev}");
    assert!(
        ["mtu", "flags"].contains(&netdev["members"][1].as_str().unwrap()),
        "{netdev}"
    );
    // Only pairs across the two: netq's own are netq's.
    assert_eq!(netdev["pairs"], 2, "{netdev}");
    // The count's evidence is netq's, where it is written.
    let evidence = netdev["evidence"].to_string();
    assert!(evidence.contains("atomic_inc() in netq_xmit"), "{evidence}");
    let rules = out_dir.join("netdev.toml").display().to_string();
    let (code, text, err) = crate::common::cachelint(&["check", "--rules", &rules, &build]);
    assert_eq!(code, 1, "{err}");
    assert!(
        text.contains("lockless-write 'refcnt' shares cacheline 0 of netdev with hot-read"),
        "{text}"
    );
    assert!(text.contains("hot-read       mtu"), "{text}");
    let (code, out, err) = audit(&["--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["structs"], 0, "{out}");
    assert_eq!(report["layout"], serde_json::json!([]));
}

#[test]
fn perfs_samples_rank_the_stores_first_and_speak_in_the_layout_halfs_drafts() {
    // `perf report -s type,typeoff -n` rows: many samples on folio.flags,
    // a few on mm_struct.flags, none on mm_struct.bitmap; and netq's ops,
    // which no fast path of the source reads.
    let perf = cache().join("perf-typeoff.txt");
    std::fs::write(
        &perf,
        "# Samples: 1K of event 'cpu-clock'\n#\n\
         # Overhead       Samples  Data Type  Data Type Offset\n\
         # ........  ............  .........  ................\n#\n\
         \x20   50.00%           500  struct folio  struct folio +0 (flags)\n\
         \x20   30.00%           300  struct netq  struct netq +0 (ops)\n\
         \x20    2.00%            20  struct mm_struct  struct mm_struct +0x8 (flags)\n",
    )
    .unwrap();
    let perf = perf.display().to_string();
    let (code, out, err) = audit(&["--perf", &perf, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let got: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{}.{} {}",
                f["root"].as_str().unwrap(),
                f["members"][0].as_str().unwrap(),
                f["samples"]
            )
        })
        .collect();
    // Without --perf the bitmap's store ranks first (the test above).
    assert_eq!(
        got,
        [
            "folio.flags 500.0",
            "mm_struct.flags 20.0",
            "mm_struct.bitmap 0.0"
        ],
        "{out}"
    );
    let (code, text, err) = audit(&["--perf", &perf, "--top", "1"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.contains("    perf: 500 samples on folio.flags\n"),
        "{text}"
    );
    // The layout half's drafts take the samples: ops, hot by perf alone,
    // now pairs with the refcount too.
    let out_dir = cache().join("rules-out-perf");
    let (_, _, netq) = audit_layout(&["--perf", &perf], &out_dir);
    assert_eq!(netq["pairs"], 3, "{netq}");
    let rules = std::fs::read_to_string(out_dir.join("netq.toml")).unwrap();
    assert!(rules.contains("\n# ops: measured: "), "{rules}");
    assert!(rules.contains(&format!("#   perf {perf}: ")), "{rules}");
}
