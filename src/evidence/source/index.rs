//! The evidence index of a tree: what every file says of every struct of
//! a build, read once and kept on disk, so that a draft of any struct
//! reads only that struct's part.
//!
//! Building it reads the headers for lock wrappers, then walks every file
//! for every struct ([`Wanted::All`]); each file's declarations go to one
//! of [`SHARDS`] temporary files by their struct, so memory holds only the
//! calls (for the callers' locks, construction and reach, see
//! [`Summary`]). Each shard is then read back, the summary applied, and
//! each struct's declarations written as one compressed part, found
//! through a table at the end of the file.
//!
//! The index is trusted only while its key holds: the tree (every file's
//! path, size and modification time), the machine, the build the accesses
//! were resolved through and cachelint's own binary. A stale, truncated
//! or corrupt index is rebuilt; two runs building the same index take
//! turns (a lock file beside it). A run that builds an index first sweeps
//! the directory (see [`sweep`]): what stopped runs left behind, and the
//! indexes of trees that are gone.

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::io::{BufRead, BufReader, BufWriter, Read, Write as _};
use std::os::unix::ffi::OsStringExt as _;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use foldhash::quality::FixedState;
use rayon::prelude::*;

use super::graph::{Graph, Walked};
use super::summary::Summary;
use super::wrappers::Wrappers;
use super::{Declaration, Said, Types, WRAPPER_ROUNDS, Wanted, exported, progress::Progress};
use crate::error::{Error, Result};

/// Temporary files the declarations are spread over while the tree is
/// walked: one at a time is read back.
const SHARDS: usize = 64;

/// The first bytes of an index; the digit is the format's version. The
/// key follows (8 bytes), then the tree's path (its length in 4 bytes,
/// then the path).
const MAGIC: &[u8; 21] = b"cachelint-evidence-3\n";

/// The longest tree path an index's header holds.
const MAX_TREE_PATH: u32 = 4096;

/// The largest table read (the 6.12 tree's is about 1 MB).
const MAX_TABLE_BYTES: u64 = 64 << 20;

/// The largest part of one struct read, compressed.
const MAX_PART_BYTES: u64 = 1 << 30;

/// Parts smaller than this (JSON bytes) are stored as they are.
const MIN_COMPRESSED: usize = 2 << 10;

/// One struct's declarations as stored.
enum Part {
    /// JSON lines.
    Raw(Vec<u8>),
    /// JSON lines, deflated.
    Deflated(Vec<u8>),
}

/// Where a tree's index is kept, and what it is resolved through.
#[derive(Clone, Debug)]
pub struct IndexAt {
    /// The cache directory.
    pub dir: PathBuf,
    /// What identifies the build the accesses resolve through (its path,
    /// size and modification time).
    pub build: String,
}

/// The index file of `tree` for `arch` in `dir`: one per (tree, machine),
/// so a changed tree replaces its index instead of adding one.
pub(super) fn path(dir: &Path, tree: &Path, arch: Option<&str>) -> PathBuf {
    let full = std::fs::canonicalize(tree).unwrap_or_else(|_| tree.to_owned());
    let mut h = hasher(0x7472_6565);
    h.write(full.as_os_str().as_encoded_bytes());
    let stem: String = full
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() || "+-._".contains(c) {
            true => c,
            false => '_',
        })
        .take(64)
        .collect();
    dir.join(format!(
        "evidence-{stem}-{}-{:016x}.idx",
        arch.unwrap_or("all"),
        h.finish()
    ))
}

/// An I/O error on `what`, said as the index's.
fn io(what: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::Write {
        what: "evidence index",
        path: Some(what.to_owned()),
        reason: e.to_string(),
    }
}

fn hasher(seed: u64) -> impl Hasher {
    FixedState::with_seed(seed).build_hasher()
}

/// The key an index of `files` of `tree` must carry to be trusted.
pub(super) fn key(tree: &Path, files: &[PathBuf], arch: Option<&str>, at: &IndexAt) -> u64 {
    let mut h = hasher(0x6b65_7973);
    h.write(arch.unwrap_or("").as_bytes());
    h.write(at.build.as_bytes());
    // cachelint itself: another binary may read the source differently.
    let exe = std::env::current_exe().ok();
    h.write(
        exe.and_then(|e| crate::input::stamp(&e))
            .unwrap_or_default()
            .as_bytes(),
    );
    for rel in files {
        h.write(rel.as_os_str().as_encoded_bytes());
        h.write(
            crate::input::stamp(&tree.join(rel))
                .unwrap_or_default()
                .as_bytes(),
        );
    }
    h.finish()
}

/// The declarations about `types` in `index`; `None` when a part is
/// unreadable.
pub(super) fn read(index: &Index, types: &[String]) -> Option<Vec<Declaration>> {
    scan(index, Wanted::Only(types), &|_| true)
}

/// An open index that carries the key it was opened with: its file and
/// its table. Every read goes through this handle, so another run that
/// replaces the file (an index of the same tree for another build or
/// binary) changes nothing for this one.
pub(super) struct Index {
    file: File,
    parts: Vec<PartAt>,
}

/// Where one struct's part is in an index: (struct, offset, length, how
/// stored).
type PartAt = (String, u64, u64, String);

/// The index at `at`, open, when it is there and carries `key`.
pub(super) fn open(at: &Path, key: u64) -> Option<Index> {
    let file = File::open(at).ok()?;
    let parts = table(&file, key)?;
    Some(Index { file, parts })
}

/// The header of an index of `tree` that carries `key`.
fn header(key: u64, tree: &Path) -> Vec<u8> {
    let tree = tree.as_os_str().as_encoded_bytes();
    let mut head = MAGIC.to_vec();
    head.extend(key.to_le_bytes());
    head.extend((tree.len() as u32).to_le_bytes());
    head.extend(tree);
    head
}

/// The key and tree path in the header of the index `file`, when it is
/// an index of this format.
fn read_header(file: &File) -> Option<(u64, PathBuf)> {
    let mut head = [0u8; MAGIC.len() + 12];
    file.read_exact_at(&mut head, 0).ok()?;
    if &head[..MAGIC.len()] != MAGIC {
        return None;
    }
    let key = u64::from_le_bytes(head[MAGIC.len()..MAGIC.len() + 8].try_into().ok()?);
    let n = u32::from_le_bytes(head[MAGIC.len() + 8..].try_into().ok()?);
    if n > MAX_TREE_PATH {
        return None;
    }
    let mut tree = vec![0u8; n as usize];
    file.read_exact_at(&mut tree, head.len() as u64).ok()?;
    Some((key, PathBuf::from(std::ffi::OsString::from_vec(tree))))
}

/// The table of the index `file`, when it carries `key`.
fn table(file: &File, key: u64) -> Option<Vec<PartAt>> {
    if read_header(file)?.0 != key {
        return None;
    }
    let len = file.metadata().ok()?.len();
    let mut foot = [0u8; 16];
    file.read_exact_at(&mut foot, len.checked_sub(16)?).ok()?;
    let table_at = u64::from_le_bytes(foot[..8].try_into().ok()?);
    let table_len = u64::from_le_bytes(foot[8..].try_into().ok()?);
    if table_len > MAX_TABLE_BYTES || table_at.checked_add(table_len)? > len - 16 {
        return None;
    }
    let mut text = vec![0u8; usize::try_from(table_len).ok()?];
    file.read_exact_at(&mut text, table_at).ok()?;
    let text = String::from_utf8(text).ok()?;
    let mut parts = Vec::new();
    for line in text.lines() {
        let mut fields = line.split('\t');
        let (Some(ty), Some(at), Some(n), Some(how)) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return None;
        };
        let (at, n): (u64, u64) = (at.parse().ok()?, n.parse().ok()?);
        if n > MAX_PART_BYTES || at.checked_add(n)? > table_at {
            return None;
        }
        parts.push((ty.to_owned(), at, n, how.to_owned()));
    }
    Some(parts)
}

/// The declarations about the `wanted` structs in `index` whose stored
/// line `keep` accepts (a cheap test before the line is parsed); `None`
/// when a part is unreadable. Parts are read in parallel, each with one
/// positioned read.
pub(super) fn scan(
    index: &Index,
    wanted: Wanted<'_>,
    keep: &(dyn Fn(&str) -> bool + Sync),
) -> Option<Vec<Declaration>> {
    let file = &index.file;
    let parts: Vec<&PartAt> = index
        .parts
        .iter()
        .filter(|(ty, ..)| wanted.contains(ty))
        .collect();
    let chunks: Vec<Option<Vec<Declaration>>> = parts
        .par_chunks(256)
        .map(|chunk| {
            let mut out = Vec::new();
            for (_, offset, n, how) in chunk {
                let mut stored = vec![0u8; usize::try_from(*n).ok()?];
                file.read_exact_at(&mut stored, *offset).ok()?;
                let stored = &stored[..];
                let part: Box<dyn Read + '_> = match how.as_str() {
                    "raw" => Box::new(stored),
                    "deflate" => Box::new(flate2::read::DeflateDecoder::new(stored)),
                    _ => return None,
                };
                for line in BufReader::new(part).lines() {
                    let line = line.ok()?;
                    if !keep(&line) {
                        continue;
                    }
                    let mut d: Declaration = serde_json::from_str(&line).ok()?;
                    project(&mut d, wanted);
                    out.push(d);
                }
            }
            Some(out)
        })
        .collect();
    let mut out: Vec<Declaration> = Vec::new();
    for c in chunks {
        out.extend(c?);
    }
    out.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    Some(out)
}

/// The struct and member path a stored line is about, read off its
/// start (`{"ty":"sock","path":"sk_napi_id",...`) without parsing it.
pub(super) fn ty_path(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("{\"ty\":\"")?;
    let (ty, rest) = rest.split_once('"')?;
    let rest = rest.strip_prefix(",\"path\":\"")?;
    let (path, _) = rest.split_once('"')?;
    Some((ty, path))
}

/// A lock held at a write, as a reading about `types` names it: of the
/// structs its expression goes through, the first of them (see
/// [`super::lock_member`]).
fn project(d: &mut Declaration, wanted: Wanted<'_>) {
    if let Said::Written(_, held) = &mut d.said {
        for h in held {
            if !h.chain.is_empty() {
                h.member = super::lock_member(&h.chain, |ty| wanted.contains(ty));
            }
        }
    }
}

/// Builds the index of `files` of `tree` at `at`, resolving accesses
/// through `build`, unless another run built it meanwhile.
pub(super) fn build(
    tree: &Path,
    files: &[PathBuf],
    build: &dyn Types,
    at: &Path,
    key: u64,
    progress: &mut Progress,
) -> Result<Option<Index>> {
    let dir = at.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let lock_path = at.with_extension("lock");
    let lock = File::create(&lock_path).map_err(io(&lock_path))?;
    lock.lock().map_err(io(&lock_path))?;
    if let Some(index) = open(at, key) {
        return Ok(Some(index));
    }
    sweep(dir, at);
    let wrappers = wrappers(tree, files, build, progress)?;
    let scratch = at.with_extension(format!("shards{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(io(&scratch))?;
    let full = std::fs::canonicalize(tree).unwrap_or_else(|_| tree.to_owned());
    let head = header(key, &full);
    let result = walk_and_write(tree, files, build, &wrappers, at, &head, &scratch, progress);
    let _ = std::fs::remove_dir_all(&scratch);
    // Opened while the lock is held: a run waiting to build another key's
    // index replaces the file only after this one has it open.
    result.map(|()| open(at, key))
}

/// Removes from `dir` what runs that were stopped while building an
/// index left (its shards and its unfinished file: hundreds of MB for a
/// kernel tree) and the indexes of trees that are no longer there (a
/// temporary checkout, a removed worktree). `own` is the index this run
/// builds, whose lock it holds; another index is touched only while this
/// run holds its lock, so none that a run is building is (a run reading
/// a removed index reads on through its open handle).
fn sweep(dir: &Path, own: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    for stem in names
        .iter()
        .filter(|n| n.starts_with("evidence-"))
        .filter_map(|n| n.strip_suffix(".lock"))
    {
        let index = dir.join(format!("{stem}.idx"));
        let mut _held = None;
        if index != own {
            let Ok(lock) = File::open(dir.join(format!("{stem}.lock"))) else {
                continue;
            };
            if lock.try_lock().is_err() {
                continue;
            }
            _held = Some(lock);
            let tree = File::open(&index).ok().and_then(|f| read_header(&f));
            if tree.is_some_and(|(_, tree)| !tree.is_dir()) {
                let _ = std::fs::remove_file(&index);
            }
        }
        for name in &names {
            let Some(rest) = name.strip_prefix(stem) else {
                continue;
            };
            let pid = |kind: &str| {
                rest.strip_prefix(kind)
                    .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            };
            if pid(".shards") {
                let _ = std::fs::remove_dir_all(dir.join(name));
            } else if pid(".tmp") {
                let _ = std::fs::remove_file(dir.join(name));
            }
        }
    }
}

/// The lock wrappers of the tree's headers.
fn wrappers(
    tree: &Path,
    files: &[PathBuf],
    build: &dyn Types,
    progress: &mut Progress,
) -> Result<Wrappers> {
    let headers: Vec<&PathBuf> = files.iter().filter(|rel| super::is_header(rel)).collect();
    progress.start("index: lock wrappers", headers.len() * WRAPPER_ROUNDS);
    let mut wrappers = Wrappers::default();
    for _ in 0..WRAPPER_ROUNDS {
        wrappers = headers
            .par_iter()
            .map(|rel| -> Result<Wrappers> {
                let text = text_of(tree, rel)?;
                progress.step();
                Ok(super::wrappers_in(&text, build, &wrappers))
            })
            .try_reduce(Wrappers::default, |a, b| Ok(a.merge(b)))?;
    }
    progress.done(&format!(
        "index: read {} headers for lock wrappers",
        headers.len()
    ));
    Ok(wrappers)
}

fn text_of(tree: &Path, rel: &Path) -> Result<String> {
    let bytes = crate::input::read_limited(&tree.join(rel), 64 << 20, "a C file")?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Which shard struct `ty`'s declarations go to.
fn shard_of(ty: &str) -> usize {
    let mut h = hasher(0x7368_6172);
    h.write(ty.as_bytes());
    (h.finish() % SHARDS as u64) as usize
}

/// The shard files `path(i)`, created empty.
fn open_shards(path: &dyn Fn(usize) -> PathBuf) -> Result<Vec<Mutex<BufWriter<File>>>> {
    (0..SHARDS)
        .map(|i| {
            let p = path(i);
            File::create(&p)
                .map(|f| Mutex::new(BufWriter::new(f)))
                .map_err(io(&p))
        })
        .collect()
}

/// Appends `declarations` to `shards` (files `path(i)`) as JSON lines,
/// each to its struct's shard.
fn write_declarations(
    declarations: &[Declaration],
    shards: &[Mutex<BufWriter<File>>],
    path: &(dyn Fn(usize) -> PathBuf + Sync),
) -> Result<()> {
    let mut per: Vec<Vec<u8>> = vec![Vec::new(); SHARDS];
    for d in declarations {
        let buf = &mut per[shard_of(&d.ty)];
        serde_json::to_writer(&mut *buf, d).map_err(|e| Error::Write {
            what: "evidence index",
            path: None,
            reason: e.to_string(),
        })?;
        buf.push(b'\n');
    }
    for (i, buf) in per.iter().enumerate().filter(|(_, b)| !b.is_empty()) {
        let mut shard = shards[i].lock().unwrap_or_else(|p| p.into_inner());
        shard.write_all(buf).map_err(io(&path(i)))?;
    }
    Ok(())
}

/// Flushes and closes `shards` (files `path(i)`).
fn flush(shards: Vec<Mutex<BufWriter<File>>>, path: &dyn Fn(usize) -> PathBuf) -> Result<()> {
    for (i, shard) in shards.into_iter().enumerate() {
        let mut shard = shard.into_inner().unwrap_or_else(|p| p.into_inner());
        shard.flush().map_err(io(&path(i)))?;
    }
    Ok(())
}

/// Walks every file into the shards, then writes each struct's part.
#[allow(clippy::too_many_arguments)]
fn walk_and_write(
    tree: &Path,
    files: &[PathBuf],
    build: &dyn Types,
    wrappers: &Wrappers,
    at: &Path,
    head: &[u8],
    scratch: &Path,
    progress: &mut Progress,
) -> Result<()> {
    let shard_path = |i: usize| scratch.join(format!("{i}.jsonl"));
    let shards = open_shards(&shard_path)?;
    progress.start("index: walking every file", files.len());
    let mut read: Vec<(Walked, Wrappers)> = files
        .par_iter()
        .map(|rel| -> Result<_> {
            let text = text_of(tree, rel)?;
            let mut bodies = super::read_file(&text, rel, Wanted::All, build, wrappers);
            write_declarations(&bodies.declarations, &shards, &shard_path)?;
            progress.step();
            let exported = std::mem::take(&mut bodies.exported);
            Ok((Walked::of(bodies), exported))
        })
        .collect::<Result<_>>()?;
    flush(shards, &shard_path)?;
    progress.done(&format!(
        "index: walked the functions of {} files",
        files.len()
    ));
    // The wrappers `.c` files export, then the files that call them,
    // walked again into shards of their own.
    let exported = exported::merged(read.iter_mut().map(|(_, e)| std::mem::take(e)));
    progress.start(
        "index: lock wrappers of .c files, and the headers calling them",
        1,
    );
    let again = exported::headers_with(wrappers, &exported, |known, changed| {
        files
            .par_iter()
            .filter(|rel| super::is_header(rel))
            .map(|rel| -> Result<Wrappers> {
                let text = text_of(tree, rel)?;
                Ok(match exported::mentions(&text, changed) {
                    true => super::wrappers_in(&text, build, known),
                    false => Wrappers::default(),
                })
            })
            .try_reduce(Wrappers::default, |a, b| Ok(a.merge(b)))
    })?;
    let changed = again.changed_from(wrappers);
    progress.done(&format!(
        "index: {} lock wrappers found or changed by those of .c files",
        changed.len()
    ));
    let mut read: Vec<Walked> = read.into_iter().map(|(walked, _)| walked).collect();
    let rereading: Vec<usize> = (0..read.len())
        .filter(|&i| exported::calls_changed(&read[i].calls, &read[i].defined, &changed))
        .collect();
    let again_path = |i: usize| scratch.join(format!("{i}.again.jsonl"));
    let again_shards = open_shards(&again_path)?;
    progress.start(
        "index: walking again what calls other files' wrappers",
        rereading.len(),
    );
    let reread: Vec<(usize, Walked)> = rereading
        .par_iter()
        .map(|&i| -> Result<_> {
            let rel = &files[i];
            let text = text_of(tree, rel)?;
            let bodies = super::read_file(&text, rel, Wanted::All, build, &again);
            write_declarations(&bodies.declarations, &again_shards, &again_path)?;
            progress.step();
            Ok((i, Walked::of(bodies)))
        })
        .collect::<Result<_>>()?;
    flush(again_shards, &again_path)?;
    let walked_again: HashSet<&Path> = rereading.iter().map(|&i| files[i].as_path()).collect();
    for (i, walked) in reread {
        read[i] = walked;
    }
    progress.done(&format!(
        "index: walked again {} files that call other files' lock wrappers",
        rereading.len()
    ));
    progress.start("index: callers, construction, reach", 1);
    let defined = super::callers::definitions(
        files
            .iter()
            .zip(&read)
            .map(|(rel, w)| (super::is_header(rel), &w.defined[..], &w.external[..])),
    );
    let mut graph = Graph::default();
    for (rel, w) in files.iter().zip(read) {
        graph.add(rel, w, &defined);
    }
    let summary = Summary::of(&graph, &defined);
    drop(graph);
    progress.done("index: read the calls for callers' locks, construction and reach");
    progress.start("index: writing each struct's part", SHARDS);
    let tmp = at.with_extension(format!("tmp{}", std::process::id()));
    let paths = |i: usize| [shard_path(i), again_path(i)];
    let written = write_parts(
        &tmp,
        head,
        SHARDS,
        &paths,
        &walked_again,
        &summary,
        progress,
    );
    let written = written.and_then(|structs| {
        std::fs::rename(&tmp, at).map_err(io(at))?;
        Ok(structs)
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    progress.done(&format!(
        "index: wrote the parts of {} structs to {}",
        written?,
        at.display()
    ));
    Ok(())
}

/// Writes the index to `tmp`: each shard's structs' parts (shards read
/// in parallel; the parts, compressed, are a few tens of MB for a kernel
/// tree), then the table. Returns how many structs it holds.
fn write_parts(
    tmp: &Path,
    head: &[u8],
    shards: usize,
    shard_paths: &(dyn Fn(usize) -> [PathBuf; 2] + Sync),
    walked_again: &HashSet<&Path>,
    summary: &Summary,
    progress: &Progress,
) -> Result<usize> {
    let parts: Vec<Vec<(String, Part)>> = (0..shards)
        .into_par_iter()
        .map(|i| {
            let parts = shard_parts(&shard_paths(i), walked_again, summary);
            progress.step();
            parts
        })
        .collect::<Result<_>>()?;
    let mut out = BufWriter::new(File::create(tmp).map_err(io(tmp))?);
    out.write_all(head).map_err(io(tmp))?;
    let mut offset = head.len() as u64;
    let mut table = String::new();
    let mut structs = 0;
    for (ty, part) in parts.into_iter().flatten() {
        let (bytes, how) = match &part {
            Part::Raw(b) => (b, "raw"),
            Part::Deflated(b) => (b, "deflate"),
        };
        out.write_all(bytes).map_err(io(tmp))?;
        table.push_str(&format!("{ty}\t{offset}\t{}\t{how}\n", bytes.len()));
        offset += bytes.len() as u64;
        structs += 1;
    }
    out.write_all(table.as_bytes()).map_err(io(tmp))?;
    out.write_all(&offset.to_le_bytes()).map_err(io(tmp))?;
    out.write_all(&(table.len() as u64).to_le_bytes())
        .map_err(io(tmp))?;
    out.flush().map_err(io(tmp))?;
    Ok(structs)
}

/// The parts of the structs of one shard: each struct's declarations
/// with `summary` applied, in file and line order, as compressed JSON
/// lines. The shard is two files: the first walk's, whose declarations
/// of the files `walked_again` are dropped, and the second walk's.
fn shard_parts(
    paths: &[PathBuf; 2],
    walked_again: &HashSet<&Path>,
    summary: &Summary,
) -> Result<Vec<(String, Part)>> {
    let mut by_type: BTreeMap<String, Vec<Declaration>> = BTreeMap::new();
    for (walk, path) in paths.iter().enumerate() {
        let file = File::open(path).map_err(io(path))?;
        for line in BufReader::new(file).lines() {
            let d: Declaration =
                serde_json::from_str(&line.map_err(io(path))?).map_err(|e| Error::Write {
                    what: "evidence index",
                    path: Some(path.to_owned()),
                    reason: e.to_string(),
                })?;
            if walk == 0 && walked_again.contains(d.file.as_path()) {
                continue;
            }
            by_type.entry(d.ty.clone()).or_default().push(d);
        }
    }
    let path = &paths[0];
    let mut out = Vec::with_capacity(by_type.len());
    for (ty, mut ds) in by_type {
        summary.apply(&mut ds);
        ds.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
        let mut raw = Vec::new();
        for d in &ds {
            serde_json::to_writer(&mut raw, d).map_err(|e| Error::Write {
                what: "evidence index",
                path: None,
                reason: e.to_string(),
            })?;
            raw.push(b'\n');
        }
        // A compressor's state is larger than most parts (of the 89,000
        // names of a kernel tree, most have a declaration or two).
        if raw.len() < MIN_COMPRESSED {
            out.push((ty, Part::Raw(raw)));
            continue;
        }
        let mut part = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        part.write_all(&raw).map_err(io(path))?;
        out.push((ty, Part::Deflated(part.finish().map_err(io(path))?)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::{Declaration, IndexAt, Said, Types, declarations};
    use std::path::{Path, PathBuf};

    /// `pglist_data` embeds an `lruvec`, whose lock guards `lru_size`.
    struct Mm;
    impl Types for Mm {
        fn member_type(&self, ty: &str, member: &str) -> Option<String> {
            match (ty, member) {
                ("pglist_data", "__lruvec") => Some("lruvec".into()),
                _ => None,
            }
        }
        fn canonical(&self, ty: &str) -> String {
            ty.to_owned()
        }
    }

    const HEADER: &str = "struct lruvec { int lru_lock; long lru_size; };\n\
        struct pglist_data { struct lruvec __lruvec; long flags; };\n\
        static inline void lruvec_lock(struct lruvec *lruvec)\n\
        {\n\tspin_lock(&lruvec->lru_lock);\n}\n\
        static inline void node_lock_bh(struct pglist_data *pgdat)\n\
        {\n\tlocal_bh_disable();\n\tnode_lock(pgdat);\n}\n";

    /// A `.c` file's wrapper for other files, which the header's
    /// `node_lock_bh()` calls. It spells both structs: a reading of one
    /// reads only the files that do, the index every file.
    const NODE: &str = "#include \"mm.h\"\n\
        void node_lock(struct pglist_data *pgdat)\n\
        {\n\tspin_lock(&pgdat->__lruvec.lru_lock);\n}\n\
        struct lruvec *node_lruvec(struct pglist_data *pgdat)\n\
        {\n\treturn &pgdat->__lruvec;\n}\n";

    const CODE: &str = "#include \"mm.h\"\n\
        static void account(struct lruvec *lruvec, long n)\n\
        {\n\tlruvec->lru_size += n;\n}\n\
        void node_add(struct pglist_data *pgdat, long n)\n\
        {\n\tspin_lock(&pgdat->__lruvec.lru_lock);\n\
        \tpgdat->__lruvec.lru_size += n;\n\taccount(&pgdat->__lruvec, n);\n\
        \tspin_unlock(&pgdat->__lruvec.lru_lock);\n\
        \tWRITE_ONCE(pgdat->flags, 1);\n}\n\
        void lru_add(struct lruvec *lruvec)\n\
        {\n\tlruvec_lock(lruvec);\n\tlruvec->lru_size++;\n\
        \tif (READ_ONCE(lruvec->lru_size) > 4)\n\t\tlruvec->lru_size = 0;\n}\n\
        void node_set(struct pglist_data *pgdat)\n\
        {\n\tnode_lock(pgdat);\n\tpgdat->flags = 2;\n}\n\
        void node_set_bh(struct pglist_data *pgdat)\n\
        {\n\tnode_lock_bh(pgdat);\n\tpgdat->flags = 3;\n}\n";

    fn tree(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "cachelint-evidence-index-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("tree/mm")).unwrap();
        std::fs::write(dir.join("tree/mm/mm.h"), HEADER).unwrap();
        std::fs::write(dir.join("tree/mm/lru.c"), CODE).unwrap();
        std::fs::write(dir.join("tree/mm/node.c"), NODE).unwrap();
        dir
    }

    fn read(tree: &Path, types: &[&str], index: Option<&IndexAt>) -> Vec<Declaration> {
        let types: Vec<String> = types.iter().map(|t| t.to_string()).collect();
        declarations(tree, &types, &Mm, None, index).unwrap()
    }

    #[test]
    fn a_build_sweeps_what_stopped_runs_left_and_the_indexes_of_trees_gone() {
        let dir = tree("sweep");
        let cache = dir.join("cache");
        std::fs::create_dir_all(&cache).unwrap();
        let at =
            |stem: &str, ext: &str| cache.join(format!("evidence-{stem}-x86-00000000000000{ext}"));
        // Each stem with its lock, an index of a tree and a stopped run's
        // shards and unfinished index.
        let live_tree = dir.join("tree");
        for (stem, tree) in [
            ("own", &live_tree),
            ("gone", &dir.join("no-such-tree")),
            ("busy", &dir.join("no-such-tree")),
            ("kept", &live_tree),
        ] {
            std::fs::write(at(stem, "01.lock"), b"").unwrap();
            std::fs::write(at(stem, "01.idx"), super::header(7, tree)).unwrap();
            std::fs::create_dir_all(at(stem, "01.shards4242")).unwrap();
            std::fs::write(at(stem, "01.shards4242").join("0.jsonl"), b"{}").unwrap();
            std::fs::write(at(stem, "01.tmp4242"), b"part").unwrap();
        }
        // Not a stopped run's: no pid.
        std::fs::write(at("kept", "01.tmpfile"), b"mine").unwrap();
        // Another run holds the lock of `busy`: it may be building it.
        let busy = std::fs::File::open(at("busy", "01.lock")).unwrap();
        busy.lock().unwrap();
        super::sweep(&cache, &at("own", "01.idx"));
        let there = |stem: &str, ext: &str| at(stem, ext).exists();
        for stem in ["own", "gone", "kept"] {
            assert!(!there(stem, "01.shards4242"), "{stem}");
            assert!(!there(stem, "01.tmp4242"), "{stem}");
        }
        assert!(there("busy", "01.shards4242") && there("busy", "01.tmp4242"));
        // Only the index of a tree gone whose lock was free is removed;
        // this run's own index is its own business.
        assert!(!there("gone", "01.idx"));
        assert!(there("busy", "01.idx") && there("kept", "01.idx") && there("own", "01.idx"));
        assert!(there("kept", "01.tmpfile"));
        assert!(there("gone", "01.lock"));
        drop(busy);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_draft_from_the_index_reads_what_a_reading_of_the_struct_reads() {
        let dir = tree("same");
        let at = IndexAt {
            dir: dir.join("cache"),
            build: "vmlinux 1 2".into(),
        };
        let src = dir.join("tree");
        // A run stopped while building this index left its shards.
        let stopped = super::path(&at.dir, &src, None).with_extension("shards999999");
        std::fs::create_dir_all(&stopped).unwrap();
        for types in [
            &["lruvec"][..],
            &["pglist_data"],
            &["lruvec", "pglist_data"],
            &["absent"],
        ] {
            let direct = read(&src, types, None);
            let indexed = read(&src, types, Some(&at));
            assert_eq!(direct, indexed, "{types:?}");
            if types[0] == "lruvec" {
                // The lock of a write through the node is named as the
                // reading about lruvec names it, and the callers' lock and
                // the wrapper's are there.
                let text = format!("{indexed:?}");
                assert!(
                    text.contains("member: Some((\"lruvec\", \"lru_lock\"))"),
                    "{text}"
                );
                assert!(text.contains("in every caller of account"), "{text}");
                assert!(text.contains("how: \"lruvec_lock\""), "{text}");
            }
            if types[0] == "pglist_data" {
                // node.c's wrapper, called from lru.c directly and through
                // the header's.
                let under: Vec<(usize, &str)> = indexed
                    .iter()
                    .filter(|d| d.path == "flags")
                    .filter_map(|d| match &d.said {
                        Said::Written(_, held) => Some((d.line, held.first()?.how.as_str())),
                        _ => None,
                    })
                    .collect();
                assert_eq!(
                    under,
                    [(24, "node_lock"), (29, "node_lock_bh")],
                    "{indexed:#?}"
                );
            }
        }
        let file = super::path(&at.dir, &src, None);
        assert!(file.is_file());
        assert!(!stopped.exists(), "a build sweeps what stopped runs left");
        // A corrupt index is rebuilt, a changed file makes it stale.
        let bytes = std::fs::read(&file).unwrap();
        std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
        assert_eq!(
            read(&src, &["lruvec"], Some(&at)),
            read(&src, &["lruvec"], None)
        );
        std::fs::write(
            src.join("mm/lru.c"),
            CODE.replace("lru_size++", "lru_size--"),
        )
        .unwrap();
        let key = super::key(
            &src,
            &[
                PathBuf::from("mm/lru.c"),
                PathBuf::from("mm/mm.h"),
                PathBuf::from("mm/node.c"),
            ],
            None,
            &at,
        );
        assert!(super::open(&file, key).is_none());
        assert_eq!(
            read(&src, &["lruvec"], Some(&at)),
            read(&src, &["lruvec"], None)
        );
        assert!(super::open(&file, key).is_some());
        // Another run replacing the file (an index of the same tree for
        // another build) after this one opened it: reads go on through
        // the handle, not the path.
        let open = super::open(&file, key).unwrap();
        let other = file.with_extension("other");
        std::fs::write(&other, b"cachelint-evidence-3\nanother key").unwrap();
        std::fs::rename(&other, &file).unwrap();
        assert!(super::open(&file, key).is_none());
        let types = ["lruvec".to_owned()];
        assert_eq!(
            super::read(&open, &types),
            Some(read(&src, &["lruvec"], None))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
