//! A build's drafts assembled: what the model says of a drafted struct
//! (its direct members, the structs that hold it, where its objects
//! start), and the drafts of every build merged into one report. Shared
//! by `draft` (the types named) and `audit` (every struct many CPUs
//! write).

use std::collections::HashMap;

use crate::analysis::draft::{Drafted, MemberFacts};
use crate::analysis::draft_types::{
    DraftField, DraftPlacement, DraftReport, DraftRule, DraftType, Evidence, Mark,
};
use crate::analysis::placement::{self, Embedding, Object, Placed};
use crate::error::Result;
use crate::evidence::source::{Declaration, Said, Site};
use crate::layout::{self, Depth};
use crate::model::{Type, TypeId, TypeTable};

/// Embeddings shown per struct, at most: `sock` is embedded in dozens.
const MAX_EMBEDDINGS_SHOWN: usize = 8;

/// Levels of containers followed for a placement.
const MAX_PLACEMENT_DEPTH: usize = 6;

/// Where a struct's objects start, or its placement in another build:
/// builds that disagree keep the smaller start.
pub(crate) fn add_placement(
    to: &mut Vec<DraftPlacement>,
    table: &TypeTable,
    id: TypeId,
    name: &str,
    line: u64,
    placed: Placed,
) {
    if placed.evidence.is_empty() {
        return;
    }
    let alignment = table.alignment_of(id);
    // A rule is of the struct as a root: for the objects of its own, when
    // there are some (the copies inside its holders are counted from the
    // holders), and only for more than its own alignment gives.
    let start = placed.own.filter(|&s| s > alignment);
    let mut evidence = placed.evidence;
    let sites = evidence
        .iter()
        .filter(|e| !e.starts_with("embedded "))
        .count();
    let embedded = evidence.len() - sites;
    let rest = match placed.alone {
        true => {
            "objects of its own: the rule is theirs; the copies embedded are counted from their holders"
        }
        false => "only embedded: no rule, its holders are the roots check counts from",
    };
    if embedded > MAX_EMBEDDINGS_SHOWN {
        evidence.truncate(sites + MAX_EMBEDDINGS_SHOWN);
        evidence.push(format!(
            "and embedded in {} more places",
            embedded - MAX_EMBEDDINGS_SHOWN
        ));
    }
    if embedded > 0 {
        evidence.push(rest.to_owned());
    }
    match to.iter_mut().find(|p| p.ty == name) {
        Some(p) => {
            p.start = match (p.start, start) {
                (Some(a), Some(b)) => Some(a.min(b)),
                _ => None,
            };
            p.alone |= placed.alone;
            add_evidence_lines(&mut p.evidence, evidence);
        }
        None => to.push(DraftPlacement {
            ty: name.to_owned(),
            start,
            cacheline: line,
            alignment,
            evidence,
            alone: placed.alone,
        }),
    }
}

fn add_evidence_lines(to: &mut Vec<String>, more: Vec<String>) {
    for e in more {
        if !to.contains(&e) {
            to.push(e);
        }
    }
}

/// Works out where structs' objects start, from the source's sites and
/// the structs that embed them, each struct once.
pub(crate) struct Placer<'a> {
    table: &'a TypeTable,
    holders: &'a Holders,
    line: u64,
    declarations: &'a [Declaration],
    memo: HashMap<TypeId, Placed>,
}

impl<'a> Placer<'a> {
    /// A placer of `table`'s structs at `line` bytes a line, from the
    /// sites `declarations` give.
    pub(crate) fn new(
        table: &'a TypeTable,
        holders: &'a Holders,
        line: u64,
        declarations: &'a [Declaration],
    ) -> Placer<'a> {
        Placer {
            table,
            holders,
            line,
            declarations,
            memo: HashMap::new(),
        }
    }

    /// Adds to `to` where objects of struct `id` (named `name`) start,
    /// and where its outermost holders do when their sites say more than
    /// their alignment: `check` counts lines from those roots.
    pub(crate) fn add_placements(&mut self, to: &mut Vec<DraftPlacement>, id: TypeId, name: &str) {
        let (table, line) = (self.table, self.line);
        let placed = self.placed(id, 0);
        add_placement(to, table, id, name, line, placed);
        for (root, root_name) in outermost(table, self.holders, id) {
            let placed = self.placed(root, 0);
            if placed.start.is_some_and(|s| s > table.alignment_of(root)) {
                add_placement(to, table, root, &root_name, line, placed);
            }
        }
    }

    /// Where objects of struct `id` start.
    pub(crate) fn placed(&mut self, id: TypeId, depth: usize) -> Placed {
        let table = self.table;
        let id = table.strip(id);
        if let Some(p) = self.memo.get(&id) {
            return p.clone();
        }
        if depth > MAX_PLACEMENT_DEPTH {
            // Too deep to tell: its alignment.
            return Placed {
                start: None,
                evidence: Vec::new(),
                alone: false,
                own: None,
            };
        }
        let object = Object {
            size: table.size_of(id).unwrap_or(0),
            alignment: table.alignment_of(id),
        };
        let name = tag(table, id);
        let holders = self.holders.of(table, id);
        // A container the build holds is followed below, with its offset.
        let held = |c: &str| {
            holders
                .iter()
                .any(|(o, ..)| tag(table, *o).as_deref() == Some(c))
        };
        let sites: Vec<(Site, String)> = self
            .declarations
            .iter()
            .filter(|d| Some(&d.ty) == name.as_ref())
            .filter_map(|d| match &d.said {
                Said::Placed(site) => Some((
                    unheld(site, held)?,
                    format!("{}:{}", d.file.display(), d.line),
                )),
                _ => None,
            })
            .collect();
        let sites: Vec<(&Site, String)> = sites.iter().map(|(s, at)| (s, at.clone())).collect();
        let mut embeddings = Vec::new();
        for (outer, place, offset, stride) in holders {
            let container = self.placed(*outer, depth + 1);
            embeddings.push(Embedding {
                place: place.clone(),
                offset: *offset,
                stride: *stride,
                container: container
                    .start
                    .unwrap_or_else(|| table.alignment_of(*outer)),
            });
        }
        let placed = placement::placed(object, self.line, &sites, &embeddings);
        self.memo.insert(id, placed.clone());
        placed
    }
}

/// One struct held by value in another: the holder, `holder.member`,
/// its offset, and for an array the element size.
type Holding = (TypeId, String, u64, Option<u64>);

/// Every member of a struct (named or anonymous) of a table that holds a
/// struct by value, by the struct held: one pass over the table, for
/// every drafted struct. A named struct is held by name: DWARF gives
/// each unit its own copy of a type (`file` in fs/file_table.c, where
/// `backing_file` holds it, is not the `file` a lookup finds first).
pub(crate) struct Holders {
    by_name: HashMap<String, Vec<Holding>>,
    by_id: HashMap<TypeId, Vec<Holding>>,
}

impl Holders {
    /// The holders of every struct of `table`.
    pub(crate) fn of_table(table: &TypeTable) -> Holders {
        let mut holders = Holders {
            by_name: HashMap::new(),
            by_id: HashMap::new(),
        };
        for i in 0..table.len() {
            let Some(c) = table.composite(TypeId(i)) else {
                continue;
            };
            let Some(members) = &c.members else { continue };
            for m in members {
                let mut t = table.strip(m.ty);
                let mut stride = None;
                if let Type::Array { element, .. } = table.get(t) {
                    t = table.strip(*element);
                    stride = table.size_of(t);
                }
                let Some(held) = table.composite(t) else {
                    continue;
                };
                let place = format!(
                    "{}.{}",
                    c.name.as_deref().unwrap_or("(anonymous)"),
                    m.name.as_deref().unwrap_or("(anonymous)")
                );
                let list = match &held.name {
                    Some(name) => holders.by_name.entry(name.clone()).or_default(),
                    None => holders.by_id.entry(t).or_default(),
                };
                // A named holder decoded from several units holds it once.
                if c.name.is_none() || !list.iter().any(|(_, p, ..)| *p == place) {
                    list.push((TypeId(i), place, m.byte_offset(), stride));
                }
            }
        }
        holders
    }

    /// The holders of struct `id` (stripped of its typedefs), in the
    /// table's order.
    fn of(&self, table: &TypeTable, id: TypeId) -> &[Holding] {
        let id = table.strip(id);
        let list = match table.composite(id).and_then(|c| c.name.as_ref()) {
            Some(name) => self.by_name.get(name),
            None => self.by_id.get(&id),
        };
        list.map_or(&[], Vec::as_slice)
    }
}

/// The drafts of every build as one rules file: a struct's members in
/// the first build's order (then those only later builds have), with
/// every build's evidence.
pub(crate) fn merge(report: &mut DraftReport, drafted: Vec<(String, Drafted)>) {
    let mut locks: Vec<(String, String, Vec<Evidence>)> = Vec::new();
    for (config, d) in drafted {
        for c in d.contexts {
            if !report.contexts.iter().any(|x| x.name == c.name) {
                report.contexts.push(c);
            }
        }
        for (ty, member, ev) in d.locks {
            match locks.iter_mut().find(|(t, m, _)| *t == ty && *m == member) {
                Some((_, _, e)) => add_evidence(e, ev),
                None => locks.push((ty, member, ev)),
            }
        }
        let ty = match report.types.iter_mut().find(|t| t.name == d.ty.name) {
            Some(t) => t,
            None => {
                report.types.push(DraftType {
                    name: d.ty.name.clone(),
                    fields: Vec::new(),
                });
                report.types.last_mut().expect("just pushed")
            }
        };
        for field in d.ty.fields {
            match ty.fields.iter_mut().find(|f| f.path == field.path) {
                Some(f) => merge_field(f, field, &config),
                None => ty.fields.push(field),
            }
        }
    }
    report.contexts.sort_by(|a, b| a.name.cmp(&b.name));
    for (ty, member, evidence) in locks {
        if report.types.iter().any(|t| t.name == ty) {
            continue;
        }
        report.types.push(DraftType {
            name: ty,
            fields: vec![DraftField {
                path: member,
                rule: Some(DraftRule::Class {
                    class: "lock".into(),
                }),
                mark: Some(Mark::Declared),
                evidence,
                conflicts: Vec::new(),
                heat: None,
                write_heat: None,
            }],
        });
    }
}

fn add_evidence(to: &mut Vec<Evidence>, more: Vec<Evidence>) {
    for e in more {
        if !to.contains(&e) {
            to.push(e);
        }
    }
}

/// Another build's draft of the same member.
fn merge_field(f: &mut DraftField, other: DraftField, config: &str) {
    add_evidence(&mut f.evidence, other.evidence);
    f.heat = f.heat.max(other.heat);
    f.write_heat = f.write_heat.max(other.write_heat);
    for c in other.conflicts {
        if !f.conflicts.contains(&c) {
            f.conflicts.push(c);
        }
    }
    match (&f.rule, other.rule) {
        (None, Some(r)) => {
            f.rule = Some(r);
            f.mark = other.mark;
        }
        (Some(a), Some(b)) if *a != b => f
            .conflicts
            .push(format!("build {config} gives {}", b.toml())),
        _ => {}
    }
}

/// The tag (or typedef name) of struct `id`.
pub(crate) fn tag(table: &TypeTable, id: TypeId) -> Option<String> {
    match table.get(id) {
        Type::Composite(c) => c.name.clone(),
        Type::Typedef { name, .. } => Some(name.clone()),
        _ => None,
    }
}

/// The structs of `table` that hold struct `id` by value, however deep
/// (`lruvec`, then `pglist_data` and `mem_cgroup_per_node`).
pub(crate) fn enclosing(table: &TypeTable, holders: &Holders, id: TypeId) -> Vec<String> {
    holders_up(table, holders, id)
        .into_iter()
        .map(|(_, name)| name)
        .collect()
}

/// The outermost of the structs that hold struct `id` by value, through
/// others or not (those no struct holds): the roots `check` counts its
/// lines from.
fn outermost(table: &TypeTable, holders: &Holders, id: TypeId) -> Vec<(TypeId, String)> {
    let mut out = holders_up(table, holders, id);
    out.retain(|(outer, _)| holders_of(table, holders, *outer).is_empty());
    out
}

/// The structs that hold struct `id` by value, however deep, each with
/// its name, nearest first (one of each name).
fn holders_up(table: &TypeTable, holders: &Holders, id: TypeId) -> Vec<(TypeId, String)> {
    let mut out: Vec<(TypeId, String)> = Vec::new();
    let mut frontier = vec![table.strip(id)];
    for _ in 0..MAX_ENCLOSING_DEPTH {
        let mut next = Vec::new();
        for id in frontier {
            for (outer, name) in holders_of(table, holders, id) {
                if !out.iter().any(|(_, n)| *n == name) {
                    out.push((outer, name));
                    next.push(outer);
                }
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    out
}

/// Levels of embedding followed up from a drafted struct.
const MAX_ENCLOSING_DEPTH: usize = 8;

/// The structs of `table` that hold struct `id` by value themselves (not
/// through another struct), each with its members that do: `(holder,
/// members)`, in the table's order.
pub(crate) fn holders_by_value(
    table: &TypeTable,
    holders: &Holders,
    id: TypeId,
) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for (outer, place, ..) in holders.of(table, id) {
        let (Some(name), Some((_, member))) = (tag(table, *outer), place.split_once('.')) else {
            continue;
        };
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, members)) => members.push(member.to_owned()),
            None => out.push((name, vec![member.to_owned()])),
        }
    }
    out
}

/// The drafts of a struct and of one it holds by value as one rules file,
/// the holder's first: where both name a context, a struct or a member,
/// the holder's draft says it.
pub(crate) fn joined(holder: &DraftReport, held: &DraftReport) -> DraftReport {
    let mut out = holder.clone();
    for c in &held.contexts {
        if !out.contexts.iter().any(|x| x.name == c.name) {
            out.contexts.push(c.clone());
        }
    }
    for t in &held.types {
        match out.types.iter_mut().find(|x| x.name == t.name) {
            Some(mine) => {
                for f in &t.fields {
                    if !mine.fields.iter().any(|x| x.path == f.path) {
                        mine.fields.push(f.clone());
                    }
                }
            }
            None => out.types.push(t.clone()),
        }
    }
    for p in &held.placements {
        if !out.placements.iter().any(|x| x.ty == p.ty) {
            out.placements.push(p.clone());
        }
    }
    for n in &held.notes {
        if !out.notes.contains(n) {
            out.notes.push(n.clone());
        }
    }
    out
}

/// The named structs of `table` with a member (or array of them) of
/// struct `id`, each once.
fn holders_of(table: &TypeTable, holders: &Holders, id: TypeId) -> Vec<(TypeId, String)> {
    let mut out: Vec<(TypeId, String)> = Vec::new();
    for &(outer, ..) in holders.of(table, id) {
        if let Some(name) = tag(table, outer)
            && !out.iter().any(|(o, _)| *o == outer)
        {
            out.push((outer, name));
        }
    }
    out
}

/// The direct members of struct `id` (those of anonymous structs and
/// unions included, as C names them), with the names of their types.
pub(crate) fn members(table: &TypeTable, id: TypeId, line: u64) -> Result<Vec<MemberFacts>> {
    let l = layout::layout(table, id, line, Depth::Direct)?;
    Ok(l.fields()
        // The kernel's group markers (`__cacheline_group_begin__frag`,
        // `__cacheline_group_pad__frag`) are no members to rule.
        .filter(|f| f.name.is_some() && !f.path.contains('.'))
        .filter(|f| !f.path.starts_with("__cacheline_group_"))
        .map(|f| MemberFacts {
            path: f.path.clone(),
            type_names: crate::analysis::validate::type_names(table, f.ty),
            group: l
                .groups
                .iter()
                .find(|g| g.begin <= f.offset && g.end.is_some_and(|e| f.offset < e))
                .map(|g| g.name.clone()),
        })
        .collect())
}

/// `site` without what a container the build holds says (`held`): that
/// container's embedding is followed with its offset instead. `None`
/// when nothing is left.
fn unheld(site: &Site, held: impl Fn(&str) -> bool) -> Option<Site> {
    match site {
        Site::Embedded { container, .. } if held(container) => None,
        Site::Sized {
            size,
            set,
            through,
            site,
        } => {
            let through: Vec<(String, String)> =
                through.iter().filter(|(h, _)| !held(h)).cloned().collect();
            (!set.is_empty() || !through.is_empty()).then(|| Site::Sized {
                size: size.clone(),
                set: set.clone(),
                through,
                site: site.clone(),
            })
        }
        other => Some(other.clone()),
    }
}
