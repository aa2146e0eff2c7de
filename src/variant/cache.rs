//! Where variants are kept: `$CACHELINT_VARIANT_DIR`, else
//! `$XDG_CACHE_HOME/cachelint/variants`, else `~/.cache/cachelint/variants`;
//! keys made of their inputs' bytes, and a lock per directory so that two
//! runs (or two variants of one run) never build the same one at once.

use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The cache's root directory.
pub(super) fn root() -> Result<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    var("CACHELINT_VARIANT_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            var("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| var("HOME").map(|h| Path::new(&h).join(".cache")))
                .map(|d| d.join("cachelint/variants"))
        })
        .ok_or_else(|| {
            Error::VariantBuild(
                "variants need a cache directory: set CACHELINT_VARIANT_DIR (or HOME)".into(),
            )
        })
}

/// A key built from the bytes of everything a result depends on: 128 bits
/// of two seeded hashes, as 32 hex digits.
#[derive(Default)]
pub(super) struct Key {
    parts: Vec<u8>,
}

impl Key {
    /// Adds one part (its length first, so parts never run together).
    pub(super) fn add(&mut self, part: impl AsRef<[u8]>) -> &mut Key {
        let part = part.as_ref();
        self.parts.extend((part.len() as u64).to_le_bytes());
        self.parts.extend(part);
        self
    }

    /// The key.
    pub(super) fn finish(&self) -> String {
        let hash = |seed| {
            let mut h = foldhash::quality::FixedState::with_seed(seed).build_hasher();
            h.write(&self.parts);
            h.finish()
        };
        format!(
            "{:016x}{:016x}",
            hash(0x6361_6368_656c_696e),
            hash(0x7661_7269_616e_7473)
        )
    }
}

/// Makes `dir` anew, empty: what an earlier, unfinished fill left in it
/// goes first.
pub(super) fn fresh_dir(dir: &Path) -> Result<()> {
    let io = |e| Error::Io {
        path: dir.to_owned(),
        source: e,
    };
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(io)?;
    }
    std::fs::create_dir_all(dir).map_err(io)
}

/// An exclusive lock on `dir`'s lock file, held until dropped.
pub(super) struct Lock {
    _file: File,
}

/// Locks `dir` (creating its parent), waiting for another holder.
pub(super) fn lock(dir: &Path) -> Result<Lock> {
    let io = |e| Error::Io {
        path: dir.to_owned(),
        source: e,
    };
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let file = File::create(dir.with_extension("lock")).map_err(io)?;
    file.lock().map_err(io)?;
    Ok(Lock { _file: file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_tell_parts_apart() {
        let key = |parts: &[&str]| {
            let mut k = Key::default();
            for p in parts {
                k.add(p);
            }
            k.finish()
        };
        assert_eq!(key(&["a", "bc"]), key(&["a", "bc"]));
        assert_ne!(key(&["a", "bc"]), key(&["ab", "c"]));
        assert_eq!(key(&["x"]).len(), 32);
    }
}
