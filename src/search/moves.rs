//! The candidates the search tries: every order of a small struct, the
//! climb's moves from an order (one member, the lockless writers
//! gathered, a member inside its kernel group), and the order that groups
//! members by context.

use super::candidate::{Candidate, Entry};
use super::units::Unit;

/// Every order of `units` (no markers among them), and when some are
/// lockless writers, every order with them gathered into one aligned
/// group (every order inside it too): the exhaustive search's candidates.
pub(super) fn every_order(units: &[Unit]) -> Vec<Candidate> {
    let all: Vec<usize> = (0..units.len()).collect();
    let mut out: Vec<Candidate> = permutations(&all)
        .into_iter()
        .map(|p| Candidate {
            order: p.into_iter().map(Entry::Unit).collect(),
            removed: Vec::new(),
        })
        .collect();
    let (writers, rest): (Vec<usize>, Vec<usize>) = all.iter().partition(|&&u| units[u].lockless);
    if !writers.is_empty() {
        // The group is one more entry among the rest, in each of its orders.
        for inner in permutations(&writers) {
            let mut entries: Vec<Entry> = rest.iter().map(|&u| Entry::Unit(u)).collect();
            entries.push(Entry::Group(inner));
            out.extend(permutations(&entries).into_iter().map(|order| Candidate {
                order,
                removed: Vec::new(),
            }));
        }
    }
    out
}

/// Every permutation of `items`, the identity first.
fn permutations<T: Clone>(items: &[T]) -> Vec<Vec<T>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut out = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.to_vec();
        let first = rest.remove(i);
        for mut tail in permutations(&rest) {
            tail.insert(0, first.clone());
            out.push(tail);
        }
    }
    out
}

/// Every order one step from `order`: a block of one to three entries
/// moved to another place, two entries swapped, and the lockless writers
/// gathered into one aligned group at every place.
pub(super) fn neighbours(order: &[Entry], units: &[Unit]) -> Vec<Vec<Entry>> {
    let mut out = Vec::new();
    let n = order.len();
    // A kernel group's markers never move themselves: members may move in
    // and out of a group, but its begin stays before its end, and every
    // marker keeps its order among the rest.
    let marker = |e: &Entry| matches!(e, Entry::Unit(u) if units[*u].marker);
    // Every unit moves, flagged or not: an unflagged one shifts the
    // offsets of the rest, which is what puts an array on lines of its own.
    for len in 1..=3.min(n) {
        for i in 0..=n - len {
            if order[i..i + len].iter().any(marker) {
                continue;
            }
            let mut rest = order.to_vec();
            let block: Vec<Entry> = rest.drain(i..i + len).collect();
            for pos in 0..=rest.len() {
                if pos == i {
                    continue;
                }
                let mut c = rest.clone();
                c.splice(pos..pos, block.iter().cloned());
                out.push(c);
            }
        }
    }
    for i in 0..n {
        for j in i + 2..n {
            if marker(&order[i]) || marker(&order[j]) {
                continue;
            }
            let mut c = order.to_vec();
            c.swap(i, j);
            out.push(c);
        }
    }
    out.extend(gathered(order, units));
    out
}

/// Every order one move of a classed unit from `order`, nearest places
/// first, and the lockless writers gathered into one aligned group at
/// every place: a large struct's neighbourhood, the classed units times
/// the places (not the square of the units).
pub(super) fn classed_moves(order: &[Entry], units: &[Unit]) -> Vec<Vec<Entry>> {
    let mut moves: Vec<(usize, Vec<Entry>)> = Vec::new();
    for i in 0..order.len() {
        let Entry::Unit(u) = order[i] else { continue };
        if !units[u].classed || units[u].marker {
            continue;
        }
        let mut rest = order.to_vec();
        let entry = rest.remove(i);
        for pos in (0..=rest.len()).filter(|&p| p != i) {
            let mut c = rest.clone();
            c.insert(pos, entry.clone());
            moves.push((pos.abs_diff(i), c));
        }
    }
    moves.sort_by_key(|(distance, _)| *distance);
    let mut out: Vec<Vec<Entry>> = moves.into_iter().map(|(_, c)| c).collect();
    out.extend(gathered(order, units));
    out
}

/// `order` with its lockless writers gathered into one aligned group, at
/// every place (none when there is a group already or no writer).
fn gathered(order: &[Entry], units: &[Unit]) -> Vec<Vec<Entry>> {
    let writers: Vec<usize> = order
        .iter()
        .filter_map(|e| match e {
            Entry::Unit(u) if units[*u].lockless => Some(*u),
            _ => None,
        })
        .collect();
    let has_group = order.iter().any(|e| matches!(e, Entry::Group(_)));
    if writers.is_empty() || has_group {
        return Vec::new();
    }
    let rest: Vec<Entry> = order
        .iter()
        .filter(|e| !matches!(e, Entry::Unit(u) if writers.contains(u)))
        .cloned()
        .collect();
    (0..=rest.len())
        .map(|pos| {
            let mut c = rest.clone();
            c.insert(pos, Entry::Group(writers.clone()));
            c
        })
        .collect()
}

/// Every order one step from `order` inside its groups: a member of a
/// group moved to another place in it, and a group moved to another place
/// among the groups (the span from the first group to the last).
pub(super) fn within_groups(order: &[Entry]) -> Vec<Vec<Entry>> {
    let mut out = Vec::new();
    let groups: Vec<usize> = (0..order.len())
        .filter(|&i| !matches!(order[i], Entry::Unit(_)))
        .collect();
    for &g in &groups {
        let members = match &order[g] {
            Entry::Group(m) | Entry::Named(_, m) => m,
            Entry::Unit(_) => continue,
        };
        for i in 0..members.len() {
            let mut rest = members.clone();
            let u = rest.remove(i);
            for pos in (0..=rest.len()).filter(|&p| p != i) {
                let mut moved = rest.clone();
                moved.insert(pos, u);
                let mut c = order.to_vec();
                c[g] = match &order[g] {
                    Entry::Named(n, _) => Entry::Named(n.clone(), moved),
                    _ => Entry::Group(moved),
                };
                out.push(c);
            }
        }
    }
    if let (Some(&first), Some(&last)) = (groups.first(), groups.last()) {
        for &g in &groups {
            let mut rest = order.to_vec();
            let entry = rest.remove(g);
            for pos in (first..=last).filter(|&p| p != g) {
                let mut c = rest.clone();
                c.insert(pos, entry.clone());
                out.push(c);
            }
        }
    }
    out
}

/// A candidate made, not searched: the members grouped by the contexts
/// that use them, in kernel cacheline groups named as netdev names them
/// (`TYPE_read_tx`, `TYPE_read_txrx`, `TYPE_read_rx`, then the `write`
/// groups: a member written in a context goes to a write group named by
/// every context that uses it), each sorted by alignment and size so that
/// it packs; the members no context uses after them in their order; the
/// struct's first member kept first (the kernel's "base struct" idiom:
/// `tcp_sock` starts with its `inet_connection_sock`); the old group
/// markers dropped. Returns the order and the markers to remove.
pub(super) fn by_context(ty: &str, units: &[Unit], contexts: &[String]) -> Candidate {
    let removed: Vec<usize> = (0..units.len()).filter(|&u| units[u].marker).collect();
    let kept: Vec<usize> = (0..units.len()).filter(|&u| !units[u].marker).collect();
    let Some((&first, rest)) = kept.split_first() else {
        return Candidate {
            order: Vec::new(),
            removed,
        };
    };
    // (written, first context, last context) → the group's members.
    let mut groups: std::collections::BTreeMap<(bool, usize, usize), Vec<usize>> =
        Default::default();
    let mut unused = Vec::new();
    for &u in rest {
        let x = &units[u];
        let used: Vec<usize> = x
            .reads
            .iter()
            .chain(&x.writes)
            .filter_map(|c| contexts.iter().position(|k| k == c))
            .collect();
        match (used.iter().min(), used.iter().max()) {
            (Some(&lo), Some(&hi)) => groups
                .entry((!x.writes.is_empty(), lo, hi))
                .or_default()
                .push(u),
            _ => unused.push(u),
        }
    }
    let mut order = vec![Entry::Unit(first)];
    for ((written, lo, hi), mut members) in groups {
        members.sort_by_key(|&u| {
            (
                std::cmp::Reverse(units[u].align),
                std::cmp::Reverse(units[u].size),
                u,
            )
        });
        let names: String = contexts[lo..=hi].concat();
        let kind = if written { "write" } else { "read" };
        order.push(Entry::Named(format!("{ty}_{kind}_{names}"), members));
    }
    order.extend(unused.into_iter().map(Entry::Unit));
    Candidate { order, removed }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(name: &str, reads: &[&str], writes: &[&str], align: u64) -> Unit {
        Unit {
            name: name.into(),
            reads: reads.iter().map(|s| s.to_string()).collect(),
            writes: writes.iter().map(|s| s.to_string()).collect(),
            marker: name.starts_with("__cacheline_group_"),
            align,
            size: align,
            lockless: false,
            optional: false,
            isolation: None,
            classed: false,
            bits: Vec::new(),
        }
    }

    #[test]
    fn a_context_order_groups_by_context_as_netdev_names_them() {
        let units = [
            unit("base", &[], &[], 8),
            unit("__cacheline_group_begin__old", &[], &[], 1),
            unit("a", &["rx"], &[], 4),
            unit("b", &["tx", "rx"], &[], 2),
            unit("c", &["tx"], &[], 4),
            unit("d", &["tx"], &[], 8),
            unit("e", &["rx"], &["tx"], 8),
            unit("cold", &[], &[], 8),
        ];
        let contexts = ["tx".to_owned(), "rx".to_owned()];
        let Candidate { order, removed } = by_context("s", &units, &contexts);
        use Entry::*;
        assert_eq!(removed, [1]);
        assert_eq!(
            order,
            [
                Unit(0),
                Named("s_read_tx".into(), vec![5, 4]),
                Named("s_read_txrx".into(), vec![3]),
                Named("s_read_rx".into(), vec![2]),
                Named("s_write_txrx".into(), vec![6]),
                Unit(7),
            ]
        );
    }

    #[test]
    fn inside_groups_a_member_moves_in_its_group_and_a_group_among_groups() {
        use Entry::*;
        let order = [
            Unit(0),
            Named("g".into(), vec![1, 2, 3]),
            Named("h".into(), vec![4]),
            Unit(5),
        ];
        let steps = within_groups(&order);
        // Each of g's 3 members to 2 other places; h's one member nowhere;
        // g after h and h before g (the span of the groups).
        assert_eq!(steps.len(), 3 * 2 + 2, "{steps:?}");
        assert!(steps.contains(&vec![
            Unit(0),
            Named("g".into(), vec![2, 3, 1]),
            Named("h".into(), vec![4]),
            Unit(5),
        ]));
        assert!(steps.contains(&vec![
            Unit(0),
            Named("h".into(), vec![4]),
            Named("g".into(), vec![1, 2, 3]),
            Unit(5),
        ]));
        // Members outside groups never move, and every step is a new order.
        assert!(steps.iter().all(|s| s[0] == Unit(0) && s[3] == Unit(5)));
        assert!(steps.iter().all(|s| s.as_slice() != order));
        assert!(within_groups(&[Unit(0), Unit(1)]).is_empty());
    }

    #[test]
    fn a_kernel_groups_markers_never_move() {
        use Entry::*;
        let units = [
            unit("a", &[], &[], 8),
            unit("__cacheline_group_begin__g", &[], &[], 1),
            unit("b", &[], &[], 8),
            unit("__cacheline_group_end__g", &[], &[], 1),
            unit("c", &[], &[], 8),
        ];
        let order: Vec<Entry> = (0..units.len()).map(Unit).collect();
        let steps = neighbours(&order, &units);
        assert!(!steps.is_empty());
        for s in &steps {
            // Begin and end keep their order, with every other entry
            // moving around them.
            let at = |u: usize| s.iter().position(|e| *e == Unit(u)).unwrap();
            assert!(at(1) < at(3), "{s:?}");
        }
        // b may still leave the group, and a may enter it.
        assert!(steps.contains(&vec![Unit(0), Unit(1), Unit(3), Unit(2), Unit(4)]));
        assert!(steps.contains(&vec![Unit(1), Unit(0), Unit(2), Unit(3), Unit(4)]));
    }

    #[test]
    fn every_order_is_every_permutation_and_every_placement_of_the_group() {
        // a, b plain; w1, w2 lockless: 4! orders, then the group [w1 w2]
        // or [w2 w1] among a and b, 3! each.
        let mut units = vec![
            unit("a", &[], &[], 8),
            unit("w1", &[], &[], 8),
            unit("b", &[], &[], 8),
            unit("w2", &[], &[], 8),
        ];
        units[1].lockless = true;
        units[3].lockless = true;
        let every = every_order(&units);
        assert_eq!(every.len(), 24 + 2 * 6);
        let distinct: std::collections::HashSet<String> =
            every.iter().map(|c| format!("{:?}", c.order)).collect();
        assert_eq!(distinct.len(), every.len());
        assert_eq!(every[0].order, (0..4).map(Entry::Unit).collect::<Vec<_>>());
        let grouped = every
            .iter()
            .filter(|c| c.order.contains(&Entry::Group(vec![3, 1])))
            .count();
        assert_eq!(grouped, 6);
    }
}
