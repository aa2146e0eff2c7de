//! A plan applied to a build's type model: the planned structs get their
//! new member lists and are re-laid out ([`super::abi`]); then every
//! struct that holds one by value (directly, in an array, through
//! typedefs), out to the outermost, is re-laid out in its own order.
//!
//! Types are decoded lazily, so a [`Planner`] is applied after every
//! lookup; each struct is re-laid out once, from its compiled layout.

use std::collections::BTreeSet;

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::sync::Arc;

use super::abi::{self, Abi, Laid, Piece, Recipe, Types};
use super::c_types::{self, struct_name};
use super::embedding::{affected, anonymous_path, children, reachable};
use super::infer::{Compiled, Known, View};
use super::member_list::{Entry, Expander};
use super::{Item, NewType, Plan, Shape, TypePlan};
use crate::error::{Error, Result};
use crate::model::{MAX_TYPE_DEPTH, Member, Type, TypeId, TypeTable};

/// What was re-laid out, for the notes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// `struct NAME`.
    pub name: String,
    /// Compiled size.
    pub old_size: u64,
    /// Planned size.
    pub new_size: u64,
    /// Planned itself (else re-laid out around a planned struct).
    pub planned: bool,
}

/// Applies one plan to one build's model, as its types are decoded.
pub struct Planner {
    plan: Arc<Plan>,
    abi: Abi,
    /// The structs as compiled (and the compiled copies of those changed).
    compiled: Compiled,
    /// Alignment of every re-laid-out struct, planned.
    new_align: HashMap<TypeId, u64>,
    /// The new member lists of planned structs.
    expander: Expander,
    changes: Vec<Change>,
}

impl Planner {
    /// A planner for `plan` on a build of machine `abi` with lines of
    /// `cacheline` bytes (`SMP_CACHE_BYTES`, for aligned groups, unless
    /// the plan sets it).
    pub fn new(plan: Arc<Plan>, abi: Abi, cacheline: u64) -> Planner {
        Planner::knowing(plan, abi, cacheline, Arc::default())
    }

    /// [`Planner::new`] on a table of which `known` was read before.
    pub(crate) fn knowing(plan: Arc<Plan>, abi: Abi, cacheline: u64, known: Arc<Known>) -> Planner {
        let cacheline = plan.smp_cache_bytes.unwrap_or(cacheline);
        Planner {
            plan,
            abi,
            compiled: Compiled::knowing(abi, known),
            new_align: HashMap::new(),
            expander: Expander::new(abi, cacheline),
            changes: Vec::new(),
        }
    }

    /// Puts back every struct this planner changed, as compiled (the
    /// types it added stay: the caller truncates the table), and adds what
    /// it read of the compiled structs below `limit` to `known`.
    pub(crate) fn undo(self, table: &mut TypeTable, known: &mut Arc<Known>, limit: u32) {
        known.learn(&self.compiled, limit);
        for (id, c) in self.compiled.into_originals() {
            table.set(id, Type::Composite(c));
        }
    }

    /// Type names the plan needs decoded: the planned structs and the
    /// named types of added members.
    pub fn wanted_names(&self) -> Vec<String> {
        // An anonymous member's plan (`OUTER.MEMBER`) needs OUTER.
        let mut names: Vec<String> = self
            .plan
            .types
            .iter()
            .map(|t| super::outer(&t.name).to_owned())
            .collect();
        for t in &self.plan.types {
            let items: Vec<&Item> = match &t.shape {
                Shape::Order(items) => items.iter().collect(),
                Shape::Moves(moves) => moves.iter().map(|m| &m.item).collect(),
            };
            let mut stack = items;
            while let Some(item) = stack.pop() {
                match item {
                    Item::Group { items, .. } => stack.extend(items),
                    Item::Add {
                        ty: NewType::C(text),
                        ..
                    } => {
                        names.extend(c_types::decoded_name(text, self.abi));
                    }
                    _ => {}
                }
            }
        }
        names.sort();
        names.dedup();
        names
    }

    /// The note a planned build carries.
    pub fn note(&self) -> String {
        let mut seen = HashSet::new();
        let mut parts = Vec::new();
        for c in &self.changes {
            if seen.insert((&c.name, c.planned)) {
                let how = if c.planned { "planned" } else { "re-laid out" };
                parts.push(format!(
                    "{} {} -> {} bytes ({how})",
                    c.name, c.old_size, c.new_size
                ));
            }
        }
        if parts.is_empty() {
            parts.push("no planned struct in the types read".to_owned());
        }
        format!(
            "layout planned by {}, not compiled: {}",
            self.plan.path.display(),
            parts.join(", ")
        )
    }

    /// Re-lays out what the plan changes among the structs `used` hold
    /// by value (and `used` themselves): what a command reads. (A lookup
    /// decodes every unit's copy of a type to compare their layouts; only
    /// the copies a command reads are worth re-laying out.)
    pub fn apply(&mut self, table: &mut TypeTable, used: &[TypeId]) -> Result<()> {
        let reach = reachable(table, used);
        let planned = self.planned_ids(table, &reach);
        let mut roots: Vec<TypeId> = planned.iter().map(|(id, _)| *id).collect();
        roots.extend(self.compiled.kept());
        let affected = affected(table, &reach, &roots, |id| self.compiled.is_kept(id));
        if planned.is_empty() && affected.is_empty() {
            return Ok(());
        }
        let plans: HashMap<TypeId, usize> = planned.into_iter().collect();
        let set: BTreeSet<TypeId> = plans.keys().copied().chain(affected).collect();
        // Every recipe is read from the compiled layouts, before any change.
        for &id in &set {
            let plan = plans.get(&id).map(|&i| &self.plan.types[i]);
            self.checked_recipe(table, id, plan)?;
        }
        for &id in &set {
            self.compiled.keep(table, id);
        }
        let mut done = HashSet::new();
        for &id in &set {
            self.visit(table, id, &set, &plans, &mut done, 0)?;
        }
        Ok(())
    }

    /// Planned structs among `reach` not re-laid out yet: (id, index of
    /// its plan). Structs are found by tag in `reach`, an anonymous
    /// member's plan (`OUTER.MEMBER`) inside every OUTER there; only a
    /// plan name no tag there matches is looked for as a typedef of an
    /// anonymous struct (`typedef struct { ... } name_t;`), over the whole
    /// table.
    fn planned_ids(&self, table: &TypeTable, reach: &HashSet<TypeId>) -> Vec<(TypeId, usize)> {
        let index: HashMap<&str, usize> = self
            .plan
            .types
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.as_str(), i))
            .collect();
        let mut out = Vec::new();
        let mut tagged = HashSet::new();
        for &id in reach {
            let Some(c) = table.composite(id).filter(|c| c.members.is_some()) else {
                continue;
            };
            if let Some(&p) = c.name.as_deref().and_then(|n| index.get(n)) {
                tagged.insert(p);
                if !self.compiled.is_kept(id) {
                    out.push((id, p));
                }
            }
            let Some(tag) = c.name.as_deref() else {
                continue;
            };
            for (name, &p) in &index {
                if !name.contains('.') || super::outer(name) != tag {
                    continue;
                }
                if let Ok(anon) = anonymous_path(table, id, name) {
                    tagged.insert(p);
                    if !self.compiled.is_kept(anon) {
                        out.push((anon, p));
                    }
                }
            }
        }
        if tagged.len() < index.len() {
            for i in 0..table.len() {
                let Type::Typedef { name, target } = table.get(TypeId(i)) else {
                    continue;
                };
                let Some(&p) = index.get(name.as_str()).filter(|p| !tagged.contains(*p)) else {
                    continue;
                };
                let t = table.strip(*target);
                match table.composite(t) {
                    Some(c)
                        if c.name.is_none()
                            && c.members.is_some()
                            && reach.contains(&t)
                            && !self.compiled.is_kept(t) =>
                    {
                        out.push((t, p));
                    }
                    _ => {}
                }
            }
        }
        out.sort();
        out.dedup_by_key(|(id, _)| *id);
        out
    }

    fn checked_recipe(&self, table: &TypeTable, id: TypeId, plan: Option<&TypePlan>) -> Result<()> {
        let recipe = self.compiled.recipe(table, id, plan.and_then(|p| p.packed));
        match recipe {
            Ok(_) => Ok(()),
            Err(why) => {
                let name = struct_name(self.compiled.original(table, id).expect("a composite"));
                let message = format!("cannot re-lay out {name} as planned: {why}");
                Err(match plan {
                    Some(p) => p.at.plan_error(message),
                    None => Error::BadType(format!("plan {}: {message}", self.plan.path.display())),
                })
            }
        }
    }

    fn visit(
        &mut self,
        table: &mut TypeTable,
        id: TypeId,
        set: &BTreeSet<TypeId>,
        plans: &HashMap<TypeId, usize>,
        done: &mut HashSet<TypeId>,
        depth: usize,
    ) -> Result<()> {
        if depth > MAX_TYPE_DEPTH || !done.insert(id) {
            return Ok(());
        }
        let children: Vec<TypeId> = children(
            table,
            self.compiled.original(table, id).expect("a composite"),
        )
        .into_iter()
        .filter(|c| set.contains(c))
        .collect();
        for child in children {
            self.visit(table, child, set, plans, done, depth + 1)?;
        }
        let plan = plans.get(&id).map(|&i| self.plan.types[i].clone());
        self.relayout(table, id, plan.as_ref())
    }

    fn relayout(
        &mut self,
        table: &mut TypeTable,
        id: TypeId,
        plan: Option<&TypePlan>,
    ) -> Result<()> {
        let original = self
            .compiled
            .original(table, id)
            .expect("a composite")
            .clone();
        let members = original.members.clone().unwrap_or_default();
        let recipe = self
            .compiled
            .recipe(table, id, plan.and_then(|p| p.packed))
            .expect("checked");
        let (entries, packed, min_align) = match plan {
            Some(p) => {
                let entries = self.expander.entries(table, p, &original, &recipe)?;
                let packed = p.packed.unwrap_or(recipe.packed);
                (
                    entries,
                    packed,
                    recipe.struct_align.max(p.align.unwrap_or(1)),
                )
            }
            None => (
                (0..recipe.parts.len())
                    .map(|i| Entry::Part { part: i, extra: 1 })
                    .collect(),
                recipe.packed,
                recipe.struct_align,
            ),
        };
        let laid = {
            let view = View::planned(&self.compiled, table, &self.new_align);
            let recipe = Recipe {
                packed,
                ..recipe.clone()
            };
            let pieces = entries
                .iter()
                .map(|e| match e {
                    Entry::Part { part, extra } => recipe
                        .piece(&recipe.parts[*part], &members, &view, *extra)
                        .map_err(|why| plan_error(plan, &self.plan, &why)),
                    Entry::New(m) => {
                        let size = view.size(m).ok_or_else(|| {
                            plan_error(
                                plan,
                                &self.plan,
                                &format!(
                                    "added member '{}' has no size",
                                    m.name.as_deref().unwrap_or("?")
                                ),
                            )
                        })?;
                        let attr = m.alignment.unwrap_or(1);
                        let align = if packed {
                            attr
                        } else {
                            attr.max(view.align(m))
                        };
                        Ok(Piece::Whole { size, align })
                    }
                })
                .collect::<Result<Vec<_>>>()?;
            abi::lay_out(&pieces, original.kind, packed, min_align)
                .ok_or_else(|| plan_error(plan, &self.plan, "offsets overflow"))?
        };
        let Laid {
            bit_offsets,
            size,
            align,
        } = laid;
        let mut new_members = Vec::new();
        for (entry, offsets) in entries.iter().zip(&bit_offsets) {
            match entry {
                Entry::Part { part, extra } => {
                    for (&i, &bit) in recipe.parts[*part].members.iter().zip(offsets) {
                        let mut m = members[i].clone();
                        m.bit_offset = bit;
                        if *extra > 1 {
                            m.alignment = Some(m.alignment.unwrap_or(1).max(*extra));
                        }
                        new_members.push(m);
                    }
                }
                Entry::New(m) => new_members.push(Member {
                    bit_offset: offsets[0],
                    ..m.clone()
                }),
            }
        }
        // A typedef'd anonymous struct is known by the plan's name for it.
        let name = match (plan, &original.name) {
            (Some(p), None) => format!("{} {}", original.kind.keyword(), p.name),
            _ => struct_name(&original),
        };
        let old_size = original.size.unwrap_or(0);
        if let Type::Composite(c) = table.get_mut(id) {
            c.members = Some(new_members);
            c.size = Some(size);
            if let Some(a) = plan.and_then(|p| p.align) {
                c.alignment = Some(c.alignment.unwrap_or(1).max(a));
            }
        }
        self.new_align.insert(id, align);
        self.changes.push(Change {
            name,
            old_size,
            new_size: size,
            planned: plan.is_some(),
        });
        Ok(())
    }
}

/// A plan's error on `plan` (or the whole plan, `None`): `why` it
/// cannot be laid out.
fn plan_error(plan: Option<&TypePlan>, whole: &Plan, why: &str) -> Error {
    match plan {
        Some(p) => {
            p.at.plan_error(format!("cannot lay out [{}] as planned: {why}", p.name))
        }
        None => Error::BadType(format!("plan {}: {why}", whole.path.display())),
    }
}
