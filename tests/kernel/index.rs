//! The on-disk name index: a lookup from it prints what a scan prints.

use std::collections::HashSet;

use cachelint::commands::Source;

use crate::common::{self, run};
use crate::vmlinux;

/// Runs the binary with `CACHELINT_CACHE_DIR` set: exit code and both
/// outputs.
fn cachelint_cached(cache: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    common::cachelint_with_env(&[("CACHELINT_CACHE_DIR", cache.as_os_str())], args)
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
