//! The conventions of a command-line tool, on the binary: shell
//! completions and manual pages generated from the clap definition.

mod common;

use std::process::Output;

/// The binary run with `args`, its colour variables removed so the
/// tester's terminal settings do not leak in.
fn run(args: &[&str]) -> Output {
    common::binary()
        .args(args)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
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
    let Some(words) = complete("cachelint di", 1) else {
        eprintln!("no bash here: the script's text is checked by the test above");
        return;
    };
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

/// groff reads every page without a warning (where groff is installed).
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
        let Ok(mut child) = child else {
            eprintln!("no groff here: the pages' text is checked by the tests above");
            return;
        };
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
