//! `cachelint footprint`: the cachelines each context touches in a struct.

use std::path::PathBuf;

use cachelint::commands::{self, FootprintOptions};
use cachelint::error::Result;
use cachelint::render::{self, Format, Output};
use cachelint::report::footprint::FootprintReport;

use super::args::{MeasuredInputArgs, formats};
use super::positional::{After, parse_builds};

/// The cachelines each context (path of execution: tx, rx, ...)
/// touches in a struct, against the fewest its fields fit in.
///
/// Per build, struct and context: the fields the context uses, their
/// bytes, the lines they occupy (counted from the struct's start) and
/// the optimum ceil(bytes / line), with the union of the contexts last,
/// the columns of the netdev analysis behind the 6.8 reorganisation.
/// Contexts come from net_cachelines tables (tx, rx) or from context
/// rules (FIELD = { read = [...], write = [...] }). Members a rule
/// names that a build lacks are counted and listed.
#[derive(clap::Args)]
#[command(after_help = FOOTPRINT_EXAMPLES)]
pub(crate) struct Args {
    /// Rules file(s), as for `check`.
    #[arg(long, required = true)]
    rules: Vec<PathBuf>,
    /// Builds: FILE or NAME=FILE.
    #[arg(required = true, value_name = "BUILD")]
    builds: Vec<String>,
    /// Structs to count (default: every struct with context rules).
    #[arg(long = "type", value_name = "TYPE")]
    types: Vec<String>,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = formats::<FootprintReport>())]
    format: Format,
    #[command(flatten)]
    input: MeasuredInputArgs,
}

const FOOTPRINT_EXAMPLES: &str = "Examples:
  cachelint footprint --rules Documentation/networking/net_cachelines/tcp_sock.rst vmlinux
  cachelint footprint --rules net_cachelines/tcp_sock.rst --rules net_cachelines/net_device.rst \\
      v6.1=vmlinux-6.1 v6.12=vmlinux-6.12 --type tcp_sock --format markdown";

/// Counts the contexts' lines in the builds and writes the table.
pub(crate) fn exec(args: Args) -> Result<Output> {
    let input = args.input.input();
    let opts = FootprintOptions { types: args.types };
    let builds = parse_builds(&args.builds, After::Only("name a type with --type TYPE"))?;
    let run = input.open(args.rules, builds, |r| opts.want(r))?;
    render::output(
        &commands::footprint_report(&run, &opts)?,
        args.format,
        "footprint",
    )
}
