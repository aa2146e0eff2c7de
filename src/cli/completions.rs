//! `cachelint completions`: a shell's completion script.

use cachelint::render::Output;

/// Print a shell completion script, generated from this command line.
///
/// Save it where the shell looks for completions (bash, zsh, fish: see
/// the examples), or source it from the shell's profile (elvish,
/// powershell: `cachelint completions powershell | Out-String |
/// Invoke-Expression`).
#[derive(clap::Args)]
#[command(after_help = COMPLETIONS_EXAMPLES)]
pub(crate) struct Args {
    /// The shell to complete in.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

const COMPLETIONS_EXAMPLES: &str = "Examples:
  cachelint completions bash > ~/.local/share/bash-completion/completions/cachelint
  cachelint completions zsh > ~/.zfunc/_cachelint     # with fpath+=~/.zfunc before compinit
  cachelint completions fish > ~/.config/fish/completions/cachelint.fish";

/// The script clap_complete writes for the whole command line, `cli`.
pub(crate) fn exec(args: Args, mut cli: clap::Command) -> Output {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cli, "cachelint", &mut script);
    Output {
        stdout: String::from_utf8(script).expect("clap_complete writes UTF-8"),
        ..Output::default()
    }
}
