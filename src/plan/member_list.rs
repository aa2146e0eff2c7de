//! The new member list of a planned struct: the plan's items (members,
//! groups, added members, moves) expanded into the parts of the compiled
//! struct and the members the plan makes, every name checked.

use foldhash::{HashMap, HashMapExt, HashSet};

use super::abi::{Abi, Recipe};
use super::c_types::{self, Made, struct_name};
use super::{Item, NewType, Shape, TypePlan};
use crate::error::Result;
use crate::layout::{GROUP_BEGIN, GROUP_END, GROUP_PAD};
use crate::model::{Composite, MAX_TYPE_DEPTH, Member, Type, TypeId, TypeTable};

/// Expands plans' items into new member lists.
pub(super) struct Expander {
    abi: Abi,
    /// What aligned groups align to (`SMP_CACHE_BYTES`).
    cacheline: u64,
    /// Types that exist only for the plan's new members.
    made: Made,
}

impl Expander {
    /// An expander for a machine of `abi` whose aligned groups align to
    /// `cacheline`.
    pub(super) fn new(abi: Abi, cacheline: u64) -> Expander {
        Expander {
            abi,
            cacheline,
            made: Made::default(),
        }
    }

    /// The new member list of a planned struct, from its plan.
    pub(super) fn entries(
        &mut self,
        table: &mut TypeTable,
        plan: &TypePlan,
        original: &Composite,
        recipe: &Recipe,
    ) -> Result<Vec<Entry>> {
        let members = original.members.as_deref().unwrap_or(&[]);
        let mut pick = Picker {
            names: part_names(table, members, recipe),
            used: HashMap::new(),
            owner: struct_name(original),
            optional: plan.optional.iter().map(|(n, _)| n.clone()).collect(),
        };
        for (name, at) in &plan.remove {
            if pick.skipped(name) {
                continue;
            }
            let part = pick.part_of(name, at)?;
            pick.take(part, name, at)?;
        }
        let mut out = Vec::new();
        match &plan.shape {
            Shape::Order(items) => {
                for item in items {
                    self.expand(table, item, &mut pick, recipe, members, &mut out)?;
                }
                let missing: Vec<String> = (0..recipe.parts.len())
                    .filter(|p| !pick.used.contains_key(p))
                    .map(|p| {
                        let m = &members[recipe.parts[p].members[0]];
                        format!("'{}'", m.name.as_deref().unwrap_or("(anonymous)"))
                    })
                    .collect();
                if !missing.is_empty() {
                    return Err(plan.at.plan_error(format!(
                        "the order of {} leaves out {}: name every member once, or remove = [...] it",
                        pick.owner,
                        missing.join(", ")
                    )));
                }
            }
            Shape::Moves(moves) => {
                out = (0..recipe.parts.len())
                    .filter(|p| !pick.used.contains_key(p))
                    .map(|part| Entry::Part { part, extra: 1 })
                    .collect();
                for mv in moves {
                    if let Item::Member { name, .. } = &mv.item
                        && pick.skipped(name)
                    {
                        continue;
                    }
                    let mut placed = Vec::new();
                    self.expand(table, &mv.item, &mut pick, recipe, members, &mut placed)?;
                    // The anchor is a member, or one an earlier move added.
                    let added = out.iter().position(
                        |o| matches!(o, Entry::New(m) if m.name.as_deref() == Some(&mv.anchor)),
                    );
                    let anchor = match added {
                        Some(_) => None,
                        None => Some(pick.part_of(&mv.anchor, &mv.anchor_at)?),
                    };
                    for e in &placed {
                        if let Entry::Part { part, .. } = e {
                            if Some(*part) == anchor {
                                return Err(mv.anchor_at.plan_error(format!(
                                    "'{}' is moved next to itself",
                                    mv.anchor
                                )));
                            }
                            out.retain(|o| !matches!(o, Entry::Part { part: p, .. } if p == part));
                        }
                    }
                    let at = match anchor {
                        None => out.iter().position(
                            |o| matches!(o, Entry::New(m) if m.name.as_deref() == Some(&mv.anchor)),
                        ),
                        Some(anchor) => out
                            .iter()
                            .position(|o| matches!(o, Entry::Part { part, .. } if *part == anchor)),
                    }
                    .ok_or_else(|| {
                        mv.anchor_at
                            .plan_error(format!("'{}' is removed", mv.anchor))
                    })?;
                    let at = if mv.after { at + 1 } else { at };
                    out.splice(at..at, placed);
                }
            }
        }
        // A flexible array stays last.
        let flexible = out.iter().position(|e| match e {
            Entry::Part { part, .. } => {
                is_flexible(table, &members[recipe.parts[*part].members[0]])
            }
            Entry::New(_) => false,
        });
        if let Some(pos) = flexible
            && pos + 1 != out.len()
            && let Entry::Part { part, .. } = &out[pos]
        {
            let name = members[recipe.parts[*part].members[0]]
                .name
                .clone()
                .unwrap_or_default();
            return Err(plan.at.plan_error(format!(
                "the flexible array '{name}' must stay the last member"
            )));
        }
        Ok(out)
    }

    /// Adds `item` to `out`, the members it stands for.
    fn expand(
        &mut self,
        table: &mut TypeTable,
        item: &Item,
        pick: &mut Picker,
        recipe: &Recipe,
        members: &[Member],
        out: &mut Vec<Entry>,
    ) -> Result<()> {
        match item {
            Item::Member { name, align, at } => {
                if pick.skipped(name) {
                    return Ok(());
                }
                let part = pick.part_of(name, at)?;
                pick.take(part, name, at)?;
                if align.is_some() && members[recipe.parts[part].members[0]].is_bitfield() {
                    return Err(at.plan_error(format!(
                        "'{name}' is a bitfield: an alignment goes on a whole member"
                    )));
                }
                out.push(Entry::Part {
                    part,
                    extra: align.unwrap_or(1),
                });
            }
            Item::Group {
                name,
                aligned,
                items,
                ..
            } => {
                let marker = self.made.marker(table);
                let group_align = aligned.map(|a| a.unwrap_or(self.cacheline));
                out.push(Entry::New(new_member(
                    format!("{GROUP_BEGIN}{name}"),
                    marker,
                    group_align,
                )));
                for item in items {
                    self.expand(table, item, pick, recipe, members, out)?;
                }
                out.push(Entry::New(new_member(
                    format!("{GROUP_END}{name}"),
                    marker,
                    group_align.map(|_| self.abi.pointer_size),
                )));
                if group_align.is_some() {
                    let pad = self.made.pad(table);
                    out.push(Entry::New(new_member(
                        format!("{GROUP_PAD}{name}"),
                        pad,
                        group_align,
                    )));
                }
            }
            Item::Add {
                name,
                ty,
                align,
                at,
            } => {
                if pick.names.contains_key(name) {
                    return Err(at.plan_error(format!("'{name}' is a member already")));
                }
                let (id, align) = match ty {
                    NewType::C(text) => (c_types::added(table, self.abi, text, at)?, *align),
                    NewType::Raw { size, align } => {
                        let byte = c_types::scalar(table, "unsigned char", 1);
                        let id = table.push(Type::Array {
                            element: byte,
                            dims: vec![Some(*size)],
                        });
                        (id, Some(*align))
                    }
                };
                out.push(Entry::New(new_member(name.clone(), id, align)));
            }
        }
        Ok(())
    }
}

/// Which parts of the compiled struct the plan has named.
struct Picker {
    names: HashMap<String, usize>,
    used: HashMap<usize, String>,
    owner: String,
    /// The plan's `optional` members.
    optional: HashSet<String>,
}

impl Picker {
    /// True for an optional member this build lacks: its entries are
    /// skipped.
    fn skipped(&self, name: &str) -> bool {
        !self.names.contains_key(name) && self.optional.contains(name)
    }

    fn part_of(&self, name: &str, at: &crate::rules::Location) -> Result<usize> {
        self.names.get(name).copied().ok_or_else(|| {
            let hint = crate::suggest::did_you_mean(name, self.names.keys().map(String::as_str));
            at.plan_error(format!("{} has no member '{name}'{hint}", self.owner))
        })
    }

    fn take(&mut self, part: usize, name: &str, at: &crate::rules::Location) -> Result<()> {
        match self.used.insert(part, name.to_owned()) {
            None => Ok(()),
            Some(first) if first == name => Err(at.plan_error(format!("'{name}' is named twice"))),
            Some(first) => Err(at.plan_error(format!(
                "'{name}' and '{first}' move as one (a bitfield run, or one anonymous struct or \
                 union): name one of them"
            ))),
        }
    }
}

/// One member of a new member list.
pub(super) enum Entry {
    /// A part of the compiled struct, with an added alignment attribute.
    Part {
        /// The part's index in the recipe.
        part: usize,
        /// The alignment attribute added (1: none).
        extra: u64,
    },
    /// A member the plan makes (a group marker, an added member).
    New(Member),
}

fn new_member(name: String, ty: TypeId, align: Option<u64>) -> Member {
    Member {
        name: Some(name),
        ty,
        bit_offset: 0,
        bit_size: None,
        alignment: align.filter(|&a| a > 1),
        decl: None,
    }
}

/// Names that pick a part of a compiled struct: each member's name, and
/// for an anonymous struct or union every name reachable inside it.
fn part_names(table: &TypeTable, members: &[Member], recipe: &Recipe) -> HashMap<String, usize> {
    let mut out = HashMap::new();
    for (p, part) in recipe.parts.iter().enumerate() {
        for &i in &part.members {
            let m = &members[i];
            match &m.name {
                Some(n) => {
                    out.entry(n.clone()).or_insert(p);
                }
                None => {
                    let mut stack = vec![(m.ty, 0)];
                    while let Some((ty, depth)) = stack.pop() {
                        if depth > MAX_TYPE_DEPTH {
                            continue;
                        }
                        let Some(c) = table.composite(table.strip(ty)) else {
                            continue;
                        };
                        for inner in c.members.iter().flatten() {
                            match &inner.name {
                                Some(n) => {
                                    out.entry(n.clone()).or_insert(p);
                                }
                                None => stack.push((inner.ty, depth + 1)),
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

fn is_flexible(table: &TypeTable, m: &Member) -> bool {
    matches!(table.get(table.strip(m.ty)), Type::Array { dims, .. } if dims.first() == Some(&None))
}
