//! Variants: builds described instead of given. A variant is a kernel
//! source tree, an `ARCH`, a config (a `.config` file or a defconfig
//! target) with option edits that the kernel's own `olddefconfig`
//! resolves, a compiler and optionally a `-p1` patch. Its types are the
//! compiler's exact layout without a kernel build:
//!
//! 1. [`prepare`]: the tree is configured and prepared for external
//!    modules (`make O=DIR olddefconfig modules_prepare`) once per (tree,
//!    arch, config, compiler), in a directory of the cache;
//! 2. [`headers`]: the headers declaring the types a run asks for (and
//!    those embedding the types whose roots it discovers) are found in the
//!    tree;
//! 3. [`probe`]: one generated object that includes them is compiled with
//!    every declared type kept in its DWARF, and cached by content: the
//!    run reads it as any other build.
//!
//! The user's tree is never written: everything goes to the cache (an
//! `O=` directory, the probe's directory, a private copy of the files a
//! patch changes).

mod cache;
mod file;
mod headers;
mod linked;
mod overlay;
mod prepare;
mod probe;
mod tool;

pub(crate) use linked::linked_copy;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// A variant as its file describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Spec {
    /// Its name: the build's label.
    pub name: String,
    /// The variant file.
    pub file: PathBuf,
    /// The kernel source tree.
    pub tree: PathBuf,
    /// The kernel's `ARCH=`; the host's when unset.
    pub arch: Option<String>,
    /// Where the `.config` comes from.
    pub config: Config,
    /// Option edits, in order, applied before `olddefconfig`.
    pub set: Vec<Edit>,
    /// The compiler.
    pub compiler: Compiler,
    /// A `-p1` patch applied to a private copy of the files it changes.
    pub patch: Option<PathBuf>,
}

/// Where a variant's `.config` comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Config {
    /// A `.config` file, copied.
    File(PathBuf),
    /// A make target that writes one: `defconfig`, `tinyconfig`, ...
    Target(String),
}

/// The compiler a variant is built with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Compiler {
    /// `CROSS_COMPILE=`.
    pub cross: Option<String>,
    /// `LLVM=1`: clang and the LLVM tools.
    pub llvm: bool,
}

/// One option edit, `OPTION=VALUE` (`CONFIG_` optional): `y`, `m`, `n`,
/// a number or a quoted string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Edit {
    /// The option, without `CONFIG_`.
    pub option: String,
    /// The value as a `.config` writes it.
    pub value: String,
}

impl Edit {
    /// Parses `OPTION=VALUE`; the error says what is wrong.
    pub(crate) fn parse(text: &str) -> std::result::Result<Edit, String> {
        let Some((option, value)) = text.split_once('=') else {
            return Err(format!(
                "option edit '{text}' has no '=': write OPTION=VALUE, such as LRU_GEN_STATS=y"
            ));
        };
        let option = option.trim();
        let option = option.strip_prefix("CONFIG_").unwrap_or(option);
        if option.is_empty()
            || !option
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        {
            return Err(format!(
                "'{option}' is not a Kconfig option name (capitals, digits and '_', such as LRU_GEN_STATS)"
            ));
        }
        let value = value.trim();
        let quoted = value.len() >= 2 && value.starts_with('"') && value.ends_with('"');
        let number = !value.is_empty()
            && (value.chars().all(|c| c.is_ascii_digit() || c == '-')
                || value
                    .strip_prefix("0x")
                    .is_some_and(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit())));
        if !(matches!(value, "y" | "m" | "n") || quoted || number) {
            return Err(format!(
                "value '{value}' of {option} is not y, m, n, a number or a \"quoted string\""
            ));
        }
        Ok(Edit {
            option: option.to_owned(),
            value: value.to_owned(),
        })
    }

    /// The option as a `.config` names it.
    pub(crate) fn key(&self) -> String {
        format!("CONFIG_{}", self.option)
    }
}

impl fmt::Display for Edit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.option, self.value)
    }
}

/// A character a label may hold (as [`crate::load::Build::parse`] says).
pub(crate) fn is_label(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'))
}

/// True when `path` names a variant file: a `.toml` file whose text
/// sets a `tree` (a plan or rules file never does).
pub(crate) fn is_variant_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "toml")
        && crate::input::read_limited(path, MAX_FILE, "a variant file")
            .is_ok_and(|b| String::from_utf8_lossy(&b).lines().any(sets_tree))
}

/// A line that gives a variant's tree.
fn sets_tree(line: &str) -> bool {
    line.trim_start()
        .strip_prefix("tree")
        .is_some_and(|rest| rest.trim_start().starts_with('='))
}

/// The variants `text` describes, read from `file`, its paths resolved
/// but not checked (the fuzz driver's entry).
#[cfg(feature = "exercise")]
pub(crate) fn parse_file(file: &Path, text: &str) -> Result<Vec<Spec>> {
    file::parse(file, text)
}

/// The files a patch's text changes (the fuzz driver's entry).
#[cfg(feature = "exercise")]
pub(crate) fn patched_files(text: &str) -> Vec<PathBuf> {
    overlay::changed_files(text)
}

/// Largest variant file read.
const MAX_FILE: u64 = 1 << 20;

/// The variants of the file at `path`, checked: each tree is a clean
/// kernel tree that has the arch.
pub(crate) fn read(path: &Path) -> Result<Vec<Variant>> {
    let bytes = crate::input::read_limited(path, MAX_FILE, "a variant file")?;
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::VariantBuild(format!("{}: a variant file is UTF-8 text", path.display()))
    })?;
    resolve_all(file::parse(path, &text)?)
}

/// Each of `specs` resolved ([`Variant::resolve`]).
fn resolve_all(specs: Vec<Spec>) -> Result<Vec<Variant>> {
    specs.into_iter().map(Variant::resolve).collect()
}

/// The variants of variant file text `text` (read from `file`), every
/// one of them on `tree`.
pub(crate) fn read_in(file: &Path, text: &str, tree: &Path) -> Result<Vec<Variant>> {
    resolve_all(file::parse_in(file, text, Some(tree))?)
}

/// The types a run wants of a variant, decided before it is built.
#[derive(Clone, Debug, Default)]
pub(crate) struct Wanted {
    /// Types read when the variant has them.
    pub names: Vec<String>,
    /// Types that must exist: their header must be found.
    pub required: Vec<String>,
    /// Header files named by `NAME@FILE`, included as they are.
    pub files: Vec<String>,
    /// Types whose outermost embedding structs the run discovers: the
    /// headers embedding them are included too.
    pub discover: Vec<String>,
}

/// A variant ready to be built: its spec with the defaults filled in.
#[derive(Clone, Debug)]
pub(crate) struct Variant {
    /// What its file says.
    pub spec: Spec,
    /// `ARCH=`.
    pub arch: String,
    /// The directory of `arch/` it builds (`x86` for `x86_64`, `i386`).
    pub srcarch: String,
    /// The tree, canonical.
    pub tree: PathBuf,
}

/// A built variant: the object whose DWARF holds its types, and what its
/// build has to tell.
#[derive(Clone, Debug)]
pub(crate) struct Built {
    /// The probe object.
    pub object: PathBuf,
    /// The configured tree's `.config`.
    pub config: PathBuf,
    /// Notes: options the config step dropped, edits that did not hold,
    /// roots discovered among headers only.
    pub notes: Vec<String>,
}

impl Variant {
    /// Fills in the defaults of `spec` and checks its tree.
    fn resolve(spec: Spec) -> Result<Variant> {
        let fail = |why: String| {
            Error::VariantBuild(format!(
                "variant '{}' ({}): {why}",
                spec.name,
                spec.file.display()
            ))
        };
        let tree = std::fs::canonicalize(&spec.tree)
            .map_err(|e| fail(format!("tree {}: {e}", spec.tree.display())))?;
        if !tree.join("Makefile").is_file() || !tree.join("Kconfig").is_file() {
            return Err(fail(format!(
                "{} is not a kernel source tree (it has no Makefile and Kconfig)",
                tree.display()
            )));
        }
        for built in [".config", "include/config/auto.conf"] {
            if tree.join(built).exists() {
                return Err(fail(format!(
                    "{} is configured in place ({built} is there): kbuild builds into another \
                     directory only from a clean tree, and cachelint never writes yours; give \
                     a clean copy (`make mrproper` cleans one)",
                    tree.display()
                )));
            }
        }
        let arch = spec.arch.clone().unwrap_or_else(host_arch);
        let srcarch = srcarch(&arch).to_owned();
        if !tree.join("arch").join(&srcarch).join("Kconfig").is_file() {
            return Err(fail(format!(
                "arch '{arch}' is not in {} (no arch/{srcarch}/Kconfig)",
                tree.display()
            )));
        }
        let mut spec = spec;
        if spec.compiler.cross.is_none() && !spec.compiler.llvm {
            spec.compiler.cross = default_cross(&arch).map(str::to_owned);
        }
        Ok(Variant {
            spec,
            arch,
            srcarch,
            tree,
        })
    }

    /// The variant's label.
    pub(crate) fn name(&self) -> &str {
        &self.spec.name
    }

    /// Builds the variant's probe for `wanted` (or finds it cached): the
    /// object to read and the notes of its build.
    pub(crate) fn build(&self, wanted: &Wanted) -> Result<Built> {
        let progress = tool::Progress::new(self.name());
        let prepared = prepare::prepare(self, &progress)?;
        let overlay = match &self.spec.patch {
            Some(patch) => Some(overlay::Overlay::make(self, patch)?),
            None => None,
        };
        let probe = probe::build(self, &prepared, overlay.as_ref(), wanted, &progress)?;
        let mut notes = prepared.notes;
        notes.extend(probe.notes);
        Ok(Built {
            object: probe.object,
            config: prepared.dir.join(".config"),
            notes,
        })
    }

    /// This variant with `patch` (a `-p1` patch of its tree, as text)
    /// applied, kept in the cache; `None` when it has a patch of its own,
    /// which the text was not made against.
    pub(crate) fn patched(&self, patch: &str) -> Option<Result<Variant>> {
        if self.spec.patch.is_some() {
            return None;
        }
        let made = (|| {
            let mut key = cache::Key::default();
            key.add(patch);
            let path = cache::root()?
                .join("patches")
                .join(format!("{}.patch", key.finish()));
            let io = |e| Error::Io {
                path: path.clone(),
                source: e,
            };
            std::fs::create_dir_all(path.parent().unwrap_or(Path::new("."))).map_err(io)?;
            std::fs::write(&path, patch).map_err(io)?;
            let mut v = self.clone();
            v.spec.patch = Some(path);
            Ok(v)
        })();
        Some(made)
    }

    /// An error of this variant's build.
    pub(crate) fn error(&self, why: impl fmt::Display) -> Error {
        Error::VariantBuild(format!("variant '{}': {why}", self.name()))
    }
}

/// The host's `ARCH=`.
fn host_arch() -> String {
    match std::env::consts::ARCH {
        "x86_64" => "x86_64",
        "x86" => "i386",
        "aarch64" => "arm64",
        "arm" => "arm",
        "riscv64" => "riscv",
        "powerpc64" | "powerpc" => "powerpc",
        "s390x" => "s390",
        "loongarch64" => "loongarch",
        "mips" | "mips64" => "mips",
        other => other,
    }
    .to_owned()
}

/// The `arch/` directory of an `ARCH=` value, as the kernel's Makefile
/// maps it.
fn srcarch(arch: &str) -> &str {
    match arch {
        "i386" | "x86_64" => "x86",
        "sparc32" | "sparc64" => "sparc",
        "parisc64" => "parisc",
        "sh64" => "sh",
        other => other,
    }
}

/// The cross compiler Debian ships for an arch other than the host's
/// (none for the host's, or for i386 on x86_64: the host gcc builds it).
fn default_cross(arch: &str) -> Option<&'static str> {
    let host = host_arch();
    if srcarch(arch) == srcarch(&host) {
        return None;
    }
    match arch {
        "arm" => Some("arm-linux-gnueabihf-"),
        "arm64" => Some("aarch64-linux-gnu-"),
        "i386" | "x86_64" => Some("x86_64-linux-gnu-"),
        "riscv" => Some("riscv64-linux-gnu-"),
        "powerpc" => Some("powerpc64le-linux-gnu-"),
        "s390" => Some("s390x-linux-gnu-"),
        "mips" => Some("mips-linux-gnu-"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_are_checked_and_written_as_a_config_writes_them() {
        let e = Edit::parse("CONFIG_LRU_GEN_STATS=y").unwrap();
        assert_eq!(
            (e.option.as_str(), e.value.as_str()),
            ("LRU_GEN_STATS", "y")
        );
        assert_eq!(e.key(), "CONFIG_LRU_GEN_STATS");
        assert_eq!(Edit::parse("NR_CPUS=64").unwrap().to_string(), "NR_CPUS=64");
        assert!(Edit::parse("CMDLINE=\"quiet\"").is_ok());
        assert!(Edit::parse("LRU_GEN_STATS").unwrap_err().contains("no '='"));
        assert!(
            Edit::parse("lru_gen=y")
                .unwrap_err()
                .contains("not a Kconfig option")
        );
        assert!(
            Edit::parse("LRU_GEN=yes")
                .unwrap_err()
                .contains("is not y, m, n")
        );
    }

    #[test]
    fn arches_map_to_their_directories_and_compilers() {
        assert_eq!(srcarch("i386"), "x86");
        assert_eq!(srcarch("arm64"), "arm64");
        if host_arch() == "x86_64" {
            assert_eq!(default_cross("i386"), None);
            assert_eq!(default_cross("arm"), Some("arm-linux-gnueabihf-"));
        }
    }

    #[test]
    fn a_variant_file_is_told_by_its_tree() {
        assert!(sets_tree("tree = \"/src\""));
        assert!(sets_tree("  tree=\"x\""));
        assert!(!sets_tree("trees = 1"));
        assert!(!sets_tree("[lru_gen_folio]"));
    }
}
