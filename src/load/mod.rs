//! One way to open a build file: a path, where its types come from
//! (`--source`, `--btf-base`), and the lookups a run asks of it. Whether
//! the types come from DWARF or BTF is decided here and nowhere else: the
//! run layer ([`crate::run`]) calls [`open`] and reads what it needs from
//! the [`Loaded`] build it is handed; commands never see a loader.
//!
//! To add a loader: a module beside [`dwarf`] and [`btf`] with the same
//! handful of methods, a variant of the private `Backend`, and a
//! [`Source`] value that selects it.

mod btf;
mod dwarf;
mod index_cache;
pub(crate) mod lookup;
pub(crate) mod sizes;

pub use index_cache::IndexCache;
use lookup::{Located, Present, TypeSpec};
use sizes::SizeLine;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

pub use crate::dwarf::decode::SourceRoot;
use crate::error::{Error, Result};
use crate::input::{DebugSections, MappedFile};
use crate::kconfig::{self, KernelConfig};
use crate::member_types::MemberTypes;
use crate::model::{TypeId, TypeTable};
use crate::plan::abi::Abi;

/// Where types come from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Source {
    /// DWARF when the file has it, else BTF.
    #[default]
    Auto,
    /// DWARF only.
    Dwarf,
    /// BTF only: a `.BTF` section or a raw BTF file; `base` is the vmlinux
    /// BTF that split BTF (a module's) builds on.
    Btf {
        /// Base BTF for split BTF.
        base: Option<PathBuf>,
    },
}

/// How build files are read: where their types come from, how names are
/// looked up and how source paths are printed.
#[derive(Clone, Debug, Default)]
pub struct Reading {
    /// DWARF, BTF or whichever the file has.
    pub source: Source,
    /// Whether DWARF lookups keep their name index on disk.
    pub index: IndexCache,
    /// `--source-root`: what the source files printed are relative to.
    pub source_root: SourceRoot,
}

impl From<Source> for Reading {
    fn from(source: Source) -> Self {
        Reading {
            source,
            ..Reading::default()
        }
    }
}

/// A build as named on the command line: `FILE` or `NAME=FILE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Build {
    /// The config label.
    pub config: String,
    /// The ELF (or raw BTF) file.
    pub path: PathBuf,
}

impl Build {
    /// Parses `NAME=FILE` (NAME made of letters, digits, `-`, `_`, `.`, `+`) or `FILE`,
    /// whose label is then the file name ([`Build::file`]). Text before an
    /// `=` that holds a `/` is part of a path (`out/a=b/vmlinux`); any other
    /// character a label may not hold is an error, unless the whole text
    /// names a file.
    pub fn parse(text: &str) -> Result<Build> {
        if let Some((name, file)) = text.split_once('=')
            && !name.is_empty()
            && !file.is_empty()
            && !name.contains('/')
        {
            match name.chars().find(|&c| !is_label_char(c)) {
                None => {
                    return Ok(Build {
                        config: name.to_owned(),
                        path: PathBuf::from(file),
                    });
                }
                Some(c) if !Path::new(text).exists() => {
                    return Err(Error::Usage(format!(
                        "label '{name}' holds {c:?}, a character a label may not hold: \
                         a label is letters, digits, '-', '_', '.' and '+'"
                    )));
                }
                Some(_) => {}
            }
        }
        Ok(Build::file(Path::new(text)))
    }

    /// True when `path` is a file that starts with the ELF magic or a BTF
    /// header: what a bare argument must be to be taken for a build where
    /// builds and member paths mix (`offsets BUILD... PATH...`), so that a
    /// text file named `lruvec` stays a path.
    pub fn is_debug_file(path: &Path) -> bool {
        crate::input::head(path, 4)
            .is_ok_and(|start| start.starts_with(b"\x7fELF") || crate::btf::is_btf(&start))
    }

    /// The build of a command that takes a FILE, never NAME=FILE:
    /// labelled with its file name.
    pub fn file(path: &Path) -> Build {
        Build {
            config: path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            path: path.to_owned(),
        }
    }
}

/// A character a build's label may hold.
fn is_label_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+')
}

/// `notes` of the build labelled `config`, each as `[config] note`, as
/// commands over several builds print them.
pub fn tagged(config: &str, notes: Vec<String>) -> Vec<String> {
    notes
        .into_iter()
        .map(|n| format!("[{config}] {n}"))
        .collect()
}

/// What a build's debug format can tell. DWARF tells everything the
/// commands print; BTF has no source files or lines, and records no
/// alignment attributes (alignment is inferred from the members).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// `decl_file` and `decl_line` of types and members.
    pub decl_lines: bool,
    /// `__attribute__((aligned))` on types and members.
    pub alignment_attributes: bool,
}

impl Capabilities {
    /// The note a build whose format (named `format`) cannot tell
    /// everything carries.
    fn note(self, format: &str) -> Option<String> {
        let mut missing = Vec::new();
        if !self.decl_lines {
            missing.push("no source files or lines".to_owned());
        }
        if !self.alignment_attributes {
            missing.push(format!(
                "alignment attributes inferred from the offsets ({format} records no alignment attributes)"
            ));
        }
        (!missing.is_empty()).then(|| format!("types from {format}: {}", missing.join(", ")))
    }
}

/// A build opened for reading types: the commands' one view of a file,
/// whatever its debug format. (The pointer size is the loaders' own
/// business: the BTF parse needs it for pointers, DWARF records it.)
pub struct Loaded<'f, 'a> {
    /// The build: its label and path.
    pub build: Build,
    /// Cacheline size of the file's machine (64 for raw BTF, which does
    /// not say).
    pub cacheline: u64,
    bytes: &'a [u8],
    backend: Backend<'f, 'a>,
    /// Notes of how the file was made (a variant's build), told first.
    made: Vec<String>,
    /// The config the file was made with, when its maker knows it.
    made_config: Option<KernelConfig>,
}

enum Backend<'f, 'a> {
    Dwarf(Box<dwarf::DwarfTypes<'f, 'a>>),
    Btf(btf::BtfBuild),
}

/// Opens `build` as `reading` says (where its types come from; the plan
/// is not the loader's business) and runs `f` on it. Every error names
/// the file it comes from.
pub(crate) fn open<T>(
    build: &Build,
    reading: &Reading,
    f: impl FnOnce(&mut Loaded<'_, '_>) -> Result<T>,
) -> Result<T> {
    let source = &reading.source;
    let path = build.path.as_path();
    let mapped = MappedFile::open(path)?;
    let bytes = mapped.bytes();
    let base = match source {
        Source::Btf { base } => base.as_deref(),
        Source::Dwarf => {
            let sections = DebugSections::load(path, bytes)?;
            return with_dwarf(build, bytes, &sections, reading, f);
        }
        // The sections are loaded (decompressed, relocated) once: the
        // DWARF reader takes them as they are.
        Source::Auto => match DebugSections::load(path, bytes) {
            Ok(sections) => return with_dwarf(build, bytes, &sections, reading, f),
            Err(no_dwarf @ (Error::NoDebugInfo { .. } | Error::NotElf { .. })) => {
                // Neither DWARF nor BTF: the DWARF error says what to do.
                let Ok((own, pointer, line)) = crate::input::btf_of(path, bytes) else {
                    return Err(no_dwarf);
                };
                return with_btf(build, bytes, (&own, pointer, line), None, f);
            }
            Err(e) => return Err(e),
        },
    };
    let (own, pointer, line) = crate::input::btf_of(path, bytes)?;
    with_btf(build, bytes, (&own, pointer, line), base, f)
}

fn with_btf<T>(
    build: &Build,
    bytes: &[u8],
    own: (&[u8], u64, u64),
    base: Option<&Path>,
    f: impl FnOnce(&mut Loaded<'_, '_>) -> Result<T>,
) -> Result<T> {
    let btf = btf::BtfBuild::load(&build.path, own, base)?;
    let mut loaded = Loaded {
        build: build.clone(),
        cacheline: btf.cacheline,
        bytes,
        backend: Backend::Btf(btf),
        made: Vec::new(),
        made_config: None,
    };
    f(&mut loaded)
}

fn with_dwarf<T>(
    build: &Build,
    bytes: &[u8],
    sections: &DebugSections<'_>,
    reading: &Reading,
    f: impl FnOnce(&mut Loaded<'_, '_>) -> Result<T>,
) -> Result<T> {
    let file = crate::dwarf::DwarfFile::new(sections).map_err(|e| in_file(e, &build.path))?;
    let indexing = dwarf::Indexing {
        cache: reading.index.clone(),
        path: build.path.clone(),
        bytes,
    };
    let types = dwarf::DwarfTypes::new(&file, reading.source_root.clone(), indexing);
    let mut loaded = Loaded {
        build: build.clone(),
        cacheline: sections.cacheline,
        bytes,
        backend: Backend::Dwarf(Box::new(types)),
        made: Vec::new(),
        made_config: None,
    };
    f(&mut loaded).map_err(|e| in_file(e, &build.path))
}

/// The C ABI facts of the file's machine; raw BTF names none and gets the
/// 64-bit default.
pub(crate) fn machine_abi(bytes: &[u8]) -> Abi {
    use object::Object;
    match object::File::parse(bytes) {
        Ok(file) => Abi::new(file.architecture(), if file.is_64() { 8 } else { 4 }),
        Err(_) => Abi::default(),
    }
}

/// DWARF errors name an offset; this adds the file.
fn in_file(e: Error, path: &Path) -> Error {
    match e {
        Error::Dwarf {
            section,
            offset,
            reason,
        } => Error::Dwarf {
            section,
            offset,
            reason: format!("{reason} (in {})", path.display()),
        },
        other => other,
    }
}

impl Loaded<'_, '_> {
    /// What the build's debug format can tell.
    pub fn capabilities(&self) -> Capabilities {
        match &self.backend {
            Backend::Dwarf(_) => dwarf::CAPABILITIES,
            Backend::Btf(_) => btf::CAPABILITIES,
        }
    }

    /// The debug format's name, for notes.
    fn format(&self) -> &'static str {
        match &self.backend {
            Backend::Dwarf(_) => "DWARF",
            Backend::Btf(_) => "BTF",
        }
    }

    /// Things worth telling about the input, untagged: what its format
    /// cannot tell, then what the loader skipped (unknown BTF kinds).
    pub fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = self.made.clone();
        notes.extend(self.capabilities().note(self.format()));
        if let Backend::Btf(b) = &self.backend {
            notes.extend(b.types.notes.iter().cloned());
        }
        notes
    }

    /// Adds notes of how the file was made, told before the loader's.
    pub(crate) fn add_notes(&mut self, notes: Vec<String>) {
        self.made.extend(notes);
    }

    /// What a lookup of `used` (the types a command reads) needs before
    /// the command reads them: from BTF, the alignment attributes its
    /// offsets imply (BTF records none).
    fn after_lookup(&mut self, used: &[TypeId]) {
        if let Backend::Btf(b) = &mut self.backend {
            let abi = machine_abi(self.bytes);
            crate::plan::infer::fill_alignments(&mut b.types.table, abi, used);
        }
    }

    /// The C ABI facts of the build's machine, for re-layouts.
    pub(crate) fn abi(&self) -> Abi {
        machine_abi(self.bytes)
    }

    /// The type model: every type found so far (DWARF decodes lazily, BTF
    /// holds all).
    pub fn table(&self) -> &TypeTable {
        match &self.backend {
            Backend::Dwarf(d) => &d.decoder.table,
            Backend::Btf(b) => &b.types.table,
        }
    }

    /// Hands over the type model, leaving an empty one: for a report that
    /// outlives the build.
    pub fn take_table(&mut self) -> TypeTable {
        let table = match &mut self.backend {
            Backend::Dwarf(d) => &mut d.decoder.table,
            Backend::Btf(b) => &mut b.types.table,
        };
        std::mem::take(table)
    }

    /// Resolves each spec to one struct or union with its members loaded
    /// deeply; an unknown name is an error with the closest names.
    pub fn find(&mut self, specs: &[TypeSpec]) -> Result<Vec<Located>> {
        let path = self.build.path.clone();
        let found = match &mut self.backend {
            Backend::Dwarf(d) => d.find(specs, &path),
            Backend::Btf(b) => lookup::find_in_btf(&b.types, specs, &path),
        }?;
        let used: Vec<TypeId> = found.iter().map(|f| f.id).collect();
        self.after_lookup(&used);
        Ok(found)
    }

    /// The types among `names` that the build defines (first layout each);
    /// absent names are left out. `every_unit`: roots will be discovered
    /// from them, which needs every DWARF unit that defines each.
    pub fn find_present(&mut self, names: &HashSet<&str>, every_unit: bool) -> Result<Present> {
        let present = match &mut self.backend {
            Backend::Dwarf(d) => d.find_present(names, every_unit)?,
            Backend::Btf(b) => b.find_present(names),
        };
        let used: Vec<TypeId> = present.types.values().map(|f| f.id).collect();
        self.after_lookup(&used);
        Ok(present)
    }

    /// The outermost structs that embed (by value) one of `annotated`,
    /// sorted; each is added to `present` when it was not there.
    pub fn discover_roots(
        &mut self,
        present: &mut Present,
        annotated: &[&str],
    ) -> Result<Vec<String>> {
        // Containment is read from the compiled sizes.
        let min_size = annotated
            .iter()
            .filter_map(|n| self.table().size_of(present.types.get(*n)?.id))
            .min()
            .unwrap_or(0);
        let roots = match &mut self.backend {
            Backend::Dwarf(d) => d.discover_roots(present, annotated, min_size),
            Backend::Btf(b) => Ok(b.discover_roots(present, annotated)),
        }?;
        let used: Vec<TypeId> = present.types.values().map(|f| f.id).collect();
        self.after_lookup(&used);
        Ok(roots)
    }

    /// The source files and functions the build has; `None` for BTF,
    /// which names no files and no inlined functions.
    pub(crate) fn built(&self) -> Result<Option<crate::dwarf::functions::Built>> {
        match &self.backend {
            Backend::Dwarf(d) => Ok(Some(crate::dwarf::functions::built(d.file)?)),
            Backend::Btf(_) => Ok(None),
        }
    }

    /// Which struct each member of every named struct and union leads to
    /// (see [`MemberTypes`]).
    pub(crate) fn member_types(&self) -> Result<MemberTypes> {
        Ok(match &self.backend {
            Backend::Dwarf(d) => MemberTypes::from_parts(
                crate::dwarf::member_structs::scan(d.file)?,
                crate::dwarf::member_structs::typedefs(d.file)?,
            ),
            Backend::Btf(b) => {
                let table = &b.types.table;
                MemberTypes::from_parts(
                    b.types.composites.iter().filter_map(|&id| {
                        let name = table.composite(id)?.name.clone()?;
                        Some((name, crate::member_types::member_structs(table, id)))
                    }),
                    crate::member_types::typedefs(table),
                )
            }
        })
    }

    /// `"; did you mean 'a'?"` for a type the build does not define under
    /// any of its `names` (a name and its aliases), or an empty string.
    pub fn did_you_mean(&self, names: &[&str]) -> String {
        match &self.backend {
            Backend::Dwarf(d) => d.did_you_mean(names),
            Backend::Btf(b) => b.did_you_mean(names),
        }
    }

    /// Every named struct and union with its size and holes, as `pahole
    /// --sizes` lists them.
    pub fn sizes(&self) -> Result<Vec<SizeLine>> {
        match &self.backend {
            Backend::Dwarf(d) => sizes::struct_sizes(d.file),
            Backend::Btf(b) => Ok(sizes::btf_sizes(&b.types)),
        }
    }

    /// The kernel config of the build: embedded (`CONFIG_IKCONFIG`) or a
    /// `.config` beside the file.
    pub fn kernel_config(&self) -> Option<KernelConfig> {
        self.made_config
            .clone()
            .or_else(|| kconfig::find(&self.build.path, self.bytes))
    }

    /// The kernel config that can be had without reading the file: its
    /// maker's, or a `.config` beside it.
    pub(crate) fn config_beside(&self) -> Option<KernelConfig> {
        self.made_config
            .clone()
            .or_else(|| kconfig::beside(&self.build.path))
    }

    /// Sets the config the file was made with.
    pub(crate) fn set_config(&mut self, config: KernelConfig) {
        self.made_config = Some(config);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_parse_with_and_without_labels() {
        assert_eq!(
            Build::parse("rt=out/vmlinux").unwrap(),
            Build {
                config: "rt".into(),
                path: "out/vmlinux".into()
            }
        );
        assert_eq!(Build::parse("out/vmlinux").unwrap().config, "vmlinux");
        assert_eq!(Build::parse("out/a=b/vmlinux").unwrap().config, "vmlinux");
        assert!(Build::parse("a b=out/vmlinux").is_err());
        // Debian's labels hold a '+' (their default label is the file name).
        assert_eq!(
            Build::parse("vmlinux-6.12.117+deb12-amd64=k/vmlinux")
                .unwrap()
                .config,
            "vmlinux-6.12.117+deb12-amd64"
        );
    }
}
