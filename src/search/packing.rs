//! Packing seeds for `suggest` without rules: member orders that leave
//! fewer holes, made from the units' alignments and sizes alone. They are
//! only seeds: each is laid out by the plan engine like any candidate (a
//! bitfield run, an aligned member or a struct's own alignment is the
//! engine's to place), and one the engine refuses is skipped.
//!
//! Three orders, each keeping what the engine would refuse to move:
//!
//! - by alignment, largest first, then by size, largest first (ties in
//!   the compiled order): with power-of-two alignments and sizes that are
//!   multiples of them, no hole is left before the tail padding;
//! - the compiled order with holes filled: walking the order, before a
//!   unit whose alignment would leave a hole, the later unit that fills
//!   most of the hole goes there (what `pahole --reorganize` starts
//!   with). Holes are counted in bits: a bitfield run goes where the C
//!   ABI would put it, in the bytes or unit before it;
//! - the sorted order with its holes filled the same way (the bitfield
//!   runs and small members sorting leaves after the large ones).
//!
//! A zero-sized last unit (a flexible or zero-length array) stays last.
//! In a struct with kernel group markers (`__cacheline_group_begin__*`),
//! each run of members between two markers is packed in place, so every
//! group keeps its members and the markers stay where they were.

use super::candidate::{Candidate, Entry};
use super::units::Unit;
use crate::layout::Layout;
use crate::model::CompositeKind;

/// The packing seeds of `units` (distinct, the compiled order left out).
pub(crate) fn seeds(units: &[Unit]) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    for order in [sorted(units), filled(units), sorted_filled(units)] {
        let compiled = order.iter().copied().eq(0..units.len());
        let seen = out.iter().any(|c| entries(&order) == c.order);
        if !compiled && !seen {
            out.push(Candidate {
                order: entries(&order),
                removed: Vec::new(),
            });
        }
    }
    out
}

/// The least size any member order of the struct `layout` lays out could
/// have: its members' bytes and bitfield bits (pahole's sums, which no
/// order changes) with no hole between them, rounded up to its alignment.
/// `None` for a union.
pub(crate) fn least_size(layout: &Layout) -> Option<u64> {
    if layout.kind != CompositeKind::Struct {
        return None;
    }
    let s = &layout.summary;
    s.sum_members
        .checked_mul(8)?
        .checked_add(s.sum_bitfield_bits)?
        .div_ceil(8)
        .checked_next_multiple_of(layout.alignment.max(1))
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
        .flat_map(|(fixed, run)| if fixed { run } else { sort(units, run) })
        .collect()
}

fn sort(units: &[Unit], mut run: Vec<usize>) -> Vec<usize> {
    run.sort_by_key(|&u| {
        (
            std::cmp::Reverse(units[u].align),
            std::cmp::Reverse(units[u].size),
            u,
        )
    });
    run
}

/// Every movable run in its order, each hole filled by the later unit of
/// the run that fills most of it (offsets from the run's start, which is
/// aligned for the run's largest alignment as far as the seed knows).
fn filled(units: &[Unit]) -> Vec<usize> {
    refill(units, runs(units))
}

/// [`sorted`], its holes then filled as [`filled`] fills them: the
/// bitfield runs and small members sorting leaves behind the larger ones
/// go where they share a unit.
fn sorted_filled(units: &[Unit]) -> Vec<usize> {
    let runs = runs(units)
        .into_iter()
        .map(|(fixed, run)| (fixed, if fixed { run } else { sort(units, run) }))
        .collect();
    refill(units, runs)
}

fn refill(units: &[Unit], runs: Vec<(bool, Vec<usize>)>) -> Vec<usize> {
    runs.into_iter()
        .flat_map(|(fixed, run)| if fixed { run } else { fill(units, run) })
        .collect()
}

/// Where a unit goes when the struct so far ends at bit `at`: its first
/// and end bits. A bitfield run can start inside the byte or unit before
/// it (the C ABI's rule: it only must not straddle its type's unit); a
/// whole member starts at the next byte its alignment allows.
fn place(at: u64, u: &Unit) -> (u64, u64) {
    if !u.bits.is_empty()
        && let Some(offsets) = crate::plan::abi::bits_from(at, &u.bits)
    {
        let end = offsets.iter().zip(&u.bits).map(|(o, f)| o + f.width).max();
        return (offsets[0], end.unwrap_or(at));
    }
    // Saturating: a size corrupt debug info makes absurd orders nothing.
    let start = at
        .div_ceil(8)
        .checked_next_multiple_of(u.align.max(1))
        .map_or(u64::MAX, |b| b.saturating_mul(8));
    (start, start.saturating_add(u.size.saturating_mul(8)))
}

fn fill(units: &[Unit], mut rest: Vec<usize>) -> Vec<usize> {
    let mut out = Vec::with_capacity(rest.len());
    let mut at = 0u64; // bits
    while !rest.is_empty() {
        let (start, _) = place(at, &units[rest[0]]);
        // The later unit that fills most of the hole before it.
        let filler = (1..rest.len())
            .filter_map(|i| {
                let u = &units[rest[i]];
                let (from, end) = place(at, u);
                (end > from && end <= start).then_some((end - from, std::cmp::Reverse(i)))
            })
            .max()
            .map(|(_, std::cmp::Reverse(i))| i);
        let u = rest.remove(filler.unwrap_or(0));
        at = place(at, &units[u]).1;
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
            isolation: None,
            classed: false,
            bits: Vec::new(),
        }
    }

    fn order(c: &Candidate) -> Vec<usize> {
        c.order
            .iter()
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
        assert!(seeds.iter().all(|c| c.removed.is_empty()));
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
    fn a_bitfield_run_fills_a_hole_by_its_bits() {
        // char a; long l; unsigned f:4; short s; (gcc: sizeof 24). The
        // hole after a takes s (16 bits at bit 16) before f (4 bits), and
        // the hole after s then takes f: char a; short s; unsigned f:4;
        // long l; (gcc: sizeof 16). Taking f first as a 4-byte unit, as a
        // byte count would, gives char a; unsigned f:4; long l; short s;
        // (gcc: sizeof 24).
        let mut f = unit("f", 4, 4);
        f.bits = vec![crate::plan::abi::Bitfield {
            width: 4,
            unit_size: 4,
            unit_align: 4,
        }];
        let units = [unit("a", 1, 1), unit("l", 8, 8), f, unit("s", 2, 2)];
        assert_eq!(filled(&units), [0, 3, 2, 1]);
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
