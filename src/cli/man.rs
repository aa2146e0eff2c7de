//! `cachelint man`: the manual pages.

use cachelint::error::{Error, Result};
use cachelint::render::Output;

/// Print the manual page (roff), generated from this command line.
///
/// Without COMMAND, cachelint(1), which lists the commands; with one,
/// that command's page, cachelint-COMMAND(1), with all its options.
#[derive(clap::Args)]
#[command(after_help = MAN_EXAMPLES)]
pub(crate) struct Args {
    /// The command whose page to print, e.g. check.
    #[arg(value_name = "COMMAND")]
    command: Option<String>,
}

const MAN_EXAMPLES: &str = "Examples:
  cachelint man | man -l -
  cachelint man check | man -l -
  cachelint man > /usr/local/share/man/man1/cachelint.1";

/// cachelint(1), or cachelint-COMMAND(1), as clap_mangen writes them from
/// the whole command line, `cli`.
pub(crate) fn exec(args: Args, cli: clap::Command) -> Result<Output> {
    // `help` is a subcommand at run time, not a page.
    let mut cli = cli.disable_help_subcommand(true);
    cli.build();
    let page = match args.command.as_deref() {
        None => cli,
        Some(name) => cli.find_subcommand(name).cloned().ok_or_else(|| {
            let names: Vec<&str> = cli.get_subcommands().map(|c| c.get_name()).collect();
            Error::Usage(format!(
                "no command '{name}': man takes one of {}",
                names.join(", ")
            ))
        })?,
    };
    let mut roff = Vec::new();
    // A command's page names the tool and its version in the footer, as
    // cachelint(1) does (clap_mangen would write the command's own name).
    clap_mangen::Man::new(page)
        .source(format!("cachelint {}", env!("CARGO_PKG_VERSION")))
        .render(&mut roff)
        .expect("writing to memory");
    Ok(Output {
        stdout: String::from_utf8(roff).expect("clap_mangen writes UTF-8"),
        ..Output::default()
    })
}
