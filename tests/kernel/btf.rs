//! The kernel's own `.BTF`: `sizes` against pahole's BTF view and the
//! DWARF one, member offsets and types against DWARF's, and `offsets` and
//! `diff` giving what they give from DWARF.

use std::collections::HashSet;

use cachelint::commands::Source;
use serde_json::Value;

use crate::common::{self, run};
use crate::{pahole, vmlinux};

#[test]
#[ignore = "needs a real kernel: .ci/run sets CACHELINT_VMLINUX (scripts/fetch-kernel.sh)"]
fn btf_sizes_equal_pahole_and_agree_with_dwarf() {
    let k = vmlinux();
    let btf = run::sizes(&k, &Source::Btf { base: None }).unwrap().stdout;
    assert_eq!(btf, pahole(&["-F", "btf", "--sizes", k.to_str().unwrap()]));
    // Every DWARF line is in BTF; BTF also has structs defined inside
    // functions, which the top-level DWARF index (and pahole's) leaves out.
    let dwarf = run::sizes(&k, &Source::Dwarf).unwrap().stdout;
    let btf_lines: HashSet<&str> = btf.lines().collect();
    let dwarf_lines: HashSet<&str> = dwarf.lines().collect();
    assert!(dwarf_lines.is_subset(&btf_lines));
    let only_btf: Vec<String> = btf_lines
        .difference(&dwarf_lines)
        .map(|l| l.split('\t').next().unwrap().to_owned())
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let dwarf_names: HashSet<&str> = dwarf
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    for name in &only_btf {
        assert!(
            !dwarf_names.contains(name.as_str()),
            "{name}: in both, with other layouts"
        );
    }
    eprintln!(
        "btf: {} lines equal pahole -F btf; {} names only in BTF (function-local)",
        btf.lines().count(),
        only_btf.len()
    );
}

#[test]
#[ignore = "needs a real kernel: .ci/run sets CACHELINT_VMLINUX (scripts/fetch-kernel.sh)"]
fn btf_member_offsets_equal_dwarfs_for_a_sample() {
    let k = vmlinux();
    let dwarf = run::sizes(&k, &Source::Dwarf).unwrap().stdout;
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for l in dwarf.lines() {
        *counts.entry(l.split('\t').next().unwrap()).or_default() += 1;
    }
    let mut names: Vec<&str> = counts
        .iter()
        .filter(|(_, c)| **c == 1)
        .map(|(n, _)| *n)
        .collect();
    names.sort_unstable();
    let sample: Vec<String> = names
        .iter()
        .step_by(names.len() / 300)
        .map(|n| n.to_string())
        .collect();
    let (d, b) = (
        run::layout_json(&k, &sample, true, &Source::Dwarf),
        run::layout_json(&k, &sample, true, &Source::Btf { base: None }),
    );
    let mut checked = 0;
    let mut typed = 0;
    for (x, y) in d.iter().zip(&b) {
        assert_eq!(x["name"], y["name"]);
        assert_eq!(x["size"], y["size"], "{}", x["name"]);
        let key = |m: &Value| {
            (
                m["path"].clone(),
                m["offset"].clone(),
                m["size"].clone(),
                m["bit_offset"].clone(),
                m["bit_size"].clone(),
            )
        };
        let (mx, my): (Vec<_>, Vec<_>) = (
            x["members"].as_array().unwrap().iter().map(key).collect(),
            y["members"].as_array().unwrap().iter().map(key).collect(),
        );
        assert_eq!(mx, my, "{}", x["name"]);
        checked += mx.len();
        // Type names too (BTF id 0 is void), but for multi-dimensional
        // arrays, which BTF flattens, and `a[0]` against `a[]`, which BTF
        // cannot tell apart (src/btf.rs, flexible_arrays).
        for (mx, my) in x["members"]
            .as_array()
            .unwrap()
            .iter()
            .zip(y["members"].as_array().unwrap())
        {
            let (tx, ty) = (mx["type"].as_str().unwrap(), my["type"].as_str().unwrap());
            if tx.matches('[').count() < 2 {
                let flex = |t: &str| t.replace("[0]", "[]");
                assert_eq!(flex(tx), flex(ty), "{}.{}", x["name"], mx["path"]);
                typed += 1;
            }
        }
    }
    eprintln!(
        "btf: {} structs, {checked} members (expanded) equal between DWARF and BTF, {typed} with the same type",
        d.len()
    );
    // include/linux/sched.h: `void *stack;`, the member the off-by-one
    // printed as `long unsigned int *`.
    let task = run::layout_json(
        &k,
        &["task_struct".to_owned()],
        false,
        &Source::Btf { base: None },
    );
    let stack = task[0]["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["path"] == "stack")
        .unwrap();
    assert_eq!(stack["type"], "void *");
}

/// `offsets` and `diff` read the vmlinux's own BTF (`--source btf`) and
/// give what they give from its DWARF (checked against pahole above),
/// for the paths of the mm thread. CI has one kernel, so `diff` compares
/// it with itself: this checks that `diff` reads the BTF and sizes the
/// structs as DWARF does; what it reports between two builds is checked on
/// the fixtures' BTF (`tests/integration/btf.rs`, `diff_reads_btf`).
#[test]
#[ignore = "needs a real kernel: .ci/run sets CACHELINT_VMLINUX (scripts/fetch-kernel.sh)"]
fn offsets_and_diff_from_btf_equal_dwarfs() {
    let k = vmlinux();
    let run = |args: &[&str]| {
        let (code, out, _) = common::cachelint(args);
        (code, out)
    };
    let k = k.to_str().unwrap();
    let offsets = [
        "offsets",
        "--format",
        "json",
        k,
        "mem_cgroup_per_node.lruvec.lru_lock",
        "mem_cgroup_per_node.lruvec.lrugen.*",
        "task_struct.stack",
    ];
    let diff = [
        "diff",
        "--format",
        "json",
        k,
        k,
        "mem_cgroup_per_node",
        "lruvec",
    ];
    for args in [&offsets[..], &diff[..]] {
        let mut btf = args.to_vec();
        btf.insert(1, "--source=btf");
        let mut dwarf = args.to_vec();
        dwarf.insert(1, "--source=dwarf");
        let (from_btf, from_dwarf) = (run(&btf), run(&dwarf));
        assert_eq!(from_btf.0, 0, "{btf:?}");
        assert_eq!(from_btf, from_dwarf, "{args:?}");
    }
}
