//! The DWARF view against pahole's: `sizes` line for line, member
//! offsets of a sample, `--expand`, alignment attributes, and `layout`'s
//! text line by line after the documented normalisation.

use std::collections::HashSet;

use cachelint::commands::Source;

use crate::common::pahole_text::{self, pahole_blocks};
use crate::common::run::{self, Format};
use crate::{pahole, pahole_members, struct_names, vmlinux};

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
