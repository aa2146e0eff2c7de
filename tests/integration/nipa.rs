//! The NIPA per-patch test in `contrib/nipa/cachelint` as NIPA reads and
//! runs it: `info.json`'s `"run"` is a list (NIPA's `core/test.py` does
//! `self.info["run"][0]`), and every exit of cachelint but a review's
//! 0, 1 and 2 (a panic, a kill, a missing binary) fails the test. The
//! review itself, through the script, is tests/integration/variants.rs's.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn test_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/nipa/cachelint")
}

#[test]
fn info_json_names_its_command_as_a_list_of_an_executable_script() {
    let text = std::fs::read_to_string(test_dir().join("info.json")).unwrap();
    let info: serde_json::Value = serde_json::from_str(&text).unwrap();
    let run = info["run"]
        .as_array()
        .unwrap_or_else(|| panic!("\"run\" must be a list (argv), as NIPA indexes it: {text}"));
    let script = test_dir().join(run[0].as_str().unwrap());
    let mode = std::fs::metadata(&script).unwrap().permissions().mode();
    assert!(mode & 0o111 != 0, "{} is not executable", script.display());
}

/// Runs the NIPA script with `cachelint` standing in for cachelint; its
/// exit code and the summary it writes to `DESC_FD`.
fn nipa_with(dir: &Path, cachelint: &Path) -> (Option<i32>, String) {
    nipa_with_env(dir, cachelint, &[])
}

/// As [`nipa_with`], with more environment variables.
fn nipa_with_env(dir: &Path, cachelint: &Path, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let results = dir.join("results");
    std::fs::create_dir_all(&results).unwrap();
    let desc = dir.join("desc");
    let status = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "bash {} 3>{}",
            test_dir().join("cachelint.sh").display(),
            desc.display()
        ))
        .current_dir(dir)
        .env("CACHELINT", cachelint)
        .env("RESULTS_DIR", &results)
        .env("DESC_FD", "3")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        status.status.code(),
        std::fs::read_to_string(&desc).unwrap_or_default(),
    )
}

/// A directory of its own for one test, made anew, and a maker of
/// stand-ins for cachelint in it.
fn stand_ins(test: &str) -> (PathBuf, impl Fn(&str, &str) -> PathBuf) {
    let dir = std::env::temp_dir().join(format!("cachelint-nipa-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let at = dir.clone();
    let stand_in = move |name: &str, body: &str| {
        let path = at.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    };
    (dir, stand_in)
}

#[test]
fn pairs_of_drafted_rules_warn_only_as_errors_and_those_of_given_rules_always() {
    let (dir, stand_in) = stand_ins("pairs");
    let review = |introduced: usize, errors: usize| {
        format!(
            "echo 'cachelint: review: 1 struct(s) on 4 variant(s): 0 kernel assert(s) fail at \
             HEAD, 0 struct(s) take more cachelines, {introduced} pair(s) of fields introduced \
             ({errors} error(s)), 0 needless store(s) added'; exit 0"
        )
    };
    let warnings = stand_in("warnings", &review(92, 0));
    let errors = stand_in("errors", &review(92, 1));
    // No rules given: cachelint drafted them; their 92 warnings are listed
    // in the review, not warned on.
    let (code, desc) = nipa_with(&dir, &warnings);
    assert_eq!(code, Some(0), "{desc}");
    assert!(
        desc.contains("92 pair(s) of fields introduced (0 error(s))"),
        "{desc}"
    );
    let (code, desc) = nipa_with(&dir, &errors);
    assert_eq!(code, Some(250), "{desc}");
    // Rules a maintainer gave: any pair they make warns.
    let rules = [("CACHELINT_REVIEW_RULES", "net_cachelines/tcp_sock.rst")];
    let (code, desc) = nipa_with_env(&dir, &warnings, &rules);
    assert_eq!(code, Some(250), "{desc}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_crash_a_kill_a_missing_binary_or_no_summary_fails_the_test() {
    let (dir, stand_in) = stand_ins("exits");
    // As Rust prints a panic: the place, the message on the next line,
    // then a note on the backtrace (the last line, which says nothing).
    let panic = stand_in(
        "panics",
        "echo 'cachelint: review: reading the tree' >&2
         echo \"thread 'main' panicked at src/layout.rs:12:5:\" >&2
         echo 'index out of bounds: the len is 3 but the index is 7' >&2
         echo 'note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace' >&2
         exit 101",
    );
    let (code, desc) = nipa_with(&dir, &panic);
    assert_eq!(code, Some(1), "{desc}");
    assert_eq!(
        desc,
        "cachelint review crashed (exit 101): thread 'main' panicked at src/layout.rs:12:5: \
         index out of bounds: the len is 3 but the index is 7\n"
    );
    // A crash that is no panic and no signal: stderr's last line that is
    // not a note.
    let odd = stand_in(
        "odd",
        "echo 'memory allocation of 4096 bytes failed' >&2
         echo 'note: something else' >&2
         exit 3",
    );
    let (code, desc) = nipa_with(&dir, &odd);
    assert_eq!(code, Some(1), "{desc}");
    assert_eq!(
        desc,
        "cachelint review crashed (exit 3): memory allocation of 4096 bytes failed\n"
    );
    // An OOM kill: SIGKILL, 128 + 9.
    let killed = stand_in(
        "killed",
        "echo 'cachelint: review: reading the tree' >&2; kill -9 $$",
    );
    let (code, desc) = nipa_with(&dir, &killed);
    assert_eq!(code, Some(1), "{desc}");
    assert_eq!(
        desc,
        "cachelint review crashed (exit 137): killed by signal 9\n"
    );
    let (code, desc) = nipa_with(&dir, &dir.join("no-such-cachelint"));
    assert_eq!(code, Some(1), "{desc}");
    assert!(desc.contains("not found"), "{desc}");
    // Exit 0 without a review's summary is not a review.
    let silent = stand_in("silent", "exit 0");
    let (code, desc) = nipa_with(&dir, &silent);
    assert_eq!(code, Some(1), "{desc}");
    assert_eq!(desc, "cachelint review gave no summary (exit 0)\n");
    let _ = std::fs::remove_dir_all(&dir);
}
