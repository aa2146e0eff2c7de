//! The reverse "contains" index: which named structs embed which other
//! named structs *by value* (directly, in arrays, through typedefs and
//! qualifiers, or through anonymous struct/union members), so that the
//! analysis can find the outermost structs that hold an annotated type.
//!
//! C needs a type's full definition to embed it, so every unit that defines
//! a container of `T` also defines `T`: only the units that define one of
//! the target types are read, in parallel, each DIE by its raw attributes
//! ([`super::raw_dies`]).

use std::collections::{HashMap, HashSet};

use gimli::UnitOffset;
use rayon::prelude::*;

use super::DwarfFile;
use super::raw_dies::{UnitScan, Values, Walk, Want, Wants};
use crate::error::Result;
use crate::model::MAX_TYPE_DEPTH;

/// Named containment edges: `container → {contained}`.
#[derive(Debug, Default)]
pub struct Contains<'a> {
    edges: HashMap<&'a str, HashSet<&'a str>>,
    /// First definition (unit, offset) of every container, in file order.
    definitions: HashMap<&'a str, (usize, UnitOffset<usize>)>,
}

impl<'a> Contains<'a> {
    /// Reads the units listed in `units` (indexes into [`DwarfFile::units`]),
    /// looking for containers of types of at least `min_size` bytes: only
    /// structs that large can hold one, so smaller ones are skipped.
    pub fn scan(file: &DwarfFile<'a>, units: &HashSet<usize>, min_size: u64) -> Result<Self> {
        let mut list: Vec<usize> = units.iter().copied().collect();
        list.sort_unstable();
        let per_unit: Vec<Vec<Edge<'a>>> = list
            .into_par_iter()
            .map(|unit| unit_edges(file, unit, min_size))
            .collect::<Result<_>>()?;
        let mut edges: HashMap<&'a str, HashSet<&'a str>> = HashMap::new();
        let mut definitions = HashMap::new();
        for edge in per_unit.into_iter().flatten() {
            edges.entry(edge.outer).or_default().insert(edge.inner);
            definitions.entry(edge.outer).or_insert(edge.at);
        }
        Ok(Contains { edges, definitions })
    }

    /// Builds the index from known edges (for tests and other loaders).
    pub fn from_edges(pairs: &[(&'a str, &'a str)]) -> Self {
        let mut edges: HashMap<&'a str, HashSet<&'a str>> = HashMap::new();
        for (outer, inner) in pairs {
            edges.entry(outer).or_default().insert(inner);
        }
        Contains {
            edges,
            definitions: HashMap::new(),
        }
    }

    /// Where a container is first defined: (unit index, offset in the unit).
    pub fn definition(&self, name: &str) -> Option<(usize, UnitOffset<usize>)> {
        self.definitions.get(name).copied()
    }

    /// The outermost structs that contain any of `names` by value, sorted
    /// and without repeats.
    pub fn outermost(&self, names: &[&str]) -> Vec<String> {
        let mut roots: Vec<String> = names.iter().flat_map(|n| self.roots(n)).collect();
        roots.sort();
        roots.dedup();
        roots
    }

    /// The outermost structs that contain `name` by value, sorted; `name`
    /// itself when nothing contains it.
    pub fn roots(&self, name: &str) -> Vec<String> {
        let mut parents: HashMap<&str, Vec<&str>> = HashMap::new();
        for (outer, inners) in &self.edges {
            for inner in inners {
                parents.entry(inner).or_default().push(outer);
            }
        }
        let mut roots = Vec::new();
        let mut seen = HashSet::from([name]);
        let mut todo = vec![name];
        while let Some(current) = todo.pop() {
            let ups: Vec<&str> = parents
                .get(current)
                .into_iter()
                .flatten()
                .copied()
                .filter(|p| *p != current && !is_core_flavour(p) && !is_type_only(p))
                .collect();
            if ups.is_empty() {
                roots.push(current.to_owned());
            }
            for up in ups {
                if seen.insert(up) {
                    todo.push(up);
                }
            }
        }
        if roots.is_empty() {
            // Only a name collision makes a cycle; fall back to the type itself.
            roots.push(name.to_owned());
        }
        roots.sort();
        roots
    }
}

/// A struct the kernel declares for its type information alone, never an
/// object: `bpf_ctx_convert` (kernel/bpf/btf.c) holds every BPF program
/// context type (`sk_buff`, `sock`, `xdp_buff`...) side by side so that
/// BTF records them, and is never allocated. As a root it would stand for
/// every struct it holds.
fn is_type_only(name: &str) -> bool {
    name == "bpf_ctx_convert"
}

/// A BPF CO-RE flavour of a struct (`nf_conn___init`): `___` and a suffix
/// name a variant BPF programs see, never an instance the kernel lays
/// out, so it is no root.
fn is_core_flavour(name: &str) -> bool {
    name.split_once("___")
        .is_some_and(|(base, flavour)| !base.is_empty() && !flavour.is_empty())
}

/// `outer` contains `inner` by value; `outer` is defined at `at`.
struct Edge<'a> {
    outer: &'a str,
    inner: &'a str,
    at: (usize, UnitOffset<usize>),
}

/// What one DIE of interest says.
#[derive(Clone, Copy)]
enum Node<'a> {
    /// A struct/union definition; `name` is its tag.
    Composite { name: Option<&'a str> },
    /// A typedef, qualifier or array: look through to `target`.
    Through {
        target: Option<UnitOffset<usize>>,
        typedef: Option<&'a str>,
    },
}

fn is_composite(tag: gimli::DwTag) -> bool {
    matches!(
        tag,
        gimli::DW_TAG_structure_type | gimli::DW_TAG_union_type | gimli::DW_TAG_class_type
    )
}

/// What the contains scan reads of each DIE.
fn contains_wants(tag: gimli::DwTag) -> Wants {
    match tag {
        _ if is_composite(tag) => {
            const {
                Wants::of(&[
                    Want::Name,
                    Want::Type,
                    Want::Declaration,
                    Want::ByteSize,
                    Want::Sibling,
                ])
            }
        }
        gimli::DW_TAG_typedef
        | gimli::DW_TAG_const_type
        | gimli::DW_TAG_volatile_type
        | gimli::DW_TAG_restrict_type
        | gimli::DW_TAG_atomic_type => {
            const { Wants::of(&[Want::Name, Want::Type, Want::Sibling]) }
        }
        gimli::DW_TAG_member | gimli::DW_TAG_array_type => {
            const { Wants::of(&[Want::Type, Want::Sibling]) }
        }
        _ => const { Wants::of(&[Want::Sibling]) },
    }
}

fn unit_edges<'a>(file: &DwarfFile<'a>, unit: usize, min_size: u64) -> Result<Vec<Edge<'a>>> {
    let mut scan = UnitScan::open(file, unit, contains_wants)?;
    let Some(mut cursor) = scan.top_level()? else {
        return Ok(Vec::new());
    };
    // In DIE order, so sorted by offset: looked up by binary search.
    let mut nodes: Vec<(UnitOffset<usize>, Node<'a>)> = Vec::new();
    // (composite, member type) for every member of every composite.
    let mut members: Vec<(UnitOffset<usize>, UnitOffset<usize>)> = Vec::new();
    // Composites being read: (depth of their children, offset).
    let mut open: Vec<(usize, UnitOffset<usize>)> = Vec::new();
    let mut walk = Walk::top_level();
    let mut die = Values::default();
    while let Some(entry) = walk.next(&scan, &mut cursor, &mut die)? {
        let (offset, tag, depth) = (entry.offset, entry.tag, walk.depth());
        // Composites whose children have ended are closed.
        while open.last().is_some_and(|(d, _)| *d > depth) {
            open.pop();
        }
        let name = || die.get(Want::Name).and_then(|v| scan.name_str(file, v));
        let target = die.unit_ref(Want::Type);
        // A struct smaller than every target cannot hold one: its members
        // are not read (nor, when it has a sibling pointer, even walked).
        let small = die.unsigned(Want::ByteSize).is_some_and(|s| s < min_size);
        match tag {
            _ if is_composite(tag) && !die.flag(Want::Declaration) => {
                nodes.push((offset, Node::Composite { name: name() }));
                if entry.has_children && !small {
                    open.push((depth + 1, offset));
                }
            }
            gimli::DW_TAG_typedef => {
                nodes.push((
                    offset,
                    Node::Through {
                        target,
                        typedef: name(),
                    },
                ));
            }
            gimli::DW_TAG_const_type
            | gimli::DW_TAG_volatile_type
            | gimli::DW_TAG_restrict_type
            | gimli::DW_TAG_atomic_type
            | gimli::DW_TAG_array_type => {
                nodes.push((
                    offset,
                    Node::Through {
                        target,
                        typedef: None,
                    },
                ));
            }
            gimli::DW_TAG_member => {
                if let (Some((d, parent)), Some(ty)) = (open.last(), target)
                    && *d == depth
                {
                    members.push((*parent, ty));
                }
            }
            _ => {}
        }
        // Subtrees that cannot hold what we need (function bodies, small
        // structs) are jumped over when the compiler recorded a sibling.
        let skip = !is_composite(tag) || small;
        walk.children(&scan, &mut cursor, &entry, &die, skip)?;
    }
    Ok(edges_of(&nodes, &mut members)
        .into_iter()
        .map(|(outer, inner, at)| Edge {
            outer,
            inner,
            at: (unit, at),
        })
        .collect())
}

/// Turns the unit's composites and members into named edges, looking
/// through anonymous composites.
fn edges_of<'a>(
    nodes: &[(UnitOffset<usize>, Node<'a>)],
    members: &mut [(UnitOffset<usize>, UnitOffset<usize>)],
) -> Vec<(&'a str, &'a str, UnitOffset<usize>)> {
    let get = |offset: UnitOffset<usize>| {
        nodes
            .binary_search_by_key(&offset, |(o, _)| *o)
            .ok()
            .map(|i| &nodes[i].1)
    };
    // Typedef names of anonymous composites (`typedef struct {...} atomic_t`).
    let mut typedef_names: Vec<(UnitOffset<usize>, &'a str)> = nodes
        .iter()
        .filter_map(|(_, node)| match node {
            Node::Through {
                target: Some(t),
                typedef: Some(name),
            } if matches!(get(*t), Some(Node::Composite { name: None })) => Some((*t, *name)),
            _ => None,
        })
        .collect();
    typedef_names.sort_by_key(|(t, _)| *t);
    let name_of = |offset: UnitOffset<usize>| match get(offset) {
        Some(Node::Composite { name: Some(n) }) => Some(*n),
        _ => typedef_names
            .binary_search_by_key(&offset, |(t, _)| *t)
            .ok()
            .map(|i| typedef_names[i].1),
    };
    let resolve = |mut offset: UnitOffset<usize>| {
        for _ in 0..MAX_TYPE_DEPTH {
            match get(offset)? {
                Node::Composite { .. } => return Some(offset),
                Node::Through { target, .. } => offset = (*target)?,
            }
        }
        None
    };
    // Member types resolved to composites, grouped by parent.
    for m in members.iter_mut() {
        m.1 = resolve(m.1).unwrap_or(UnitOffset(usize::MAX));
    }
    members.sort_unstable();
    let children = |parent: UnitOffset<usize>| {
        let start = members.partition_point(|(p, _)| *p < parent);
        members[start..]
            .iter()
            .take_while(move |(p, _)| *p == parent)
            .map(|(_, c)| *c)
            .filter(|c| c.0 != usize::MAX)
    };
    let mut edges = Vec::new();
    let mut parents: Vec<UnitOffset<usize>> = members.iter().map(|(p, _)| *p).collect();
    parents.dedup();
    for outer in parents {
        let Some(outer_name) = name_of(outer) else {
            continue;
        };
        let mut todo: Vec<UnitOffset<usize>> = children(outer).collect();
        let mut seen = HashSet::new();
        while let Some(inner) = todo.pop() {
            if !seen.insert(inner) || seen.len() > 4096 {
                continue;
            }
            match name_of(inner) {
                Some(n) => edges.push((outer_name, n, outer)),
                None => todo.extend(children(inner)),
            }
        }
    }
    edges
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_the_outermost_containers() {
        let c = Contains::from_edges(&[
            ("lruvec", "lru_gen_folio"),
            ("lruvec", "list_head"),
            ("mem_cgroup_per_node", "lruvec"),
            ("pglist_data", "lruvec"),
            ("pglist_data", "zone"),
        ]);
        assert_eq!(
            c.roots("lru_gen_folio"),
            ["mem_cgroup_per_node", "pglist_data"]
        );
        assert_eq!(c.roots("zone"), ["pglist_data"]);
        assert_eq!(c.roots("pglist_data"), ["pglist_data"]);
        // A name collision that makes a cycle does not hang.
        // A BPF CO-RE flavour (`struct nf_conn___init { struct nf_conn ct; }`)
        // exists for BPF programs only: no root, and it hides nothing.
        let flavour = Contains::from_edges(&[("nf_conn___init", "nf_conn")]);
        assert_eq!(flavour.roots("nf_conn"), ["nf_conn"]);
        let both = Contains::from_edges(&[("nf_conn___init", "nf_conn"), ("outer", "nf_conn")]);
        assert_eq!(both.roots("nf_conn"), ["outer"]);
        let cyclic = Contains::from_edges(&[("a", "b"), ("b", "a")]);
        assert_eq!(cyclic.roots("a"), ["a"]);
        // bpf_ctx_convert holds every BPF context type for BTF's sake and
        // is never allocated: no root either.
        let bpf = Contains::from_edges(&[
            ("bpf_ctx_convert", "sk_buff"),
            ("bpf_ctx_convert", "sock"),
            ("sk_buff_fclones", "sk_buff"),
        ]);
        assert_eq!(bpf.roots("sk_buff"), ["sk_buff_fclones"]);
        assert_eq!(bpf.roots("sock"), ["sock"]);
    }
}
