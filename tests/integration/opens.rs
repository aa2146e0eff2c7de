//! A run opens each build file once and each rules file once, whatever
//! the command asks of them: `suggest --diagram --asserts` over three
//! builds (a search, a drawing and a check function from one run) is the
//! case the run layer was made for. Counted from the system calls, with
//! `strace`, which `.ci/run` installs.

use std::collections::HashMap;
use std::process::Command;

use crate::common::fixture;

#[test]
#[ignore = "needs strace (apt-get install strace); .ci/run runs it with --ignored"]
fn suggest_with_diagram_and_asserts_opens_each_build_and_the_rules_once() {
    let dir = std::env::temp_dir().join(format!("cachelint-opens-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("openat.txt");
    // The mm rules make the suggestion an aligned group, so the check
    // function has asserts to write.
    let rules = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mm-lru.toml");
    let builds = ["gcc-dwarf5-base", "gcc-dwarf5-rt", "gcc-dwarf5-stats"].map(fixture);
    let labelled: Vec<String> = ["a", "b", "c"]
        .iter()
        .zip(&builds)
        .map(|(l, b)| format!("{l}={}", b.display()))
        .collect();
    let status = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=openat", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_cachelint"))
        .args(["suggest", "--rules"])
        .arg(&rules)
        .args(&labelled)
        .args(["lru_gen_folio", "--diagram", "--asserts"])
        .output()
        .expect("strace runs (apt-get install strace)");
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let text = std::fs::read_to_string(&trace).unwrap();
    // Every successful openat, by the path it opened.
    let mut opened: HashMap<String, usize> = HashMap::new();
    for line in text.lines().filter(|l| !l.contains("= -1")) {
        if let Some(path) = line.split('"').nth(1) {
            *opened.entry(path.to_owned()).or_default() += 1;
        }
    }
    let count = |p: &std::path::Path| opened.get(p.to_str().unwrap()).copied().unwrap_or(0);
    for build in &builds {
        assert_eq!(count(build), 1, "{} opened: {text}", build.display());
    }
    assert_eq!(count(&rules), 1, "{} opened: {text}", rules.display());
    // The drawing (the compiled build against the suggestion) and the
    // check function were made, from the same run.
    let out = String::from_utf8_lossy(&status.stdout);
    assert!(out.contains("a-planned"), "{out}");
    assert!(out.contains("CACHELINE_ASSERT_GROUP_SIZE"), "{out}");
}
