//! The argument groups several commands share: where types come from
//! ([`InputArgs`], [`SourceArgs`]), `--plan` ([`PlanArgs`]), `--perf`
//! ([`PerfArgs`]), and the `--format` each command offers ([`formats`]).

use std::path::PathBuf;
use std::sync::Arc;

use clap::ValueEnum;
use clap::builder::{PossibleValuesParser, TypedValueParser};

use cachelint::commands::{Build, IndexCache, Plan, Reading, Rules, Source, SourceRoot};
use cachelint::error::{Error, Result};
use cachelint::render::{Format, Render};
use cachelint::run::{Run, Setup, Want};

/// Where a command reads types from: the same two flags on every command.
#[derive(clap::Args)]
pub(crate) struct SourceArgs {
    /// Where types come from: dwarf; btf (a .BTF section, or a raw BTF file
    /// such as /sys/kernel/btf/vmlinux); auto: DWARF when the file has it,
    /// else BTF. BTF has no source lines and no alignment attributes.
    #[arg(long, value_enum, default_value_t = SourceKind::Auto)]
    source: SourceKind,
    /// The vmlinux (or its raw BTF) that a module's split BTF builds on;
    /// implies --source btf.
    #[arg(long, value_name = "FILE")]
    btf_base: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SourceKind {
    /// DWARF if present, else BTF.
    Auto,
    /// DWARF only.
    Dwarf,
    /// BTF only.
    Btf,
}

impl SourceArgs {
    /// The source `--source` and `--btf-base` name together.
    pub(crate) fn source(self) -> Result<Source> {
        match (self.source, self.btf_base) {
            (SourceKind::Dwarf, Some(_)) => Err(Error::Usage(
                "--btf-base goes with BTF, not --source dwarf".into(),
            )),
            (SourceKind::Dwarf, None) => Ok(Source::Dwarf),
            (SourceKind::Auto, None) => Ok(Source::Auto),
            (_, base) => Ok(Source::Btf { base }),
        }
    }
}

/// The flags of every command that lays out types: where they come from
/// and the line size.
#[derive(clap::Args)]
pub(crate) struct InputArgs {
    /// Cacheline size in bytes; default: the rules file's `cacheline`, else
    /// the build's: its config's CONFIG_*_L1_CACHE_SHIFT, else the
    /// alignment of its struct cacheline_padding, else the ELF machine's
    /// (64 for x86_64/arm64/riscv, 128 for ppc64, 256 for s390x; 64 for
    /// raw BTF, which does not say).
    #[arg(long, value_parser = cacheline_size)]
    pub(crate) cacheline: Option<u64>,
    #[command(flatten)]
    source: SourceArgs,
    /// The plan file (`--plan`), for the commands that take one.
    #[arg(skip)]
    plan: Option<PathBuf>,
    /// perf's samples (`--perf`), for the commands that read them.
    #[arg(skip)]
    perf: Vec<PathBuf>,
    /// Neither read nor write the on-disk name index. A lookup of a type
    /// in a file with over 8 MiB of DWARF keeps an index of the file's
    /// type names (about 1 MB for a vmlinux) in $CACHELINT_CACHE_DIR, else
    /// $XDG_CACHE_HOME/cachelint/index, else ~/.cache/cachelint/index:
    /// the next lookup in the same file decodes only the type it asks for.
    /// An index is trusted only while the file's build-id, size and
    /// modification time are those it was made from.
    #[arg(long)]
    no_cache: bool,
    /// What the source files printed (diagnostics, SARIF, JSON decl_file)
    /// are relative to: auto, the kernel source root found in each build
    /// (Debian's rt kernel records debian/build/source_rt/include/...,
    /// printed as include/...); a directory as the builds record it; or
    /// none, the paths as recorded. DWARF only: BTF has no source files.
    #[arg(long, value_name = "DIR|auto|none", default_value = "auto",
          value_parser = clap::builder::NonEmptyStringValueParser::new())]
    source_root: String,
}

/// `--plan`, for the commands that lay structs out by one (not `review`,
/// which lays out two commits as compiled, `suggest`, which starts from
/// the compiled layout, nor `audit`).
#[derive(clap::Args)]
pub(crate) struct PlanArgs {
    /// Lay the structs out as this plan file (TOML) says, not as compiled:
    /// new member orders, alignments, cacheline groups, added or removed
    /// members, re-laid out by the target's C ABI with every struct that
    /// embeds them. For diff, and diagram --compare, the plan applies to
    /// the second build only: give the same build twice to see what the
    /// plan changes. See docs/plans.md.
    #[arg(long, value_name = "PLAN")]
    plan: Option<PathBuf>,
}

/// `--perf`, for the commands that read samples: draft, check, layout,
/// diagram, footprint and suggest.
#[derive(clap::Args)]
pub(crate) struct PerfArgs {
    /// perf's data-type profile (perf 6.8 or later) as text: the output of
    /// `perf report -s type,typeoff --stdio`, `perf annotate --data-type
    /// --stdio` or `perf annotate --code-with-type --stdio`, told apart by
    /// content. Repeatable. Samples are placed on each build's own layout
    /// as compiled (with --plan they follow their members to the plan's
    /// offsets); a row that does not fit is a located note. See
    /// docs/evidence.md.
    #[arg(long, value_name = "FILE")]
    perf: Vec<PathBuf>,
}

/// The options of a command that reads builds, perf's samples and a
/// plan: check, diagram, draft, footprint and layout.
#[derive(clap::Args)]
pub(crate) struct MeasuredInputArgs {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    perf: PerfArgs,
    #[command(flatten)]
    plan: PlanArgs,
}

impl MeasuredInputArgs {
    /// The input options with the samples of `--perf` and the plan of
    /// `--plan`.
    pub(crate) fn input(self) -> InputArgs {
        self.input.with_perf(self.perf).with_plan(self.plan)
    }
}

impl InputArgs {
    /// With the samples of `--perf`.
    pub(crate) fn with_perf(mut self, perf: PerfArgs) -> InputArgs {
        self.perf = perf.perf;
        self
    }

    /// With the plan of `--plan`.
    pub(crate) fn with_plan(mut self, plan: PlanArgs) -> InputArgs {
        self.plan = plan.plan;
        self
    }

    /// A run's setup of `builds` under `rules`, read as these options say.
    pub(crate) fn setup(self, rules: Vec<PathBuf>, builds: Vec<Build>) -> Result<Setup> {
        let plan = match &self.plan {
            Some(path) => Some(Arc::new(Plan::read(path)?)),
            None => None,
        };
        let cacheline = self.cacheline;
        let perf = self.perf.clone();
        let mut setup = Setup::files(rules, builds, self.reading()?)?;
        setup.perf = perf;
        setup.plan = plan;
        setup.cacheline = cacheline;
        Ok(setup)
    }

    /// How the builds are read: `--source`, `--no-cache`, `--source-root`.
    pub(crate) fn reading(self) -> Result<Reading> {
        let source_root = match self.source_root.as_str() {
            "auto" => SourceRoot::Detect,
            "none" => SourceRoot::Keep,
            dir => SourceRoot::Dir(dir.to_owned()),
        };
        Ok(Reading {
            source: self.source.source()?,
            index: if self.no_cache {
                IndexCache::Off
            } else {
                IndexCache::from_env()
            },
            source_root,
        })
    }

    /// Opens a run of `builds` under `rules`, read as these options say,
    /// for a command that wants `want` of them.
    pub(crate) fn open(
        self,
        rules: Vec<PathBuf>,
        builds: Vec<Build>,
        want: impl FnOnce(&Rules) -> Result<Want>,
    ) -> Result<Run> {
        Run::open(self.setup(rules, builds)?, want)
    }
}

/// `--cacheline`: what a rules file's `cacheline` may be too.
fn cacheline_size(text: &str) -> std::result::Result<u64, String> {
    text.parse()
        .ok()
        .filter(|&n| cachelint::commands::is_cacheline_size(n))
        .ok_or_else(|| "a cacheline is a power of two from 16 to 4096 (bytes)".to_owned())
}

/// `--format`, offering exactly the formats report `R` can be written in.
pub(crate) fn formats<R: Render>() -> impl TypedValueParser<Value = Format> {
    PossibleValuesParser::new(R::FORMATS.iter().filter_map(|f| f.to_possible_value()))
        .map(|name| Format::from_str(&name, false).expect("a value clap offered"))
}
