//! `cachelint diagram`: a struct's cachelines drawn under the rules.

use std::path::PathBuf;

use cachelint::commands::{self, Build, Class, DiagramOptions, Selection};
use cachelint::error::Result;
use cachelint::render::{self, Format, Output};
use cachelint::report::diagram::{DiagramReport, Style};

use super::args::{MeasuredInputArgs, formats};
use super::positional::{After, build_arg};

/// Draw the cachelines of a struct under the rules: ASCII diagrams a
/// reviewer can paste into a changelog.
///
/// Lines and byte ranges are counted from the start of TYPE. By default
/// the lines with findings are drawn (every line when there are none);
/// --around FIELD draws the lines that hold FIELD and those it shares
/// with the fields it conflicts with. Boxes are the default for up to
/// four lines, a strip beyond.
#[derive(clap::Args)]
#[command(after_help = diagram_help())]
pub(crate) struct Args {
    /// Rules file(s), as for `check`.
    #[arg(long, required = true)]
    rules: Vec<PathBuf>,
    /// The build: FILE or NAME=FILE.
    #[arg(value_name = "BUILD")]
    build: String,
    /// The struct to draw.
    #[arg(value_name = "TYPE")]
    ty: String,
    /// Lines to draw: A-B or A (from 0).
    #[arg(long, value_parser = parse_lines, conflicts_with = "around")]
    lines: Option<(u64, u64)>,
    /// Draw the lines around these fields (a name, a dotted path, or
    /// TYPE.member). Repeatable.
    #[arg(long, value_name = "FIELD")]
    around: Vec<String>,
    /// Maximum width in columns.
    #[arg(long, default_value_t = commands::DEFAULT_WIDTH as u64, value_parser = clap::value_parser!(u64).range(40..=1000))]
    width: u64,
    /// Drawing style; default boxes for up to 4 lines, else strip.
    #[arg(long, value_enum)]
    style: Option<Style>,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = formats::<DiagramReport>())]
    format: Format,
    /// Draw the same fields in this build too (FILE or NAME=FILE), then
    /// sum up the lines, findings and sizes that changed.
    #[arg(long, value_name = "OTHER_BUILD")]
    compare: Option<String>,
    /// Under the drawing, list for every line FIELD occupies each
    /// annotated neighbour and the verdict on the pair, with its reason.
    #[arg(long, value_name = "FIELD")]
    explain: Option<String>,
    #[command(flatten)]
    input: MeasuredInputArgs,
}

const DIAGRAM_EXAMPLES: &str = "Examples:
  cachelint diagram --rules examples/mm-lru.toml vmlinux mem_cgroup_per_node --around refaulted
  cachelint diagram --rules mm-lru.toml vmlinux lru_gen_folio --style strip
  cachelint diagram --rules mm-lru.toml before=old/vmlinux mem_cgroup_per_node \\
      --around refaulted --compare after=new/vmlinux
  cachelint diagram --rules mm-lru.toml vmlinux lruvec --lines 2-3 --style table --format markdown";

/// `diagram`'s examples, then the letters it draws classes with.
fn diagram_help() -> String {
    let mut classes = Class::ALL;
    classes.sort_by_key(|c| c.disruption());
    let letters: Vec<String> = classes
        .iter()
        .map(|c| format!("{} {}", c.letter(), c.name()))
        .collect();
    format!(
        "{DIAGRAM_EXAMPLES}\n\nLetters: {},\n- not annotated, . hole or padding.",
        letters.join(", ")
    )
}

/// `A-B` or `A`.
fn parse_lines(text: &str) -> std::result::Result<(u64, u64), String> {
    let bad = || format!("'{text}' is not a line range: write A-B or A (line numbers from 0)");
    match text.split_once('-') {
        Some((a, b)) => Ok((
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        )),
        None => {
            let a = text.trim().parse().map_err(|_| bad())?;
            Ok((a, a))
        }
    }
}

/// Draws the struct's lines in the build (and the other) and writes them.
pub(crate) fn exec(args: Args) -> Result<Output> {
    let input = args.input.input();
    let opts = DiagramOptions {
        explain: args.explain,
        ty: args.ty,
        selection: match (args.lines, args.around.is_empty()) {
            (Some((a, b)), _) => Selection::Lines(a, b),
            (None, false) => Selection::Around(args.around),
            (None, true) => Selection::Flagged,
        },
        width: args.width as usize,
        style: args.style,
    };
    let mut builds = vec![build_arg(&args.build, After::Then("the type"))?];
    builds.extend(args.compare.as_deref().map(Build::parse).transpose()?);
    let run = input.open(args.rules, builds, |r| opts.want(r))?;
    render::output(&commands::diagram(&run, &opts)?, args.format, "diagram")
}
