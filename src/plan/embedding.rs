//! Which structs hold which by value (directly, in an array, through
//! typedefs): the structs a command reads, those a re-laid-out struct
//! changes out to the outermost, and the anonymous levels a plan's name
//! names inside its struct.

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use crate::model::{Composite, MAX_TYPE_DEPTH, Type, TypeId, TypeTable};

/// The struct (not through a pointer) a member type is, directly or as
/// array elements.
fn by_value(table: &TypeTable, mut id: TypeId) -> Option<TypeId> {
    for _ in 0..MAX_TYPE_DEPTH {
        match table.get(id) {
            Type::Typedef { target, .. } | Type::Qualified { target, .. } => id = *target,
            Type::Array { element, .. } => id = *element,
            Type::Composite(c) if c.members.is_some() => return Some(id),
            _ => return None,
        }
    }
    None
}

/// The structs `c`'s members are by value.
pub(super) fn children(table: &TypeTable, c: &Composite) -> Vec<TypeId> {
    c.members
        .iter()
        .flatten()
        .filter_map(|m| by_value(table, m.ty))
        .collect()
}

/// The struct or union a plan's `name` names inside struct `id` (its
/// OUTER): `id` itself for a plain name, else each anonymous level
/// holding the next of its [`super::inner_members`] in turn; `Err` with
/// the member no anonymous level holds.
pub(crate) fn anonymous_path<'n>(
    table: &TypeTable,
    id: TypeId,
    name: &'n str,
) -> std::result::Result<TypeId, &'n str> {
    super::inner_members(name).try_fold(id, |at, member| {
        anonymous_holding(table, at, member).ok_or(member)
    })
}

/// The anonymous struct or union inside struct `id` (through anonymous
/// levels) that holds a member named `member` itself.
fn anonymous_holding(table: &TypeTable, id: TypeId, member: &str) -> Option<TypeId> {
    let mut stack = vec![(id, 0)];
    while let Some((ty, depth)) = stack.pop() {
        let Some(members) = table.composite(ty).and_then(|c| c.members.as_ref()) else {
            continue;
        };
        for m in members.iter().filter(|m| m.name.is_none()) {
            let inner = table.strip(m.ty);
            let holds = table
                .composite(inner)
                .and_then(|c| c.members.as_ref())
                .is_some_and(|ms| ms.iter().any(|x| x.name.as_deref() == Some(member)));
            if holds {
                return Some(inner);
            }
            if depth < MAX_TYPE_DEPTH {
                stack.push((inner, depth + 1));
            }
        }
    }
    None
}

/// The structs `used` are or hold by value, directly or through others.
pub(crate) fn reachable(table: &TypeTable, used: &[TypeId]) -> HashSet<TypeId> {
    let mut seen = HashSet::new();
    let mut stack: Vec<TypeId> = used.iter().filter_map(|&id| by_value(table, id)).collect();
    while let Some(id) = stack.pop() {
        if seen.insert(id)
            && let Some(c) = table.composite(id)
        {
            stack.extend(children(table, c));
        }
    }
    seen
}

/// Every struct of `among` not re-laid out yet (`changed` false) that
/// holds one of `roots` by value, directly or through others.
pub(super) fn affected(
    table: &TypeTable,
    among: &HashSet<TypeId>,
    roots: &[TypeId],
    changed: impl Fn(TypeId) -> bool,
) -> Vec<TypeId> {
    let mut parents: HashMap<TypeId, Vec<TypeId>> = HashMap::new();
    for &id in among {
        if let Some(c) = table.composite(id) {
            for child in children(table, c) {
                parents.entry(child).or_default().push(id);
            }
        }
    }
    let mut seen: HashSet<TypeId> = roots.iter().copied().collect();
    let mut stack: Vec<TypeId> = roots.to_vec();
    let mut out = Vec::new();
    while let Some(id) = stack.pop() {
        for &p in parents.get(&id).into_iter().flatten() {
            if seen.insert(p) {
                stack.push(p);
                if !changed(p) {
                    out.push(p);
                }
            }
        }
    }
    out
}
