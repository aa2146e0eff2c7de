//! Packing seeds for `suggest` without rules: member orders that leave
//! fewer holes, made from the units' alignments and sizes alone. They are
//! only seeds: each is laid out by the plan engine like any candidate (a
//! bitfield run, an aligned member or a struct's own alignment is the
//! engine's to place), and one the engine refuses is skipped.
//!
//! Two orders, each keeping what the engine would refuse to move:
//!
//! - by alignment, largest first, then by size, largest first (ties in
//!   the compiled order): with power-of-two alignments and sizes that are
//!   multiples of them, no hole is left before the tail padding;
//! - the compiled order with holes filled: walking the order, before a
//!   unit whose alignment would leave a hole, the largest later unit that
//!   fits the hole goes there (what `pahole --reorganize` starts with).
//!
//! A zero-sized last unit (a flexible or zero-length array) stays last.
//! In a struct with kernel group markers (`__cacheline_group_begin__*`),
//! each run of members between two markers is packed in place, so every
//! group keeps its members and the markers stay where they were.

use super::{Candidate, Entry, Unit};

/// The packing seeds of `units` (distinct, the compiled order left out).
pub(crate) fn seeds(units: &[Unit]) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    for order in [sorted(units), filled(units)] {
        let compiled = order.iter().copied().eq(0..units.len());
        let seen = out.iter().any(|(o, _)| entries(&order) == *o);
        if !compiled && !seen {
            out.push((entries(&order), Vec::new()));
        }
    }
    out
}

/// True when the struct has kernel group markers: packing keeps them and
/// their members in place, and the climb (which moves any unit) is not
/// run.
pub(crate) fn has_markers(units: &[Unit]) -> bool {
    units.iter().any(|u| u.marker)
}

fn entries(order: &[usize]) -> Vec<Entry> {
    order.iter().map(|&u| Entry::Unit(u)).collect()
}

/// The runs the seeds reorder: the units between markers (and the fixed
/// units, each a run of its own that stays where it is).
fn runs(units: &[Unit]) -> Vec<(bool, Vec<usize>)> {
    let last_fixed = units.last().is_some_and(|u| u.size == 0);
    let mut out: Vec<(bool, Vec<usize>)> = Vec::new();
    for (i, u) in units.iter().enumerate() {
        let fixed = u.marker || (last_fixed && i + 1 == units.len());
        match out.last_mut() {
            Some((false, run)) if !fixed => run.push(i),
            _ => out.push((fixed, vec![i])),
        }
    }
    out
}

/// Every movable run sorted by alignment, then size, both descending.
fn sorted(units: &[Unit]) -> Vec<usize> {
    runs(units)
        .into_iter()
        .flat_map(|(fixed, mut run)| {
            if !fixed {
                run.sort_by_key(|&u| {
                    (
                        std::cmp::Reverse(units[u].align),
                        std::cmp::Reverse(units[u].size),
                        u,
                    )
                });
            }
            run
        })
        .collect()
}

/// Every movable run in its order, each hole filled by the largest later
/// unit of the run that fits it (offsets from the run's start, which is
/// aligned for the run's largest alignment as far as the seed knows).
fn filled(units: &[Unit]) -> Vec<usize> {
    runs(units)
        .into_iter()
        .flat_map(|(fixed, run)| if fixed { run } else { fill(units, run) })
        .collect()
}

fn fill(units: &[Unit], mut rest: Vec<usize>) -> Vec<usize> {
    let mut out = Vec::with_capacity(rest.len());
    let mut at = 0u64;
    let place = |at: u64, u: &Unit| at.next_multiple_of(u.align.max(1));
    while !rest.is_empty() {
        let next = &units[rest[0]];
        let hole = place(at, next) - at;
        // The largest unit after it that fits the hole where it is.
        let filler = (1..rest.len())
            .filter(|&i| {
                let u = &units[rest[i]];
                u.size > 0 && place(at, u) + u.size <= at + hole
            })
            .max_by_key(|&i| (units[rest[i]].size, std::cmp::Reverse(i)));
        let i = filler.unwrap_or(0);
        let u = rest.remove(i);
        at = place(at, &units[u]) + units[u].size;
        out.push(u);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(name: &str, align: u64, size: u64) -> Unit {
        Unit {
            name: name.into(),
            reads: Vec::new(),
            writes: Vec::new(),
            marker: name.starts_with("__cacheline_group_"),
            align,
            size,
            lockless: false,
            optional: false,
        }
    }

    fn order(c: &Candidate) -> Vec<usize> {
        c.0.iter()
            .map(|e| match e {
                Entry::Unit(u) => *u,
                _ => panic!("a group in a packing seed"),
            })
            .collect()
    }

    #[test]
    fn sorting_puts_the_largest_alignment_first_and_keeps_ties_in_order() {
        // char a; long b; short c; int d; long e; char f;
        let units = [
            unit("a", 1, 1),
            unit("b", 8, 8),
            unit("c", 2, 2),
            unit("d", 4, 4),
            unit("e", 8, 8),
            unit("f", 1, 1),
        ];
        // 8-aligned b, e; then d; c; then the chars a, f in their order:
        // offsets 0, 8, 16, 20, 22, 23, size 24 (compiled: 40).
        assert_eq!(sorted(&units), [1, 4, 3, 2, 0, 5]);
        // Filling: a at 0; b would leave 1..8, and of c (2 at 2), d (4 at
        // 4) and f (1 at 1) the largest, d, fits there; b at 8, c at 16;
        // e would leave 18..24: f fits (at 18); e at 24.
        assert_eq!(filled(&units), [0, 3, 1, 2, 5, 4]);
        let seeds = seeds(&units);
        assert_eq!(seeds.len(), 2);
        assert_eq!(order(&seeds[0]), [1, 4, 3, 2, 0, 5]);
        assert!(seeds.iter().all(|(_, removed)| removed.is_empty()));
    }

    #[test]
    fn a_flexible_array_stays_last_and_markers_keep_their_members() {
        // char a; long b; char c; long flex[];
        let units = [
            unit("a", 1, 1),
            unit("b", 8, 8),
            unit("c", 1, 1),
            unit("flex", 8, 0),
        ];
        assert_eq!(sorted(&units), [1, 0, 2, 3]);
        assert_eq!(*filled(&units).last().unwrap(), 3);
        // Two groups: each packs inside its markers, the markers stay.
        let units = [
            unit("x", 1, 1),
            unit("__cacheline_group_begin__g", 1, 0),
            unit("a", 1, 1),
            unit("b", 8, 8),
            unit("__cacheline_group_end__g", 1, 0),
            unit("c", 2, 2),
            unit("d", 4, 4),
        ];
        assert!(has_markers(&units));
        assert_eq!(sorted(&units), [0, 1, 3, 2, 4, 6, 5]);
    }

    #[test]
    fn a_packed_struct_gives_no_seed() {
        // long a; int b; short c; char d: already in packing order, and
        // no hole to fill.
        let units = [
            unit("a", 8, 8),
            unit("b", 4, 4),
            unit("c", 2, 2),
            unit("d", 1, 1),
        ];
        assert!(seeds(&units).is_empty());
    }
}
