//! `audit` on Debian's trees with their kernels, judged by the seed
//! thread's needless stores and by upstream's fix of one: each is found
//! on the tree before, at the line the tree has it (found here by a plain
//! text search), and gone after.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::cachelint_with_env;
use crate::{env_path, kernel_source, vmlinux};

/// `audit --source-tree TREE --format json --top 0 [--under U]... KERNEL`
/// with the evidence index in `cache` (the default cache when `None`):
/// the needless stores.
fn audit(tree: &Path, kernel: &Path, under: &[&str], cache: Option<&Path>) -> Vec<Value> {
    let report = audit_report(tree, kernel, under, &[], cache);
    report["findings"].as_array().unwrap().clone()
}

/// `audit --source-tree TREE --format json --top 0 [--under U]... EXTRA...
/// KERNEL` with the evidence index in `cache`: the whole report.
fn audit_report(
    tree: &Path,
    kernel: &Path,
    under: &[&str],
    extra: &[&str],
    cache: Option<&Path>,
) -> Value {
    let mut args = vec![
        "audit",
        "--source-tree",
        tree.to_str().unwrap(),
        "--format",
        "json",
        "--top",
        "0",
    ];
    for u in under {
        args.extend(["--under", u]);
    }
    args.extend(extra);
    args.push(kernel.to_str().unwrap());
    let env: Vec<(&str, &std::ffi::OsStr)> = cache
        .map(|c| ("CACHELINT_CACHE_DIR", c.as_os_str()))
        .into_iter()
        .collect();
    let (code, out, err) = cachelint_with_env(&env, &args);
    assert_eq!(code, 0, "{}: {err}", tree.display());
    serde_json::from_str(&out).unwrap()
}

/// `check --rules RULES --format json KERNEL`: the findings.
fn checked(rules: &str, kernel: &Path) -> Vec<Value> {
    let args = [
        "check",
        "--rules",
        rules,
        "--format",
        "json",
        kernel.to_str().unwrap(),
    ];
    let (_, text, err) = cachelint_with_env(&[], &args);
    let report: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{err}"));
    report["findings"].as_array().unwrap().clone()
}

/// The layout half's entry of `root` in an audit `report` of `release`.
fn layout_entry(report: &Value, root: &str, release: &str) -> Value {
    report["layout"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["root"] == root)
        .cloned()
        .unwrap_or_else(|| panic!("{release}: no pair of {root} reported"))
}

/// The findings of `root` with one side `one` and the other `other`, each
/// side named from its path by `name`: as lines a failure can print.
fn pairs_between(
    findings: &[Value],
    root: &str,
    name: impl Fn(&str) -> String,
    one: impl Fn(&str) -> bool,
    other: impl Fn(&str) -> bool,
) -> Vec<String> {
    findings
        .iter()
        .filter(|f| {
            let side = |s: &str| name(f[s]["path"].as_str().unwrap());
            let (a, b) = (side("a"), side("b"));
            f["root"] == root && (one(&a) && other(&b) || one(&b) && other(&a))
        })
        .map(|f| format!("{} {} ~ {}", f["kind"], f["a"]["path"], f["b"]["path"]))
        .collect()
}

/// The 1-based line of `file` (in `tree`) holding `needle`, after the line
/// holding `after`.
fn line_of(tree: &Path, file: &str, after: &str, needle: &str) -> usize {
    let text = std::fs::read_to_string(tree.join(file)).unwrap();
    let from = text
        .lines()
        .position(|l| l.contains(after))
        .unwrap_or_else(|| panic!("{file} has no '{after}'"));
    text.lines()
        .skip(from)
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{file} has no '{needle}' after '{after}'"))
        + from
        + 1
}

/// The finding of `function` storing to `root`.`member` at `file`:`line`.
fn found<'f>(
    findings: &'f [Value],
    (file, line): (&str, usize),
    function: &str,
    root: &str,
    member: &str,
) -> Option<&'f Value> {
    findings.iter().find(|f| {
        f["file"] == file
            && f["line"] == line
            && f["function"] == function
            && f["root"] == root
            && f["members"][0] == member
    })
}

/// The seed thread's two stores in a tree: `lru_gen_use_mm()`'s bitmap
/// store and `folio_update_gen()`'s exchange (file, line).
fn seeds(tree: &Path) -> [(&'static str, usize); 2] {
    [
        (
            "include/linux/mm_types.h",
            line_of(
                tree,
                "include/linux/mm_types.h",
                "static inline void lru_gen_use_mm(",
                "WRITE_ONCE(mm->lru_gen.bitmap, -1)",
            ),
        ),
        (
            "mm/vmscan.c",
            line_of(
                tree,
                "mm/vmscan.c",
                "static int folio_update_gen(",
                "} while (!try_cmpxchg(&folio->flags",
            ),
        ),
    ]
}

fn assert_seeds_found(tree: &Path, kernel: &Path, findings: &[Value]) {
    let [bitmap, flags] = seeds(tree);
    let what = kernel.display();
    let use_mm = found(
        findings,
        bitmap,
        "lru_gen_use_mm",
        "mm_struct",
        "lru_gen.bitmap",
    )
    .unwrap_or_else(|| panic!("{what}: no lru_gen_use_mm() store at {bitmap:?}"));
    assert_eq!(use_mm["store"], "constant", "{what}");
    // On every context switch.
    assert_eq!(
        use_mm["hot_path"],
        serde_json::json!(["__schedule", "context_switch", "lru_gen_use_mm"]),
        "{what}"
    );
    let root = found(findings, flags, "folio_update_gen", "folio", "flags")
        .or_else(|| found(findings, flags, "folio_update_gen", "folio", "flags.f"));
    let update =
        root.unwrap_or_else(|| panic!("{what}: no folio_update_gen() exchange at {flags:?}"));
    assert_eq!(update["store"], "exchange", "{what}");
    assert_eq!(update["how"], "try_cmpxchg", "{what}");
    assert!(
        update["entry"]
            .as_str()
            .unwrap()
            .starts_with("page reclaim"),
        "{what}: {update}"
    );
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn the_seeds_needless_stores_are_found_in_the_6_12_tree() {
    let (tree, kernel) = (kernel_source(), vmlinux());
    let findings = audit(&tree, &kernel, &[], None);
    assert_seeds_found(&tree, &kernel, &findings);
    // Ranked: every finding has a rank one more than the last.
    for (i, f) in findings.iter().enumerate() {
        assert_eq!(f["rank"], i + 1);
    }
}

/// Applies the seed's patches 1 and 2 (as they fall on this tree) to a
/// copy of `tree` in `dir`: hard links, but for the two files changed.
fn patched_copy(tree: &Path, dir: &Path) -> PathBuf {
    let copy = dir.join("linux");
    let _ = std::fs::remove_dir_all(&copy);
    let ok = std::process::Command::new("cp")
        .arg("-al")
        .arg(tree)
        .arg(&copy)
        .status()
        .unwrap()
        .success();
    assert!(ok, "cp -al {}", tree.display());
    let patch = |file: &str, from: &str, to: &str| {
        let path = copy.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches(from).count(), 1, "{file}: '{from}'");
        // A new file, not the linked one.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, text.replace(from, to)).unwrap();
    };
    // Patch 1: read the bitmap first.
    patch(
        "include/linux/mm_types.h",
        "\tWRITE_ONCE(mm->lru_gen.bitmap, -1);\n",
        "\tif (READ_ONCE(mm->lru_gen.bitmap) != -1UL)\n\t\tWRITE_ONCE(mm->lru_gen.bitmap, -1UL);\n",
    );
    // Patch 2: leave the loop when nothing changes.
    let text = std::fs::read_to_string(copy.join("mm/vmscan.c")).unwrap();
    let at = text.find("static int folio_update_gen(").unwrap();
    let end = at + text[at..].find("} while (!try_cmpxchg(").unwrap();
    let body = &text[at..end];
    let patched = format!("{body}\tif (new_flags == old_flags)\n\t\t\tbreak;\n\t");
    patch("mm/vmscan.c", body, &patched);
    copy
}

#[test]
#[ignore = "needs Debian's 6.12 source and git: .ci/run sets CACHELINT_KERNEL_SOURCE"]
fn review_of_the_seeds_patches_says_they_remove_their_needless_stores() {
    let source = kernel_source();
    let before = crate::common::tree_snapshot(&source);
    // A git tree of the 6.12 source (hard links) whose HEAD is the seed's
    // patches 1 and 2; only the two files they change are committed.
    let dir = std::env::temp_dir().join("cachelint-review-seeds");
    std::fs::create_dir_all(&dir).unwrap();
    let tree = dir.join("linux");
    let files = ["include/linux/mm_types.h", "mm/vmscan.c"];
    let git = crate::git_tree_of(&source, &tree, &files);
    std::fs::create_dir_all(dir.join("patched")).unwrap();
    let patched = patched_copy(&source, &dir.join("patched"));
    for f in files {
        std::fs::remove_file(tree.join(f)).unwrap();
        std::fs::copy(patched.join(f), tree.join(f)).unwrap();
    }
    std::fs::remove_dir_all(dir.join("patched")).unwrap();
    git(&[
        "commit",
        "-qam",
        "mm: test before storing the bitmap and the flags",
    ]);
    let matrix = dir.join("x86_64.toml");
    std::fs::write(
        &matrix,
        format!(
            "tree = \"{}\"\n[[variant]]\nname = \"x86_64\"\narch = \"x86_64\"\n",
            tree.display()
        ),
    )
    .unwrap();
    // A store fix touches no struct definition: the structs stored to are
    // named, so the probe has their types to follow the accesses through.
    let (code, out, err) = crate::common::cachelint(&[
        "review",
        "--tree",
        tree.to_str().unwrap(),
        "--variants",
        matrix.to_str().unwrap(),
        "--type",
        "mm_struct",
        "--type",
        "folio",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let json: Value = serde_json::from_str(&out).unwrap();
    let stores = &json["stores"];
    assert_eq!(stores["files"], serde_json::json!(files), "{stores}");
    let removed = stores["removed"].as_array().unwrap();
    let [bitmap, flags] = seeds(&source);
    let use_mm = found(
        removed,
        bitmap,
        "lru_gen_use_mm",
        "mm_struct",
        "lru_gen.bitmap",
    );
    assert!(
        use_mm.is_some(),
        "no lru_gen_use_mm() at {bitmap:?}: {stores:#}"
    );
    let update = found(removed, flags, "folio_update_gen", "folio", "flags")
        .or_else(|| found(removed, flags, "folio_update_gen", "folio", "flags.f"));
    assert_eq!(
        update.map(|u| &u["how"]),
        Some(&Value::from("try_cmpxchg")),
        "{stores:#}"
    );
    // The patches add none, and remove only those two.
    assert_eq!(stores["added"], serde_json::json!([]), "{stores:#}");
    assert_eq!(removed.len(), 2, "{stores:#}");
    assert_eq!(json["stores_added"], 0);
    assert_eq!(
        crate::common::tree_snapshot(&source),
        before,
        "the source tree was written"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[ignore = "needs Debian's 7.3 kernel and source: .ci/run sets CACHELINT_VMLINUX_73 and CACHELINT_KERNEL_SOURCE_73"]
fn the_seeds_needless_stores_are_in_7_3_and_gone_once_its_patches_are_applied() {
    let tree = env_path("CACHELINT_KERNEL_SOURCE_73", "the 7.3 source tree");
    let kernel = env_path("CACHELINT_VMLINUX_73", "Debian's 7.3 vmlinux");
    let under = ["mm", "include/linux"];
    let before = audit(&tree, &kernel, &under, None);
    assert_seeds_found(&tree, &kernel, &before);
    // A copy with the patches, its index in a cache of its own.
    let dir = std::env::temp_dir().join(format!("cachelint-audit-73-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy = patched_copy(&tree, &dir);
    let cache = dir.join("cache");
    let after = audit(&copy, &kernel, &under, Some(&cache));
    let _ = std::fs::remove_dir_all(&dir);
    let [bitmap, flags] = seeds(&tree);
    // The stores the patches change: the bitmap's, and the exchange (not
    // folio_update_gen()'s set_mask_bits(), which they leave alone).
    let patched = |f: &Value| {
        f["function"] == "lru_gen_use_mm"
            || (f["function"] == "folio_update_gen" && f["how"] == "try_cmpxchg")
    };
    let left: Vec<&Value> = after.iter().filter(|f| patched(f)).collect();
    assert!(left.is_empty(), "{bitmap:?} {flags:?}: {left:#?}");
    // The rest is the same audit: what the patches do not touch stays.
    let others = |fs: &[Value]| {
        fs.iter()
            .filter(|f| !patched(f))
            .map(|f| {
                format!(
                    "{} {} {} {}",
                    f["function"], f["how"], f["root"], f["members"][0]
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(others(&after), others(&before));
    assert!(!others(&before).is_empty());
}

#[test]
#[ignore = "needs Debian's 5.10 and 6.1 kernels and trees: .ci/run sets CACHELINT_VMLINUX_510, CACHELINT_KERNEL_SOURCE_510, CACHELINT_VMLINUX_OLD and CACHELINT_KERNEL_SOURCE_61"]
fn dirtying_sk_napi_id_is_found_in_5_10_and_not_after_its_fix_in_6_1() {
    // 2b13af8ade38 "net: avoid dirtying sk->sk_napi_id" (5.16): test the
    // value in sk_mark_napi_id() before writing it.
    let cases = [
        (
            env_path("CACHELINT_KERNEL_SOURCE_510", "the 5.10 source tree"),
            env_path("CACHELINT_VMLINUX_510", "Debian's 5.10 vmlinux"),
            true,
        ),
        (
            env_path("CACHELINT_KERNEL_SOURCE_61", "the 6.1 source tree"),
            env_path("CACHELINT_VMLINUX_OLD", "Debian's 6.1 vmlinux"),
            false,
        ),
    ];
    for (tree, kernel, dirtying) in cases {
        let file = "include/net/busy_poll.h";
        let line = line_of(
            &tree,
            file,
            "static inline void sk_mark_napi_id(",
            "WRITE_ONCE(sk->sk_napi_id, skb->napi_id)",
        );
        let findings = audit(&tree, &kernel, &["include/net"], None);
        let store = found(
            &findings,
            (file, line),
            "sk_mark_napi_id",
            "sock",
            "sk_napi_id",
        );
        assert_eq!(
            store.is_some(),
            dirtying,
            "{}: {findings:#?}",
            tree.display()
        );
        if let Some(store) = store {
            assert_eq!(store["store"], "copy");
            assert!(
                store["entry"]
                    .as_str()
                    .unwrap()
                    .starts_with("packet transmit and receive"),
                "{store}"
            );
        }
    }
}

#[test]
#[ignore = "needs Debian's 6.1 and 6.12 kernels and trees: .ci/run sets CACHELINT_VMLINUX_OLD, CACHELINT_KERNEL_SOURCE_61, CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn mem_cgroup_per_nodes_pointers_beside_its_lruvec_are_found_by_audit_on_6_1_and_not_on_6_12() {
    // fefc6e6631ff "memcg: rearrange fields of mem_cgroup_per_node"
    // (6.11) put the read-only pointers before the lruvec, whose members
    // are "updated often". Nobody names the struct: audit finds lruvec
    // contended, drafts mem_cgroup_per_node, which holds it by value, with
    // it, and reports the holder's pairs across the two.
    let read_mostly = ["lruvec_stats_percpu", "lruvec_stats", "memcg"];
    let cases = [
        (
            "6.1",
            env_path("CACHELINT_KERNEL_SOURCE_61", "the 6.1 source tree"),
            env_path("CACHELINT_VMLINUX_OLD", "Debian's 6.1 vmlinux"),
        ),
        ("6.12", kernel_source(), vmlinux()),
    ];
    let mut flagged = Vec::new();
    for (release, tree, kernel) in cases {
        let dir = std::env::temp_dir().join(format!(
            "cachelint-audit-holders-{release}-{}",
            std::process::id()
        ));
        let out = dir.display().to_string();
        let report = audit_report(&tree, &kernel, &["mm"], &["--rules-out", &out], None);
        assert!(
            report["holders"].as_u64().unwrap() > 0,
            "{release}: no holder drafted"
        );
        // Reported on both: drafted with lruvec's table and checked (it has
        // pairs of its own), so "not flagged after" is a check that ran.
        let holder = layout_entry(&report, "mem_cgroup_per_node", release);
        let rules = holder["rules_file"].as_str().unwrap();
        let text = std::fs::read_to_string(rules).unwrap();
        assert!(
            text.contains("\n[lruvec]\n"),
            "{release}: {rules} lacks lruvec"
        );
        // Every pair of the drafted rules where one member is a read-only
        // pointer and the other inside the lruvec, as check reports it.
        // A side by its member of the root (`lruvec` of `lruvec.lru_lock`).
        let top = |path: &str| path.split(['.', '[']).next().unwrap().to_owned();
        let pairs = pairs_between(
            &checked(rules, &kernel),
            "mem_cgroup_per_node",
            top,
            |m| read_mostly.contains(&m),
            |m| m == "lruvec",
        );
        let _ = std::fs::remove_dir_all(&dir);
        eprintln!("{release}: {holder:#?}\n{pairs:#?}");
        flagged.push(pairs);
    }
    assert!(
        !flagged[0].is_empty(),
        "6.1: no read-only pointer of mem_cgroup_per_node beside its lruvec"
    );
    assert!(flagged[1].is_empty(), "6.12 still flags {:#?}", flagged[1]);
}

#[test]
#[ignore = "needs the 6.12 and 7.3 kernels and trees: .ci/run sets CACHELINT_VMLINUX, CACHELINT_KERNEL_SOURCE, CACHELINT_VMLINUX_73 and CACHELINT_KERNEL_SOURCE_73"]
fn struct_files_count_beside_what_every_read_reads_is_found_by_audit_on_6_12_and_not_on_7_3() {
    // e249056c91a2 "fs: place f_ref to 3rd cache line in struct file to
    // resolve false sharing" (6.15): "f_ref contends with the reading of
    // f_mode, f_op, f_mapping, f_inode, f_flags in the same cache line".
    // Nobody names the struct: the whole tree's audit drafts file (its
    // count is taken on every fd lookup) and its rules, checked, flag the
    // pair on 6.12 (f_count) and not on 7.3 (f_ref, two lines down).
    let read = ["f_mode", "f_op", "f_mapping", "f_inode", "f_flags"];
    let cases = [
        ("6.12", "f_count", kernel_source(), vmlinux()),
        (
            "7.3",
            "f_ref",
            env_path("CACHELINT_KERNEL_SOURCE_73", "the 7.3 source tree"),
            env_path("CACHELINT_VMLINUX_73", "Debian's 7.3 vmlinux"),
        ),
    ];
    let mut flagged = Vec::new();
    for (release, count, tree, kernel) in cases {
        let dir = std::env::temp_dir().join(format!(
            "cachelint-audit-file-{release}-{}",
            std::process::id()
        ));
        let out = dir.display().to_string();
        let report = audit_report(&tree, &kernel, &[], &["--rules-out", &out], None);
        // Drafted and checked on both, so "not flagged after" is a check
        // that ran.
        let entry = layout_entry(&report, "file", release);
        let rules = entry["rules_file"].as_str().unwrap().to_owned();
        // A side by its innermost member (`f_count` of `file.f_count`).
        let member = |path: &str| path.rsplit('.').next().unwrap().to_owned();
        let pairs = pairs_between(
            &checked(&rules, &kernel),
            "file",
            member,
            |m| m == count,
            |m| read.contains(&m),
        );
        let _ = std::fs::remove_dir_all(&dir);
        eprintln!("{release}: {entry:#?}\n{pairs:#?}");
        if release == "6.12" {
            // What audit shows for file is that pair, first.
            assert_eq!(entry["members"][0], count, "{entry:#?}");
        }
        flagged.push(pairs);
    }
    assert!(
        !flagged[0].is_empty(),
        "6.12: no read field of file beside f_count"
    );
    assert!(flagged[1].is_empty(), "7.3 still flags {:#?}", flagged[1]);
}
