//! `cachelint draft`: a rules file drafted from evidence.

use std::path::PathBuf;

use cachelint::commands::{self, DraftOptions};
use cachelint::error::Result;
use cachelint::render::{self, Format, Output};
use cachelint::report::draft::DraftReport;

use super::args::{MeasuredInputArgs, formats};
use super::positional::{Rest, builds_then};

/// Draft a rules file for TYPE from evidence: perf's samples, the
/// source's declarations and the types.
///
/// For each direct member, the class the strongest evidence gives:
/// declared in the source (--source-tree: __guarded_by, a lock held
/// around its writes, atomics and WRITE_ONCE on it, its use as a lock,
/// its reads), then measured by perf (--perf: locked updates are
/// lockless-write, plain stores make the storing function a context,
/// loads only are hot-read), then inferred from its type (kernel
/// locks, atomics). Plain stores with no lock are the object's owner's
/// (one context); a member written only while the object is built or
/// torn down (*_destroy*, *_destruct*) or on the control path (netlink,
/// sysctl, ioctl, *_change) and read by
/// several functions is hot-read. Every rule has its evidence above it
/// as comments and its kind after it; evidence that disagrees is
/// listed, not resolved. The output loads in check unchanged. See
/// docs/evidence.md.
#[derive(clap::Args)]
#[command(after_help = DRAFT_EXAMPLES)]
pub(crate) struct Args {
    /// Builds (FILE or NAME=FILE), then the struct(s) to draft.
    #[arg(required = true, value_name = "BUILD... TYPE...", num_args = 2..)]
    items: Vec<String>,
    /// The kernel source tree (or any C tree) the builds come from:
    /// read what its headers and functions declare about the members.
    #[arg(long, value_name = "DIR")]
    source_tree: Option<PathBuf>,
    /// With --source-tree: read arch/ARCH and no other machine's code
    /// under arch/ (default: the first build's machine, x86 for an
    /// x86-64 vmlinux).
    #[arg(long, value_name = "ARCH", requires = "source_tree")]
    arch: Option<String>,
    /// With --source-tree: read the whole tree once, for every struct,
    /// into an evidence index kept in the cache directory (see
    /// --no-cache), and draft from it. The first run builds it (a
    /// kernel tree: about three minutes on 2 cores); later drafts of
    /// any struct from the same tree, machine and build take a second
    /// or two. A changed file, build or cachelint rebuilds it.
    #[arg(long, requires = "source_tree")]
    index: bool,
    /// Output format: text is the rules file.
    #[arg(long, default_value = "text", value_parser = formats::<DraftReport>())]
    format: Format,
    #[command(flatten)]
    input: MeasuredInputArgs,
}

const DRAFT_EXAMPLES: &str = "Examples:
  cachelint draft --perf fixtures/perf/code-with-type.txt --source-tree fixtures/perf fixtures/perf/ring ring
  cachelint draft --source-tree ~/linux vmlinux lru_gen_folio > lru.toml
  perf annotate --code-with-type --stdio > types.txt; cachelint draft --perf types.txt vmlinux page_pool
  cachelint check --rules lru.toml --perf types.txt --rank samples vmlinux";

/// Drafts the rules of each type from the builds and writes them.
pub(crate) fn exec(args: Args) -> Result<Output> {
    let input = args.input.input();
    let (builds, types) = builds_then(&args.items, Rest::Types)?;
    let opts = DraftOptions {
        types,
        source_tree: args.source_tree,
        arch: args.arch,
        index: args.index,
    };
    let run = input.open(Vec::new(), builds, |r| opts.want(r))?;
    render::output(&commands::draft(&run, &opts)?, args.format, "draft")
}
