//! One way to open a build: a path, where its types come from (`--source`,
//! `--btf-base`), and what the commands ask of it. Whether the types come
//! from DWARF or BTF is decided here and nowhere else: the commands call
//! [`open`] and use the [`Loaded`] build it hands them.
//!
//! To add a loader: a module beside [`dwarf`] and [`btf`] with the same
//! handful of methods, a variant of the private `Backend`, and a
//! [`Source`] value that selects it.

mod btf;
mod dwarf;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::input::{DebugSections, MappedFile};
use crate::kconfig::{self, KernelConfig};
use crate::lookup::{Found, Present, TypeSpec};
use crate::model::TypeTable;
use crate::sizes::SizeLine;

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
    /// whose label is then the file name ([`Build::file`]).
    pub fn parse(text: &str) -> Build {
        if let Some((name, file)) = text.split_once('=')
            && !name.is_empty()
            && !file.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'))
        {
            return Build {
                config: name.to_owned(),
                path: PathBuf::from(file),
            };
        }
        Build::file(Path::new(text))
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
                "alignment inferred from the members ({format} records no alignment attributes)"
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
}

enum Backend<'f, 'a> {
    Dwarf(dwarf::DwarfTypes<'f, 'a>),
    Btf(btf::BtfBuild),
}

/// Opens `build` as `source` says and runs `f` on it. Every error names
/// the file it comes from.
pub fn open<T>(
    build: &Build,
    source: &Source,
    f: impl FnOnce(&mut Loaded<'_, '_>) -> Result<T>,
) -> Result<T> {
    let path = build.path.as_path();
    let mapped = MappedFile::open(path)?;
    let bytes = mapped.bytes();
    let base = match source {
        Source::Btf { base } => base.as_deref(),
        Source::Dwarf => {
            let sections = DebugSections::load(path, bytes)?;
            return with_dwarf(build, bytes, &sections, f);
        }
        // The sections are loaded (decompressed, relocated) once: the
        // DWARF reader takes them as they are.
        Source::Auto => match DebugSections::load(path, bytes) {
            Ok(sections) => return with_dwarf(build, bytes, &sections, f),
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
    };
    f(&mut loaded)
}

fn with_dwarf<T>(
    build: &Build,
    bytes: &[u8],
    sections: &DebugSections<'_>,
    f: impl FnOnce(&mut Loaded<'_, '_>) -> Result<T>,
) -> Result<T> {
    let file = crate::dwarf::DwarfFile::new(sections).map_err(|e| in_file(e, &build.path))?;
    let mut loaded = Loaded {
        build: build.clone(),
        cacheline: sections.cacheline,
        bytes,
        backend: Backend::Dwarf(dwarf::DwarfTypes::new(&file)),
    };
    f(&mut loaded).map_err(|e| in_file(e, &build.path))
}

/// DWARF errors name an offset; this adds the file.
fn in_file(e: Error, path: &Path) -> Error {
    match e {
        Error::Dwarf { offset, reason } => Error::Dwarf {
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
        let mut notes: Vec<String> = self
            .capabilities()
            .note(self.format())
            .into_iter()
            .collect();
        if let Backend::Btf(b) = &self.backend {
            notes.extend(b.types.notes.iter().cloned());
        }
        notes
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
    pub fn find(&mut self, specs: &[TypeSpec]) -> Result<Vec<Found>> {
        let path = self.build.path.clone();
        match &mut self.backend {
            Backend::Dwarf(d) => d.find(specs, &path),
            Backend::Btf(b) => crate::lookup::find_in_btf(&b.types, specs, &path),
        }
    }

    /// The types among `names` that the build defines (first layout each);
    /// absent names are left out.
    pub fn find_present(&mut self, names: &HashSet<&str>) -> Result<Present> {
        match &mut self.backend {
            Backend::Dwarf(d) => d.find_present(names),
            Backend::Btf(b) => Ok(b.find_present(names)),
        }
    }

    /// The outermost structs that embed (by value) one of `annotated`,
    /// sorted; each is added to `present` when it was not there.
    pub fn discover_roots(
        &mut self,
        present: &mut Present,
        annotated: &[&str],
    ) -> Result<Vec<String>> {
        match &mut self.backend {
            Backend::Dwarf(d) => d.discover_roots(present, annotated),
            Backend::Btf(b) => Ok(b.discover_roots(present, annotated)),
        }
    }

    /// The "unknown type" error for `name`, with the closest names the
    /// build defines.
    pub fn unknown_type(&self, name: &str) -> Error {
        Error::UnknownType {
            name: name.to_owned(),
            path: self.build.path.clone(),
            hint: self.did_you_mean(name),
        }
    }

    /// `"; did you mean 'a'?"` for a type name the build does not define,
    /// or an empty string.
    pub fn did_you_mean(&self, name: &str) -> String {
        match &self.backend {
            Backend::Dwarf(d) => d.did_you_mean(name),
            Backend::Btf(b) => b.did_you_mean(name),
        }
    }

    /// Every named struct and union with its size and holes, as `pahole
    /// --sizes` lists them.
    pub fn sizes(&self) -> Result<Vec<SizeLine>> {
        match &self.backend {
            Backend::Dwarf(d) => crate::sizes::struct_sizes(d.file),
            Backend::Btf(b) => Ok(crate::sizes::btf_sizes(&b.types)),
        }
    }

    /// The kernel config of the build: embedded (`CONFIG_IKCONFIG`) or a
    /// `.config` beside the file.
    pub fn kernel_config(&self) -> Option<KernelConfig> {
        kconfig::find(&self.build.path, self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_parse_with_and_without_labels() {
        assert_eq!(
            Build::parse("rt=out/vmlinux"),
            Build {
                config: "rt".into(),
                path: "out/vmlinux".into()
            }
        );
        assert_eq!(Build::parse("out/vmlinux").config, "vmlinux");
        assert_eq!(Build::parse("out/a=b/vmlinux").config, "vmlinux");
        // Debian's labels hold a '+' (their default label is the file name).
        assert_eq!(
            Build::parse("vmlinux-6.12.117+deb12-amd64=k/vmlinux").config,
            "vmlinux-6.12.117+deb12-amd64"
        );
    }
}
