//! The headers of a tree that declare the types a run wants, and those
//! that embed the types whose roots it discovers: what the probe
//! includes.
//!
//! The public headers (`include/`, `arch/ARCH/include/`) are searched
//! first and included as `<linux/mmzone.h>`; a type none of them declares
//! is searched in the rest of the tree, and its private header (such as
//! `kernel/sched/sched.h`) included by its path. Other arches, tools,
//! scripts, samples and documentation are never searched.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::Variant;

/// Largest header read (amdgpu's register headers are 8 MB and more).
const MAX_HEADER: u64 = 16 << 20;

/// How many levels of embedding structs are followed up to the roots.
const EMBED_LEVELS: usize = 4;

/// Most headers included for the roots' sake.
const MAX_EMBEDDERS: usize = 48;

/// One header the probe includes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Include {
    /// A public header, by its name under an include directory
    /// (`linux/mmzone.h`).
    Public(String),
    /// A private header, by its path in the tree.
    Private(PathBuf),
}

/// The include lines a private header needs before it: those that come
/// before it in the first C file of its directory (in name order) that
/// includes it, quoted ones made paths in that directory. Private headers
/// are written for their directory's C files, not to stand alone
/// (`kernel/sched/sched.h` uses what `build_policy.c` includes first).
pub(super) fn context_of(header: &Path) -> Vec<String> {
    let (Some(dir), Some(name)) = (header.parent(), header.file_name()) else {
        return Vec::new();
    };
    let wanted = format!("\"{}\"", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut sources: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    sources.sort();
    for source in sources {
        let Ok(bytes) = crate::input::read_limited(&source, MAX_HEADER, "a C file") else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let mut before = Vec::new();
        for line in text.lines() {
            let Some(target) = line.trim().strip_prefix("#include").map(str::trim) else {
                continue;
            };
            if target == wanted {
                return before;
            }
            if target.starts_with('<') {
                before.push(format!("#include {target}"));
            } else if let Some(quoted) = target.strip_prefix('"').and_then(|t| t.strip_suffix('"'))
                && quoted.ends_with(".h")
            {
                before.push(format!("#include \"{}\"", dir.join(quoted).display()));
            }
        }
    }
    Vec::new()
}

/// What the search found.
#[derive(Debug, Default)]
pub(super) struct Includes {
    /// The headers to include, public ones first.
    pub includes: Vec<Include>,
    /// The names no header declares.
    pub missing: Vec<String>,
    /// Names declared by several headers, and the one taken.
    pub ambiguous: Vec<(String, Vec<PathBuf>)>,
}

/// The headers of `v`'s tree to include for `names`, and for the structs
/// embedding `discover` (followed up several levels).
pub(super) fn find(v: &Variant, names: &[String], discover: &[String]) -> Includes {
    let public = public_headers(v);
    let mut found = Includes::default();
    let mut chosen: BTreeSet<Include> = BTreeSet::new();
    let mut private: Option<Vec<PathBuf>> = None;
    for name in names {
        let mut hits = declaring(&public, name);
        if hits.is_empty() {
            let private = private.get_or_insert_with(|| private_headers(v));
            hits = declaring(private, name);
        }
        match hits.len() {
            0 => found.missing.push(name.clone()),
            _ => {
                hits.sort_by_key(|p| rank(v, p));
                if hits.len() > 1 && rank(v, &hits[0]) == rank(v, &hits[1]) {
                    found.ambiguous.push((name.clone(), hits.clone()));
                }
                chosen.insert(include_of(v, &hits[0]));
            }
        }
    }
    // The structs embedding the discovered types, level by level, among
    // the public headers.
    let mut level: Vec<String> = discover.to_vec();
    let mut seen: BTreeSet<String> = level.iter().cloned().collect();
    let mut embedders = 0;
    for _ in 0..EMBED_LEVELS {
        let next: Vec<(String, PathBuf)> = level
            .par_iter()
            .flat_map(|name| embedding(&public, name))
            .collect();
        level = Vec::new();
        for (outer, file) in next {
            if embedders < MAX_EMBEDDERS && chosen.insert(include_of(v, &file)) {
                embedders += 1;
            }
            if seen.insert(outer.clone()) {
                level.push(outer);
            }
        }
        if level.is_empty() {
            break;
        }
    }
    let (public, private): (Vec<Include>, Vec<Include>) = chosen
        .into_iter()
        .partition(|i| matches!(i, Include::Public(_)));
    found.includes = public.into_iter().chain(private).collect();
    found
}

/// The include directories of `v`, in the compiler's order.
fn include_dirs(v: &Variant) -> [PathBuf; 2] {
    [
        v.tree.join("arch").join(&v.srcarch).join("include"),
        v.tree.join("include"),
    ]
}

/// How `file` is included.
fn include_of(v: &Variant, file: &Path) -> Include {
    include_dirs(v)
        .iter()
        .find_map(|dir| file.strip_prefix(dir).ok())
        .map_or_else(
            || Include::Private(file.to_owned()),
            |rel| Include::Public(rel.to_string_lossy().into_owned()),
        )
}

/// The order in which same-named declarations are preferred: the arch's
/// own headers, then `include/linux` and the other public headers, the
/// user-space API and generic fallbacks last.
fn rank(v: &Variant, file: &Path) -> u8 {
    let [arch, include] = include_dirs(v);
    match (file.strip_prefix(&arch), file.strip_prefix(&include)) {
        (Ok(rel), _) if !rel.starts_with("uapi") => 0,
        (_, Ok(rel)) if rel.starts_with("linux") || rel.starts_with("net") => 1,
        (_, Ok(rel)) if !rel.starts_with("uapi") && !rel.starts_with("asm-generic") => 2,
        (Ok(_), _) => 3,
        (_, Ok(rel)) if rel.starts_with("uapi") => 4,
        (_, Ok(_)) => 5,
        _ => 6,
    }
}

/// The header of `v`'s tree that `file` names: a path in the tree, or
/// the end of a public header's path (`mmzone.h`, `linux/mmzone.h`), as
/// `NAME@FILE` names a declaration file.
pub(super) fn by_suffix(v: &Variant, file: &str) -> Option<PathBuf> {
    let direct = v.tree.join(file);
    if direct.is_file() {
        return Some(direct);
    }
    let suffix = format!("/{}", file.trim_start_matches('/'));
    let mut hits: Vec<PathBuf> = public_headers(v)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(&suffix))
        .collect();
    hits.sort_by_key(|p| rank(v, p));
    hits.into_iter().next()
}

/// Every `.h` file under the public include directories.
fn public_headers(v: &Variant) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in include_dirs(v) {
        walk(&dir, &mut files, &|_| true);
    }
    files
}

/// Every `.h` file of the tree outside the public include directories,
/// other arches, and the directories that hold no kernel headers.
fn private_headers(v: &Variant) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(&v.tree) else {
        return files;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if !path.is_dir()
            || name == "include"
            || crate::csource::NO_KERNEL_CODE.contains(&&*name)
            || name.starts_with('.')
        {
            continue;
        }
        if name == "arch" {
            let own = path.join(&v.srcarch);
            let include = own.join("include");
            walk(&own, &mut files, &|p| !p.starts_with(&include));
        } else {
            walk(&path, &mut files, &|_| true);
        }
    }
    files
}

/// Adds the `.h` files under `dir` that `keep` keeps.
fn walk(dir: &Path, files: &mut Vec<PathBuf>, keep: &dyn Fn(&Path) -> bool) {
    files.extend(crate::csource::files_under(
        dir,
        keep,
        &|p| p.extension().is_some_and(|e| e == "h") && keep(p),
        usize::MAX,
    ));
}

/// The files of `files` that define struct, union or typedef `name`.
fn declaring(files: &[PathBuf], name: &str) -> Vec<PathBuf> {
    let finder = memchr::memmem::Finder::new(name.as_bytes());
    files
        .par_iter()
        .filter(|f| {
            let Ok(bytes) = crate::input::read_limited(f, MAX_HEADER, "a header") else {
                return false;
            };
            finder.find(&bytes).is_some() && defines(&String::from_utf8_lossy(&bytes), name)
        })
        .cloned()
        .collect()
}

/// True when C text `text` defines struct or union `name` (`struct NAME {`
/// at the start of a line, the brace maybe on the next) or typedef `name`
/// (`typedef ... NAME;`, or `} NAME;` closing a typedef'd body).
fn defines(text: &str, name: &str) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    lines.iter().enumerate().any(|(i, line)| {
        let definition = line.strip_prefix("typedef ").unwrap_or(line);
        for tag in ["struct ", "union "] {
            if let Some(rest) = definition.strip_prefix(tag) {
                let rest = rest.trim_start();
                if let Some(after) = rest.strip_prefix(name)
                    && !after.starts_with(is_ident_char)
                {
                    let after = after.trim();
                    if after.starts_with('{') {
                        return true;
                    }
                    if after.is_empty()
                        && lines
                            .get(i + 1)
                            .is_some_and(|n| n.trim_start().starts_with('{'))
                    {
                        return true;
                    }
                }
            }
        }
        let trimmed = line.trim_end();
        let ends_with_name = trimmed
            .strip_suffix(';')
            .and_then(|t| t.trim_end().strip_suffix(name))
            .is_some_and(|before| !before.ends_with(is_ident_char));
        ends_with_name && (line.starts_with("typedef ") || line.starts_with('}'))
    })
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The top-level structs and unions of `files` that embed struct or union
/// `name` (a member of that type, not a pointer), with their file.
fn embedding(files: &[PathBuf], name: &str) -> Vec<(String, PathBuf)> {
    let needle = format!("struct {name}");
    let other = format!("union {name}");
    let (a, b) = (
        memchr::memmem::Finder::new(needle.as_bytes()),
        memchr::memmem::Finder::new(other.as_bytes()),
    );
    files
        .par_iter()
        .filter_map(|f| {
            let bytes = crate::input::read_limited(f, MAX_HEADER, "a header").ok()?;
            if a.find(&bytes).is_none() && b.find(&bytes).is_none() {
                return None;
            }
            let text = String::from_utf8_lossy(&bytes);
            Some(
                embedders_in(&text, name)
                    .into_iter()
                    .map(|outer| (outer, f.clone()))
                    .collect::<Vec<_>>(),
            )
        })
        .flatten()
        .collect()
}

/// The names of the top-level structs and unions of C text `text` with a
/// member (at any depth of their body) of type `struct NAME` or
/// `union NAME`.
fn embedders_in(text: &str, name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for body in crate::csource::bodies(text) {
        if body.name != name
            && crate::csource::embeds(&body.tokens, name)
            && !out.contains(&body.name)
        {
            out.push(body.name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_are_told_from_mentions() {
        let text = "struct lruvec;\nstruct lruvec *p;\nstruct lruvec {\n\tint x;\n};\n";
        assert!(defines(text, "lruvec"));
        assert!(!defines(
            "struct lruvec;\nstruct lruvec_stats {\n};\n",
            "lruvec"
        ));
        assert!(defines("struct rq\n{\n};\n", "rq"));
        assert!(defines(
            "typedef struct spinlock {\n} spinlock_t;\n",
            "spinlock_t"
        ));
        assert!(defines("typedef u32 __bitwise gfp_t;\n", "gfp_t"));
        assert!(defines(
            "typedef struct pglist_data {\n} pg_data_t;\n",
            "pglist_data"
        ));
        assert!(!defines("\tspinlock_t lock;\n", "spinlock_t"));
    }

    #[test]
    fn embedders_are_the_top_level_structs_holding_the_type() {
        let text = "struct mem_cgroup_per_node {\n\tstruct lruvec\t\tlruvec;\n\
                    \tstruct lruvec *ptr;\n};\n\
                    struct other { struct lruvec *p; };\n\
                    typedef struct pglist_data {\n\tstruct { struct lruvec __lruvec; } inner;\n} pg_data_t;\n\
                    /* struct lruvec commented; */\n";
        assert_eq!(
            embedders_in(text, "lruvec"),
            ["mem_cgroup_per_node", "pglist_data"]
        );
    }
}
