//! The real-kernel tier: every test is ignored by a plain `cargo test` and
//! runs with `--ignored` when CACHELINT_VMLINUX names a vmlinux with full
//! DWARF (scripts/fetch-kernel.sh prints one) and pahole is installed.
//! pahole is the reference here; `.ci/run` sets both up.
//!
//! One module per command; the helpers they share are here: the kernels
//! and the source tree the environment names, pahole and the readers of
//! its text, and the module oracle.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../common/mod.rs"]
mod common;

mod asserts;
mod audit;
mod btf;
mod check;
mod evidence;
mod footprint;
mod history;
mod index;
mod layout;
mod plan;
mod suggest;
mod variant;

use cachelint::commands::Source;
use common::pahole_text::strip_attributes;
use common::run;

/// The kernel under test. These tests are `#[ignore]`d, so a plain
/// `cargo test` lists them as ignored; run on purpose (`--ignored`)
/// without a kernel they fail rather than pass having checked nothing.
fn vmlinux() -> PathBuf {
    env_path(
        "CACHELINT_VMLINUX",
        "a vmlinux with DWARF (scripts/fetch-kernel.sh)",
    )
}

/// The path variable `name` names, which must be set (.ci/run sets it):
/// `what` it must name, for the message when it is not.
fn env_path(name: &str, what: &str) -> PathBuf {
    std::env::var_os(name)
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            panic!("{name} must name {what} (see .ci/run; a failed fetch leaves it empty)")
        })
}

/// `examples/mm-lru.toml`: the mm thread's rules as a kernel user writes
/// them.
fn mm_lru_rules() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mm-lru.toml")
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

/// Offset of a direct member, from `pahole -C TYPE`.
fn pahole_offset(k: &str, ty: &str, member: &str) -> u64 {
    let text = pahole(&["-F", "dwarf", "-C", ty, k]);
    pahole_members(&text, Some(1))
        .into_iter()
        .find(|(name, _)| name == member)
        .unwrap_or_else(|| panic!("pahole -C {ty} has no {member}"))
        .1
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

/// The kernel source tree of the vmlinux (scripts/fetch-source.sh), for
/// its net_cachelines tables.
fn kernel_source() -> PathBuf {
    env_path(
        "CACHELINT_KERNEL_SOURCE",
        "the 6.12 source tree (scripts/fetch-source.sh)",
    )
}

/// A git tree at `tree` of `source` (hard links: a file a test changes is
/// written anew, never through a link) whose one commit, "base", holds
/// `files` (those a review reads history of); and a `git` in it.
fn git_tree_of(source: &Path, tree: &Path, files: &[&str]) -> impl Fn(&[&str]) + use<> {
    let _ = std::fs::remove_dir_all(tree);
    crate::common::succeed(
        std::process::Command::new("cp")
            .arg("-al")
            .arg(source)
            .arg(tree),
        "cp",
        "a linked copy of the source tree",
    );
    let at = tree.to_owned();
    let git = move |args: &[&str]| {
        crate::common::succeed(
            std::process::Command::new("git")
                .arg("-C")
                .arg(&at)
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args),
            "git",
            "the review's repository",
        )
    };
    let _ = std::fs::remove_file(tree.join(".extracted"));
    git(&["init", "-q"]);
    git(&[&["add", "-f"][..], files].concat());
    git(&["commit", "-qm", "base"]);
    git
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

/// The rt flavour among the plan oracle's kernels: Debian builds it from
/// a tree under `debian/build/source_rt/`, which its DWARF records.
fn rt_vmlinux() -> PathBuf {
    plan_oracles()
        .into_iter()
        .map(|(vmlinux, _)| vmlinux)
        .find(|v| v.to_string_lossy().contains("-rt-"))
        .expect("CACHELINT_PLAN_ORACLE must hold the rt-amd64 kernel (.ci/run)")
}
