//! `cachelint check`: false sharing under the rules, in every build.

use std::path::PathBuf;

use cachelint::commands::{self, Build, CheckOptions, Class, Kind, Severity};
use cachelint::error::Result;
use cachelint::render::{self, Format, Output};
use cachelint::report::Checked;
use cachelint::run::Run;

use super::args::{MeasuredInputArgs, formats};
use super::positional::{After, parse_builds};

/// Find false sharing: fields whose rules say they must not share a
/// cacheline, and do, in every build (config) given.
///
/// The rules file (TOML) says per struct how each field is used:
/// hot-read, lockless-write, lock-protected (with its lock), lock or
/// cold. Kernel net_cachelines tables (.rst) are read too. Lines are
/// counted from the outermost structs that embed an annotated struct
/// (found in the binary, or a file's `roots = [...]`, which restricts
/// only that file's types) and from the structs `[placement]` places. Each finding is printed
/// as FILE:LINE: SEVERITY: [CONFIG] message, at the declaration of the
/// field.
#[derive(clap::Args)]
#[command(after_help = check_help())]
pub(crate) struct Args {
    /// Rules file: TOML (see docs/rules.md), or a kernel
    /// Documentation/networking/net_cachelines/*.rst table. Repeat to
    /// merge several.
    #[arg(long, required = true)]
    rules: Vec<PathBuf>,
    /// Builds to check: FILE, or NAME=FILE to label a config
    /// (rt=vmlinux-rt). Each finding carries its label.
    #[arg(required = true, value_name = "BUILD")]
    builds: Vec<String>,
    /// Report only findings this baseline does not have: an older build
    /// (FILE or NAME=FILE) or a saved `check --format json` report.
    /// Findings match by root, kind, fields and classes, never by
    /// offsets; by config too when the baseline has a config of the
    /// finding's label (else a finding of any of its configs matches).
    /// Repeatable.
    #[arg(long, value_name = "OLD")]
    baseline: Vec<String>,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = formats::<Checked>())]
    format: Format,
    /// Lowest severity that makes the exit code 1.
    #[arg(long, value_enum, default_value_t = Severity::Error)]
    fail_on: Severity,
    /// For every line FIELD occupies (a name, a path from the root, or
    /// TYPE.member), list each annotated neighbour and the verdict on
    /// the pair, flagged or not, with its reason.
    #[arg(long, value_name = "FIELD")]
    explain: Option<String>,
    /// Also report pairs on the two lines of one 128-byte aligned pair
    /// (the spatial prefetcher pulls both), as adjacent-lines notes;
    /// the rules setting is adjacent-lines = true.
    #[arg(long)]
    adjacent_lines: bool,
    /// The kernel source tree the builds come from: locate findings
    /// on builds whose debug info gives no source lines (BTF) in its
    /// headers, and note rules its `__guarded_by` annotations
    /// contradict.
    #[arg(long, value_name = "DIR")]
    source_tree: Option<PathBuf>,
    /// Order the findings by the samples --perf gives their two
    /// fields (most first) instead of by severity.
    #[arg(long, value_name = "ORDER", value_parser = ["severity", "samples"], default_value = "severity")]
    rank: String,
    /// Show the first N diagnostics only: the worst, and of one
    /// severity the hottest (the rules' [heat], which draft writes).
    /// The summary and the exit code still count every finding.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(usize))]
    top: Option<usize>,
    #[command(flatten)]
    input: MeasuredInputArgs,
}

const CHECK_EXAMPLES: &str = "Examples:
  cachelint check --rules examples/mm-lru.toml vmlinux
  cachelint check --rules mm-lru.toml base=build/vmlinux rt=build-rt/vmlinux
  cachelint check --rules mm-lru.toml --format json vmlinux > old.json
  cachelint check --rules mm-lru.toml --baseline old.json vmlinux   # new findings only
  cachelint check --rules Documentation/networking/net_cachelines/tcp_sock.rst vmlinux

A rules file (TOML):
  [lru_gen_folio]
  enabled   = \"hot-read\"
  refaulted = \"lockless-write\"
  nr_pages  = { class = \"lock-protected\", lock = \"lruvec.lru_lock\" }
  [lruvec]
  lru_lock  = \"lock\"
  [[allow]]
  fields = [\"lruvec.lru_lock\", \"lruvec.cost_lock\"]
  reason = \"why this pair is accepted\"
";

/// `check`'s examples, then its classes and finding kinds, from the
/// rules' own enums.
fn check_help() -> String {
    let classes: Vec<&str> = Class::SHORTHANDS.iter().map(|c| c.name()).collect();
    let mut kinds = Kind::ALL;
    kinds.sort_by_key(|k| std::cmp::Reverse(k.default_severity()));
    let mut out = format!(
        "{CHECK_EXAMPLES}Classes: {}.\n\
         Output also shows {}: a context rule's field (field = {{ write = [\"CTX\"] }})\n\
         whose writers are one CPU at a time; a rules file does not write it.\n\
         A lock-protected field names its lock: a member of the same struct or\n\
         TYPE.member of the nearest enclosing TYPE, of a kernel lock type\n\
         (spinlock_t, mutex, ...) or with class lock, and not the field itself.\n\n\
         Finding kinds and default severities (change them under [severity]):\n",
        classes.join(", "),
        Class::OwnerWrite
    );
    for k in kinds {
        out.push_str(&format!(
            "  {:<21} {:<37} {}\n",
            k.name(),
            k.pair(),
            k.default_severity()
        ));
    }
    out.push_str(
        "\nExit codes: 0 clean, 1 findings at or above --fail-on, 2 usage or input error.",
    );
    out
}

/// Checks the builds (against the baseline) and writes the findings.
pub(crate) fn exec(args: Args) -> Result<Output> {
    let input = args.input.input();
    let opts = CheckOptions {
        fail_on: args.fail_on,
        explain: args.explain,
        adjacent_lines: args.adjacent_lines,
        by_samples: args.rank == "samples",
        source_tree: args.source_tree,
        top: args.top,
    };
    let then = After::Only("check takes the types from the rules");
    let mut setup = input.setup(args.rules, parse_builds(&args.builds, then)?)?;
    setup.baseline = args
        .baseline
        .iter()
        .map(|b| Build::parse(b))
        .collect::<Result<_>>()?;
    let run = Run::open(setup, |r| opts.want(r))?;
    render::output(&commands::check(&run, &opts)?, args.format, "check")
}
