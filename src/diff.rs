//! What changed in a struct between two builds: members added, removed,
//! moved or resized (by path, at any depth), and where a size change comes
//! from, walked down the nesting: a member that grew, a hole that an
//! alignment opened or closed, tail padding added or absorbed. The
//! explanation adds up to the size change exactly, by construction.

use std::num::NonZeroUsize;

use crate::lines::Lines;
use serde::Serialize;

use crate::error::Result;
use crate::layout::{self, Depth};
use crate::model::{Type, TypeId, TypeTable};

/// A type in one build's model.
#[derive(Clone, Copy)]
pub struct Side<'t> {
    /// The model.
    pub table: &'t TypeTable,
    /// The type (members loaded deeply).
    pub id: TypeId,
}

/// Where a member is in one build.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Place {
    /// Offset from the root.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
    /// First cacheline.
    pub line: u64,
    /// Last cacheline.
    pub last_line: u64,
}

/// How a member changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// Only in the new build.
    Added,
    /// Only in the old build.
    Removed,
    /// Same size, other offset.
    Moved,
    /// Same offset, other size.
    Resized,
    /// Both.
    #[serde(rename = "moved+resized")]
    MovedResized,
}

impl Change {
    /// The word used in text output.
    pub fn word(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Removed => "removed",
            Change::Moved => "moved",
            Change::Resized => "resized",
            Change::MovedResized => "moved+resized",
        }
    }
}

/// One member that changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MemberChange {
    /// Dotted path from the root.
    pub path: String,
    /// How.
    pub change: Change,
    /// In the old build.
    pub old: Option<Place>,
    /// In the new build.
    pub new: Option<Place>,
}

/// A kernel cacheline group that changed: `(begin, end)` marker offsets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GroupChange {
    /// Group name.
    pub name: String,
    /// In the old build.
    pub old: Option<(u64, Option<u64>)>,
    /// In the new build.
    pub new: Option<(u64, Option<u64>)>,
}

/// One step of the explanation of a size change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Reason {
    /// Nesting depth (0 = a member of the root).
    pub depth: usize,
    /// Bytes this step adds to its struct (negative: removes).
    pub delta: i64,
    /// What happened.
    pub text: String,
}

/// How deep `diff` lists changed members.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListDepth {
    /// Members at most this many levels down (1: the type's own members);
    /// deeper ones are counted under their ancestor at that depth.
    Levels(NonZeroUsize),
    /// Every member at every depth.
    All,
}

impl std::str::FromStr for ListDepth {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, String> {
        if text == "all" {
            return Ok(ListDepth::All);
        }
        text.parse()
            .map(ListDepth::Levels)
            .map_err(|_| format!("'{text}' is not a depth: write a number from 1, or all"))
    }
}

/// The changes below the listed depth inside one member at that depth,
/// counted by kind.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NestedChanges {
    /// Dotted path of the member at the listed depth.
    pub parent: String,
    /// Members below it only in the new build.
    pub added: usize,
    /// Members below it only in the old build.
    pub removed: usize,
    /// Moved.
    pub moved: usize,
    /// Resized.
    pub resized: usize,
    /// Moved and resized.
    #[serde(rename = "moved+resized")]
    pub moved_resized: usize,
}

impl NestedChanges {
    /// The counts that are not zero, with the words of [`Change::word`],
    /// in the order of [`Change`].
    pub fn counts(&self) -> Vec<(usize, &'static str)> {
        [
            (self.added, Change::Added),
            (self.removed, Change::Removed),
            (self.moved, Change::Moved),
            (self.resized, Change::Resized),
            (self.moved_resized, Change::MovedResized),
        ]
        .into_iter()
        .filter(|&(n, _)| n > 0)
        .map(|(n, c)| (n, c.word()))
        .collect()
    }
}

/// The difference of one type between two builds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TypeDiff {
    /// The type's name.
    pub name: String,
    /// Old and new size.
    pub size: (u64, u64),
    /// Old and new alignment.
    pub alignment: (u64, u64),
    /// Members that changed, in new-layout order (removed ones last).
    pub members: Vec<MemberChange>,
    /// Changes below the listed depth, one entry per member at that depth
    /// holding some, in the order of their first change.
    pub nested: Vec<NestedChanges>,
    /// Kernel cacheline groups added, removed or moved.
    pub groups: Vec<GroupChange>,
    /// Where the size change comes from (empty when the size is the same).
    pub reasons: Vec<Reason>,
}

impl TypeDiff {
    /// True when nothing differs.
    pub fn is_same(&self) -> bool {
        self.size.0 == self.size.1
            && self.alignment.0 == self.alignment.1
            && self.members.is_empty()
            && self.nested.is_empty()
            && self.groups.is_empty()
    }

    /// Keeps the members at most `depth` levels down and counts each
    /// deeper one under its ancestor at that depth.
    pub fn limit_depth(&mut self, depth: ListDepth) {
        let ListDepth::Levels(levels) = depth else {
            return;
        };
        let mut kept = Vec::new();
        for m in std::mem::take(&mut self.members) {
            // A path of more than `levels` names has a `levels`-th dot.
            let Some((cut, _)) = m.path.match_indices('.').nth(levels.get() - 1) else {
                kept.push(m);
                continue;
            };
            let parent = &m.path[..cut];
            let i = match self.nested.iter().position(|n| n.parent == parent) {
                Some(i) => i,
                None => {
                    self.nested.push(NestedChanges {
                        parent: parent.to_owned(),
                        ..NestedChanges::default()
                    });
                    self.nested.len() - 1
                }
            };
            let n = &mut self.nested[i];
            *match m.change {
                Change::Added => &mut n.added,
                Change::Removed => &mut n.removed,
                Change::Moved => &mut n.moved,
                Change::Resized => &mut n.resized,
                Change::MovedResized => &mut n.moved_resized,
            } += 1;
        }
        self.members = kept;
    }
}

/// Compares type `name` between two builds, with lines of `cacheline` bytes.
pub fn diff(name: &str, old: Side<'_>, new: Side<'_>, cacheline: u64) -> Result<TypeDiff> {
    let place = |offset: u64, size: u64| {
        let lines = Lines::of(offset, size, cacheline);
        Place {
            offset,
            size,
            line: lines.first,
            last_line: lines.last,
        }
    };
    // Named members only: an anonymous struct or union has no path of its own.
    let fields = |l: &layout::Layout| -> Vec<(String, Place)> {
        l.fields()
            .filter(|f| f.name.is_some())
            .map(|f| (f.path.clone(), place(f.offset, f.size)))
            .collect()
    };
    let old_layout = layout::layout(old.table, old.id, cacheline, Depth::Expand)?;
    let new_layout = layout::layout(new.table, new.id, cacheline, Depth::Expand)?;
    let (before, after) = (fields(&old_layout), fields(&new_layout));
    let mut groups = Vec::new();
    for g in &new_layout.groups {
        let was = old_layout.groups.iter().find(|o| o.name == g.name);
        if was != Some(g) {
            groups.push(GroupChange {
                name: g.name.clone(),
                old: was.map(|o| (o.begin, o.end)),
                new: Some((g.begin, g.end)),
            });
        }
    }
    for o in &old_layout.groups {
        if !new_layout.groups.iter().any(|g| g.name == o.name) {
            groups.push(GroupChange {
                name: o.name.clone(),
                old: Some((o.begin, o.end)),
                new: None,
            });
        }
    }
    let mut members = Vec::new();
    for (path, p) in &after {
        let change = match before.iter().find(|(q, _)| q == path) {
            None => Some(Change::Added),
            Some((_, o)) => match (o.offset != p.offset, o.size != p.size) {
                (false, false) => None,
                (true, false) => Some(Change::Moved),
                (false, true) => Some(Change::Resized),
                (true, true) => Some(Change::MovedResized),
            },
        };
        if let Some(change) = change {
            members.push(MemberChange {
                path: path.clone(),
                change,
                old: before.iter().find(|(q, _)| q == path).map(|(_, o)| *o),
                new: Some(*p),
            });
        }
    }
    for (path, o) in &before {
        if !after.iter().any(|(q, _)| q == path) {
            members.push(MemberChange {
                path: path.clone(),
                change: Change::Removed,
                old: Some(*o),
                new: None,
            });
        }
    }
    let size = (
        old.table.size_of(old.id).unwrap_or(0),
        new.table.size_of(new.id).unwrap_or(0),
    );
    let mut reasons = Vec::new();
    if size.0 != size.1 {
        explain(old, new, 0, &mut reasons);
    }
    Ok(TypeDiff {
        name: name.to_owned(),
        size,
        alignment: (
            old.table.alignment_of(old.id),
            new.table.alignment_of(new.id),
        ),
        members,
        nested: Vec::new(),
        groups,
        reasons,
    })
}

/// A direct member as the explanation sees it.
struct Slot {
    name: String,
    ty: TypeId,
    offset: u64,
    size: u64,
    /// Bytes between the end of everything before it and its start.
    hole: u64,
    /// Bytes it adds past the end of everything before it.
    adds: u64,
    alignment: u64,
}

/// The direct members of a composite with the bytes each accounts for,
/// and the tail padding: `size = Σ(hole + adds) + tail`.
fn slots(s: Side<'_>) -> (Vec<Slot>, u64) {
    let t = s.table;
    let Some(c) = t.composite(t.strip(s.id)) else {
        return (Vec::new(), 0);
    };
    let mut end = 0;
    let mut anonymous = 0;
    let mut out = Vec::new();
    for m in c.members.as_deref().unwrap_or(&[]) {
        let offset = m.bit_offset / 8;
        let size = match m.bit_size {
            Some(w) => ((m.bit_offset % 8) + w).div_ceil(8),
            None => t.size_of(m.ty).unwrap_or(0),
        };
        let hole = offset.saturating_sub(end);
        let adds = (offset + size).saturating_sub(offset.max(end));
        end = end.max(offset + size);
        let name = match &m.name {
            Some(n) => n.clone(),
            None => {
                anonymous += 1;
                format!("<anonymous {anonymous}>")
            }
        };
        out.push(Slot {
            name,
            ty: m.ty,
            offset,
            size,
            hole,
            adds,
            alignment: m.alignment.unwrap_or_else(|| t.alignment_of(m.ty)),
        });
    }
    let tail = c.size.unwrap_or(0).saturating_sub(end);
    (out, tail)
}

/// The composite name behind a member type, for nested explanations.
fn composite_name(s: Side<'_>, ty: TypeId) -> Option<String> {
    match s.table.get(s.table.strip(ty)) {
        Type::Composite(c) => Some(c.name.clone().map_or_else(
            || format!("{} <anonymous>", c.kind.keyword()),
            |n| format!("{} {n}", c.kind.keyword()),
        )),
        _ => None,
    }
}

fn explain(old: Side<'_>, new: Side<'_>, depth: usize, out: &mut Vec<Reason>) {
    if depth > 16 {
        return;
    }
    let (before, tail_old) = slots(old);
    let (after, tail_new) = slots(new);
    // Each step: its delta, its text, and for a grown struct member the
    // (old, new) types to explain under it.
    type Step = (i64, String, Option<(TypeId, TypeId)>);
    let mut steps: Vec<Step> = Vec::new();
    for n in &after {
        let Some(o) = before.iter().find(|o| o.name == n.name) else {
            steps.push((
                (n.hole + n.adds) as i64,
                format!(
                    "{} added ({} bytes at {}, after a {}-byte hole)",
                    n.name, n.size, n.offset, n.hole
                ),
                None,
            ));
            continue;
        };
        let hole = n.hole as i64 - o.hole as i64;
        if hole != 0 {
            let why = if n.hole > 0 && n.alignment > 1 && n.offset % n.alignment == 0 {
                format!(", {}-byte aligned", n.alignment)
            } else {
                String::new()
            };
            steps.push((
                hole,
                format!(
                    "hole before {}: {} -> {} bytes ({} now at {}{why})",
                    n.name, o.hole, n.hole, n.name, n.offset
                ),
                None,
            ));
        }
        let adds = n.adds as i64 - o.adds as i64;
        if adds != 0 || o.size != n.size {
            let kind = composite_name(new, n.ty).map_or(String::new(), |k| format!(" ({k})"));
            let inner = (o.size != n.size
                && composite_name(old, o.ty).is_some()
                && composite_name(new, n.ty).is_some())
            .then_some((o.ty, n.ty));
            steps.push((
                adds,
                format!("{}{kind}: {} -> {} bytes", n.name, o.size, n.size),
                inner,
            ));
        }
    }
    for o in before
        .iter()
        .filter(|o| !after.iter().any(|n| n.name == o.name))
    {
        steps.push((
            -((o.hole + o.adds) as i64),
            format!("{} removed ({} bytes at {})", o.name, o.size, o.offset),
            None,
        ));
    }
    let alignment = new.table.alignment_of(new.id);
    steps.push((
        tail_new as i64 - tail_old as i64,
        format!(
            "tail padding: {tail_old} -> {tail_new} bytes (size rounded up to the {alignment}-byte alignment)"
        ),
        None,
    ));
    for (delta, text, inner) in steps {
        if delta != 0 || inner.is_some() {
            out.push(Reason { depth, delta, text });
        }
        if let Some((o, n)) = inner {
            explain(
                Side {
                    table: old.table,
                    id: old.table.strip(o),
                },
                Side {
                    table: new.table,
                    id: new.table.strip(n),
                },
                depth + 1,
                out,
            );
        }
    }
}
