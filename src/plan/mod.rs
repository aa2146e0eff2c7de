//! Layout plans: what-if struct layouts, laid out without a rebuild.
//!
//! A plan file says, per struct type, a new member order, member and
//! struct alignments, kernel cacheline groups, and members added or
//! removed ([`parse`] reads it; the format is in docs/plans.md). Applying it
//! ([`planner`]) is a transformation of the type model: the planned structs
//! are re-laid out by the target's C ABI ([`abi`]) from the sizes and
//! alignments the build's own debug info gives, then every struct that
//! embeds one by value, out to the roots. Every command downstream reads
//! the planned model as it reads a compiled one.

pub(crate) mod abi;
mod c_types;
pub(crate) mod embedding;
pub(crate) mod infer;
mod member_list;
mod parse;
pub(crate) mod planner;

pub(crate) use parse::is_identifier;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::Result;
use crate::rules::Location;

/// Largest plan file read: a plan for every struct of a kernel is far
/// smaller.
const MAX_PLAN_BYTES: u64 = 16 << 20;

/// A parsed plan file.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The file it was read from.
    pub path: PathBuf,
    /// One entry per planned struct, in file order.
    pub types: Vec<TypePlan>,
    /// `smp_cache_bytes = N`: what aligned groups align to (the kernel's
    /// `SMP_CACHE_BYTES`); default: the machine's L1 line.
    pub smp_cache_bytes: Option<u64>,
}

/// The plan for one struct type: `[NAME]` in the file.
#[derive(Clone, Debug)]
pub struct TypePlan {
    /// The struct's tag (or typedef) name.
    pub name: String,
    /// Where `[NAME]` is.
    pub at: Location,
    /// How the new member list is said.
    pub shape: Shape,
    /// Members dropped (`remove = [...]`).
    pub remove: Vec<(String, Location)>,
    /// Members some builds lack (`optional = [...]`, an `#ifdef` member):
    /// on a build without one, the entries naming it are skipped; any
    /// other name the build lacks is still an error.
    pub optional: Vec<(String, Location)>,
    /// `packed = true|false`; `None`: as inferred from the build.
    pub packed: Option<bool>,
    /// `align = N`: `__attribute__((__aligned__(N)))` on the struct.
    pub align: Option<u64>,
}

/// A new member list: the whole order, or moves relative to the old one.
#[derive(Clone, Debug)]
pub enum Shape {
    /// `order = [...]`: every member, each exactly once.
    Order(Vec<Item>),
    /// `moves = [...]`: each item placed before or after a member, the
    /// rest kept in their order.
    Moves(Vec<Move>),
}

/// One entry of `order` (or the item of a move).
#[derive(Clone, Debug)]
pub enum Item {
    /// A member of the struct, by name (an anonymous struct or union by
    /// the name of any member inside it, a bitfield run by any of its
    /// bitfields), optionally with `__aligned__(align)`.
    Member {
        /// The name as written.
        name: String,
        /// `align = N`.
        align: Option<u64>,
        /// Where it is written.
        at: Location,
    },
    /// `__cacheline_group_begin(G)` ... `__cacheline_group_end(G)` around
    /// the items; the `_aligned` variants when `aligned` is set.
    Group {
        /// The group name `G`.
        name: String,
        /// `Some(None)`: aligned to the cacheline (`SMP_CACHE_BYTES`);
        /// `Some(Some(n))`: aligned to n; `None`: not aligned.
        aligned: Option<Option<u64>>,
        /// What the group holds.
        items: Vec<Item>,
        /// Where it is written.
        at: Location,
    },
    /// A member the build does not have.
    Add {
        /// Its name.
        name: String,
        /// Its type.
        ty: NewType,
        /// `align = N`.
        align: Option<u64>,
        /// Where it is written.
        at: Location,
    },
}

/// The type of an added member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NewType {
    /// A C type the build's debug info knows (`struct foo *`, `u64`,
    /// `spinlock_t`, `unsigned long[4]`).
    C(String),
    /// Raw bytes: `size = S, align = A`.
    Raw {
        /// Size in bytes.
        size: u64,
        /// Alignment in bytes.
        align: u64,
    },
}

/// One relative move: `{ member = M, after = N }` (or `before`), or an
/// `add` placed the same way.
#[derive(Clone, Debug)]
pub struct Move {
    /// What is placed.
    pub item: Item,
    /// Where: `true` after `anchor`, `false` before it.
    pub after: bool,
    /// The member it is placed next to.
    pub anchor: String,
    /// Where the anchor is written.
    pub anchor_at: Location,
}

impl Item {
    /// Where the item is written.
    pub fn at(&self) -> &Location {
        match self {
            Item::Member { at, .. } | Item::Group { at, .. } | Item::Add { at, .. } => at,
        }
    }
}

impl Plan {
    /// Reads and parses a plan file; every mistake is a located error.
    pub fn read(path: &Path) -> Result<Plan> {
        let bytes = crate::input::read_limited(path, MAX_PLAN_BYTES, "a plan file")?;
        let text = String::from_utf8(bytes).map_err(|_| crate::error::Error::Content {
            path: path.to_owned(),
            line: None,
            message: "not a plan file: not UTF-8 text (a plan is TOML)".into(),
        })?;
        Plan::parse(path, &text)
    }

    /// Parses the text of a plan file read from `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Plan> {
        let file: Arc<Path> = Arc::from(path);
        let (types, smp_cache_bytes) = parse::parse(&file, text)?;
        Ok(Plan {
            path: path.to_owned(),
            types,
            smp_cache_bytes,
        })
    }

    /// The plan for the struct named `name`.
    pub fn for_type(&self, name: &str) -> Option<&TypePlan> {
        self.types.iter().find(|t| t.name == name)
    }
}

/// The struct a plan's name is in: `mm_struct` of `mm_struct.mm_mt` (the
/// anonymous struct of mm_struct holding mm_mt), the name itself for a
/// plain one. Its rules, and the tag the debug info knows, are OUTER's.
pub(crate) fn outer(name: &str) -> &str {
    name.split_once('.').map_or(name, |(outer, _)| outer)
}

/// The members of a plan's name that name anonymous levels inside its
/// [`outer`] struct, in turn (none for a plain name).
pub(crate) fn inner_members(name: &str) -> impl Iterator<Item = &str> {
    name.split('.').skip(1)
}
