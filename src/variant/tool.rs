//! The programs a variant's build runs: the tree's own `make` (with the
//! variant's `ARCH`, compiler and output directory, and nothing of the
//! caller's kbuild environment), the compiler checked first, and the
//! steps shown on a terminal.

use std::io::IsTerminal;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use super::Variant;
use crate::error::Result;

/// The caller's environment that would steer the tree's build.
const KBUILD_ENV: [&str; 14] = [
    "ARCH",
    "CROSS_COMPILE",
    "LLVM",
    "CC",
    "LD",
    "KCFLAGS",
    "KCPPFLAGS",
    "KBUILD_OUTPUT",
    "KBUILD_EXTMOD",
    "KBUILD_EXTRA_SYMBOLS",
    "MAKEFLAGS",
    "MFLAGS",
    "MAKELEVEL",
    "O",
];

/// Most lines of a failed step's output an error quotes.
const QUOTED_LINES: usize = 4;

/// A step at least this long is told off a terminal too (a CI log),
/// when it ends: a cold review prepares each variant for a minute.
const SLOW_STEP: std::time::Duration = std::time::Duration::from_secs(1);

/// The steps of one variant's build on standard error: on a terminal,
/// which step of which variant starts and how long it took; off one, the
/// slow steps when they end, with their time.
pub(super) struct Progress {
    name: String,
    shown: bool,
}

impl Progress {
    pub(super) fn new(name: &str) -> Progress {
        Progress {
            name: name.to_owned(),
            shown: std::io::stderr().is_terminal(),
        }
    }

    /// Tells that `step` starts.
    pub(super) fn step(&self, step: &str) {
        if self.shown {
            eprintln!("cachelint: [{}] {step}", self.name);
        }
    }
}

/// The C compiler `make` will run for `v`, as a command name.
pub(super) fn compiler(v: &Variant) -> String {
    match v.spec.compiler.llvm {
        true => "clang".to_owned(),
        false => format!("{}gcc", v.spec.compiler.cross.as_deref().unwrap_or("")),
    }
}

/// Checks that the programs `v`'s build needs are installed, naming the
/// Debian package of one that is not; gives the compiler's version line.
pub(super) fn check(v: &Variant) -> Result<String> {
    // A kernel tree builds its Kconfig parser with flex and bison, and its
    // headers' constants with bc.
    let kconfig = v.tree.join("scripts/kconfig/lexer.l").is_file();
    for (program, package) in [
        ("make", "make"),
        ("flex", "flex"),
        ("bison", "bison"),
        ("bc", "bc"),
    ] {
        if (program == "make" || kconfig) && which(program).is_none() {
            return Err(v.error(format!(
                "'{program}' is not installed, and preparing a kernel tree runs it \
                 (Debian: apt-get install {package})"
            )));
        }
    }
    let cc = compiler(v);
    if which(&cc).is_none() {
        let package = match (v.spec.compiler.llvm, v.spec.compiler.cross.as_deref()) {
            (true, _) => "clang lld llvm".to_owned(),
            (false, Some(prefix)) => format!("gcc-{}", prefix.trim_end_matches('-')),
            (false, None) => "gcc".to_owned(),
        };
        return Err(v.error(format!(
            "the compiler '{cc}' is not installed (Debian: apt-get install {package})"
        )));
    }
    let out = Command::new(&cc)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| v.error(format!("cannot run {cc}: {e}")))?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_owned())
}

/// `program`'s path on `PATH`.
fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}

/// Runs the tree's `make` for `v` into `out` (its `O=`) with `args`;
/// `step` names it in the progress and in the error of a failure, which
/// quotes the first error lines of its output.
pub(super) fn make(
    v: &Variant,
    out: &Path,
    args: &[String],
    step: &str,
    p: &Progress,
) -> Result<()> {
    p.step(step);
    let started = Instant::now();
    let mut command = Command::new("make");
    command
        .arg("-C")
        .arg(&v.tree)
        .arg(format!("O={}", out.display()))
        .arg(format!("ARCH={}", v.arch))
        .arg("-s");
    if let Some(prefix) = &v.spec.compiler.cross {
        command.arg(format!("CROSS_COMPILE={prefix}"));
    }
    if v.spec.compiler.llvm {
        command.arg("LLVM=1");
    }
    command.args(args).stdin(Stdio::null());
    for var in KBUILD_ENV {
        command.env_remove(var);
    }
    let output = command
        .output()
        .map_err(|e| v.error(format!("cannot run make: {e}")))?;
    if output.status.success() {
        if p.shown || started.elapsed() >= SLOW_STEP {
            eprintln!(
                "cachelint: [{}] {step}: {:.1} s",
                p.name,
                started.elapsed().as_secs_f64()
            );
        }
        return Ok(());
    }
    let text = String::from_utf8_lossy(&output.stderr).into_owned()
        + &String::from_utf8_lossy(&output.stdout);
    Err(v.error(format!("{step} failed: {}", first_errors(&text))))
}

/// The lines of a build's output that say what failed: those naming an
/// error first, else the last lines.
pub(super) fn first_errors(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let errors: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.contains("error") || l.contains("Error"))
        .take(QUOTED_LINES)
        .collect();
    let quoted = match errors.is_empty() {
        false => errors,
        true => lines[lines.len().saturating_sub(QUOTED_LINES)..].to_vec(),
    };
    match quoted.is_empty() {
        true => "(no output)".to_owned(),
        false => quoted.join(" | "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_quotes_its_error_lines() {
        let out = "make[1]: Entering\nprobe.c:3:10: fatal error: x.h: No such file\n\
                   compilation terminated.\nmake[2]: *** [probe.o] Error 1\n";
        assert_eq!(
            first_errors(out),
            "probe.c:3:10: fatal error: x.h: No such file | make[2]: *** [probe.o] Error 1"
        );
        assert_eq!(first_errors("a\nb\n"), "a | b");
        assert_eq!(first_errors(""), "(no output)");
    }
}
