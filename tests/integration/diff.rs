//! `cachelint offsets` and `cachelint diff` across the fixture configs:
//! every offset against the compiler's `offsetof`, every size explanation
//! against the compiler's `sizeof`, and the embedded configs.

use std::collections::HashMap;

use crate::common;
use common::{cachelint, fixture, truth, truth_lines};
use serde_json::Value;

const CONFIGS: &[&str] = &["base", "stats", "rt", "after", "rt-after", "nolrugen"];

fn build(cfg: &str) -> String {
    format!("{cfg}={}", fixture(&format!("gcc-dwarf5-{cfg}")).display())
}

#[test]
fn offsets_equal_offsetof_in_every_config_and_mark_moved_lines() {
    let builds: Vec<String> = CONFIGS.iter().map(|c| build(c)).collect();
    let truths: Vec<HashMap<String, (u64, u64)>> = CONFIGS
        .iter()
        .map(|c| truth(&fixture(&format!("gcc-dwarf5-{c}")), *c != "nolrugen"))
        .collect();
    let mut paths: Vec<String> = Vec::new();
    for l in truth_lines(true) {
        if l.has_size && l.path.starts_with("mem_cgroup_per_node.") && !paths.contains(&l.path) {
            paths.push(l.path);
        }
    }
    let mut args: Vec<&str> = vec!["offsets", "--format", "json"];
    args.extend(builds.iter().map(String::as_str));
    args.extend(paths.iter().map(String::as_str));
    let (code, out, err) = cachelint(&args);
    assert_eq!(code, 0, "{err}");
    let rows: Value = serde_json::from_str(&out).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), paths.len());
    for (row, path) in rows.iter().zip(&paths) {
        assert_eq!(row["path"], path.as_str());
        let mut lines = Vec::new();
        for (i, cfg) in CONFIGS.iter().enumerate() {
            let cell = &row["builds"][i];
            assert_eq!(cell["config"], *cfg);
            match truths[i].get(path) {
                Some(&(offset, size)) => {
                    assert_eq!(cell["present"], true, "{cfg} {path}");
                    assert_eq!(cell["offset"], offset, "{cfg} {path}");
                    assert_eq!(cell["size"], size, "{cfg} {path}");
                    lines.push(Some((offset / 64, (offset + size.max(1) - 1) / 64)));
                }
                None => {
                    assert_eq!(
                        cell["present"], false,
                        "{cfg} {path}: absent without CONFIG_LRU_GEN"
                    );
                    assert!(cell["offset"].is_null(), "{cfg} {path}");
                    lines.push(None);
                }
            }
        }
        let differ = lines.iter().any(|l| *l != lines[0]);
        assert_eq!(row["lines_differ"], differ, "{path}");
    }
}

#[test]
fn a_wildcard_lists_every_member_and_absent_ones_say_so() {
    let (code, out, err) = cachelint(&[
        "offsets",
        "--format",
        "json",
        &build("base"),
        &build("nolrugen"),
        "mem_cgroup_per_node.lruvec.*",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: Value = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().rsplit('.').next().unwrap())
        .collect();
    // struct lruvec in fixtures/src/mm_lru.h, in declaration order.
    assert_eq!(
        names,
        [
            "lists",
            "lru_lock",
            "anon_cost",
            "file_cost",
            "nonresident_age",
            "refaults",
            "flags",
            "lrugen",
            "pgdat"
        ]
    );
    let lrugen = &rows[7];
    assert_eq!(lrugen["builds"][1]["config"], "nolrugen");
    assert_eq!(lrugen["builds"][1]["present"], false);
    assert_eq!(lrugen["lines_differ"], true);
}

fn diff_json(old: &str, new: &str, types: &[&str], extra: &[&str]) -> (i32, Value) {
    let (o, n) = (build(old), build(new));
    let mut args = vec!["diff", "--format", "json", &o, &n];
    args.extend_from_slice(types);
    args.extend_from_slice(extra);
    let (code, out, err) = cachelint(&args);
    assert!(code == 0 || code == 1, "{args:?}: {err}");
    (code, serde_json::from_str(&out).unwrap())
}

#[test]
fn every_size_change_is_explained_to_the_byte() {
    let types = ["mem_cgroup_per_node", "lruvec", "pglist_data"];
    for old in CONFIGS {
        for new in CONFIGS {
            let (a, b) = (
                truth(&fixture(&format!("gcc-dwarf5-{old}")), *old != "nolrugen"),
                truth(&fixture(&format!("gcc-dwarf5-{new}")), *new != "nolrugen"),
            );
            let (code, report) = diff_json(old, new, &types, &[]);
            assert_eq!(
                code == 0,
                old == new || !report["differ"].as_bool().unwrap(),
                "{old} {new}"
            );
            for t in report["types"].as_array().unwrap() {
                let name = t["name"].as_str().unwrap();
                let d = &t["diff"];
                let (sa, sb) = (a[name].1, b[name].1);
                assert_eq!(
                    (
                        d["size"][0].as_u64().unwrap(),
                        d["size"][1].as_u64().unwrap()
                    ),
                    (sa, sb)
                );
                let top = common::top_level_delta(d);
                assert_eq!(top, sb as i64 - sa as i64, "{old} -> {new}: {name}\n{d}");
                // Each nested struct's steps add up to that member's own change.
                let reasons = d["reasons"].as_array().unwrap();
                for (i, r) in reasons.iter().enumerate() {
                    let depth = r["depth"].as_u64().unwrap();
                    let below: i64 = reasons[i + 1..]
                        .iter()
                        .take_while(|x| x["depth"].as_u64().unwrap() > depth)
                        .filter(|x| x["depth"].as_u64().unwrap() == depth + 1)
                        .map(|x| x["delta"].as_i64().unwrap())
                        .sum();
                    if reasons
                        .get(i + 1)
                        .is_some_and(|x| x["depth"].as_u64().unwrap() > depth)
                    {
                        assert_eq!(
                            below,
                            r["delta"].as_i64().unwrap(),
                            "{old} -> {new}: {name}: {r}"
                        );
                    }
                }
            }
            if old == new {
                assert_eq!(code, 0);
            }
        }
    }
}

#[test]
fn the_threads_one_cacheline_is_explained() {
    // base -> after: mem_cgroup_per_node grows by exactly one line because
    // lruvec grows by more than a line's worth and the hole before _pad2_
    // absorbs the rest. Expected deltas from the compiler's sizeof/offsetof.
    let (a, b) = (
        truth(&fixture("gcc-dwarf5-base"), true),
        truth(&fixture("gcc-dwarf5-after"), true),
    );
    let (code, report) = diff_json("base", "after", &["mem_cgroup_per_node"], &[]);
    assert_eq!(code, 1);
    let reasons = report["types"][0]["diff"]["reasons"].as_array().unwrap();
    let lruvec = reasons
        .iter()
        .find(|r| r["depth"] == 0 && r["text"].as_str().unwrap().starts_with("lruvec "))
        .unwrap();
    assert_eq!(
        lruvec["delta"].as_i64().unwrap(),
        b["lruvec"].1 as i64 - a["lruvec"].1 as i64
    );
    let pad = reasons
        .iter()
        .find(|r| {
            r["depth"] == 0
                && r["text"]
                    .as_str()
                    .unwrap()
                    .starts_with("hole before _pad2_")
        })
        .unwrap();
    let growth = b["mem_cgroup_per_node"].1 as i64 - a["mem_cgroup_per_node"].1 as i64;
    assert_eq!(growth, 64);
    assert_eq!(
        lruvec["delta"].as_i64().unwrap() + pad["delta"].as_i64().unwrap(),
        growth
    );
    let groups = report["types"][0]["diff"]["groups"].as_array().unwrap();
    assert_eq!(groups[0]["name"], "lrugen_stats");
}

#[test]
fn with_rules_the_fixed_and_introduced_findings_are_listed() {
    let rules = common::rules("lru.toml");
    let (code, report) = diff_json(
        "base",
        "after",
        &["mem_cgroup_per_node"],
        &["--rules", rules.to_str().unwrap()],
    );
    assert_eq!(code, 1);
    let t = &report["types"][0];
    let fixed = t["findings_fixed"].as_array().unwrap();
    assert!(fixed.iter().any(|p| p["kind"] == "false-sharing"
        && p["a"] == "lruvec.lrugen.refaulted"
        && p["b"] == "lruvec.lrugen.enabled"));
    let moved = t["moved_fields"].as_array().unwrap();
    let after = truth(&fixture("gcc-dwarf5-after"), true);
    let enabled = moved
        .iter()
        .find(|m| m["path"] == "lruvec.lrugen.enabled")
        .unwrap();
    let line = after["mem_cgroup_per_node.lruvec.lrugen.enabled"].0 / 64;
    assert_eq!(enabled["new_lines"], serde_json::json!([line, line]));
}

#[test]
fn embedded_configs_name_the_options_that_change_layouts() {
    for (new, option) in [
        ("rt", "CONFIG_PREEMPT_RT"),
        ("stats", "CONFIG_LRU_GEN_STATS"),
    ] {
        let (_, report) = diff_json("base", new, &["lruvec"], &[]);
        let c = &report["config"];
        assert!(c["old"].as_str().unwrap().ends_with("(CONFIG_IKCONFIG)"));
        assert_eq!(
            c["layout_options"],
            serde_json::json!([[option, "n", "y"]]),
            "{new}"
        );
        assert_eq!(c["other_options"], 0);
    }
    let (_, report) = diff_json("base", "nolrugen", &["lruvec"], &[]);
    assert_eq!(
        report["config"]["layout_options"],
        serde_json::json!([["CONFIG_LRU_GEN", "y", "n"]])
    );
    // A file without an embedded config: said, not guessed.
    let (code, out, _) = cachelint(&[
        "diff",
        fixture("clang-dwarf5-base.o").to_str().unwrap(),
        fixture("gcc-dwarf5-base.o").to_str().unwrap(),
        "lruvec",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.contains("config: none found for clang-dwarf5-base.o and gcc-dwarf5-base.o"),
        "{out}"
    );
}

#[test]
fn offsets_and_diff_mistakes_exit_2() {
    let base = fixture("gcc-dwarf5-base");
    let base = base.to_str().unwrap();
    let after = fixture("gcc-dwarf5-after");
    let after = after.to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["offsets", "mem_cgroup_per_node.lruvec"], "is not a file"),
        (&["offsets", base], "no path given"),
        (
            &["offsets", base, "lruvec.nope"],
            "struct lruvec has no member 'nope'",
        ),
        (
            &["offsets", base, "nosuch.x"],
            "no struct, union or typedef named 'nosuch'",
        ),
        (&["diff", base, base, "lruvc"], "did you mean 'lruvec'"),
        // Absent from both: named in the old build, as `diff` reads it first.
        (
            &["diff", base, after, "lruvc"],
            "gcc-dwarf5-base; did you mean 'lruvec'",
        ),
    ];
    for (args, want) in cases {
        let (code, out, err) = cachelint(args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// A text file that happens to share a path's name (`lruvec` in the
/// current directory) is not a build: only `NAME=FILE` or a file starting
/// with the ELF or BTF magic is.
#[test]
fn a_text_file_named_like_a_path_is_not_a_build() {
    let dir = std::env::temp_dir().join(format!("cachelint-notbuild-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("lruvec"), "notes about lruvec\n").unwrap();
    let base = fixture("gcc-dwarf5-base");
    let (code, out, stderr) = common::cachelint_in(
        &dir,
        &[
            "offsets",
            "--format",
            "json",
            base.to_str().unwrap(),
            "mem_cgroup_per_node.lruvec",
            "lruvec",
        ],
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, 0, "{stderr}");
    let rows: Value = serde_json::from_str(&out).unwrap();
    let truth = truth(&base, true);
    let (offset, size) = truth["mem_cgroup_per_node.lruvec"];
    assert_eq!(rows[0]["path"], "mem_cgroup_per_node.lruvec");
    assert_eq!(rows[0]["builds"][0]["offset"], offset);
    assert_eq!(rows[1]["path"], "lruvec");
    // `lruvec` from its own start: offset 0, and sizeof(struct lruvec),
    // the size of the member holding one.
    assert_eq!(rows[1]["builds"][0]["offset"], 0);
    assert_eq!(rows[1]["builds"][0]["size"], size);
}

/// A label holding a character labels may not hold is said to be one,
/// not read as a file named `a b=FILE`.
#[test]
fn a_label_with_a_forbidden_character_says_so() {
    let base = fixture("gcc-dwarf5-base");
    let base = base.display();
    for (label, bad) in [("a b", "' '"), ("rt]", "']'")] {
        let arg = format!("{label}={base}");
        for args in [
            vec!["offsets", "--", arg.as_str(), "lruvec"],
            vec!["diff", "--", arg.as_str(), arg.as_str(), "lruvec"],
        ] {
            let (code, out, err) = cachelint(&args);
            assert_eq!(code, 2, "{args:?}: {out}{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(
                err.contains(&format!("label '{label}' holds {bad}")),
                "{args:?}: {err}"
            );
            assert!(err.contains("letters, digits"), "{err}");
        }
    }
}

/// `diff` lists members down to `--depth` (2 by default: a member and
/// the members of one it holds) and counts deeper changes under their
/// ancestor at that depth; `--depth all` lists every one. Counted by hand
/// from fixtures/src/mm_lru.h for lruvec, base -> rt (spinlock_t becomes
/// `struct rt_mutex_base lock` and everything after it moves):
/// - lru_lock.lock: wait_lock, .raw_lock, and the qspinlock's val,
///   val.counter, locked, pending, locked_pending, tail (8), waiters,
///   waiters.rb_node, waiters.rb_leftmost (3), owner (1): 12 added;
/// - lru_lock.rlock: raw_lock and its 6 as above: 7 removed;
/// - lrugen.list: next, pprev: 2 moved;
/// - with depth 1, lrugen: its 14 members and list's 2: 16 moved;
/// - all: lru_lock, lock + 12, rlock + 7, anon_cost, file_cost,
///   nonresident_age, nonresident_age.counter, refaults, flags, lrugen +
///   14 + 2, pgdat: 46 members.
#[test]
fn diff_depth_lists_a_reviewers_depth_and_counts_the_rest() {
    let nested = |report: &Value| -> Vec<(String, u64, u64, u64)> {
        report["types"][0]["diff"]["nested"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                (
                    n["parent"].as_str().unwrap().to_owned(),
                    n["added"].as_u64().unwrap(),
                    n["removed"].as_u64().unwrap(),
                    n["moved"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let members = |report: &Value| -> Vec<String> {
        report["types"][0]["diff"]["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["path"].as_str().unwrap().to_owned())
            .collect()
    };
    let (code, two) = diff_json("base", "rt", &["lruvec"], &[]);
    assert_eq!(code, 1);
    assert!(members(&two).iter().all(|p| p.split('.').count() <= 2));
    assert!(members(&two).contains(&"lru_lock.lock".to_owned()));
    assert_eq!(
        nested(&two),
        [
            ("lru_lock.lock".to_owned(), 12, 0, 0),
            ("lrugen.list".to_owned(), 0, 0, 2),
            ("lru_lock.rlock".to_owned(), 0, 7, 0),
        ]
    );
    let (_, one) = diff_json("base", "rt", &["lruvec"], &["--depth", "1"]);
    assert!(nested(&one).contains(&("lrugen".to_owned(), 0, 0, 16)));
    let (_, all) = diff_json("base", "rt", &["lruvec"], &["--depth", "all"]);
    assert_eq!(members(&all).len(), 46);
    assert!(nested(&all).is_empty());
    let (code, _, err) = cachelint(&[
        "diff",
        "--depth",
        "0",
        &build("base"),
        &build("rt"),
        "lruvec",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--depth"), "{err}");
}
