//! From a root struct and the rules to the annotated byte spans of that
//! root: every instance of an annotated type inside the root (at any depth,
//! in arrays of structs too) gets its fields' classes, locks are resolved to
//! the nearest enclosing instance, and kernel lock types are recognised.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::layout::{GROUP_BEGIN, GROUP_END, PADDING_TYPE};
use crate::model::{SourceLoc, Type, TypeId, TypeTable, element_count};
use crate::rules::{Class, FieldRule, Location, Rules};

/// Typedef and struct names the kernel uses for locks: a field of one of
/// these types inside an annotated struct is a `lock` without a rule.
pub const LOCK_TYPES: &[&str] = &[
    "spinlock_t",
    "raw_spinlock_t",
    "rwlock_t",
    "seqlock_t",
    "arch_spinlock_t",
    "arch_rwlock_t",
    "spinlock",
    "raw_spinlock",
    "qspinlock",
    "qrwlock",
    "mutex",
    "rt_mutex",
    "rt_mutex_base",
    "rw_semaphore",
    "semaphore",
    "percpu_rw_semaphore",
];

/// Types that are written locklessly in most uses: suggested, never assumed.
pub const ATOMIC_TYPES: &[&str] = &["atomic_t", "atomic_long_t", "atomic64_t", "refcount_t"];

/// Elements of an array of structs analysed one by one, at most.
pub const MAX_ELEMENTS: u64 = 1024;

/// Leaf fields of one root, at most.
pub const MAX_SPANS: usize = 200_000;

/// Bytes of paths built for one root, at most: those its spans hold, and
/// those of the struct instances on the way (deep nesting of long names in
/// corrupt input, where each instance copies the paths of all the annotated
/// instances around it).
pub const MAX_BYTES: usize = 64 << 20;

/// Cacheline group markers (`__cacheline_group_begin__*`/`_end__*`) kept
/// per root, at most: a kernel root has a handful, and every span is
/// matched against every group.
pub const MAX_MARKERS: usize = 2048;

/// Notes of one root, at most, apart from those of the limits: a corrupt
/// root can raise one at every struct instance it walks.
pub const MAX_NOTES: usize = 64;

/// Struct instances walked in one root, at most (nested arrays of structs
/// with no leaves would otherwise multiply without adding fields).
pub const MAX_VISITS: usize = 200_000;

/// Why a span has its class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A rule of `ty` at `at`.
    Rule {
        /// The struct whose table holds the rule.
        ty: String,
        /// Where the rule is written.
        at: Location,
    },
    /// Inherited from a rule on an enclosing member.
    Inherited {
        /// Path of the annotated enclosing member.
        from: String,
    },
    /// A member of a kernel lock type (`spinlock_t`, ...).
    LockType(String),
    /// Named as the lock of a lock-protected rule.
    NamedLock,
    /// No rule: shown, never flagged.
    None,
}

/// A leaf member of the root, with its class.
#[derive(Clone, Debug)]
pub struct Span {
    /// Path from the root (`lruvec.lrugen.refaulted`, `zones[1].lock`).
    pub path: String,
    /// First byte, from the root's start.
    pub offset: u64,
    /// Size in bytes (the bytes a bitfield touches).
    pub size: u64,
    /// The class (`None` for unannotated members).
    pub class: Option<Class>,
    /// Lock identity: for a lock-protected field, its lock; for a lock, itself.
    pub lock: Option<String>,
    /// Why it has its class.
    pub origin: Origin,
    /// `(struct, path inside it)` for every struct instance on the way from
    /// the root, outermost first: how `[[allow]]` entries name the field.
    pub owners: Vec<(String, String)>,
    /// Array dimensions and element size, for arrays.
    pub array: Option<(Vec<u64>, u64)>,
    /// Declaration of the member.
    pub decl: Option<SourceLoc>,
    /// The kernel cacheline group the span starts in.
    pub group: Option<String>,
}

impl Span {
    /// First byte past the span.
    pub fn end(&self) -> u64 {
        self.offset.saturating_add(self.size)
    }

    /// The member's own name: the last path segment.
    pub fn name(&self) -> &str {
        let last = self.path.rsplit('.').next().unwrap_or(&self.path);
        last.split('[').next().unwrap_or(last)
    }
}

/// A kernel cacheline group of the root: `[begin, end)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupSpan {
    /// Path prefix and name of the group.
    pub name: String,
    /// Offset of the begin marker.
    pub begin: u64,
    /// Offset of the end marker (`None` when missing).
    pub end: Option<u64>,
}

/// The root with its spans.
#[derive(Clone, Debug)]
pub struct Annotated {
    /// Every leaf the walk reached, in offset order.
    pub spans: Vec<Span>,
    /// Cacheline groups found on the way.
    pub groups: Vec<GroupSpan>,
    /// Things worth telling the user (suggestions, locks outside the root).
    pub notes: Vec<String>,
    /// The walk stopped at one of its limits ([`MAX_SPANS`], [`MAX_VISITS`],
    /// [`MAX_BYTES`]): `spans` are incomplete, and a note says so.
    pub stopped: bool,
    /// Struct instances the walk entered, the root included (at most
    /// [`MAX_VISITS`] + 1): a measure of its work, whether or not the
    /// instances held any leaves.
    pub visits: usize,
}

/// Walks `root` (members loaded deeply) and classifies its leaves.
pub fn annotate(table: &TypeTable, root: TypeId, root_name: &str, rules: &Rules) -> Annotated {
    let index = RuleIndex::new(rules);
    let mut walker = Walker {
        table,
        index: &index,
        spans: Vec::new(),
        markers: Vec::new(),
        notes: BTreeSet::new(),
        contains: HashMap::new(),
        active: Vec::new(),
        visits: 0,
        bytes: 0,
        stopped: false,
    };
    let root_frame = Frame {
        ty: root_name.to_owned(),
        id: table.strip(root),
        rel: String::new(),
        abs: String::new(),
    };
    walker.composite(table.strip(root), 0, "", &[root_frame], None);
    let Walker {
        mut spans,
        markers,
        notes,
        stopped,
        visits,
        ..
    } = walker;
    mark_named_locks(&mut spans);
    let groups = pair_markers(markers);
    for span in &mut spans {
        span.group = groups
            .iter()
            .filter(|g| span.offset >= g.begin && g.end.is_some_and(|e| span.offset < e))
            .max_by_key(|g| g.begin)
            .map(|g| g.name.clone());
    }
    spans.sort_by(|a, b| a.offset.cmp(&b.offset).then(a.path.cmp(&b.path)));
    Annotated {
        spans,
        groups,
        notes: notes.into_iter().collect(),
        stopped,
        visits,
    }
}

/// True when two lock identities name the same lock (one may be a member
/// of the other: `lru_lock` and `lru_lock.rlock`).
pub fn same_lock(a: &str, b: &str) -> bool {
    fn inside(outer: &str, inner: &str) -> bool {
        inner
            .strip_prefix(outer)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
    }
    inside(a, b) || inside(b, a)
}

struct RuleIndex<'r> {
    /// type → path → rule.
    rules: HashMap<&'r str, HashMap<&'r str, &'r FieldRule>>,
    /// type → every proper prefix of a rule path (`lrugen` for `lrugen.max_seq`).
    prefixes: HashMap<&'r str, HashSet<&'r str>>,
}

impl<'r> RuleIndex<'r> {
    fn new(rules: &'r Rules) -> Self {
        let mut index = RuleIndex {
            rules: HashMap::new(),
            prefixes: HashMap::new(),
        };
        for ty in &rules.types {
            let by_path = index.rules.entry(ty.name.as_str()).or_default();
            let prefixes = index.prefixes.entry(ty.name.as_str()).or_default();
            for f in &ty.fields {
                by_path.insert(f.path.as_str(), f);
                for (i, _) in f.path.match_indices('.') {
                    prefixes.insert(&f.path[..i]);
                }
            }
        }
        index
    }

    fn annotated(&self, ty: &str) -> bool {
        self.rules.contains_key(ty)
    }
}

/// One struct instance on the way from the root to the current member.
#[derive(Clone)]
struct Frame {
    /// The struct's name.
    ty: String,
    /// Its type.
    id: TypeId,
    /// Path of the current position relative to the instance, with a
    /// trailing dot (empty at the instance's top).
    rel: String,
    /// Absolute path prefix of the instance (empty for the root, else ends with '.').
    abs: String,
}

struct Walker<'t, 'r> {
    table: &'t TypeTable,
    index: &'r RuleIndex<'r>,
    spans: Vec<Span>,
    markers: Vec<(String, bool, u64)>,
    /// Notes so far, each once, sorted.
    notes: BTreeSet<String>,
    contains: HashMap<TypeId, bool>,
    active: Vec<TypeId>,
    visits: usize,
    /// Bytes of paths built so far (see [`MAX_BYTES`]).
    bytes: usize,
    /// A limit was reached (and noted).
    stopped: bool,
}

/// A member's type seen through typedefs, qualifiers and arrays.
struct Shape {
    /// Names it goes by: typedef names on the way, then the struct tag.
    names: Vec<String>,
    /// Element type, stripped.
    element: TypeId,
    /// Array dimensions, if an array.
    dims: Option<Vec<u64>>,
}

impl Walker<'_, '_> {
    fn shape(&self, ty: TypeId) -> Shape {
        let table = self.table;
        let mut names = Vec::new();
        let mut id = ty;
        let mut dims = None;
        for _ in 0..crate::model::MAX_TYPE_DEPTH {
            match table.get(id) {
                Type::Typedef { name, target } => {
                    names.push(name.clone());
                    id = *target;
                }
                Type::Qualified { target, .. } => id = *target,
                Type::Array { element, dims: d } if dims.is_none() => {
                    dims = Some(d.iter().map(|n| n.unwrap_or(0)).collect());
                    id = *element;
                }
                Type::Composite(c) => {
                    names.extend(c.name.clone());
                    break;
                }
                _ => break,
            }
        }
        Shape {
            names,
            element: id,
            dims,
        }
    }

    /// True when `id` is, or holds by value, a type that has rules.
    fn holds_annotated(&mut self, id: TypeId) -> bool {
        if let Some(known) = self.contains.get(&id) {
            return *known;
        }
        if self.active.contains(&id) || self.active.len() > 64 {
            return false;
        }
        let Some(c) = self.table.composite(id) else {
            return false;
        };
        self.active.push(id);
        let mut found = c.name.as_deref().is_some_and(|n| self.index.annotated(n));
        for m in c.members.as_deref().unwrap_or(&[]) {
            if found {
                break;
            }
            let shape = self.shape(m.ty);
            found = shape.names.iter().any(|n| self.index.annotated(n))
                || self.holds_annotated(shape.element);
        }
        self.active.pop();
        self.contains.insert(id, found);
        found
    }

    /// Walks the members of composite `id` placed at `base`, whose paths
    /// start with `prefix`.
    fn composite(
        &mut self,
        id: TypeId,
        base: u64,
        prefix: &str,
        frames: &[Frame],
        inherited: Option<&Inherit>,
    ) {
        if self.active.contains(&id) || self.active.len() > 64 {
            return;
        }
        self.visits += 1;
        if self.spans.len() > MAX_SPANS || self.visits > MAX_VISITS || self.bytes > MAX_BYTES {
            if !self.stopped {
                self.stopped = true;
                self.notes.insert(format!(
                    "stopped after {} fields in {} structs: the root is corrupt or enormous",
                    self.spans.len(),
                    self.visits
                ));
            }
            return;
        }
        let table = self.table;
        let Some(c) = table.composite(id) else {
            return;
        };
        self.active.push(id);
        for m in c.members.as_deref().unwrap_or(&[]) {
            if self.stopped {
                break;
            }
            let offset = base.saturating_add(m.bit_offset / 8);
            let shape = self.shape(m.ty);
            let Some(name) = m.name.as_deref() else {
                if table.composite(shape.element).is_some() && shape.dims.is_none() {
                    self.composite(shape.element, offset, prefix, frames, inherited);
                }
                continue;
            };
            let abs = format!("{prefix}{name}");
            if let Some(group) = name.strip_prefix(GROUP_BEGIN) {
                self.marker(group, true, offset);
                continue;
            }
            if let Some(group) = name.strip_prefix(GROUP_END) {
                self.marker(group, false, offset);
                continue;
            }
            if shape.names.iter().any(|n| n == PADDING_TYPE) {
                continue;
            }
            self.member(m, name, abs, offset, shape, frames, inherited);
        }
        self.active.pop();
    }

    /// Keeps `text` as a note, once, up to [`MAX_NOTES`].
    fn note(&mut self, text: String) {
        if self.notes.len() < MAX_NOTES || self.notes.contains(&text) {
            self.notes.insert(text);
        } else {
            self.notes.insert(format!(
                "only the first {MAX_NOTES} notes are kept: the root is corrupt or enormous"
            ));
        }
    }

    /// Keeps a group's begin or end marker, up to [`MAX_MARKERS`].
    fn marker(&mut self, group: &str, begin: bool, offset: u64) {
        if self.markers.len() < MAX_MARKERS {
            self.markers.push((group.to_owned(), begin, offset));
        } else {
            self.notes.insert(format!(
                "only the first {MAX_MARKERS} cacheline group markers are used: the root is corrupt or enormous"
            ));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn member(
        &mut self,
        m: &crate::model::Member,
        name: &str,
        abs: String,
        offset: u64,
        shape: Shape,
        frames: &[Frame],
        inherited: Option<&Inherit>,
    ) {
        let table = self.table;
        let rels: Vec<String> = frames.iter().map(|f| format!("{}{name}", f.rel)).collect();
        // What a span of this member holds: its path and its owners.
        self.bytes += abs.len()
            + frames
                .iter()
                .zip(&rels)
                .map(|(f, rel)| f.ty.len() + rel.len())
                .sum::<usize>();
        let rule = frames.iter().zip(&rels).find_map(|(f, rel)| {
            Some((f, *self.index.rules.get(f.ty.as_str())?.get(rel.as_str())?))
        });
        let deeper = frames.iter().zip(&rels).any(|(f, rel)| {
            self.index
                .prefixes
                .get(f.ty.as_str())
                .is_some_and(|p| p.contains(rel.as_str()))
        });
        let is_lock = shape.names.iter().any(|n| LOCK_TYPES.contains(&n.as_str()));
        let element_is_composite = table
            .composite(shape.element)
            .is_some_and(|c| c.members.is_some());
        let own_rules = shape
            .names
            .iter()
            .find(|n| self.index.annotated(n))
            .cloned();
        let descend = element_is_composite
            && (deeper
                || (!is_lock && (own_rules.is_some() || self.holds_annotated(shape.element))));
        let here = match rule {
            Some((frame, r)) => Some(Inherit {
                class: r.class,
                lock: r
                    .lock
                    .as_ref()
                    .map(|l| self.resolve_lock(&l.text, frame, frames)),
                origin: Origin::Rule {
                    ty: frame.ty.clone(),
                    at: r.at.clone(),
                },
                path: abs.clone(),
            }),
            None => inherited.cloned(),
        };
        if descend {
            let element_size = table.size_of(shape.element).unwrap_or(0);
            let count = shape.dims.as_deref().map_or(Some(1), |d| {
                element_count(&d.iter().map(|n| Some(*n)).collect::<Vec<_>>())
            });
            let count = count.unwrap_or(0);
            if count > MAX_ELEMENTS {
                self.note(format!(
                    "only the first {MAX_ELEMENTS} of the {count} elements of '{abs}' are analysed"
                ));
            }
            let inherit_down = here.as_ref().map(|h| Inherit {
                origin: Origin::Inherited {
                    from: h.path.clone(),
                },
                ..h.clone()
            });
            for i in 0..count.min(MAX_ELEMENTS) {
                if self.stopped {
                    break;
                }
                let elem_abs = match &shape.dims {
                    Some(d) => format!("{abs}{}", index_suffix(d, i)),
                    None => abs.clone(),
                };
                let mut inner: Vec<Frame> = frames
                    .iter()
                    .zip(&rels)
                    .map(|(f, rel)| Frame {
                        rel: format!("{rel}."),
                        ..f.clone()
                    })
                    .collect();
                self.bytes += 2 * elem_abs.len()
                    + inner
                        .iter()
                        .map(|f| f.ty.len() + f.rel.len() + f.abs.len())
                        .sum::<usize>();
                if let Some(ty) = &own_rules {
                    inner.push(Frame {
                        ty: ty.clone(),
                        id: shape.element,
                        rel: String::new(),
                        abs: format!("{elem_abs}."),
                    });
                }
                self.composite(
                    shape.element,
                    offset.saturating_add(i.saturating_mul(element_size)),
                    &format!("{elem_abs}."),
                    &inner,
                    inherit_down.as_ref(),
                );
            }
            return;
        }
        let inside_annotated = frames.iter().any(|f| self.index.annotated(&f.ty));
        let (class, lock, origin) = match here {
            Some(h) => (Some(h.class), h.lock, h.origin),
            None if is_lock && inside_annotated => (
                Some(Class::Lock),
                None,
                Origin::LockType(shape.names[0].clone()),
            ),
            None => (None, None, Origin::None),
        };
        if class.is_none()
            && let Some(frame) = frames.last()
            && self.index.annotated(&frame.ty)
            && let Some(atomic) = shape
                .names
                .iter()
                .find(|n| ATOMIC_TYPES.contains(&n.as_str()))
        {
            self.note(format!(
                "'{}.{}' ({atomic}) has no rule; atomics are usually written without a lock: \
                 consider {} = \"lockless-write\" under [{}]",
                frame.ty,
                rels.last().map_or(name, String::as_str),
                rels.last().map_or(name, String::as_str),
                frame.ty
            ));
        }
        let size = match m.bit_size {
            Some(width) => ((m.bit_offset % 8) + width).div_ceil(8),
            None => table.size_of(m.ty).unwrap_or(0),
        };
        let array = shape
            .dims
            .map(|d| (d, table.size_of(shape.element).unwrap_or(0)));
        let lock = match class {
            Some(Class::Lock) => Some(abs.clone()),
            _ => lock,
        };
        self.spans.push(Span {
            owners: frames
                .iter()
                .zip(&rels)
                .map(|(f, rel)| (f.ty.clone(), rel.clone()))
                .collect(),
            path: abs,
            offset,
            size,
            class,
            lock,
            origin,
            array,
            decl: m.decl.clone(),
            group: None,
        });
    }

    /// The identity of the lock `text` named by a rule of `owner`: a member
    /// of the same instance, or `TYPE.member` of the nearest enclosing
    /// instance of TYPE; a lock outside the root keeps its written name.
    fn resolve_lock(&mut self, text: &str, owner: &Frame, frames: &[Frame]) -> String {
        let first = text.split('.').next().unwrap_or(text);
        let steps = [crate::path::Step::Field(first.to_owned())];
        if crate::path::resolve(self.table, owner.id, &steps, text).is_ok() {
            return format!("{}{text}", owner.abs);
        }
        let rest = text.split_once('.').map_or("", |(_, r)| r);
        if let Some(frame) = frames.iter().rev().find(|f| f.ty == first) {
            return format!("{}{rest}", frame.abs);
        }
        self.note(format!(
            "lock '{text}' of a {} rule is not inside root '{}'; it is treated as a lock outside the root",
            owner.ty,
            frames.first().map_or("", |f| f.ty.as_str())
        ));
        text.to_owned()
    }
}

/// Class and lock handed down from a rule on an enclosing member.
#[derive(Clone, Debug)]
struct Inherit {
    class: Class,
    lock: Option<String>,
    origin: Origin,
    path: String,
}

/// `[i][j][k]` for flat element `flat` of an array with `dims`.
pub fn index_suffix(dims: &[u64], flat: u64) -> String {
    let mut rest = flat;
    let mut parts = vec![0; dims.len()];
    for (slot, d) in parts.iter_mut().zip(dims).rev() {
        let d = (*d).max(1);
        *slot = rest % d;
        rest /= d;
    }
    parts.iter().map(|p| format!("[{p}]")).collect()
}

/// Any member named as a lock is one, even without a rule of its own.
fn mark_named_locks(spans: &mut [Span]) {
    let named: Vec<String> = spans
        .iter()
        .filter(|s| s.class == Some(Class::LockProtected))
        .filter_map(|s| s.lock.clone())
        .collect();
    let locks = LockIndex::new(&named);
    for span in spans.iter_mut().filter(|s| s.class.is_none()) {
        if let Some(lock) = locks.first_same(&span.path) {
            span.class = Some(Class::Lock);
            span.lock = Some(lock.to_owned());
            span.origin = Origin::NamedLock;
        }
    }
}

/// Named locks, found by path in time linear in the path's length (the
/// first of `names` that is the [`same_lock`] as it), where scanning them
/// all for each unclassified span was quadratic in the spans of corrupt
/// roots.
struct LockIndex<'n> {
    names: &'n [String],
    /// Each name, to the position of its first occurrence.
    whole: HashMap<&'n str, usize>,
    /// Each proper prefix of a name ending before a `.` or `[`, to the
    /// first position of a name that has it.
    outer: HashMap<&'n str, usize>,
}

impl<'n> LockIndex<'n> {
    fn new(names: &'n [String]) -> Self {
        let mut whole = HashMap::new();
        let mut outer = HashMap::new();
        for (i, name) in names.iter().enumerate() {
            whole.entry(name.as_str()).or_insert(i);
            for cut in member_cuts(name) {
                outer.entry(&name[..cut]).or_insert(i);
            }
        }
        LockIndex {
            names,
            whole,
            outer,
        }
    }

    /// The first name that `path` is, is a member of, or holds.
    fn first_same(&self, path: &str) -> Option<&'n str> {
        let holds = self.outer.get(path).copied();
        let inside = member_cuts(path)
            .chain([path.len()])
            .filter_map(|cut| self.whole.get(&path[..cut]).copied());
        let first = holds.into_iter().chain(inside).min()?;
        Some(&self.names[first])
    }
}

/// Where `path` splits into an outer member and the rest: before each `.`
/// or `[`.
fn member_cuts(path: &str) -> impl Iterator<Item = usize> + '_ {
    path.match_indices(['.', '[']).map(|(i, _)| i)
}

fn pair_markers(markers: Vec<(String, bool, u64)>) -> Vec<GroupSpan> {
    let mut groups: Vec<GroupSpan> = Vec::new();
    for (name, begin, offset) in markers {
        if begin {
            groups.push(GroupSpan {
                name,
                begin: offset,
                end: None,
            });
        } else if let Some(g) = groups
            .iter_mut()
            .rev()
            .find(|g| g.name == name && g.end.is_none() && g.begin <= offset)
        {
            g.end = Some(offset);
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Composite, CompositeKind, Member};

    #[test]
    fn flat_indexes_become_c_indexes() {
        assert_eq!(index_suffix(&[1, 2, 4], 0), "[0][0][0]");
        assert_eq!(index_suffix(&[1, 2, 4], 5), "[0][1][1]");
        assert_eq!(index_suffix(&[3], 2), "[2]");
    }

    #[test]
    fn the_lock_index_finds_the_first_same_lock() {
        let names: Vec<String> = ["b.lock", "a.l", "a.l.rlock", "c[2].m", "a.l", "[1].k"]
            .map(String::from)
            .into();
        let index = LockIndex::new(&names);
        let paths = [
            "a.l",
            "a.l.rlock",
            "a",
            "a.l.rlock.raw",
            "a.lock",
            "b.lock",
            "b",
            "b.lock[1]",
            "c",
            "c[2]",
            "c[2].m.x",
            "c[1].m",
            "x",
            "",
            "[1]",
            "[1].k.j",
            ".",
        ];
        for path in paths {
            let slow = names
                .iter()
                .find(|l| same_lock(l, path))
                .map(String::as_str);
            assert_eq!(index.first_same(path), slow, "{path}");
        }
    }

    #[test]
    fn lock_identities_match_through_members() {
        assert!(same_lock("lruvec.lru_lock", "lruvec.lru_lock.rlock"));
        assert!(same_lock("a.l", "a.l"));
        assert!(!same_lock("a.l", "a.lock"));
    }

    /// A member named `name` of type `ty` at offset 0.
    fn field(name: &str, ty: TypeId) -> Member {
        Member {
            name: Some(name.into()),
            ty,
            bit_offset: 0,
            bit_size: None,
            alignment: None,
            decl: None,
        }
    }

    /// A struct named `name` of `size` bytes.
    fn struct_type(name: &str, size: u64, members: Vec<Member>) -> Type {
        Type::Composite(Composite {
            kind: CompositeKind::Struct,
            name: Some(name.into()),
            size: Some(size),
            alignment: None,
            members: Some(members),
            decl: None,
        })
    }

    /// Rules with one rule, on `inner.x`.
    fn inner_rules() -> Rules {
        let path: std::sync::Arc<std::path::Path> = std::path::Path::new("r.toml").into();
        crate::rules::toml::parse(&path, "[inner]\nx = \"hot-read\"\n").unwrap()
    }

    /// A root holding `elements` copies of a struct with `groups` cacheline
    /// groups (all begins, then all ends) around one int.
    fn grouped_root(groups: usize, elements: u64) -> (TypeTable, TypeId) {
        let mut table = TypeTable::new();
        let int = table.push(Type::Base {
            name: "int".into(),
            size: 4,
        });
        let marker = table.push(Type::Array {
            element: int,
            dims: vec![Some(0)],
        });
        let mut members: Vec<Member> = (0..groups)
            .map(|k| field(&format!("{GROUP_BEGIN}g{k}"), marker))
            .collect();
        members.push(field("x", int));
        members.extend((0..groups).map(|k| Member {
            bit_offset: 32,
            ..field(&format!("{GROUP_END}g{k}"), marker)
        }));
        let inner = table.push(struct_type("inner", 4, members));
        let array = table.push(Type::Array {
            element: inner,
            dims: vec![Some(elements)],
        });
        let root = table.push(struct_type("root", 4 * elements, vec![field("a", array)]));
        (table, root)
    }

    #[test]
    fn cacheline_groups_are_bounded_with_a_note() {
        let rules = inner_rules();
        let (table, root) = grouped_root(3, 2);
        let a = annotate(&table, root, "root", &rules);
        assert_eq!(a.groups.len(), 6);
        assert!(a.notes.is_empty(), "{:?}", a.notes);
        assert_eq!(a.spans[1].group.as_deref(), Some("g2"));
        // 1024 elements of 200 groups: 409,600 markers, each span matched
        // against every group (0.34 s for 1024 spans before the limit).
        let (table, root) = grouped_root(200, 1024);
        let a = annotate(&table, root, "root", &rules);
        // 2048 markers: 5 elements of 200 begins and 200 ends, then 48
        // begins of the sixth.
        assert_eq!(a.groups.len(), 5 * 200 + 48);
        assert_eq!(a.spans.len(), 1024);
        assert!(
            a.notes.iter().any(|n| n.contains("group markers")),
            "{:?}",
            a.notes
        );
    }

    /// `root { mid b[outer]; }`, `mid { inner a[per_mid]; }`,
    /// `inner { int x; }`: `outer * per_mid` leaves under a rule on `inner`.
    fn nested_root(outer: u64, per_mid: u64) -> (TypeTable, TypeId) {
        let mut table = TypeTable::new();
        let int = table.push(Type::Base {
            name: "int".into(),
            size: 4,
        });
        let mut composite = |name: &str, member: &str, ty: TypeId, count: u64| {
            let array = table.push(Type::Array {
                element: ty,
                dims: vec![Some(count)],
            });
            let size = table.size_of(ty).unwrap_or(0) * count;
            table.push(struct_type(name, size, vec![field(member, array)]))
        };
        let inner = composite("inner", "x", int, 1);
        let mid = composite("mid", "a", inner, per_mid);
        let root = composite("root", "b", mid, outer);
        (table, root)
    }

    #[test]
    fn the_walk_stops_at_its_limit_with_a_note() {
        let rules = inner_rules();
        let (table, root) = nested_root(4, 1024);
        let a = annotate(&table, root, "root", &rules);
        assert_eq!((a.spans.len(), a.stopped), (4096, false));
        assert!(a.notes.is_empty(), "{:?}", a.notes);
        // The root, 4 mids and their 4 * 1024 inners.
        assert_eq!(a.visits, 1 + 4 + 4 * 1024);
        assert_eq!(a.spans[1025].path, "b[1].a[1].x");
        // 1024 mids of 1024 inners: the 200,001st struct visit stops the
        // walk. Visits so far: the root, 195 whole mids of 1 + 1024 (to
        // 199,876), the 196th mid (199,877), then 123 of its inners (to
        // 200,000), one leaf each.
        let (table, root) = nested_root(1024, 1024);
        let a = annotate(&table, root, "root", &rules);
        assert_eq!((a.spans.len(), a.stopped), (195 * 1024 + 123, true));
        assert_eq!(a.visits, MAX_VISITS + 1);
        assert_eq!(
            a.notes,
            ["stopped after 199803 fields in 200001 structs: the root is corrupt or enormous"]
        );
    }

    #[test]
    fn notes_are_bounded_with_a_note() {
        let rules = inner_rules();
        // Each of the 70 mids has more elements than are analysed, and says
        // so in a note of its own: the first 64 are kept, then one that
        // says the rest were dropped.
        let (table, root) = nested_root(70, MAX_ELEMENTS + 1);
        let a = annotate(&table, root, "root", &rules);
        assert_eq!((a.spans.len(), a.stopped), (70 * 1024, false));
        let elements = |i: usize| {
            format!("only the first 1024 of the 1025 elements of 'b[{i}].a' are analysed")
        };
        assert_eq!(a.notes.len(), 65, "{:?}", a.notes);
        assert!(a.notes.contains(&elements(63)));
        assert!(!a.notes.contains(&elements(64)));
        assert!(a.notes.contains(
            &"only the first 64 notes are kept: the root is corrupt or enormous".to_owned()
        ));
    }

    /// `depth` levels of structs all named `inner`, each holding two of the
    /// next in a member named by `name_len` letters; the last is empty.
    fn deep_root(depth: usize, name_len: usize) -> (TypeTable, TypeId) {
        let mut table = TypeTable::new();
        let mut level = table.push(struct_type("inner", 0, Vec::new()));
        for _ in 0..depth {
            let pair = table.push(Type::Array {
                element: level,
                dims: vec![Some(2)],
            });
            level = table.push(struct_type(
                "inner",
                0,
                vec![field(&"m".repeat(name_len), pair)],
            ));
        }
        (table, level)
    }

    #[test]
    fn paths_built_on_the_way_count_towards_the_byte_limit() {
        let rules = inner_rules();
        let (table, root) = deep_root(3, 1);
        let a = annotate(&table, root, "root", &rules);
        assert_eq!((a.spans.len(), a.stopped), (0, false));
        // 2^17 - 1 instances, under the visit limit, and no leaves. Each
        // instance at depth d copies the relative paths of the d annotated
        // instances around it, about d * d / 2 names of 1000 letters: some
        // 20 GB at the deepest levels, where the bytes of spans alone stay 0.
        let (table, root) = deep_root(16, 1000);
        let a = annotate(&table, root, "root", &rules);
        assert_eq!((a.spans.len(), a.stopped), (0, true));
        assert!(
            a.notes[0].starts_with("stopped after 0 fields in "),
            "{:?}",
            a.notes
        );
    }
}
