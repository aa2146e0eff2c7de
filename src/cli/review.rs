//! `cachelint review`: a layout patch reviewed on a matrix of variants.

use std::path::PathBuf;

use cachelint::commands;
use cachelint::error::Result;
use cachelint::render::{self, Format, Output};
use cachelint::report::review::ReviewReport;
use cachelint::review::Review;
use cachelint::run::{Run, Setup};

use super::args::{InputArgs, formats};

/// Review a layout patch as kernel CI would, on every arch.
///
/// In a git tree whose HEAD
/// is the patch, every struct whose definition it touches in a header
/// is laid out at the base and at HEAD on a matrix of variants (the
/// tree configured and compiled for each arch, no kernel build; see
/// docs/variants.md): size and cachelines per variant, the kernel's
/// cacheline groups, and the kernel's own CACHELINE_ASSERT_GROUP_*
/// asserts of those structs evaluated on each; where members land and
/// which holes open; the pairs of fields it makes share a line or
/// parts, by --rules or by rules drafted from the tree; and the
/// needless stores it adds to or removes from the code it changes.
/// Exit code 1 when an assert fails, or a variant stops compiling, at
/// HEAD.
#[derive(clap::Args)]
#[command(after_help = REVIEW_EXAMPLES)]
pub(crate) struct Args {
    /// The git work tree (a clean kernel source tree at the patch).
    #[arg(long, default_value = ".")]
    tree: PathBuf,
    /// The revision the patch applies to.
    #[arg(long, default_value = "HEAD~")]
    base: String,
    /// A variant file whose variants make the matrix (their `tree` is
    /// the reviewed one); by default x86_64, i386, arm and arm64, each
    /// with its defconfig.
    #[arg(long, value_name = "FILE")]
    variants: Option<PathBuf>,
    /// Review this struct too (repeatable), touched or not.
    #[arg(long = "type", value_name = "TYPE")]
    types: Vec<String>,
    /// Rules files (TOML or net_cachelines tables): their roots are
    /// analysed at both revisions on every variant, and the pairs of
    /// fields the patch makes share a line (or parts) are listed.
    /// Without them, the reviewed structs' rules are drafted from the
    /// tree's source at HEAD, as `draft --source-tree` drafts them, and
    /// checked the same way.
    #[arg(long)]
    rules: Vec<PathBuf>,
    /// Do not compare the needless stores of the code the patch
    /// changes (found as `audit` finds them, at the base and at HEAD:
    /// two readings of the whole tree, minutes on a kernel tree the
    /// first time).
    #[arg(long)]
    no_stores: bool,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = formats::<ReviewReport>())]
    format: Format,
    #[command(flatten)]
    input: InputArgs,
}

const REVIEW_EXAMPLES: &str = "Examples:
  cachelint review                                  # HEAD against HEAD~, in the current tree
  cachelint review --tree ~/linux --base net-next/main --variants ci-variants.toml
  cachelint review --format json > review.json
  cachelint review --type mm_struct --no-stores      # a struct untouched by the patch, no stores

The first review of a tree prepares it once per variant (20-40 s each, in
the variant cache); later ones compile two small objects per variant.
contrib/nipa/cachelint/ runs it as a netdev NIPA per-patch test.

Exit codes: 0 no kernel assert fails at HEAD and every variant compiles
there; 1 an assert fails, or a variant compiles at the base but not at
HEAD (shown with the compiler's first errors); 2 usage or input error,
including a variant that compiles at neither revision.";

/// Reads the patch's revisions and structs from the tree, lays them out
/// at both on every variant, and writes the review.
pub(crate) fn exec(args: Args) -> Result<Output> {
    let cacheline = args.input.cacheline;
    let mut review = Review::read(
        &args.tree,
        &args.base,
        args.variants.as_deref(),
        &args.types,
    )?;
    review.stores = !args.no_stores;
    let mut setup = Setup::review(args.rules, &review, args.input.reading()?);
    setup.cacheline = cacheline;
    let run = Run::open(setup, |rules| Ok(commands::review_want(&review, rules)))?;
    render::output(&commands::review(&run, &review)?, args.format, "review")
}
