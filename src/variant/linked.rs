//! A tree as another revision has some of its files: a private copy in
//! the variant cache, every file a hard link to the tree's (`cp -al`: a
//! kernel tree in seconds, no second copy of its bytes) but the files
//! given, each removed from the copy and written anew with the text given
//! (or left out), so that the tree itself is never written.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::cache::{self, Key};
use crate::error::{Error, Result};

/// The copy of `tree` whose files `files` (relative paths) hold the
/// texts given (`None`: the file is not there), made once per tree and
/// texts and kept in the cache.
pub(crate) fn linked_copy(tree: &Path, files: &[(String, Option<String>)]) -> Result<PathBuf> {
    let mut key = Key::default();
    key.add(tree.as_os_str().as_encoded_bytes());
    for (file, text) in files {
        key.add(file).add(text.as_deref().unwrap_or("\0absent"));
    }
    let dir = cache::root()?.join("linked").join(key.finish());
    let _lock = cache::lock(&dir)?;
    let copy = dir.join("tree");
    let stamp = dir.join(".cachelint-linked");
    if stamp.is_file() {
        return Ok(copy);
    }
    let io = |path: &Path, e| Error::Io {
        path: path.to_owned(),
        source: e,
    };
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| io(&dir, e))?;
    }
    std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
    let output = Command::new("cp")
        .arg("-al")
        .arg(tree)
        .arg(&copy)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::Usage(format!("cannot run cp: {e}")))?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        return Err(Error::Usage(format!(
            "cannot link a copy of {} into {} (the cache must be on the tree's file \
             system: set CACHELINT_VARIANT_DIR): {}",
            tree.display(),
            dir.display(),
            said.lines().next().unwrap_or_default()
        )));
    }
    for (file, text) in files {
        let at = copy.join(file);
        // The link goes first: writing through it would write the tree.
        match std::fs::remove_file(&at) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&at, e)),
            _ => {}
        }
        if let Some(text) = text {
            std::fs::create_dir_all(at.parent().unwrap_or(&copy)).map_err(|e| io(&at, e))?;
            std::fs::write(&at, text).map_err(|e| io(&at, e))?;
        }
    }
    std::fs::write(&stamp, "").map_err(|e| io(&stamp, e))?;
    Ok(copy)
}
