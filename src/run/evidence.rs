//! Evidence as the commands read it: `--perf`'s samples placed on a struct
//! of a build, and a source tree's declarations about some structs. The
//! perf files are read once by [`Run::open`]; these place and read them
//! for one command's structs.

use std::path::Path;

use crate::analysis::samples::{self, Placed};
use crate::error::{Error, Result};
use crate::evidence::source::{self, Declaration, IndexAt};
use crate::evidence::{Names, Resolver};
use crate::load::IndexCache;
use crate::model::TypeId;
use crate::path::within;

use super::{Run, View};

impl Run {
    /// `--perf`'s samples on struct `root` of `view` (laid out with
    /// `line`; on a planned view, where the plan puts the members perf
    /// sampled as compiled), and a note (tagged with the view's label) for each row
    /// that names one of its types and does not fit; `None` without
    /// `--perf`.
    pub(crate) fn samples_on(
        &self,
        view: &View<'_>,
        root: TypeId,
        line: u64,
    ) -> Option<(Vec<Placed<'_>>, Vec<String>)> {
        if self.perf.is_empty() {
            return None;
        }
        // perf ran the build as compiled: its samples are placed there and,
        // on a planned view, follow their members to the plan's offsets.
        let compiled = view.opened.compiled();
        let names = Names::of(compiled.table());
        let (placed, misfits) =
            samples::place(compiled.table(), root, line, names.map(), &self.perf);
        let mut notes: Vec<String> = misfits
            .iter()
            .map(|m| format!("[{}] {}", view.config, m.note()))
            .collect();
        if view.planned_by.is_none() {
            return Some((placed, notes));
        }
        let (placed, lost) =
            samples::carried(compiled.table(), view.table(), root, placed, &view.config);
        notes.extend(lost);
        Some((placed, notes))
    }

    /// `--perf`'s samples on member `member` of struct `ty` or inside it,
    /// as perf names them (`struct mm_struct`, `lru_gen.bitmap`); `None`
    /// without `--perf`.
    pub(crate) fn samples_on_member(&self, ty: &str, member: &str) -> Option<f64> {
        if self.perf.is_empty() {
            return None;
        }
        let name = format!("struct {ty}");
        Some(
            self.perf
                .iter()
                .flat_map(|f| &f.samples)
                .filter(|s| s.ty == name || s.ty == ty)
                .filter(|s| s.field.as_deref().is_some_and(|f| within(f, member)))
                .fold(0.0, |sum, s| sum + s.samples),
        )
    }

    /// `--rank samples` needs `--perf`: the usage error without it.
    pub(crate) fn need_samples(&self) -> Result<()> {
        match self.perf.is_empty() {
            true => Err(crate::error::Error::Usage(
                "--rank samples needs samples: give perf's output with --perf FILE".into(),
            )),
            false => Ok(()),
        }
    }

    /// [`Run::samples_on`] of the struct named `root` (its tag or typedef
    /// name), when `view` has it.
    pub(crate) fn samples_on_named(
        &self,
        view: &View<'_>,
        root: &str,
        line: u64,
    ) -> Option<(Vec<Placed<'_>>, Vec<String>)> {
        if self.perf.is_empty() {
            return None;
        }
        let id = *Names::of(view.table()).map().get(root)?;
        self.samples_on(view, id, line)
    }

    /// What the C files and headers of `tree` declare about the members
    /// of `types` (read once for every build: member accesses resolve
    /// through the first build's types), with the code of `arch/ARCH`
    /// only: `arch`, else the first build's machine.
    pub(crate) fn declarations(
        &self,
        tree: &Path,
        types: &[String],
        arch: Option<&str>,
        index: bool,
    ) -> Result<Vec<Declaration>> {
        self.reading_source(arch, |resolver, arch, opened| {
            let index = match index {
                true => Some(self.evidence_index(opened)?),
                false => None,
            };
            source::declarations(tree, types, resolver, arch, index.as_ref())
        })
    }

    /// The needless-store candidates of the whole of `tree` with every
    /// declaration about their members (see
    /// [`source::needless_stores`]), from the tree's evidence index,
    /// read as [`Run::declarations`] reads.
    pub(crate) fn needless_stores(
        &self,
        tree: &Path,
        arch: Option<&str>,
    ) -> Result<Vec<Declaration>> {
        self.needless_stores_through(self.first()?, tree, arch)
    }

    /// [`Run::declarations`] read through build `opened` (a review's
    /// first variant that compiles at HEAD), its machine's `arch/` only,
    /// without the index: the files that name the types are read.
    pub(crate) fn declarations_through(
        &self,
        opened: &super::Opened,
        tree: &Path,
        types: &[String],
    ) -> Result<Vec<Declaration>> {
        self.reading_through(opened, None, |resolver, arch, _| {
            source::declarations(tree, types, resolver, arch, None)
        })
    }

    /// [`Run::needless_stores`] read through build `opened` (a review's
    /// first variant that compiles).
    pub(crate) fn needless_stores_through(
        &self,
        opened: &super::Opened,
        tree: &Path,
        arch: Option<&str>,
    ) -> Result<Vec<Declaration>> {
        self.reading_through(opened, arch, |resolver, arch, opened| {
            source::needless_stores(tree, resolver, arch, &self.evidence_index(opened)?)
        })
    }

    /// `read` given what a source tree is read with: the first build's
    /// types (and its member map) to resolve accesses, the machine whose
    /// `arch/` to read (`arch`, else the first build's), and the build.
    fn reading_source<T>(
        &self,
        arch: Option<&str>,
        read: impl FnOnce(&Resolver<'_>, Option<&str>, &super::Opened) -> Result<T>,
    ) -> Result<T> {
        self.reading_through(self.first()?, arch, read)
    }

    /// [`Run::reading_source`] through build `opened`.
    fn reading_through<T>(
        &self,
        opened: &super::Opened,
        arch: Option<&str>,
        read: impl FnOnce(&Resolver<'_>, Option<&str>, &super::Opened) -> Result<T>,
    ) -> Result<T> {
        let first = self.view(opened)?;
        let resolver = Resolver {
            names: Names::of(first.table()),
            members: opened.member_types.as_ref(),
        };
        read(&resolver, arch.or(opened.abi.arch), opened)
    }

    /// Where `--index` keeps the evidence index of a tree read through
    /// `opened`: see [`index_at`].
    fn evidence_index(&self, opened: &super::Opened) -> Result<IndexAt> {
        index_at(&self.reading, &opened.build.path)
    }
}

/// Where the evidence index of a tree read through the build at `path`
/// is kept: the name index's cache directory; an error when the cache is
/// off.
pub(super) fn index_at(reading: &crate::load::Reading, path: &Path) -> Result<IndexAt> {
    let IndexCache::Dir { dir, .. } = &reading.index else {
        return Err(Error::Usage(
            "the tree's evidence index is kept in the cache directory (draft \
             --index, audit): drop --no-cache, or set CACHELINT_CACHE_DIR"
                .into(),
        ));
    };
    let stamp = crate::input::stamp(path).ok_or_else(|| Error::Io {
        path: path.to_owned(),
        source: std::io::Error::other("cannot be read"),
    })?;
    let full = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    Ok(IndexAt {
        dir: dir.clone(),
        build: format!("{} {stamp}", full.display()),
    })
}
