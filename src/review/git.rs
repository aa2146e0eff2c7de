//! The git commands a review runs in the reviewed tree: all read-only
//! (`rev-parse`, `diff`, `show`, `status`, `grep`, `log`), and without
//! the optional index refresh, so that not even `.git` is written.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{Error, Result};

/// Largest output read from one git command (a diff of the headers).
const MAX_OUTPUT: usize = 64 << 20;

/// A git work tree.
pub(super) struct Repo {
    tree: PathBuf,
}

impl Repo {
    /// The work tree at `tree`; an error when git does not take it for one.
    pub(super) fn open(tree: &Path) -> Result<Repo> {
        let repo = Repo {
            tree: tree.to_owned(),
        };
        repo.run(&["rev-parse", "--is-inside-work-tree"])
            .map_err(|_| {
                Error::Usage(format!(
                    "{} is not a git work tree: a review compares two of its commits",
                    tree.display()
                ))
            })?;
        Ok(repo)
    }

    /// Runs git with `args` in the tree: its standard output.
    fn run(&self, args: &[&str]) -> Result<String> {
        // --no-optional-locks: `status` would otherwise refresh the
        // index, writing the tree's .git.
        let out = Command::new("git")
            .arg("--no-optional-locks")
            .arg("-C")
            .arg(&self.tree)
            .args(args)
            .stdin(Stdio::null())
            .env("GIT_PAGER", "cat")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .output()
            .map_err(|e| Error::Tool {
                tool: "git",
                message: format!("cannot run git (Debian: apt-get install git): {e}"),
            })?;
        if !out.status.success() {
            let said = String::from_utf8_lossy(&out.stderr);
            return Err(Error::Tool {
                tool: "git",
                message: format!(
                    "git {} in {}: {}",
                    args.join(" "),
                    self.tree.display(),
                    said.lines().next().unwrap_or("failed")
                ),
            });
        }
        if out.stdout.len() > MAX_OUTPUT {
            return Err(Error::Tool {
                tool: "git",
                message: format!(
                    "git {}: more than {} MB of output",
                    args.join(" "),
                    MAX_OUTPUT >> 20
                ),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The commit `rev` names.
    pub(super) fn commit(&self, rev: &str) -> Result<String> {
        if rev.starts_with('-') {
            return Err(Error::Usage(format!("'{rev}' is not a revision")));
        }
        let spec = format!("{rev}^{{commit}}");
        Ok(self
            .run(&["rev-parse", "--verify", "--quiet", &spec])
            .map_err(|_| {
                Error::Usage(format!(
                    "'{rev}' names no commit of {}",
                    self.tree.display()
                ))
            })?
            .trim()
            .to_owned())
    }

    /// The subject line of `rev`.
    pub(super) fn subject(&self, rev: &str) -> Result<String> {
        Ok(self
            .run(&["log", "-1", "--format=%s", rev])?
            .trim()
            .to_owned())
    }

    /// The files that differ between commits `a` and `b`.
    pub(super) fn changed(&self, a: &str, b: &str) -> Result<Vec<String>> {
        Ok(self
            .run(&["diff", "--name-only", "--no-renames", a, b])?
            .lines()
            .map(str::to_owned)
            .collect())
    }

    /// Those of `files` with uncommitted changes in the work tree.
    pub(super) fn dirty(&self, files: &[String]) -> Result<Vec<String>> {
        if files.is_empty() {
            return Ok(Vec::new());
        }
        let mut args = vec!["status", "--porcelain", "--"];
        args.extend(files.iter().map(String::as_str));
        Ok(self
            .run(&args)?
            .lines()
            .filter_map(|l| l.get(3..).map(str::to_owned))
            .collect())
    }

    /// `file` at commit `rev`; `None` when it does not exist there.
    pub(super) fn show(&self, rev: &str, file: &str) -> Result<Option<String>> {
        Ok(self.run(&["show", &format!("{rev}:{file}")]).ok())
    }

    /// The hunks of `file` between `a` and `b`: (old start, old lines,
    /// new start, new lines), 1-based, from `diff -U0`.
    pub(super) fn hunks(
        &self,
        a: &str,
        b: &str,
        file: &str,
    ) -> Result<Vec<(usize, usize, usize, usize)>> {
        let diff = self.run(&["diff", "-U0", "--no-renames", a, b, "--", file])?;
        Ok(diff.lines().filter_map(hunk_header).collect())
    }

    /// The patch from `a` to `b` of `files` (`-p1`, full context).
    pub(super) fn diff(&self, a: &str, b: &str, files: &[String]) -> Result<String> {
        if files.is_empty() {
            return Ok(String::new());
        }
        let mut args = vec!["diff", "--no-renames", "--no-color", a, b, "--"];
        args.extend(files.iter().map(String::as_str));
        self.run(&args)
    }

    /// The C files of the tree at HEAD with a kernel check of struct
    /// `name` (`CACHELINE_ASSERT_GROUP_SIZE(struct NAME, ...)` or a
    /// member assert).
    pub(super) fn grep_checks(&self, name: &str) -> Result<Vec<String>> {
        let pattern = format!("CACHELINE_ASSERT_GROUP_[A-Z]*(struct {name},");
        // git grep exits 1 when nothing matches.
        Ok(self
            .run(&["grep", "-l", "-e", &pattern, "--", "*.c"])
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect())
    }
}

/// `@@ -a,b +c,d @@` as (a, b, c, d); a count left out is 1.
fn hunk_header(line: &str) -> Option<(usize, usize, usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let new = rest.split_once(" @@")?.0;
    let range = |r: &str| -> Option<(usize, usize)> {
        match r.split_once(',') {
            Some((s, n)) => Some((s.parse().ok()?, n.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (a, b) = range(old)?;
    let (c, d) = range(new)?;
    Some((a, b, c, d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunk_headers_parse() {
        assert_eq!(
            hunk_header("@@ -10,2 +10,3 @@ struct tcp_sock {"),
            Some((10, 2, 10, 3))
        );
        assert_eq!(hunk_header("@@ -5 +4,0 @@"), Some((5, 1, 4, 0)));
        assert_eq!(hunk_header("+++ b/x"), None);
    }
}
