//! The one error type of the library. Every variant is an input or usage
//! problem that the command line reports on one line with exit code 2.
//!
//! The variants are split by kind, so that a caller (and a reader) can
//! tell whose mistake it is: the command line's ([`Error::Usage`]), a
//! file's content at its place ([`Error::Content`], and the older
//! [`Error::Rules`], [`Error::Plan`], [`Error::VariantFile`]), inputs that
//! do not fit together ([`Error::Mismatch`]), the file system
//! ([`Error::Io`], [`Error::Write`]) or a program run
//! ([`Error::Tool`], [`Error::VariantBuild`]). Each prints the one line
//! it always printed: the kind is in the variant, not in the message.

use std::path::{Path, PathBuf};

/// Everything that can go wrong between opening a file and printing a result.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be opened or mapped.
    #[error("{path}: {source}")]
    Io {
        /// The file that failed.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The file is not an ELF file we can read, or its headers are corrupt.
    #[error("{path}: not a readable ELF file: {reason}")]
    NotElf {
        /// The file that failed.
        path: PathBuf,
        /// What the ELF parser said.
        reason: String,
    },
    /// The file ends before its ELF header, a header table or a section's
    /// data does: a download or copy cut short.
    #[error("{path}: truncated: {what} runs past the end of the file ({have} of {need} bytes)")]
    Truncated {
        /// The file.
        path: PathBuf,
        /// What is cut: "the ELF header", "section .debug_info", ...
        what: String,
        /// The bytes of it the file holds.
        have: u64,
        /// The bytes it should have.
        need: u64,
    },
    /// The ELF file has no `.debug_info` section.
    #[error(
        "{path}: no DWARF debug info (.debug_info section missing); use the unstripped vmlinux \
         from the distribution's -dbg package (e.g. linux-image-<version>-dbg, under \
         /usr/lib/debug/boot/) or build with CONFIG_DEBUG_INFO=y"
    )]
    NoDebugInfo {
        /// The file that has no DWARF.
        path: PathBuf,
    },
    /// A debug section could not be decompressed or relocated.
    #[error("{path}: section {section}: {reason}")]
    Section {
        /// The file that failed.
        path: PathBuf,
        /// The section name.
        section: String,
        /// What went wrong.
        reason: String,
    },
    /// The DWARF data is malformed (truncated, bad references, unknown forms).
    #[error("corrupt DWARF at {section} offset {offset:#x}: {reason}")]
    Dwarf {
        /// The section `offset` is in (`.debug_info`, `.debug_abbrev`).
        section: &'static str,
        /// Offset in `section` closest to the problem.
        offset: u64,
        /// What gimli or the decoder said.
        reason: String,
    },
    /// A type name that the file does not define.
    #[error("no struct, union or typedef named '{name}' in {path}{hint}")]
    UnknownType {
        /// The name asked for.
        name: String,
        /// The file searched.
        path: PathBuf,
        /// A ", did you mean ..." suffix, or empty.
        hint: String,
    },
    /// A layout variant that does not exist (`NAME#N` or `NAME@FILE`).
    #[error("{0}")]
    UnknownVariant(String),
    /// A member path (`offsetof`) that does not resolve.
    #[error("{0}")]
    BadPath(String),
    /// A type whose layout cannot be computed (no size, cyclic, absurd).
    #[error("{0}")]
    BadType(String),
    /// A rules file that is malformed or does not fit the binary.
    #[error("{at}: {message}")]
    Rules {
        /// `FILE:LINE:COL` in the rules file.
        at: String,
        /// What is wrong, with the nearest names when there are some.
        message: String,
    },
    /// A plan file that is malformed or does not fit the build.
    #[error("{at}: {message}")]
    Plan {
        /// `FILE:LINE:COL` in the plan file.
        at: String,
        /// What is wrong, with the nearest names when there are some.
        message: String,
    },
    /// A file read whole that is larger than any real one of its kind
    /// (`/dev/zero` as a rules file).
    #[error("{path}: more than {limit_mb} MB, too large for {what}")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// What it was read as ("a rules file").
        what: &'static str,
        /// The limit, in MB.
        limit_mb: u64,
    },
    /// A mistake in a variant file, at its place.
    #[error("{at}: {message}")]
    VariantFile {
        /// `FILE:LINE:COLUMN`.
        at: String,
        /// What is wrong.
        message: String,
    },
    /// A variant that could not be built: its tree, its configuration,
    /// its compiler or its probe.
    #[error("{0}")]
    VariantBuild(String),
    /// A file whose content is not what it was given as, at its place:
    /// not text, not the format, lacking what the command reads from it
    /// (a baseline that is no report, a perf file of no known format, a
    /// line of perf's output, a header without asserts). Prints
    /// `FILE:LINE: MESSAGE`, or `FILE: MESSAGE` for the file as a whole.
    #[error("{}: {message}", located(path, *line))]
    Content {
        /// The file.
        path: PathBuf,
        /// The 1-based line the problem is on, when it is on one.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// `suggest --source-tree` declines to patch the struct's header:
    /// a line of it the patcher does not handle (`FILE:LINE`, 1-based),
    /// or the debug info lacks the lines to patch at (no place).
    #[error("--source-tree: {}", refused(at.as_ref(), why))]
    Patch {
        /// The header and the 1-based line the patch stops at, if one.
        at: Option<(String, usize)>,
        /// Why it cannot patch there.
        why: String,
    },
    /// Inputs, each well formed, that do not hold what the command needs
    /// or that disagree with each other: rules that annotate nothing or
    /// give no contexts for a footprint, rules files with two cacheline
    /// sizes, builds with two, or that order a struct's members
    /// differently, a struct with no cacheline groups to assert.
    #[error("{0}")]
    Mismatch(String),
    /// A file or directory cachelint writes that could not be written or
    /// read back: an output the command was told to write
    /// (`--plan-out`, `--rules-out`) or the evidence index in the cache.
    /// Prints `WHAT PATH: REASON` (`WHAT: REASON` without a path).
    #[error("{what}{}: {reason}", spaced(path.as_deref()))]
    Write {
        /// What the file is to the user: `--plan-out`, `evidence index`.
        what: &'static str,
        /// The file or directory, when one is at fault.
        path: Option<PathBuf>,
        /// What the operating system or the reader said.
        reason: String,
    },
    /// An external program (git, cp) that could not be run, failed, or
    /// said more than is read. The message names the program.
    #[error("{message}")]
    Tool {
        /// The program: `git`, `cp`.
        tool: &'static str,
        /// What failed, with the first line the program wrote.
        message: String,
    },
    /// A mistake on the command line: arguments or options that do not
    /// go together, a value out of range, a name (a field, a variant, a
    /// revision, a command) that names nothing, a build or tree that is
    /// not the kind the option takes.
    #[error("{0}")]
    Usage(String),
}

/// `FILE:LINE`, or `FILE` without a line.
fn located(path: &Path, line: Option<usize>) -> String {
    match line {
        Some(line) => format!("{}:{line}", path.display()),
        None => path.display().to_string(),
    }
}

/// A patch's refusal as it has always been said: at a line, the advice
/// to apply the plan by hand.
fn refused(at: Option<&(String, usize)>, why: &str) -> String {
    match at {
        Some((file, line)) => format!("{file}:{line}: {why}; apply the plan by hand"),
        None => why.to_owned(),
    }
}

/// ` PATH`, or nothing.
fn spaced(path: Option<&Path>) -> String {
    path.map(|p| format!(" {}", p.display()))
        .unwrap_or_default()
}

impl Error {
    /// Wraps a gimli error found near `offset` of `.debug_info`.
    pub fn dwarf(offset: u64, err: impl std::fmt::Display) -> Self {
        Error::Dwarf {
            section: ".debug_info",
            offset,
            reason: err.to_string(),
        }
    }

    /// A corrupt abbreviation table, near `offset` of `.debug_abbrev`.
    pub(crate) fn abbrev(offset: u64, err: impl std::fmt::Display) -> Self {
        Error::Dwarf {
            section: ".debug_abbrev",
            offset,
            reason: err.to_string(),
        }
    }

    /// The exit code of the command line for this error: 2 for every
    /// kind (1 is `check`'s findings, not an error). Each variant is
    /// named, so that a new kind decides its code.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Io { .. }
            | Error::NotElf { .. }
            | Error::Truncated { .. }
            | Error::NoDebugInfo { .. }
            | Error::Section { .. }
            | Error::Dwarf { .. }
            | Error::UnknownType { .. }
            | Error::UnknownVariant(_)
            | Error::BadPath(_)
            | Error::BadType(_)
            | Error::Rules { .. }
            | Error::Plan { .. }
            | Error::TooLarge { .. }
            | Error::VariantFile { .. }
            | Error::VariantBuild(_)
            | Error::Content { .. }
            | Error::Patch { .. }
            | Error::Mismatch(_)
            | Error::Write { .. }
            | Error::Tool { .. }
            | Error::Usage(_) => 2,
        }
    }
}

/// Shorthand used throughout the crate.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    /// One error of each kind split from `Usage`, with the line it
    /// printed when it was a `Usage` (taken from the binary's output).
    fn kinds() -> Vec<(Error, &'static str)> {
        vec![
            (
                Error::Content {
                    path: "empty.toml".into(),
                    line: None,
                    message: "no rules in this file (nothing but comments and blank lines): \
                              annotate a struct with [TYPE] and FIELD = \"CLASS\" lines"
                        .into(),
                },
                "empty.toml: no rules in this file (nothing but comments and blank lines): \
                 annotate a struct with [TYPE] and FIELD = \"CLASS\" lines",
            ),
            (
                Error::Patch {
                    at: Some(("src/mm_lru.h".into(), 122)),
                    why: "a conditional continued over lines".into(),
                },
                "--source-tree: src/mm_lru.h:122: a conditional continued over lines; \
                 apply the plan by hand",
            ),
            (
                Error::Patch {
                    at: None,
                    why: "the debug info gives no line for 'seq'".into(),
                },
                "--source-tree: the debug info gives no line for 'seq'",
            ),
            (
                Error::Mismatch("rules files disagree on the cacheline size (64 and 128)".into()),
                "rules files disagree on the cacheline size (64 and 128)",
            ),
            (
                Error::Write {
                    what: "--plan-out",
                    path: Some("/nonexistent/plan.toml".into()),
                    reason: "cannot write: No such file or directory (os error 2)".into(),
                },
                "--plan-out /nonexistent/plan.toml: cannot write: No such file or directory \
                 (os error 2)",
            ),
            (
                Error::Write {
                    what: "evidence index",
                    path: None,
                    reason: "key must be a string".into(),
                },
                "evidence index: key must be a string",
            ),
            (
                Error::Io {
                    path: "vmlinux".into(),
                    source: std::io::Error::other("cannot be read"),
                },
                "vmlinux: cannot be read",
            ),
            (
                Error::Tool {
                    tool: "git",
                    message: "cannot run git (Debian: apt-get install git): not found".into(),
                },
                "cannot run git (Debian: apt-get install git): not found",
            ),
            (
                Error::Usage("diff reads two builds: OLD NEW".into()),
                "diff reads two builds: OLD NEW",
            ),
        ]
    }

    #[test]
    fn each_kind_prints_its_old_line_and_exits_2() {
        for (error, line) in kinds() {
            assert_eq!(error.to_string(), line, "{error:?}");
            assert_eq!(error.exit_code(), 2, "{error:?}");
        }
    }

    /// A content error found by a reader names the file and the line, as
    /// fields and in its text: perf's header without the offset column,
    /// on line 2.
    #[test]
    fn a_content_error_names_its_file_and_line() {
        let text = "#\n# Overhead  Samples  Data Type  Data Typo Offset\n";
        let error = crate::evidence::perf::parse(Path::new("perf.txt"), text).unwrap_err();
        let Error::Content { path, line, .. } = &error else {
            panic!("not a content error: {error:?}");
        };
        assert_eq!((path.as_path(), *line), (Path::new("perf.txt"), Some(2)));
        assert!(
            error
                .to_string()
                .starts_with("perf.txt:2: perf report without a Data Type Offset column"),
            "{error}"
        );
        assert_eq!(error.exit_code(), 2);
    }
}
