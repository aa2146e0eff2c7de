//! A net_cachelines table read against one build: the members of its
//! struct that have no row, the fast-path fields outside every kernel
//! cacheline group, and the fields whose access contradicts the group
//! they sit in (read-mostly in a `*_write_*` group, written in a
//! `*_read_*` one). Each is a note at the row's `FILE:LINE:COL`, or at the
//! table for members without a row.

use super::super::Origin;
use super::super::annotate::annotate;
use crate::layout::{GROUP_BEGIN, GROUP_END, GROUP_PAD, PADDING_TYPE};
use crate::model::{TypeId, TypeTable};
use crate::rules::{Rules, Source, TypeRules};

/// Members without a row listed in one note, at most.
const MAX_LISTED: usize = 12;

/// The notes on every net_cachelines table whose struct `types` has.
pub(crate) fn lint(
    table: &TypeTable,
    types: &std::collections::HashMap<String, TypeId>,
    rules: &Rules,
) -> Vec<String> {
    let mut out = Vec::new();
    for ty in &rules.types {
        let from_table =
            !ty.fields.is_empty() && ty.fields.iter().all(|f| f.source == Source::NetCachelines);
        let Some(&id) = types.get(&ty.name) else {
            continue;
        };
        if from_table {
            lint_one(table, id, ty, rules, &mut out);
        }
    }
    out
}

fn lint_one(table: &TypeTable, id: TypeId, ty: &TypeRules, rules: &Rules, out: &mut Vec<String>) {
    let mut members = Vec::new();
    direct_members(table, id, &mut members, 0);
    let missing: Vec<&String> = members
        .iter()
        .filter(|m| !ty.rows.contains(m) && !ty.fields.iter().any(|f| &f.path == *m))
        .collect();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing
            .iter()
            .take(MAX_LISTED)
            .map(|m| m.as_str())
            .collect();
        let more = if missing.len() > shown.len() {
            format!(" and {} more", missing.len() - shown.len())
        } else {
            String::new()
        };
        out.push(format!(
            "{}: {} of the {} members of struct {} have no row: {}{more}",
            ty.at,
            missing.len(),
            members.len(),
            ty.name,
            shown.join(", ")
        ));
    }
    let annotated = annotate(table, id, &ty.name, rules);
    if annotated.groups.is_empty() {
        return;
    }
    for span in &annotated.spans {
        let (Some(access), Origin::Rule { at, .. }) = (&span.access, &span.origin) else {
            continue;
        };
        let written = !access.writes.is_empty();
        let said = access.describe();
        match &span.group {
            None => out.push(format!(
                "{at}: '{}' is on the fast path ({said}) but outside every cacheline group of struct {}",
                span.path, ty.name
            )),
            Some(g) if !written && g.contains("_write") => out.push(format!(
                "{at}: '{}' is only read ({said}) but sits in the write group {g}",
                span.path
            )),
            Some(g) if written && g.contains("_read") => out.push(format!(
                "{at}: '{}' is written ({said}) but sits in the read group {g}",
                span.path
            )),
            Some(_) => {}
        }
    }
}

/// The names C reaches directly in struct `id`: its members and those of
/// its anonymous structs and unions, without group markers and padding.
fn direct_members(table: &TypeTable, id: TypeId, out: &mut Vec<String>, depth: usize) {
    let Some(members) = table.composite(id).and_then(|c| c.members.as_ref()) else {
        return;
    };
    for m in members {
        match &m.name {
            Some(name)
                if [GROUP_BEGIN, GROUP_END, GROUP_PAD]
                    .iter()
                    .any(|p| name.starts_with(p)) => {}
            Some(name) => {
                let padding = table
                    .composite(table.strip(m.ty))
                    .is_some_and(|c| c.name.as_deref() == Some(PADDING_TYPE));
                if !padding {
                    out.push(name.clone());
                }
            }
            None if depth < 16 => direct_members(table, table.strip(m.ty), out, depth + 1),
            None => {}
        }
    }
}
