//! The real-kernel tier: every test is ignored by a plain `cargo test` and
//! runs with `--ignored` when CACHELINT_VMLINUX names a vmlinux with full
//! DWARF (scripts/fetch-kernel.sh prints one) and pahole is installed.
//! pahole is the reference here; `.ci/run` sets both up.

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Command;

mod common;

use cachelint::commands::Source;
use common::pahole_text::{self, pahole_blocks, strip_attributes};
use common::run::{self, Format};
use serde_json::Value;

/// The kernel under test. These tests are `#[ignore]`d, so a plain
/// `cargo test` lists them as ignored; run on purpose (`--ignored`)
/// without a kernel they fail rather than pass having checked nothing.
fn vmlinux() -> PathBuf {
    std::env::var_os("CACHELINT_VMLINUX")
        .map(PathBuf::from)
        .expect("CACHELINT_VMLINUX must name a vmlinux with DWARF (scripts/fetch-kernel.sh)")
}

fn pahole(args: &[&str]) -> String {
    let out = Command::new("pahole")
        .args(args)
        .output()
        .expect("pahole (package dwarves) must be installed");
    assert!(
        out.status.success(),
        "pahole {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
#[ignore = "needs a real kernel: .ci/run sets CACHELINT_VMLINUX (scripts/fetch-kernel.sh)"]
fn sizes_equal_pahole_line_for_line() {
    let k = vmlinux();
    let ours = run::sizes(&k, &Source::Auto).unwrap().stdout;
    let theirs = pahole(&["-F", "dwarf", "--sizes", k.to_str().unwrap()]);
    let (a, b): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), theirs.lines().collect());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "line {}", i + 1);
    }
    assert_eq!(a.len(), b.len());
    assert!(
        a.len() > 5000,
        "a kernel has thousands of structs, got {}",
        a.len()
    );
    eprintln!("sizes: {} lines identical to pahole", a.len());
}

/// (member name, offset) pairs of pahole's member lines at `tabs` depth
/// (`None`: every depth), for one struct's block.
fn pahole_members(block: &str, tabs: Option<usize>) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for line in block.lines() {
        let depth = line.len() - line.trim_start_matches('\t').len();
        if tabs.is_some_and(|t| t != depth) {
            continue;
        }
        let Some((decl, comment)) = line.trim().split_once("/*") else {
            continue;
        };
        let Some(decl) = decl.trim().strip_suffix(';') else {
            continue;
        };
        let decl = strip_attributes(decl);
        let decl = decl.trim();
        let Some(offset) = comment
            .split([':', ' '])
            .find(|s| !s.is_empty())
            .and_then(|s| s.parse().ok())
        else {
            continue;
        };
        let name = if let Some(start) = decl.find("(*") {
            decl[start + 2..].split(')').next().unwrap_or("").to_owned()
        } else {
            let last = decl.rsplit([' ', '*']).next().unwrap_or("");
            last.trim_start_matches('}')
                .split(['[', ':'])
                .next()
                .unwrap_or("")
                .to_owned()
        };
        if !name.is_empty() && name != "}" {
            out.push((name, offset));
        }
    }
    out
}

/// Every struct name of `vmlinux` once, in `sizes` order.
fn struct_names(vmlinux: &std::path::Path) -> Vec<String> {
    let sizes = run::sizes(vmlinux, &Source::Auto).unwrap().stdout;
    let mut seen = HashSet::new();
    sizes
        .lines()
        .filter_map(|l| l.split('\t').next())
        .filter(|n| seen.insert(*n))
        .map(str::to_owned)
        .collect()
}

#[test]
#[ignore = "needs a real kernel: .ci/run sets CACHELINT_VMLINUX (scripts/fetch-kernel.sh)"]
fn member_offsets_equal_pahole_for_a_sample_of_structs() {
    let k = vmlinux();
    let names = struct_names(&k);
    let sample: Vec<&str> = names
        .iter()
        .step_by((names.len() / 250).max(1))
        .map(String::as_str)
        .collect();
    assert!(sample.len() >= 200);
    let mut compared_structs = 0;
    let mut compared_members = 0;
    // One pahole run and one cachelint run for the whole sample.
    let text = pahole(&["-F", "dwarf", "-C", &sample.join(","), k.to_str().unwrap()]);
    let blocks = pahole_blocks(&text);
    let types: Vec<String> = sample.iter().map(|s| s.to_string()).collect();
    let json = run::layout_json(&k, &types, false, &Source::Auto);
    for (name, layout) in sample.iter().zip(&json) {
        let Some(block) = blocks.iter().find(|(n, _)| n == name).map(|(_, b)| b) else {
            panic!("pahole printed no {name}");
        };
        let theirs = pahole_members(block, Some(1));
        let ours: Vec<(String, u64)> = layout["members"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["depth"] == 0 && m["path"] != "")
            .map(|m| {
                (
                    m["path"].as_str().unwrap().to_owned(),
                    m["offset"].as_u64().unwrap(),
                )
            })
            .collect();
        for member in &theirs {
            assert!(
                ours.contains(member),
                "{name}: pahole has {member:?}, cachelint {ours:?}"
            );
        }
        compared_structs += 1;
        compared_members += theirs.len();
    }
    eprintln!(
        "offsets: {compared_members} members of {compared_structs} structs agree with pahole"
    );
}

#[test]
#[ignore = "needs a real kernel: .ci/run sets CACHELINT_VMLINUX (scripts/fetch-kernel.sh)"]
fn expanded_mem_cgroup_per_node_agrees_with_pahole_expand_types() {
    let k = vmlinux();
    let text = pahole(&[
        "-F",
        "dwarf",
        "-C",
        "mem_cgroup_per_node",
        "--expand_types",
        k.to_str().unwrap(),
    ]);
    let theirs = pahole_members(&text, None);
    let json = run::layout_json(&k, &["mem_cgroup_per_node".into()], true, &Source::Auto);
    // CACHELINE_PADDING() members are markers in cachelint, members in pahole.
    let ours: HashSet<(String, u64)> = json[0]["members"]
        .as_array()
        .unwrap()
        .iter()
        .chain(json[0]["cacheline_paddings"].as_array().unwrap())
        .map(|m| {
            let path = m["path"].as_str().unwrap();
            (
                path.rsplit('.').next().unwrap().to_owned(),
                m["offset"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut checked = 0;
    for member in &theirs {
        // pahole expands arrays of structs too (showing element 0); cachelint
        // lists the array as one member, so those element members are skipped.
        // `x` is the body of struct cacheline_padding, shown as a marker.
        if ["next", "prev", "counter", "x"].contains(&member.0.as_str()) && !ours.contains(member) {
            continue;
        }
        assert!(
            ours.contains(member),
            "pahole --expand_types has {member:?}"
        );
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} members compared");
    eprintln!("expand: {checked} members of mem_cgroup_per_node agree with pahole --expand_types");
}

/// Offset of a direct member, from `pahole -C TYPE`.
fn pahole_offset(k: &str, ty: &str, member: &str) -> u64 {
    let text = pahole(&["-F", "dwarf", "-C", ty, k]);
    pahole_members(&text, Some(1))
        .into_iter()
        .find(|(name, _)| name == member)
        .unwrap_or_else(|| panic!("pahole -C {ty} has no {member}"))
        .1
}

#[test]
#[ignore = "needs a real kernel: .ci/run sets CACHELINT_VMLINUX (scripts/fetch-kernel.sh)"]
fn check_finds_the_threads_false_sharing_where_pahole_puts_the_fields() {
    let k = vmlinux();
    let ks = k.to_str().unwrap();
    let rules = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mm-lru.toml");
    let out = run::check(
        &run::check_options(&[rules], &[(k.file_name().unwrap().to_str().unwrap(), &k)]),
        Format::Json,
    )
    .unwrap();
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    // Where the fields are, from pahole alone.
    let lruvec = pahole_offset(ks, "mem_cgroup_per_node", "lruvec");
    let lrugen = pahole_offset(ks, "lruvec", "lrugen");
    let refaulted = lruvec + lrugen + pahole_offset(ks, "lru_gen_folio", "refaulted");
    let enabled = lruvec + lrugen + pahole_offset(ks, "lru_gen_folio", "enabled");
    let list = lruvec + lrugen + pahole_offset(ks, "lru_gen_folio", "list");
    let evicted = lruvec + lrugen + pahole_offset(ks, "lru_gen_folio", "evicted");
    // enabled directly follows refaulted[] in lru_gen_folio (no hole in
    // pahole's output between them), so refaulted[] ends where it starts.
    let refaulted_end = enabled;
    let line = enabled / 64;
    let shares = (refaulted / 64..=(refaulted_end - 1) / 64).contains(&line);
    let found = report["findings"].as_array().unwrap().iter().find(|f| {
        f["root"] == "mem_cgroup_per_node"
            && f["kind"] == "false-sharing"
            && f["a"]["name"] == "refaulted"
            && f["b"]["name"] == "enabled"
    });
    assert_eq!(
        found.is_some(),
        shares,
        "refaulted {refaulted}, enabled {enabled}"
    );
    if let Some(f) = found {
        assert_eq!(f["cacheline"], line);
        assert_eq!(f["a"]["offset"], refaulted);
        assert_eq!(f["b"]["offset"], enabled);
        assert_eq!(f["a"]["decl_file"], "include/linux/mmzone.h");
        eprintln!(
            "check: refaulted ({refaulted}) and enabled ({enabled}) share cacheline {line} of mem_cgroup_per_node; list at {list}, evicted at {evicted}"
        );
    }
}

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
/// the fixtures' BTF (`tests/btf.rs`, `diff_reads_btf`).
#[test]
#[ignore = "needs a real kernel: .ci/run sets CACHELINT_VMLINUX (scripts/fetch-kernel.sh)"]
fn offsets_and_diff_from_btf_equal_dwarfs() {
    let k = vmlinux();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_cachelint"))
            .args(args)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap())
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
        assert_eq!(from_btf.0, Some(0), "{btf:?}");
        assert_eq!(from_btf, from_dwarf, "{args:?}");
    }
}

/// The plan oracle: `CACHELINT_PLAN_ORACLE` lists `VMLINUX=KMODDIR`
/// pairs, separated by `:`; each KMODDIR holds the modules
/// scripts/kmod-oracle.sh built against that kernel's headers, as shipped
/// and with mmzone.h patched as RFC 3/3 does, with their row labels.
fn plan_oracles() -> Vec<(PathBuf, PathBuf)> {
    let list = std::env::var("CACHELINT_PLAN_ORACLE")
        .expect("CACHELINT_PLAN_ORACLE must list VMLINUX=KMODDIR pairs (scripts/kmod-oracle.sh)");
    list.split(':')
        .map(|pair| {
            let (v, k) = pair.split_once('=').expect("VMLINUX=KMODDIR");
            (PathBuf::from(v), PathBuf::from(k))
        })
        .collect()
}

/// Every row of a module's `cachelint_truth[]` (its labels in `.rows`)
/// against cachelint's offsetof of the same path in `vmlinux`, laid out
/// by `plan` when there is one. `#align` rows are skipped (offsetof does
/// not print alignments); returns the rows compared.
fn assert_module_truth(
    vmlinux: &std::path::Path,
    module: &std::path::Path,
    plan: Option<&std::path::Path>,
) -> usize {
    let labels: Vec<String> = std::fs::read_to_string(module.with_extension("rows"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let values = common::truth_values(module);
    assert_eq!(values.len(), labels.len(), "{}", module.display());
    let queries: Vec<(usize, &str, bool)> = labels
        .iter()
        .enumerate()
        .filter_map(|(i, l)| match l.split_once('#') {
            Some((p, "size")) => Some((i, p, true)),
            Some(_) => None,
            None => Some((i, l.as_str(), false)),
        })
        .collect();
    let paths: Vec<String> = queries.iter().map(|(_, p, _)| p.to_string()).collect();
    let rows = match plan {
        Some(plan) => run::offsetof_planned(vmlinux, &paths, plan).unwrap(),
        None => run::offsetof_json(vmlinux, &paths).unwrap(),
    };
    for ((i, path, size), row) in queries.iter().zip(&rows) {
        let key = if *size { "size" } else { "offset" };
        assert_eq!(
            row[key],
            values[*i],
            "{} {key} of {path}: cachelint{} vs the compiled module {}",
            vmlinux.display(),
            if plan.is_some() { " (planned)" } else { "" },
            module.display()
        );
    }
    queries.len()
}

#[test]
#[ignore = "needs real kernels and modules: .ci/run sets CACHELINT_PLAN_ORACLE (scripts/kmod-oracle.sh)"]
fn the_rfc3_plan_on_debian_kernels_equals_the_module_built_with_the_patched_header() {
    let plan =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/kmod/rfc3.plan.toml");
    for (vmlinux, kmod) in plan_oracles() {
        // The module sees the kernel's layout, so it can speak for the patch.
        let shipped = assert_module_truth(&vmlinux, &kmod.join("oracle-shipped.ko"), None);
        let planned = assert_module_truth(&vmlinux, &kmod.join("oracle-rfc3.ko"), Some(&plan));
        println!(
            "{}: {shipped} rows as shipped, {planned} as planned, equal to the modules",
            vmlinux.display()
        );
        assert!(planned > 40);
    }
}

/// The alignment attributes of a pahole-style block: `(member, N)` for
/// each `NAME __attribute__((__aligned__(N)));` line (CACHELINE_PADDING()
/// and group markers left out: cachelint shows them as markers), the
/// struct's own, and the `forced alignments` summary line. (`__packed__`,
/// which pahole infers, cachelint does not print.)
fn aligned_attributes(block: &str) -> (Vec<(String, u64)>, Option<u64>, Option<String>) {
    let n_of = |s: &str| -> u64 {
        let digits = &s[s.find("__aligned__(").unwrap() + 12..];
        digits[..digits.find(')').unwrap()].parse().unwrap()
    };
    let mut members = Vec::new();
    let mut own = None;
    let mut forced = None;
    for line in block.lines() {
        let t = line.trim();
        if t.starts_with("} __attribute__((__aligned__(") {
            own = Some(n_of(t));
        } else if t.starts_with("/* forced alignments") {
            forced = Some(t.to_owned());
        } else if let Some(at) = t.find(" __attribute__((__aligned__(") {
            let name = t[..at].rsplit([' ', '*']).next().unwrap().to_owned();
            if !t.contains("struct cacheline_padding") && !name.starts_with("__cacheline_group_") {
                members.push((name, n_of(&t[at..])));
            }
        }
    }
    (members, own, forced)
}

#[test]
#[ignore = "needs a real kernel: .ci/run sets CACHELINT_VMLINUX (scripts/fetch-kernel.sh)"]
fn aligned_attributes_and_forced_alignments_equal_paholes_for_a_sample() {
    let k = vmlinux();
    let names = struct_names(&k);
    // Every struct pahole prints an attribute for would be too many for one
    // command line; a sample of 300, plus the structs the tool is about.
    let mut sample: Vec<&str> = names
        .iter()
        .step_by((names.len() / 300).max(1))
        .map(String::as_str)
        .collect();
    let mut theirs = pahole_blocks(&pahole(&[
        "-F",
        "dwarf",
        "-C",
        &sample.join(","),
        k.to_str().unwrap(),
    ]));
    // pahole 1.24 given a long -C list leaves some out: these one at a time.
    for name in [
        "rq",
        "task_struct",
        "mem_cgroup_per_node",
        "tcp_sock",
        "net_device",
        "zone",
        "lruvec",
    ] {
        theirs.extend(pahole_blocks(&pahole(&[
            "-F",
            "dwarf",
            "-C",
            name,
            k.to_str().unwrap(),
        ])));
        sample.push(name);
    }
    let types: Vec<String> = sample.iter().map(|s| s.to_string()).collect();
    let ours = run::layout(&k, &types, false, Format::Text, None, &Source::Auto)
        .unwrap()
        .stdout;
    let ours = pahole_blocks(&ours);
    let mut attributes = 0;
    for name in &sample {
        let find = |blocks: &[(String, String)]| {
            blocks
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, b)| aligned_attributes(b))
        };
        let (Some(p), Some(mut c)) = (find(&theirs), find(&ours)) else {
            panic!(
                "{name}: missing from {}",
                if find(&theirs).is_none() {
                    "pahole's output"
                } else {
                    "cachelint's output"
                }
            );
        };
        // pahole prints a packed struct as `__packed__`, not its alignment.
        let packed = theirs
            .iter()
            .any(|(n, b)| n == name && b.contains("} __attribute__((__packed__))"));
        if packed {
            c.1 = None;
        }
        assert_eq!(c, p, "{name}: cachelint's alignment attributes vs pahole's");
        attributes += p.0.len() + usize::from(p.1.is_some());
    }
    eprintln!(
        "aligned attributes: {attributes} in {} structs equal pahole's",
        sample.len()
    );
    assert!(attributes > 20);
}

/// The sample of the line-by-line comparison: the 50 largest structs, a
/// spread of 250 over `sizes` order, and every fifth struct of 512 bytes or
/// more (the long layouts, with boundaries, groups and nested bodies).
fn layout_sample(vmlinux: &std::path::Path) -> Vec<String> {
    let sizes = run::sizes(vmlinux, &Source::Auto).unwrap().stdout;
    let mut seen = HashSet::new();
    let structs: Vec<(&str, u64)> = sizes
        .lines()
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((f.next()?, f.next()?.parse().ok()?))
        })
        .filter(|(n, _)| seen.insert(*n))
        .collect();
    let mut largest = structs.clone();
    largest.sort_by_key(|&(n, size)| (std::cmp::Reverse(size), n));
    let spread = structs.iter().step_by((structs.len() / 250).max(1));
    let long = structs.iter().filter(|(_, size)| *size >= 512).step_by(5);
    let mut picked = HashSet::new();
    largest
        .iter()
        .take(50)
        .chain(spread)
        .chain(long)
        .filter(|(n, _)| picked.insert(*n))
        .map(|(n, _)| n.to_string())
        .collect()
}

#[test]
#[ignore = "needs a real kernel: .ci/run sets CACHELINT_VMLINUX (scripts/fetch-kernel.sh)"]
fn layout_text_equals_pahole_line_by_line_after_the_documented_normalisation() {
    let k = vmlinux();
    let sample = layout_sample(&k);
    assert!(sample.len() >= 200, "{} structs", sample.len());
    // --skip_missing: without it pahole 1.24 looks for the -C names in list
    // order, one compile unit after the other, and misses a name defined
    // only in a unit before the one where it found the previous name.
    let theirs = pahole(&[
        "-F",
        "dwarf",
        "--skip_missing",
        "-C",
        &sample.join(","),
        k.to_str().unwrap(),
    ]);
    let ours = run::layout(&k, &sample, false, Format::Text, None, &Source::Auto)
        .unwrap()
        .stdout;
    let (differences, lines, skipped) = pahole_text::compare(&theirs, &ours, &sample, 64);
    let compared = sample.len() - skipped.len();
    assert!(
        differences.is_empty(),
        "{} of {compared} structs differ from pahole; the first:\n{}",
        differences.len(),
        differences[..differences.len().min(15)].join("\n")
    );
    eprintln!(
        "layout: {lines} lines of {compared} structs equal pahole's after normalisation \
         (not compared, pahole printed a typedef: {skipped:?})"
    );
    assert!(compared >= 200, "{compared} structs compared");
    assert!(lines > 5000, "{lines} lines");
}

/// The kernel source tree of the vmlinux (scripts/fetch-source.sh), for
/// its net_cachelines tables.
fn kernel_source() -> PathBuf {
    std::env::var_os("CACHELINT_KERNEL_SOURCE")
        .map(PathBuf::from)
        .expect("CACHELINT_KERNEL_SOURCE must name the 6.12 source tree (scripts/fetch-source.sh)")
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn every_net_cachelines_table_of_the_source_tree_loads_on_its_kernel() {
    let dir = kernel_source().join("Documentation/networking/net_cachelines");
    let mut tables: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rst"))
        .collect();
    tables.sort();
    assert_eq!(tables.len(), 7, "{tables:?}");
    let access = ["read_mostly", "read_write", "write_mostly"];
    let mut args = vec!["check".to_owned()];
    for table in &tables {
        // An independent count of the rows that give an access: a row
        // whose words after the first two hold one (types with spaces
        // shift the words, never past the third).
        let text = std::fs::read_to_string(table).unwrap();
        let enum_table = text.lines().any(|l| l.trim() == "..enum");
        let rows = text
            .lines()
            .filter(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                words.len() > 2
                    && words[2..words.len().min(5)]
                        .iter()
                        .any(|w| access.contains(w))
            })
            .count();
        let (code, _, err) = common::cachelint(&[
            "check",
            "--rules",
            table.to_str().unwrap(),
            vmlinux().to_str().unwrap(),
        ]);
        assert!(code == 0 || code == 1, "{}: {err}", table.display());
        if enum_table || rows == 0 {
            assert!(
                err.contains("nothing to check in it"),
                "{}: {err}",
                table.display()
            );
        }
        let rules = cachelint::rules::Rules::load(std::slice::from_ref(table)).unwrap();
        let fields: usize = rules.types.iter().map(|t| t.fields.len()).sum();
        if !enum_table {
            assert_eq!(fields, rows, "{}: rows with an access", table.display());
        }
        eprintln!("{}: {fields} annotated fields", table.display());
        args.extend(["--rules".to_owned(), table.display().to_string()]);
    }
    args.push(vmlinux().display().to_string());
    args.extend(["--format".to_owned(), "json".to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = common::cachelint(&args);
    // No table states lockless writes by many CPUs: no error.
    assert_eq!(code, 0, "all tables: {err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["summary"]["errors"], 0);
    eprintln!(
        "all tables: {} errors, {} warnings (cross-context), {} notes",
        report["summary"]["errors"], report["summary"]["warnings"], report["summary"]["notes"]
    );
}

/// The members of one struct from `pahole -C` that C names directly:
/// its own, and those of anonymous structs and unions in it (pahole prints
/// those offsets from the start of the struct, as their own). Name →
/// (offset, bytes touched); a
/// bitfield touches the bytes its bits fall in.
fn pahole_extents(block: &str) -> std::collections::HashMap<String, (u64, u64)> {
    // One member list per open brace; the struct itself is the first.
    let mut open: Vec<Vec<(String, u64, u64)>> = vec![Vec::new()];
    let mut depth0 = true;
    for line in block.lines() {
        let trimmed = line.trim();
        if depth0 {
            // The `struct NAME {` line.
            depth0 = !trimmed.ends_with('{');
            continue;
        }
        if trimmed.ends_with('{') {
            open.push(Vec::new());
            continue;
        }
        let Some((decl, comment)) = trimmed.split_once("/*") else {
            continue;
        };
        let Some(decl) = decl.trim().strip_suffix(';') else {
            continue;
        };
        let decl = strip_attributes(decl);
        let decl = decl.trim();
        // `/* 0: 0  8 */` and `/* 0:32  8 */` alike.
        let comment = comment.trim_end_matches("*/").replace(':', ": ");
        let words: Vec<&str> = comment.split_whitespace().collect();
        if let Some(rest) = decl.strip_prefix('}') {
            // The end of a nested type: `};` anonymous, `} name;` named.
            let inner = open.pop().unwrap_or_default();
            let offset: u64 = words.first().and_then(|w| w.parse().ok()).unwrap_or(0);
            let size: u64 = words.get(1).and_then(|w| w.parse().ok()).unwrap_or(0);
            let parent = open.last_mut().expect("balanced braces");
            match rest.trim() {
                "" => parent.extend(inner),
                name => parent.push((name.split('[').next().unwrap().to_owned(), offset, size)),
            }
            continue;
        }
        let last = decl.rsplit([' ', '*']).next().unwrap_or("");
        let (name, bits) = match last.split_once(':') {
            Some((n, b)) => (n.split('[').next().unwrap_or(n), b.parse::<u64>().ok()),
            None => (last.split('[').next().unwrap_or(last), None),
        };
        let extent = match (words.as_slice(), bits) {
            ([byte, bit, _], Some(bits)) if byte.ends_with(':') => {
                let byte: u64 = byte.trim_end_matches(':').parse().unwrap();
                let bit: u64 = bit.parse().unwrap();
                (byte + bit / 8, (bit % 8 + bits).div_ceil(8))
            }
            ([offset, size], None) => match (offset.parse(), size.parse()) {
                (Ok(o), Ok(s)) => (o, s),
                _ => continue,
            },
            _ => continue,
        };
        if let Some(list) = open.last_mut() {
            list.push((name.to_owned(), extent.0, extent.1));
        }
    }
    open.swap_remove(0)
        .into_iter()
        .map(|(n, o, s)| (n, (o, s)))
        .collect()
}

#[test]
#[ignore = "needs a real kernel and its source tree: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn footprint_per_context_equals_a_count_from_paholes_offsets() {
    let dir = kernel_source().join("Documentation/networking/net_cachelines");
    // The kernel the tables come with, and one from before the 6.8
    // reorganisation (CACHELINT_VMLINUX_OLD, a 6.1 kernel in .ci/run).
    let mut kernels = vec![vmlinux()];
    kernels.extend(std::env::var_os("CACHELINT_VMLINUX_OLD").map(PathBuf::from));
    for k in kernels {
        for (table, ty) in [
            ("tcp_sock.rst", "tcp_sock"),
            ("net_device.rst", "net_device"),
            ("netns_ipv4_sysctl.rst", "netns_ipv4"),
        ] {
            let (code, out, err) = common::cachelint(&[
                "footprint",
                "--rules",
                dir.join(table).to_str().unwrap(),
                k.to_str().unwrap(),
                "--format",
                "json",
            ]);
            assert_eq!(code, 0, "{table}: {err}");
            let json: serde_json::Value = serde_json::from_str(&out).unwrap();
            let row = &json["builds"][0]["types"][0];
            assert_eq!(row["name"], ty);
            let extents = pahole_extents(&pahole(&["-C", ty, k.to_str().unwrap()]));
            for c in row["contexts"].as_array().unwrap() {
                let ranges: Vec<(u64, u64)> = c["fields"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| {
                        let f = f.as_str().unwrap();
                        let (o, s) = *extents
                            .get(f)
                            .unwrap_or_else(|| panic!("{ty}: pahole has no member '{f}'"));
                        (o, o + s)
                    })
                    .collect();
                let (bytes, lines) = common::bytes_and_lines(ranges, 64);
                let context = c["context"].as_str().unwrap();
                assert_eq!(c["bytes"], bytes, "{ty} {context}");
                let ours: Vec<u64> = c["lines"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|l| l.as_u64().unwrap())
                    .collect();
                assert_eq!(ours, lines, "{ty} {context}");
                assert_eq!(c["optimum"], bytes.div_ceil(64), "{ty} {context}");
                eprintln!(
                    "{}: {ty} {context}: {} fields, {bytes} bytes, {} lines, optimum {}, as pahole's offsets give",
                    k.display(),
                    c["fields"].as_array().unwrap().len(),
                    lines.len(),
                    bytes.div_ceil(64)
                );
            }
            // Members the table names that this kernel lacks are listed, and
            // pahole does not have them either.
            for absent in row["absent"].as_array().unwrap() {
                let name = absent.as_str().unwrap().rsplit(": ").next().unwrap();
                let top = name.split('.').next().unwrap();
                assert!(
                    !extents.contains_key(top),
                    "{ty}: '{name}' is listed absent"
                );
            }
            eprintln!(
                "{}: {ty}: {} tabled members absent",
                k.display(),
                row["absent"].as_array().unwrap().len()
            );
        }
    }
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn asserts_compare_with_the_kernels_own_check_functions() {
    let source = kernel_source();
    let tables = source.join("Documentation/networking/net_cachelines");
    let cases = [
        ("tcp_sock.rst", "tcp_sock", "net/ipv4/tcp.c"),
        ("net_device.rst", "net_device", "net/core/dev.c"),
        (
            "netns_ipv4_sysctl.rst",
            "netns_ipv4",
            "net/core/net_namespace.c",
        ),
    ];
    for (table, ty, file) in cases {
        let table = tables.join(table);
        let c_file = source.join(file);
        let args = |format: &str| {
            common::cachelint(&[
                "asserts",
                "--rules",
                table.to_str().unwrap(),
                vmlinux().to_str().unwrap(),
                ty,
                "--against",
                c_file.to_str().unwrap(),
                "--format",
                format,
            ])
        };
        let (code, out, err) = args("json");
        assert!(code == 0 || code == 1, "{ty}: {err}");
        let j: Value = serde_json::from_str(&out).unwrap();
        let c = &j["comparison"];
        // An independent count: the 6.12 files write each assert's type
        // and group on the macro's line.
        let text = std::fs::read_to_string(&c_file).unwrap();
        let count = |macro_name: &str| {
            let call = format!("{macro_name}(struct {ty},");
            text.lines()
                .filter(|l| l.trim_start().starts_with(&call))
                .count()
        };
        let members = count("CACHELINE_ASSERT_GROUP_MEMBER");
        assert!(members > 10, "{ty}: {members} member asserts in {file}");
        assert_eq!(c["member_asserts"], members, "{ty}");
        assert_eq!(
            c["size_asserts"],
            count("CACHELINE_ASSERT_GROUP_SIZE"),
            "{ty}"
        );
        // The kernel built this vmlinux from this source, so its asserts
        // hold on it: a failure would be cachelint misreading the layout.
        assert_eq!(c["summary"]["failures"], 0, "{ty}: {out}");
        let generated: usize = j["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["members"].as_array().unwrap().len())
            .sum();
        let (_, text_out, notes) = args("text");
        eprintln!(
            "{ty}: {generated} member asserts generated, {members} read from {file}\n{text_out}{notes}"
        );
    }
}

#[test]
#[ignore = "needs real kernels, modules and the source tree: .ci/run sets CACHELINT_PLAN_ORACLE and CACHELINT_KERNEL_SOURCE"]
fn the_suggested_order_equals_the_module_built_with_its_header_patch() {
    // suggest on the oracle's kernels, its patch applied to the headers
    // those kernels were built with, and the module built against them:
    // the compiler's offsets must be the ones suggest laid out.
    let oracles = plan_oracles();
    let dir = std::env::temp_dir().join(format!("cachelint-suggest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rules = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mm-lru.toml");
    let kernels: Vec<PathBuf> = oracles.iter().map(|(v, _)| v.clone()).collect();
    let (report, patch, plan) = suggest_patch(
        &dir,
        &rules,
        &kernels,
        "lru_gen_folio",
        &["--max-growth", "2"],
    );
    for ((vmlinux, kmod), build) in oracles.iter().zip(report["builds"].as_array().unwrap()) {
        assert_eq!(build["errors"][1], 0, "{}", vmlinux.display());
        let flavour = vmlinux
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .rsplit_once("deb12-")
            .expect("a Debian 6.12 vmlinux")
            .1;
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/kmod-oracle.sh");
        let built = Command::new(script)
            .args([flavour, "suggested", patch.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
        let module = PathBuf::from(
            String::from_utf8(built.stdout)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        );
        let rows = assert_module_truth(vmlinux, &module, Some(&plan));
        // No more growth than RFC 3/3's, by the compiler's sizeof.
        let size_of = |m: &std::path::Path| {
            let labels = std::fs::read_to_string(m.with_extension("rows")).unwrap();
            let i = labels
                .lines()
                .position(|l| l == "mem_cgroup_per_node#size")
                .unwrap();
            common::truth_values(m)[i]
        };
        let ours = size_of(&module);
        let rfc3 = size_of(&kmod.join("oracle-rfc3.ko"));
        assert!(
            ours <= rfc3,
            "{}: {ours} > RFC 3/3's {rfc3}",
            vmlinux.display()
        );
        println!(
            "{}: suggested order, {rows} rows equal to the module built with its patch; \
             mem_cgroup_per_node {ours} bytes (RFC 3/3: {rfc3})",
            vmlinux.display()
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// The net_device oracle module (`KMOD_ORACLE=netdev
/// scripts/kmod-oracle.sh FLAVOUR [NAME PATCH]`): its module path.
fn netdev_module(vmlinux: &std::path::Path, args: &[&str]) -> PathBuf {
    oracle_module("netdev", vmlinux, args)
}

/// `suggest --rules RULES KERNELS... TYPE --source-tree SOURCE --plan-out
/// PLAN --format json` with `extra` options: the JSON, the header patch
/// written to `DIR/TYPE.patch`, and the plan's path.
fn suggest_patch(
    dir: &std::path::Path,
    rules: &std::path::Path,
    kernels: &[PathBuf],
    ty: &str,
    extra: &[&str],
) -> (Value, PathBuf, PathBuf) {
    let plan = dir.join(format!("{ty}.plan.toml"));
    let source = kernel_source();
    let mut args: Vec<String> = vec![
        "suggest".into(),
        "--rules".into(),
        rules.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(kernels.iter().map(|v| v.display().to_string()));
    args.extend(
        [
            ty,
            "--source-tree",
            source.to_str().unwrap(),
            "--plan-out",
            plan.to_str().unwrap(),
            "--format",
            "json",
        ]
        .map(String::from),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = common::cachelint(&args);
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let patch = dir.join(format!("{ty}.patch"));
    std::fs::write(&patch, report["patch"].as_str().expect("a patch")).unwrap();
    (report, patch, plan)
}

/// The oracle module `kind` (KMOD_ORACLE) for `vmlinux`'s flavour, built
/// as shipped or, with `[NAME, PATCH]`, with the patch applied.
fn oracle_module(kind: &str, vmlinux: &std::path::Path, args: &[&str]) -> PathBuf {
    let flavour = vmlinux
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .rsplit_once("deb12-")
        .expect("a Debian 6.12 vmlinux")
        .1;
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/kmod-oracle.sh");
    let built = Command::new(script)
        .env("KMOD_ORACLE", kind)
        .arg(flavour)
        .args(args)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    PathBuf::from(
        String::from_utf8(built.stdout)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
}

/// net_device differs between the flavours (amd64 and rt have members
/// under CONFIG_WIRELESS_EXT, CONFIG_CFG80211, ... that cloud lacks), and
/// its header has 40 conditional lines: one suggestion over every
/// oracle kernel (and amd64's when it lies beside them), its header patch
/// (conditionals kept) built into the net_device module against each
/// flavour's headers, must equal `offsetof --plan` of the plan file on
/// every row of the module; the module as shipped must equal the kernel
/// (so it speaks for it). The suggestion touches no more lines per
/// context than the shipped layout on any build.
#[test]
#[ignore = "needs real kernels, modules and the source tree: .ci/run sets CACHELINT_PLAN_ORACLE and CACHELINT_KERNEL_SOURCE"]
fn the_suggested_net_device_order_with_per_config_members_equals_the_patched_module() {
    let mut kernels: Vec<PathBuf> = plan_oracles().into_iter().map(|(v, _)| v).collect();
    let amd64 = kernels[0].with_file_name("vmlinux-6.12.117+deb12-amd64");
    if amd64.is_file() && !kernels.contains(&amd64) {
        kernels.push(amd64);
    }
    let dir = std::env::temp_dir().join(format!("cachelint-netdev-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let table = kernel_source().join("Documentation/networking/net_cachelines/net_device.rst");
    let (report, patch, plan) = suggest_patch(&dir, &table, &kernels, "net_device", &[]);
    let per_config = report["per_config"].as_array().unwrap();
    let cloud = kernels
        .iter()
        .any(|k| k.to_str().unwrap().ends_with("-cloud-amd64"));
    if cloud && kernels.len() > 1 {
        assert!(
            !per_config.is_empty(),
            "cloud lacks members the others have"
        );
        assert!(report["plan"].as_str().unwrap().contains("optional = ["));
    }
    for (vmlinux, build) in kernels.iter().zip(report["builds"].as_array().unwrap()) {
        for f in build["footprint"].as_array().unwrap() {
            assert!(
                f[2].as_u64() <= f[1].as_u64(),
                "{}: {} touches {} lines suggested, {} shipped",
                vmlinux.display(),
                f[0],
                f[2],
                f[1]
            );
        }
        let shipped = assert_module_truth(vmlinux, &netdev_module(vmlinux, &[]), None);
        let module = netdev_module(vmlinux, &["suggested", patch.to_str().unwrap()]);
        let rows = assert_module_truth(vmlinux, &module, Some(&plan));
        assert!(rows > 150, "{rows} rows");
        println!(
            "{}: net_device as shipped, {shipped} rows, and suggested, {rows} rows, equal to \
             the modules; footprint compiled -> suggested {}",
            vmlinux.display(),
            build["footprint"]
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Runs the binary with `CACHELINT_CACHE_DIR` set: exit code and both
/// outputs.
fn cachelint_cached(cache: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    common::cachelint_with_env(&[("CACHELINT_CACHE_DIR", cache)], args)
}

/// The on-disk name index changes how a lookup finds its definitions, never
/// what it prints: over a sample of structs (every 25th name, the ones with
/// several layouts, typedefs of structs), layout, --expand and offsetof
/// print the same from a scan (`--no-cache`), from the lookup that writes
/// the index, and from the one that reads it (which leaves it as it is).
#[test]
#[ignore = "needs a real kernel: .ci/run sets CACHELINT_VMLINUX (scripts/fetch-kernel.sh)"]
fn a_lookup_from_the_name_index_prints_what_a_scan_prints() {
    let k = vmlinux();
    let k = k.to_str().unwrap();
    let sizes = run::sizes(std::path::Path::new(k), &Source::Auto)
        .unwrap()
        .stdout;
    let all: Vec<&str> = sizes.lines().filter_map(|l| l.split('\t').next()).collect();
    let mut seen = HashSet::new();
    let several: Vec<&str> = all.iter().copied().filter(|n| !seen.insert(*n)).collect();
    assert!(
        !several.is_empty(),
        "the kernel has same-named structs of several layouts"
    );
    let mut names: Vec<&str> = all.iter().copied().step_by(25).collect();
    names.extend(&several);
    names.extend([
        "atomic_t",
        "spinlock_t",
        "seqcount_t",
        "wait_queue_head_t",
        "task_struct",
    ]);
    names.sort_unstable();
    names.dedup();
    let picks: Vec<String> = several.iter().map(|n| format!("{n}#2")).collect();

    let cache = std::env::temp_dir().join(format!("cachelint-kernel-index-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let runs: [Vec<&str>; 5] = [
        [&["layout", k][..], &names].concat(),
        [&["layout", "--expand", k][..], &names[..40]].concat(),
        [&["offsetof", k][..], &names].concat(),
        [
            &["layout", k][..],
            &picks.iter().map(String::as_str).collect::<Vec<_>>(),
        ]
        .concat(),
        vec!["layout", k, "lruvec", "no_such_type_anywhere"],
    ];
    for (i, args) in runs.iter().enumerate() {
        let scan = cachelint_cached(&cache, &[&args[..1], &["--no-cache"], &args[1..]].concat());
        let writes = cachelint_cached(&cache, args);
        let index = std::fs::read_dir(&cache)
            .expect("the first lookup writes the cache")
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "idx"))
            .expect("an index file");
        let written = std::fs::metadata(&index).unwrap().modified().unwrap();
        let reads = cachelint_cached(&cache, args);
        assert_eq!(writes, scan, "run {i}: the lookup that writes the index");
        assert_eq!(reads, scan, "run {i}: the lookup that reads it");
        assert_eq!(
            std::fs::metadata(&index).unwrap().modified().unwrap(),
            written,
            "run {i}: a trusted index is not rewritten"
        );
        if i < 4 {
            assert_eq!(scan.0, 0, "run {i}: {}", scan.2);
        } else {
            assert_eq!(scan.0, 2, "an unknown type fails");
        }
    }
    eprintln!(
        "name index: {} names, {} with several layouts, same output from scan, write and read",
        names.len(),
        several.len()
    );
    std::fs::remove_dir_all(&cache).unwrap();
}

/// The rt flavour among the plan oracle's kernels: Debian builds it from
/// a tree under `debian/build/source_rt/`, which its DWARF records.
fn rt_vmlinux() -> PathBuf {
    plan_oracles()
        .into_iter()
        .map(|(vmlinux, _)| vmlinux)
        .find(|v| v.to_string_lossy().contains("-rt-"))
        .expect("CACHELINT_PLAN_ORACLE must hold the rt-amd64 kernel (.ci/run)")
}

/// Every `decl_file` of a `check --format json` report's findings, as
/// `(build, field path) -> (file, line, field name)`.
fn decl_files(
    report: &Value,
) -> std::collections::BTreeMap<(String, String), (String, u64, String)> {
    let mut files = std::collections::BTreeMap::new();
    for f in report["findings"].as_array().unwrap() {
        for side in [&f["a"], &f["b"]] {
            files.insert(
                (
                    f["config"].as_str().unwrap().to_owned(),
                    side["path"].as_str().unwrap().to_owned(),
                ),
                (
                    side["decl_file"].as_str().unwrap().to_owned(),
                    side["decl_line"].as_u64().unwrap(),
                    side["name"].as_str().unwrap().to_owned(),
                ),
            );
        }
    }
    files
}

#[test]
#[ignore = "needs the cloud and rt kernels and the source tree: .ci/run sets CACHELINT_VMLINUX, CACHELINT_PLAN_ORACLE and CACHELINT_KERNEL_SOURCE"]
fn source_files_are_paths_in_the_kernel_tree_on_every_flavour() {
    let tree = kernel_source();
    let (cloud, rt) = (vmlinux(), rt_vmlinux());
    let rules = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mm-lru.toml");
    let check = |extra: &[&str], format: &str| {
        let mut args: Vec<String> = [
            "check",
            "--rules",
            rules.to_str().unwrap(),
            "--format",
            format,
        ]
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect();
        args.push(format!("cloud={}", cloud.display()));
        args.push(format!("rt={}", rt.display()));
        let (code, out, err) =
            common::cachelint(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(code == 0 || code == 1, "{err}");
        serde_json::from_str::<Value>(&out).unwrap()
    };
    let files = decl_files(&check(&[], "json"));
    assert!(files.len() > 10, "{files:?}");
    // Each is a file of the source tree, whose line declares the field:
    // the path a bot maps to the tree, on the rt flavour too.
    for ((config, path), (file, line, name)) in &files {
        let text = std::fs::read_to_string(tree.join(file))
            .unwrap_or_else(|e| panic!("[{config}] {path}: {file}: {e}"));
        let declared = text.lines().nth(*line as usize - 1).unwrap_or("");
        assert!(
            declared.contains(name.as_str()),
            "[{config}] {path} at {file}:{line}: {declared}"
        );
    }
    // The same file for the same field in both flavours.
    let per_field = |config: &str| -> std::collections::BTreeMap<&str, &str> {
        files
            .iter()
            .filter(|((c, _), _)| c == config)
            .map(|((_, path), (file, ..))| (path.as_str(), file.as_str()))
            .collect()
    };
    let (on_cloud, on_rt) = (per_field("cloud"), per_field("rt"));
    let both: Vec<_> = on_cloud.keys().filter(|p| on_rt.contains_key(*p)).collect();
    assert!(both.len() > 5, "{on_cloud:?} {on_rt:?}");
    for p in both {
        assert_eq!(on_cloud[p], on_rt[p], "{p}");
    }
    // SARIF's artifact locations are those paths.
    let sarif = check(&[], "sarif");
    let uris: HashSet<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| {
            r["locations"]
                .as_array()
                .unwrap()
                .iter()
                .chain(r["relatedLocations"].as_array().into_iter().flatten())
        })
        .map(|l| {
            l["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    let paths: HashSet<&str> = files.values().map(|(f, ..)| f.as_str()).collect();
    assert!(!uris.is_empty());
    assert!(uris.is_subset(&paths), "{uris:?} {paths:?}");
    // As recorded, rt's paths carry the build's prefix, and naming that
    // prefix as the root gives the detected paths back; cloud's do not
    // change.
    let recorded = decl_files(&check(&["--source-root", "none"], "json"));
    assert_eq!(
        recorded.keys().collect::<Vec<_>>(),
        files.keys().collect::<Vec<_>>()
    );
    let mut prefixes = HashSet::new();
    for (key, (file, ..)) in &recorded {
        let detected = &files[key].0;
        if key.0 == "cloud" {
            assert_eq!(file, detected);
        } else {
            let prefix = file.strip_suffix(detected.as_str()).unwrap();
            assert!(prefix.ends_with('/'), "{file} {detected}");
            prefixes.insert(prefix.to_owned());
        }
    }
    assert_eq!(prefixes.len(), 1, "{prefixes:?}");
    let prefix = prefixes.into_iter().next().unwrap();
    assert_eq!(
        decl_files(&check(&["--source-root", &prefix], "json")),
        files
    );
    eprintln!(
        "source root: rt records {prefix}, {} paths checked in the tree",
        files.len()
    );
}

#[test]
#[ignore = "needs a 6.1 and a 6.12 kernel: .ci/run sets CACHELINT_VMLINUX and CACHELINT_VMLINUX_OLD"]
fn the_rules_find_lru_gen_folio_under_its_6_1_name() {
    let new = vmlinux();
    let old = PathBuf::from(
        std::env::var_os("CACHELINT_VMLINUX_OLD")
            .expect("CACHELINT_VMLINUX_OLD must name a 6.1 kernel (.ci/run)"),
    );
    let rules = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mm-lru.toml");
    let out = run::check(
        &run::check_options(&[rules], &[("old", &old), ("new", &new)]),
        Format::Json,
    )
    .unwrap();
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    for (config, k) in [("old", &old), ("new", &new)] {
        let ks = k.to_str().unwrap();
        // The name the kernel has, from pahole: one of the two.
        let has = |ty: &str| {
            let out = Command::new("pahole")
                .args(["-F", "dwarf", "-C", ty, ks])
                .output()
                .expect("pahole (package dwarves) must be installed");
            String::from_utf8_lossy(&out.stdout).contains(&format!("struct {ty} {{"))
        };
        let names: Vec<&str> = ["lru_gen_folio", "lru_gen_struct"]
            .into_iter()
            .filter(|n| has(n))
            .collect();
        assert_eq!(names.len(), 1, "{config}: {names:?}");
        let ty = names[0];
        // refaulted[] and enabled of that struct, where pahole puts them.
        let base = pahole_offset(ks, "mem_cgroup_per_node", "lruvec")
            + pahole_offset(ks, "lruvec", "lrugen");
        let refaulted = base + pahole_offset(ks, ty, "refaulted");
        let enabled = base + pahole_offset(ks, ty, "enabled");
        let line = enabled / 64;
        let found = report["findings"].as_array().unwrap().iter().find(|f| {
            f["config"] == config
                && f["root"] == "mem_cgroup_per_node"
                && f["kind"] == "false-sharing"
                && f["a"]["name"] == "refaulted"
                && f["b"]["name"] == "enabled"
        });
        // enabled directly follows refaulted[] in both versions, and
        // shares its last line (the rule is checked through that finding).
        let shares = (refaulted / 64..enabled.div_ceil(64)).contains(&line);
        assert!(shares, "{config}: refaulted {refaulted}, enabled {enabled}");
        let f = found.unwrap_or_else(|| panic!("{config}: no refaulted/enabled finding"));
        assert_eq!(f["a"]["offset"], refaulted);
        assert_eq!(f["b"]["offset"], enabled);
        let why = f["a"]["why"].as_str().unwrap();
        assert!(
            why.starts_with(&format!("rule of {ty} at ")),
            "{config}: {why}"
        );
        eprintln!(
            "{config}: {ty}.refaulted at {refaulted} shares line {line} with enabled at {enabled}"
        );
    }
}

#[test]
#[ignore = "needs a real kernel and its source tree: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn keep_footprint_suggests_no_context_more_lines_than_paholes_offsets_give_as_shipped() {
    // tcp_sock as netdev laid it out for its contexts: with
    // --keep-footprint no context may touch more lines of it than as
    // shipped. Shipped lines come from pahole's offsets, suggested ones
    // from `offsets --plan` of the written plan (the plan engine, checked
    // against the compiler by the module oracle), for the fields the
    // table gives each context.
    let k = vmlinux();
    let k = k.to_str().unwrap();
    let table = kernel_source().join("Documentation/networking/net_cachelines/tcp_sock.rst");
    let table = table.to_str().unwrap();
    let dir = std::env::temp_dir().join(format!("cachelint-keep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("tcp_sock.plan.toml");
    let plan = plan.to_str().unwrap();
    let (code, _, err) = common::cachelint(&[
        "suggest",
        "--rules",
        table,
        "--keep-footprint",
        "--no-grow",
        "--plan-out",
        plan,
        k,
        "tcp_sock",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) =
        common::cachelint(&["footprint", "--rules", table, k, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let extents = pahole_extents(&pahole(&["-C", "tcp_sock", k]));
    let mut contexts = 0;
    for c in json["builds"][0]["types"][0]["contexts"]
        .as_array()
        .unwrap()
    {
        let fields: Vec<&str> = c["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        let shipped: Vec<(u64, u64)> = fields
            .iter()
            .map(|f| {
                let (o, s) = extents[*f];
                (o, o + s)
            })
            .collect();
        let paths: Vec<String> = fields.iter().map(|f| format!("tcp_sock.{f}")).collect();
        let mut args = vec!["offsets", "--plan", plan, "--format", "json", k];
        args.extend(paths.iter().map(String::as_str));
        let (code, out, err) = common::cachelint(&args);
        assert_eq!(code, 0, "{err}");
        let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
        let planned: Vec<(u64, u64)> = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let b = &r["builds"][0];
                let o = b["offset"].as_u64().unwrap();
                (o, o + b["size"].as_u64().unwrap())
            })
            .collect();
        let (_, before) = common::bytes_and_lines(shipped, 64);
        let (_, after) = common::bytes_and_lines(planned, 64);
        let context = c["context"].as_str().unwrap();
        assert!(
            after.len() <= before.len(),
            "{context}: {} lines suggested, {} shipped",
            after.len(),
            before.len()
        );
        eprintln!(
            "tcp_sock {context}: {} lines shipped, {} suggested with --keep-footprint",
            before.len(),
            after.len()
        );
        contexts += 1;
    }
    assert!(contexts >= 2);
    // No larger: the struct's size under the plan is at most pahole's.
    let (code, out, err) =
        common::cachelint(&["offsets", "--plan", plan, "--format", "json", k, "tcp_sock"]);
    assert_eq!(code, 0, "{err}");
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    let size = rows[0]["builds"][0]["size"].as_u64().unwrap();
    let shipped = pahole(&["-C", "tcp_sock", k]);
    let shipped: u64 = shipped
        .split("/* size: ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.trim().parse().ok())
        .expect("pahole prints the size");
    assert!(
        size <= shipped,
        "tcp_sock is {size} bytes under the plan, {shipped} shipped"
    );
    eprintln!("tcp_sock: {shipped} bytes shipped, {size} suggested");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs the cloud and rt kernels: .ci/run sets CACHELINT_VMLINUX and CACHELINT_PLAN_ORACLE"]
fn an_order_one_config_likes_better_is_reported_with_what_check_finds_in_it() {
    // --no-grow leaves findings on cloud and rt together, so each build
    // climbs alone from the suggestion. Every figure reported for an order
    // a build likes better, and for the suggestion beside it, is what
    // check --plan finds in that order's plan, pair by pair.
    let builds = [vmlinux(), rt_vmlinux()];
    let builds: Vec<&str> = builds.iter().map(|b| b.to_str().unwrap()).collect();
    let rules = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mm-lru.toml");
    let rules = rules.to_str().unwrap();
    let dir = std::env::temp_dir().join(format!("cachelint-alone-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let suggested = dir.join("suggested.plan.toml");
    let mut args = vec!["suggest", "--rules", rules, "--no-grow", "--format", "json"];
    args.extend(&builds);
    args.extend(["lru_gen_folio", "--plan-out", suggested.to_str().unwrap()]);
    let (code, out, err) = common::cachelint(&args);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    // (errors, warnings) pairs per config that check finds under a plan.
    let pairs = |plan: &std::path::Path| {
        let mut args = vec!["check", "--rules", rules, "--format", "json", "--plan"];
        args.push(plan.to_str().unwrap());
        args.extend(&builds);
        let (code, out, err) = common::cachelint(&args);
        assert!(code == 0 || code == 1, "{err}");
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        let mut counts = std::collections::HashMap::<String, (u64, u64)>::new();
        for f in json["findings"].as_array().unwrap() {
            let c = counts
                .entry(f["config"].as_str().unwrap().to_owned())
                .or_default();
            match f["severity"].as_str().unwrap() {
                "error" => c.0 += 1,
                "warning" => c.1 += 1,
                _ => {}
            }
        }
        counts
    };
    let ours = pairs(&suggested);
    let alone = report["alone"].as_array().unwrap();
    assert!(
        !alone.is_empty(),
        "no build prefers an order of its own: {out}"
    );
    for (i, a) in alone.iter().enumerate() {
        let plan = dir.join(format!("alone-{i}.plan.toml"));
        std::fs::write(&plan, a["plan"].as_str().unwrap()).unwrap();
        let theirs = pairs(&plan);
        for b in a["builds"].as_array().unwrap() {
            let config = b["config"].as_str().unwrap();
            let (e0, w0) = ours.get(config).copied().unwrap_or_default();
            let (e1, w1) = theirs.get(config).copied().unwrap_or_default();
            assert_eq!(b["errors"], serde_json::json!([e0, e1]), "{config}");
            assert_eq!(b["warnings"], serde_json::json!([w0, w1]), "{config}");
        }
        // The build it was found on is better off with it.
        let home = a["config"].as_str().unwrap();
        let (e0, w0) = ours.get(home).copied().unwrap_or_default();
        let (e1, w1) = theirs.get(home).copied().unwrap_or_default();
        assert!(
            e1 + w1 < e0 + w0,
            "{home}: {e1}+{w1} not fewer than {e0}+{w0}"
        );
        println!("{home} alone: {e0}/{w0} -> {e1}/{w1} error/warning pairs there");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
#[ignore = "needs real kernels, modules and the source tree: .ci/run sets CACHELINT_PLAN_ORACLE and CACHELINT_KERNEL_SOURCE"]
fn the_suggested_tcp_sock_order_equals_the_patched_module() {
    // tcp_sock (144 members, climbed inside its context order's groups)
    // with --keep-footprint on the oracle kernels: its header patch applied
    // to include/linux/tcp.h, the tcp oracle module must have every offset
    // and size offsetof --plan gives, and no context may touch more lines
    // than shipped by the module's own offsets (the table's fields).
    let kernels: Vec<PathBuf> = plan_oracles().into_iter().map(|(v, _)| v).collect();
    let dir = std::env::temp_dir().join(format!("cachelint-tcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let table = kernel_source().join("Documentation/networking/net_cachelines/tcp_sock.rst");
    let (_, patch, plan) = suggest_patch(&dir, &table, &kernels, "tcp_sock", &["--keep-footprint"]);
    for vmlinux in &kernels {
        assert_module_truth(vmlinux, &oracle_module("tcp", vmlinux, &[]), None);
        let module = oracle_module("tcp", vmlinux, &["suggested", patch.to_str().unwrap()]);
        let rows = assert_module_truth(vmlinux, &module, Some(&plan));
        println!(
            "{}: suggested tcp_sock, {rows} rows equal to the module built with its patch",
            vmlinux.display()
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// `suggest` without rules of `types` in `vmlinux`, the plans written to
/// `plan`: the reports (JSON array).
fn packing_suggestions(vmlinux: &std::path::Path, types: &[&str], plan: &std::path::Path) -> Value {
    let mut args = vec![
        "suggest",
        "--format",
        "json",
        "--plan-out",
        plan.to_str().unwrap(),
        vmlinux.to_str().unwrap(),
    ];
    args.extend(types);
    let (code, out, err) = common::cachelint(&args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
#[ignore = "needs a real kernel: .ci/run sets CACHELINT_VMLINUX (scripts/fetch-kernel.sh)"]
fn packing_only_suggest_is_the_size_of_its_plan_and_never_larger() {
    // Without rules, on a few structs with holes (task_struct and
    // mm_struct: too many members to climb; page_pool: group markers;
    // rcu_data and sk_buff): the compiled size is pahole's, the suggested
    // size is offsetof --plan of the written plan file (laid out through
    // the loader), and it never exceeds the compiled one.
    let k = vmlinux();
    let types = [
        "task_struct",
        "mm_struct",
        "page_pool",
        "rcu_data",
        "sk_buff",
    ];
    let plan = std::env::temp_dir().join(format!("cachelint-packing-{}.toml", std::process::id()));
    let reports = packing_suggestions(&k, &types, &plan);
    let theirs = pahole(&["-F", "dwarf", "--sizes", k.to_str().unwrap()]);
    let pahole_size = |ty: &str| -> u64 {
        theirs
            .lines()
            .find_map(|l| {
                let mut f = l.split('\t');
                (f.next() == Some(ty)).then(|| f.next().unwrap().parse().unwrap())
            })
            .unwrap_or_else(|| panic!("pahole --sizes has no {ty}"))
    };
    let names: Vec<String> = types.iter().map(|t| t.to_string()).collect();
    let planned = run::offsetof_planned(&k, &names, &plan).unwrap();
    let mut shrunk = 0;
    for ((ty, report), planned) in types.iter().zip(reports.as_array().unwrap()).zip(&planned) {
        assert_eq!(report["name"], *ty);
        let bytes = &report["builds"][0]["sizes"][0]["bytes"];
        let (compiled, suggested) = (bytes[0].as_u64().unwrap(), bytes[1].as_u64().unwrap());
        assert_eq!(compiled, pahole_size(ty), "{ty}: compiled");
        assert_eq!(
            suggested,
            planned["size"].as_u64().unwrap(),
            "{ty}: planned"
        );
        assert!(suggested <= compiled, "{ty}: {compiled} -> {suggested}");
        shrunk += usize::from(suggested < compiled);
    }
    // task_struct has 19 holes (pahole --sizes): packing saves something
    // on at least one of them.
    assert!(shrunk > 0);
    let _ = std::fs::remove_file(&plan);
}

/// Packing suggestions the compiler lays out as planned: on each oracle
/// kernel, `suggest` without rules for structs of every kind the plan
/// engine handles (pci_dev: bitfield runs sharing units with their
/// neighbours; task_struct: nested anonymous structs, aligned members;
/// page_pool: kernel groups; mm_struct, sk_buff), and each suggested
/// layout, as `layout --macros --plan` prints it in C, built into a module
/// against that kernel's headers by scripts/c-oracle.sh, which compares
/// every member's offset (bits too) and the size the compiler gave.
#[test]
#[ignore = "needs real kernels and their headers: .ci/run sets CACHELINT_PLAN_ORACLE (scripts/kmod-oracle.sh)"]
fn packing_suggestions_compile_to_the_layouts_they_predict() {
    let types = [
        ("pci_dev", "linux/pci.h"),
        ("task_struct", "linux/sched.h"),
        ("page_pool", "net/page_pool/types.h"),
        ("mm_struct", "linux/mm_types.h"),
        ("sk_buff", "linux/skbuff.h"),
    ];
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/c-oracle.sh");
    for (vmlinux, _) in plan_oracles() {
        let plan =
            std::env::temp_dir().join(format!("cachelint-c-oracle-{}.toml", std::process::id()));
        let names: Vec<&str> = types.iter().map(|(t, _)| *t).collect();
        let reports = packing_suggestions(&vmlinux, &names, &plan);
        for ((ty, header), report) in types.iter().zip(reports.as_array().unwrap()) {
            let built = Command::new(&script)
                .env("CACHELINT", env!("CARGO_BIN_EXE_cachelint"))
                .args([
                    vmlinux.to_str().unwrap(),
                    ty,
                    plan.to_str().unwrap(),
                    header,
                ])
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&built.stdout);
            assert!(
                built.status.success(),
                "{}: {ty}: {said}{}",
                vmlinux.display(),
                String::from_utf8_lossy(&built.stderr)
            );
            let bytes = &report["builds"][0]["sizes"][0]["bytes"];
            assert!(
                said.contains(&format!("size {}, as planned", bytes[1])),
                "{said}"
            );
            println!("{}: {}", vmlinux.display(), said.trim());
        }
        // pahole 1.31 --reorganize's valid claim on amd64's pci_dev
        // (scripts/pahole-peer.sh, 2026-12-01): 2648 -> 2616 bytes.
        if vmlinux.to_str().unwrap().ends_with("deb12-amd64") {
            let bytes = &reports[0]["builds"][0]["sizes"][0]["bytes"];
            assert_eq!(bytes[0], 2648);
            assert!(bytes[1].as_u64().unwrap() <= 2616, "pci_dev: {bytes}");
        }
        let _ = std::fs::remove_file(&plan);
    }
}

#[test]
#[ignore = "needs a 6.1 and a 6.12 kernel: .ci/run sets CACHELINT_VMLINUX and CACHELINT_VMLINUX_OLD"]
fn suggest_finds_the_struct_under_its_6_1_alias_and_refuses_builds_that_disagree() {
    // examples/mm-lru.toml calls the struct lru_gen_folio, with the alias
    // lru_gen_struct: the 6.1 kernel has only the latter (pahole says so),
    // and the plan suggest writes for it must name it so, for --plan.
    let new = vmlinux();
    let old = PathBuf::from(
        std::env::var_os("CACHELINT_VMLINUX_OLD")
            .expect("CACHELINT_VMLINUX_OLD must name a 6.1 kernel (.ci/run)"),
    );
    let olds = old.to_str().unwrap();
    let has = |ty: &str| pahole(&["-C", ty, olds]).contains(&format!("struct {ty} {{"));
    assert!(has("lru_gen_struct") && !has("lru_gen_folio"));
    let rules = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mm-lru.toml");
    let rules = rules.to_str().unwrap();
    let dir = std::env::temp_dir().join(format!("cachelint-alias-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("old.plan.toml");
    let (code, _, err) = common::cachelint(&[
        "suggest",
        "--rules",
        rules,
        olds,
        "lru_gen_folio",
        "--plan-out",
        plan.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&plan).unwrap();
    assert!(text.starts_with("[lru_gen_struct]\n"), "{text}");
    let (code, out, err) = common::cachelint(&[
        "offsetof",
        "--plan",
        plan.to_str().unwrap(),
        olds,
        "lru_gen_struct.refaulted",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("lru_gen_struct.refaulted"), "{out}");
    // 6.1 and 6.12 together: one plan cannot name both.
    let (code, _, err) = common::cachelint(&[
        "suggest",
        "--rules",
        rules,
        olds,
        new.to_str().unwrap(),
        "lru_gen_folio",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("lru_gen_struct in") && err.contains("lru_gen_folio in"),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}
