//! `cachelint offsets`: paths' offsets and lines, one column per build.

use cachelint::commands::{self, OffsetsOptions};
use cachelint::error::Result;
use cachelint::render::{self, Format, Output};
use cachelint::report::offsets::OffsetsReport;

use super::args::{InputArgs, PlanArgs, formats};
use super::positional::{Rest, builds_then};

/// Offsets, sizes and cachelines of paths, one column per build
/// (config), with the rows whose lines differ marked.
///
/// PATH is TYPE, TYPE.member.member[index], or TYPE.member.* for every
/// member of a struct.
#[derive(clap::Args)]
#[command(after_help = OFFSETS_EXAMPLES)]
pub(crate) struct Args {
    /// Builds (FILE or NAME=FILE), then paths.
    #[arg(required = true, value_name = "BUILD... PATH")]
    items: Vec<String>,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = formats::<OffsetsReport>())]
    format: Format,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    plan: PlanArgs,
}

const OFFSETS_EXAMPLES: &str = "Examples:
  cachelint offsets base=vmlinux rt=vmlinux-rt mem_cgroup_per_node.lruvec.lru_lock
  cachelint offsets base=vmlinux rt=vmlinux-rt 'mem_cgroup_per_node.lruvec.lrugen.*'
  cachelint offsets a=build-a/vmlinux b=build-b/vmlinux lruvec lru_gen_folio --format markdown

Arguments that name existing files (FILE or NAME=FILE) are builds; the rest
are paths. Rows whose cachelines differ between builds say 'differ'.";

/// Finds the paths in every build and writes the table.
pub(crate) fn exec(args: Args) -> Result<Output> {
    let input = args.input.with_plan(args.plan);
    let (builds, paths) = builds_then(&args.items, Rest::Paths)?;
    let opts = OffsetsOptions { paths };
    let run = input.open(Vec::new(), builds, |r| opts.want(r))?;
    render::output(&commands::offsets(&run, &opts)?, args.format, "offsets")
}
