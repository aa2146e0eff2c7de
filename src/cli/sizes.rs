//! `cachelint sizes`: every struct's size and holes, as `pahole --sizes`.

use std::path::PathBuf;

use cachelint::commands::{self, Build};
use cachelint::error::Result;
use cachelint::render::{self, Format, Output};
use cachelint::run::{Run, Setup};

use super::args::SourceArgs;

/// Print every named struct and union as NAME<TAB>SIZE<TAB>HOLES, the
/// lines `pahole --sizes` prints, so the two can be diffed.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// ELF file with DWARF or BTF, or a raw BTF file.
    file: PathBuf,
    #[command(flatten)]
    source: SourceArgs,
}

/// Reads every named struct and union of the file and writes the lines.
pub(crate) fn exec(args: Args) -> Result<Output> {
    let setup = Setup::files(
        Vec::new(),
        vec![Build::file(&args.file)],
        args.source.source()?.into(),
    )?;
    let run = Run::open(setup, commands::sizes_want)?;
    render::output(&commands::sizes(&run)?, Format::Text, "sizes")
}
