//! `cachelint asserts`: the kernel-style check function of a struct's
//! cacheline groups, or the kernel's own compared.

use std::path::PathBuf;

use cachelint::commands::{self, AssertsOptions};
use cachelint::error::Result;
use cachelint::render::{self, Format, Output};
use cachelint::report::asserts::AssertsReport;

use super::args::{InputArgs, PlanArgs, formats};
use super::positional::{After, build_arg};

/// Print the kernel-style check function of a struct's cacheline
/// groups, or compare the kernel's own.
///
/// A CACHELINE_ASSERT_GROUP_MEMBER for every tabled member a group
/// holds, a CACHELINE_ASSERT_GROUP_SIZE per group. Members come from the rules (a net_cachelines table or TOML) and
/// groups from the build's __cacheline_group_begin/end markers; the
/// sizes are those measured in the build, not budgets. --against
/// compares the kernel's own function (in a C file) instead of
/// printing one.
#[derive(clap::Args)]
#[command(after_help = ASSERTS_EXAMPLES)]
pub(crate) struct Args {
    /// Rules file(s), as for `check`.
    #[arg(long, required = true)]
    rules: Vec<PathBuf>,
    /// The build: FILE or NAME=FILE.
    #[arg(value_name = "BUILD")]
    build: String,
    /// The struct.
    #[arg(value_name = "TYPE")]
    ty: String,
    /// A C file with the kernel's CACHELINE_ASSERT_GROUP_* of TYPE
    /// (net/ipv4/tcp.c): print how it differs from the table and
    /// the build.
    #[arg(long, value_name = "FILE.c")]
    against: Option<PathBuf>,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = formats::<AssertsReport>())]
    format: Format,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    plan: PlanArgs,
}

const ASSERTS_EXAMPLES: &str = "Examples:
  cachelint asserts --rules net_cachelines/tcp_sock.rst vmlinux tcp_sock
  cachelint asserts --rules net_cachelines/tcp_sock.rst vmlinux tcp_sock --against net/ipv4/tcp.c

Exit codes: 0 no difference (or no --against), 1 --against found a failing
assert or drift between the table and the kernel's function, 2 usage or
input error.";

/// Writes the struct's check function in the build, or how the kernel's
/// differs.
pub(crate) fn exec(args: Args) -> Result<Output> {
    let input = args.input.with_plan(args.plan);
    let opts = AssertsOptions {
        ty: args.ty,
        against: args.against,
    };
    let builds = vec![build_arg(&args.build, After::Then("the type"))?];
    let run = input.open(args.rules, builds, |r| opts.want(r))?;
    render::output(&commands::asserts(&run, &opts)?, args.format, "asserts")
}
