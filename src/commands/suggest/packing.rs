//! `suggest` without rules: packing only. The objective is the struct's
//! own size (bytes, and so cachelines), then the members moved; the
//! candidates are the compiled order, the packing seeds
//! ([`crate::search::packing`]) and, for up to [`search::MAX_UNITS`]
//! units without kernel group markers, the climb from the best of them.
//! Every candidate is laid out by the plan engine, as for rules.

use crate::error::Result;
use crate::rules::Rules;
use crate::search::{self, Best, Snapshot, Unit, packing};

/// Searches orders of `name` for the smallest size: the found order and
/// the notes saying how.
pub(crate) fn search(
    name: &str,
    units: &[Unit],
    snaps: &[Snapshot],
    limits: &search::Limits,
) -> Result<(Best, Vec<String>)> {
    let markers = packing::has_markers(units);
    let mut notes = Vec::new();
    if markers {
        notes.push(format!(
            "struct {name} has kernel cacheline group markers: packing only moves members \
             between two markers (each group keeps its members, every marker stays in \
             place), and does not climb"
        ));
    } else if units.len() > search::MAX_UNITS {
        notes.push(format!(
            "struct {name} has {} members to order, more than {}: packing compares the \
             packing orders with the compiled one and does not climb",
            units.len(),
            search::MAX_UNITS
        ));
    }
    let found = search::search_seeded(
        name,
        units,
        snaps,
        &Rules::default(),
        limits,
        packing::seeds(units),
        !markers,
    )?;
    Ok((found, notes))
}
