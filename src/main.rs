//! The `cachelint` command line: parses arguments, runs a command (its
//! arguments and `exec` in [`cli`]), prints, and maps errors to exit code 2.

mod cli;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use anstream::stream::{AsLockedWrite, RawStream};
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

use cachelint::commands::Severity;
use cachelint::render::{self, Highlight, Marked, Tone};

/// Exact struct layouts and cachelines from the DWARF of a vmlinux, module or
/// any ELF object.
#[derive(Parser)]
#[command(name = "cachelint", version, about, long_about = None, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// When to colour diagnostics and messages, as a compiler does.
    ///
    /// auto: on a terminal, unless NO_COLOR is set and not empty (or
    /// TERM=dumb, or CLICOLOR=0); a CLICOLOR_FORCE set and not empty
    /// colours a pipe too. The `FILE:LINE: SEVERITY:` of diagnostics and
    /// the `error:` and `note:` of messages are coloured; JSON, SARIF,
    /// tables and drawings never are.
    #[arg(long, global = true, value_name = "WHEN", value_enum,
          default_value_t = clap::ColorChoice::Auto)]
    color: clap::ColorChoice,
    /// Hide informational messages (`note:` lines on stderr: the
    /// cacheline size a build was read with, roots discovered, a plan's
    /// source). Findings of severity note, warnings and errors stay.
    #[arg(long, short, global = true)]
    quiet: bool,
}

/// The commands, then those that describe the command line itself; each
/// one's arguments, help and `exec` are in its file of [`cli`].
#[derive(Subcommand)]
enum Command {
    Layout(cli::layout::Args),
    Offsetof(cli::offsetof::Args),
    Sizes(cli::sizes::Args),
    Check(cli::check::Args),
    Footprint(cli::footprint::Args),
    Suggest(cli::suggest::Args),
    Draft(cli::draft::Args),
    Offsets(cli::offsets::Args),
    Review(cli::review::Args),
    Diff(cli::diff::Args),
    Diagram(cli::diagram::Args),
    Asserts(cli::asserts::Args),
    Audit(cli::audit::Args),
    Completions(cli::completions::Args),
    Man(cli::man::Args),
}

const EXAMPLES: &str = "Examples:
  cachelint layout vmlinux lruvec
  cachelint layout vmlinux mem_cgroup_per_node --expand
  cachelint offsetof vmlinux mem_cgroup_per_node.lruvec.lrugen.enabled
  cachelint offsetof vmlinux 'lru_gen_folio.refaulted[0][1][2]'
  cachelint sizes vmlinux > sizes.txt   # same lines as pahole --sizes
  cachelint check --rules examples/mm-lru.toml base=vmlinux rt=vmlinux-rt

Exit codes: 0 success (check: no finding at or above --fail-on),
1 check found problems, 2 usage or input error.";

// `suggest` lays out and analyses thousands of candidate layouts, each a
// few thousand small allocations: the system allocator was a third of its
// time (perf), mimalloc a tenth of that.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Help and usage errors are written by or before the parse: they obey
    // a --color read from the arguments first.
    set_color(color_flag(std::env::args_os()));
    let parsed = match Cli::try_parse() {
        Ok(parsed) => parsed,
        Err(e) => return usage_error(e),
    };
    set_color(parsed.color);
    let result = match parsed.command {
        Command::Layout(args) => cli::layout::exec(args),
        Command::Offsetof(args) => cli::offsetof::exec(args),
        Command::Sizes(args) => cli::sizes::exec(args),
        Command::Check(args) => cli::check::exec(args),
        Command::Footprint(args) => cli::footprint::exec(args),
        Command::Suggest(args) => cli::suggest::exec(args),
        Command::Draft(args) => cli::draft::exec(args),
        Command::Offsets(args) => cli::offsets::exec(args),
        Command::Review(args) => cli::review::exec(args),
        Command::Diff(args) => cli::diff::exec(args),
        Command::Diagram(args) => cli::diagram::exec(args),
        Command::Asserts(args) => cli::asserts::exec(args),
        Command::Audit(args) => cli::audit::exec(args),
        Command::Completions(args) => Ok(cli::completions::exec(args, Cli::command())),
        Command::Man(args) => cli::man::exec(args, Cli::command()),
    };
    match result {
        Ok(output) => {
            if !parsed.quiet {
                for note in &output.notes {
                    message(false, Severity::Note, note);
                }
            }
            write_marked(std::io::stdout().lock(), &output.stdout, &output.highlights);
            if output.failed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            message(true, Severity::Error, &e.to_string());
            ExitCode::from(e.exit_code())
        }
    }
}

/// The value of the last `--color WHEN` or `--color=WHEN` before `--`,
/// read ahead of clap's parse; auto without one (clap reports a bad one).
fn color_flag(args: impl IntoIterator<Item = OsString>) -> clap::ColorChoice {
    let mut choice = clap::ColorChoice::Auto;
    let mut args = args.into_iter().skip(1);
    while let Some(arg) = args.next() {
        let value = match arg.to_str() {
            Some("--") => break,
            Some("--color") => args.next(),
            Some(arg) => arg.strip_prefix("--color=").map(OsString::from),
            None => None,
        };
        if let Some(c) = value
            .as_ref()
            .and_then(|v| v.to_str())
            .and_then(|v| clap::ColorChoice::from_str(v, false).ok())
        {
            choice = c;
        }
    }
    choice
}

/// Makes `choice` the one every stream's colour is decided by: ours and
/// clap's help. auto is anstream's: never when NO_COLOR is set and not
/// empty, always when CLICOLOR_FORCE is, never when CLICOLOR=0, else on a
/// terminal that is not TERM=dumb.
fn set_color(choice: clap::ColorChoice) {
    anstream::ColorChoice::write_global(match choice {
        clap::ColorChoice::Auto => anstream::ColorChoice::Auto,
        clap::ColorChoice::Always => anstream::ColorChoice::Always,
        clap::ColorChoice::Never => anstream::ColorChoice::Never,
    });
}

/// Writes `text` to `stream`: painted with its highlights when the stream
/// takes colour, else byte for byte as the renderer wrote it. A closed
/// pipe (`| head`) is not an error worth a message.
fn write_marked<S: RawStream + AsLockedWrite>(mut stream: S, text: &str, highlights: &[Highlight]) {
    let choice = anstream::AutoStream::choice(&stream);
    if highlights.is_empty() || choice == anstream::ColorChoice::Never {
        let _ = stream.write_all(text.as_bytes());
    } else {
        let painted = render::paint(text, highlights);
        let _ = anstream::AutoStream::new(stream, choice).write_all(painted.as_bytes());
    }
}

/// `cachelint: error: TEXT` (`tool`) or `note: TEXT` on standard error,
/// coloured as gcc's messages where standard error takes colour.
fn message(tool: bool, severity: Severity, text: &str) {
    let mut line = Marked::default();
    if tool {
        line.mark("cachelint:", Tone::Location);
        line.push(' ');
    }
    line.mark(&format!("{severity}:"), Tone::Severity(severity));
    line.push_str(&format!(" {text}\n"));
    write_marked(std::io::stderr().lock(), &line.text, &line.highlights);
}

/// clap's usage errors as one `cachelint: error:` line, exit code 2, as
/// every other error; help and version as clap prints them.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let text = e.to_string();
    let first = text.lines().next().unwrap_or_default();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    // The rest of clap's message is the usage line and a pointer to --help.
    let detail: Vec<&str> = text
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more"))
        .collect();
    let detail = match (detail.is_empty(), first.ends_with(':')) {
        (true, _) => String::new(),
        (false, true) => format!(" {}", detail.join(", ")),
        (false, false) => format!("; {}", detail.join(", ")),
    };
    message(
        true,
        Severity::Error,
        &format!("{first}{detail} (see --help)"),
    );
    ExitCode::from(2)
}
