//! `cachelint suggest`: a member order the rules like better, as a plan.

use std::path::PathBuf;

use cachelint::commands::{self, SuggestOptions};
use cachelint::error::Result;
use cachelint::render::{self, Format, Output};
use cachelint::report::suggest::SuggestReport;

use super::args::{InputArgs, PerfArgs, formats};
use super::positional::{Rest, builds_then};

/// Suggest a member order for TYPE that the rules like better on every
/// build, and write it as a plan file.
///
/// Each candidate is laid out by the plan engine on every build (a
/// layout the compiler gives) and scored, in order: errors over every
/// root of every build, then warnings, then the roots' worst growth in
/// lines and bytes, then the lines each context touches, then the
/// members moved (--rank orders them otherwise; --max-growth and
/// --keep-footprint are limits, ranked first). The search is a hill climb
/// from the compiled order (a local optimum; the output says how many
/// layouts it tried). Check, draw or diff the result with --plan.
/// Without --rules: packing only, the smallest size (then the fewest
/// members moved) over packing orders and the climb.
#[derive(clap::Args)]
#[command(after_help = SUGGEST_EXAMPLES)]
pub(crate) struct Args {
    /// Rules file(s), as for `check`. Without them: packing only, the
    /// smallest size the compiler would give, then the fewest moves.
    #[arg(long)]
    rules: Vec<PathBuf>,
    /// Builds (FILE or NAME=FILE), then the struct(s) to reorder: with
    /// several, one report after another (JSON: an array).
    #[arg(required = true, value_name = "BUILD... TYPE...", num_args = 2..)]
    items: Vec<String>,
    /// Write the suggested plan to this file.
    #[arg(long, value_name = "FILE")]
    plan_out: Option<PathBuf>,
    /// Let no root grow by more than LINES cachelines in any build
    /// (ranked before the findings).
    #[arg(long, value_name = "LINES", conflicts_with = "no_grow")]
    max_growth: Option<u64>,
    /// Let no root grow at all: --max-growth 0.
    #[arg(long)]
    no_grow: bool,
    /// With context rules: let no context touch more lines of the
    /// struct than as compiled, in any build (ranked with
    /// --max-growth, before the findings). For a struct already laid
    /// out for its contexts, such as netdev's tcp_sock.
    #[arg(long)]
    keep_footprint: bool,
    /// Keep this member, or every member of this kernel cacheline group
    /// (`__cacheline_group_begin(NAME)`), at its compiled offset in
    /// every build; repeatable.
    #[arg(long, value_name = "MEMBER|GROUP")]
    pin: Vec<String>,
    /// Let the author's isolation move: by default CACHELINE_PADDING
    /// members, members with an explicit alignment of a line or more
    /// (`____cacheline_aligned_in_smp`) and aligned kernel groups'
    /// markers keep their places and no member moves across them; the
    /// report says which.
    #[arg(long)]
    unpin_aligned: bool,
    /// The objectives, most important first: names from errors,
    /// warnings, growth, samples, notes, footprint, moved,
    /// comma-separated; those not named follow in this default order.
    /// `samples` (with `--perf`): perf's samples on the fields of the
    /// pairs left, so that what still shares a line is what perf saw
    /// least. `--rank errors,growth`:
    /// no error first, then the least growth, then fewer warnings.
    /// With the default order a suggestion is never worse than the
    /// compiled layout on any build (errors, then warnings, then
    /// notes; no context in more lines); an order of your own may trade
    /// that away, and says so.
    #[arg(long, value_name = "OBJECTIVE,...")]
    rank: Option<String>,
    /// The kernel source tree the builds come from: also print the
    /// header patch that makes the order (a unified diff for git apply).
    #[arg(long, value_name = "DIR")]
    source_tree: Option<PathBuf>,
    /// Also draw the struct in the first build, compiled against
    /// suggested: what `diagram --plan P BUILD TYPE --compare BUILD`
    /// draws.
    #[arg(long)]
    diagram: bool,
    /// Also print the CACHELINE_ASSERT_GROUP_* check function of the
    /// suggested layout on the first build: what `asserts --plan P
    /// BUILD TYPE` prints.
    #[arg(long)]
    asserts: bool,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = formats::<SuggestReport>())]
    format: Format,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    perf: PerfArgs,
}

const SUGGEST_EXAMPLES: &str = "Examples:
  cachelint suggest --rules examples/mm-lru.toml amd64=vmlinux rt=vmlinux-rt lru_gen_folio
  cachelint suggest --rules mm-lru.toml amd64=vmlinux lru_gen_folio --plan-out p.toml
  cachelint suggest vmlinux page_pool task_struct --plan-out packed.toml
  cachelint diagram --rules mm-lru.toml --plan p.toml amd64=vmlinux mem_cgroup_per_node";

/// Searches an order for each type over the builds and writes the reports.
pub(crate) fn exec(args: Args) -> Result<Output> {
    let input = args.input.with_perf(args.perf);
    let (builds, types) = builds_then(&args.items, Rest::Types)?;
    let opts = SuggestOptions {
        types,
        plan_out: args.plan_out,
        max_growth: if args.no_grow {
            Some(0)
        } else {
            args.max_growth
        },
        keep_footprint: args.keep_footprint,
        pin: args.pin,
        unpin_aligned: args.unpin_aligned,
        rank: args.rank,
        source_tree: args.source_tree,
        diagram: args.diagram,
        asserts: args.asserts,
    };
    let run = input.open(args.rules, builds, |r| opts.want(r))?;
    render::output(&commands::suggest(&run, &opts)?, args.format, "suggest")
}
