//! From a root struct and the rules to the annotated byte spans of that
//! root: every instance of an annotated type inside the root (at any depth,
//! in arrays of structs too) gets its fields' classes, locks are resolved to
//! the nearest enclosing instance, and kernel lock types are recognised.

//!
//! The jobs are split: [`walk`] goes through the struct instances of the
//! root and matches rules by path, [`locks`] knows the kernel's lock types
//! and resolves which fields are the same lock, and this module holds the
//! result types, the limits and the order of the steps. Cacheline groups
//! are paired by [`crate::layout::pair_group_markers`], as the layout pairs
//! them.

mod locks;
mod walk;

use crate::layout::{Group, pair_group_markers};
use crate::model::{SourceLoc, TypeId, TypeTable};
use crate::rules::{Access, Class, Location, Rules};

pub use locks::same_lock;
pub(crate) use locks::{ATOMIC_TYPES, LOCK_TYPES};
pub(crate) use walk::index_suffix;

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
    /// The contexts that read and write it, for a context rule.
    pub access: Option<std::sync::Arc<Access>>,
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
    /// The union instances on the way from the root, outermost first, each
    /// with the alternative (member index) the span lies in: see
    /// [`same_memory`].
    pub unions: Vec<Alternative>,
}

/// One union instance on a span's way from the root, and which of its
/// members (alternatives) the span lies in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Alternative {
    /// The union instance: numbered in walk order, unique within one root
    /// (each element of an array of unions is an instance of its own).
    pub union: u32,
    /// The index of the union's member that holds the span.
    pub member: u32,
}

/// True when `a` and `b` are the same memory: they lie in different
/// alternatives of a common union ancestor, so they never hold data at the
/// same time and cannot be a false-sharing pair. Fields in one alternative
/// are distinct memory wherever they sit.
pub fn same_memory(a: &Span, b: &Span) -> bool {
    diverging_union(a, b).is_some()
}

/// The union instance at which `a` and `b` take different alternatives.
/// Their common ancestors are a common prefix of both chains, so the walk
/// stops at the first union they do not share.
fn diverging_union(a: &Span, b: &Span) -> Option<u32> {
    a.unions
        .iter()
        .zip(&b.unions)
        .take_while(|(x, y)| x.union == y.union)
        .find(|(x, y)| x.member != y.member)
        .map(|(x, _)| x.union)
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

/// The root with its spans.
#[derive(Clone, Debug)]
pub struct Annotated {
    /// Every leaf the walk reached, in offset order.
    pub spans: Vec<Span>,
    /// Cacheline groups found on the way.
    pub groups: Vec<Group>,
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
    let walk::Walked {
        mut spans,
        markers,
        notes,
        stopped,
        visits,
    } = walk::walk(table, root, root_name, rules);
    locks::mark_named_locks(&mut spans);
    let groups = pair_group_markers(markers);
    for span in &mut spans {
        span.group = groups
            .iter()
            .filter(|g| span.offset >= g.begin && g.end.is_some_and(|e| span.offset < e))
            .max_by_key(|g| g.begin)
            .map(|g| g.name.clone());
    }
    spans.sort_by(|a, b| a.offset.cmp(&b.offset).then(a.path.cmp(&b.path)));
    let mut notes: Vec<String> = notes.into_iter().collect();
    notes.extend(disagreeing_alternatives(root_name, &spans));
    Annotated {
        spans,
        groups,
        notes,
        stopped,
        visits,
    }
}

/// Overlapping spans compared for [`disagreeing_alternatives`], at most.
const MAX_OVERLAPS: usize = 1_000_000;

/// One note per union instance whose alternatives give the same bytes
/// different classes: not a finding (the bytes are one location), but the
/// rules say two things about one location. `spans` are in offset order.
fn disagreeing_alternatives(root: &str, spans: &[Span]) -> Vec<String> {
    let classed: Vec<&Span> = spans
        .iter()
        .filter(|s| s.size > 0 && s.class.is_some() && !s.unions.is_empty())
        .collect();
    let mut noted = std::collections::HashSet::new();
    let mut notes = Vec::new();
    let mut compared = 0;
    for (x, a) in classed.iter().enumerate() {
        for b in &classed[x + 1..] {
            if b.offset >= a.end() || compared == MAX_OVERLAPS {
                break;
            }
            compared += 1;
            let (Some(ca), Some(cb)) = (a.class, b.class) else {
                continue;
            };
            if ca == cb {
                continue;
            }
            if let Some(union) = diverging_union(a, b)
                && noted.insert(union)
            {
                notes.push(format!(
                    "'{}' ({ca}) and '{}' ({cb}) are alternatives of one union in {root} at \
                     offset {}: the same memory, never a false-sharing pair, but the rules \
                     class it twice",
                    a.path,
                    b.path,
                    b.offset.max(a.offset)
                ));
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{GROUP_BEGIN, GROUP_END};
    use crate::model::{Composite, CompositeKind, Member, Type};

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
