//! The name index of a large build kept on disk, so that a single-type
//! lookup skips the scan of every unit the next time: one file per build
//! in the cache directory, keyed by the build's build-id, size and
//! modification time, written atomically (a temporary file renamed into
//! place), checked by a checksum, and never trusted when any part of the
//! key differs. A missing, stale, truncated or corrupt index is simply
//! rebuilt; a cache directory that cannot be written costs only the
//! saving.

use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};

use foldhash::quality::FixedState;

use crate::dwarf::DwarfFile;
use crate::dwarf::name_index::NameIndex;
use crate::error::Result;

/// Whether lookups keep their name index on disk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum IndexCache {
    /// Never read or write an index (`--no-cache`, and the library's
    /// default).
    #[default]
    Off,
    /// Keep indexes in `dir` for files with at least `min_bytes` of
    /// `.debug_info` (below that the scan costs less than the file).
    Dir {
        /// The cache directory.
        dir: PathBuf,
        /// The smallest `.debug_info` worth an index.
        min_bytes: u64,
    },
}

/// The smallest `.debug_info` the command line keeps an index for: a
/// scan of 8 MiB takes a few milliseconds.
pub const MIN_INDEXED_BYTES: u64 = 8 << 20;

/// The largest index file read (the 6.12 kernel's is about 1 MB).
const MAX_INDEX_BYTES: u64 = 256 << 20;

/// The first bytes of an index file; the last digit is the format version.
const MAGIC: &[u8; 16] = b"cachelint-idx-1\n";

impl IndexCache {
    /// The command line's cache: `$CACHELINT_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/cachelint/index`, else `~/.cache/cachelint/index`
    /// (off when none of them is set).
    pub fn from_env() -> IndexCache {
        let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
        let dir = var("CACHELINT_CACHE_DIR").map(PathBuf::from).or_else(|| {
            var("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| var("HOME").map(|h| Path::new(&h).join(".cache")))
                .map(|d| d.join("cachelint/index"))
        });
        match dir {
            Some(dir) => IndexCache::Dir {
                dir,
                min_bytes: MIN_INDEXED_BYTES,
            },
            None => IndexCache::Off,
        }
    }
}

/// What an index must match to be trusted: the file's build-id, size and
/// modification time, and the shape of its DWARF.
fn key(path: &Path, bytes: &[u8], file: &DwarfFile<'_>) -> Option<Vec<u8>> {
    use object::Object;
    let meta = std::fs::metadata(path).ok()?;
    let mtime = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    let build_id = object::File::parse(bytes)
        .ok()
        .and_then(|o| o.build_id().ok().flatten())
        .unwrap_or_default();
    let info = gimli::Section::reader(&file.dwarf.debug_info).len();
    let mut key = Vec::new();
    key.extend_from_slice(&(build_id.len() as u64).to_le_bytes());
    key.extend_from_slice(build_id);
    for word in [
        meta.len(),
        mtime.as_secs(),
        u64::from(mtime.subsec_nanos()),
        info as u64,
        file.units.len() as u64,
    ] {
        key.extend_from_slice(&word.to_le_bytes());
    }
    Some(key)
}

/// Where the index of the file at `path` lives: one file per path, so a
/// rebuilt kernel replaces its old index instead of adding one.
fn index_path(dir: &Path, path: &Path) -> PathBuf {
    let full = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let mut h = FixedState::with_seed(0x6964_7870_6174_6873).build_hasher();
    h.write(full.as_os_str().as_encoded_bytes());
    let stem: String = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "+-._".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    dir.join(format!("{stem}-{:016x}.idx", h.finish()))
}

fn checksum(payload: &[u8]) -> u64 {
    let mut h = FixedState::with_seed(0x6368_6563_6b73_756d).build_hasher();
    h.write(payload);
    h.finish()
}

/// The index file's bytes: magic, key, checksum, then the index.
fn wrap(key: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAGIC.len() + 24 + key.len() + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(key.len() as u64).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&checksum(payload).to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// The index inside `bytes` when its key is `key` and its checksum holds.
fn unwrap<'b>(bytes: &'b [u8], key: &[u8]) -> Option<&'b [u8]> {
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let word = |b: &[u8]| -> Option<u64> { Some(u64::from_le_bytes(b.get(..8)?.try_into().ok()?)) };
    let key_len = usize::try_from(word(rest)?).ok()?;
    let rest = rest.get(8..)?;
    if rest.get(..key_len)? != key {
        return None;
    }
    let rest = rest.get(key_len..)?;
    let sum = word(rest)?;
    let len = usize::try_from(word(rest.get(8..)?)?).ok()?;
    let payload = rest.get(16..)?;
    (payload.len() == len && checksum(payload) == sum).then_some(payload)
}

/// The name index of the file at `path` (mapped as `bytes`, its DWARF
/// `file`): read from the cache when a trusted one is there, else built
/// and written back. `None` when the cache is off or the file is too
/// small to be worth one.
pub(crate) fn load_or_build(
    cache: &IndexCache,
    path: &Path,
    bytes: &[u8],
    file: &DwarfFile<'_>,
) -> Result<Option<NameIndex>> {
    let IndexCache::Dir { dir, min_bytes } = cache else {
        return Ok(None);
    };
    if (gimli::Section::reader(&file.dwarf.debug_info).len() as u64) < *min_bytes {
        return Ok(None);
    }
    let Some(key) = key(path, bytes, file) else {
        return Ok(None);
    };
    let at = index_path(dir, path);
    let cached = crate::input::head(&at, MAX_INDEX_BYTES + 1).ok();
    if let Some(index) = cached
        .as_deref()
        .and_then(|b| unwrap(b, &key))
        .and_then(|payload| NameIndex::decode(payload, file))
    {
        return Ok(Some(index));
    }
    let index = NameIndex::build(file)?;
    // A cache that cannot be written only loses the saving.
    let _ = write_atomically(&at, &wrap(&key, &index.encode()));
    Ok(Some(index))
}

/// Writes `data` to `at` through a temporary file in the same directory,
/// so that a reader sees the old index or the new one, never a part.
fn write_atomically(at: &Path, data: &[u8]) -> std::io::Result<()> {
    let dir = at.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = at.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, data)?;
    std::fs::rename(&tmp, at).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{DebugSections, MappedFile};

    /// A fresh directory of this test's own.
    fn scratch(test: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("cachelint-index-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A private copy of a fixture, so that its time and size can change.
    fn copy_fixture(dir: &Path, name: &str) -> PathBuf {
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/bin")
            .join(name);
        let to = dir.join(name);
        std::fs::copy(from, &to).unwrap();
        to
    }

    fn flip(bytes: &[u8], at: usize) -> Vec<u8> {
        let mut bad = bytes.to_vec();
        bad[at] ^= 0x5a;
        bad
    }

    /// Opens `path` and returns (whether a trusted index was read, the
    /// index's names).
    fn lookup(cache: &IndexCache, path: &Path) -> (bool, Vec<String>) {
        let mapped = MappedFile::open(path).unwrap();
        let sections = DebugSections::load(path, mapped.bytes()).unwrap();
        let file = DwarfFile::new(&sections).unwrap();
        let IndexCache::Dir { dir, .. } = cache else {
            unreachable!()
        };
        let key = key(path, mapped.bytes(), &file).unwrap();
        let trusted = std::fs::read(index_path(dir, path))
            .ok()
            .and_then(|b| unwrap(&b, &key).map(|p| NameIndex::decode(p, &file).is_some()))
            .unwrap_or(false);
        let index = load_or_build(cache, path, mapped.bytes(), &file)
            .unwrap()
            .expect("an index");
        (trusted, index.names().map(str::to_owned).collect())
    }

    #[test]
    fn an_index_is_written_reused_and_rebuilt_when_the_file_or_the_index_changes() {
        let tmp = scratch("rebuilt");
        let cache = IndexCache::Dir {
            dir: tmp.join("cache"),
            min_bytes: 0,
        };
        let build = copy_fixture(&tmp, "gcc-dwarf5-base");
        let (trusted, names) = lookup(&cache, &build);
        assert!(!trusted, "no index before the first lookup");
        assert!(names.iter().any(|n| n == "lruvec"));
        let (trusted, again) = lookup(&cache, &build);
        assert!(trusted, "the second lookup reads the index");
        assert_eq!(again, names);

        let at = index_path(&tmp.join("cache"), &build);
        let good = std::fs::read(&at).unwrap();
        // Truncated at every length, or any byte flipped: ignored, rebuilt.
        for cut in [0, 8, MAGIC.len() + 3, good.len() / 2, good.len() - 1] {
            std::fs::write(&at, &good[..cut]).unwrap();
            assert_eq!(lookup(&cache, &build), (false, names.clone()), "cut {cut}");
            assert_eq!(
                std::fs::read(&at).unwrap(),
                good,
                "rewritten after cut {cut}"
            );
        }
        // A change the index's own decode accepts (the first fingerprint
        // of `lruvec`, after its name, its count, kind, unit and offset) is
        // caught by the checksum.
        let lruvec = good
            .windows(10)
            .position(|w| w == b"\x06\0\0\0lruvec")
            .expect("lruvec in the index");
        let print = lruvec + 10 + 4 + 1 + 4 + 4;
        for (what, bad) in [
            ("magic", flip(&good, 0)),
            ("key", flip(&good, MAGIC.len() + 9)),
            ("checksum", flip(&good, good.len() - 20)),
            ("a fingerprint", flip(&good, print)),
        ] {
            std::fs::write(&at, &bad).unwrap();
            assert_eq!(lookup(&cache, &build), (false, names.clone()), "{what}");
        }

        // The build is rebuilt in place: another file at the same path.
        let other = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bin/dup");
        std::fs::copy(other, &build).unwrap();
        let (trusted, rebuilt) = lookup(&cache, &build);
        assert!(!trusted, "the old index is not trusted for a new file");
        assert_ne!(rebuilt, names);
        assert!(lookup(&cache, &build).0, "the new index is used next time");

        // Same bytes, newer time: the key changes, the index is rebuilt.
        let f = std::fs::File::options().write(true).open(&build).unwrap();
        f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
            .unwrap();
        assert!(!lookup(&cache, &build).0, "a touched file is re-indexed");
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn small_files_and_an_unwritable_cache_cost_nothing() {
        let tmp = scratch("small");
        let build = copy_fixture(&tmp, "gcc-dwarf5-base");
        let mapped = MappedFile::open(&build).unwrap();
        let sections = DebugSections::load(&build, mapped.bytes()).unwrap();
        let file = DwarfFile::new(&sections).unwrap();
        let small = IndexCache::Dir {
            dir: tmp.join("cache"),
            min_bytes: u64::MAX,
        };
        assert!(
            load_or_build(&small, &build, mapped.bytes(), &file)
                .unwrap()
                .is_none()
        );
        assert!(!tmp.join("cache").exists());
        // A cache "directory" that is a file: the index is built, not kept.
        let blocked = tmp.join("blocked");
        std::fs::write(&blocked, b"").unwrap();
        let cache = IndexCache::Dir {
            dir: blocked,
            min_bytes: 0,
        };
        assert!(
            load_or_build(&cache, &build, mapped.bytes(), &file)
                .unwrap()
                .is_some()
        );
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
