//! The BTF loader: a `.BTF` section or a raw BTF file, on an optional base
//! (split BTF), parsed whole (BTF is small and complete).

use std::collections::HashSet;
use std::path::Path;

use super::Capabilities;
use super::lookup::{self, Pick, Present, TypeSpec};
use crate::btf::BtfTypes;
use crate::dwarf::contains::Contains;
use crate::error::{Error, Result};
use crate::input::MappedFile;
use crate::model::{Type, TypeId, TypeTable};

/// BTF has no source lines and no alignment attributes.
pub(super) const CAPABILITIES: Capabilities = Capabilities {
    decl_lines: false,
    alignment_attributes: false,
};

/// A build's BTF, parsed.
pub(super) struct BtfBuild {
    pub(super) types: BtfTypes,
    pub(super) cacheline: u64,
}

impl BtfBuild {
    /// Parses `own`, the BTF of the file at `path` with its pointer and
    /// cacheline sizes (from [`crate::input::btf_of`]), on the BTF of
    /// `base` when the file's is split BTF.
    pub(super) fn load(
        path: &Path,
        (own, pointer_size, cacheline): (&[u8], u64, u64),
        base: Option<&Path>,
    ) -> Result<BtfBuild> {
        let base = base.map(MappedFile::open).transpose()?;
        let base_blob = match &base {
            Some(mapped) => Some(crate::input::btf_of(mapped.path(), mapped.bytes())?.0),
            None => None,
        };
        // The machine is the file's, not the base's.
        let refs: Vec<&[u8]> = base_blob.as_deref().into_iter().chain([own]).collect();
        let types =
            crate::btf::parse(&refs, pointer_size, cacheline).map_err(|reason| Error::Section {
                path: path.to_owned(),
                section: ".BTF".into(),
                reason,
            })?;
        Ok(BtfBuild { types, cacheline })
    }

    /// The first layout of a name, as `layout NAME` picks it.
    fn first(&self, name: &str) -> Option<lookup::Located> {
        let spec = TypeSpec {
            name: name.to_owned(),
            pick: Pick::First,
        };
        lookup::find_one_in_btf(&self.types, &spec).ok().flatten()
    }

    /// Every name is looked up on its own; an absent one costs no "did you
    /// mean" (a rules file names types that only some configs have).
    pub(super) fn find_present(&self, names: &HashSet<&str>) -> Present {
        Present {
            types: names
                .iter()
                .filter_map(|n| Some(((*n).to_owned(), self.first(n)?)))
                .collect(),
            units: Default::default(),
        }
    }

    pub(super) fn did_you_mean(&self, names: &[&str]) -> String {
        crate::suggest::did_you_mean_any(names, self.types.names.keys().map(String::as_str))
    }

    pub(super) fn discover_roots(&self, present: &mut Present, annotated: &[&str]) -> Vec<String> {
        let edges = containment(&self.types.table, &self.types.composites);
        let pairs: Vec<(&str, &str)> = edges
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let roots = Contains::from_edges(&pairs).outermost(annotated);
        for root in &roots {
            if !present.types.contains_key(root)
                && let Some(found) = self.first(root)
            {
                present.types.insert(root.clone(), found);
            }
        }
        roots
    }
}

/// Named containment edges `(outer, inner)` of the composites in `table`:
/// members by value, through arrays and anonymous members, as the DWARF
/// containment scan finds them.
fn containment(table: &TypeTable, composites: &[TypeId]) -> Vec<(String, String)> {
    let mut edges = Vec::new();
    for &id in composites {
        let Some(outer) = table.composite(id).and_then(|c| c.name.clone()) else {
            continue;
        };
        let mut todo = vec![(id, 0usize)];
        let mut seen = HashSet::new();
        while let Some((current, depth)) = todo.pop() {
            if depth > 64 || !seen.insert(current) {
                continue;
            }
            let Some(c) = table.composite(current) else {
                continue;
            };
            for m in c.members.as_deref().unwrap_or(&[]) {
                let mut ty = table.strip(m.ty);
                for _ in 0..crate::model::MAX_TYPE_DEPTH {
                    match table.get(ty) {
                        Type::Array { element, .. } => ty = table.strip(*element),
                        _ => break,
                    }
                }
                if let Some(inner) = table.composite(ty) {
                    match &inner.name {
                        Some(name) => edges.push((outer.clone(), name.clone())),
                        None => todo.push((ty, depth + 1)),
                    }
                }
            }
        }
    }
    edges.sort();
    edges.dedup();
    edges
}
