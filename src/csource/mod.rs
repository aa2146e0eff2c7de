//! Unpreprocessed C as cachelint reads it: the kernel's C files, whose
//! check functions `asserts --against` compares with ([`check_function`]), and
//! its headers, whose struct bodies `suggest --source-tree` reorders
//! ([`member_order`]).
//!
//! Both sit on one tolerant scanner, [`scan`]: the lines of a file, the
//! code of each told from its comments and literals, and the directives
//! they start or go on with; [`Nesting`] follows the `#if` blocks through
//! those. [`read`] reads a C file with a bound on its size.

mod bodies;
pub(crate) mod check_function;
pub(crate) mod member_order;
mod nesting;
mod scan;

use std::path::{Path, PathBuf};

use crate::error::Result;

pub(crate) use bodies::{Body, bodies, embeds};
pub(crate) use nesting::Nesting;
pub(crate) use scan::{Directive, Line, Pp, scan};

/// The largest C file read: net/core/dev.c is 340 KB in 6.12.
const MAX_SOURCE_BYTES: u64 = 64 << 20;

/// The text of the C file at `path`, invalid UTF-8 replaced; refused past
/// [`MAX_SOURCE_BYTES`].
pub(crate) fn read(path: &Path) -> Result<String> {
    let bytes = crate::input::read_limited(path, MAX_SOURCE_BYTES, "a C file")?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The text of the C file at `path` exactly as it is (a file to patch: a
/// replaced byte would make the patch miss), refused when not UTF-8 or
/// past [`MAX_SOURCE_BYTES`].
pub(crate) fn read_exact(path: &Path) -> Result<String> {
    let bytes = crate::input::read_limited(path, MAX_SOURCE_BYTES, "a C file")?;
    String::from_utf8(bytes).map_err(|e| crate::error::Error::Content {
        path: path.to_owned(),
        line: None,
        message: format!(
            "not UTF-8 text (invalid at byte {})",
            e.utf8_error().valid_up_to()
        ),
    })
}

/// C text with each run of white space one space: `struct   tcp_sock`
/// as `struct tcp_sock`.
pub(crate) fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The tokens of a line of code: identifiers and numbers, and each other
/// character that is not a space.
pub(crate) fn tokens(code: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut word = String::new();
    for c in code.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            tokens.push(std::mem::take(&mut word));
        }
        if !c.is_whitespace() {
            tokens.push(c.to_string());
        }
    }
    if !word.is_empty() {
        tokens.push(word);
    }
    tokens
}

/// Top-level directories of a kernel tree that hold no kernel code.
pub(crate) const NO_KERNEL_CODE: [&str; 6] = [
    "Documentation",
    "tools",
    "scripts",
    "samples",
    "usr",
    "LICENSES",
];

/// The files under `dir` that `file` takes, in the directories `enter`
/// takes, in no particular order; the walk stops once it holds more than
/// `max`.
pub(crate) fn files_under(
    dir: &Path,
    enter: &dyn Fn(&Path) -> bool,
    file: &dyn Fn(&Path) -> bool,
    max: usize,
) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && enter(&path) {
                stack.push(path);
            } else if kind.is_file() && file(&path) {
                files.push(path);
                if files.len() > max {
                    return files;
                }
            }
        }
    }
    files
}
