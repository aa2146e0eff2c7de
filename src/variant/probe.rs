//! The probe: one generated C file that includes the headers declaring
//! the wanted types, compiled in a prepared directory as an external
//! module's object (`make M=DIR cachelint_probe.o`, no modpost) with
//! `-g -fno-eliminate-unused-debug-types`, so that its DWARF holds every
//! type those headers declare, laid out by the variant's compiler and
//! config: no object of each type is needed, and a type the config
//! leaves out is simply absent, as in a vmlinux.
//!
//! Probes are cached by content: a directory per (prepared directory,
//! patch, wanted types), reused while every file the compile read (kbuild's
//! dependency list, kept with sizes and modification times) is unchanged.

use std::path::{Path, PathBuf};

use super::cache::{self, Key};
use super::headers::{self, Include};
use super::overlay::Overlay;
use super::prepare::Prepared;
use super::tool::{self, Progress};
use super::{Variant, Wanted};
use crate::error::{Error, Result};

/// The probe's name, as a module's object.
const NAME: &str = "cachelint_probe";

/// How probes are made, in their key: a change to how cachelint writes
/// them makes new ones.
const PROBE_FORMAT: &str = "cachelint probe 1";

/// The files the compile read, with their sizes and times.
const MANIFEST: &str = ".cachelint-manifest";

/// The notes of the probe's build, kept beside it.
const NOTES: &str = ".cachelint-notes";

/// Most dependencies a manifest holds (a probe of net/tcp.h reads ~1,700).
const MAX_DEPS: usize = 100_000;

/// A compiled probe.
pub(super) struct Probe {
    /// The object.
    pub object: PathBuf,
    /// What the header search has to tell.
    pub notes: Vec<String>,
}

/// The probe of `wanted` in `prepared` (with `overlay`'s patched files),
/// compiled unless the cache holds it.
pub(super) fn build(
    v: &Variant,
    prepared: &Prepared,
    overlay: Option<&Overlay>,
    wanted: &Wanted,
    progress: &Progress,
) -> Result<Probe> {
    let kbuild = kbuild(v, overlay);
    let mut key = Key::default();
    key.add(PROBE_FORMAT)
        .add(&prepared.key)
        .add(overlay.map_or("", |o| o.key.as_str()))
        .add(&kbuild);
    for list in [
        &wanted.names,
        &wanted.required,
        &wanted.files,
        &wanted.discover,
    ] {
        key.add(list.join("\n"));
    }
    let dir = cache::root()?.join("probe").join(key.finish());
    let object = dir.join(format!("{NAME}.o"));
    let _lock = cache::lock(&dir)?;
    if fresh(&dir, &prepared.dir) {
        let notes = std::fs::read_to_string(dir.join(NOTES)).unwrap_or_default();
        return Ok(Probe {
            object,
            notes: notes.lines().map(str::to_owned).collect(),
        });
    }
    progress.step("finding the headers that declare the types");
    let mut names: Vec<String> = wanted.names.clone();
    names.extend(wanted.required.iter().cloned());
    names.sort();
    names.dedup();
    let found = headers::find(v, &names, &wanted.discover);
    if let Some(missing) = wanted.required.iter().find(|r| found.missing.contains(r)) {
        return Err(v.error(format!(
            "no header of {} defines struct, union or typedef '{missing}' (searched \
             include/, arch/{}/include/ and the rest of the tree's headers)",
            v.tree.display(),
            v.srcarch
        )));
    }
    let mut includes = found.includes.clone();
    for file in &wanted.files {
        let Some(path) = headers::by_suffix(v, file) else {
            return Err(v.error(format!("{} has no header {file}", v.tree.display())));
        };
        includes.push(Include::Private(path));
    }
    let mut notes: Vec<String> = found
        .ambiguous
        .iter()
        .map(|(name, files)| {
            let listed: Vec<String> = files
                .iter()
                .map(|f| f.strip_prefix(&v.tree).unwrap_or(f).display().to_string())
                .collect();
            format!(
                "'{name}' is defined in several headers of the tree ({}): the probe includes the first \
                 (name the one meant as {name}@FILE)",
                listed.join(", ")
            )
        })
        .collect();
    if !wanted.discover.is_empty() {
        notes.push(format!(
            "roots discovered among the {} header(s) the probe includes (those declaring the \
             types and those embedding them); a struct defined in a .c file is not seen",
            includes.len()
        ));
    }
    let io = |path: &Path, e| Error::Io {
        path: path.to_owned(),
        source: e,
    };
    cache::fresh_dir(&dir)?;
    let source = dir.join(format!("{NAME}.c"));
    std::fs::write(&source, text(v, &includes, overlay)).map_err(|e| io(&source, e))?;
    std::fs::write(dir.join("Kbuild"), &kbuild).map_err(|e| io(&dir, e))?;
    tool::make(
        v,
        &prepared.dir,
        &[format!("M={}", dir.display()), format!("{NAME}.o")],
        &format!("compiling the probe {}", source.display()),
        progress,
    )?;
    let deps = dependencies(&dir, &prepared.dir);
    std::fs::write(dir.join(MANIFEST), manifest(&deps)).map_err(|e| io(&dir, e))?;
    let text: String = notes.iter().map(|n| format!("{n}\n")).collect();
    std::fs::write(dir.join(NOTES), text).map_err(|e| io(&dir, e))?;
    Ok(Probe { object, notes })
}

/// The probe's C text.
fn text(v: &Variant, includes: &[Include], overlay: Option<&Overlay>) -> String {
    let mut text = String::from(
        "// Generated by cachelint: the headers declaring the types a run wants.\n\
         // Compiled with -fno-eliminate-unused-debug-types, its DWARF holds them all.\n",
    );
    for include in includes {
        match include {
            Include::Public(name) => text.push_str(&format!("#include <{name}>\n")),
            Include::Private(path) => {
                for line in headers::context_of(path) {
                    text.push_str(&line);
                    text.push('\n');
                }
                let path = overlay
                    .and_then(|o| o.copy_of(v, path))
                    .unwrap_or_else(|| path.clone());
                text.push_str(&format!("#include \"{}\"\n", path.display()));
            }
        }
    }
    text
}

/// The probe's Kbuild file: the object, debug info with every type, and
/// the patched copy's include directories before the tree's.
fn kbuild(v: &Variant, overlay: Option<&Overlay>) -> String {
    let mut text =
        format!("obj-m := {NAME}.o\nccflags-y := -g -fno-eliminate-unused-debug-types\n");
    // CONFIG_DEBUG_INFO_REDUCED (arm64's defconfig) keeps only the structs
    // a C file defines itself (-femit-struct-debug-baseonly): the probe
    // defines none. gcc takes the last of these options.
    if !v.spec.compiler.llvm {
        text.push_str("ccflags-y += -femit-struct-debug-detailed=any\n");
    }
    if let Some(o) = overlay {
        let arch = o.dir.join("arch").join(&v.srcarch).join("include");
        let include = o.dir.join("include");
        text.push_str(&format!(
            "NOSTDINC_FLAGS += -I{} -I{}\n",
            arch.display(),
            include.display()
        ));
        // A patched private header's own quoted includes resolve in the
        // tree, where its siblings are.
        for f in &o.files {
            if let Some(dir) = v.tree.join(f).parent() {
                text.push_str(&format!("ccflags-y += -iquote {}\n", dir.display()));
            }
        }
    }
    text
}

/// The files the probe's compile read, from kbuild's record of it
/// (`.cachelint_probe.o.cmd`); relative paths are the output directory's.
fn dependencies(dir: &Path, objtree: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(dir.join(format!(".{NAME}.o.cmd"))) else {
        return Vec::new();
    };
    let mut deps = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("deps_") {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        if !line.starts_with(char::is_whitespace) {
            break;
        }
        let item = line.trim().trim_end_matches('\\').trim();
        if item.is_empty() || item.starts_with("$(") {
            continue;
        }
        let path = Path::new(item);
        deps.push(match path.is_absolute() {
            true => path.to_owned(),
            false => objtree.join(path),
        });
        if deps.len() >= MAX_DEPS {
            break;
        }
    }
    deps
}

fn manifest(deps: &[PathBuf]) -> String {
    deps.iter()
        .filter_map(|d| Some(format!("{}\t{}\n", crate::input::stamp(d)?, d.display())))
        .collect()
}

/// True when `dir` holds a probe whose every dependency is as it was
/// compiled against (and the output directory still prepared).
fn fresh(dir: &Path, objtree: &Path) -> bool {
    let object = dir.join(format!("{NAME}.o"));
    let Ok(manifest) = std::fs::read_to_string(dir.join(MANIFEST)) else {
        return false;
    };
    object.is_file()
        && objtree.join(".config").is_file()
        && !manifest.is_empty()
        && manifest.lines().all(|line| {
            line.split_once('\t').is_some_and(|(was, path)| {
                crate::input::stamp(Path::new(path)).as_deref() == Some(was)
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependencies_are_read_from_kbuilds_record() {
        let dir = std::env::temp_dir().join(format!("cachelint-probe-deps-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!(".{NAME}.o.cmd")),
            "savedcmd_x := gcc\nsource_x := x.c\ndeps_x := \\\n  /src/include/linux/a.h \\\n    \
             $(wildcard include/config/X) \\\n  include/generated/autoconf.h \\\n\nx: $(deps_x)\n",
        )
        .unwrap();
        let deps = dependencies(&dir, Path::new("/out"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            deps,
            [
                PathBuf::from("/src/include/linux/a.h"),
                PathBuf::from("/out/include/generated/autoconf.h")
            ]
        );
    }
}
