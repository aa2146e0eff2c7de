//! Variants on a stand-in kernel tree (fixtures/variant-tree, whose
//! Makefile does what cachelint asks of kbuild with the host compiler and
//! logs each step): labels, option edits, the cache, the patch, the tree
//! left as it was, and the errors. The sizes expected are worked out by
//! hand from the stand-in's headers (their comments say how); the real
//! kbuild and Debian's kernels are the kernel tier's (tests/kernel/variant.rs).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::common::{cachelint_with_env, copy_tree, fixture, tree_snapshot};

/// A private copy of the stand-in tree and a cache, for one test.
struct Setup {
    dir: PathBuf,
    tree: PathBuf,
    cache: PathBuf,
}

impl Setup {
    fn new(test: &str) -> Setup {
        let dir =
            std::env::temp_dir().join(format!("cachelint-variants-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let tree = dir.join("tree");
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        copy_tree(&here.join("fixtures/variant-tree"), &tree);
        Setup {
            cache: dir.join("cache"),
            tree,
            dir,
        }
    }

    /// Writes the variant file `name` (its `tree` first) and gives its path.
    fn variants(&self, name: &str, body: &str) -> PathBuf {
        let path = self.dir.join(name);
        let text = format!("tree = \"{}\"\n{body}", self.tree.display());
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Runs cachelint with the variants and the indexes in the test's
    /// cache (`review` indexes the tree's copies: the user's cache
    /// would keep one index per test run).
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let index = self.cache.join("index");
        let env = [
            ("CACHELINT_VARIANT_DIR", self.cache.as_os_str()),
            ("CACHELINT_CACHE_DIR", index.as_os_str()),
        ];
        cachelint_with_env(&env, args)
    }

    /// Makes the tree a git repository with one commit, "base".
    fn repository(&self) {
        git(&self.tree, &["init", "-q"]);
        git(&self.tree, &["add", "-A"]);
        git(&self.tree, &["commit", "-qm", "base"]);
    }

    /// Replaces `from` (which must be there) by `to` in the tree's file
    /// `rel`.
    fn edit(&self, rel: &str, from: &str, to: &str) {
        let path = self.tree.join(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{rel} has no {from:?}");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    }

    /// The steps the stand-in's make ran, over every prepared directory.
    fn steps(&self) -> Vec<String> {
        let mut steps = Vec::new();
        let Ok(dirs) = std::fs::read_dir(self.cache.join("prepared")) else {
            return steps;
        };
        let mut logs: Vec<PathBuf> = dirs.flatten().map(|d| d.path().join("make.log")).collect();
        logs.sort();
        for log in logs {
            if let Ok(text) = std::fs::read_to_string(log) {
                steps.extend(text.lines().map(str::to_owned));
            }
        }
        steps
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The `size:` of struct `name` in `layout` text.
fn size_of(layout: &str, name: &str) -> u64 {
    let block = layout
        .split(&format!("struct {name} {{"))
        .nth(1)
        .unwrap_or_else(|| panic!("no struct {name} in\n{layout}"));
    let size = block.split("/* size: ").nth(1).unwrap();
    size.split(',').next().unwrap().parse().unwrap()
}

#[test]
fn variants_are_builds_labelled_by_name_and_their_edits_change_the_layout() {
    let s = Setup::new("labels");
    let file = s.variants(
        "v.toml",
        "[[variant]]\nname = \"up\"\nset = [\"SMP=n\"]\n[[variant]]\nname = \"smp\"\n\
         [matrix]\nstats = [\"LRU_GEN_STATS=y\"]\n",
    );
    let file = file.to_str().unwrap();
    // counters: hot (8), per_cpu (8) with SMP, evicted[NR_HIST] (8 each,
    // NR_HIST 4 with LRU_GEN_STATS, else 1). defconfig sets SMP.
    for (variant, size) in [("up", 16), ("up+stats", 40), ("smp", 24), ("smp+stats", 48)] {
        let (code, out, err) = s.run(&["layout", &format!("{file}#{variant}"), "counters"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(size_of(&out, "counters"), size, "{variant}:\n{out}");
    }
    let (code, out, err) = s.run(&[
        "diff",
        &format!("{file}#smp"),
        &format!("{file}#smp+stats"),
        "counters",
    ]);
    assert_ne!(code, 2, "{err}");
    assert!(out.contains("24") && out.contains("48"), "{out}");
    // Several variants of one file in a command that takes many builds:
    // labelled by their names.
    let rules = s.dir.join("rules.toml");
    std::fs::write(
        &rules,
        "[counters]\nhot = \"hot-read\"\nevicted = \"lockless-write\"\n",
    )
    .unwrap();
    let (code, out, err) = s.run(&["check", "--rules", rules.to_str().unwrap(), file]);
    assert!(code == 0 || code == 1, "{err}");
    for label in ["[up]", "[up+stats]", "[smp]", "[smp+stats]"] {
        assert!(
            out.contains(label) || err.contains(label),
            "{label}:\n{out}\n{err}"
        );
    }
    // NAME=FILE labels a file's variants NAME.VARIANT.
    let (code, out, err) = s.run(&[
        "check",
        "--rules",
        rules.to_str().unwrap(),
        &format!("x={file}"),
    ]);
    assert!(code == 0 || code == 1, "{err}");
    assert!(
        out.contains("[x.up+stats]") || err.contains("[x.up+stats]"),
        "{out}\n{err}"
    );
}

#[test]
fn file_hash_name_is_a_build_to_every_command_that_takes_builds_first() {
    // In the variant file's directory, FILE#NAME has no '/': suggest and
    // draft refused it as "not a file" while layout and offsets took it.
    let s = Setup::new("hash-name");
    s.variants("v.toml", "[[variant]]\nname = \"smp\"\n");
    std::fs::write(s.dir.join("r.toml"), "[counters]\nhot = \"hot-read\"\n").unwrap();
    let here = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cachelint"))
            .args(args)
            .current_dir(&s.dir)
            .env("CACHELINT_VARIANT_DIR", &s.cache)
            .env("CACHELINT_CACHE_DIR", s.cache.join("index"))
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for args in [
        &["layout", "v.toml#smp", "counters"][..],
        &["offsets", "v.toml#smp", "counters.hot"],
        &["suggest", "--rules", "r.toml", "v.toml#smp", "counters"],
        &["draft", "v.toml#smp", "counters"],
    ] {
        let (code, out, err) = here(args);
        assert!(code == Some(0) || code == Some(1), "{args:?}: {out}{err}");
        assert!(out.contains("counters"), "{args:?}: {out}{err}");
    }
}

#[test]
fn a_slow_step_is_told_off_a_terminal_with_its_time() {
    let s = Setup::new("slow");
    let file = s.variants("v.toml", "[[variant]]\nname = \"smp\"\n");
    // The stand-in's defconfig sleeps 1.2 s; its other steps take
    // milliseconds. The test's stderr is a pipe, as a CI log is.
    let (code, _, err) = cachelint_with_env(
        &[
            ("CACHELINT_VARIANT_DIR", s.cache.as_os_str()),
            ("STANDIN_SLOW", OsStr::new("1.2")),
        ],
        &["layout", file.to_str().unwrap(), "counters"],
    );
    assert_eq!(code, 0, "{err}");
    let told: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("cachelint: [smp]"))
        .collect();
    assert_eq!(told.len(), 1, "{err}");
    assert!(
        told[0].starts_with("cachelint: [smp] make defconfig: 1."),
        "{err}"
    );
    assert!(told[0].ends_with(" s"), "{err}");
}

#[test]
fn a_rerun_is_served_from_the_cache_until_a_header_changes() {
    let s = Setup::new("cache");
    let file = s.variants("v.toml", "");
    let file = file.to_str().unwrap();
    let (code, first, err) = s.run(&["layout", file, "counters"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        s.steps(),
        ["defconfig", "olddefconfig", "modules_prepare", "probe"]
    );
    let (_, again, _) = s.run(&["layout", file, "counters"]);
    assert_eq!(again, first);
    assert_eq!(s.steps().len(), 4, "a warm rerun runs no step");
    // Another type is another probe in the same prepared directory.
    let (code, _, err) = s.run(&["layout", file, "holder"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(s.steps().len(), 5);
    // A header the probe read changes: the probe is compiled again, the
    // tree is not configured again.
    let header = s.tree.join("include/linux/counters.h");
    let text = std::fs::read_to_string(&header).unwrap();
    std::fs::write(
        &header,
        text.replace("\tlong hot;", "\tlong hot;\n\tlong added;"),
    )
    .unwrap();
    let (_, changed, _) = s.run(&["layout", file, "counters"]);
    assert_eq!(s.steps()[5..], ["probe"]);
    assert_eq!(
        size_of(&changed, "counters"),
        size_of(&first, "counters") + 8
    );
}

#[test]
fn the_tree_is_never_written_and_a_patch_goes_to_a_private_copy() {
    let s = Setup::new("untouched");
    let patch = s.dir.join("grow.patch");
    std::fs::write(
        &patch,
        "--- a/include/linux/counters.h\n+++ b/include/linux/counters.h\n@@ -12,6 +12,7 @@\n \
         \n struct counters {\n \tlong hot;\n+\tlong cold;\n #ifdef CONFIG_SMP\n \tlong per_cpu;\n #endif\n\
         --- a/kernel/sub/private.h\n+++ b/kernel/sub/private.h\n@@ -3,3 +3,4 @@\n \tstruct counters c;\n \
         \tchar tail;\n+\tlong more;\n };\n",
    )
    .unwrap();
    let file = s.variants(
        "v.toml",
        &format!(
            "[[variant]]\nname = \"base\"\n[[variant]]\nname = \"patched\"\npatch = \"{}\"\n",
            patch.display()
        ),
    );
    let file = file.to_str().unwrap();
    let before = tree_snapshot(&s.tree);
    let (code, base, err) = s.run(&[
        "layout",
        &format!("{file}#base"),
        "counters",
        "private_thing",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, patched, err) = s.run(&[
        "layout",
        &format!("{file}#patched"),
        "counters",
        "private_thing",
    ]);
    assert_eq!(code, 0, "{err}");
    // counters: + cold (8); private_thing: counters' 8, then tail at the
    // end of counters, padded to 8, and more (8).
    assert_eq!(size_of(&base, "counters"), 24);
    assert_eq!(size_of(&patched, "counters"), 32);
    assert_eq!(size_of(&base, "private_thing"), 32);
    assert_eq!(size_of(&patched, "private_thing"), 48);
    assert!(
        patched.contains("cold") && patched.contains("more"),
        "{patched}"
    );
    assert_eq!(tree_snapshot(&s.tree), before, "the tree was written");
    // A patch that does not apply is an error naming it.
    std::fs::write(&patch, "--- a/include/linux/counters.h\n+++ b/include/linux/counters.h\n@@ -1,1 +1,1 @@\n-nothing like this\n+x\n").unwrap();
    let (code, _, err) = s.run(&["layout", &format!("{file}#patched"), "counters"]);
    assert_eq!(code, 2);
    assert!(err.contains("does not apply"), "{err}");
    assert_eq!(tree_snapshot(&s.tree), before);
}

#[test]
fn edits_that_do_not_hold_are_noted_and_an_unknown_option_is_refused() {
    let s = Setup::new("edits");
    let file = s.variants(
        "v.toml",
        "set = [\"LRU_GEN_STATS=y\", \"NEEDS_MISSING=y\"]\n",
    );
    let (code, out, err) = s.run(&["layout", file.to_str().unwrap(), "counters"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(size_of(&out, "counters"), 48);
    assert!(
        err.contains("NEEDS_MISSING=y did not hold: olddefconfig made it NEEDS_MISSING=n"),
        "{err}"
    );
    let typo = s.variants("typo.toml", "set = [\"LRU_GEN_STAT=y\"]\n");
    let (code, _, err) = s.run(&["layout", typo.to_str().unwrap(), "counters"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("option LRU_GEN_STAT is declared by no Kconfig file"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // A config file given: the options olddefconfig drops are named.
    let config = s.dir.join("my.config");
    std::fs::write(
        &config,
        "CONFIG_SMP=y\nCONFIG_NEEDS_MISSING=y\nCONFIG_GONE=m\n",
    )
    .unwrap();
    let given = s.variants(
        "given.toml",
        &format!("config = \"{}\"\n", config.display()),
    );
    let (code, _, err) = s.run(&["layout", given.to_str().unwrap(), "counters"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("2 option(s) set in"), "{err}");
    assert!(err.contains("GONE, NEEDS_MISSING"), "{err}");
}

#[test]
fn private_headers_and_discovered_roots() {
    let s = Setup::new("roots");
    let file = s.variants("v.toml", "");
    // private_thing is declared in kernel/sub/private.h only, which needs
    // what kernel/sub/user.c includes before it.
    let (code, out, err) = s.run(&["layout", file.to_str().unwrap(), "private_thing"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(size_of(&out, "private_thing"), 32);
    // NAME@FILE names the declaring header by the end of its path.
    let (code, out, err) = s.run(&["layout", file.to_str().unwrap(), "counters@counters.h"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(size_of(&out, "counters"), 24);
    // Rules on counters with no roots: holder, which embeds it in a
    // public header, is found; the note says where roots are looked for.
    let rules = s.dir.join("rules.toml");
    std::fs::write(
        &rules,
        "[counters]\nhot = \"hot-read\"\nevicted = \"lockless-write\"\n",
    )
    .unwrap();
    let (code, out, err) = s.run(&[
        "check",
        "--rules",
        rules.to_str().unwrap(),
        "--format",
        "json",
        file.to_str().unwrap(),
    ]);
    assert!(code == 0 || code == 1, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let roots: Vec<&str> = json["builds"][0]["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(roots, ["holder"]);
    assert!(
        json["notes"]
            .to_string()
            .contains("roots discovered among the"),
        "{out}"
    );
}

#[test]
fn mistakes_are_one_line_errors_with_exit_code_2() {
    let s = Setup::new("errors");
    let one_line = |args: &[&str], wanted: &str| {
        let (code, out, err) = s.run(args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(wanted), "{args:?}: wanted {wanted:?} in {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    };
    let file = s.variants("v.toml", "[[variant]]\nname = \"a\"\n");
    let file = file.to_str().unwrap();
    one_line(
        &["layout", &format!("{file}#b"), "counters"],
        "has no variant 'b' (it has a)",
    );
    one_line(&["layout", file, "no_such_struct"], "no header of");
    let cross = s.variants(
        "cross.toml",
        "arch = \"x86_64\"\ncross-compile = \"cachelint-missing-\"\n",
    );
    one_line(
        &["layout", cross.to_str().unwrap(), "counters"],
        "the compiler 'cachelint-missing-gcc' is not installed (Debian: apt-get install gcc-cachelint-missing)",
    );
    let arch = s.variants("arch.toml", "arch = \"sparc64\"\n");
    one_line(
        &["layout", arch.to_str().unwrap(), "counters"],
        "arch 'sparc64' is not in",
    );
    let key = s.variants("key.toml", "confg = \"defconfig\"\n");
    one_line(
        &["layout", key.to_str().unwrap(), "counters"],
        "key.toml:2:1: unknown key 'confg' (did you mean 'config'?)",
    );
    // A variant file without its tree is not an ELF file with no magic.
    let treeless = s.dir.join("treeless.toml");
    std::fs::write(&treeless, "[[variant]]\nname = \"a\"\n").unwrap();
    one_line(
        &["layout", treeless.to_str().unwrap(), "counters"],
        "a variant file, but it gives no tree = \"DIR\"",
    );
    let not_tree = s.dir.join("nt.toml");
    std::fs::write(&not_tree, format!("tree = \"{}\"\n", s.dir.display())).unwrap();
    one_line(
        &["layout", not_tree.to_str().unwrap(), "counters"],
        "is not a kernel source tree",
    );
    // A header that does not compile: the compiler's first error line and
    // the probe's path.
    std::fs::write(
        s.tree.join("include/linux/broken.h"),
        "struct broken { int x }\n",
    )
    .unwrap();
    one_line(&["layout", file, "broken"], "compiling the probe");
    let (_, _, err) = s.run(&["layout", file, "broken"]);
    assert!(
        err.contains("cachelint_probe.c") && err.contains("error"),
        "{err}"
    );
    // A tree configured in place is refused, never cleaned.
    std::fs::write(s.tree.join(".config"), "CONFIG_SMP=y\n").unwrap();
    one_line(
        &["layout", file, "counters"],
        "is configured in place (.config is there)",
    );
    assert!(s.tree.join(".config").is_file());
}

#[test]
fn suggests_header_patch_is_compiled_on_every_variant_and_held_to_the_plan() {
    let s = Setup::new("suggest");
    let file = s.variants(
        "v.toml",
        "[[variant]]\nname = \"smp\"\n[[variant]]\nname = \"up\"\nset = [\"SMP=n\"]\n",
    );
    let rules = s.dir.join("ring.toml");
    std::fs::write(
        &rules,
        "[ring]\nhead = \"lockless-write\"\nmask = \"hot-read\"\ntail = \"hot-read\"\n",
    )
    .unwrap();
    let args = [
        "suggest",
        "--rules",
        rules.to_str().unwrap(),
        "--source-tree",
        s.tree.to_str().unwrap(),
        file.to_str().unwrap(),
        "ring",
    ];
    let (code, out, err) = s.run(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("+++ b/include/linux/ring.h"), "{out}");
    for label in ["smp", "up"] {
        assert!(
            err.contains(&format!("[{label}] the header patch compiled: struct ring is as planned (4 members, 88 bytes)")),
            "{err}"
        );
    }
    // The compiler laying the patched struct out otherwise (here: a member
    // the stand-in widens when it compiles a patched copy) is an error. A
    // cache of its own: the stand-in's variable is no part of a probe's key.
    let other = s.dir.join("other-cache");
    let index = other.join("index");
    let (code, _, err) = cachelint_with_env(
        &[
            ("CACHELINT_VARIANT_DIR", other.as_os_str()),
            ("CACHELINT_CACHE_DIR", index.as_os_str()),
            ("STANDIN_PATCHED_CFLAGS", OsStr::new("-DSTANDIN_SKEW")),
        ],
        &args,
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("the header patch, compiled, lays struct ring out otherwise than the plan predicts: size 88 expected, 96 compiled"),
        "{err}"
    );
}

#[test]
fn a_variant_file_is_not_mistaken_for_other_toml() {
    // A rules file and a plan are TOML too, but give no tree.
    assert!(!cachelint::run::is_variant_file(&crate::common::rules(
        "lru.toml"
    )));
    assert!(!cachelint::run::is_variant_file(&fixture("lru_gcc.o")));
    let _ = OsStr::new("");
}

/// Runs git with `args` in `dir`, which must succeed.
fn git(dir: &Path, args: &[&str]) {
    crate::common::succeed(
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args),
        "git",
        "the review test's repository",
    );
}

#[test]
fn review_lays_out_the_touched_structs_on_each_variant_and_evaluates_the_kernels_asserts() {
    let s = Setup::new("review");
    s.repository();
    // The patch: a third long in the hot group (16 -> 24 bytes, over the
    // kernel's budget of 16), and a comment outside any struct of
    // counters.h (which touches none).
    s.edit(
        "include/linux/grouped.h",
        "\tlong hot_b;\n",
        "\tlong hot_b;\n\tlong hot_c;\n",
    );
    s.edit(
        "include/linux/counters.h",
        "};\n#endif\n",
        "};\n#endif\n/* end */\n",
    );
    git(&s.tree, &["commit", "-qam", "grouped: one more hot member"]);
    let matrix = s.variants(
        "matrix.toml",
        "[[variant]]\nname = \"smp\"\n[[variant]]\nname = \"up\"\nset = [\"SMP=n\"]\n",
    );
    let before = tree_snapshot(&s.tree);
    let args = [
        "review",
        "--tree",
        s.tree.to_str().unwrap(),
        "--variants",
        matrix.to_str().unwrap(),
    ];
    let (code, out, err) = s.run(&args);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("\"grouped: one more hot member\" against HEAD~"),
        "{out}"
    );
    assert!(
        out.contains("struct grouped (include/linux/grouped.h)"),
        "{out}"
    );
    assert!(!out.contains("struct counters"), "{out}");
    // 8 bytes more: 24 -> 32 on both variants, the group 16 -> 24.
    assert!(
        out.contains("| smp     | 64   | 24 B, 1 lines | 32 B, 1 lines | +8 B   |"),
        "{out}"
    );
    assert!(
        out.contains("| grouped_hot                 | 16 -> 24 | 16 -> 24 |"),
        "{out}"
    );
    assert!(out.contains("net/grouped.c:9 grouped_hot <= 16"), "{out}");
    assert!(
        out.contains("ok (16) / FAILS: 24 bytes, over the budget of 16"),
        "{out}"
    );
    // Where the patch's members land: hot_c at 16 (after hot_b at 8),
    // cold pushed from 16 to 24, all on line 0 of 64 bytes.
    assert!(
        out.contains("| hot_c                               | new at 16, line 0 | new at 16, line 0 |\n| cold                                | 16 -> 24          | 16 -> 24          |"),
        "{out}"
    );
    // The summary names the failing assert and where it fails.
    assert!(
        out.contains("1 kernel assert(s) fail at HEAD (grouped_hot <= 16 on smp, up), 0 struct(s) take more cachelines, 0 needless store(s) added\n"),
        "{out}"
    );
    assert_eq!(tree_snapshot(&s.tree), before, "the tree was written");
    // The JSON holds the verdicts per variant.
    let (_, json, _) = s.run(&[&args[..], &["--format", "json"]].concat());
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["failures"], 1);
    let size = json["asserts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["line"] == 9)
        .unwrap();
    assert_eq!(size["on"][0][1]["verdict"], "fails");
    assert_eq!(size["on"][0][0]["verdict"], "holds");
    // NIPA's per-patch test: the summary on $DESC_FD, exit 1.
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let results = s.dir.join("results");
    std::fs::create_dir_all(&results).unwrap();
    let desc = s.dir.join("desc");
    // The test as NIPA runs it: in the tree, the summary on fd 3.
    let nipa = || {
        std::process::Command::new("bash")
            .arg("-c")
            .arg(format!(
                "bash {} 3>{}",
                here.join("contrib/nipa/cachelint/cachelint.sh").display(),
                desc.display()
            ))
            .current_dir(&s.tree)
            .env("CACHELINT", env!("CARGO_BIN_EXE_cachelint"))
            .env("CACHELINT_VARIANT_DIR", &s.cache)
            .env("CACHELINT_CACHE_DIR", s.cache.join("index"))
            .env("CACHELINT_REVIEW_VARIANTS", &matrix)
            .env("RESULTS_DIR", &results)
            .env("DESC_FD", "3")
            .output()
            .unwrap()
    };
    let status = nipa();
    assert_eq!(
        status.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&status.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(&desc).unwrap(),
        "1 struct(s) on 2 variant(s): 1 kernel assert(s) fail at HEAD (grouped_hot <= 16 on smp, up), 0 struct(s) take more cachelines, 0 needless store(s) added\n"
    );
    assert!(results.join("cachelint-review.txt").is_file());
    // A patch that touches no struct: nothing to say, exit 0.
    s.edit("include/linux/counters.h", "/* end */\n", "");
    git(&s.tree, &["commit", "-qam", "counters: a comment"]);
    let status = nipa();
    assert_eq!(
        status.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&status.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(&desc).unwrap(),
        "No struct layout touched\n"
    );
    // A patch whose header asserts a size that one variant exceeds: that
    // variant does not compile at HEAD, with the compiler's message, and
    // the others are reviewed.
    s.edit(
        "include/linux/grouped.h",
        "\tlong cold;\n",
        "\tlong cold;\n\tlong colder;\n",
    );
    s.edit(
        "include/linux/grouped.h",
        "#endif\n",
        "#ifndef CONFIG_SMP\n_Static_assert(sizeof(struct grouped) <= 32, \"struct grouped grew\");\n#endif\n#endif\n",
    );
    git(&s.tree, &["commit", "-qam", "grouped: colder"]);
    let (code, out, err) = s.run(&args);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("| up      | 64   | 32 B, 1 lines | does not compile | -      |"),
        "{out}"
    );
    assert!(
        out.contains("| smp     | 64   | 32 B, 1 lines | 40 B, 1 lines    | +8 B   |"),
        "{out}"
    );
    assert!(
        out.contains("up does not compile at head: variant 'up': compiling the probe"),
        "{out}"
    );
    assert!(out.contains("struct grouped grew"), "{out}");
    assert!(
        out.contains("HEAD does not compile on up, 1 kernel assert(s) fail at HEAD (grouped_hot <= 16 on smp)"),
        "{out}"
    );
    // The help says so: exit 1, not 2, for a variant broken at HEAD.
    let (_, help, _) = s.run(&["review", "--help"]);
    assert!(
        help.contains("1 an assert fails, or a variant compiles at the base but not at\nHEAD"),
        "{help}"
    );
}

#[test]
fn review_says_where_members_land_and_which_holes_open_per_variant() {
    let s = Setup::new("review-moves");
    s.repository();
    // An int after per_cpu, which only SMP has: on smp flag lands at 16,
    // evicted moves from 16 to 24 and a 4-byte hole opens at 20; on up
    // nothing changes. holder embeds counters at 8 (after an int and a
    // 4-byte hole): its counters grows from 24 to 32 bytes on smp.
    s.edit(
        "include/linux/counters.h",
        "\tlong per_cpu;\n",
        "\tlong per_cpu;\n\tint flag;\n",
    );
    git(&s.tree, &["commit", "-qam", "counters: a flag"]);
    // up32: no SMP, 32-byte lines (ring's 88 bytes take 3 of them).
    let matrix = s.variants(
        "matrix.toml",
        "[[variant]]\nname = \"smp\"\n[[variant]]\nname = \"up32\"\nset = [\"SMP=n\", \"X86_L1_CACHE_SHIFT=5\"]\n",
    );
    let args = [
        "review",
        "--tree",
        s.tree.to_str().unwrap(),
        "--variants",
        matrix.to_str().unwrap(),
    ];
    let (code, out, err) = s.run(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("| smp     | 64   | 24 B, 1 lines | 32 B, 1 lines | +8 B   |\n| up32    | 32   | 16 B, 1 lines | 16 B, 1 lines | same   |"),
        "{out}"
    );
    assert!(
        out.contains("| flag                                | new at 16, line 0 | -    |\n| evicted                             | 16 -> 24          | -    |"),
        "{out}"
    );
    assert!(
        out.contains("holes on smp: opened 4 B at 20, after flag\n"),
        "{out}"
    );
    assert!(!out.contains("holes on up32"), "{out}");
    assert!(
        out.contains("| counters                            | 24 -> 32 B | -    |"),
        "{out}"
    );
    let (_, json, _) = s.run(&[&args[..], &["--format", "json"]].concat());
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let smp = &json["structs"][0]["on"][0];
    assert_eq!(smp["members"][1]["path"], "evicted");
    assert_eq!(smp["members"][1]["change"], "moved");
    assert_eq!(smp["members"][1]["new"]["offset"], 24);
    assert_eq!(smp["holes"][0]["size"], 4);
    assert_eq!(smp["holes"][0]["opened"], true);
    // A HEAD that does not compile on up32: its base row is still counted
    // in up32's own 32-byte lines (88 bytes: 3 lines).
    s.edit(
        "include/linux/ring.h",
        "\tring_tail_t tail;\n};\n",
        "\tring_tail_t tail;\n\tlong more;\n};\n#ifndef CONFIG_SMP\n_Static_assert(sizeof(struct ring) <= 88, \"ring grew\");\n#endif\n",
    );
    git(&s.tree, &["commit", "-qam", "ring: more"]);
    let (code, out, err) = s.run(&args);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("| up32    | 32   | 88 B, 3 lines | does not compile | -      |"),
        "{out}"
    );
}

#[test]
fn review_with_rules_lists_the_pairs_the_patch_parts_or_makes() {
    let s = Setup::new("review-rules");
    s.repository();
    // ring: head (written without a lock) and mask (read) share line 0;
    // eight longs between them put mask at 72, on line 1: the pair is
    // parted, and the struct takes a third line (88 -> 152 bytes).
    s.edit(
        "include/linux/ring.h",
        "\tlong mask;\n",
        "\tlong pad0[8];\n\tlong mask;\n",
    );
    git(&s.tree, &["commit", "-qam", "ring: mask away from head"]);
    let rules = s.dir.join("ring.toml");
    std::fs::write(
        &rules,
        "[ring]\nhead = \"lockless-write\"\nmask = \"hot-read\"\ntail = \"hot-read\"\n",
    )
    .unwrap();
    let matrix = s.variants("matrix.toml", "[[variant]]\nname = \"smp\"\n");
    let (code, out, err) = s.run(&[
        "review",
        "--tree",
        s.tree.to_str().unwrap(),
        "--variants",
        matrix.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("| smp     | 64   | 88 B, 2 lines | 152 B, 3 lines | +64 B, +1 line |"),
        "{out}"
    );
    assert!(
        out.contains(
            "  [smp] ring: 0 introduced, 1 fixed\n    - error false-sharing head - mask\n"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "1 struct(s) take more cachelines (ring on smp), 0 pair(s) of fields introduced (0 \
             error(s))"
        ),
        "{out}"
    );
    // What the rules compared, said even when nothing is introduced.
    assert!(
        out.contains(&format!(
            "rules {}: ring compared at the base and HEAD on smp\n",
            rules.display()
        )),
        "{out}"
    );
    assert!(
        err.contains("struct ring: no kernel check function"),
        "{err}"
    );
    // A plan would be ignored: refused.
    let (code, _, err) = s.run(&[
        "review",
        "--tree",
        s.tree.to_str().unwrap(),
        "--plan",
        rules.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("unexpected argument '--plan'"), "{err}");
    // A struct embedded by value elsewhere: the outermost struct embedding
    // it (holder, in a public header) is reviewed too, 8 bytes larger.
    // With the rules given, their own root (ring, untouched) is neither
    // reviewed nor taken for an embedder.
    s.edit(
        "include/linux/counters.h",
        "\tlong hot;\n",
        "\tlong hot;\n\tlong warm;\n",
    );
    git(&s.tree, &["commit", "-qam", "counters: warm"]);
    let (code, out, err) = s.run(&[
        "review",
        "--tree",
        s.tree.to_str().unwrap(),
        "--variants",
        matrix.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("struct ring"), "{out}");
    assert!(
        out.contains("struct holder (embeds a reviewed struct)\n| variant | line | base          | head          | change |\n|---------|------|---------------|---------------|--------|\n| smp     | 64   | 32 B, 1 lines | 40 B, 1 lines | +8 B   |"),
        "{out}"
    );
}

#[test]
fn review_without_rules_drafts_the_touched_structs_from_the_tree_and_lists_the_pairs() {
    let s = Setup::new("review-drafted");
    // The tree's one fast path (net_rx_action) counts ring's head up and
    // down without a lock in two functions that both read its mask: a
    // draft classes head a lockless write and mask a hot read, which share
    // line 0 at the base.
    std::fs::write(
        s.tree.join("net/ring.c"),
        "#include <linux/ring.h>\n\n\
         static long ring_push(struct ring *r)\n{\n\tatomic_long_inc(&r->head);\n\treturn r->mask;\n}\n\n\
         static long ring_pop(struct ring *r)\n{\n\tatomic_long_dec(&r->head);\n\treturn r->mask + 1;\n}\n\n\
         void net_rx_action(struct ring *r)\n{\n\tring_push(r);\n\tring_pop(r);\n}\n",
    )
    .unwrap();
    s.repository();
    s.edit(
        "include/linux/ring.h",
        "\tlong mask;\n",
        "\tlong pad0[8];\n\tlong mask;\n",
    );
    git(&s.tree, &["commit", "-qam", "ring: mask away from head"]);
    let matrix = s.variants("matrix.toml", "[[variant]]\nname = \"smp\"\n");
    let args = [
        "review",
        "--tree",
        s.tree.to_str().unwrap(),
        "--variants",
        matrix.to_str().unwrap(),
    ];
    let (code, out, err) = s.run(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(
            "  [smp] ring: 0 introduced, 1 fixed\n    - error false-sharing head - mask\n"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "rules drafted from the tree's source: ring compared at the base and HEAD on smp\n"
        ),
        "{out}"
    );
    assert!(err.contains("no rules given: ring drafted from"), "{err}");
    // The patch undone: the pair is introduced, and said in the summary.
    git(&s.tree, &["revert", "--no-edit", "HEAD"]);
    let (code, out, err) = s.run(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(
            "  [smp] ring: 1 introduced, 0 fixed\n    + error false-sharing head - mask\n"
        ),
        "{out}"
    );
    assert!(
        out.contains(", 1 pair(s) of fields introduced (1 error(s)), "),
        "{out}"
    );
}

#[test]
fn review_lists_the_needless_stores_the_patch_removes_or_adds_and_never_writes_the_tree() {
    let s = Setup::new("review-stores");
    // ring_kick() stores 0 to ring's tail on the fast path with no test
    // while another function reads it locklessly: a needless store.
    let kick = "static void ring_kick(struct ring *r)\n{\n\tWRITE_ONCE(r->tail, 0);\n}\n";
    std::fs::write(
        s.tree.join("net/ring.c"),
        format!(
            "#include <linux/ring.h>\n\n{kick}\n\
             long ring_peek(struct ring *r)\n{{\n\treturn READ_ONCE(r->tail);\n}}\n\n\
             void net_rx_action(struct ring *r)\n{{\n\tring_kick(r);\n}}\n"
        ),
    )
    .unwrap();
    s.repository();
    // The patch tests it first.
    s.edit(
        "net/ring.c",
        "\tWRITE_ONCE(r->tail, 0);\n",
        "\tif (READ_ONCE(r->tail))\n\t\tWRITE_ONCE(r->tail, 0);\n",
    );
    git(
        &s.tree,
        &["commit", "-qam", "ring: test tail before the store"],
    );
    let at_head = std::fs::read_to_string(s.tree.join("net/ring.c")).unwrap();
    let matrix = s.variants("matrix.toml", "[[variant]]\nname = \"smp\"\n");
    let args = [
        "review",
        "--tree",
        s.tree.to_str().unwrap(),
        "--variants",
        matrix.to_str().unwrap(),
        "--type",
        "ring",
    ];
    let (code, out, err) = s.run(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(
            "needless stores in the 1 file(s) the patch changes, base -> head: 0 added, 1 removed\n\
             \x20 - net/ring.c:5: warning: ring_kick() stores 0 to ring.tail (WRITE_ONCE)"
        ),
        "{out}{err}"
    );
    assert!(out.contains(", 0 needless store(s) added\n"), "{out}");
    // The base was read from a linked copy: the tree's file is HEAD's.
    assert_eq!(
        std::fs::read_to_string(s.tree.join("net/ring.c")).unwrap(),
        at_head
    );
    // The patch undone: the store is added, and said in the summary.
    git(&s.tree, &["revert", "--no-edit", "HEAD"]);
    let (code, out, err) = s.run(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("base -> head: 1 added, 0 removed\n  + net/ring.c:5: warning: ring_kick()"),
        "{out}{err}"
    );
    assert!(out.contains(", 1 needless store(s) added\n"), "{out}");
    // One copy per tree, made again for the new revisions.
    let copies = std::fs::read_dir(s.cache.join("linked"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .count();
    assert_eq!(copies, 1);
    assert!(
        !std::fs::read_to_string(s.tree.join("net/ring.c"))
            .unwrap()
            .contains("if (READ_ONCE(r->tail))")
    );
}
