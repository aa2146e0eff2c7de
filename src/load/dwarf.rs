//! The DWARF loader: types decoded lazily, only those a command asks for,
//! over the mapped (or decompressed) sections.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::Capabilities;
use super::index_cache::{self, IndexCache};
use super::lookup::{self, Located, Present, TypeSpec};
use crate::dwarf::DwarfFile;
use crate::dwarf::contains::Contains;
use crate::dwarf::decode::{Decoder, SourceRoot};
use crate::dwarf::name_index::NameIndex;
use crate::error::Result;

/// DWARF records everything the commands print.
pub(super) const CAPABILITIES: Capabilities = Capabilities {
    decl_lines: true,
    alignment_attributes: true,
};

/// Where a file's name index may be kept, and the file it indexes.
pub(super) struct Indexing<'a> {
    pub(super) cache: IndexCache,
    pub(super) path: PathBuf,
    pub(super) bytes: &'a [u8],
}

/// A file's DWARF and the types decoded from it so far.
pub(super) struct DwarfTypes<'f, 'a> {
    pub(super) file: &'f DwarfFile<'a>,
    pub(super) decoder: Decoder<'f, 'a>,
    indexing: Indexing<'a>,
    /// The name index, once a lookup has asked for it (`None` inside when
    /// the cache is off or the file too small).
    index: Option<Option<NameIndex>>,
}

impl<'f, 'a> DwarfTypes<'f, 'a> {
    pub(super) fn new(file: &'f DwarfFile<'a>, root: SourceRoot, indexing: Indexing<'a>) -> Self {
        DwarfTypes {
            file,
            decoder: Decoder::with_source_root(file, root),
            indexing,
            index: None,
        }
    }

    /// Resolves `specs`: from the on-disk name index when the cache keeps
    /// one for this file (built on the first lookup), else by a scan for
    /// their names. `NAME#1` alone never needs the index: its scan stops
    /// at the first definition.
    pub(super) fn find(&mut self, specs: &[TypeSpec], path: &Path) -> Result<Vec<Located>> {
        if lookup::first_only(specs) || self.indexing.cache == IndexCache::Off {
            return lookup::find_types(self.file, &mut self.decoder, specs, path);
        }
        self.load_index()?;
        match self.index.as_ref().and_then(Option::as_ref) {
            Some(index) => lookup::find_indexed(&mut self.decoder, index, specs, path),
            None => lookup::find_types(self.file, &mut self.decoder, specs, path),
        }
    }

    /// The cache's name index of the file, read (or built and written) on
    /// first use.
    fn load_index(&mut self) -> Result<()> {
        if self.index.is_none() {
            let i = &self.indexing;
            self.index = Some(index_cache::load_or_build(
                &i.cache, &i.path, i.bytes, self.file,
            )?);
        }
        Ok(())
    }

    /// The types among `names` the file defines. From the cache's name
    /// index when there is one and `every_unit` is false; a scan of every
    /// unit otherwise, which also gives every unit defining each (roots
    /// discovery reads those).
    pub(super) fn find_present(
        &mut self,
        names: &HashSet<&str>,
        every_unit: bool,
    ) -> Result<Present> {
        if !every_unit && self.indexing.cache != IndexCache::Off {
            self.load_index()?;
            if let Some(index) = self.index.as_ref().and_then(Option::as_ref) {
                return lookup::find_present_indexed(&mut self.decoder, index, names);
            }
        }
        lookup::find_present(self.file, &mut self.decoder, names)
    }

    /// Reads only the units that define an annotated type (C needs a full
    /// definition to embed one), skipping structs smaller than
    /// `min_size`, the smallest annotated type as compiled.
    pub(super) fn discover_roots(
        &mut self,
        present: &mut Present,
        annotated: &[&str],
        min_size: u64,
    ) -> Result<Vec<String>> {
        let scan_units: HashSet<usize> = annotated
            .iter()
            .flat_map(|n| present.units.get(*n).into_iter().flatten().copied())
            .collect();
        let contains = Contains::scan(self.file, &scan_units, min_size)?;
        let roots = contains.outermost(annotated);
        for root in &roots {
            if let (false, Some((unit, offset))) =
                (present.types.contains_key(root), contains.definition(root))
            {
                let id = self.decoder.type_at(unit, offset)?;
                self.decoder.load_deep(id)?;
                present
                    .types
                    .insert(root.clone(), Located { id, note: None });
            }
        }
        Ok(roots)
    }

    pub(super) fn did_you_mean(&self, wanted: &[&str]) -> String {
        if let Some(Some(index)) = &self.index {
            return crate::suggest::did_you_mean_any(wanted, index.names());
        }
        let names = crate::dwarf::index::all_names(self.file).unwrap_or_default();
        crate::suggest::did_you_mean_any(wanted, names.iter().copied())
    }
}
