//! The BTF loader: a `.BTF` section or a raw BTF file, on an optional base
//! (split BTF), parsed whole (BTF is small and complete).

use std::collections::HashSet;
use std::path::Path;

use super::{Capabilities, Present};
use crate::btf::BtfTypes;
use crate::dwarf::contains::Contains;
use crate::error::{Error, Result};
use crate::input::MappedFile;
use crate::lookup::{self, Pick, TypeSpec};
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
    /// Parses the BTF of `bytes` (the file at `path`), on the BTF of
    /// `base` when the file's is split BTF.
    pub(super) fn load(path: &Path, bytes: &[u8], base: Option<&Path>) -> Result<BtfBuild> {
        let mut blobs = Vec::new();
        if let Some(base) = base {
            let mapped = MappedFile::open(base)?;
            let (blob, _, _) = crate::input::btf_of(mapped.path(), mapped.bytes())?;
            blobs.push(blob.into_owned());
        }
        // The machine is the file's, not the base's.
        let (own, pointer_size, cacheline) = crate::input::btf_of(path, bytes)?;
        let mut refs: Vec<&[u8]> = blobs.iter().map(Vec::as_slice).collect();
        refs.push(&own);
        let types =
            crate::btf::parse(&refs, pointer_size, cacheline).map_err(|reason| Error::Section {
                path: path.to_owned(),
                section: ".BTF".into(),
                reason,
            })?;
        Ok(BtfBuild { types, cacheline })
    }

    /// The first layout of a name, as `layout NAME` picks it.
    fn first(&self, name: &str) -> Option<lookup::Found> {
        let spec = TypeSpec {
            name: name.to_owned(),
            pick: Pick::First,
        };
        lookup::find_in_btf(&self.types, &[spec], Path::new(""))
            .ok()
            .map(|mut f| f.remove(0))
    }

    pub(super) fn find_present(&self, names: &HashSet<&str>) -> Result<Present> {
        Ok(Present {
            types: names
                .iter()
                .filter_map(|n| Some(((*n).to_owned(), self.first(n)?)))
                .collect(),
            units: Default::default(),
        })
    }

    pub(super) fn discover_roots(
        &self,
        present: &mut Present,
        annotated: &[&str],
    ) -> Result<Vec<String>> {
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
        Ok(roots)
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
