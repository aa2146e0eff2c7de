//! The variant file (TOML), read with `toml`'s spanned parser so that every
//! mistake is reported at its line and column.
//!
//! ```toml
//! # What every variant below shares; each may override it.
//! tree = "~/src/linux-6.12"          # a clean kernel source tree
//!
//! [[variant]]
//! name   = "amd64"
//! config = "config-6.12-amd64"       # a .config, or a target: "defconfig"
//!
//! [[variant]]
//! name          = "armhf"
//! arch          = "arm"              # the kernel's ARCH=
//! config        = "config-6.12-armmp"
//! cross-compile = "arm-linux-gnueabihf-"
//!
//! # Each variant again with these option edits: amd64+stats, armhf+stats.
//! [matrix]
//! stats = ["LRU_GEN_STATS=y"]
//! ```
//!
//! A file without `[[variant]]` tables is one variant, its top-level keys.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::{Compiler, Config, Edit, Spec};
use crate::error::Result;
use crate::rules::Location;

type Value<'i> = Spanned<DeValue<'i>>;

/// Most variants one file may describe (after its matrix).
const MAX_VARIANTS: usize = 64;

/// The keys of a variant, top-level or in a `[[variant]]` table.
const KEYS: [&str; 8] = [
    "name",
    "tree",
    "arch",
    "config",
    "set",
    "cross-compile",
    "llvm",
    "patch",
];

/// What a table of the file says; unset keys come from the top level.
#[derive(Clone, Default)]
struct Fields {
    name: Option<(String, Location)>,
    tree: Option<(PathBuf, Location)>,
    arch: Option<(String, Location)>,
    config: Option<(String, Location)>,
    set: Vec<(Edit, Location)>,
    cross: Option<String>,
    llvm: Option<bool>,
    patch: Option<PathBuf>,
}

/// Parses the variant file `file`, whose text is `text`: its variants,
/// the matrix applied.
pub(super) fn parse(file: &Path, text: &str) -> Result<Vec<Spec>> {
    parse_in(file, text, None)
}

/// [`parse`], every variant's tree `tree` when one is given (a review's:
/// the file's own `tree`, if any, is ignored).
pub(super) fn parse_in(file: &Path, text: &str, tree: Option<&Path>) -> Result<Vec<Spec>> {
    let shared: Arc<Path> = Arc::from(file);
    let p = Parser {
        file: &shared,
        text,
        dir: file.parent().unwrap_or(Path::new(".")),
        tree,
    };
    let doc = DeTable::parse(text).map_err(|e| {
        let at = Location::at(&shared, text, e.span().map_or(0, |s| s.start));
        at.variant_error(format!("invalid TOML: {}", e.message().trim()))
    })?;
    let mut top = Fields::default();
    let mut tables: Vec<Fields> = Vec::new();
    let mut matrix: Vec<(String, Vec<(Edit, Location)>)> = Vec::new();
    for (key, value) in doc.get_ref() {
        match &**key.get_ref() {
            "variant" => {
                let DeValue::Array(items) = value.get_ref() else {
                    return Err(p.at(key).variant_error(
                        "'variant' is a list of tables: write each as [[variant]]",
                    ));
                };
                for item in items {
                    let DeValue::Table(table) = item.get_ref() else {
                        return Err(p.at(item).variant_error(
                            "each variant is a table: write it as [[variant]] with name = \"...\"",
                        ));
                    };
                    let mut fields = Fields::default();
                    for (k, v) in table {
                        p.field(&mut fields, k, v)?;
                    }
                    tables.push(fields);
                }
            }
            "matrix" => {
                let DeValue::Table(table) = value.get_ref() else {
                    return Err(p.at(key).variant_error(
                        "'matrix' is a table of edit lists: [matrix] then stats = [\"LRU_GEN_STATS=y\"]",
                    ));
                };
                for (k, v) in table {
                    let name: &str = k.get_ref();
                    if !super::is_label(name) {
                        return Err(p.at(k).variant_error(format!(
                            "'{name}' cannot be part of a label: a label is letters, digits, '-', '_', '.' and '+'"
                        )));
                    }
                    matrix.push((name.to_owned(), p.edits(v)?));
                }
            }
            _ => p.field(&mut top, key, value)?,
        }
    }
    let stem = file.file_stem().map_or_else(
        || "variant".to_owned(),
        |s| s.to_string_lossy().into_owned(),
    );
    let bases: Vec<Fields> = match tables.is_empty() {
        // One variant: the top level itself, which `spec` reads under it.
        true => vec![Fields {
            name: top.name.clone(),
            ..Fields::default()
        }],
        false => {
            if let Some((_, at)) = &top.name {
                return Err(at.variant_error(
                    "a top-level 'name' with [[variant]] tables: name each [[variant]] instead",
                ));
            }
            tables
        }
    };
    let several = bases.len() > 1;
    let mut specs: Vec<Spec> = Vec::new();
    for base in &bases {
        let name = match (&base.name, several) {
            (Some((n, _)), _) => n.clone(),
            (None, false) => stem.clone(),
            (None, true) => {
                return Err(Location::at(p.file, text, 0)
                    .variant_error("with several [[variant]] tables each needs a name = \"...\""));
            }
        };
        let spec = p.spec(&top, base, name.clone())?;
        for (suffix, edits) in &matrix {
            let mut more = spec.clone();
            more.name = format!("{name}+{suffix}");
            for (edit, _) in edits {
                more.set.retain(|e| e.option != edit.option);
                more.set.push(edit.clone());
            }
            specs.push(more);
        }
        specs.insert(specs.len() - matrix.len(), spec);
    }
    for (i, spec) in specs.iter().enumerate() {
        if specs[..i].iter().any(|s| s.name == spec.name) {
            return Err(Location::at(p.file, text, 0)
                .variant_error(format!("two variants are named '{}'", spec.name)));
        }
    }
    if specs.len() > MAX_VARIANTS {
        return Err(Location::at(p.file, text, 0).variant_error(format!(
            "{} variants, more than the {MAX_VARIANTS} one file may describe",
            specs.len()
        )));
    }
    Ok(specs)
}

struct Parser<'a> {
    file: &'a Arc<Path>,
    text: &'a str,
    dir: &'a Path,
    tree: Option<&'a Path>,
}

impl Parser<'_> {
    fn at<T>(&self, spanned: &Spanned<T>) -> Location {
        Location::at(self.file, self.text, spanned.span().start)
    }

    /// Reads one key of a variant table into `fields`.
    fn field(
        &self,
        fields: &mut Fields,
        key: &Spanned<toml::de::DeString<'_>>,
        value: &Value<'_>,
    ) -> Result<()> {
        let at = self.at(value);
        let name: &str = key.get_ref();
        match name {
            "name" => {
                let text = self.string(value, "'name'")?;
                if !super::is_label(&text) {
                    return Err(at.variant_error(format!(
                        "name '{text}' holds a character a label may not hold: \
                         a label is letters, digits, '-', '_', '.' and '+'"
                    )));
                }
                fields.name = Some((text, at));
            }
            "tree" => fields.tree = Some((self.path(value, "'tree'")?, at)),
            "arch" => {
                let arch = self.string(value, "'arch'")?;
                if arch.is_empty() || !arch.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(at.variant_error(format!(
                        "arch '{arch}' is not a kernel ARCH= value (x86_64, i386, arm, arm64, ...)"
                    )));
                }
                fields.arch = Some((arch, at));
            }
            "config" => fields.config = Some((self.string(value, "'config'")?, at)),
            "set" => fields.set = self.edits(value)?,
            "cross-compile" => {
                let prefix = self.string(value, "'cross-compile'")?;
                if prefix.contains(char::is_whitespace) {
                    return Err(at.variant_error(format!(
                        "cross-compile '{prefix}' holds a space: it is a prefix such as \"arm-linux-gnueabihf-\""
                    )));
                }
                fields.cross = Some(prefix);
            }
            "llvm" => match value.get_ref() {
                DeValue::Boolean(b) => fields.llvm = Some(*b),
                _ => return Err(at.variant_error("'llvm' is true or false")),
            },
            "patch" => fields.patch = Some(self.path(value, "'patch'")?),
            other => {
                let near = KEYS
                    .iter()
                    .map(|k| (strsim::jaro_winkler(k, other), *k))
                    .filter(|(s, _)| *s > 0.8)
                    .max_by(|a, b| a.0.total_cmp(&b.0))
                    .map(|(_, k)| format!(" (did you mean '{k}'?)"))
                    .unwrap_or_default();
                return Err(self.at(key).variant_error(format!(
                    "unknown key '{other}'{near}: a variant has name, tree, arch, config, set, \
                     cross-compile, llvm and patch"
                )));
            }
        }
        Ok(())
    }

    /// The variant `base` over the top-level `top`, named `name`.
    fn spec(&self, top: &Fields, base: &Fields, name: String) -> Result<Spec> {
        let pick = |b: &Option<(String, Location)>, t: &Option<(String, Location)>| {
            b.clone().or_else(|| t.clone())
        };
        let whole = Location::at(self.file, self.text, 0);
        let given = self.tree.map(|t| (t.to_path_buf(), whole.clone()));
        let (tree, _) = given
            .or_else(|| base.tree.clone())
            .or_else(|| top.tree.clone())
            .ok_or_else(|| {
                whole.variant_error(format!(
                    "variant '{name}' has no tree: give tree = \"DIR\", a kernel source tree"
                ))
            })?;
        let arch = pick(&base.arch, &top.arch).map(|(a, _)| a);
        let config = match pick(&base.config, &top.config) {
            None => Config::Target("defconfig".to_owned()),
            Some((text, at)) => {
                let path = self.resolve(&text);
                if path.is_file() {
                    Config::File(path)
                } else if is_config_target(&text) {
                    Config::Target(text)
                } else {
                    return Err(at.variant_error(format!(
                        "config '{text}' is neither a file ({} is not there) nor a make target \
                         ending in 'config' (defconfig, tinyconfig, ...)",
                        path.display()
                    )));
                }
            }
        };
        let mut set: Vec<Edit> = Vec::new();
        for (edit, _) in top.set.iter().chain(&base.set) {
            // The last edit of an option is the one that holds.
            set.retain(|e| e.option != edit.option);
            set.push(edit.clone());
        }
        Ok(Spec {
            name,
            file: self.file.to_path_buf(),
            tree,
            arch,
            config,
            set,
            compiler: Compiler {
                cross: base.cross.clone().or_else(|| top.cross.clone()),
                llvm: base.llvm.or(top.llvm).unwrap_or(false),
            },
            patch: base.patch.clone().or_else(|| top.patch.clone()),
        })
    }

    fn string(&self, value: &Value<'_>, what: &str) -> Result<String> {
        match value.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            _ => Err(self.at(value).variant_error(format!("{what} is a string"))),
        }
    }

    /// A path of the file, relative to its directory; `~/` is the home
    /// directory.
    fn path(&self, value: &Value<'_>, what: &str) -> Result<PathBuf> {
        let text = self.string(value, what)?;
        if text.is_empty() {
            return Err(self.at(value).variant_error(format!("{what} is empty")));
        }
        Ok(self.resolve(&text))
    }

    fn resolve(&self, text: &str) -> PathBuf {
        if let Some(rest) = text.strip_prefix("~/")
            && let Some(home) = std::env::var_os("HOME")
        {
            return Path::new(&home).join(rest);
        }
        self.dir.join(text)
    }

    /// A list of option edits, `"OPTION=VALUE"`.
    fn edits(&self, value: &Value<'_>) -> Result<Vec<(Edit, Location)>> {
        let DeValue::Array(items) = value.get_ref() else {
            return Err(self
                .at(value)
                .variant_error("option edits are a list: set = [\"LRU_GEN_STATS=y\"]"));
        };
        let mut edits = Vec::new();
        for item in items {
            let at = self.at(item);
            let text = self.string(item, "an option edit")?;
            let edit = Edit::parse(&text).map_err(|why| at.variant_error(why))?;
            edits.push((edit, at));
        }
        Ok(edits)
    }
}

/// A make target that writes a `.config`: `defconfig`, `tinyconfig`,
/// `multi_v7_defconfig`, `i386_defconfig`, ...
fn is_config_target(text: &str) -> bool {
    text.ends_with("config")
        && !text.contains('/')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<Vec<Spec>> {
        parse(Path::new("/v/variants.toml"), text)
    }

    #[test]
    fn one_variant_is_the_top_level_named_after_the_file() {
        let specs = parse_text("tree = \"src\"\nset = [\"LRU_GEN_STATS=y\"]\n").unwrap();
        assert_eq!(specs.len(), 1);
        assert_eq!(specs[0].name, "variants");
        assert_eq!(specs[0].tree, Path::new("/v/src"));
        assert_eq!(specs[0].set.len(), 1);
        assert_eq!(specs[0].config, Config::Target("defconfig".into()));
    }

    #[test]
    fn tables_inherit_the_top_level_and_the_matrix_multiplies_them() {
        let text = "tree = \"/t\"\nset = [\"A=y\"]\n\
                    [[variant]]\nname = \"x\"\n\
                    [[variant]]\nname = \"arm\"\narch = \"arm\"\nset = [\"B=n\"]\n\
                    [matrix]\nstats = [\"C=y\"]\n";
        let specs = parse_text(text).unwrap();
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["x", "x+stats", "arm", "arm+stats"]);
        let edits =
            |i: usize| -> Vec<String> { specs[i].set.iter().map(|e| e.to_string()).collect() };
        assert_eq!(edits(0), ["A=y"]);
        assert_eq!(edits(1), ["A=y", "C=y"]);
        assert_eq!(edits(3), ["A=y", "B=n", "C=y"]);
        assert_eq!(specs[2].arch.as_deref(), Some("arm"));
    }

    #[test]
    fn mistakes_are_located() {
        let err = |text: &str| parse_text(text).unwrap_err().to_string();
        assert_eq!(
            err("tree = \"/t\"\nconfg = \"defconfig\"\n"),
            "/v/variants.toml:2:1: unknown key 'confg' (did you mean 'config'?): a variant has \
             name, tree, arch, config, set, cross-compile, llvm and patch"
        );
        assert!(
            err("tree = \"/t\"\nset = [\"lru gen=y\"]\n").starts_with("/v/variants.toml:2:8: ")
        );
        assert!(err("arch = \"arm\"\n").contains("has no tree"));
        assert!(err("tree = \"/t\"\nconfig = \"nope\"\n").contains("neither a file"));
        assert!(
            err("tree = \"/t\"\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"a\"\n")
                .contains("two variants are named 'a'")
        );
        assert!(
            err("tree = \"/t\"\n[[variant]]\narch = \"arm\"\n[[variant]]\n")
                .contains("needs a name")
        );
    }
}
