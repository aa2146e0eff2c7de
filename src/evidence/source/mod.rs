//! What a source tree declares about the members of some structs: where
//! each is declared, the context-analysis annotations on the members (`__guarded_by(&lock)`,
//! `__pt_guarded_by`, Linux 7.0 and later), and in the functions, every
//! write to a member with how it is made (an assignment, `WRITE_ONCE`, an
//! atomic or a bit operation, a release store) and the locks held there
//! (taken before it in the function, `lockdep_assert_held`, `guard()`, or
//! through a header's wrapper such as `mmap_write_lock(mm)`), and every
//! member taken as a lock.
//!
//! Function bodies are read with tree-sitter's C grammar, which is
//! tolerant of the kernel's macros; the member annotations with the
//! scanner of [`crate::csource`] (tree-sitter reads a macro after a
//! member's name as a function declarator). A member access is resolved
//! through the function's declared variables and the build's own types
//! (`lruvec->lrugen.max_seq` is `lru_gen_folio.max_seq`): no preprocessor,
//! so a write through a macro that hides the member is not seen.
//!
//! The reading is in phases, one file each: [`wrappers`] (the headers'
//! lock wrappers), [`walk`] (every function body: writes, locks, calls),
//! [`members`] (the annotations on member declarations), [`callers`]
//! (the locks a function's callers hold), [`construction`] (objects
//! built across calls), [`placement`] (where objects are allocated),
//! [`reach`] (the functions fast entry points reach);
//! [`vocabulary`] is the kernel's
//! words for locking and writing that the walk recognises.

mod callers;
mod construction;
mod control;
mod exported;
mod graph;
mod index;
mod members;
mod placement;
mod progress;
mod reach;
mod setters;
mod summary;
mod tested;
mod vocabulary;
mod walk;
mod wrappers;

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::error::{Error, Result};
pub use index::IndexAt;

pub use placement::{Site, SizeLink};
pub use reach::NetPath;
use wrappers::Wrappers;

/// Files read at most: a kernel tree has about 60,000 C files and headers.
const MAX_FILES: usize = 200_000;

/// Rounds of reading the headers for lock wrappers: a wrapper of a
/// wrapper (`rq_lock` of `raw_spin_rq_lock`) is found in the second.
const WRAPPER_ROUNDS: usize = 2;

/// How a member is written.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Write {
    /// `x->f = v`, `x->f += v`, `x->f++`.
    Assign,
    /// `WRITE_ONCE(x->f, v)`: a plain store others read locklessly.
    Once,
    /// `smp_store_release(&x->f, v)`, `rcu_assign_pointer(x->f, v)`: a
    /// release store, by name.
    Release(String),
    /// A write inside `data_race(...)`: racy on purpose, lockless.
    DataRace,
    /// An atomic or bit operation on it (`atomic_long_add`, `set_bit`,
    /// `xchg`), by name.
    Atomic(String),
    /// A non-atomic bit operation (`__set_bit`, `__clear_bit`) or an
    /// operation on a CPU's own counter (`local64_add`, `local_inc`), by
    /// name: a plain store of the word, by the one CPU that may make it.
    NonAtomic(String),
    /// A compare-and-exchange from NULL or 0 (`cmpxchg(&file->f_owner,
    /// NULL, owner)`), by name: the member set once in the object's life,
    /// by whichever CPU gets there first (a lazily made pointer).
    Publish(String),
    /// A store made only when a test of the member before it found
    /// another value (`if (!test_bit(n, &x->f)) set_bit(n, &x->f)`,
    /// `test_bit(n, &x->f) || test_and_set_bit(n, &x->f)`, `if (x->f !=
    /// v) x->f = v`), by how it stores: the line is taken exclusive when
    /// the value changes, not on every pass.
    Tested(Box<Write>),
}

impl Write {
    /// True for a write many CPUs may make at once.
    pub fn lockless(&self) -> bool {
        match self {
            Write::Tested(w) => w.lockless(),
            w => matches!(w, Write::Atomic(_) | Write::DataRace | Write::Publish(_)),
        }
    }

    /// True for a store marked for lockless readers: `WRITE_ONCE`, a
    /// release store.
    pub fn marked(&self) -> bool {
        matches!(self.untested(), Write::Once | Write::Release(_))
    }

    /// How it stores, whether or not a test comes first.
    pub fn untested(&self) -> &Write {
        match self {
            Write::Tested(w) => w.untested(),
            w => w,
        }
    }

    /// The same store, made only after a test of it (see
    /// [`Write::Tested`]): wrapped once, however many tests say so.
    pub(crate) fn on_change(self) -> Write {
        match self {
            Write::Tested(_) => self,
            w => Write::Tested(Box::new(w)),
        }
    }

    /// How the source writes it, in words.
    pub fn describe(&self) -> String {
        match self {
            Write::Assign => "assigned".into(),
            Write::Once => "WRITE_ONCE".into(),
            Write::Release(name) => name.clone(),
            Write::DataRace => "written in data_race()".into(),
            Write::Atomic(name) => format!("{name}()"),
            Write::NonAtomic(name) => format!("{name}() (non-atomic)"),
            Write::Publish(name) => format!("{name}() from NULL"),
            Write::Tested(w) => format!("{} after a test of it", w.describe()),
        }
    }
}

/// A lock held at a point of a function: the struct it is a member of and
/// its path there (`lruvec`, `lru_lock`), or, for a lock that is no member
/// of a known struct (a global, a pointer's target), only its text.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Held {
    /// The lock's struct and path in it, when resolved: of the structs its
    /// expression goes through, the first the reading is about, else the
    /// outermost (see [`lock_member`]).
    pub member: Option<(String, String)>,
    /// Every struct its expression goes through with the lock's path
    /// there, outermost first (`&pgdat->__lruvec.lru_lock`: `pglist_data`
    /// `__lruvec.lru_lock`, then `lruvec` `lru_lock`).
    pub chain: Vec<(String, String)>,
    /// The expression as written (`&lruvec->lru_lock`).
    pub text: String,
    /// How it is held (`spin_lock_irq`, `lockdep_assert_held`).
    pub how: String,
    /// Held shared (`down_read`, `read_lock`, `mmap_read_lock`): other
    /// holders run at the same time, so it serialises no writer.
    pub shared: bool,
    /// A mutex or rw_semaphore of the whole system, defined at file scope
    /// (`static DEFINE_MUTEX(shrinker_mutex)`): no fast path takes one, so
    /// writes holding it are the control path's.
    pub global_mutex: bool,
}

/// Of the structs a lock's expression goes through (`chain`, outermost
/// first: `&current->mm->mmap_lock` goes through `task_struct`, then
/// `mm_struct`), the first `wanted`, else the outermost: the lock's member
/// there.
pub(crate) fn lock_member(
    chain: &[(String, String)],
    wanted: impl Fn(&str) -> bool,
) -> Option<(String, String)> {
    let at = chain.iter().position(|(ty, _)| wanted(ty)).unwrap_or(0);
    chain.get(at).cloned()
}

impl Held {
    /// How it was taken, in words: the call (`spin_lock_irq()`), or what
    /// says it is held (`spin_lock_irq() in every caller of f, 2 calls
    /// seen`).
    pub fn taken(&self) -> String {
        match self
            .how
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            true => format!("{}()", self.how),
            false => self.how.clone(),
        }
    }
}

/// One thing the source says of a member.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Said {
    /// `__guarded_by(EXPR)` (or `__pt_guarded_by`) on its declaration.
    GuardedBy {
        /// The lock expressions, as written.
        locks: Vec<String>,
        /// `__pt_guarded_by`: what it points to is guarded, not itself.
        pointee: bool,
    },
    /// Written in a function, with these locks held.
    Written(Write, Vec<Held>),
    /// Taken as a lock (`spin_lock(&x->f)`).
    Locked(String),
    /// Declared here, in its struct's body.
    Member,
    /// A per-CPU pointer, its data reached with `this_cpu_*` or
    /// `per_cpu_ptr` (by name).
    PerCpu(String),
    /// Read in a function; `once` when any of its reads there is marked
    /// (`READ_ONCE`, `rcu_dereference`, `smp_load_acquire`): read while
    /// others may write it.
    Read {
        /// A marked read.
        once: bool,
        /// Of another CPU's per-CPU object (`cpu_rq(cpu)->nr_running`
        /// through a variable, `per_cpu(x, cpu)`): read while its owner
        /// writes.
        remote: bool,
    },
    /// Where its objects are put: a slab cache, a `kmalloc`, per-CPU data,
    /// a static object (said of the struct, `path` empty).
    Placed(Site),
    /// Half of a size passed through a member (see [`SizeLink`]); joined
    /// into a [`Site::Sized`] before a reading is returned.
    Size(SizeLink),
    /// A store that may write the value already there, so the line is
    /// taken exclusive for nothing (see [`Needless`]).
    Needless(Needless),
}

/// A store made whatever the member holds: no test of the same member
/// before it, so when the value is usually already there every CPU that
/// makes it takes the line exclusive, and the readers lose it, for no
/// change.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Needless {
    /// What kind of store.
    pub kind: Store,
    /// The operator or call that stores (`=`, `WRITE_ONCE`, `try_cmpxchg`,
    /// `set_bit`).
    pub how: String,
    /// The value stored, as written (the new value of an exchange, the
    /// bit of a bit operation).
    pub value: String,
    /// A test of the member comes first (`if (READ_ONCE(x->f) != v)`):
    /// no needless store, but a value stored there, which says whether
    /// the member holds one value or changes state.
    #[serde(default)]
    pub tested: bool,
    /// The calls from a fast entry point down to the storing function,
    /// when one reaches it (`__schedule`, `context_switch`,
    /// `lru_gen_use_mm`): filled from the calls seen, see [`reach`].
    #[serde(default)]
    pub path: Vec<String>,
}

/// The kinds of store [`Needless`] names.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Store {
    /// A constant stored (`WRITE_ONCE(mm->lru_gen.bitmap, -1)`): the
    /// same value every time.
    Constant,
    /// A compare-and-exchange loop whose new value is made from the old
    /// one and can equal it, with no test that it differs
    /// (`try_cmpxchg(&folio->flags, &old, new)` after `new = old & ~m`,
    /// `set_mask_bits()`): a locked write of what was read.
    Exchange,
    /// Another object's member copied (`WRITE_ONCE(sk->sk_napi_id,
    /// skb->napi_id)`): usually the same value as last time.
    Copy,
    /// An atomic or plain bit set or cleared (`set_bit`, `__clear_bit`)
    /// with no test of the bit first.
    Bit,
}

/// Where a write or read is made, as the kernel means it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Role {
    /// On a path that runs while the object is in use.
    #[default]
    Fast,
    /// While the object is built, before anyone else sees it: in the
    /// function that allocates it, or that initialises one of its locks,
    /// lists, timers or work items (`netif_napi_add_weight` with its
    /// `INIT_LIST_HEAD(&napi->poll_list)`), whatever the function's name;
    /// in a function its callers all pass an object they build; in an
    /// `__init` function.
    Construction,
    /// On the control path: a netlink, sysctl, ioctl, ethtool or socket
    /// option handler, a sysfs store, a `*_change` or `*change_mtu`
    /// function, a function that holds or asserts the RTNL; or a function
    /// every seen call of which is made from one of these.
    Control,
    /// While the object is torn down, after its last user is gone: in a
    /// `*_destroy*` or `*_destruct*` function (`inet_csk_destroy_sock`,
    /// `inet_sock_destruct`) that holds no lock of the object, an `__exit`
    /// function, or through a parameter every seen call passes an object
    /// being torn down.
    Teardown,
    /// When something went wrong: in a function handling an error, a
    /// failure, a WARN or an oops, by a word of its name
    /// (`mapping_set_error`, `tcp_v4_err`, `page_fault_oops`): rare by
    /// design, whatever path calls it.
    Failure,
}

/// A declaration in the source about member `path` of struct `ty`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Declaration {
    /// The struct (its tag or typedef name).
    pub ty: String,
    /// The member's path in it (`evicted`, `lrugen.max_seq`).
    pub path: String,
    /// What is said.
    pub said: Said,
    /// The function saying it (none for a member annotation).
    pub function: Option<String>,
    /// The file, relative to the tree.
    pub file: PathBuf,
    /// Its line (1-based).
    pub line: usize,
    /// Where the function makes it (always [`Role::Fast`] for a member
    /// annotation).
    pub role: Role,
    /// The parameter of its function the access starts from (`napi` of
    /// `f(dev, napi)`: 1), for an object built by a caller.
    pub param: Option<usize>,
    /// A fast entry point that reaches its function through the calls
    /// seen, in words (`the scheduler (__schedule)`): see [`reach`].
    pub entry: Option<String>,
    /// How many functions call its function, in the calls seen.
    pub callers: usize,
    /// How many of those a fast entry point reaches (see [`reach`]).
    #[serde(default)]
    pub hot_callers: usize,
    /// The network paths that reach its function through the calls seen
    /// (see [`reach::net_paths`]); none off them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<NetPath>,
}

#[cfg(test)]
impl Declaration {
    /// A plain read of `ty.path` in `function`, made as `role` through
    /// parameter `param`: for tests.
    pub(crate) fn read_in(
        ty: &str,
        path: &str,
        function: &str,
        role: Role,
        param: Option<usize>,
    ) -> Declaration {
        Declaration {
            ty: ty.into(),
            path: path.into(),
            said: Said::Read {
                once: false,
                remote: false,
            },
            function: Some(function.into()),
            file: "test.c".into(),
            line: 1,
            role,
            param,
            entry: None,
            callers: 0,
            hot_callers: 0,
            paths: Vec::new(),
        }
    }
}

/// The structs a reading records accesses to: some, by name, or every
/// one (a whole tree's evidence index).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wanted<'a> {
    /// These structs (tags or typedef names).
    Only(&'a [String]),
    /// Every struct.
    All,
}

impl Wanted<'_> {
    /// Is struct `ty` wanted?
    pub(crate) fn contains(&self, ty: &str) -> bool {
        match self {
            Wanted::Only(types) => types.iter().any(|t| t == ty),
            Wanted::All => true,
        }
    }

    /// Is no struct wanted (only lock wrappers are read)?
    pub(crate) fn is_empty(&self) -> bool {
        matches!(self, Wanted::Only(types) if types.is_empty())
    }
}

/// The build's types as the source reader needs them.
pub trait Types: Sync {
    /// The struct (tag or typedef name) of member `member` of struct `ty`,
    /// through pointers, arrays and typedefs; `None` when it is no struct
    /// or the build does not know `ty`.
    fn member_type(&self, ty: &str, member: &str) -> Option<String>;

    /// The struct's tag for a typedef name (`pg_data_t` → `pglist_data`);
    /// the name itself otherwise.
    fn canonical(&self, ty: &str) -> String;

    /// How C code names struct `ty` where it declares one: `struct ty`
    /// (or `union ty`), and each typedef of it (`pg_data_t` for
    /// `pglist_data`); a typedef of an anonymous struct is its own name.
    fn spellings(&self, ty: &str) -> Vec<String> {
        vec![format!("struct {ty}")]
    }
}

/// The declarations about the members of `types` (and of the structs
/// their writers' locks are members of) in the C files and headers of
/// `tree` that mention one of them; of `arch/`, only `arch/ARCH` when
/// `arch` is given (another machine's code is not the build's). With
/// `index`, from the tree's evidence index, built first when it is
/// missing or stale (see [`index`]): every file is read, for every struct.
pub fn declarations(
    tree: &Path,
    types: &[String],
    build: &dyn Types,
    arch: Option<&str>,
    index: Option<&IndexAt>,
) -> Result<Vec<Declaration>> {
    let files = tree_files(tree, arch)?;
    let mut progress = progress::Progress::for_tree(files.len());
    if let Some(index_at) = index {
        let ready = ready_index(tree, &files, build, arch, index_at, &mut progress)?;
        let found = index::read(&ready.index, types).ok_or_else(|| unreadable(&ready.at))?;
        // The sizes these structs' members and their first-member
        // holders hold, and the caches made by them: said of other
        // structs, whichever file says it (two steps at most).
        let mut links = Vec::new();
        let mut asked: Vec<String> = Vec::new();
        let mut next = placement::size_containers(&found);
        for _ in 0..2 {
            next.retain(|c| !asked.contains(c));
            if next.is_empty() {
                break;
            }
            let got = index::scan(&ready.index, Wanted::Only(&next), &|line| {
                line.contains("{\"Size\":")
            })
            .ok_or_else(|| unreadable(&ready.at))?;
            asked.append(&mut next);
            next = placement::size_containers(&got);
            links.extend(got);
        }
        return Ok(placement::join_sizes(found, &links));
    }
    progress.start(&format!("scanning for {}", types.join(", ")), files.len());
    // A file that never spells the type (`struct file`, a typedef of it)
    // declares no variable of it, and its accesses are not resolved: the
    // word alone (`file`, `request`) is in thousands of files that do not.
    let spellings: Vec<String> = types.iter().flat_map(|t| build.spellings(t)).collect();
    let finders: Vec<memchr::memmem::Finder<'_>> = spellings
        .iter()
        .map(|t| memchr::memmem::Finder::new(t.as_bytes()))
        .collect();
    // The files that mention a struct, read once, and in every file the
    // sizes passed through members (`proto_register()`'s cache of
    // `prot->obj_size`, `.obj_size = sizeof(struct tcp_sock)`).
    // Per file: its path and text when it names a struct, and its links.
    type Read<'a> = (Option<(&'a PathBuf, String)>, Vec<Declaration>);
    let read: Vec<Read<'_>> = files
        .par_iter()
        .map(|rel| -> Result<_> {
            let path = tree.join(rel);
            let bytes = crate::input::read_limited(&path, 64 << 20, "a C file")?;
            progress.step();
            let named = finders.iter().any(|f| mentions(f, &bytes));
            let sized = placement::may_link_sizes(&bytes);
            if !named && !sized {
                return Ok((None, Vec::new()));
            }
            let text = String::from_utf8_lossy(&bytes);
            let links = match sized {
                true => placement::size_links(&text, rel),
                false => Vec::new(),
            };
            Ok((named.then(|| (rel, text.into_owned())), links))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut links = Vec::new();
    let mut texts: Vec<(&PathBuf, String)> = Vec::new();
    for (text, linked) in read {
        texts.extend(text);
        links.extend(linked);
    }
    progress.done(&format!(
        "scanned {} files: {} name {}",
        files.len(),
        texts.len(),
        types.join(", ")
    ));
    let texts: Vec<(&Path, &str)> = texts
        .iter()
        .map(|(rel, text)| (rel.as_path(), text.as_str()))
        .collect();
    let found = read_all_with(&texts, Wanted::Only(types), build, &mut progress);
    Ok(placement::join_sizes(found, &links))
}

/// The evidence index of `files` of `tree` for `arch` kept as `index_at`
/// says, built first when it is missing or stale, open.
fn ready_index(
    tree: &Path,
    files: &[PathBuf],
    build: &dyn Types,
    arch: Option<&str>,
    index_at: &IndexAt,
    progress: &mut progress::Progress,
) -> Result<Ready> {
    let at = index::path(&index_at.dir, tree, arch);
    let key = index::key(tree, files, arch, index_at);
    let index = match index::open(&at, key) {
        Some(index) => index,
        None => {
            index::build(tree, files, build, &at, key, progress)?.ok_or_else(|| unreadable(&at))?
        }
    };
    Ok(Ready { at, index })
}

/// A tree's evidence index, open (see [`index::open`]).
struct Ready {
    /// Where it is, for messages.
    at: PathBuf,
    /// The index, open.
    index: index::Index,
}

/// An index just written that cannot be read back.
fn unreadable(at: &Path) -> Error {
    Error::Write {
        what: "evidence index",
        path: Some(at.to_owned()),
        reason: "written, then unreadable".into(),
    }
}

/// The needless-store candidates of the whole of `tree` (see [`Needless`]),
/// with every other declaration about the members they store to (who
/// else reads and writes them, and how) and where their structs are put:
/// from the tree's evidence index,
/// built first when it is missing or stale.
pub fn needless_stores(
    tree: &Path,
    build: &dyn Types,
    arch: Option<&str>,
    index_at: &IndexAt,
) -> Result<Vec<Declaration>> {
    let files = tree_files(tree, arch)?;
    let mut progress = progress::Progress::for_tree(files.len());
    let ready = ready_index(tree, &files, build, arch, index_at, &mut progress)?;
    let needless = |line: &str| line.contains("\"Needless\"");
    let mut found =
        index::scan(&ready.index, Wanted::All, &needless).ok_or_else(|| unreadable(&ready.at))?;
    let members: std::collections::HashSet<(String, String)> = found
        .iter()
        .map(|d| (d.ty.clone(), d.path.clone()))
        .collect();
    let mut types: Vec<String> = members.iter().map(|(ty, _)| ty.clone()).collect();
    types.sort();
    types.dedup();
    // What is said of those members, and where their structs are put.
    let about = |line: &str| {
        !needless(line)
            && index::ty_path(line).is_some_and(|(ty, path)| {
                members.contains(&(ty.to_owned(), path.to_owned()))
                    || path.is_empty()
                        && line.contains("\"Placed\"")
                        && types.binary_search_by(|t| t.as_str().cmp(ty)).is_ok()
            })
    };
    let others = index::scan(&ready.index, Wanted::Only(&types), &about)
        .ok_or_else(|| unreadable(&ready.at))?;
    progress.done(&format!(
        "index: {} needless-store candidates on {} members of {} structs",
        found.len(),
        members.len(),
        types.len()
    ));
    found.extend(others);
    Ok(found)
}

/// The structs of `tree` that many CPUs write at once: each with how many
/// lockless or marked stores (an atomic or bit operation, `data_race()`,
/// `WRITE_ONCE`, a release store) fast paths make to it in the files
/// under `under` (relative to the tree; every file when empty), most
/// first. From the tree's evidence index, built first when missing.
pub fn contended(
    tree: &Path,
    build: &dyn Types,
    arch: Option<&str>,
    under: &[PathBuf],
    index_at: &IndexAt,
) -> Result<Vec<(String, usize)>> {
    let files = tree_files(tree, arch)?;
    let mut progress = progress::Progress::for_tree(files.len());
    let ready = ready_index(tree, &files, build, arch, index_at, &mut progress)?;
    // A cheap test of the stored line before it is parsed and told.
    let kinds = ["\"Atomic\"", "\"DataRace\"", "\"Once\"", "\"Release\""];
    let keep = |line: &str| {
        line.contains("\"role\":\"Fast\"")
            && line.contains("\"Written\"")
            && kinds.iter().any(|k| line.contains(k))
    };
    let found =
        index::scan(&ready.index, Wanted::All, &keep).ok_or_else(|| unreadable(&ready.at))?;
    let mut stores: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for d in found {
        if let Said::Written(w, _) = &d.said
            && d.role == Role::Fast
            && (w.lockless() || w.marked())
            && (under.is_empty() || under.iter().any(|u| d.file.starts_with(u)))
        {
            *stores.entry(d.ty).or_default() += 1;
        }
    }
    let mut out: Vec<(String, usize)> = stores.into_iter().collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    progress.done(&format!(
        "index: {} structs written locklessly on a fast path",
        out.len()
    ));
    Ok(out)
}

/// Does `text` name what `finder` looks for (`struct rq`, `pg_data_t`) as
/// whole words (`struct rq`, not `struct rq_flags`; `pg_data_t`, not
/// `my_pg_data_t`)?
fn mentions(finder: &memchr::memmem::Finder<'_>, text: &[u8]) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let n = finder.needle().len();
    finder
        .find_iter(text)
        .any(|at| (at == 0 || !word(text[at - 1])) && text.get(at + n).is_none_or(|&b| !word(b)))
}

/// The declarations about the members of `types` in the C files `texts`
/// (each a path in the tree and its text): the headers' lock wrappers
/// first, then every file with them known, then the locks callers hold,
/// and the sizes passed through members joined, as [`declarations`] reads
/// a tree.
#[cfg(any(test, feature = "exercise"))]
pub(crate) fn read_all(
    texts: &[(&Path, &str)],
    types: &[String],
    build: &dyn Types,
) -> Vec<Declaration> {
    let found = read_all_with(
        texts,
        Wanted::Only(types),
        build,
        &mut progress::Progress::hidden(),
    );
    let links: Vec<Declaration> = texts
        .iter()
        .flat_map(|(rel, text)| placement::size_links(text, rel))
        .collect();
    placement::join_sizes(found, &links)
}

/// [`read_all`], saying its phases through `progress`.
fn read_all_with(
    texts: &[(&Path, &str)],
    types: Wanted<'_>,
    build: &dyn Types,
    progress: &mut progress::Progress,
) -> Vec<Declaration> {
    let headers = texts.iter().filter(|(rel, _)| is_header(rel)).count();
    progress.start("lock wrappers", headers * WRAPPER_ROUNDS);
    let mut wrappers = Wrappers::default();
    for _ in 0..WRAPPER_ROUNDS {
        wrappers = texts
            .par_iter()
            .filter(|(rel, _)| is_header(rel))
            .map(|(_, text)| {
                let w = wrappers_in(text, build, &wrappers);
                progress.step();
                w
            })
            .reduce(Wrappers::default, Wrappers::merge);
    }
    progress.done(&format!("read {headers} headers for lock wrappers"));
    progress.start("walking function bodies", texts.len());
    let mut read: Vec<Bodies> = texts
        .par_iter()
        .map(|(rel, text)| {
            let b = read_file(text, rel, types, build, &wrappers);
            progress.step();
            b
        })
        .collect();
    progress.done(&format!("walked the functions of {} files", texts.len()));
    // The wrappers `.c` files export, then the files that call them.
    let exported = exported::merged(read.iter_mut().map(|b| std::mem::take(&mut b.exported)));
    let again: std::result::Result<Wrappers, std::convert::Infallible> =
        exported::headers_with(&wrappers, &exported, |known, changed| {
            Ok(texts
                .par_iter()
                .filter(|(rel, text)| is_header(rel) && exported::mentions(text, changed))
                .map(|(_, text)| wrappers_in(text, build, known))
                .reduce(Wrappers::default, Wrappers::merge))
        });
    let Ok(again) = again;
    let changed = again.changed_from(&wrappers);
    let rereading: Vec<usize> = (0..read.len())
        .filter(|&i| exported::calls_changed(&read[i].calls, &read[i].defined, &changed))
        .collect();
    if !rereading.is_empty() {
        progress.start(
            "walking again what calls other files' wrappers",
            rereading.len(),
        );
        let reread: Vec<(usize, Bodies)> = rereading
            .par_iter()
            .map(|&i| {
                let (rel, text) = texts[i];
                let b = read_file(text, rel, types, build, &again);
                progress.step();
                (i, b)
            })
            .collect();
        for (i, b) in reread {
            read[i] = b;
        }
        progress.done(&format!(
            "walked again {} files that call other files' lock wrappers",
            rereading.len()
        ));
    }
    let defined = callers::definitions(
        texts
            .iter()
            .zip(&read)
            .map(|((rel, _), b)| (is_header(rel), &b.defined[..], &b.external[..])),
    );
    let mut out = Vec::new();
    let mut graph = graph::Graph::default();
    for ((rel, _), mut b) in texts.iter().zip(read) {
        out.append(&mut b.declarations);
        graph.add(rel, graph::Walked::of(b), &defined);
    }
    // A write in a function is under the locks its callers hold, and made
    // while the object is built when its callers build it.
    summary::Summary::of(&graph, &defined).apply(&mut out);
    out.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    out
}

/// What one file gives: its declarations, and of its function bodies the
/// lock wrappers, the calls and the names defined.
#[derive(Default)]
struct Bodies {
    declarations: Vec<Declaration>,
    wrappers: Wrappers,
    calls: Vec<callers::Call>,
    /// What the calls' callers test first (see [`callers::Call::tested`]).
    tests: Vec<Box<[callers::Test]>>,
    /// The functions defined, each once: two definitions of a name in one
    /// file are alternatives of the preprocessor (`#ifdef CONFIG_SMP`
    /// and its empty stub), one function to its callers.
    defined: Vec<String>,
    /// Those of [`Bodies::defined`] not `static`, each once.
    external: Vec<String>,
    /// Functions named as a value: in an initializer at file scope
    /// (`.ndo_open = e1000_open`), or in a body passed as an argument
    /// (`INIT_WORK(&w, f)`) or assigned, when this file defines them.
    named: Vec<String>,
    /// The lock wrappers of a `.c` file that other files may call: its
    /// external ones named for a lock (see [`Wrappers::exported`]).
    exported: Wrappers,
    /// The system calls it defines (`SYSCALL_DEFINE1(brk, ...)`:
    /// `sys_brk`).
    syscalls: Vec<String>,
    /// Its functions whose body is one expression (`bdev_set_flag()`'s
    /// `atomic_or(1 << flag, &bdev->__bd_flags);`): a setter, whose
    /// stores are its callers' (see [`summary`]).
    one_liners: Vec<String>,
}

/// [`Bodies`] of C text `text` (the file `file`) about the members of
/// `types`, with the lock wrappers `wrappers` known.
fn read_file(
    text: &str,
    file: &Path,
    types: Wanted<'_>,
    build: &dyn Types,
    wrappers: &Wrappers,
) -> Bodies {
    // No function and no struct body (a header of register #defines:
    // a third of a kernel tree's bytes): only its placements.
    if !text.contains('{') {
        return Bodies {
            declarations: placement::sites(text, file, types),
            ..Bodies::default()
        };
    }
    let mut read = walk::functions(text, file, types, build, wrappers);
    let mut found = members::members(text, file, types);
    found.extend(placement::sites(text, file, types));
    found.append(&mut read.declarations);
    read.declarations = found;
    read
}

/// Is `file` a header (`.h`)?
pub(crate) fn is_header(file: &Path) -> bool {
    file.extension().is_some_and(|e| e == "h")
}

/// The lock wrappers and member aliases (see
/// [`wrappers::member_aliases`]) defined in C text `text`, with `known`
/// known.
fn wrappers_in(text: &str, build: &dyn Types, known: &Wrappers) -> Wrappers {
    // A wrapper takes, asserts or releases a lock by the kernel's words,
    // in a function's body, or in a macro of a header that has some (one
    // of macros only is a machine's registers, hundreds of megabytes of
    // them, not worth parsing).
    let mut found = match !vocabulary::may_lock(text) || !text.contains('{') {
        true => Wrappers::default(),
        false => walk::functions(text, Path::new(""), Wanted::Only(&[]), build, known).wrappers,
    };
    for (name, path) in wrappers::member_aliases(text) {
        found.add_alias(name, path);
    }
    found
}

/// The C files of source tree `tree` (see [`c_files`]); an error when it
/// is no directory or lacks `arch/ARCH`.
fn tree_files(tree: &Path, arch: Option<&str>) -> Result<Vec<PathBuf>> {
    if !tree.is_dir() {
        return Err(Error::Usage(format!(
            "--source-tree {}: not a directory",
            tree.display()
        )));
    }
    if let Some(arch) = arch {
        check_arch(tree, arch)?;
    }
    c_files(tree, arch)
}

/// An error unless `tree` has `arch/ARCH` (when it has `arch/` at all: a
/// tree that is no kernel's has no machines to choose from).
fn check_arch(tree: &Path, arch: &str) -> Result<()> {
    let dir = tree.join("arch");
    if !dir.is_dir() || dir.join(arch).is_dir() {
        return Ok(());
    }
    let mut known: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| Error::Io {
            path: dir.clone(),
            source: e,
        })?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    known.sort();
    let hint = crate::suggest::did_you_mean(arch, known.iter().map(String::as_str));
    Err(Error::Usage(format!(
        "--arch {arch}: {} has no arch/{arch}{hint}; its machines are {}",
        tree.display(),
        known.join(", ")
    )))
}

/// Every `.c` and `.h` file of `tree` outside the directories that hold
/// no kernel code, hidden ones and test code (see [`is_test_code`]) (and
/// of `arch/`, only `arch/ARCH` when `arch` is given), relative to
/// `tree`, in name order.
fn c_files(tree: &Path, arch: Option<&str>) -> Result<Vec<PathBuf>> {
    let arches = tree.join("arch");
    let enter = |d: &Path| {
        let name = d
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        let top = d.parent() == Some(tree);
        let other_machine = d.parent() == Some(arches.as_path()) && arch.is_some_and(|a| a != name);
        !name.starts_with('.')
            && !other_machine
            && !matches!(&*name, "tests" | "kunit")
            && !(top && (crate::csource::NO_KERNEL_CODE.contains(&&*name) || name == "debian"))
    };
    let is_c = |p: &Path| {
        p.extension().is_some_and(|e| e == "c" || e == "h")
            && !p
                .file_stem()
                .is_some_and(|s| is_test_code(&s.to_string_lossy()))
    };
    let mut files = crate::csource::files_under(tree, &enter, &is_c, MAX_FILES);
    if files.len() > MAX_FILES {
        return Err(Error::Usage(format!(
            "--source-tree {}: more than {MAX_FILES} C files; is it a kernel tree?",
            tree.display()
        )));
    }
    for f in &mut files {
        *f = f.strip_prefix(tree).unwrap_or(f).to_owned();
    }
    files.sort();
    Ok(files)
}

/// A test module by the kernel's naming (`lib/test_bpf.c`,
/// `net/core/dev_addr_lists_test.c`, `sound_kunit.c`), file stem
/// `stem`: what it does to a struct (`populate_skb()` stores a static
/// fake device's `ifindex`) says nothing of the kernel's paths. The
/// directories `tests/` and `kunit/` are left out too.
fn is_test_code(stem: &str) -> bool {
    let words: Vec<&str> = stem.split(['_', '-']).collect();
    let (first, last) = (words[0], words[words.len() - 1]);
    words.len() > 1 && (first == "test" || matches!(last, "test" | "tests" | "kunit"))
}

#[cfg(test)]
mod tests;
