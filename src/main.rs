//! The `cachelint` command line: parses arguments, runs a command from the
//! library, prints, and maps errors to exit code 2.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use cachelint::commands::{self, Format};

/// Exact struct layouts and cachelines from the DWARF of a vmlinux, module or
/// any ELF object.
#[derive(Parser)]
#[command(name = "cachelint", version, about, long_about = None, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const EXAMPLES: &str = "Examples:
  cachelint layout vmlinux lruvec
  cachelint layout vmlinux mem_cgroup_per_node --expand
  cachelint offsetof vmlinux mem_cgroup_per_node.lruvec.lrugen.enabled
  cachelint offsetof vmlinux 'lru_gen_folio.refaulted[0][1][2]'
  cachelint sizes vmlinux > sizes.txt   # same lines as pahole --sizes

Exit codes: 0 success, 2 usage or input error.";

#[derive(Subcommand)]
enum Command {
    /// Print struct layouts the way pahole does, with cacheline boundaries,
    /// holes, padding and kernel cacheline groups.
    ///
    /// TYPE is a struct, union or typedef name. When a name has several
    /// layouts in the file (static types of different files), the first is
    /// shown with a note; pick another with NAME#N (the N-th distinct layout)
    /// or NAME@FILE (defined in a file whose path ends with FILE).
    Layout {
        /// ELF file with DWARF: vmlinux, .ko, .o or any program.
        file: PathBuf,
        /// Types to print.
        #[arg(required = true)]
        types: Vec<String>,
        /// Flatten embedded structs: every nested member with its dotted path
        /// (lruvec.lrugen.enabled) and absolute offset.
        #[arg(long)]
        expand: bool,
        /// Output format.
        #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
        format: OutputFormat,
        /// Cacheline size in bytes; default from the ELF machine (64 for
        /// x86_64/arm64/riscv, 128 for ppc64, 256 for s390x).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        cacheline: Option<u64>,
    },
    /// Print the offset, size and cacheline of members, like C's offsetof.
    ///
    /// PATH is TYPE.member.member[index]..., e.g.
    /// mem_cgroup_per_node.lruvec.lrugen.enabled or
    /// lru_gen_folio.refaulted[0][1][2]. Members of anonymous structs and
    /// unions are reached directly, as in C.
    Offsetof {
        /// ELF file with DWARF.
        file: PathBuf,
        /// Member paths.
        #[arg(required = true)]
        paths: Vec<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
        format: OutputFormat,
        /// Cacheline size in bytes; default from the ELF machine.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        cacheline: Option<u64>,
    },
    /// Print every named struct and union as NAME<TAB>SIZE<TAB>HOLES, the
    /// lines `pahole --sizes` prints, so the two can be diffed.
    Sizes {
        /// ELF file with DWARF.
        file: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum OutputFormat {
    Text,
    Json,
}

impl From<OutputFormat> for Format {
    fn from(f: OutputFormat) -> Self {
        match f {
            OutputFormat::Text => Format::Text,
            OutputFormat::Json => Format::Json,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Layout {
            file,
            types,
            expand,
            format,
            cacheline,
        } => commands::layout(&file, &types, expand, format.into(), cacheline),
        Command::Offsetof {
            file,
            paths,
            format,
            cacheline,
        } => commands::offsetof(&file, &paths, format.into(), cacheline),
        Command::Sizes { file } => commands::sizes(&file),
    };
    match result {
        Ok(output) => {
            for note in &output.notes {
                eprintln!("note: {note}");
            }
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`| head`) is not an error worth a message.
            let _ = stdout.write_all(output.stdout.as_bytes());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cachelint: error: {e}");
            ExitCode::from(2)
        }
    }
}
