//! Does each rule fit a binary? Every type, field, lock and `[[allow]]`
//! field is looked up, and each lock checked for meaning ([`lock`]); the command then decides, across all builds, what
//! is an error (it fits no build) and what is a note (absent in one config).

mod lock;
pub(crate) use lock::{POINTER, names as type_names};
mod table;

pub(crate) use table::lint as lint_tables;

use std::collections::HashMap;

use crate::model::TypeId;
use crate::model::TypeTable;
use crate::path::{self, MemberPath};
use crate::rules::{Location, Rules, Source};

/// What one rule looked like in one build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    /// It resolves.
    Fits,
    /// It does not; the message says why, with the nearest names.
    Missing(String),
    /// A net_cachelines row that names no member here: never an error
    /// (see [`Source::NetCachelines`]).
    Undocumented(String),
}

/// Checks every rule against one build whose defined types are `types`
/// (members loaded deeply). Rules under a type the build lacks are not
/// checked: the type's own entry says it is missing.
pub fn validate(
    table: &TypeTable,
    types: &HashMap<String, TypeId>,
    rules: &Rules,
) -> Vec<(Location, Check)> {
    let mut out = Vec::new();
    let type_check = |name: &str| match types.get(name) {
        Some(_) => Check::Fits,
        None => Check::Missing(format!("no struct, union or typedef named '{name}'")),
    };
    let member_check = |id: TypeId, ty: &str, member: &str| {
        let text = format!("{ty}.{member}");
        let parsed = MemberPath::parse(&text);
        match parsed.and_then(|p| path::resolve(table, id, &p.steps, &text)) {
            Ok(_) => Check::Fits,
            Err(e) => Check::Missing(e.to_string()),
        }
    };
    for (name, at) in &rules.roots {
        out.push((at.clone(), type_check(name)));
    }
    for ty in &rules.types {
        let Some(&id) = types.get(&ty.name) else {
            let names: Vec<String> = ty.names().map(|n| format!("'{n}'")).collect();
            out.push((
                ty.at.clone(),
                Check::Missing(format!(
                    "no struct, union or typedef named {}",
                    names.join(" or ")
                )),
            ));
            continue;
        };
        out.push((ty.at.clone(), Check::Fits));
        for field in &ty.fields {
            let check = match (member_check(id, &ty.name, &field.path), field.source) {
                (Check::Missing(why), Source::NetCachelines) => Check::Undocumented(why),
                (check, _) => check,
            };
            out.push((field.at.clone(), check));
            let Some(lock) = &field.lock else {
                continue;
            };
            let rule = lock::LockRule {
                ty: &ty.name,
                id,
                field: &field.path,
                lock: &lock.text,
            };
            let check = lock::check(table, types, rules, &rule);
            out.push((lock.at.clone(), check));
        }
    }
    for p in &rules.placement {
        out.push((p.at.clone(), type_check(&p.ty)));
    }
    for h in &rules.heat {
        let check = match types.get(&h.ty) {
            Some(&id) => member_check(id, &h.ty, &h.path),
            None => type_check(&h.ty),
        };
        out.push((h.at.clone(), check));
    }
    for allow in &rules.allow {
        for field in &allow.fields {
            let check = match types.get(&field.ty) {
                Some(&id) => member_check(id, &field.ty, &field.path),
                None => type_check(&field.ty),
            };
            out.push((field.at.clone(), check));
        }
    }
    out
}
