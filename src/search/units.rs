//! The units the search orders: a struct's members (anonymous ones and
//! bitfield runs as one), their contexts from the rules, the author's
//! isolation, and the units `--pin` names.

use crate::layout::{GROUP_BEGIN, GROUP_END, GROUP_PAD};
use crate::model::{TypeId, TypeTable};
use crate::rules::{Class, Rules};

/// The units `--pin` names: a unit by name, or a kernel cacheline group
/// by name (its markers and every unit between them).
pub(crate) fn pinned(
    ty: &str,
    units: &[Unit],
    names: &[String],
) -> std::result::Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for name in names {
        if let Some(u) = units.iter().position(|u| &u.name == name) {
            out.push(u);
            continue;
        }
        let begin = units
            .iter()
            .position(|u| u.name == format!("{GROUP_BEGIN}{name}"));
        let end = units
            .iter()
            .position(|u| u.name == format!("{GROUP_END}{name}"));
        match (begin, end) {
            (Some(b), Some(e)) if b < e => out.extend(b..=e),
            _ => {
                let groups = units
                    .iter()
                    .filter_map(|u| u.name.strip_prefix(GROUP_BEGIN));
                let hint = crate::suggest::did_you_mean(
                    name,
                    units.iter().map(|u| u.name.as_str()).chain(groups),
                );
                return Err(format!(
                    "struct {ty} has no member or kernel group '{name}'{hint}"
                ));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// A unit of the order: one member, an anonymous struct or union (named by
/// its first member), or a run of bitfields (named by the first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unit {
    /// The name a plan calls it by.
    pub(crate) name: String,
    /// The contexts that read it and write it, from its rules (and those of
    /// the members inside it), sorted; empty for a field without them.
    pub(crate) reads: Vec<String>,
    /// See `reads`.
    pub(crate) writes: Vec<String>,
    /// A kernel group marker or pad: dropped by a context order, which
    /// makes no groups of its own.
    pub(crate) marker: bool,
    /// Alignment and size, for packing.
    pub(crate) align: u64,
    /// See `align`.
    pub(crate) size: u64,
    /// For a bitfield run, its bitfields (empty for a whole member): packing
    /// places them by bit, where they can share bytes with their
    /// neighbours.
    pub(crate) bits: Vec<crate::plan::abi::Bitfield>,
    /// True when it is written locklessly (gathered in the group).
    pub(crate) lockless: bool,
    /// True when the rules class it (or a field inside it): the members a
    /// large struct's climb moves.
    pub(crate) classed: bool,
    /// True when some build lacks it (an `#ifdef` member): the plan lists
    /// it in `optional = [...]` ([`members::merge`] sets it).
    pub(crate) optional: bool,
    /// The author's isolation, when the member is one: a barrier no
    /// member crosses, unless `--unpin-aligned`.
    pub(crate) isolation: Option<Isolation>,
}

/// Why a member is the author's isolation, which `suggest` keeps where it
/// is by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isolation {
    /// A `CACHELINE_PADDING()` member: a line boundary put there.
    Padding,
    /// A member declared with an alignment beyond its type's, of a line
    /// or more (bytes): `____cacheline_aligned_in_smp`, or an aligned
    /// group's marker. (A smaller one, as `call_single_data_t`'s, is the
    /// ABI's need, not isolation.)
    Aligned(u64),
}

impl Isolation {
    /// Of member `m` (in `table`, of `line`-byte lines), if it is one. BTF
    /// records no member alignment: there only padding is known.
    fn of(table: &TypeTable, m: &crate::model::Member, line: u64) -> Option<Isolation> {
        let ty = table.strip(m.ty);
        let padding = table.composite(ty).and_then(|c| c.name.as_deref())
            == Some(crate::layout::PADDING_TYPE);
        match padding {
            true => Some(Isolation::Padding),
            false => m
                .alignment
                .filter(|&a| a > table.alignment_of(m.ty) && a >= line)
                .map(Isolation::Aligned),
        }
    }

    /// In words, for the note that lists what stays.
    pub(crate) fn describe(self) -> String {
        match self {
            Isolation::Padding => "CACHELINE_PADDING".into(),
            Isolation::Aligned(a) => format!("aligned({a})"),
        }
    }
}

/// The units of struct `id` in `table`, those the rules say are written
/// locklessly marked.
pub(crate) fn units(
    table: &TypeTable,
    id: TypeId,
    name: &str,
    rules: &Rules,
    line: u64,
) -> Vec<Unit> {
    let mut out: Vec<Unit> = Vec::new();
    let Some(members) = table.composite(id).and_then(|c| c.members.as_ref()) else {
        return out;
    };
    let type_rules = rules.type_rules(name);
    // The rule on member `m`, or on a field inside it.
    let rule_on = |m: &str| {
        type_rules.and_then(|t| {
            t.fields
                .iter()
                .find(|f| f.path == m || f.path.starts_with(&format!("{m}.")))
        })
    };
    let classed = |names: &[String]| names.iter().any(|n| rule_on(n).is_some());
    let mut previous_bitfield = false;
    for m in members {
        let bitfield = m.bit_size.is_some();
        let mut names = Vec::new();
        match &m.name {
            Some(n) => names.push(n.clone()),
            None => inner_names(table, m.ty, 0, &mut names),
        }
        let field = bitfield.then(|| crate::plan::abi::Bitfield {
            width: m.bit_size.unwrap_or(0),
            unit_size: table.size_of(m.ty).unwrap_or(0),
            unit_align: table.alignment_of(m.ty).max(1),
        });
        if bitfield && previous_bitfield {
            // The same run: its contexts join the run's unit.
            if let Some(last) = out.last_mut() {
                add_contexts(last, type_rules, &names);
                last.bits.extend(field);
                last.classed |= classed(&names);
            }
            continue;
        }
        previous_bitfield = bitfield;
        let Some(name) = names.first().cloned() else {
            continue;
        };
        let marker = [GROUP_BEGIN, GROUP_END, GROUP_PAD]
            .iter()
            .any(|p| name.starts_with(p));
        let mut unit = Unit {
            lockless: rule_on(&name).map(|f| f.class) == Some(Class::LocklessWrite),
            classed: classed(&names),
            reads: Vec::new(),
            writes: Vec::new(),
            marker,
            align: table.alignment_of(m.ty).max(1),
            size: table.size_of(m.ty).unwrap_or(0),
            bits: field.into_iter().collect(),
            name,
            optional: false,
            isolation: Isolation::of(table, m, line),
        };
        add_contexts(&mut unit, type_rules, &names);
        out.push(unit);
    }
    out
}

/// The name a plan gives the anonymous struct or union of type `ty`: its
/// first named member, as [`units`] names it.
pub(crate) fn first_inner_name(table: &TypeTable, ty: TypeId) -> Option<String> {
    let mut names = Vec::new();
    inner_names(table, ty, 0, &mut names);
    names.into_iter().next()
}

/// The named members inside an anonymous struct or union, in order.
fn inner_names(table: &TypeTable, ty: TypeId, depth: usize, out: &mut Vec<String>) {
    let Some(members) = table
        .composite(table.strip(ty))
        .and_then(|c| c.members.as_ref())
    else {
        return;
    };
    for m in members {
        match &m.name {
            Some(n) => out.push(n.clone()),
            None if depth < 8 => inner_names(table, m.ty, depth + 1, out),
            None => {}
        }
    }
}

/// Adds the contexts of the rules on `names` (and paths inside them).
fn add_contexts(unit: &mut Unit, rules: Option<&crate::rules::TypeRules>, names: &[String]) {
    let Some(rules) = rules else {
        return;
    };
    for f in &rules.fields {
        let head = f.path.split('.').next().unwrap_or(&f.path);
        if !names.iter().any(|n| n == head) {
            continue;
        }
        if let Some(access) = &f.access {
            unit.reads.extend(access.reads.iter().cloned());
            unit.writes.extend(access.writes.iter().cloned());
        }
    }
    for list in [&mut unit.reads, &mut unit.writes] {
        list.sort();
        list.dedup();
    }
    let writes = unit.writes.clone();
    unit.reads.retain(|r| !writes.contains(r));
}
