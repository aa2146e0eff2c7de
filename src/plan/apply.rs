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
use super::embedding::{affected, anonymous_path, children, reachable};
use super::infer::{Compiled, Known, View};
use super::{Item, NewType, Plan, Shape, TypePlan};
use crate::error::{Error, Result};
use crate::layout::{GROUP_BEGIN, GROUP_END, GROUP_PAD};
use crate::model::{Composite, CompositeKind, MAX_TYPE_DEPTH, Member, Type, TypeId, TypeTable};

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
    cacheline: u64,
    /// The structs as compiled (and the compiled copies of those changed).
    compiled: Compiled,
    /// Alignment of every re-laid-out struct, planned.
    new_align: HashMap<TypeId, u64>,
    /// Struct types that exist only for the plan's new members.
    made: HashMap<&'static str, TypeId>,
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
            cacheline,
            compiled: Compiled::knowing(abi, known),
            new_align: HashMap::new(),
            made: HashMap::new(),
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
                        if let Ok(c) = CType::parse(text)
                            && base_scalar(&c.base, self.abi).is_none()
                        {
                            names.push(c.base.rsplit(' ').next().unwrap_or(&c.base).to_owned());
                        }
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
                let entries = self.entries(table, p, &original, &recipe)?;
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

    /// The new member list of a planned struct, from its plan.
    fn entries(
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
                let marker = self.marker_type(table);
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
                    let pad = self.pad_type(table);
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
                    NewType::C(text) => (self.c_type(table, text, at)?, *align),
                    NewType::Raw { size, align } => {
                        let byte = self.scalar(table, "unsigned char", 1);
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

    /// `__u8[0]`, the type of the group markers.
    fn marker_type(&mut self, table: &mut TypeTable) -> TypeId {
        if let Some(&id) = self.made.get("marker") {
            return id;
        }
        let byte = self.scalar(table, "unsigned char", 1);
        let u8_t = table.push(Type::Typedef {
            name: "__u8".into(),
            target: byte,
        });
        let id = table.push(Type::Array {
            element: u8_t,
            dims: vec![Some(0)],
        });
        self.made.insert("marker", id);
        id
    }

    /// `struct { }`, the type of an aligned group's end padding.
    fn pad_type(&mut self, table: &mut TypeTable) -> TypeId {
        if let Some(&id) = self.made.get("pad") {
            return id;
        }
        let id = table.push(Type::Composite(Composite {
            kind: CompositeKind::Struct,
            name: None,
            size: Some(0),
            alignment: None,
            members: Some(Vec::new()),
            decl: None,
        }));
        self.made.insert("pad", id);
        id
    }

    fn scalar(&mut self, table: &mut TypeTable, name: &str, size: u64) -> TypeId {
        table.push(Type::Base {
            name: name.to_owned(),
            size,
        })
    }

    /// The type an added member's C type names.
    fn c_type(
        &mut self,
        table: &mut TypeTable,
        text: &str,
        at: &crate::rules::Location,
    ) -> Result<TypeId> {
        let c = CType::parse(text).map_err(|why| at.plan_error(format!("'{text}': {why}")))?;
        let mut id = match base_scalar(&c.base, self.abi) {
            Some((name, size, typedef)) => {
                let base = self.scalar(table, name, size);
                match typedef {
                    Some(t) => table.push(Type::Typedef {
                        name: t.to_owned(),
                        target: base,
                    }),
                    None => base,
                }
            }
            None => match find_named(table, &c.base) {
                Some(id) => id,
                None if c.pointers > 0 => {
                    let (kind, name) = match c.base.split_once(' ') {
                        Some(("union", n)) => (CompositeKind::Union, n),
                        Some((_, n)) => (CompositeKind::Struct, n),
                        None => (CompositeKind::Struct, c.base.as_str()),
                    };
                    if c.base.contains(' ') {
                        table.push(Type::Composite(Composite {
                            kind,
                            name: Some(name.to_owned()),
                            size: None,
                            alignment: None,
                            members: None,
                            decl: None,
                        }))
                    } else {
                        table.push(Type::Typedef {
                            name: name.to_owned(),
                            target: TypeTable::VOID,
                        })
                    }
                }
                None => {
                    return Err(at.plan_error(format!(
                        "'{text}': the build's debug info has no type '{}'",
                        c.base
                    )));
                }
            },
        };
        for _ in 0..c.pointers {
            id = table.push(Type::Pointer {
                target: id,
                size: self.abi.pointer_size,
            });
        }
        if !c.dims.is_empty() {
            id = table.push(Type::Array {
                element: id,
                dims: c.dims.iter().map(|d| Some(*d)).collect(),
            });
        }
        Ok(id)
    }
}

fn plan_error(plan: Option<&TypePlan>, whole: &Plan, why: &str) -> Error {
    match plan {
        Some(p) => {
            p.at.plan_error(format!("cannot lay out [{}] as planned: {why}", p.name))
        }
        None => Error::BadType(format!("plan {}: {why}", whole.path.display())),
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
enum Entry {
    /// A part of the compiled struct, with an added alignment attribute.
    Part { part: usize, extra: u64 },
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

fn struct_name(c: &Composite) -> String {
    match &c.name {
        Some(n) => format!("{} {n}", c.kind.keyword()),
        None => format!("an anonymous {}", c.kind.keyword()),
    }
}

/// The type, among those decoded, that a C type name names.
fn find_named(table: &TypeTable, base: &str) -> Option<TypeId> {
    let (kind, name) = match base.split_once(' ') {
        Some(("struct", n)) => (Some(CompositeKind::Struct), n),
        Some(("union", n)) => (Some(CompositeKind::Union), n),
        _ => (None, base),
    };
    let mut fallback = None;
    for i in 0..table.len() {
        let id = TypeId(i);
        match table.get(id) {
            Type::Composite(c)
                if c.name.as_deref() == Some(name) && kind.is_none_or(|k| k == c.kind) =>
            {
                if c.members.is_some() {
                    return Some(id);
                }
                fallback.get_or_insert(id);
            }
            Type::Typedef { name: n, .. } if kind.is_none() && n == name => return Some(id),
            _ => {}
        }
    }
    fallback
}

/// A C type as an added member writes it: a base name, pointers, array
/// dimensions.
struct CType {
    base: String,
    pointers: usize,
    dims: Vec<u64>,
}

impl CType {
    fn parse(text: &str) -> std::result::Result<CType, String> {
        let mut rest = text.trim();
        let mut dims = Vec::new();
        while let Some(open) = rest.strip_suffix(']').and_then(|r| r.rfind('[')) {
            let n = rest[open + 1..rest.len() - 1].trim();
            let n: u64 = n
                .parse()
                .map_err(|_| format!("array size '{n}' is not a number"))?;
            dims.push(n);
            rest = rest[..open].trim_end();
        }
        dims.reverse();
        let pointers = rest.len() - rest.trim_end_matches(['*', ' ']).len();
        let stars = rest[rest.len() - pointers..].matches('*').count();
        let base = rest[..rest.len() - pointers].trim();
        let words: Vec<&str> = base
            .split_whitespace()
            .filter(|w| *w != "const" && *w != "volatile")
            .collect();
        if words.is_empty() || !words.iter().all(|w| super::parse::is_identifier(w)) {
            return Err(
                "not a C type (write it like \"struct foo *\", \"u64\" or \"unsigned long[4]\")"
                    .into(),
            );
        }
        if dims.len() > 8 || stars > 8 {
            return Err("too many array dimensions or pointers".into());
        }
        Ok(CType {
            base: words.join(" "),
            pointers: stars,
            dims,
        })
    }
}

/// C's scalar type names and the kernel's fixed-width typedefs: (the
/// name the compiler gives the base type, size, typedef name).
fn base_scalar(name: &str, abi: Abi) -> Option<(&'static str, u64, Option<&'static str>)> {
    let long = abi.pointer_size;
    let fixed = |n: &str| -> Option<(&'static str, u64)> {
        Some(match n {
            "u8" | "__u8" => ("unsigned char", 1),
            "s8" | "__s8" => ("signed char", 1),
            "u16" | "__u16" => ("short unsigned int", 2),
            "s16" | "__s16" => ("short int", 2),
            "u32" | "__u32" => ("unsigned int", 4),
            "s32" | "__s32" => ("int", 4),
            "u64" | "__u64" => ("long long unsigned int", 8),
            "s64" | "__s64" => ("long long int", 8),
            _ => return None,
        })
    };
    if let Some((base, size)) = fixed(name) {
        let typedef = [
            "u8", "__u8", "s8", "__s8", "u16", "__u16", "s16", "__s16", "u32", "__u32", "s32",
            "__s32", "u64", "__u64", "s64", "__s64",
        ]
        .into_iter()
        .find(|t| *t == name);
        return Some((base, size, typedef));
    }
    Some(match name {
        "char" => ("char", 1, None),
        "signed char" => ("signed char", 1, None),
        "unsigned char" => ("unsigned char", 1, None),
        "_Bool" | "bool" => ("_Bool", 1, None),
        "short" | "short int" | "signed short" => ("short int", 2, None),
        "unsigned short" | "short unsigned int" | "unsigned short int" => {
            ("short unsigned int", 2, None)
        }
        "int" | "signed" | "signed int" => ("int", 4, None),
        "unsigned" | "unsigned int" => ("unsigned int", 4, None),
        "long" | "long int" | "signed long" => ("long int", long, None),
        "unsigned long" | "long unsigned int" | "unsigned long int" => {
            ("long unsigned int", long, None)
        }
        "long long" | "long long int" => ("long long int", 8, None),
        "unsigned long long" | "long long unsigned int" => ("long long unsigned int", 8, None),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_types_parse() {
        let c = CType::parse("struct foo *").unwrap();
        assert_eq!(
            (c.base.as_str(), c.pointers, c.dims.len()),
            ("struct foo", 1, 0)
        );
        let c = CType::parse("unsigned long[2][3]").unwrap();
        assert_eq!(
            (c.base.as_str(), c.pointers, c.dims.clone()),
            ("unsigned long", 0, vec![2, 3])
        );
        assert!(CType::parse("struct foo (*)(void)").is_err());
        assert!(CType::parse("int[x]").is_err());
        assert!(CType::parse("").is_err());
    }
}
