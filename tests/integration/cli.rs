//! The conventions of a command-line tool, on the binary: shell
//! completions and manual pages generated from the clap definition, and
//! compiler-style colour that only a terminal (or `--color always`) sees.

use crate::common;

use std::path::Path;
use std::process::Output;

/// The binary run with `args`, its colour variables removed so the
/// tester's terminal settings do not leak in.
fn run(args: &[&str]) -> Output {
    run_with(&[], args)
}

/// [`run`] with these variables set.
fn run_with(env: &[(&str, &str)], args: &[&str]) -> Output {
    common::binary()
        .args(args)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CI")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

/// Standard output of a run that must succeed, as text.
fn stdout(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty(), "{args:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The commands `--help` lists (`help` aside): every one must be in the
/// completions and the manual, so a new command is tested without
/// touching this file.
fn commands() -> Vec<String> {
    let help = stdout(&["--help"]);
    let names: Vec<String> = help
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|&name| name != "help")
        .map(str::to_owned)
        .collect();
    for known in ["layout", "check", "diagram", "completions", "man"] {
        assert!(names.iter().any(|n| n == known), "{known} in {names:?}");
    }
    names
}

#[test]
fn each_command_offers_perf_and_plan_only_when_it_takes_them() {
    // The commands that read perf's samples, and those that lay nothing
    // out by a plan (review lays out two commits as compiled, suggest
    // starts from the compiled layout, audit reads the source); the others
    // took both from one shared group and refused them at run time.
    let reads_samples = [
        "layout",
        "check",
        "footprint",
        "suggest",
        "draft",
        "diagram",
        "audit",
    ];
    let no_plan = ["review", "suggest", "audit", "sizes", "completions", "man"];
    for command in commands() {
        let help = stdout(&[&command, "--help"]);
        assert_eq!(
            help.contains("--perf <FILE>"),
            reads_samples.contains(&command.as_str()),
            "{command} --help and --perf"
        );
        assert_eq!(
            help.contains("--plan <PLAN>"),
            !no_plan.contains(&command.as_str()),
            "{command} --help and --plan"
        );
    }
    // Not offered is refused by the parser, before anything is read.
    for args in [
        &["diff", "--perf", "p.txt", "a", "b", "t"][..],
        &["review", "--plan", "p.toml"],
        &["audit", "--plan", "p.toml", "--source-tree", "t", "vmlinux"],
    ] {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("unexpected argument '--p"), "{args:?}: {err}");
    }
}

#[test]
fn completions_for_every_shell_name_every_command() {
    let commands = commands();
    // The script's own mark, and whether it completes option values
    // (clap_complete's elvish script completes names only).
    for (shell, marker, values) in [
        ("bash", "complete -F _cachelint", true),
        ("zsh", "#compdef cachelint", true),
        ("fish", "complete -c cachelint", true),
        ("elvish", "edit:completion:arg-completer[cachelint]", false),
        ("powershell", "Register-ArgumentCompleter", false),
    ] {
        let script = stdout(&["completions", shell]);
        assert!(script.contains(marker), "{shell}: no {marker:?}");
        for command in &commands {
            assert!(script.contains(command.as_str()), "{shell}: no {command}");
        }
        // Options and their values come from the same definition.
        assert!(script.contains("fail-on"), "{shell}: no --fail-on");
        if values {
            assert!(script.contains("sarif"), "{shell}: no --format sarif");
        }
    }
}

#[test]
fn completions_of_an_unknown_shell_are_a_usage_error() {
    let out = run(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("cachelint: error: invalid value 'tcsh'"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

/// The bash script, sourced into bash, completes a command name and the
/// values of an option (where bash is installed).
#[test]
fn bash_completes_commands_and_format_values() {
    let script = stdout(&["completions", "bash"]);
    let complete = |words: &str, cword: usize| -> Option<String> {
        let program = format!(
            "{script}\nCOMP_WORDS=({words}); COMP_CWORD={cword}; \
             _cachelint cachelint \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; \
             echo \"${{COMPREPLY[*]}}\""
        );
        let out = std::process::Command::new("bash")
            .args(["--norc", "-c", &program])
            .output()
            .ok()?;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(String::from_utf8(out.stdout).unwrap().trim().to_owned())
    };
    let words = complete("cachelint di", 1).expect("bash runs (apt-get install bash)");
    assert_eq!(words, "diff diagram");
    assert_eq!(
        complete("cachelint check --format ''", 3).unwrap(),
        "text json sarif"
    );
}

#[test]
fn the_manual_is_roff_and_lists_every_command() {
    let page = stdout(&["man"]);
    assert!(page.contains("\n.TH cachelint 1 "), "{page}");
    for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SUBCOMMANDS"] {
        assert!(page.contains(&format!("\n.SH {section}\n")), "no {section}");
    }
    // roff writes a hyphen as \-.
    for command in commands() {
        let entry = format!("\n.TP\ncachelint\\-{}(1)\n", command.replace('-', "\\-"));
        assert!(page.contains(&entry), "no {entry:?} in the page");
    }
    assert!(!page.contains("cachelint\\-help(1)"), "help is no page");
}

#[test]
fn each_command_has_its_own_page_with_its_options() {
    for command in commands() {
        let page = stdout(&["man", &command]);
        let title = format!("\n.TH cachelint-{command} 1 ");
        assert!(page.contains(&title), "{command}: no {title:?}");
        assert!(page.contains("\"cachelint "), "{command}: footer");
        assert!(page.contains("\n.SH SYNOPSIS\n"), "{command}");
        // NAME is one line that apropos and whatis can show: the command
        // and a phrase, not the description's paragraph.
        let name = page
            .split("\n.SH NAME\n")
            .nth(1)
            .and_then(|rest| rest.lines().next())
            .unwrap();
        assert!(
            name.len() <= 160 && !name.contains(". "),
            "{command}: NAME is a paragraph: {name}"
        );
    }
    let check = stdout(&["man", "check"]);
    for option in ["\\-\\-rules", "\\-\\-fail\\-on", "\\-\\-baseline"] {
        assert!(check.contains(option), "check's page: no {option}");
    }
    let out = run(&["man", "nosuch"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("no command 'nosuch': man takes one of layout,"),
        "{err}"
    );
}

/// groff reads every page without a warning.
#[test]
fn groff_reads_the_pages_without_warnings() {
    let mut pages = vec![String::new()];
    pages.extend(commands());
    for command in pages {
        let args: Vec<&str> = std::iter::once("man")
            .chain((!command.is_empty()).then_some(command.as_str()))
            .collect();
        let page = stdout(&args);
        let child = std::process::Command::new("groff")
            .args(["-man", "-z", "-ww"])
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn();
        let mut child = child.expect("groff runs (apt-get install groff-base)");
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(page.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{args:?}");
        assert!(
            out.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `check` on the fixtures of the README's first command: errors,
/// warnings and notes, and notes on standard error.
fn check_args(extra: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut args: Vec<String> = vec![
        "check".into(),
        "--rules".into(),
        root.join("examples/mm-lru.toml").display().to_string(),
        format!("before={}", common::fixture("gcc-dwarf5-base").display()),
        format!("after={}", common::fixture("gcc-dwarf5-after").display()),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

fn has_escape(bytes: &[u8]) -> bool {
    bytes.contains(&0x1b)
}

/// The text with every `ESC [ ... m` removed.
fn strip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == 0x1b && bytes.get(i + 1) == Some(&b'[') {
            let end = bytes[i..].iter().position(|&b| b == b'm').unwrap();
            i += end + 1;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

#[test]
fn color_always_paints_check_diagnostics_as_a_compiler_does() {
    let never = run(&strs(&check_args(&["--color", "never"])));
    let always = run(&strs(&check_args(&["--color", "always"])));
    assert_eq!(never.status.code(), Some(1));
    assert_eq!(always.status.code(), Some(1));
    let text = String::from_utf8(always.stdout.clone()).unwrap();
    // Location bold, severity bold and coloured: red, yellow, cyan.
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with(&format!("{BOLD}src/mm_lru.h:")),
        "{first:?}"
    );
    for (severity, colour) in [("error", 31), ("warning", 33), ("note", 36)] {
        let head = format!(":{RESET} {BOLD}\x1b[{colour}m{severity}:{RESET} [");
        assert!(text.contains(&head), "no {head:?} in {text}");
    }
    // Only the heads: detail lines and the summary are plain.
    assert!(
        text.lines()
            .filter(|l| l.starts_with("    "))
            .all(|l| !l.contains('\x1b'))
    );
    assert!(text.lines().last().unwrap().starts_with("cachelint: "));
    // Without the escapes, the bytes --color never writes.
    assert_eq!(strip(&always.stdout), never.stdout);
    // The notes on standard error too.
    let err = String::from_utf8(always.stderr.clone()).unwrap();
    assert!(
        err.starts_with(&format!("{BOLD}\x1b[36mnote:{RESET} [")),
        "{err}"
    );
    assert_eq!(strip(&always.stderr), never.stderr);
}

/// A pipe (no --color), --color never and NO_COLOR under auto get the
/// same plain bytes, on both streams.
#[test]
fn a_pipe_never_and_no_color_stay_plain() {
    let plain = run(&strs(&check_args(&[])));
    assert!(!has_escape(&plain.stdout) && !has_escape(&plain.stderr));
    assert!(String::from_utf8_lossy(&plain.stdout).contains(": error: ["));
    for (env, extra) in [
        (&[][..], &["--color", "never"][..]),
        (&[][..], &["--color=auto"][..]),
        (&[("NO_COLOR", "1")][..], &[][..]),
        // NO_COLOR wins over CLICOLOR_FORCE under auto.
        (&[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")][..], &[][..]),
        (&[("CLICOLOR_FORCE", "1")][..], &["--color", "never"][..]),
    ] {
        let out = run_with(env, &strs(&check_args(extra)));
        assert_eq!(out.stdout, plain.stdout, "{env:?} {extra:?}");
        assert_eq!(out.stderr, plain.stderr, "{env:?} {extra:?}");
        assert_eq!(out.status.code(), Some(1));
    }
    // --color always is the user's word over NO_COLOR.
    let out = run_with(
        &[("NO_COLOR", "1")],
        &strs(&check_args(&["--color", "always"])),
    );
    assert!(has_escape(&out.stdout));
}

#[test]
fn json_and_sarif_are_never_coloured() {
    for format in ["json", "sarif"] {
        let never = run(&strs(&check_args(&[
            "--format", format, "--color", "never",
        ])));
        let always = run(&strs(&check_args(&[
            "--format", format, "--color", "always",
        ])));
        assert!(!has_escape(&always.stdout), "{format}");
        assert_eq!(always.stdout, never.stdout, "{format}");
        serde_json::from_slice::<serde_json::Value>(&always.stdout).unwrap();
    }
}

/// Tables, drawings and layouts have no diagnostics: the same bytes
/// whatever --color says.
#[test]
fn tables_and_drawings_are_never_coloured() {
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mm-lru.toml");
    let rules = rules.to_str().unwrap();
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rules");
    let contexts = tests.join("lru-contexts.toml").display().to_string();
    let table = tests.join("lru_gen_folio.rst").display().to_string();
    let base = common::fixture("gcc-dwarf5-base");
    let base = base.to_str().unwrap();
    let after = format!("after={}", common::fixture("gcc-dwarf5-after").display());
    let commands: Vec<Vec<&str>> = vec![
        vec!["layout", base, "lruvec"],
        vec!["offsetof", base, "lruvec.lru_lock"],
        vec!["offsets", base, "lruvec.lru_lock"],
        vec!["diff", base, &after, "mem_cgroup_per_node"],
        vec![
            "diagram",
            "--rules",
            rules,
            base,
            "mem_cgroup_per_node",
            "--around",
            "refaulted",
        ],
        vec![
            "diagram", "--rules", rules, base, "lruvec", "--style", "table", "--format", "markdown",
        ],
        vec!["footprint", "--rules", &contexts, base],
        vec!["asserts", "--rules", &table, &after, "lru_gen_folio"],
    ];
    for args in commands {
        let never = run(&[&args[..], &["--color", "never"]].concat());
        let always = run(&[&args[..], &["--color", "always"]].concat());
        assert!(!never.stdout.is_empty(), "{args:?}");
        assert!(!has_escape(&always.stdout), "{args:?}");
        assert_eq!(always.stdout, never.stdout, "{args:?}");
        assert_eq!(always.status.code(), never.status.code(), "{args:?}");
    }
}

/// The `cachelint: error:` line of exit code 2, from a usage error and
/// from a failed command; `--color` anywhere on the line decides.
#[test]
fn the_error_line_is_coloured_only_when_asked() {
    let head = format!("{BOLD}cachelint:{RESET} {BOLD}\x1b[31merror:{RESET} ");
    for (always, never) in [
        (
            &["--color", "always", "layout"][..],
            &["--color", "never", "layout"][..],
        ),
        (
            &["layout", "/nonexistent/vmlinux", "x", "--color=always"],
            &["layout", "/nonexistent/vmlinux", "x", "--color=never"],
        ),
        (
            &["--color", "always", "check", "--bogus"],
            &["check", "--bogus"],
        ),
    ] {
        let out = run(always);
        assert_eq!(out.status.code(), Some(2), "{always:?}");
        let err = String::from_utf8(out.stderr.clone()).unwrap();
        assert!(err.starts_with(&head), "{always:?}: {err:?}");
        assert_eq!(err.lines().count(), 1, "{always:?}");
        let plain = run(never);
        assert!(plain.stderr.starts_with(b"cachelint: error: "), "{never:?}");
        assert_eq!(strip(&out.stderr), plain.stderr, "{always:?}");
    }
    let out = run(&["--color", "sometimes", "sizes", "x"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("cachelint: error: invalid value 'sometimes' for '--color <WHEN>'"),
        "{err}"
    );
}

/// clap's own help obeys --color too.
#[test]
fn help_follows_color() {
    let always = run(&["--color", "always", "check", "--help"]);
    let never = run(&["check", "--help", "--color", "never"]);
    assert!(has_escape(&always.stdout));
    assert!(!has_escape(&never.stdout));
    assert_eq!(strip(&always.stdout), never.stdout);
    assert!(
        String::from_utf8(never.stdout)
            .unwrap()
            .contains("--color <WHEN>")
    );
}

/// On a terminal, auto colours unless NO_COLOR is set and not empty
/// (where `script` can give the command a terminal).
#[test]
fn auto_colours_a_terminal_unless_no_color() {
    let args: Vec<String> = check_args(&[])
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    let line = format!(
        "'{}' {} 2>/dev/null",
        common::binary().get_program().display(),
        args.join(" ")
    );
    let on_a_terminal = |env: &[(&str, &str)]| -> Option<Vec<u8>> {
        let out = std::process::Command::new("script")
            .args(["-q", "-e", "-c", &line, "/dev/null"])
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR")
            .env_remove("CLICOLOR_FORCE")
            // anstream takes a CI runner for a colour terminal whatever TERM says.
            .env_remove("CI")
            .env("TERM", "xterm")
            .envs(env.iter().copied())
            .output()
            .ok()?;
        // util-linux's script; another (BSD's) takes other arguments.
        (out.status.code() == Some(1)).then_some(out.stdout)
    };
    let terminal = on_a_terminal(&[]).expect("util-linux's script runs (apt-get install bsdutils)");
    assert!(has_escape(&terminal));
    assert!(
        has_escape(&on_a_terminal(&[("NO_COLOR", "")]).unwrap()),
        "empty NO_COLOR"
    );
    assert!(!has_escape(&on_a_terminal(&[("NO_COLOR", "1")]).unwrap()));
    assert!(!has_escape(&on_a_terminal(&[("TERM", "dumb")]).unwrap()));
}

/// `asserts --against`'s `FILE:LINE: note:` lines are diagnostics too.
#[test]
fn asserts_against_notes_are_coloured_as_check_s() {
    let dir = std::env::temp_dir().join(format!("cachelint-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("check.c");
    std::fs::write(
        &file,
        "static void __init lru_gen_folio_struct_check(void)\n{\n\
         \tCACHELINE_ASSERT_GROUP_MEMBER(struct lru_gen_folio, lrugen_stats, enabled);\n}\n",
    )
    .unwrap();
    let table = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rules/lru_gen_folio.rst");
    let after = common::fixture("gcc-dwarf5-after");
    let args = |color: &'static str| {
        let mut args = vec![
            "asserts".to_owned(),
            "--rules".into(),
            table.display().to_string(),
            after.display().to_string(),
            "lru_gen_folio".into(),
            "--against".into(),
            file.display().to_string(),
        ];
        args.extend(["--color".into(), color.into()]);
        args
    };
    let never = run(&strs(&args("never")));
    let always = run(&strs(&args("always")));
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(never.status.code(), Some(1));
    let head = format!(
        "{BOLD}{}:3:{RESET} {BOLD}\x1b[36mnote:{RESET} ",
        file.display()
    );
    let text = String::from_utf8(always.stdout.clone()).unwrap();
    assert!(text.starts_with(&head), "{text:?}");
    assert!(
        !has_escape(text.lines().last().unwrap().as_bytes()),
        "the summary is plain"
    );
    assert_eq!(strip(&always.stdout), never.stdout);
    assert!(!has_escape(&never.stdout));
}

#[test]
fn every_class_check_help_lists_loads_from_a_rules_file() {
    // A new user copies a class name from `check --help` into a rules file:
    // each one listed must load (lock-protected with its lock).
    let help = stdout(&["check", "--help"]);
    let line = help
        .lines()
        .find_map(|l| l.strip_prefix("Classes: "))
        .expect("check --help lists the classes");
    let classes: Vec<&str> = line.trim_end_matches('.').split(", ").collect();
    assert!(classes.contains(&"hot-read"), "{classes:?}");
    let dir = std::env::temp_dir().join(format!("cachelint-help-classes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for class in classes {
        let rule = if class == "lock-protected" {
            format!("{{ class = \"{class}\", lock = \"lru_lock\" }}")
        } else {
            format!("\"{class}\"")
        };
        let rules = dir.join("r.toml");
        std::fs::write(&rules, format!("[lruvec]\nlrugen = {rule}\n")).unwrap();
        let gcc = common::fixture("gcc-dwarf5-base");
        let (code, _, err) = common::cachelint(&[
            "check",
            "--rules",
            rules.to_str().unwrap(),
            gcc.to_str().unwrap(),
        ]);
        assert!(code == 0 || code == 1, "{class}: exit {code}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_readme_shows_what_its_first_command_prints() {
    // The README opens with the main job on the fixtures and shows its
    // output under "The diagnostic of the thread, and the summary": every
    // line shown there (but the elisions) must be a line the command prints.
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let first = readme
        .lines()
        .find_map(|l| l.strip_prefix("cargo run --release -- "))
        .expect("the README's first command");
    let args: Vec<&str> = first
        .split_whitespace()
        .take_while(|w| !w.starts_with('#'))
        .collect();
    let out = common::binary()
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "the README says it exits 1");
    let printed = String::from_utf8(out.stdout).unwrap();
    let shown = readme
        .split("The diagnostic of the thread, and the summary:")
        .nth(1)
        .and_then(|rest| rest.split("```").nth(1))
        .expect("the README's output block");
    let mut checked = 0;
    for line in shown.lines().filter(|l| !l.trim().is_empty()) {
        if line.trim() == "..." {
            continue;
        }
        assert!(
            printed.lines().any(|p| p == line),
            "the README shows a line the command does not print:\n{line}"
        );
        checked += 1;
    }
    assert!(checked >= 4, "{checked} lines checked");
}

#[test]
fn a_type_before_the_builds_gets_one_message_everywhere() {
    // Each command given its type where its build goes: the issue's three
    // cases said "No such file", "is not a type name" and "<TYPES> not
    // provided"; a user reads one sentence on every command instead.
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mm-lru.toml");
    let rules = rules.to_str().unwrap();
    let f = common::fixture("gcc-dwarf5-base");
    let f = f.to_str().unwrap();
    let named = format!("a={f}");
    let cases: [&[&str]; 8] = [
        &["diagram", "--rules", rules, "lruvec", &named],
        &["layout", "lruvec", f],
        &["offsetof", "lruvec", f],
        &["diff", f, "lruvec"],
        &["offsets", "lruvec", f],
        &["suggest", "--rules", rules, "lruvec", f],
        &["check", "--rules", rules, "lruvec", f],
        &["footprint", "--rules", rules, "lruvec", f],
    ];
    for args in cases {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("cachelint: error: 'lruvec' is not a file: ")
                && err.contains("(FILE or NAME=FILE)")
                && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}
