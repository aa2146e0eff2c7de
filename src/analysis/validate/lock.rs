//! The `lock` of a `lock-protected` rule, checked for meaning: it must be a
//! member of the rule's own struct or `TYPE.member` of a TYPE that encloses
//! that struct, it must not be the field itself, and it must be a lock (of a
//! kernel lock type, or a field the rules class as `lock`).

use std::collections::{HashMap, HashSet};

use super::Check;
use crate::analysis::annotate::{LOCK_TYPES, same_lock};
use crate::model::{MAX_TYPE_DEPTH, Type, TypeId, TypeTable};
use crate::path::{self, MemberPath, Step};
use crate::rules::{Class, Rules};

/// The rule on `field` of struct `ty` (id `id`) names `lock`.
pub(super) struct LockRule<'a> {
    pub ty: &'a str,
    pub id: TypeId,
    pub field: &'a str,
    pub lock: &'a str,
}

/// Checks one rule's lock against a build whose defined types are `types`.
pub(super) fn check(
    table: &TypeTable,
    types: &HashMap<String, TypeId>,
    rules: &Rules,
    r: &LockRule<'_>,
) -> Check {
    let text = r.lock;
    // A member of the same struct, else TYPE.member.
    let (owner, owner_id, member) = match resolve(table, r.id, r.ty, text) {
        Ok(()) => (r.ty, r.id, text),
        Err(why) => match text.split_once('.') {
            Some((owner, member)) => match types.get(owner) {
                Some(&owner_id) => {
                    if let Err(why) = resolve(table, owner_id, owner, member) {
                        return Check::Missing(why);
                    }
                    if owner != r.ty && !encloses(table, owner_id, r.ty) {
                        return Check::Missing(format!(
                            "lock '{text}': struct {owner} does not enclose struct {} (a lock is a \
                             member of {} or TYPE.member of a TYPE that encloses it)",
                            r.ty, r.ty
                        ));
                    }
                    (owner, owner_id, member)
                }
                None => {
                    return Check::Missing(format!(
                        "lock '{text}' is neither a member of {} nor TYPE.member of a type in this build",
                        r.ty
                    ));
                }
            },
            None => return Check::Missing(format!("lock: {why}")),
        },
    };
    if owner == r.ty && same_lock(member, r.field) {
        return Check::Missing(format!(
            "lock '{text}' is the field itself: a field cannot be its own lock"
        ));
    }
    match is_lock(table, rules, owner, owner_id, member) {
        Ok(()) => Check::Fits,
        Err(what) => Check::Missing(format!(
            "lock '{text}' is not a lock: {owner}.{member} is {what}; a lock is of a kernel lock \
             type ({}) or a field with class \"lock\"",
            LOCK_TYPES[..4].join(", ") + ", ..."
        )),
    }
}

/// `member` resolved inside `ty`, or why not.
fn resolve(table: &TypeTable, id: TypeId, ty: &str, member: &str) -> Result<(), String> {
    let text = format!("{ty}.{member}");
    MemberPath::parse(&text)
        .and_then(|p| path::resolve(table, id, &p.steps, &text))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Ok when `member` of `owner`, or a member on the way to it, is of a lock
/// type or has a `lock` rule; else what the member is (`unsigned long`).
fn is_lock(
    table: &TypeTable,
    rules: &Rules,
    owner: &str,
    owner_id: TypeId,
    member: &str,
) -> Result<(), String> {
    let text = format!("{owner}.{member}");
    let steps = MemberPath::parse(&text).map_err(|e| e.to_string())?.steps;
    // Rules of `ty` that class `rest` (or a member holding it) as a lock.
    let ruled = |ty: &str, rest: &[Step]| {
        let Some(dotted) = dotted(rest) else {
            return false;
        };
        rules.type_rules(ty).is_some_and(|t| {
            t.fields.iter().any(|f| {
                f.class == Class::Lock
                    && dotted
                        .strip_prefix(f.path.as_str())
                        .is_some_and(|r| r.is_empty() || r.starts_with('.'))
            })
        })
    };
    if ruled(owner, &steps) {
        return Ok(());
    }
    let mut what = String::new();
    for k in 1..=steps.len() {
        let resolved =
            path::resolve(table, owner_id, &steps[..k], &text).map_err(|e| e.to_string())?;
        let Some(ty) = resolved.ty else {
            continue; // inside a sub-array
        };
        let names = names(table, ty);
        if names.iter().any(|n| LOCK_TYPES.contains(&n.as_str())) {
            return Ok(());
        }
        if names.iter().any(|n| ruled(n, &steps[k..])) {
            return Ok(());
        }
        what = names
            .first()
            .cloned()
            .unwrap_or_else(|| "not a lock type".to_owned());
    }
    Err(what)
}

/// A dotted member path, when `steps` has no index.
fn dotted(steps: &[Step]) -> Option<String> {
    let names: Option<Vec<&str>> = steps
        .iter()
        .map(|s| match s {
            Step::Field(name) => Some(name.as_str()),
            Step::Index(_) => None,
        })
        .collect();
    Some(names?.join("."))
}

/// How [`names`] names a pointer.
pub(crate) const POINTER: &str = "a pointer";

/// The names a type goes by, outermost first: typedefs, then the struct,
/// union, enum or base type (arrays and qualifiers looked through).
pub(crate) fn names(table: &TypeTable, mut id: TypeId) -> Vec<String> {
    let mut names = Vec::new();
    for _ in 0..MAX_TYPE_DEPTH {
        match table.get(id) {
            Type::Typedef { name, target } => {
                names.push(name.clone());
                id = *target;
            }
            Type::Qualified { target, .. } => id = *target,
            Type::Array { element, .. } => id = *element,
            Type::Composite(c) => {
                names.extend(c.name.clone());
                break;
            }
            Type::Base { name, .. } => {
                names.push(name.clone());
                break;
            }
            Type::Enum { name, .. } => {
                names.extend(name.as_ref().map(|n| format!("enum {n}")));
                break;
            }
            Type::Pointer { .. } => {
                names.push(POINTER.to_owned());
                break;
            }
            Type::Void | Type::Function { .. } => break,
        }
    }
    names
}

/// True when struct `outer` holds a struct named `inner` by value, at any
/// depth (through arrays, typedefs and anonymous members).
fn encloses(table: &TypeTable, outer: TypeId, inner: &str) -> bool {
    let mut seen = HashSet::new();
    let mut stack = vec![outer];
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let Some(c) = table.composite(table.strip(id)) else {
            continue;
        };
        for m in c.members.as_deref().unwrap_or(&[]) {
            let mut ty = table.strip(m.ty);
            for _ in 0..MAX_TYPE_DEPTH {
                match table.get(ty) {
                    Type::Array { element, .. } => ty = table.strip(*element),
                    _ => break,
                }
            }
            if let Some(held) = table.composite(ty) {
                if held.name.as_deref() == Some(inner) {
                    return true;
                }
                stack.push(ty);
            }
        }
    }
    false
}
