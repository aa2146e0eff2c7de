//! Helpers shared by the integration tests: fixture paths and the
//! compiler's own `offsetof`/`sizeof` values (`cachelint_truth[]`).
#![allow(dead_code)]

use std::collections::HashMap;
use std::ffi::OsStr;
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

/// A rules file of `tests/rules/`.
pub fn rules(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/rules")
        .join(name)
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

/// The host's C compiler (`$CC`, else `cc`: the one linking needs) run
/// with `args`; panics with its standard error when it fails, prefixed by
/// `why`.
pub fn cc(args: &[&OsStr], why: &str) {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    succeed(
        Command::new(&cc).args(args),
        &format!("{cc} (a C compiler is needed, as for linking)"),
        why,
    );
}

/// Runs `cmd` (named `what`, for the panic when it cannot start); panics
/// with its standard error, prefixed by `why`, when it fails.
pub fn succeed(cmd: &mut Command, what: &str, why: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{why}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs the cachelint binary: exit code, standard output, standard error.
pub fn cachelint(args: &[&str]) -> (i32, String, String) {
    outcome(Command::new(env!("CARGO_BIN_EXE_cachelint")).args(args))
}

/// [`cachelint`] with these environment variables set.
pub fn cachelint_with_env(env: &[(&str, &OsStr)], args: &[&str]) -> (i32, String, String) {
    outcome(
        Command::new(env!("CARGO_BIN_EXE_cachelint"))
            .envs(env.iter().copied())
            .args(args),
    )
}

/// [`cachelint`] run in the directory `dir`.
pub fn cachelint_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    outcome(
        Command::new(env!("CARGO_BIN_EXE_cachelint"))
            .current_dir(dir)
            .args(args),
    )
}

/// The exit code (-1 for a signal) and the outputs, which must be UTF-8.
fn outcome(command: &mut Command) -> (i32, String, String) {
    let out = command.output().unwrap();
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

pub mod pahole_text;

/// The library's commands as the binary runs them: the report, written in
/// `format`.
/// `tests/rules/lru.toml` with `lru_gen_folio` renamed to a name no build
/// has and the build's name given as its alias, written to a file.
pub fn renamed_rules(dir_name: &str) -> PathBuf {
    let text = std::fs::read_to_string(rules("lru.toml")).unwrap();
    let renamed = text.replace(
        "[lru_gen_folio]\n",
        "[lru_gen_folio_next]\naliases = [\"lru_gen_folio\"]\n",
    );
    assert_ne!(renamed, text);
    let dir = std::env::temp_dir().join(format!("cachelint-{dir_name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("renamed.toml");
    std::fs::write(&path, renamed).unwrap();
    path
}

pub mod run {
    use std::path::{Path, PathBuf};

    use cachelint::commands::Severity;
    use cachelint::commands::{self, Build, Reading, Source};
    use cachelint::error::Result;
    pub use cachelint::render::Format;
    use cachelint::render::{self, Output};
    use cachelint::run::{Run, Setup};

    /// A run of `builds` under `rules` as the command line opens it.
    fn open(
        rules: &[PathBuf],
        builds: Vec<Build>,
        reading: Reading,
        cacheline: Option<u64>,
        want: impl FnOnce(&cachelint::commands::Rules) -> Result<cachelint::run::Want>,
    ) -> Result<Run> {
        let mut setup = Setup::files(rules.to_vec(), builds, reading)?;
        setup.cacheline = cacheline;
        Run::open(setup, want)
    }

    /// [`open`] of one FILE with no rules, laid out by the plan file `plan`
    /// when there is one (`--plan`).
    fn open_file(
        file: &Path,
        reading: Reading,
        plan: Option<&Path>,
        cacheline: Option<u64>,
        want: impl FnOnce(&cachelint::commands::Rules) -> Result<cachelint::run::Want>,
    ) -> Result<Run> {
        let mut setup = Setup::files(Vec::new(), vec![Build::file(file)], reading)?;
        setup.plan = match plan {
            Some(p) => Some(std::sync::Arc::new(cachelint::commands::Plan::read(p)?)),
            None => None,
        };
        setup.cacheline = cacheline;
        Run::open(setup, want)
    }

    pub fn layout(
        file: &Path,
        types: &[String],
        expand: bool,
        format: Format,
        cacheline: Option<u64>,
        source: &Source,
    ) -> Result<Output> {
        let opts = commands::LayoutOptions {
            types: types.to_vec(),
            expand,
            macros: false,
        };
        let run = open_file(file, source.clone().into(), None, cacheline, |r| {
            opts.want(r)
        })?;
        render::output(&commands::layout(&run, &opts)?, format, "layout")
    }

    /// `offsetof` of `paths` in `file`, laid out by `plan` when given.
    fn offsetof_planned_by(
        file: &Path,
        paths: &[String],
        format: Format,
        cacheline: Option<u64>,
        source: &Source,
        plan: Option<&Path>,
    ) -> Result<Output> {
        let opts = commands::OffsetofOptions {
            paths: paths.to_vec(),
        };
        let run = open_file(file, source.clone().into(), plan, cacheline, |r| {
            opts.want(r)
        })?;
        render::output(&commands::offsetof(&run, &opts)?, format, "offsetof")
    }

    pub fn offsetof(
        file: &Path,
        paths: &[String],
        format: Format,
        cacheline: Option<u64>,
        source: &Source,
    ) -> Result<Output> {
        offsetof_planned_by(file, paths, format, cacheline, source, None)
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
        let out = offsetof_planned_by(file, paths, Format::Json, None, &Source::Auto, Some(plan))?;
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
        let run = open_file(
            file,
            source.clone().into(),
            None,
            None,
            commands::sizes_want,
        )?;
        render::output(&commands::sizes(&run)?, Format::Text, "sizes")
    }

    /// A `check` as the command line gives it: the run's parts (rules,
    /// builds, baseline, reading, `--cacheline`) and check's own options.
    #[derive(Clone, Debug)]
    pub struct CheckOptions {
        pub rules: Vec<PathBuf>,
        pub builds: Vec<Build>,
        pub baseline: Vec<Build>,
        pub fail_on: Severity,
        pub cacheline: Option<u64>,
        pub reading: Reading,
        pub explain: Option<String>,
        pub adjacent_lines: bool,
    }

    /// `check`'s options with every default (errors fail, no baseline,
    /// no explain): `rules` over `builds`, labelled as given.
    pub fn check_options(rules: &[PathBuf], builds: &[(&str, &Path)]) -> CheckOptions {
        CheckOptions {
            rules: rules.to_vec(),
            builds: builds
                .iter()
                .map(|(config, path)| Build {
                    config: (*config).to_owned(),
                    path: path.to_path_buf(),
                })
                .collect(),
            baseline: Vec::new(),
            fail_on: Severity::Error,
            cacheline: None,
            reading: Source::Auto.into(),
            explain: None,
            adjacent_lines: false,
        }
    }

    pub fn check(opts: &CheckOptions, format: Format) -> Result<Output> {
        let own = commands::CheckOptions {
            fail_on: opts.fail_on,
            explain: opts.explain.clone(),
            adjacent_lines: opts.adjacent_lines,
            by_samples: false,
            source_tree: None,
            top: None,
        };
        let mut setup = Setup::files(
            opts.rules.clone(),
            opts.builds.clone(),
            opts.reading.clone(),
        )?;
        setup.baseline = opts.baseline.clone();
        setup.cacheline = opts.cacheline;
        let run = Run::open(setup, |r| own.want(r))?;
        render::output(&commands::check(&run, &own)?, format, "check")
    }

    /// A `suggest` as the command line gives it: the run's parts (rules,
    /// builds, reading, `--cacheline`) and suggest's own options; `ty` is
    /// set by [`suggest`].
    #[derive(Clone, Debug)]
    pub struct SuggestOptions {
        pub rules: Vec<PathBuf>,
        pub builds: Vec<Build>,
        pub ty: String,
        pub plan_out: Option<PathBuf>,
        pub max_growth: Option<u64>,
        pub keep_footprint: bool,
        pub pin: Vec<String>,
        /// `--unpin-aligned`.
        pub unpin_aligned: bool,
        pub rank: Option<String>,
        pub source_tree: Option<PathBuf>,
        pub diagram: bool,
        pub asserts: bool,
        pub cacheline: Option<u64>,
        pub reading: Reading,
    }

    /// `suggest`'s options with every default (no plan file, no growth
    /// limit, no pins, the default rank, neither diagram nor check
    /// function): `rules` (none: packing only) over `builds`, each `FILE`
    /// or `NAME=FILE` as on the command line. [`suggest`] sets the type.
    pub fn suggest_options(rules: &[PathBuf], builds: &[&str]) -> SuggestOptions {
        SuggestOptions {
            rules: rules.to_vec(),
            builds: builds
                .iter()
                .map(|b| Build::parse(b).unwrap_or_else(|e| panic!("{b}: {e}")))
                .collect(),
            ty: String::new(),
            plan_out: None,
            max_growth: None,
            keep_footprint: false,
            pin: Vec::new(),
            unpin_aligned: false,
            rank: None,
            source_tree: None,
            diagram: false,
            asserts: false,
            cacheline: None,
            reading: Source::Auto.into(),
        }
    }

    /// `suggest` of `types` under `opts`, as the binary runs it.
    pub fn suggest(opts: &SuggestOptions, types: &[&str], format: Format) -> Result<Output> {
        let own = commands::SuggestOptions {
            types: types.iter().map(|t| t.to_string()).collect(),
            plan_out: opts.plan_out.clone(),
            max_growth: opts.max_growth,
            keep_footprint: opts.keep_footprint,
            pin: opts.pin.clone(),
            unpin_aligned: opts.unpin_aligned,
            rank: opts.rank.clone(),
            source_tree: opts.source_tree.clone(),
            diagram: opts.diagram,
            asserts: opts.asserts,
        };
        let run = open(
            &opts.rules,
            opts.builds.clone(),
            opts.reading.clone(),
            opts.cacheline,
            |r| own.want(r),
        )?;
        render::output(&commands::suggest(&run, &own)?, format, "suggest")
    }

    /// What the binary makes of a command's `result`, as its `main` prints
    /// it: the exit code (1 when the report fails, 2 for an error), the
    /// standard output, and the standard error (the notes, or the error).
    pub fn as_binary(result: Result<Output>) -> (i32, String, String) {
        match result {
            Ok(out) => (
                i32::from(out.failed),
                out.stdout,
                out.notes.iter().map(|n| format!("note: {n}\n")).collect(),
            ),
            Err(e) => (2, String::new(), format!("cachelint: error: {e}\n")),
        }
    }

    /// `asserts` of `ty` in the FILE `build` under `rules`, against the C
    /// file `against` when there is one.
    pub fn asserts(
        rules: &[PathBuf],
        build: &Path,
        ty: &str,
        against: Option<&Path>,
        format: Format,
    ) -> Result<Output> {
        let opts = commands::AssertsOptions {
            ty: ty.into(),
            against: against.map(Path::to_owned),
        };
        let run = open(
            rules,
            vec![Build::file(build)],
            Reading::default(),
            None,
            |r| opts.want(r),
        )?;
        render::output(&commands::asserts(&run, &opts)?, format, "asserts")
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

/// Every file and directory under `dir` with its size and modification
/// time: two snapshots equal when nothing under `dir` was written.
pub fn tree_snapshot(
    dir: &Path,
) -> std::collections::BTreeMap<PathBuf, (u64, std::time::SystemTime)> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let meta = std::fs::symlink_metadata(entry.path()).unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            }
            out.insert(entry.path(), (meta.len(), meta.modified().unwrap()));
        }
    }
    out
}

/// Copies the directory `from` to `to` (files and directories only).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
