//! `cachelint diff`: what changed in structs between two builds, and why.

use std::path::PathBuf;

use cachelint::commands::{self, DiffOptions, ListDepth};
use cachelint::error::{Error, Result};
use cachelint::render::{self, Format, Output};
use cachelint::report::diff::DiffReport;

use super::args::{InputArgs, PlanArgs, formats};
use super::positional::{After, build_arg};

/// What changed in structs between two builds, and why.
///
/// Members added, removed,
/// moved or resized (nested ones by path), where a size change comes
/// from, and with --rules the annotated fields on other lines and the
/// findings fixed or introduced. Exit code 1 when anything differs.
#[derive(clap::Args)]
#[command(after_help = DIFF_EXAMPLES)]
pub(crate) struct Args {
    /// The old build: FILE or NAME=FILE.
    old: String,
    /// The new build: FILE or NAME=FILE.
    new: String,
    /// Types to compare (at least one).
    #[arg(value_name = "TYPES")]
    types: Vec<String>,
    /// Rules file(s), as for `check`.
    #[arg(long)]
    rules: Vec<PathBuf>,
    /// How deep changed members are listed: 1 for the type's own
    /// members, 2 for those and the members of one they hold; deeper
    /// changes are counted under their ancestor at that depth. `all`
    /// lists every one.
    #[arg(long, value_name = "N|all", default_value = "2")]
    depth: ListDepth,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = formats::<DiffReport>())]
    format: Format,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    plan: PlanArgs,
}

const DIFF_EXAMPLES: &str = "Examples:
  cachelint diff old/vmlinux new/vmlinux mem_cgroup_per_node lruvec lru_gen_folio
  cachelint diff before=old/vmlinux after=new/vmlinux mem_cgroup_per_node --rules mm-lru.toml

Exit codes: 0 no difference, 1 differences, 2 usage or input error.";

/// Compares the types in the two builds and writes the differences.
pub(crate) fn exec(args: Args) -> Result<Output> {
    let input = args.input.with_plan(args.plan);
    let opts = DiffOptions {
        types: args.types,
        depth: args.depth,
    };
    let builds = vec![
        build_arg(&args.old, After::Then("the types"))?,
        build_arg(&args.new, After::Then("the types"))?,
    ];
    if opts.types.is_empty() {
        return Err(Error::Usage(
            "no type given: diff takes two builds (OLD NEW), then the types".into(),
        ));
    }
    let run = input.open(args.rules, builds, |r| opts.want(r))?;
    render::output(&commands::diff(&run, &opts)?, args.format, "diff")
}
