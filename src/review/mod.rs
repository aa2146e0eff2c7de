//! What a layout review reads from a git tree whose HEAD is a patch: the
//! headers the patch changes between a base revision and HEAD, the
//! structs whose definitions it touches, the C files holding their
//! kernel check functions, and the matrix of variants to lay them out on,
//! each twice: at HEAD (the tree as it is) and at the base (the same tree
//! with the patch's headers reverted in a private copy). Nothing in the
//! tree is written.

mod git;
mod touched;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::variant::{self, Variant};

/// The variants a review lays the structs out on by default: the host's
/// arch and the three that 0-day's layout reports came from, each with
/// its defconfig (the kernel's choice for the arch: `multi_v7_defconfig`
/// for 32-bit ARM).
const DEFAULT_MATRIX: &str = "\
[[variant]]\nname = \"x86_64\"\narch = \"x86_64\"\n\
[[variant]]\nname = \"i386\"\narch = \"i386\"\n\
[[variant]]\nname = \"arm\"\narch = \"arm\"\n\
[[variant]]\nname = \"arm64\"\narch = \"arm64\"\n";

/// A review's input, read before any build is opened.
#[derive(Debug)]
pub struct Review {
    /// The tree (canonical).
    pub tree: PathBuf,
    /// The base revision as given, and its commit.
    pub base: (String, String),
    /// HEAD's commit and subject.
    pub head: (String, String),
    /// The headers the patch changes (relative to the tree).
    pub headers: Vec<String>,
    /// The C files and headers the patch changes, each with its text at
    /// the base (`None`: the patch adds it).
    pub code: Vec<(String, Option<String>)>,
    /// Whether their needless stores are compared (`--no-stores` says
    /// not: it reads the whole tree twice).
    pub stores: bool,
    /// The structs whose definitions the patch touches, with their header,
    /// then those asked for by name.
    pub structs: Vec<(String, String)>,
    /// C files of the tree with a kernel check function of a reviewed
    /// struct (`CACHELINE_ASSERT_GROUP_*`), per struct.
    pub checks: Vec<(String, PathBuf)>,
    /// The variants, each at HEAD and at the base.
    pub(crate) variants: Vec<(Variant, Variant)>,
    /// What the review has to tell before it runs.
    pub notes: Vec<String>,
}

impl Review {
    /// Reads the review of `tree`'s HEAD against `base`, with the
    /// variants of `matrix` (a variant file whose `tree` is ignored:
    /// `tree` is the reviewed one) or the default matrix, and the structs
    /// the patch touches plus `extra`.
    pub fn read(
        tree: &Path,
        base: &str,
        matrix: Option<&Path>,
        extra: &[String],
    ) -> Result<Review> {
        let tree = std::fs::canonicalize(tree).map_err(|e| Error::Io {
            path: tree.to_owned(),
            source: e,
        })?;
        let repo = git::Repo::open(&tree)?;
        let base_commit = repo.commit(base)?;
        let head = repo.commit("HEAD")?;
        let subject = repo.subject("HEAD")?;
        let changed = repo.changed(&base_commit, &head)?;
        let headers: Vec<String> = changed
            .iter()
            .filter(|f| f.ends_with(".h"))
            .cloned()
            .collect();
        let code_files: Vec<String> = changed
            .iter()
            .filter(|f| f.ends_with(".h") || f.ends_with(".c"))
            .cloned()
            .collect();
        let dirty = repo.dirty(&code_files)?;
        if let Some(file) = dirty.first() {
            return Err(Error::Usage(format!(
                "{} has uncommitted changes to {file}: a review lays out commits (commit or stash first)",
                tree.display()
            )));
        }
        let code = code_files
            .iter()
            .map(|f| Ok((f.clone(), repo.show(&base_commit, f)?)))
            .collect::<Result<Vec<_>>>()?;
        let mut notes = Vec::new();
        let mut structs: Vec<(String, String)> = Vec::new();
        for header in &headers {
            let before = repo.show(&base_commit, header)?;
            let after = std::fs::read_to_string(tree.join(header)).unwrap_or_default();
            let hunks = repo.hunks(&base_commit, &head, header)?;
            for name in touched::touched(before.as_deref().unwrap_or(""), &after, &hunks) {
                if !structs.iter().any(|(n, _)| *n == name) {
                    structs.push((name, header.clone()));
                }
            }
        }
        for name in extra {
            if !structs.iter().any(|(n, _)| n == name) {
                structs.push((name.clone(), String::new()));
            }
        }
        if structs.is_empty() {
            return Err(Error::Usage(format!(
                "{base}..HEAD touches no struct definition in a header ({}); name structs with --type",
                match headers.is_empty() {
                    true => "it changes no header".to_owned(),
                    false => headers.join(", "),
                }
            )));
        }
        let mut checks = Vec::new();
        for (name, _) in &structs {
            let files = repo.grep_checks(name)?;
            if files.is_empty() {
                notes.push(format!(
                    "struct {name}: no kernel check function (CACHELINE_ASSERT_GROUP_*) in the tree's C files"
                ));
            }
            for file in files {
                checks.push((name.clone(), tree.join(file)));
            }
        }
        let reverse = repo.diff(&head, &base_commit, &headers)?;
        let text = match matrix {
            Some(path) => crate::input::read_limited(path, 1 << 20, "a variant file")
                .map(|b| String::from_utf8_lossy(&b).into_owned())?,
            None => DEFAULT_MATRIX.to_owned(),
        };
        let file = matrix.map_or_else(|| tree.join("cachelint-review.toml"), Path::to_path_buf);
        let mut variants = Vec::new();
        for v in variant::read_in(&file, &text, &tree)? {
            let base_variant = match reverse.is_empty() {
                true => v.clone(),
                false => match v.patched(&reverse) {
                    Some(made) => made?,
                    None => {
                        return Err(Error::Mismatch(format!(
                            "variant '{}' has a patch of its own: a review's variants are the tree at HEAD",
                            v.name()
                        )));
                    }
                },
            };
            variants.push((v, base_variant));
        }
        let kconfig = |f: &String| {
            f.rsplit('/')
                .next()
                .is_some_and(|n| n.starts_with("Kconfig"))
        };
        if changed.iter().any(kconfig) {
            notes.push(
                "the patch changes Kconfig files: both sides are configured as HEAD is".to_owned(),
            );
        }
        Ok(Review {
            tree,
            base: (base.to_owned(), base_commit),
            head: (head, subject),
            headers,
            code,
            stores: true,
            structs,
            checks,
            variants,
            notes,
        })
    }

    /// The labels of variant `v`'s two builds: `NAME.base`, `NAME.head`.
    pub(crate) fn labels(name: &str) -> (String, String) {
        (format!("{name}.base"), format!("{name}.head"))
    }

    /// The variants' names, in order.
    pub fn variant_names(&self) -> Vec<String> {
        self.variants
            .iter()
            .map(|(v, _)| v.name().to_owned())
            .collect()
    }
}
