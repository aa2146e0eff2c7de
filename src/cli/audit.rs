//! `cachelint audit`: a whole tree's false sharing and needless stores.

use std::path::{Path, PathBuf};

use cachelint::commands::{self, AuditOptions};
use cachelint::error::{Error, Result};
use cachelint::render::{self, Format, Output};
use cachelint::report::audit::AuditReport;

use super::args::{InputArgs, PerfArgs, formats};
use super::positional::{After, parse_builds};

/// Find the false sharing and needless stores of a whole kernel tree, ranked.
///
/// Reads every file of the tree once into its evidence index (kept in
/// the cache directory, as draft --index: about three minutes cold on
/// 2 cores, seconds after). Then, the layout: every struct the tree
/// writes from many CPUs at once (a lockless or marked store on a
/// fast path) is drafted as draft --index drafts it and checked as
/// check --rules checks the draft, on every build; each struct with a
/// pair sharing a line is reported with its worst pair, the structs
/// most worth a patch first (--rules-out writes each draft).
///
/// Then the needless stores: stores on a hot path that may write the
/// value already there, so that every CPU making them takes a shared
/// cacheline exclusive for nothing, most worth a patch first: a constant or another object's member stored with no test of the
/// member first (WRITE_ONCE(mm->lru_gen.bitmap, -1)); a
/// compare-and-exchange loop whose new value is made from the old
/// one and can equal it, with no test that it differs
/// (folio_update_gen()'s try_cmpxchg(), set_mask_bits()); a bit set or
/// cleared untested. A store is reported when a fast entry point
/// (system call, hardware interrupt, softirq, scheduler, page fault,
/// packet path, block I/O, page reclaim) reaches its function through
/// the calls seen (not through a failure's handler, an oops or an
/// error), and the member is shared: its store is marked or atomic, or
/// some function reads it with READ_ONCE or writes it so. Each line
/// says the path from the entry point and who else touches the member.
/// See docs/audit.md.
#[derive(clap::Args)]
#[command(after_help = AUDIT_EXAMPLES)]
pub(crate) struct Args {
    /// The build the tree was compiled to (FILE or NAME=FILE): member
    /// accesses are resolved through its types.
    #[arg(required = true, value_name = "BUILD")]
    builds: Vec<String>,
    /// The kernel source tree to audit.
    #[arg(long, value_name = "DIR", required = true)]
    source_tree: PathBuf,
    /// Read arch/ARCH and no other machine's code under arch/
    /// (default: the build's machine).
    #[arg(long, value_name = "ARCH")]
    arch: Option<String>,
    /// Audit only the code in files under PATH (relative to the tree;
    /// repeatable): the stores it makes, and the structs it writes from
    /// many CPUs. The whole tree is still read: who calls a function,
    /// who shares a member and who reads it are everywhere.
    #[arg(long, value_name = "PATH")]
    under: Vec<PathBuf>,
    /// Report at most N pairs and N stores, the most worth a patch
    /// (0: all).
    #[arg(long, value_name = "N", default_value_t = 50)]
    top: usize,
    /// Write the drafted rules of each struct with a pair to
    /// DIR/STRUCT.toml: `check --rules DIR/STRUCT.toml BUILD`
    /// reproduces its pairs, and `diagram` and `suggest` take it.
    #[arg(long, value_name = "DIR")]
    rules_out: Option<PathBuf>,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = formats::<AuditReport>())]
    format: Format,
    #[command(flatten)]
    perf: PerfArgs,
    #[command(flatten)]
    input: InputArgs,
}

const AUDIT_EXAMPLES: &str = "Examples:
  cachelint audit --source-tree ~/linux vmlinux
  cachelint audit --source-tree ~/linux --under mm --under include/linux/mm_types.h vmlinux
  cachelint audit --source-tree ~/linux --rules-out drafted/ vmlinux
  cachelint audit --source-tree ~/linux --top 0 --format json vmlinux > audit.json
  cachelint audit --source-tree ~/linux --perf types.txt vmlinux   # perf's samples rank first

Exit codes: 0 the audit ran (findings or not), 2 usage or input error.";

/// Audits the tree through the builds' types, writes the drafted rules
/// (`--rules-out`) and the report.
pub(crate) fn exec(args: Args) -> Result<Output> {
    let opts = AuditOptions {
        source_tree: args.source_tree,
        arch: args.arch,
        under: args.under,
        top: args.top,
        rules_out: args.rules_out,
    };
    let builds = parse_builds(&args.builds, After::Only("the tree is --source-tree DIR"))?;
    let input = args.input.with_perf(args.perf);
    let run = input.open(Vec::new(), builds, |r| opts.want(r))?;
    let report = commands::audit(&run, &opts)?;
    if let Some(dir) = &opts.rules_out {
        write_rules(dir, &report.rules)?;
    }
    render::output(&report, args.format, "audit")
}

/// `audit --rules-out DIR`: each drafted rules file, as DIR/STRUCT.toml.
fn write_rules(dir: &Path, rules: &[(String, String)]) -> Result<()> {
    let failed = |e: std::io::Error| Error::Write {
        what: "--rules-out",
        path: Some(dir.to_owned()),
        reason: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(failed)?;
    for (name, text) in rules {
        std::fs::write(dir.join(format!("{name}.toml")), text).map_err(failed)?;
    }
    Ok(())
}
