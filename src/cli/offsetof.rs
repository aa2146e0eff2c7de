//! `cachelint offsetof`: the offset, size and cacheline of members.

use std::path::PathBuf;

use cachelint::commands::{self, Build, OffsetofOptions};
use cachelint::error::Result;
use cachelint::render::{self, Format, Output};
use cachelint::report::layout::OffsetofReport;

use super::args::{InputArgs, PlanArgs, formats};
use super::positional::{After, build_first};

/// Print the offset, size and cacheline of members, like C's offsetof.
///
/// PATH is TYPE.member.member[index]..., e.g.
/// mem_cgroup_per_node.lruvec.lrugen.enabled or
/// lru_gen_folio.refaulted[0][1][2]. Members of anonymous structs and
/// unions are reached directly, as in C.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// ELF file with DWARF.
    file: PathBuf,
    /// Member paths.
    #[arg(required = true)]
    paths: Vec<String>,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = formats::<OffsetofReport>())]
    format: Format,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    plan: PlanArgs,
}

/// Finds the paths in the one build and writes them.
pub(crate) fn exec(args: Args) -> Result<Output> {
    let input = args.input.with_plan(args.plan);
    let text = args.file.to_string_lossy();
    build_first(&text, &text, After::Then("the paths"))?;
    let opts = OffsetofOptions { paths: args.paths };
    let run = input.open(Vec::new(), vec![Build::file(&args.file)], |r| opts.want(r))?;
    render::output(&commands::offsetof(&run, &opts)?, args.format, "offsetof")
}
