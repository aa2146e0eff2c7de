//! What compiled structs say about the rules they were laid out by: their
//! [`Recipe`]s and alignments, read once per struct and kept. The planner
//! reads them through the structs it has re-laid out (it keeps their
//! compiled copies here); a loader whose format records no alignment
//! attributes (BTF) reads them to fill the attributes in.

use foldhash::{HashMap, HashMapExt, HashSet};
use std::cell::RefCell;
use std::sync::Arc;

use super::abi::{self, Abi, Recipe, Types};
use crate::model::{Composite, MAX_TYPE_DEPTH, Member, Type, TypeId, TypeTable};

/// The recipes and alignments of compiled structs, with the compiled
/// copies of those a plan changed.
#[derive(Debug)]
pub struct Compiled {
    abi: Abi,
    /// Every re-laid-out struct as it was compiled.
    originals: HashMap<TypeId, Composite>,
    recipes: RefCell<HashMap<TypeId, Result<Recipe, String>>>,
    aligns: RefCell<HashMap<TypeId, u64>>,
    /// Structs whose alignment is being computed (a struct holding itself
    /// by value exists only in corrupt input).
    active: RefCell<HashSet<TypeId>>,
    /// What an earlier planner on the same table read, consulted first.
    known: Arc<Known>,
}

/// Recipes and alignments of a table's compiled structs, read by one
/// planner and handed to the next on the same table (`suggest` lays out
/// thousands of candidates on one model: the compiled structs do not
/// change, only what is read of them would be read again).
#[derive(Debug, Default, Clone)]
pub struct Known {
    recipes: HashMap<TypeId, Result<Recipe, String>>,
    aligns: HashMap<TypeId, u64>,
}

impl Known {
    /// Adds what `compiled` read of structs below `limit` (the table's
    /// length as compiled: the types a plan adds go with it).
    pub fn learn(self: &mut Arc<Known>, compiled: &Compiled, limit: u32) {
        let recipes = compiled.recipes.borrow();
        let aligns = compiled.aligns.borrow();
        let new = |id: &TypeId| id.0 < limit;
        if !recipes.keys().any(new) && !aligns.keys().any(new) {
            return;
        }
        let known = Arc::make_mut(self);
        for (id, r) in recipes.iter().filter(|(id, _)| new(id)) {
            known.recipes.insert(*id, r.clone());
        }
        for (id, a) in aligns.iter().filter(|(id, _)| new(id)) {
            known.aligns.insert(*id, *a);
        }
    }
}

impl Compiled {
    /// Nothing read yet, for a machine of `abi`.
    pub fn new(abi: Abi) -> Compiled {
        Compiled::knowing(abi, Arc::default())
    }

    /// Nothing read yet but what `known` holds.
    pub fn knowing(abi: Abi, known: Arc<Known>) -> Compiled {
        Compiled {
            abi,
            originals: HashMap::new(),
            recipes: RefCell::default(),
            aligns: RefCell::default(),
            active: RefCell::default(),
            known,
        }
    }

    /// True when `id` was changed (its compiled copy is kept).
    pub fn is_kept(&self, id: TypeId) -> bool {
        self.originals.contains_key(&id)
    }

    /// Keeps the compiled copy of `id` before it changes.
    pub fn keep(&mut self, table: &TypeTable, id: TypeId) {
        if let Some(c) = table.composite(id) {
            self.originals.entry(id).or_insert_with(|| c.clone());
        }
    }

    /// The changed structs.
    pub fn kept(&self) -> impl Iterator<Item = TypeId> + '_ {
        self.originals.keys().copied()
    }

    /// The changed structs as compiled, handed back.
    pub fn into_originals(self) -> impl Iterator<Item = (TypeId, Composite)> {
        self.originals.into_iter()
    }

    /// Struct `id` as compiled.
    pub fn original<'t>(&'t self, table: &'t TypeTable, id: TypeId) -> Option<&'t Composite> {
        self.originals.get(&id).or_else(|| table.composite(id))
    }

    /// The recipe of struct `id` as compiled; `packed` overrides the
    /// inference (and is not kept).
    pub fn recipe(
        &self,
        table: &TypeTable,
        id: TypeId,
        packed: Option<bool>,
    ) -> Result<Recipe, String> {
        if packed.is_none() {
            if let Some(r) = self.known.recipes.get(&id) {
                return r.clone();
            }
            if let Some(r) = self.recipes.borrow().get(&id) {
                return r.clone();
            }
        }
        let c = self.original(table, id).ok_or("not a struct")?;
        let r = abi::recipe(c, &View::compiled(self, table), packed);
        if packed.is_none() {
            self.recipes.borrow_mut().insert(id, r.clone());
        }
        r
    }

    /// Alignment of struct `id` as compiled: its recipe's, or the model's
    /// estimate when its layout cannot be explained.
    pub fn align(&self, table: &TypeTable, id: TypeId) -> u64 {
        if let Some(&a) = self.known.aligns.get(&id) {
            return a;
        }
        if let Some(&a) = self.aligns.borrow().get(&id) {
            return a;
        }
        if !self.active.borrow_mut().insert(id) {
            return 1;
        }
        let a = self
            .recipe(table, id, None)
            .ok()
            .and_then(|r| {
                let c = self.original(table, id)?;
                let members = c.members.as_deref().unwrap_or(&[]);
                let pieces = r.pieces(members, &View::compiled(self, table)).ok()?;
                abi::lay_out(&pieces, c.kind, r.packed, r.struct_align).map(|l| l.align)
            })
            .unwrap_or_else(|| table.alignment_of(id));
        self.active.borrow_mut().remove(&id);
        self.aligns.borrow_mut().insert(id, a);
        a
    }
}

/// Member types' sizes and alignments, as compiled or as planned so far.
pub struct View<'p> {
    compiled: &'p Compiled,
    table: &'p TypeTable,
    /// The planned alignments of re-laid-out structs; `None`: as compiled.
    planned: Option<&'p HashMap<TypeId, u64>>,
}

impl<'p> View<'p> {
    /// The types as compiled.
    pub fn compiled(compiled: &'p Compiled, table: &'p TypeTable) -> Self {
        View {
            compiled,
            table,
            planned: None,
        }
    }

    /// The types as planned: `table` holds the re-laid-out structs, with
    /// their alignments in `aligns`.
    pub fn planned(
        compiled: &'p Compiled,
        table: &'p TypeTable,
        aligns: &'p HashMap<TypeId, u64>,
    ) -> Self {
        View {
            compiled,
            table,
            planned: Some(aligns),
        }
    }

    fn composite(&self, id: TypeId) -> Option<&Composite> {
        match self.planned {
            Some(_) => self.table.composite(id),
            None => self.compiled.original(self.table, id),
        }
    }

    /// `sizeof` a type in this view.
    pub fn type_size(&self, id: TypeId, depth: usize) -> Option<u64> {
        if depth > MAX_TYPE_DEPTH {
            return None;
        }
        match self.table.get(id) {
            Type::Typedef { target, .. } | Type::Qualified { target, .. } => {
                self.type_size(*target, depth + 1)
            }
            Type::Array { element, dims } => {
                let count = crate::model::element_count(dims)?;
                if count == 0 {
                    return Some(0);
                }
                self.type_size(*element, depth + 1)?.checked_mul(count)
            }
            Type::Composite(_) => self.composite(id)?.size,
            _ => self.table.size_of(id),
        }
    }

    fn type_align(&self, id: TypeId, depth: usize) -> u64 {
        if depth > MAX_TYPE_DEPTH {
            return 1;
        }
        match self.table.get(id) {
            Type::Typedef { target, .. } | Type::Qualified { target, .. } => {
                self.type_align(*target, depth + 1)
            }
            Type::Array { element, .. } => self.type_align(*element, depth + 1),
            Type::Base { size, .. } | Type::Pointer { size, .. } | Type::Enum { size, .. } => {
                self.compiled.abi.scalar_align(*size)
            }
            Type::Void | Type::Function { .. } => 1,
            Type::Composite(_) => match self.planned.and_then(|p| p.get(&id)) {
                Some(&a) => a,
                None => self.compiled.align(self.table, id),
            },
        }
    }
}

impl Types for View<'_> {
    fn size(&self, m: &Member) -> Option<u64> {
        self.type_size(m.ty, 0)
    }

    fn align(&self, m: &Member) -> u64 {
        self.type_align(m.ty, 0)
    }

    fn largest_guess(&self) -> u64 {
        self.compiled.abi.cacheline
    }
}

/// No scalar of any machine is aligned beyond this: a larger alignment
/// comes from an attribute.
const BEYOND_SCALARS: u64 = 16;

/// Writes into `table` the alignment attributes its compiled offsets
/// imply, for a format that records none (BTF): on every member placed
/// further than its type's alignment explains, and on every struct whose
/// size its members' alignments do not explain. Structs whose layout the
/// ABI rules cannot give back are left as they are.
/// Only the structs `used` are or hold by value are read: what a command
/// reads (BTF holds every type of the kernel).
pub fn fill_alignments(table: &mut TypeTable, abi: Abi, used: &[TypeId]) {
    let compiled = Compiled::new(abi);
    // (struct, its own attribute, (member index, attribute) of members)
    type Hit = (TypeId, Option<u64>, Vec<(usize, u64)>);
    let mut found: Vec<Hit> = Vec::new();
    let mut reach: Vec<TypeId> = super::embedding::reachable(table, used)
        .into_iter()
        .collect();
    reach.sort();
    for id in reach {
        let Some(c) = table.composite(id) else {
            continue;
        };
        let Some(members) = c.members.as_deref() else {
            continue;
        };
        let Ok(recipe) = compiled.recipe(table, id, None) else {
            continue;
        };
        // As gcc records them: a member placed by an attribute, or whose
        // type is aligned beyond any scalar (only an attribute does that),
        // carries the alignment; so does a struct holding one, or whose
        // size says so.
        let view = View::compiled(&compiled, table);
        let forced: Vec<(usize, u64)> = recipe
            .parts
            .iter()
            .filter_map(|p| {
                let m = &members[p.members[0]];
                if m.alignment.is_some() || m.is_bitfield() {
                    return None;
                }
                let ty = view.align(m);
                let a = if p.attr_align > 1 {
                    p.attr_align.max(ty)
                } else {
                    ty
                };
                (p.attr_align > 1 || a > BEYOND_SCALARS).then_some((p.members[0], a))
            })
            .collect();
        let align = compiled.align(table, id);
        let own = (c.alignment.is_none()
            && (recipe.struct_align > 1 || !forced.is_empty() || align > BEYOND_SCALARS))
            .then_some(align);
        if own.is_some() || !forced.is_empty() {
            found.push((id, own, forced));
        }
    }
    for (id, own, forced) in found {
        if let Type::Composite(c) = table.get_mut(id) {
            if own.is_some() {
                c.alignment = own;
            }
            if let Some(members) = c.members.as_mut() {
                for (i, a) in forced {
                    members[i].alignment = Some(a);
                }
            }
        }
    }
}
