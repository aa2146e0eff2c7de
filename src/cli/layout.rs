//! `cachelint layout`: struct layouts as pahole prints them.

use std::path::PathBuf;

use cachelint::commands::{self, Build, LayoutOptions};
use cachelint::error::Result;
use cachelint::render::{self, Format, Output};
use cachelint::report::layout::LayoutReport;

use super::args::{MeasuredInputArgs, formats};
use super::positional::{After, build_first};

/// Print struct layouts the way pahole does, with cacheline boundaries,
/// holes, padding and kernel cacheline groups.
///
/// TYPE is a struct, union or typedef name. When a name has several
/// layouts in the file (static types of different files), the first is
/// shown with a note; pick another with NAME#N (the N-th distinct layout)
/// or NAME@FILE (defined in a file whose path ends with FILE).
#[derive(clap::Args)]
pub(crate) struct Args {
    /// ELF file with DWARF: vmlinux, .ko, .o or any program.
    file: PathBuf,
    /// Types to print.
    #[arg(required = true)]
    types: Vec<String>,
    /// Flatten embedded structs: every nested member with its dotted path
    /// (lruvec.lrugen.enabled) and absolute offset.
    #[arg(long)]
    expand: bool,
    /// Write kernel cacheline group markers as the kernel's macros
    /// (`__cacheline_group_begin_aligned(G);` ...
    /// `__cacheline_group_end_aligned(G);`), not as comments: the text
    /// is then the struct's C, to paste into a header (with `--plan`,
    /// the planned struct's).
    #[arg(long, conflicts_with = "expand")]
    macros: bool,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = formats::<LayoutReport>())]
    format: Format,
    #[command(flatten)]
    input: MeasuredInputArgs,
}

/// Lays out the types of the one build and writes them.
pub(crate) fn exec(args: Args) -> Result<Output> {
    let input = args.input.input();
    let text = args.file.to_string_lossy();
    build_first(&text, &text, After::Then("the types"))?;
    let opts = LayoutOptions {
        types: args.types,
        expand: args.expand,
        macros: args.macros,
    };
    let run = input.open(Vec::new(), vec![Build::file(&args.file)], |r| opts.want(r))?;
    render::output(&commands::layout(&run, &opts)?, args.format, "layout")
}
