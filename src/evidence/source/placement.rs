//! Where the source puts the objects of a struct: the slab caches made for
//! it (`kmem_cache_create(.., sizeof(struct T), ..)`, `KMEM_CACHE(T, ..)`
//! and their flags), `kmalloc` and its family (`p = kzalloc(sizeof(*p))`
//! with `struct T *p`), per-CPU definitions and allocations, and statically
//! defined objects. Read from the text, not the syntax tree: these are
//! macros and top-level definitions, which tree-sitter reads poorly.
//! What the sites mean for the object's alignment is
//! [`crate::analysis::placement`]'s job.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use super::{Declaration, Role, Said, Wanted};

/// Bytes before a `sizeof` searched for the initializer it is in.
const INITIALIZER_WINDOW: usize = 65536;

/// How one site of the source places objects of a struct.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Site {
    /// A slab cache of its own.
    Slab {
        /// The call (`kmem_cache_create`, `KMEM_CACHE`).
        call: String,
        /// `SLAB_HWCACHE_ALIGN` among the flags.
        hw_aligned: bool,
        /// An explicit alignment argument, in bytes, when it is a number
        /// or names the cacheline (`SMP_CACHE_BYTES`).
        align: Option<u64>,
        /// SLUB keeps its free pointer after the object (a constructor,
        /// `SLAB_TYPESAFE_BY_RCU`): 8 more bytes a slot.
        pointer_after: bool,
    },
    /// `kmalloc` and its family: a size class.
    Kmalloc {
        /// The call.
        call: String,
        /// The size is exactly the struct's (`sizeof(*p)`), not more (a
        /// flexible array, `struct_size()`).
        exact: bool,
        /// An array of them (`kcalloc`, `kmalloc_array`).
        array: bool,
    },
    /// Whole pages (`vmalloc`, `vzalloc`): every object starts a page.
    Pages {
        /// The call.
        call: String,
    },
    /// Per-CPU data (`DEFINE_PER_CPU_SHARED_ALIGNED`, `alloc_percpu`).
    PerCpu {
        /// The macro or call.
        call: String,
        /// Line-aligned (`_SHARED_ALIGNED`, `_ALIGNED`).
        aligned: bool,
    },
    /// One object defined in a file (`struct mm_struct init_mm = {...}`).
    Static {
        /// Its name.
        name: String,
        /// Declared `____cacheline_aligned` (or `__aligned(N)`).
        aligned: bool,
    },
    /// A member of another struct, by value: placed where that struct is.
    Embedded {
        /// The struct holding it.
        container: String,
        /// Its first member: at byte 0, whatever the rest of it is.
        first: bool,
    },
    /// An allocator whose placement is not known here (`devm_kzalloc`'s
    /// header before the object).
    Unknown {
        /// The call.
        call: String,
    },
    /// A cache or allocation made by the size a member of another struct
    /// holds, which the source sets to this struct's size: `proto_register()`'s
    /// `kmem_cache_create_usercopy(prot->name, prot->obj_size, ..)` with
    /// `.obj_size = sizeof(struct tcp_sock)` in `struct proto tcp_prot`.
    Sized {
        /// The member holding the size, `struct.member` (`proto.obj_size`).
        size: String,
        /// Where it is set to this struct's size, `file:line` each.
        set: Vec<String>,
        /// Where it is set to the size of a struct that holds this one as
        /// its first member (at byte 0, whatever its layout): the struct
        /// and `file:line`, each.
        through: Vec<(String, String)>,
        /// The cache or allocation.
        site: Box<Site>,
    },
}

/// One half of a size passed through a member, joined across the tree
/// into a [`Site::Sized`] (see [`join_sizes`]); said of a struct, and
/// never left in a reading's result.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SizeLink {
    /// Objects are made at `site` by the size member `member` of this
    /// struct holds (`kmem_cache_create(.., prot->obj_size, ..)`, said
    /// of `proto`).
    Makes {
        /// The member.
        member: String,
        /// The cache or allocation.
        site: Site,
    },
    /// This struct's size is stored in member `member` of a struct
    /// `container` (`.obj_size = sizeof(struct tcp_sock)` in an
    /// initializer of a `struct proto`, or `f->qsize = sizeof(..)`).
    StoredIn {
        /// The struct holding the size.
        container: String,
        /// Its member.
        member: String,
    },
}

/// Characters of a call's arguments read at most.
const MAX_ARGS: usize = 4096;

/// Bytes before an allocation searched for the declaration of the
/// variable it is assigned to (`struct T *p` of `p = kzalloc(sizeof(*p))`).
const DECLARATION_WINDOW: usize = 8192;

/// The placement sites for `types` in C text `text` of `file`.
pub(super) fn sites(text: &str, file: &Path, types: Wanted<'_>) -> Vec<Declaration> {
    let lines = LineIndex::new(text);
    let mut out = Vec::new();
    let mut push = |ty: &str, at: usize, said: Said| {
        out.push(said_of(
            ty.to_owned(),
            said,
            file.to_owned(),
            lines.line(at),
        ));
    };
    let caches = text.contains("kmem_cache_create");
    for (at, name, args) in calls(text) {
        let args = split_args(args);
        match name {
            "KMEM_CACHE" | "KMEM_CACHE_USERCOPY" => {
                let Some(ty) = args.first().and_then(|a| type_named(a, types)) else {
                    continue;
                };
                let flags = args.get(1).copied().unwrap_or("");
                push(ty, at, Said::Placed(slab(name, flags, None, false)));
            }
            "kmem_cache_create" | "kmem_cache_create_usercopy" => {
                let Some(size) = args.get(1) else { continue };
                if let Some(ty) = sizeof_type(size, types) {
                    push(ty, at, Said::Placed(cache_site(name, &args)));
                } else if let Some((ty, said)) = made_by_size(text, at, name, &args, caches, types)
                {
                    push(&ty, at, said);
                }
            }
            "DEFINE_PER_CPU"
            | "DEFINE_PER_CPU_SHARED_ALIGNED"
            | "DEFINE_PER_CPU_ALIGNED"
            | "DEFINE_PER_CPU_PAGE_ALIGNED"
            | "alloc_percpu"
            | "alloc_percpu_gfp" => {
                let Some(ty) = args.first().and_then(|a| type_named(a, types)) else {
                    continue;
                };
                let aligned = name.ends_with("ALIGNED");
                push(
                    ty,
                    at,
                    Said::Placed(Site::PerCpu {
                        call: name.to_owned(),
                        aligned,
                    }),
                );
            }
            _ => {
                let Some(kind) = allocator(name) else {
                    continue;
                };
                let size = match kind {
                    Allocator::Array => args.get(1),
                    _ if name.starts_with("devm_") => args.get(1),
                    _ => args.first(),
                };
                let Some(size) = size else { continue };
                let assigned = assigned_variable(&text[..at]);
                let window = window_before(text, at);
                let Some((ty, exact)) = sized(size, assigned, window, types) else {
                    if let Some((ty, said)) = made_by_size(text, at, name, &args, caches, types) {
                        push(&ty, at, said);
                    }
                    continue;
                };
                let site = match kind {
                    _ if name.starts_with("devm_") => Site::Unknown {
                        call: name.to_owned(),
                    },
                    Allocator::Pages => Site::Pages {
                        call: name.to_owned(),
                    },
                    Allocator::Array | Allocator::Kmalloc => Site::Kmalloc {
                        call: name.to_owned(),
                        exact,
                        array: kind == Allocator::Array,
                    },
                };
                push(&ty, at, Said::Placed(site));
            }
        }
    }
    for (at, ty, name, aligned) in statics(text, file, types) {
        push(&ty, at, Said::Placed(Site::Static { name, aligned }));
    }
    for (at, ty, container, member) in stored_sizes(text, types) {
        push(
            &ty,
            at,
            Said::Size(SizeLink::StoredIn { container, member }),
        );
    }
    // Members of other structs that hold one by value: placed where
    // their container is.
    for body in crate::csource::bodies(text) {
        let first = at_byte_0(&body.tokens);
        for ty in held_by_value(&body.tokens) {
            if ty != body.name && types.contains(ty) {
                let said = Said::Placed(Site::Embedded {
                    container: body.name.clone(),
                    first: first.contains(&ty),
                });
                out.push(said_of(ty.to_owned(), said, file.to_owned(), body.first));
            }
        }
    }
    out
}

/// A declaration of where struct `ty`'s objects are, said at `line` of
/// `file`.
fn said_of(ty: String, said: Said, file: PathBuf, line: usize) -> Declaration {
    Declaration {
        ty,
        path: String::new(),
        said,
        function: None,
        file,
        line,
        role: Role::Construction,
        param: None,
        entry: None,
        callers: 0,
        hot_callers: 0,
        paths: Vec::new(),
    }
}

/// The halves of sizes passed through members in C text `text` of
/// `file`, for every struct ([`SizeLink`]): what [`join_sizes`] needs of
/// the structs a reading is not about. Only the sizes stored, unless the
/// file makes a cache (the allocations then too).
pub(super) fn size_links(text: &str, file: &Path) -> Vec<Declaration> {
    let mut found: Vec<(usize, String, Said)> = Vec::new();
    if text.contains("kmem_cache_create") {
        for (at, name, args) in calls(text) {
            let args = split_args(args);
            if let Some((ty, said)) = made_by_size(text, at, name, &args, true, Wanted::All) {
                found.push((at, ty, said));
            }
        }
    }
    for (at, ty, container, member) in stored_sizes(text, Wanted::All) {
        found.push((at, ty, Said::Size(SizeLink::StoredIn { container, member })));
    }
    if found.is_empty() {
        return Vec::new();
    }
    let lines = LineIndex::new(text);
    found
        .into_iter()
        .map(|(at, ty, said)| said_of(ty, said, file.to_owned(), lines.line(at)))
        .collect()
}

/// Whether the bytes of a C file may hold a half of a size passed through
/// a member ([`size_links`]): a cache made, or a `sizeof` stored by `=`. A
/// test on bytes, so that the files of a tree that cannot are never
/// decoded as text.
pub(super) fn may_link_sizes(bytes: &[u8]) -> bool {
    memchr::memmem::find(bytes, b"kmem_cache_create").is_some()
        || memchr::memmem::find_iter(bytes, b"sizeof")
            .any(|i| bytes[..i].trim_ascii_end().ends_with(b"="))
}

/// The structs whose sizes `found` needs to place its structs: those
/// holding a size in a member ([`SizeLink::StoredIn`]), and those the
/// build does not hold that hold one of its structs first.
pub(super) fn size_containers(found: &[Declaration]) -> Vec<String> {
    let mut containers: Vec<String> = found
        .iter()
        .filter_map(|d| match &d.said {
            Said::Size(SizeLink::StoredIn { container, .. }) => Some(container.clone()),
            Said::Placed(Site::Embedded {
                container,
                first: true,
            }) => Some(container.clone()),
            _ => None,
        })
        .collect();
    containers.sort_unstable();
    containers.dedup();
    containers
}

/// `found` with each size stored in a member ([`SizeLink::StoredIn`])
/// joined to the caches and allocations made by that member's size
/// ([`SizeLink::Makes`]), in `found` or in `links` (the halves said of
/// other structs): a [`Site::Sized`] of the struct, at the cache. A struct
/// that is the first member of another (`mptcp6_sock`'s `mptcp_sock`)
/// whose size is so stored is placed there too, and then that embedding
/// says nothing more. The halves themselves are left out.
pub(super) fn join_sizes(mut found: Vec<Declaration>, links: &[Declaration]) -> Vec<Declaration> {
    let all = || found.iter().chain(links);
    // Where each struct's size is stored: (struct, member, file:line).
    let mut stored: HashMap<&str, Vec<(&str, &str, String)>> = HashMap::new();
    // What each struct's member sizes make: (site, file, line).
    type Made<'a> = Vec<(&'a Site, &'a Path, usize)>;
    let mut makes: HashMap<(&str, &str), Made<'_>> = HashMap::new();
    for d in all() {
        match &d.said {
            Said::Size(SizeLink::StoredIn { container, member }) => {
                let at = format!("{}:{}", d.file.display(), d.line);
                let list = stored.entry(d.ty.as_str()).or_default();
                if !list
                    .iter()
                    .any(|(c, m, a)| (*c, *m, a) == (container, member, &at))
                {
                    list.push((container, member, at));
                }
            }
            Said::Size(SizeLink::Makes { member, site }) => {
                let list = makes.entry((d.ty.as_str(), member.as_str())).or_default();
                if !list
                    .iter()
                    .any(|(_, f, l)| (*f, *l) == (d.file.as_path(), d.line))
                {
                    list.push((site, &d.file, d.line));
                }
            }
            _ => {}
        }
    }
    // Per struct and cache: the site, where its size is set, and where
    // the sizes of structs holding it first are.
    type Sized<'a> = (&'a Site, String, Vec<String>, Vec<(String, String)>);
    let mut joined: BTreeMap<(String, PathBuf, usize), Sized<'_>> = BTreeMap::new();
    let mut replaced = vec![false; found.len()];
    for (i, d) in found.iter().enumerate() {
        // Its own size, stored here; or the sizes of a holder it is first in.
        let (holder, sizes) = match &d.said {
            Said::Size(SizeLink::StoredIn { container, member }) => {
                let here = format!("{}:{}", d.file.display(), d.line);
                (None, vec![(container.as_str(), member.as_str(), here)])
            }
            Said::Placed(Site::Embedded {
                container,
                first: true,
            }) => (
                Some(container.as_str()),
                stored.get(container.as_str()).cloned().unwrap_or_default(),
            ),
            _ => continue,
        };
        for (container, member, at) in sizes {
            for (site, file, line) in makes.get(&(container, member)).into_iter().flatten() {
                let key = (d.ty.clone(), file.to_path_buf(), *line);
                let entry = joined.entry(key).or_insert_with(|| {
                    (
                        *site,
                        format!("{container}.{member}"),
                        Vec::new(),
                        Vec::new(),
                    )
                });
                match holder {
                    None => entry.2.push(at.clone()),
                    Some(h) => {
                        entry.3.push((h.to_owned(), at.clone()));
                        replaced[i] = true;
                    }
                }
            }
        }
    }
    let joined: Vec<Declaration> = joined
        .into_iter()
        .map(|((ty, file, line), (site, size, mut set, mut through))| {
            set.sort();
            set.dedup();
            through.sort();
            through.dedup();
            let site = Box::new(site.clone());
            let said = Said::Placed(Site::Sized {
                size,
                set,
                through,
                site,
            });
            said_of(ty, said, file, line)
        })
        .collect();
    let mut replaced = replaced.into_iter();
    found.retain(|d| !replaced.next().unwrap_or(false) && !matches!(d.said, Said::Size(_)));
    found.extend(joined);
    found.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    found
}

/// The text before byte `at` of `text` searched for a variable's
/// declaration.
fn window_before(text: &str, at: usize) -> &str {
    let mut from = at.saturating_sub(DECLARATION_WINDOW);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    &text[from..at]
}

/// The struct and member of a size argument that is a member of a
/// variable declared in `window`: `prot->obj_size` with `struct proto
/// *prot`, `frags.qsize` with `struct inet_frags frags`.
fn member_size(size: &str, window: &str, types: Wanted<'_>) -> Option<(String, String)> {
    let size = size.trim();
    let (var, member, pointer) = match size.split_once("->") {
        Some((var, member)) => (var.trim(), member.trim(), true),
        None => {
            let (var, member) = size.split_once('.')?;
            (var.trim(), member.trim(), false)
        }
    };
    if !is_identifier(var) || !is_identifier(member) {
        return None;
    }
    let ty = declared_type(window, var, types, pointer)?;
    Some((ty.to_owned(), member.to_owned()))
}

/// The sizes of `types` that `text` stores in a member, exactly:
/// `.obj_size = sizeof(struct tcp_sock),` in an initializer of a `struct
/// proto` (or of an array of them), `f->qsize = sizeof(struct ipq);` with
/// `f` declared in the lines before. Each with its offset, the struct,
/// and the struct and member holding its size.
fn stored_sizes(text: &str, types: Wanted<'_>) -> Vec<(usize, String, String, String)> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    for (i, _) in text.match_indices("sizeof") {
        if text[..i].ends_with(word) {
            continue;
        }
        let Some(inner) = text[i + "sizeof".len()..].trim_start().strip_prefix('(') else {
            continue;
        };
        let Some(close) = inner.find(')') else {
            continue;
        };
        // `struct T` only: `.maxlen = sizeof(int)` fills every sysctl table.
        if !inner.trim_start().starts_with("struct ") {
            continue;
        }
        let Some(ty) = type_named(&inner[..close], types) else {
            continue;
        };
        // Exactly the struct's size: nothing added after it.
        if !inner[close + 1..].trim_start().starts_with([',', ';', '}']) {
            continue;
        }
        let before = text[..i].trim_end();
        let Some(lhs) = before.strip_suffix('=') else {
            continue;
        };
        if lhs.ends_with(['=', '!', '<', '>', '+', '-', '*', '/', '%', '&', '|', '^']) {
            continue;
        }
        let lhs = lhs.trim_end();
        let start = lhs.trim_end_matches(word).len();
        let member = &lhs[start..];
        if !is_identifier(member) {
            continue;
        }
        let rest = lhs[..start].trim_end();
        let container = if let Some(var) = rest.strip_suffix("->") {
            let var = &var[var.trim_end_matches(word).len()..];
            declared_type(window_before(text, i), var, Wanted::All, true)
        } else if let Some(rest) = rest.strip_suffix('.') {
            let var = &rest[rest.trim_end_matches(word).len()..];
            match var.is_empty() {
                true => initializer_type(text, start),
                // An object, often one of the file's (`static struct
                // inet_frags ip4_frags;` hundreds of lines up).
                false => declared_type(&text[..i], var, Wanted::All, false),
            }
        } else {
            None
        };
        if let Some(container) = container {
            out.push((i, ty.to_owned(), container.to_owned(), member.to_owned()));
        }
    }
    out
}

/// The struct an initializer holding byte `at` of `text` initializes:
/// `struct proto tcp_prot = { .. }`, or an element of `struct
/// cache_info infos[] = { { .. }, .. }`.
fn initializer_type(text: &str, at: usize) -> Option<&str> {
    let mut from = at.saturating_sub(INITIALIZER_WINDOW);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    let open = enclosing_brace(&text[from..at])? + from;
    let before = text[..open].trim_end();
    let declaration = match before.strip_suffix('=') {
        Some(declaration) => declaration,
        // An element of an array: the array's initializer.
        None if before.ends_with([',', '{']) => {
            let outer = enclosing_brace(&text[from..open])? + from;
            let declaration = text[..outer].trim_end().strip_suffix('=')?;
            if !declaration.trim_end().ends_with(']') {
                return None;
            }
            declaration
        }
        None => return None,
    };
    // The declaration's statement: after the last `;`, `}` or `{`.
    let statement = &declaration[declaration.rfind([';', '}', '{']).map_or(0, |i| i + 1)..];
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    // The last `struct` of it: a comment before it may say the word.
    let (i, _) = statement
        .match_indices("struct ")
        .filter(|(i, _)| !statement[..*i].ends_with(word))
        .last()?;
    let rest = &statement[i + "struct ".len()..];
    let name = &rest[..rest.find(|c: char| !word(c)).unwrap_or(rest.len())];
    is_identifier(name).then_some(name)
}

/// The offset in `text` of the `{` left open at its end, if any.
fn enclosing_brace(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in text.bytes().enumerate().rev() {
        match b {
            b'}' => depth += 1,
            b'{' if depth == 0 => return Some(i),
            b'{' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// The cache or allocation a call `name(args)` at byte `at` of `text`
/// makes by the size a member holds: `kmem_cache_create(.., prot->obj_size,
/// ..)` and, in a file that makes caches (`caches`), `kmalloc(prot->obj_size,
/// ..)` (`sk_prot_alloc()`'s, for protocols without a cache). The struct of
/// `types` holding the member, and what that says.
fn made_by_size(
    text: &str,
    at: usize,
    name: &str,
    args: &[&str],
    caches: bool,
    types: Wanted<'_>,
) -> Option<(String, Said)> {
    let (size, site) = match name {
        "kmem_cache_create" | "kmem_cache_create_usercopy" => {
            (args.get(1)?, cache_site(name, args))
        }
        _ if caches
            && allocator(name) == Some(Allocator::Kmalloc)
            && !name.starts_with("devm_") =>
        {
            let site = Site::Kmalloc {
                call: name.to_owned(),
                exact: true,
                array: false,
            };
            (args.first()?, site)
        }
        _ => return None,
    };
    let (ty, member) = member_size(size, window_before(text, at), types)?;
    Some((ty, Said::Size(SizeLink::Makes { member, site })))
}

/// The slab cache a `kmem_cache_create(args)` makes: before 6.12 (name,
/// size, align, flags, [useroffset, usersize,] ctor); since (name, size,
/// &args, flags).
fn cache_site(name: &str, args: &[&str]) -> Site {
    let flags = args
        .iter()
        .skip(2)
        .find(|a| a.contains("SLAB_"))
        .copied()
        .unwrap_or("");
    let ctor = match args.len() {
        5 => args[4],
        7 => args[6],
        _ => "NULL",
    };
    let align = args.get(2).and_then(|a| alignment(a));
    slab(name, flags, align, !is_null(ctor))
}

/// A slab cache site from its flags' text.
fn slab(call: &str, flags: &str, align: Option<u64>, ctor: bool) -> Site {
    Site::Slab {
        call: call.to_owned(),
        hw_aligned: flags.contains("SLAB_HWCACHE_ALIGN"),
        align,
        pointer_after: ctor || flags.contains("SLAB_TYPESAFE_BY_RCU"),
    }
}

/// An alignment argument as bytes: a number, or the cacheline by name.
fn alignment(arg: &str) -> Option<u64> {
    let arg = arg.trim();
    if ["SMP_CACHE_BYTES", "L1_CACHE_BYTES", "cache_line_size()"].contains(&arg) {
        return Some(64);
    }
    arg.parse().ok().filter(|&n: &u64| n > 0)
}

fn is_null(arg: &str) -> bool {
    matches!(arg.trim(), "NULL" | "0" | "")
}

/// The kinds of allocator calls read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Allocator {
    /// One object of a size class.
    Kmalloc,
    /// `n` objects back to back.
    Array,
    /// Whole pages.
    Pages,
}

fn allocator(name: &str) -> Option<Allocator> {
    let name = name.strip_prefix("devm_").unwrap_or(name);
    match name {
        "kmalloc" | "kzalloc" | "kmalloc_node" | "kzalloc_node" | "kvmalloc" | "kvzalloc"
        | "kvmalloc_node" | "kvzalloc_node" => Some(Allocator::Kmalloc),
        "kcalloc" | "kmalloc_array" | "kcalloc_node" | "kmalloc_array_node" | "kvcalloc"
        | "kvmalloc_array" => Some(Allocator::Array),
        "vmalloc" | "vzalloc" | "vmalloc_node" | "vzalloc_node" => Some(Allocator::Pages),
        _ => None,
    }
}

/// The struct a size argument is the size of, and whether it is exactly
/// its size: `sizeof(struct T)`, `sizeof(T)`, `sizeof(*p)` with `p`
/// declared `struct T *p` in `window`, `struct_size(p, ..)`.
fn sized(
    size: &str,
    assigned: Option<&str>,
    window: &str,
    types: Wanted<'_>,
) -> Option<(String, bool)> {
    let size = size.trim();
    let exact = size.starts_with("sizeof") && balanced_end(size) == Some(size.len());
    if let Some(ty) = sizeof_type(size, types) {
        return Some((ty.to_owned(), exact));
    }
    // `sizeof(*p)`, `struct_size(p, member, n)`: the variable's type.
    // `struct_size(p, ..)` of the variable assigned (`p`), not of another.
    let variable = sizeof_pointee(size).or_else(|| {
        let rest = size.strip_prefix("struct_size(")?;
        let var = rest.split(',').next()?.trim();
        (Some(var) == assigned).then_some(var)
    })?;
    let ty = declared_type(window, variable, types, true)?;
    Some((ty.to_owned(), exact))
}

/// The `p` of `sizeof(*p)` (and of `sizeof(*p) + n`).
fn sizeof_pointee(size: &str) -> Option<&str> {
    let rest = size
        .strip_prefix("sizeof")?
        .trim_start()
        .strip_prefix('(')?;
    let rest = rest.trim_start().strip_prefix('*')?;
    let end = rest.find(')')?;
    let var = rest[..end].trim();
    is_identifier(var).then_some(var)
}

/// Where the parenthesised group starting `text` at its first `(` ends.
fn balanced_end(text: &str) -> Option<usize> {
    let open = text.find('(')?;
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The struct of `types` a `sizeof(struct T)` or `sizeof(T)` in `arg`
/// names.
fn sizeof_type<'t>(arg: &'t str, types: Wanted<'_>) -> Option<&'t str> {
    let mut rest = arg;
    while let Some(i) = rest.find("sizeof") {
        rest = &rest[i + "sizeof".len()..];
        let inner = rest.trim_start().strip_prefix('(')?;
        let inner = &inner[..inner.find(')')?];
        if let Some(ty) = type_named(inner, types) {
            return Some(ty);
        }
    }
    None
}

/// The struct of `types` that `text` names: `struct T` or `T`.
fn type_named<'t>(text: &'t str, types: Wanted<'_>) -> Option<&'t str> {
    let text = text.trim();
    let name = text.strip_prefix("struct ").unwrap_or(text).trim();
    (is_identifier(name) && types.contains(name)).then_some(name)
}

/// The variable an allocation at the end of `before` is assigned to:
/// `p` of `p = kzalloc(` or `struct T *p = kzalloc(`.
fn assigned_variable(before: &str) -> Option<&str> {
    let statement = before.trim_end();
    let lhs = statement.strip_suffix('=')?.trim_end();
    // After the last character that is no identifier's (which may take
    // several bytes).
    let start = lhs
        .char_indices()
        .rfind(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let var = &lhs[start..];
    is_identifier(var).then_some(var)
}

/// The struct of `types` variable `var` is declared a pointer to
/// (`pointer`, `struct T *var`) or an object of (`struct T var`) in
/// `window`, its last declaration there.
fn declared_type<'w>(
    window: &'w str,
    var: &str,
    types: Wanted<'_>,
    pointer: bool,
) -> Option<&'w str> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut best = None;
    for (i, _) in window.match_indices("struct ") {
        if window[..i].ends_with(word) {
            continue;
        }
        let rest = &window[i + "struct ".len()..];
        let end = rest.find(|c: char| !word(c)).unwrap_or(rest.len());
        let ty = &rest[..end];
        if !is_identifier(ty) || !types.contains(ty) {
            continue;
        }
        let rest = rest[end..].trim_start();
        let Some(rest) = (match pointer {
            true => rest.strip_prefix('*'),
            false => Some(rest),
        }) else {
            continue;
        };
        let declared = rest
            .trim_start()
            .strip_prefix(var)
            .is_some_and(|after| !after.starts_with(word));
        if declared {
            best = Some(ty);
        }
    }
    best
}

fn is_identifier(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Every call (or macro use) of `text`: its offset, its name and the text
/// between its parentheses, for the names [`sites`] reads.
fn calls(text: &str) -> impl Iterator<Item = (usize, &str, &str)> {
    const FIRST: [&str; 6] = [
        "KMEM_CACHE",
        "kmem_cache_create",
        "DEFINE_PER_CPU",
        "alloc_percpu",
        "k",
        "v",
    ];
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() {
            let start = at;
            let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
            if !word(bytes[at]) || (at > 0 && word(bytes[at - 1])) {
                at += 1;
                continue;
            }
            let mut end = at;
            while end < bytes.len() && word(bytes[end]) {
                end += 1;
            }
            at = end;
            let name = &text[start..end];
            let name_of_interest =
                FIRST.iter().any(|f| name.starts_with(f)) || name.starts_with("devm_k");
            if !name_of_interest {
                continue;
            }
            let rest = &text[end..];
            let open = rest.len() - rest.trim_start_matches([' ', '\t']).len();
            if !rest[open..].starts_with('(') {
                continue;
            }
            let args_start = end + open + 1;
            let mut depth = 1usize;
            let mut i = args_start;
            while i < bytes.len() && i - args_start < MAX_ARGS {
                match bytes[i] {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            if depth == 0 {
                return Some((start, name, &text[args_start..i]));
            }
        }
        None
    })
}

/// The arguments of a call's text, split at its top-level commas.
fn split_args(args: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut from = 0;
    for (i, c) in args.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(args[from..i].trim());
                from = i + 1;
            }
            _ => {}
        }
    }
    out.push(args[from..].trim());
    out
}

/// The structs tokens `t` of a struct body hold by value: a member
/// `struct NAME member` or an array of them, past attributes (`struct
/// file __rcu *exe_file` is a pointer, however it is annotated).
fn held_by_value(t: &[String]) -> Vec<&str> {
    let mut held: Vec<&str> = (0..t.len().saturating_sub(2))
        .filter(|&i| matches!(t[i].as_str(), "struct" | "union"))
        .filter(|&i| {
            let mut named = false;
            for token in &t[i + 2..] {
                match token.as_str() {
                    ";" | "[" | ":" | "," => return named,
                    "*" | "(" | ")" | "{" | "}" => return false,
                    _ if is_identifier(token) && !token.starts_with("__") => named = true,
                    _ => {}
                }
            }
            false
        })
        .map(|i| t[i + 1].as_str())
        .collect();
    held.sort_unstable();
    held.dedup();
    held
}

/// The structs a struct body of tokens `t` holds at byte 0: its first
/// member (`struct sock sk;`), or each of an unnamed union that comes
/// first (`union { struct sock sk; struct inet_sock inet; };`).
fn at_byte_0(t: &[String]) -> Vec<&str> {
    let is = |i: usize, s: &str| t.get(i).is_some_and(|x| x == s);
    // `struct T name;` at token `i`: T.
    let member = |i: usize| (is(i, "struct") && is(i + 3, ";")).then(|| t[i + 1].as_str());
    if !(is(0, "union") && is(1, "{")) {
        return member(0).into_iter().collect();
    }
    let mut out = Vec::new();
    let mut i = 2;
    while i < t.len() && t[i] != "}" {
        out.extend(member(i));
        match t[i..].iter().position(|x| x == ";") {
            Some(n) => i += n + 1,
            None => break,
        }
    }
    out
}

/// The objects of `types` a `.c` file defines at file scope: `struct T
/// name` at the start of a line (after `static`), then `=`, `;` or an
/// attribute; their offset, type, name and whether they are declared
/// line-aligned.
fn statics(text: &str, file: &Path, types: Wanted<'_>) -> Vec<(usize, String, String, bool)> {
    let mut out = Vec::new();
    if file.extension().is_none_or(|e| e != "c") {
        return out;
    }
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let at = offset;
        offset += line.len();
        let rest = line.strip_prefix("static ").unwrap_or(line);
        let Some(rest) = rest.strip_prefix("struct ") else {
            continue;
        };
        let Some(space) = rest.find([' ', '\t']) else {
            continue;
        };
        let ty = &rest[..space];
        if !is_identifier(ty) || !types.contains(ty) {
            continue;
        }
        let rest = rest[space..].trim_start();
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let name = &rest[..end];
        let after = rest[end..].trim_start();
        let defines = after.starts_with('=')
            || after.starts_with(';')
            || after.starts_with("__")
            || after.starts_with('[');
        if !is_identifier(name) || !defines {
            continue;
        }
        let aligned = after.contains("cacheline_aligned") || after.contains("__aligned(");
        out.push((at, ty.to_owned(), name.to_owned(), aligned));
    }
    out
}

/// Line numbers of offsets in a text.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    /// The 1-based line of byte `at`.
    fn line(&self, at: usize) -> usize {
        self.starts.partition_point(|&s| s <= at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placed(text: &str, file: &str) -> Vec<(String, usize, Site)> {
        let types = ["foo".to_owned(), "bar".to_owned()];
        sites(text, Path::new(file), Wanted::Only(&types))
            .into_iter()
            .map(|d| match d.said {
                Said::Placed(site) => (d.ty, d.line, site),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn slab_caches_of_either_api_and_their_flags() {
        let text = "void __init f(void)\n{\n\
                    \tfoo_cache = kmem_cache_create(\"foo\", sizeof(struct foo), 0,\n\
                    \t\tSLAB_HWCACHE_ALIGN | SLAB_PANIC, NULL);\n\
                    \tbar_cache = kmem_cache_create(\"bar\", sizeof(struct bar), &args,\n\
                    \t\tSLAB_TYPESAFE_BY_RCU);\n\
                    \tx = KMEM_CACHE(foo, SLAB_PANIC);\n\
                    \ty = kmem_cache_create(\"b\", sizeof(struct bar), 0, 0, bar_ctor);\n}\n";
        let got = placed(text, "a.c");
        let slab = |hw, after| Site::Slab {
            call: String::new(),
            hw_aligned: hw,
            align: Some(0).filter(|_| false),
            pointer_after: after,
        };
        let shape = |s: &Site| match s {
            Site::Slab {
                hw_aligned,
                pointer_after,
                ..
            } => slab(*hw_aligned, *pointer_after),
            other => other.clone(),
        };
        let got: Vec<(&str, usize, Site)> = got
            .iter()
            .map(|(t, l, s)| (t.as_str(), *l, shape(s)))
            .collect();
        assert_eq!(
            got,
            [
                ("foo", 3, slab(true, false)),
                ("bar", 5, slab(false, true)),
                ("foo", 7, slab(false, false)),
                ("bar", 8, slab(false, true)),
            ]
        );
    }

    #[test]
    fn kmalloc_by_the_variable_it_is_assigned_to() {
        let text = "static int g(void)\n{\n\
                    \tstruct foo *p;\n\
                    \tstruct bar *q = kzalloc(sizeof(*q), GFP_KERNEL);\n\
                    \tu32 *w = kmalloc(sizeof(u32), GFP_KERNEL);\n\
                    \tp = kzalloc(struct_size(p, items, n), GFP_KERNEL);\n\
                    \tq->skbs = kcalloc(n, sizeof(*q->skbs), GFP_KERNEL);\n\
                    \tr = kcalloc(n, sizeof(struct foo), GFP_KERNEL);\n\
                    \ts = devm_kzalloc(dev, sizeof(struct bar), GFP_KERNEL);\n\
                    \tt = vzalloc(sizeof(struct foo));\n}\n";
        let got: Vec<(String, usize, Site)> = placed(text, "a.c");
        let k = |call: &str, exact, array| Site::Kmalloc {
            call: call.into(),
            exact,
            array,
        };
        assert_eq!(
            got,
            [
                ("bar".into(), 4, k("kzalloc", true, false)),
                ("foo".into(), 6, k("kzalloc", false, false)),
                ("foo".into(), 8, k("kcalloc", true, true)),
                (
                    "bar".into(),
                    9,
                    Site::Unknown {
                        call: "devm_kzalloc".into()
                    }
                ),
                (
                    "foo".into(),
                    10,
                    Site::Pages {
                        call: "vzalloc".into()
                    }
                ),
            ],
            "sizeof(u32) and an array of pointers (sizeof(*q->skbs)) are no object of theirs"
        );
    }

    #[test]
    fn per_cpu_statics_and_embedding() {
        let text = "DEFINE_PER_CPU_SHARED_ALIGNED(struct foo, foos);\n\
                    static struct bar boot_bar ____cacheline_aligned = { };\n\
                    struct foo init_foo = {\n};\n\
                    extern struct foo other;\n\
                    struct holder {\n\tstruct foo __rcu *p;\n\tstruct bar b;\n\tstruct foo arr[2];\n};\n";
        let got = placed(text, "a.c");
        let sites: Vec<(&str, usize, &Site)> =
            got.iter().map(|(t, l, s)| (t.as_str(), *l, s)).collect();
        assert_eq!(
            sites,
            [
                (
                    "foo",
                    1,
                    &Site::PerCpu {
                        call: "DEFINE_PER_CPU_SHARED_ALIGNED".into(),
                        aligned: true
                    }
                ),
                (
                    "bar",
                    2,
                    &Site::Static {
                        name: "boot_bar".into(),
                        aligned: true
                    }
                ),
                (
                    "foo",
                    3,
                    &Site::Static {
                        name: "init_foo".into(),
                        aligned: false
                    }
                ),
                (
                    "bar",
                    6,
                    &Site::Embedded {
                        container: "holder".into(),
                        first: false,
                    }
                ),
                (
                    "foo",
                    6,
                    &Site::Embedded {
                        container: "holder".into(),
                        first: false,
                    }
                ),
            ]
        );
        // A header declares no object.
        assert!(placed("struct foo init_foo;\n", "a.h").is_empty());
    }

    #[test]
    fn an_allocation_may_follow_any_character() {
        // Found by fuzzing: `\u{fffd}= kzalloc(...)`, the assigned name
        // sought after a character of three bytes.
        let got = placed(
            "struct foo *p;\n\u{fffd}= kzalloc(sizeof(*p), GFP_KERNEL);\n",
            "a.c",
        );
        assert_eq!(got.len(), 1, "{got:?}");
    }

    #[test]
    fn text_before_an_allocation_may_be_any_utf_8() {
        // A panic found on fs/ (a name in a comment): the window before an
        // allocation starts inside a character.
        let mut text = String::from("struct foo *p;\n/* ");
        text.push_str(&"é".repeat(DECLARATION_WINDOW));
        // An odd number of bytes after them: the window starts mid-character.
        text.push_str(" */ \np = kzalloc(sizeof(*p), GFP_KERNEL);\n");
        let _ = placed(&text, "a.c");
    }

    /// Declarations of `text` (file `file`) as (struct, line, what).
    fn said(text: &str, file: &str, types: Wanted<'_>) -> Vec<(String, usize, Said)> {
        sites(text, Path::new(file), types)
            .into_iter()
            .map(|d| (d.ty, d.line, d.said))
            .collect()
    }

    const REGISTER: &str = "int proto_register(struct proto *prot, int alloc_slab)\n{\n\
        \tprot->slab = kmem_cache_create_usercopy(prot->name,\n\
        \t\t\tprot->obj_size, 0,\n\
        \t\t\tSLAB_HWCACHE_ALIGN | SLAB_ACCOUNT | prot->slab_flags,\n\
        \t\t\tprot->useroffset, prot->usersize, NULL);\n}\n\
        static struct sock *sk_prot_alloc(struct proto *prot)\n{\n\
        \tsk = kmalloc(prot->obj_size, priority);\n}\n";

    #[test]
    fn a_cache_made_by_a_members_size_is_said_of_the_struct_holding_the_member() {
        let makes = |member: &str, site: Site| {
            Said::Size(SizeLink::Makes {
                member: member.into(),
                site,
            })
        };
        assert_eq!(
            said(REGISTER, "net/core/sock.c", Wanted::All),
            [
                (
                    "proto".into(),
                    3,
                    makes(
                        "obj_size",
                        Site::Slab {
                            call: "kmem_cache_create_usercopy".into(),
                            hw_aligned: true,
                            align: None,
                            pointer_after: false,
                        }
                    )
                ),
                (
                    "proto".into(),
                    10,
                    makes(
                        "obj_size",
                        Site::Kmalloc {
                            call: "kmalloc".into(),
                            exact: true,
                            array: false,
                        }
                    )
                ),
            ]
        );
        // A kmalloc of a member's size in a file that makes no cache is
        // no allocator of the sizes stored there.
        let alone = "void f(struct proto *prot)\n{\n\tsk = kmalloc(prot->obj_size, GFP);\n}\n";
        assert!(said(alone, "a.c", Wanted::All).is_empty());
        // The halves of every struct, for a tree's join; a size of no
        // struct (a sysctl table's `.maxlen`) is none.
        let table = "static struct ctl_table t[] = {\n\t{ .maxlen = sizeof(int), },\n};\n";
        assert!(size_links(table, Path::new("a.c")).is_empty());
        assert!(may_link_sizes(table.as_bytes()) && !may_link_sizes(b"n = f(sizeof(x));"));
        let links = size_links(REGISTER, Path::new("net/core/sock.c"));
        assert_eq!(links.len(), 2, "{links:?}");
    }

    #[test]
    fn sizes_stored_in_members_by_initializer_or_assignment_and_only_exact_ones() {
        let text = "/* This proto struct describes the ULP interface. */\n\
            static struct proto foo_prot __read_mostly = {\n\
            \t.name = \"FOO\",\n\
            \t.obj_size = sizeof(struct foo),\n\
            };\n\
            static struct cache_info infos[] = {\n\
            \t{ .cache = &a, .size = sizeof(struct foo), },\n\
            \t{ .cache = &b, .size = sizeof(struct foo) + 8, },\n\
            };\n\
            void init(struct inet_frags *f)\n{\n\
            \tf->qsize = sizeof(struct foo);\n\
            \tif (n == sizeof(struct foo))\n\t\treturn;\n}\n\
            void ip4_init(void)\n{\n\tip4_frags.qsize = sizeof(struct foo);\n}\n";
        // The file's object, declared further up than a window reaches.
        let text = format!(
            "static struct inet_frags ip4_frags;\n{}{text}",
            "\n".repeat(DECLARATION_WINDOW)
        );
        let text = text.as_str();
        let first = DECLARATION_WINDOW + 1;
        let stored = |container: &str, member: &str| {
            Said::Size(SizeLink::StoredIn {
                container: container.into(),
                member: member.into(),
            })
        };
        let types = ["foo".to_owned()];
        assert_eq!(
            said(text, "a.c", Wanted::Only(&types)),
            [
                ("foo".into(), first + 4, stored("proto", "obj_size")),
                ("foo".into(), first + 7, stored("cache_info", "size")),
                ("foo".into(), first + 12, stored("inet_frags", "qsize")),
                ("foo".into(), first + 18, stored("inet_frags", "qsize")),
            ]
        );
    }

    #[test]
    fn a_struct_is_placed_by_the_cache_of_the_size_stored_for_it_or_for_a_struct_holding_it_first()
    {
        let protos = "struct proto foo_prot = {\n\t.obj_size = sizeof(struct foo),\n};\n\
            struct proto foo6_prot = {\n\t.obj_size = sizeof(struct foo6),\n};\n\
            struct foo6 {\n\tstruct foo foo;\n\tstruct ipv6_pinfo np;\n};\n\
            struct smc {\n\tunion {\n\t\tstruct sock sk;\n\t\tstruct foo inet;\n\t};\n\tint x;\n};\n\
            struct bar {\n\tint a;\n\tstruct foo second;\n};\n";
        let types = ["foo".to_owned()];
        let found = sites(protos, Path::new("net/foo.c"), Wanted::Only(&types));
        let mut links = sites(REGISTER, Path::new("net/core/sock.c"), Wanted::All);
        links.extend(sites(protos, Path::new("net/foo.c"), Wanted::All));
        let joined = join_sizes(found, &links);
        let got: Vec<(usize, &Site)> = joined
            .iter()
            .map(|d| match &d.said {
                Said::Placed(site) => (d.line, site),
                other => panic!("{other:?}"),
            })
            .collect();
        let sized = |site: Site| Site::Sized {
            size: "proto.obj_size".into(),
            set: vec!["net/foo.c:2".into()],
            through: vec![("foo6".into(), "net/foo.c:5".into())],
            site: Box::new(site),
        };
        let slab = Site::Slab {
            call: "kmem_cache_create_usercopy".into(),
            hw_aligned: true,
            align: None,
            pointer_after: false,
        };
        let kmalloc = Site::Kmalloc {
            call: "kmalloc".into(),
            exact: true,
            array: false,
        };
        // foo6's embedding is replaced by the caches; smc's (a union
        // first, but smc's size is stored nowhere) and bar's (not first)
        // stay.
        assert_eq!(
            got,
            [
                (3, &sized(slab)),
                (10, &sized(kmalloc)),
                (
                    11,
                    &Site::Embedded {
                        container: "smc".into(),
                        first: true
                    }
                ),
                (
                    18,
                    &Site::Embedded {
                        container: "bar".into(),
                        first: false
                    }
                ),
            ]
        );
        // The halves are gone.
        assert!(!joined.iter().any(|d| matches!(d.said, Said::Size(_))));
    }
}
