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
