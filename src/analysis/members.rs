//! A struct's members as a list to compare two layouts of it by: each
//! named member's path (through anonymous structs and unions), its bit
//! offset from the struct's start and its bit width, and the size. Two
//! layouts are the same when the lists are.

use crate::model::{TypeId, TypeTable};

/// One member: its path, first bit, and width in bits for a bitfield.
pub(crate) type Placed = (String, u64, Option<u64>);

/// Struct `id`'s size and its named members at every depth of its
/// anonymous members, in declaration order.
pub(crate) fn placed(table: &TypeTable, id: TypeId) -> (Option<u64>, Vec<Placed>) {
    let id = table.strip(id);
    let mut out = Vec::new();
    walk(table, id, "", 0, &mut out, 0);
    (table.composite(id).and_then(|c| c.size), out)
}

/// Deepest anonymous nesting followed.
const MAX_DEPTH: usize = 16;

fn walk(
    table: &TypeTable,
    id: TypeId,
    prefix: &str,
    base: u64,
    out: &mut Vec<Placed>,
    depth: usize,
) {
    let Some(members) = table.composite(id).and_then(|c| c.members.as_ref()) else {
        return;
    };
    for m in members {
        let at = base + m.bit_offset;
        match &m.name {
            Some(name) => out.push((format!("{prefix}{name}"), at, m.bit_size)),
            None if depth < MAX_DEPTH => {
                walk(table, table.strip(m.ty), prefix, at, out, depth + 1);
            }
            None => {}
        }
    }
}

/// What differs between layout `expected` and layout `got` of one struct:
/// the size, then the first members placed differently (at most `limit`).
pub(crate) fn differences(
    expected: &(Option<u64>, Vec<Placed>),
    got: &(Option<u64>, Vec<Placed>),
    limit: usize,
) -> Vec<String> {
    let mut out = Vec::new();
    if expected.0 != got.0 {
        out.push(format!(
            "size {} expected, {} compiled",
            expected.0.map_or("?".into(), |s| s.to_string()),
            got.0.map_or("?".into(), |s| s.to_string())
        ));
    }
    let describe = |(path, bit, width): &Placed| match width {
        Some(w) => format!("{path} at bit {bit} ({w} bits)"),
        None => format!("{path} at byte {}", bit / 8),
    };
    for m in &expected.1 {
        if out.len() >= limit {
            break;
        }
        match got.1.iter().find(|g| g.0 == m.0) {
            None => out.push(format!("{} expected, missing when compiled", describe(m))),
            Some(g) if g != m => out.push(format!(
                "{} expected, {} compiled",
                describe(m),
                describe(g)
            )),
            Some(_) => {}
        }
    }
    for g in &got.1 {
        if out.len() >= limit {
            break;
        }
        if !expected.1.iter().any(|m| m.0 == g.0) {
            out.push(format!("{} compiled, not expected", describe(g)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_name_the_size_and_the_members() {
        let a = (
            Some(16),
            vec![("a".into(), 0, None), ("b".into(), 64, None)],
        );
        let b = (
            Some(24),
            vec![
                ("a".into(), 0, None),
                ("b".into(), 128, None),
                ("c".into(), 64, Some(3)),
            ],
        );
        assert_eq!(
            differences(&a, &b, 8),
            [
                "size 16 expected, 24 compiled",
                "b at byte 8 expected, b at byte 16 compiled",
                "c at bit 64 (3 bits) compiled, not expected"
            ]
        );
        assert!(differences(&a, &a, 8).is_empty());
    }
}
