//! `suggest --source-tree`: the suggested order as a patch of the header
//! that declares the struct, at the lines the debug info gives.

use std::path::Path;

use crate::csource::member_order::{self, Piece};
use crate::error::{Error, Result};
use crate::search::{self, Entry, Snapshot};

/// The unified diff of TYPE's header in `tree` for `order`. A member's
/// line comes from the first build that has it (every build is compiled
/// from the same header).
pub(super) fn patch(
    tree: &Path,
    snaps: &[Snapshot],
    units: &[search::Unit],
    order: &[Entry],
    removed: &[usize],
    ty: &str,
) -> Result<String> {
    let refuse = |why: String| Error::Patch { at: None, why };
    let snap = &snaps[0];
    let c = snap
        .table
        .composite(snap.target)
        .expect("the target is a struct");
    let decl = c.decl.as_ref().ok_or_else(|| {
        refuse(format!(
            "the debug info gives no declaration line for struct {ty}"
        ))
    })?;
    let mut runs: Vec<(u64, u64)> = Vec::new();
    let mut line_of = |u: usize| -> Result<u64> {
        let name = &units[u].name;
        for snap in snaps {
            let table = &snap.table;
            let members = table
                .composite(snap.target)
                .and_then(|c| c.members.as_deref())
                .unwrap_or_default();
            let found = members.iter().position(|m| match &m.name {
                Some(n) => n == name,
                None => search::first_inner_name(table, m.ty).as_deref() == Some(name.as_str()),
            });
            let Some(i) = found else { continue };
            let m = &members[i];
            let line = match (&m.name, &m.decl) {
                (_, Some(d)) => d.line,
                // An anonymous struct or union: where its type is declared.
                (None, None) => table
                    .composite(table.strip(m.ty))
                    .and_then(|c| c.decl.as_ref())
                    .map(|d| d.line)
                    .ok_or_else(|| {
                        refuse(format!(
                            "the debug info gives no line for the anonymous member of {ty} \
                             holding '{name}'"
                        ))
                    })?,
                (Some(_), None) => {
                    return Err(refuse(format!("the debug info gives no line for '{name}'")));
                }
            };
            // A bitfield run moves whole, to its last bitfield.
            if m.bit_size.is_some() {
                let last = members[i..]
                    .iter()
                    .take_while(|m| m.bit_size.is_some())
                    .last()
                    .and_then(|m| m.decl.as_ref())
                    .map_or(line, |d| d.line);
                if last != line {
                    runs.push((line, last));
                }
            }
            return Ok(line);
        }
        Err(refuse(format!("no build places '{name}' of {ty}")))
    };
    let mut pieces = Vec::new();
    // Members declared on one line (`unsigned long start_code, end_code;`)
    // move as that line: one piece, when the order keeps them together
    // and in their declared order (else the line appears twice, which
    // the patch refuses).
    let mut last: Option<(usize, u64)> = None;
    let group = format!("{}_lockless", crate::plan::outer(ty));
    for e in order {
        let piece = match e {
            Entry::Unit(u) => {
                let line = line_of(*u)?;
                let same = last.is_some_and(|(p, l)| l == line && p < *u);
                last = Some((*u, line));
                if same {
                    continue;
                }
                Piece::Member(line)
            }
            Entry::Group(g) => Piece::AlignedGroup(
                group.clone(),
                g.iter().map(|u| line_of(*u)).collect::<Result<_>>()?,
            ),
            Entry::Named(n, g) => Piece::Group(
                n.clone(),
                g.iter().map(|u| line_of(*u)).collect::<Result<_>>()?,
            ),
        };
        if !matches!(piece, Piece::Member(_)) {
            last = None;
        }
        pieces.push(piece);
    }
    let removed = removed
        .iter()
        .map(|u| line_of(*u))
        .collect::<Result<Vec<_>>>()?;
    let relative = decl.file.as_str();
    let path = tree.join(relative);
    let text = crate::csource::read_exact(&path).map_err(|e| {
        refuse(format!(
            "{e} (struct {ty} is declared in {}; give the tree the build comes from)",
            decl.file
        ))
    })?;
    member_order::reorder(relative, &text, decl.line, &pieces, &removed, &runs)
}
