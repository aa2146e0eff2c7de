//! The members of one struct over several builds (configs). A member
//! under `#ifdef CONFIG_X` is in some builds only; `suggest` orders the
//! union of every build's units, so one order holds on each, and marks
//! those some build lacks `optional`: the plan names them in `optional =
//! [...]`, and the plan engine skips them on a build without them.

use super::units::Unit;
use crate::error::{Error, Result};

/// The units of every build, merged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Members {
    /// The union, in order; those some build lacks are `optional`.
    pub(crate) units: Vec<Unit>,
    /// Per unit, the builds that have it (indexes, in build order).
    pub(crate) present: Vec<Vec<usize>>,
}

/// Merges the units of struct `name` in each build (config label, units):
/// the first build's order, each unit a later build has and the union
/// lacks inserted right after the shared unit it follows in that build
/// (before the first shared one when it leads). Two builds that order
/// the members they share differently are refused: no order is then
/// "the compiled one" on both.
pub(crate) fn merge(name: &str, builds: &[(&str, Vec<Unit>)]) -> Result<Members> {
    let mut units: Vec<Unit> = Vec::new();
    let mut present: Vec<Vec<usize>> = Vec::new();
    for (b, (_, list)) in builds.iter().enumerate() {
        let position = |units: &[Unit], u: &Unit| units.iter().position(|x| x.name == u.name);
        // Where the next unit this build adds goes: before the first
        // shared unit, then after each shared unit or added one.
        let mut cursor = list
            .iter()
            .find_map(|u| position(&units, u))
            .unwrap_or(units.len());
        for u in list {
            match position(&units, u) {
                Some(p) => {
                    present[p].push(b);
                    cursor = p + 1;
                }
                None => {
                    units.insert(cursor, u.clone());
                    present.insert(cursor, vec![b]);
                    cursor += 1;
                }
            }
        }
    }
    // Every build's units must come in the union's order.
    for (b, (config, list)) in builds.iter().enumerate() {
        let at: Vec<usize> = list
            .iter()
            .map(|u| units.iter().position(|x| x.name == u.name).unwrap())
            .collect();
        if let Some(w) = at.windows(2).find(|w| w[0] > w[1]) {
            let first = builds[..b]
                .iter()
                .find(|(_, l)| l.iter().any(|u| u.name == units[w[1]].name))
                .map_or("another build", |(c, _)| *c);
            return Err(Error::Mismatch(format!(
                "struct {name} has '{}' before '{}' in {config}, after it in {first}: suggest \
                 needs the members the builds share in one order",
                units[w[1]].name, units[w[0]].name
            )));
        }
    }
    for (u, p) in units.iter_mut().zip(&present) {
        u.optional = p.len() < builds.len();
    }
    Ok(Members { units, present })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(names: &str) -> Vec<Unit> {
        names
            .split_whitespace()
            .map(|n| Unit {
                name: n.into(),
                reads: Vec::new(),
                writes: Vec::new(),
                marker: false,
                align: 8,
                size: 8,
                lockless: false,
                optional: false,
                isolation: None,
                classed: false,
                bits: Vec::new(),
            })
            .collect()
    }

    fn names(m: &Members) -> Vec<String> {
        m.units
            .iter()
            .map(|u| format!("{}{}", u.name, if u.optional { "?" } else { "" }))
            .collect()
    }

    #[test]
    fn members_of_some_builds_go_next_to_their_neighbours() {
        // amd64 has x (between b and c) and z (last); cloud has y (first)
        // and w (between c and d), and lacks x and z.
        let m = merge(
            "s",
            &[
                ("amd64", units("a b x c d z")),
                ("cloud", units("y a b c w d")),
            ],
        )
        .unwrap();
        assert_eq!(names(&m), ["y?", "a", "b", "x?", "c", "w?", "d", "z?"]);
        assert_eq!(m.present[0], [1]);
        assert_eq!(m.present[1], [0, 1]);
        assert_eq!(m.present[3], [0]);
        // The same members everywhere: nothing is optional.
        let same = merge("s", &[("a", units("a b")), ("b", units("a b"))]).unwrap();
        assert_eq!(names(&same), ["a", "b"]);
        // Runs added by a build keep their order.
        let run = merge("s", &[("a", units("a d")), ("b", units("a b c d"))]).unwrap();
        assert_eq!(names(&run), ["a", "b?", "c?", "d"]);
    }

    #[test]
    fn shared_members_in_another_order_are_refused() {
        let err = merge("s", &[("amd64", units("a b c")), ("rt", units("a c b"))])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("'b' before 'c' in rt, after it in amd64"),
            "{err}"
        );
    }
}
