//! A tree as another revision has some of its files: a private copy in
//! the variant cache, every file a hard link to the tree's (`cp -al`: a
//! kernel tree in seconds, no second copy of its bytes) but the files
//! given, each removed from the copy and written anew with the text given
//! (or left out), so that the tree itself is never written.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::cache::{self, Key};
use crate::error::{Error, Result};

/// The copy of `tree` as of `revision` (the commits or whatever else
/// names what the copy holds) whose files `files` (relative paths) hold
/// the texts given (`None`: the file is not there). One copy per tree is
/// kept in the cache, made again when the revision or texts change: a
/// copy made from an older state of the tree would hold its other files.
pub(crate) fn linked_copy(
    tree: &Path,
    revision: &str,
    files: &[(String, Option<String>)],
) -> Result<PathBuf> {
    let mut place = Key::default();
    place.add(tree.as_os_str().as_encoded_bytes());
    let dir = cache::root()?.join("linked").join(place.finish());
    let mut key = Key::default();
    key.add(revision);
    for (file, text) in files {
        key.add(file).add(text.as_deref().unwrap_or("\0absent"));
    }
    let key = key.finish();
    let _lock = cache::lock(&dir)?;
    let copy = dir.join("tree");
    let stamp = dir.join(".cachelint-linked");
    if std::fs::read_to_string(&stamp).is_ok_and(|k| k == key) {
        return Ok(copy);
    }
    let io = |path: &Path, e| Error::Io {
        path: path.to_owned(),
        source: e,
    };
    cache::fresh_dir(&dir)?;
    let output = Command::new("cp")
        .arg("-al")
        .arg(tree)
        .arg(&copy)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::Tool {
            tool: "cp",
            message: format!("cannot run cp: {e}"),
        })?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        return Err(Error::Tool {
            tool: "cp",
            message: format!(
                "cannot link a copy of {} into {} (the cache must be on the tree's file \
                 system: set CACHELINT_VARIANT_DIR): {}",
                tree.display(),
                dir.display(),
                said.lines().next().unwrap_or_default()
            ),
        });
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
    std::fs::write(&stamp, &key).map_err(|e| io(&stamp, e))?;
    Ok(copy)
}
