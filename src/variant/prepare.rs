//! A variant's prepared output directory: the tree configured for its
//! arch, config, option edits and compiler by the kernel's own
//! `olddefconfig`, and prepared for external modules (`modules_prepare`),
//! once per such tuple and kept in the cache. What the config step
//! dropped is kept beside it and told on every run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::cache::{self, Key};
use super::tool::{self, Progress};
use super::{Config, Edit, Variant};
use crate::error::{Error, Result};
use crate::kconfig;

/// The file whose presence says a directory is prepared.
const STAMP: &str = ".cachelint-prepared";

/// The notes of the config step, kept beside the stamp.
const NOTES: &str = ".cachelint-notes";

/// Options a note names before it counts the rest.
const NAMED: usize = 12;

/// A prepared output directory.
pub(super) struct Prepared {
    /// The `O=` directory.
    pub dir: PathBuf,
    /// Its key: what the probes built in it depend on.
    pub key: String,
    /// What the config step did not do as asked.
    pub notes: Vec<String>,
}

/// The prepared directory of `v`, made when the cache lacks it.
pub(super) fn prepare(v: &Variant, progress: &Progress) -> Result<Prepared> {
    let cc_version = tool::check(v)?;
    // A config file's text, or the target that writes one.
    let given = match &v.spec.config {
        Config::File(path) => Ok(read(v, path)?),
        Config::Target(target) => Err(target),
    };
    let mut key = Key::default();
    key.add(v.tree.as_os_str().as_encoded_bytes())
        .add(std::fs::read(v.tree.join("Makefile")).unwrap_or_default())
        .add(&v.arch)
        .add(v.spec.compiler.cross.as_deref().unwrap_or(""))
        .add([u8::from(v.spec.compiler.llvm)])
        .add(&cc_version);
    match &given {
        Ok(text) => key.add("file").add(text),
        Err(target) => key.add("target").add(target),
    };
    let base = cache::root()?.join("prepared").join(key.finish());
    for edit in &v.spec.set {
        key.add(edit.to_string());
    }
    let key = key.finish();
    let dir = cache::root()?.join("prepared").join(&key);
    let _lock = cache::lock(&dir)?;
    if dir.join(STAMP).is_file() {
        let notes = std::fs::read_to_string(dir.join(NOTES)).unwrap_or_default();
        return Ok(Prepared {
            dir,
            key,
            notes: notes.lines().map(str::to_owned).collect(),
        });
    }
    let io = |path: &Path, e| Error::Io {
        path: path.to_owned(),
        source: e,
    };
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| io(&dir, e))?;
    }
    // Option edits over a config already prepared: its directory is the
    // start, and kbuild rebuilds only what the edits change (an
    // incremental build, as after editing a .config by hand).
    if base != dir && base.join(STAMP).is_file() {
        let _base_lock = cache::lock(&base)?;
        progress.step("copying the prepared directory of the config without the edits");
        copy_dir(v, &base, &dir)?;
        for own in [STAMP, NOTES] {
            let _ = std::fs::remove_file(dir.join(own));
        }
    }
    std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
    let config = dir.join(".config");
    let staged = match given {
        Ok(text) => text,
        Err(target) => {
            tool::make(
                v,
                &dir,
                std::slice::from_ref(target),
                &format!("make {target}"),
                progress,
            )?;
            read(v, &config)?
        }
    };
    let edited = edit(&staged, &v.spec.set);
    std::fs::write(&config, &edited).map_err(|e| io(&config, e))?;
    tool::make(
        v,
        &dir,
        &["olddefconfig".into()],
        "make olddefconfig",
        progress,
    )?;
    let result = read(v, &config)?;
    let mut notes = edits_held(v, &result)?;
    notes.extend(dropped(v, &staged, &result));
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    tool::make(
        v,
        &dir,
        &[format!("-j{jobs}"), "modules_prepare".into()],
        "make modules_prepare",
        progress,
    )?;
    let text: String = notes.iter().map(|n| format!("{n}\n")).collect();
    std::fs::write(dir.join(NOTES), text).map_err(|e| io(&dir, e))?;
    std::fs::write(dir.join(STAMP), "").map_err(|e| io(&dir, e))?;
    Ok(Prepared { dir, key, notes })
}

/// Copies directory `from` to `to` with its files' times (`cp -a`), so
/// that make sees what is up to date.
fn copy_dir(v: &Variant, from: &Path, to: &Path) -> Result<()> {
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .stdin(std::process::Stdio::null())
        .status()
        .map_err(|e| v.error(format!("cannot run cp: {e}")))?;
    match status.success() {
        true => Ok(()),
        false => Err(v.error(format!("cp -a {} {} failed", from.display(), to.display()))),
    }
}

/// A `.config` of `v`.
fn read(v: &Variant, path: &Path) -> Result<String> {
    let bytes = crate::input::read_limited(path, 16 << 20, "a kernel config")?;
    String::from_utf8(bytes).map_err(|_| v.error(format!("{}: a .config is text", path.display())))
}

/// `config` with `edits` applied: each option's lines replaced by the
/// edit's, at the end.
fn edit(config: &str, edits: &[Edit]) -> String {
    let mut out = String::with_capacity(config.len());
    for line in config.lines() {
        let names = |e: &Edit| {
            let key = e.key();
            line.strip_prefix(&key).is_some_and(|r| r.starts_with('='))
                || line == format!("# {key} is not set")
        };
        if !edits.iter().any(names) {
            out.push_str(line);
            out.push('\n');
        }
    }
    for e in edits {
        match e.value.as_str() {
            "n" => out.push_str(&format!("# {} is not set\n", e.key())),
            value => out.push_str(&format!("{}={value}\n", e.key())),
        }
    }
    out
}

/// The notes of the edits `olddefconfig` did not keep; an option no
/// Kconfig file of the tree declares is an error (a typo, or an option of
/// another kernel).
fn edits_held(v: &Variant, result: &str) -> Result<Vec<String>> {
    let options = kconfig::parse(result);
    let mut notes = Vec::new();
    for e in &v.spec.set {
        let got = options.get(&e.key()).map_or("n", String::as_str);
        if got == e.value {
            continue;
        }
        if !declared(&v.tree, &e.option) {
            return Err(v.error(format!(
                "option {} is declared by no Kconfig file of {} (a typo, or another kernel's option?)",
                e.option,
                v.tree.display()
            )));
        }
        notes.push(format!(
            "{e} did not hold: olddefconfig made it {}={got} (its dependencies are not met, \
             or it has no prompt and nothing selects it)",
            e.option
        ));
    }
    Ok(notes)
}

/// The note of the options set (`y`, `m`) in the config given that the
/// configured tree does not set: options the tree lacks or whose
/// dependencies it does not meet (Debian's rt patches, another version).
fn dropped(v: &Variant, given: &str, result: &str) -> Option<String> {
    let given: BTreeMap<String, String> = kconfig::parse(given);
    let result = kconfig::parse(result);
    let edited: Vec<String> = v.spec.set.iter().map(Edit::key).collect();
    let lost: Vec<&str> = given
        .iter()
        .filter(|(k, value)| {
            matches!(value.as_str(), "y" | "m")
                && !edited.contains(k)
                && result.get(*k) != Some(value)
        })
        .map(|(k, _)| k.strip_prefix("CONFIG_").unwrap_or(k))
        .collect();
    if lost.is_empty() {
        return None;
    }
    let mut named = lost[..lost.len().min(NAMED)].join(", ");
    if lost.len() > NAMED {
        named.push_str(&format!(", and {} more", lost.len() - NAMED));
    }
    let source = match &v.spec.config {
        Config::File(p) => p.display().to_string(),
        Config::Target(t) => t.clone(),
    };
    Some(format!(
        "{} option(s) set in {source} are not set after olddefconfig on {} (the tree lacks them \
         or their dependencies; the layout is this tree's): {named}",
        lost.len(),
        v.tree.display()
    ))
}

/// True when a Kconfig file of `tree` declares `option`.
fn declared(tree: &Path, option: &str) -> bool {
    let wanted = [format!("config {option}"), format!("menuconfig {option}")];
    let name = |p: &Path| {
        p.file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned())
    };
    let enter = |p: &Path| !matches!(&*name(p), ".git" | "Documentation" | "tools");
    let kconfig = |p: &Path| name(p).starts_with("Kconfig");
    crate::csource::files_under(tree, &enter, &kconfig, usize::MAX)
        .iter()
        .any(|path| {
            std::fs::read_to_string(path).is_ok_and(|text| {
                text.lines().any(|l| {
                    let l = l.trim();
                    wanted
                        .iter()
                        .any(|w| l == w || l.starts_with(&format!("{w} ")))
                })
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_replace_the_options_lines() {
        let config = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_AB=m\n";
        let edits = [Edit::parse("A=n").unwrap(), Edit::parse("B=y").unwrap()];
        assert_eq!(
            edit(config, &edits),
            "CONFIG_AB=m\n# CONFIG_A is not set\nCONFIG_B=y\n"
        );
    }
}
