//! The walk through a root's struct instances: every member at its
//! absolute offset, arrays of structs element by element, descending only
//! into what holds an annotated type; rules matched by the member's path
//! relative to each enclosing instance, classes handed down from an
//! annotated member to what it holds.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use super::locks::{ATOMIC_TYPES, LOCK_TYPES};
use super::{
    Alternative, MAX_BYTES, MAX_ELEMENTS, MAX_MARKERS, MAX_NOTES, MAX_SPANS, MAX_VISITS, Origin,
    Span,
};
use crate::layout::{GROUP_BEGIN, GROUP_END, PADDING_TYPE};
use crate::model::{CompositeKind, Type, TypeId, TypeTable, element_count};
use crate::rules::{Access, Class, FieldRule, Rules};

/// What the walk found, before locks are marked and groups paired.
pub(super) struct Walked {
    pub(super) spans: Vec<Span>,
    /// `(group, is_begin, offset)` of each group marker, in member order.
    pub(super) markers: Vec<(String, bool, u64)>,
    pub(super) notes: BTreeSet<String>,
    pub(super) stopped: bool,
    pub(super) visits: usize,
}

/// Walks `root` (members loaded deeply), named `root_name`, under `rules`.
pub(super) fn walk(table: &TypeTable, root: TypeId, root_name: &str, rules: &Rules) -> Walked {
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
        unions: Vec::new(),
        next_union: 0,
    };
    let root_frame = Frame {
        ty: root_name.to_owned(),
        id: table.strip(root),
        rel: String::new(),
        abs: String::new(),
    };
    walker.composite(table.strip(root), 0, "", &[root_frame], None);
    Walked {
        spans: walker.spans,
        markers: walker.markers,
        notes: walker.notes,
        stopped: walker.stopped,
        visits: walker.visits,
    }
}

/// The rules by type and path.
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
    /// The union instances around the current member, with the alternative
    /// it lies in.
    unions: Vec<Alternative>,
    /// The number of the next union instance entered.
    next_union: u32,
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
        let union = (c.kind == CompositeKind::Union).then(|| {
            self.next_union = self.next_union.saturating_add(1);
            self.next_union
        });
        // The chain outside this union: each alternative replaces the last.
        let outside = self.unions.len();
        for (k, m) in c.members.as_deref().unwrap_or(&[]).iter().enumerate() {
            if self.stopped {
                break;
            }
            if let Some(union) = union {
                self.unions.truncate(outside);
                self.unions.push(Alternative {
                    union,
                    member: u32::try_from(k).unwrap_or(u32::MAX),
                });
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
        self.unions.truncate(outside);
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
                access: r.access.clone(),
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
        let (class, access, lock, origin) = match here {
            Some(h) => (Some(h.class), h.access, h.lock, h.origin),
            None if is_lock && inside_annotated => (
                Some(Class::Lock),
                None,
                None,
                Origin::LockType(shape.names[0].clone()),
            ),
            None => (None, None, None, Origin::None),
        };
        // A net_cachelines table documents what it documents: its missing
        // rows are the table's lint, not a suggestion to write one.
        if class.is_none()
            && let Some(frame) = frames.last()
            && self.index.annotated(&frame.ty)
            && self.index.rules[frame.ty.as_str()]
                .values()
                .any(|r| r.source == crate::rules::Source::Rules)
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
            access,
            lock,
            origin,
            array,
            decl: m.decl.clone(),
            group: None,
            unions: self.unions.clone(),
        });
    }

    /// The identity of the lock `text` named by a rule of `owner`: a member
    /// of the same instance, or `TYPE.member` of the nearest enclosing
    /// instance of TYPE; a lock outside the root keeps its written name.
    fn resolve_lock(&mut self, text: &str, owner: &Frame, frames: &[Frame]) -> String {
        let first = text.split('.').next().unwrap_or(text);
        // Asked for every rule with a lock on every walk (suggest walks
        // thousands of layouts): an existence check, not `path::resolve`,
        // whose error would spell out a "did you mean" nobody reads.
        if matches!(
            crate::path::find_member(self.table, owner.id, first),
            Ok(Some(_))
        ) {
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
    access: Option<Arc<Access>>,
    lock: Option<String>,
    origin: Origin,
    path: String,
}

/// `[i][j][k]` for flat element `flat` of an array with `dims`.
pub(crate) fn index_suffix(dims: &[u64], flat: u64) -> String {
    let mut rest = flat;
    let mut parts = vec![0; dims.len()];
    for (slot, d) in parts.iter_mut().zip(dims).rev() {
        let d = (*d).max(1);
        *slot = rest % d;
        rest /= d;
    }
    parts.iter().map(|p| format!("[{p}]")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_indexes_become_c_indexes() {
        assert_eq!(index_suffix(&[1, 2, 4], 0), "[0][0][0]");
        assert_eq!(index_suffix(&[1, 2, 4], 5), "[0][1][1]");
        assert_eq!(index_suffix(&[3], 2), "[2]");
    }
}
