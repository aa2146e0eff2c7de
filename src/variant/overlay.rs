//! A variant's patch, applied to a private copy of the files it changes
//! (the tree is never written): the copy's include directories go before
//! the tree's in the probe's compile, so a patched header replaces its
//! original, and a patched private header is included from the copy.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::Variant;
use super::cache::{self, Key};
use crate::error::{Error, Result};

/// Largest patch read.
const MAX_PATCH: u64 = 16 << 20;

/// The patched copy.
pub(super) struct Overlay {
    /// Its directory: the changed files at their paths in the tree.
    pub dir: PathBuf,
    /// The files the patch changes, relative to the tree.
    pub files: Vec<PathBuf>,
    /// What it depends on: the patch and the original files.
    pub key: String,
}

impl Overlay {
    /// Applies `patch` (`-p1`) to copies of the files of `v`'s tree it
    /// changes, or finds them applied in the cache.
    pub(super) fn make(v: &Variant, patch: &Path) -> Result<Overlay> {
        let text = crate::input::read_limited(patch, MAX_PATCH, "a patch")?;
        let text = String::from_utf8_lossy(&text);
        let files = changed_files(&text);
        if files.is_empty() {
            return Err(v.error(format!(
                "patch {} changes no file (no '+++ b/PATH' line)",
                patch.display()
            )));
        }
        let mut key = Key::default();
        key.add(text.as_bytes());
        for f in &files {
            key.add(f.as_os_str().as_encoded_bytes())
                .add(std::fs::read(v.tree.join(f)).unwrap_or_default());
        }
        let key = key.finish();
        let dir = cache::root()?.join("overlay").join(&key);
        let _lock = cache::lock(&dir)?;
        let stamp = dir.join(".cachelint-applied");
        let io = |path: &Path, e| Error::Io {
            path: path.to_owned(),
            source: e,
        };
        if !stamp.is_file() {
            if dir.exists() {
                std::fs::remove_dir_all(&dir).map_err(|e| io(&dir, e))?;
            }
            for f in &files {
                let to = dir.join(f);
                std::fs::create_dir_all(to.parent().unwrap_or(&dir)).map_err(|e| io(&to, e))?;
                let from = v.tree.join(f);
                if from.is_file() {
                    std::fs::copy(&from, &to).map_err(|e| io(&from, e))?;
                }
            }
            let output = Command::new("patch")
                .args(["-p1", "-s", "-N", "--no-backup-if-mismatch", "-d"])
                .arg(&dir)
                .arg("-i")
                .arg(std::path::absolute(patch).unwrap_or_else(|_| patch.to_owned()))
                .stdin(Stdio::null())
                .output()
                .map_err(|e| {
                    v.error(format!(
                        "cannot run patch (Debian: apt-get install patch): {e}"
                    ))
                })?;
            if !output.status.success() {
                let said = String::from_utf8_lossy(&output.stdout).into_owned()
                    + &String::from_utf8_lossy(&output.stderr);
                return Err(v.error(format!(
                    "patch {} does not apply to {}: {}",
                    patch.display(),
                    v.tree.display(),
                    super::tool::first_errors(&said)
                )));
            }
            std::fs::write(&stamp, "").map_err(|e| io(&stamp, e))?;
        }
        Ok(Overlay { dir, files, key })
    }

    /// The copy's path of tree file `file`, when the patch changes it.
    pub(super) fn copy_of(&self, v: &Variant, file: &Path) -> Option<PathBuf> {
        let rel = file.strip_prefix(&v.tree).ok()?;
        self.files
            .iter()
            .any(|f| f == rel)
            .then(|| self.dir.join(rel))
    }
}

/// The files a unified diff changes (`+++ b/PATH`, `-p1`).
pub(super) fn changed_files(patch: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    for line in patch.lines() {
        let Some(path) = line.strip_prefix("+++ ") else {
            continue;
        };
        let path = path.split('\t').next().unwrap_or(path).trim();
        if path == "/dev/null" {
            continue;
        }
        let Some((_, rest)) = path.split_once('/') else {
            continue;
        };
        let rel = PathBuf::from(rest);
        let safe = rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if safe && !files.contains(&rel) {
            files.push(rel);
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_names_the_files_it_changes() {
        let patch = "--- a/include/linux/mmzone.h\n+++ b/include/linux/mmzone.h\t2026-01-01\n\
                     @@ -1 +1 @@\n-a\n+b\n--- a/x.h\n+++ /dev/null\n+++ b/../etc/passwd\n";
        assert_eq!(
            changed_files(patch),
            [PathBuf::from("include/linux/mmzone.h")]
        );
    }
}
