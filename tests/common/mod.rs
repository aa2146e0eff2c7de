//! Helpers shared by the integration tests: fixture paths and the
//! compiler's own `offsetof`/`sizeof` values (`cachelint_truth[]`).
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use object::{Object, ObjectSection, ObjectSymbol};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/bin")
        .join(name)
}

pub fn expected(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/expected")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub const COMPILERS: &[&str] = &["gcc-dwarf4", "gcc-dwarf5", "clang-dwarf4", "clang-dwarf5"];
pub const CONFIGS: &[&str] = &["base", "stats", "rt", "after", "rt-after", "nolrugen"];

/// One `M(T, path)` / `S(T)` / `F(T, path)` line of truth.def.
pub struct TruthLine {
    /// `TYPE.path` or `TYPE`.
    pub path: String,
    /// False for `F()` lines (bitfields: no sizeof).
    pub has_size: bool,
}

/// Reads truth.def the way the C preprocessor does for this file: the only
/// conditional in it is `#ifdef CONFIG_LRU_GEN`.
pub fn truth_lines(lru_gen: bool) -> Vec<TruthLine> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/src/truth.def"),
    )
    .unwrap();
    let mut out = Vec::new();
    let mut active = true;
    for line in text.lines().map(str::trim) {
        if line.starts_with("#ifdef CONFIG_LRU_GEN") {
            active = lru_gen;
        } else if line.starts_with("#endif") {
            active = true;
        } else if !active {
            continue;
        } else if let Some(args) = line.strip_prefix("M(").or_else(|| line.strip_prefix("F(")) {
            let (ty, member) = args.trim_end_matches(')').split_once(',').unwrap();
            out.push(TruthLine {
                path: format!("{}.{}", ty.trim(), member.trim()),
                has_size: line.starts_with('M'),
            });
        } else if let Some(ty) = line.strip_prefix("S(") {
            out.push(TruthLine {
                path: ty.trim_end_matches(')').to_owned(),
                has_size: true,
            });
        }
    }
    out
}

/// The `cachelint_truth[]` array of a fixture, read from its ELF data.
pub fn truth_values(file: &Path) -> Vec<u64> {
    let data = std::fs::read(file).unwrap();
    let elf = object::File::parse(&*data).unwrap();
    let sym = elf
        .symbols()
        .find(|s| s.name() == Ok("cachelint_truth"))
        .expect("cachelint_truth symbol");
    let section = elf.section_by_index(sym.section_index().unwrap()).unwrap();
    let bytes = section.data().unwrap();
    let start = (sym.address() - section.address()) as usize;
    let words = &bytes[start..start + sym.size() as usize];
    words
        .chunks(8)
        .map(|c| {
            let c: [u8; 8] = c.try_into().unwrap();
            if elf.is_little_endian() {
                u64::from_le_bytes(c)
            } else {
                u64::from_be_bytes(c)
            }
        })
        .collect()
}

/// `TYPE.path` → (offsetof, sizeof) as the compiler computed them for `file`.
pub fn truth(file: &Path, lru_gen: bool) -> HashMap<String, (u64, u64)> {
    let lines = truth_lines(lru_gen);
    let values = truth_values(file);
    assert_eq!(
        values.len(),
        lines.len() * 2,
        "{}: truth.def and the binary disagree",
        file.display()
    );
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| (l.path.clone(), (values[2 * i], values[2 * i + 1])))
        .collect()
}

/// Runs the cachelint binary: exit code, standard output, standard error.
/// The host's C compiler (`$CC`, else `cc`: the one linking needs) run
/// with `args`; panics with its standard error when it fails, prefixed by
/// `why`.
pub fn cc(args: &[&std::ffi::OsStr], why: &str) {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cc}: {e} (a C compiler is needed, as for linking)"));
    assert!(
        out.status.success(),
        "{why}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn cachelint(args: &[&str]) -> (i32, String, String) {
    cachelint_with_env(&[], args)
}

/// [`cachelint`] with these environment variables set.
pub fn cachelint_with_env(env: &[(&str, &Path)], args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cachelint"))
        .envs(env.iter().copied())
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The cachelint binary as a `Command`, for a test that sets its
/// environment (or removes variables) and reads raw bytes.
pub fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cachelint"))
}

/// The sum of the top-level steps of a `diff --format json` type's size
/// explanation: what they say the size changed by.
pub fn top_level_delta(diff: &serde_json::Value) -> i64 {
    diff["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["depth"] == 0)
        .map(|r| r["delta"].as_i64().unwrap())
        .sum()
}

/// The library's commands as the binary runs them: the report, written in
/// `format`.
pub mod pahole_text;

pub mod run {
    use std::path::Path;

    use cachelint::commands::{self, CheckOptions, Source};
    use cachelint::error::Result;
    pub use cachelint::render::Format;
    use cachelint::render::{self, Output};

    pub fn layout(
        file: &Path,
        types: &[String],
        expand: bool,
        format: Format,
        cacheline: Option<u64>,
        source: &Source,
    ) -> Result<Output> {
        let report = commands::layout(
            file,
            types,
            expand,
            false,
            cacheline,
            &source.clone().into(),
        )?;
        render::output(&report, format, "layout")
    }

    pub fn offsetof(
        file: &Path,
        paths: &[String],
        format: Format,
        cacheline: Option<u64>,
        source: &Source,
    ) -> Result<Output> {
        let report = commands::offsetof(file, paths, cacheline, &source.clone().into())?;
        render::output(&report, format, "offsetof")
    }

    /// `offsetof --format json` of `paths` in `file`, parsed.
    pub fn offsetof_json(file: &Path, paths: &[String]) -> Result<Vec<serde_json::Value>> {
        let out = offsetof(file, paths, Format::Json, None, &Source::Auto)?;
        Ok(serde_json::from_str::<serde_json::Value>(&out.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .clone())
    }

    /// `offsetof --format json` of `paths` in `file` laid out by the plan
    /// file `plan`, parsed: one value per path.
    pub fn offsetof_planned(
        file: &Path,
        paths: &[String],
        plan: &Path,
    ) -> Result<Vec<serde_json::Value>> {
        let reading = cachelint::commands::Reading {
            source: Source::Auto,
            plan: Some(std::sync::Arc::new(cachelint::plan::Plan::read(plan)?)),
            ..Default::default()
        };
        let report = commands::offsetof(file, paths, None, &reading)?;
        let out = render::output(&report, Format::Json, "offsetof")?;
        Ok(serde_json::from_str::<serde_json::Value>(&out.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .clone())
    }

    /// `layout --format json` of `types` from `file`, parsed: one value per
    /// type.
    pub fn layout_json(
        file: &Path,
        types: &[String],
        expand: bool,
        source: &Source,
    ) -> Vec<serde_json::Value> {
        let out = layout(file, types, expand, Format::Json, None, source)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        match serde_json::from_str(&out.stdout).unwrap() {
            serde_json::Value::Array(layouts) => layouts,
            other => panic!("layout JSON is not a list: {other}"),
        }
    }

    pub fn sizes(file: &Path, source: &Source) -> Result<Output> {
        render::output(&commands::sizes(file, source)?, Format::Text, "sizes")
    }

    /// `check`'s options with every default (errors fail, no baseline,
    /// no explain): `rules` over `builds`, labelled as given.
    pub fn check_options(rules: &[std::path::PathBuf], builds: &[(&str, &Path)]) -> CheckOptions {
        CheckOptions {
            rules: rules.to_vec(),
            builds: builds
                .iter()
                .map(|(config, path)| commands::Build {
                    config: (*config).to_owned(),
                    path: path.to_path_buf(),
                })
                .collect(),
            baseline: Vec::new(),
            fail_on: cachelint::rules::Severity::Error,
            cacheline: None,
            reading: Source::Auto.into(),
            explain: None,
            adjacent_lines: false,
        }
    }

    pub fn check(opts: &CheckOptions, format: Format) -> Result<Output> {
        render::output(&commands::check(opts)?, format, "check")
    }
}

/// The bytes (each once) and the lines of `line` bytes that the byte
/// ranges `[start, end)` cover: how a footprint counts, from offsets.
pub fn bytes_and_lines(mut ranges: Vec<(u64, u64)>, line: u64) -> (u64, Vec<u64>) {
    ranges.sort();
    let (mut bytes, mut to, mut lines) = (0, 0, std::collections::BTreeSet::new());
    for (a, b) in ranges {
        bytes += b.saturating_sub(a.max(to));
        to = to.max(b);
        lines.extend(a / line..=(b - 1) / line);
    }
    (bytes, lines.into_iter().collect())
}
