//! Candidates and the plans they are: a member order of the struct
//! searched, built straight into the [`Plan`] the plan engine lays out,
//! and written as a plan file's text only for the suggestion the report
//! prints (and `--plan-out` writes).
//!
//! A built plan is the one [`Plan::parse`] reads from that text, read from
//! `suggested.plan.toml`: every location is where the text puts its item,
//! and an order the parser would refuse (a name that is no C identifier)
//! is no plan either.

use std::path::Path;
use std::sync::Arc;

use super::units::Unit;
use crate::plan::{Item, Plan, Shape, TypePlan, is_identifier};
use crate::rules::Location;

/// The file a built plan says it was read from.
const PLAN_FILE: &str = "suggested.plan.toml";

/// An entry of a candidate order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Entry {
    /// A unit, by index.
    Unit(usize),
    /// An aligned kernel cacheline group of units.
    Group(Vec<usize>),
    /// A kernel cacheline group (not aligned) of units, by name.
    Named(String, Vec<usize>),
}

/// A candidate: an order, and the units it removes (old group markers).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Candidate {
    /// The entries in their new order.
    pub(crate) order: Vec<Entry>,
    /// The units dropped (as indexes).
    pub(crate) removed: Vec<usize>,
}

impl Candidate {
    /// The `moved` objective: units out of the compiled order, one per
    /// group made, and one per unit removed.
    pub(super) fn moved(&self) -> usize {
        moved(&self.order) + self.removed.len()
    }
}

/// True when `order` (removing `removed`) crosses none of `barriers`
/// (unit indexes, sorted): each keeps its place in the order, and every
/// unit stays on the side of it where it was compiled (the author's
/// isolation).
pub(super) fn keeps(order: &[Entry], removed: &[usize], barriers: &[usize]) -> bool {
    if barriers.iter().any(|b| removed.contains(b)) {
        return false;
    }
    // The segment of a unit: 2k between barrier k-1 and barrier k, 2k + 1
    // for barrier k itself. In order, they may only rise.
    let key = |u: &usize| match barriers.binary_search(u) {
        Ok(k) => 2 * k + 1,
        Err(k) => 2 * k,
    };
    let mut keys = order
        .iter()
        .flat_map(|e| match e {
            Entry::Unit(u) => std::slice::from_ref(u),
            Entry::Group(g) | Entry::Named(_, g) => g.as_slice(),
        })
        .map(key);
    let Some(mut last) = keys.next() else {
        return true;
    };
    keys.all(|k| std::mem::replace(&mut last, k) <= k)
}

/// The struct searched, as its plans name it.
pub(super) struct Target<'a> {
    /// The struct's name (as the builds name it).
    pub(super) name: &'a str,
    /// Its units.
    units: &'a [Unit],
    /// The lockless writers' aligned group: `NAME_lockless`.
    group: String,
    /// The file every built plan and its locations name.
    file: Arc<Path>,
    /// The `optional = [...]` list (the same for every candidate), or
    /// `None` when the parser would refuse it.
    optional: Option<Vec<(String, Location)>>,
}

impl<'a> Target<'a> {
    /// The struct `name` of `units`.
    pub(super) fn new(name: &'a str, units: &'a [Unit]) -> Target<'a> {
        let file: Arc<Path> = Arc::from(Path::new(PLAN_FILE));
        let optional: Vec<usize> = (0..units.len()).filter(|&u| units[u].optional).collect();
        let mut target = Target {
            name,
            units,
            group: format!("{}_lockless", crate::plan::outer(name)),
            file,
            optional: None,
        };
        // A name optional twice is the parser's error too.
        let mut seen = std::collections::HashSet::new();
        target.optional = target
            .list(2, "optional = [", &optional)
            .filter(|list| list.iter().all(|(name, _)| seen.insert(name.clone())));
        target
    }

    /// The name its rules go by: an anonymous member's plan
    /// (`OUTER.MEMBER`) is under OUTER's rules, whose paths skip the
    /// anonymous level as C does.
    pub(super) fn rules_name(&self) -> &'a str {
        crate::plan::outer(self.name)
    }

    /// The plan of candidate `c`, as [`Plan::parse`] reads it from
    /// [`Target::text`]; `None` where the parser refuses that text.
    pub(super) fn plan(&self, c: &Candidate) -> Option<Plan> {
        // `[smp_cache_bytes]` would be the plan's one setting, not a struct.
        if !self.name.split('.').all(is_identifier) || self.name == "smp_cache_bytes" {
            return None;
        }
        let optional = self.optional.clone()?;
        // Line 1 is `[NAME]`, then `optional` and `remove` when they are
        // written, then `order = [` and one line per entry.
        let mut line = 1 + usize::from(!optional.is_empty());
        let remove = if c.removed.is_empty() {
            Vec::new()
        } else {
            line += 1;
            self.list(line, "remove = [", &c.removed)?
        };
        line += 1;
        let mut items = Vec::with_capacity(c.order.len());
        for entry in &c.order {
            line += 1;
            items.push(match entry {
                Entry::Unit(u) => self.member(*u, line, ENTRY_COLUMN)?,
                Entry::Group(g) => self.group(&self.group, true, g, line)?,
                Entry::Named(n, g) => self.group(n, false, g, line)?,
            });
        }
        Some(Plan {
            path: PLAN_FILE.into(),
            types: vec![TypePlan {
                name: self.name.to_owned(),
                at: self.at(1, 2),
                shape: Shape::Order(items),
                remove,
                optional,
                packed: None,
                align: None,
            }],
            smp_cache_bytes: None,
        })
    }

    /// The plan file of candidate `c`.
    pub(super) fn text(&self, c: &Candidate) -> String {
        let units = self.units;
        let quoted = |u: &usize| format!("\"{}\"", units[*u].name);
        let items: Vec<String> = c
            .order
            .iter()
            .map(|e| match e {
                Entry::Unit(u) => quoted(u),
                Entry::Group(g) => format!(
                    "{{ group = \"{}\", aligned = true, members = [{}] }}",
                    self.group,
                    g.iter().map(quoted).collect::<Vec<_>>().join(", ")
                ),
                Entry::Named(n, g) => format!(
                    "{{ group = \"{n}\", members = [{}] }}",
                    g.iter().map(quoted).collect::<Vec<_>>().join(", ")
                ),
            })
            .collect();
        let remove = if c.removed.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = c.removed.iter().map(quoted).collect();
            format!("remove = [{}]\n", names.join(", "))
        };
        let optional: Vec<String> = (0..units.len())
            .filter(|&u| units[u].optional)
            .map(|u| quoted(&u))
            .collect();
        let remove = if optional.is_empty() {
            remove
        } else {
            format!("optional = [{}]\n{remove}", optional.join(", "))
        };
        // An anonymous member's plan, `OUTER.MEMBER`, is a quoted key.
        let header = match self.name.contains('.') {
            true => format!("[\"{}\"]", self.name),
            false => format!("[{}]", self.name),
        };
        format!(
            "{header}\n{remove}order = [\n  {},\n]\n",
            items.join(",\n  ")
        )
    }

    fn at(&self, line: usize, column: usize) -> Location {
        Location {
            file: self.file.clone(),
            line,
            column,
        }
    }

    /// Unit `u` as an entry written at `line`, `column`.
    fn member(&self, u: usize, line: usize, column: usize) -> Option<Item> {
        let name = &self.units[u].name;
        is_identifier(name).then(|| Item::Member {
            name: name.clone(),
            align: None,
            at: self.at(line, column),
        })
    }

    /// `{ group = "NAME", [aligned = true, ]members = [...] }` at `line`.
    fn group(&self, name: &str, aligned: bool, members: &[usize], line: usize) -> Option<Item> {
        if !is_identifier(name) {
            return None;
        }
        let head = if aligned {
            GROUP_HEAD.len() + name.len() + ALIGNED_MEMBERS.len()
        } else {
            GROUP_HEAD.len() + name.len() + MEMBERS.len()
        };
        let mut column = ENTRY_COLUMN + head;
        let mut items = Vec::with_capacity(members.len());
        for &u in members {
            items.push(self.member(u, line, column)?);
            column += self.units[u].name.len() + SEPARATED;
        }
        Some(Item::Group {
            name: name.to_owned(),
            aligned: aligned.then_some(None),
            items,
            at: self.at(line, ENTRY_COLUMN),
        })
    }

    /// The names of `units` as a list that starts with `head` on `line`.
    fn list(&self, line: usize, head: &str, units: &[usize]) -> Option<Vec<(String, Location)>> {
        let mut column = 1 + head.len();
        let mut out = Vec::with_capacity(units.len());
        for &u in units {
            let name = &self.units[u].name;
            if !is_identifier(name) {
                return None;
            }
            out.push((name.clone(), self.at(line, column)));
            column += name.len() + SEPARATED;
        }
        Some(out)
    }
}

/// The column of an entry of `order = [...]`, after its two spaces.
const ENTRY_COLUMN: usize = 3;
/// What a group's entry starts with, up to its name.
const GROUP_HEAD: &str = "{ group = \"";
/// From the end of an aligned group's name to its first member.
const ALIGNED_MEMBERS: &str = "\", aligned = true, members = [";
/// From the end of a group's name to its first member.
const MEMBERS: &str = "\", members = [";
/// A quoted name's quotes and the `, ` after it: the columns from one
/// name of a list to the next, besides the name's own (an identifier, so
/// one column per byte).
const SEPARATED: usize = 4;

/// Units not in the longest subsequence kept in the compiled order.
fn moved(order: &[Entry]) -> usize {
    let flat: Vec<usize> = order
        .iter()
        .flat_map(|e| match e {
            Entry::Unit(u) => vec![*u],
            Entry::Group(g) | Entry::Named(_, g) => g.clone(),
        })
        .collect();
    // Longest increasing subsequence of the original indexes.
    let mut tails: Vec<usize> = Vec::new();
    for &x in &flat {
        match tails.binary_search(&x) {
            Ok(_) => {}
            Err(p) if p == tails.len() => tails.push(x),
            Err(p) => tails[p] = x,
        }
    }
    let groups = order
        .iter()
        .filter(|e| matches!(e, Entry::Group(_) | Entry::Named(..)))
        .count();
    flat.len() - tails.len() + groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(name: &str) -> Unit {
        Unit {
            name: name.into(),
            reads: Vec::new(),
            writes: Vec::new(),
            marker: name.starts_with("__cacheline_group_"),
            align: 8,
            size: 8,
            lockless: false,
            optional: false,
            isolation: None,
            classed: false,
            bits: Vec::new(),
        }
    }

    /// What the parser reads from the candidate's text (its `Debug`
    /// shows every field, locations included).
    fn parsed(target: &Target, c: &Candidate) -> Option<String> {
        Plan::parse(Path::new(PLAN_FILE), &target.text(c))
            .ok()
            .map(|p| format!("{p:?}"))
    }

    fn built(target: &Target, c: &Candidate) -> Option<String> {
        target.plan(c).map(|p| format!("{p:?}"))
    }

    #[test]
    fn no_unit_crosses_a_barrier_and_a_barrier_keeps_its_place() {
        let kept = |c: &Candidate, barriers: &[usize]| keeps(&c.order, &c.removed, barriers);
        let c = |order: &[usize]| Candidate {
            order: order.iter().map(|&u| Entry::Unit(u)).collect(),
            removed: Vec::new(),
        };
        // Units 0 1 | 2 | 3 4 | 5 | 6, barriers 2 and 5.
        let barriers = [2, 5];
        assert!(kept(&c(&[0, 1, 2, 3, 4, 5, 6]), &barriers));
        assert!(kept(&c(&[1, 0, 2, 4, 3, 5, 6]), &barriers));
        assert!(!kept(&c(&[0, 2, 1, 3, 4, 5, 6]), &barriers), "1 crossed 2");
        assert!(!kept(&c(&[0, 1, 2, 3, 5, 6, 4]), &barriers), "4 crossed 5");
        assert!(
            !kept(&c(&[0, 1, 5, 3, 4, 2, 6]), &barriers),
            "barriers swapped"
        );
        // A group gathering units of two segments crosses.
        let grouped = Candidate {
            order: vec![
                Entry::Unit(0),
                Entry::Group(vec![1, 3]),
                Entry::Unit(2),
                Entry::Unit(4),
            ],
            removed: Vec::new(),
        };
        assert!(!kept(&grouped, &[2]));
        assert!(kept(&grouped, &[]));
        let removed = Candidate {
            removed: vec![2],
            ..c(&[0, 1, 3])
        };
        assert!(!kept(&removed, &[2]));
    }

    #[test]
    fn a_built_plan_is_the_plan_its_text_parses_to() {
        let names = [
            "base",
            "__cacheline_group_begin__old",
            "a",
            "bb",
            "ccc",
            "__cacheline_group_end__old",
            "d",
        ];
        let plain: Vec<Unit> = names.iter().map(|n| unit(n)).collect();
        let mut optional = plain.clone();
        optional[3].optional = true;
        optional[6].optional = true;
        let candidates = [
            Candidate {
                order: (0..7).map(Entry::Unit).collect(),
                removed: Vec::new(),
            },
            Candidate {
                order: vec![
                    Entry::Unit(0),
                    Entry::Named("s_read_tx".into(), vec![4, 2]),
                    Entry::Group(vec![3]),
                    Entry::Unit(6),
                ],
                removed: vec![1, 5],
            },
            Candidate {
                order: vec![Entry::Group(vec![6, 4, 3, 2]), Entry::Unit(0)],
                removed: vec![5, 1],
            },
        ];
        for units in [&plain, &optional] {
            let target = Target::new("s", units);
            for c in &candidates {
                let text = target.text(c);
                assert!(built(&target, c).is_some(), "{text}");
                assert_eq!(built(&target, c), parsed(&target, c), "{text}");
            }
        }
    }

    #[test]
    fn an_order_the_parser_refuses_is_no_plan() {
        let c = Candidate {
            order: vec![Entry::Unit(0), Entry::Named("g".into(), vec![1])],
            removed: Vec::new(),
        };
        let units = [unit("a"), unit("b")];
        // A name that is no C identifier, as a member, as a group, as the
        // struct; a struct named as the plan's one setting.
        let bad_member = [unit("a"), unit("b c")];
        let bad_group = Candidate {
            order: vec![Entry::Unit(0), Entry::Named("g-h".into(), vec![1])],
            removed: Vec::new(),
        };
        let cases = [
            (Target::new("s", &bad_member), &c),
            (Target::new("s", &units), &bad_group),
            (Target::new("1s", &units), &c),
            (Target::new("smp_cache_bytes", &units), &c),
        ];
        for (target, c) in &cases {
            assert_eq!(parsed(target, c), None, "{}", target.text(c));
            assert_eq!(built(target, c), None, "{}", target.text(c));
        }
        let mut twice = [unit("a"), unit("a")];
        twice[0].optional = true;
        twice[1].optional = true;
        let target = Target::new("s", &twice);
        assert_eq!(parsed(&target, &c), None);
        assert_eq!(built(&target, &c), None);
    }

    #[test]
    fn moved_counts_what_leaves_the_compiled_order() {
        use Entry::*;
        assert_eq!(moved(&[Unit(0), Unit(1), Unit(2)]), 0);
        assert_eq!(moved(&[Unit(2), Unit(0), Unit(1)]), 1);
        // A group counts once besides its members' moves.
        assert_eq!(moved(&[Unit(0), Group(vec![1, 2])]), 1);
    }
}
