//! The `cachelint` command line: parses arguments, runs a command from the
//! library, prints, and maps errors to exit code 2.

mod cli;

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anstream::stream::{AsLockedWrite, RawStream};
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

use cachelint::commands::ListDepth;
use cachelint::commands::{
    self, AssertsOptions, AuditOptions, Build, CheckOptions, DiagramOptions, DiffOptions,
    DraftOptions, FootprintOptions, LayoutOptions, OffsetofOptions, OffsetsOptions, Selection,
    SuggestOptions,
};
use cachelint::commands::{Class, Kind, Severity};
use cachelint::render::{self, Format, Highlight, Marked, Output, Tone};
use cachelint::report::Checked;
use cachelint::report::asserts::AssertsReport;
use cachelint::report::audit::AuditReport;
use cachelint::report::diagram::{DiagramReport, Style};
use cachelint::report::diff::DiffReport;
use cachelint::report::draft::DraftReport;
use cachelint::report::footprint::FootprintReport;
use cachelint::report::layout::{LayoutReport, OffsetofReport};
use cachelint::report::offsets::OffsetsReport;
use cachelint::report::review::ReviewReport;
use cachelint::report::suggest::SuggestReport;
use cachelint::run::{Run, Setup};

use cli::args::{InputArgs, PerfArgs, PlanArgs, SourceArgs, formats};
use cli::positional::{After, Rest, build_arg, build_first, builds_then, parse_builds};

/// Exact struct layouts and cachelines from the DWARF of a vmlinux, module or
/// any ELF object.
#[derive(Parser)]
#[command(name = "cachelint", version, about, long_about = None, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Toplevel,
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

/// The commands, then those that describe the command line itself.
// One value per run, parsed once: its size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Toplevel {
    #[command(flatten)]
    Lint(Command),
    /// Print a shell completion script, generated from this command line.
    ///
    /// Save it where the shell looks for completions (bash, zsh, fish: see
    /// the examples), or source it from the shell's profile (elvish,
    /// powershell: `cachelint completions powershell | Out-String |
    /// Invoke-Expression`).
    #[command(after_help = COMPLETIONS_EXAMPLES)]
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), generated from this command line.
    ///
    /// Without COMMAND, cachelint(1), which lists the commands; with one,
    /// that command's page, cachelint-COMMAND(1), with all its options.
    #[command(after_help = MAN_EXAMPLES)]
    Man {
        /// The command whose page to print, e.g. check.
        #[arg(value_name = "COMMAND")]
        command: Option<String>,
    },
}

const COMPLETIONS_EXAMPLES: &str = "Examples:
  cachelint completions bash > ~/.local/share/bash-completion/completions/cachelint
  cachelint completions zsh > ~/.zfunc/_cachelint     # with fpath+=~/.zfunc before compinit
  cachelint completions fish > ~/.config/fish/completions/cachelint.fish";

const MAN_EXAMPLES: &str = "Examples:
  cachelint man | man -l -
  cachelint man check | man -l -
  cachelint man > /usr/local/share/man/man1/cachelint.1";

const EXAMPLES: &str = "Examples:
  cachelint layout vmlinux lruvec
  cachelint layout vmlinux mem_cgroup_per_node --expand
  cachelint offsetof vmlinux mem_cgroup_per_node.lruvec.lrugen.enabled
  cachelint offsetof vmlinux 'lru_gen_folio.refaulted[0][1][2]'
  cachelint sizes vmlinux > sizes.txt   # same lines as pahole --sizes
  cachelint check --rules examples/mm-lru.toml base=vmlinux rt=vmlinux-rt

Exit codes: 0 success (check: no finding at or above --fail-on),
1 check found problems, 2 usage or input error.";

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
        input: InputArgs,
        #[command(flatten)]
        perf: PerfArgs,
        #[command(flatten)]
        plan: PlanArgs,
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
        #[arg(long, default_value = "text", value_parser = formats::<OffsetofReport>())]
        format: Format,
        #[command(flatten)]
        input: InputArgs,
        #[command(flatten)]
        plan: PlanArgs,
    },
    /// Print every named struct and union as NAME<TAB>SIZE<TAB>HOLES, the
    /// lines `pahole --sizes` prints, so the two can be diffed.
    Sizes {
        /// ELF file with DWARF or BTF, or a raw BTF file.
        file: PathBuf,
        #[command(flatten)]
        source: SourceArgs,
    },
    /// Find false sharing: fields whose rules say they must not share a
    /// cacheline, and do, in every build (config) given.
    ///
    /// The rules file (TOML) says per struct how each field is used:
    /// hot-read, lockless-write, lock-protected (with its lock), lock or
    /// cold. Kernel net_cachelines tables (.rst) are read too. Lines are
    /// counted from the outermost structs that embed an annotated struct
    /// (found in the binary, or a file's `roots = [...]`, which restricts
    /// only that file's types). Each finding is printed
    /// as FILE:LINE: SEVERITY: [CONFIG] message, at the declaration of the
    /// field.
    #[command(after_help = check_help())]
    Check {
        /// Rules file: TOML (see docs/rules.md), or a kernel
        /// Documentation/networking/net_cachelines/*.rst table. Repeat to
        /// merge several.
        #[arg(long, required = true)]
        rules: Vec<PathBuf>,
        /// Builds to check: FILE, or NAME=FILE to label a config
        /// (rt=vmlinux-rt). Each finding carries its label.
        #[arg(required = true, value_name = "BUILD")]
        builds: Vec<String>,
        /// Report only findings this baseline does not have: an older build
        /// (FILE or NAME=FILE) or a saved `check --format json` report.
        /// Findings match by root, kind, fields and classes, never by
        /// offsets; by config too when the baseline has a config of the
        /// finding's label (else a finding of any of its configs matches).
        /// Repeatable.
        #[arg(long, value_name = "OLD")]
        baseline: Vec<String>,
        /// Output format.
        #[arg(long, default_value = "text", value_parser = formats::<Checked>())]
        format: Format,
        /// Lowest severity that makes the exit code 1.
        #[arg(long, value_enum, default_value_t = Severity::Error)]
        fail_on: Severity,
        /// For every line FIELD occupies (a name, a path from the root, or
        /// TYPE.member), list each annotated neighbour and the verdict on
        /// the pair, flagged or not, with its reason.
        #[arg(long, value_name = "FIELD")]
        explain: Option<String>,
        /// Also report pairs on the two lines of one 128-byte aligned pair
        /// (the spatial prefetcher pulls both), as adjacent-lines notes;
        /// the rules setting is adjacent-lines = true.
        #[arg(long)]
        adjacent_lines: bool,
        /// The kernel source tree the builds come from: locate findings
        /// on builds whose debug info gives no source lines (BTF) in its
        /// headers, and note rules its `__guarded_by` annotations
        /// contradict.
        #[arg(long, value_name = "DIR")]
        source_tree: Option<PathBuf>,
        /// Order the findings by the samples --perf gives their two
        /// fields (most first) instead of by severity.
        #[arg(long, value_name = "ORDER", value_parser = ["severity", "samples"], default_value = "severity")]
        rank: String,
        /// Show the first N diagnostics only: the worst, and of one
        /// severity the hottest (the rules' [heat], which draft writes).
        /// The summary and the exit code still count every finding.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(usize))]
        top: Option<usize>,
        #[command(flatten)]
        input: InputArgs,
        #[command(flatten)]
        perf: PerfArgs,
        #[command(flatten)]
        plan: PlanArgs,
    },
    /// The cachelines each context (path of execution: tx, rx, ...)
    /// touches in a struct, against the fewest its fields fit in.
    ///
    /// Per build, struct and context: the fields the context uses, their
    /// bytes, the lines they occupy (counted from the struct's start) and
    /// the optimum ceil(bytes / line), with the union of the contexts last,
    /// the columns of the netdev analysis behind the 6.8 reorganisation.
    /// Contexts come from net_cachelines tables (tx, rx) or from context
    /// rules (FIELD = { read = [...], write = [...] }). Members a rule
    /// names that a build lacks are counted and listed.
    #[command(after_help = FOOTPRINT_EXAMPLES)]
    Footprint {
        /// Rules file(s), as for `check`.
        #[arg(long, required = true)]
        rules: Vec<PathBuf>,
        /// Builds: FILE or NAME=FILE.
        #[arg(required = true, value_name = "BUILD")]
        builds: Vec<String>,
        /// Structs to count (default: every struct with context rules).
        #[arg(long = "type", value_name = "TYPE")]
        types: Vec<String>,
        /// Output format.
        #[arg(long, default_value = "text", value_parser = formats::<FootprintReport>())]
        format: Format,
        #[command(flatten)]
        input: InputArgs,
        #[command(flatten)]
        perf: PerfArgs,
        #[command(flatten)]
        plan: PlanArgs,
    },
    /// Suggest a member order for TYPE that the rules like better on every
    /// build, and write it as a plan file.
    ///
    /// Each candidate is laid out by the plan engine on every build (a
    /// layout the compiler gives) and scored, in order: errors over every
    /// root of every build, then warnings, then the roots' worst growth in
    /// lines and bytes, then the lines each context touches, then the
    /// members moved (--rank orders them otherwise; --max-growth and
    /// --keep-footprint are limits, ranked first). The search is a hill climb
    /// from the compiled order (a local optimum; the output says how many
    /// layouts it tried). Check, draw or diff the result with --plan.
    /// Without --rules: packing only, the smallest size (then the fewest
    /// members moved) over packing orders and the climb.
    #[command(after_help = SUGGEST_EXAMPLES)]
    Suggest {
        /// Rules file(s), as for `check`. Without them: packing only, the
        /// smallest size the compiler would give, then the fewest moves.
        #[arg(long)]
        rules: Vec<PathBuf>,
        /// Builds (FILE or NAME=FILE), then the struct(s) to reorder: with
        /// several, one report after another (JSON: an array).
        #[arg(required = true, value_name = "BUILD... TYPE...", num_args = 2..)]
        items: Vec<String>,
        /// Write the suggested plan to this file.
        #[arg(long, value_name = "FILE")]
        plan_out: Option<PathBuf>,
        /// Let no root grow by more than LINES cachelines in any build
        /// (ranked before the findings).
        #[arg(long, value_name = "LINES", conflicts_with = "no_grow")]
        max_growth: Option<u64>,
        /// Let no root grow at all: --max-growth 0.
        #[arg(long)]
        no_grow: bool,
        /// With context rules: let no context touch more lines of the
        /// struct than as compiled, in any build (ranked with
        /// --max-growth, before the findings). For a struct already laid
        /// out for its contexts, such as netdev's tcp_sock.
        #[arg(long)]
        keep_footprint: bool,
        /// Keep this member, or every member of this kernel cacheline group
        /// (`__cacheline_group_begin(NAME)`), at its compiled offset in
        /// every build; repeatable.
        #[arg(long, value_name = "MEMBER|GROUP")]
        pin: Vec<String>,
        /// Let the author's isolation move: by default CACHELINE_PADDING
        /// members, members with an explicit alignment of a line or more
        /// (`____cacheline_aligned_in_smp`) and aligned kernel groups'
        /// markers keep their places and no member moves across them; the
        /// report says which.
        #[arg(long)]
        unpin_aligned: bool,
        /// The objectives, most important first: names from errors,
        /// warnings, growth, samples, notes, footprint, moved,
        /// comma-separated; those not named follow in this default order.
        /// `samples` (with `--perf`): perf's samples on the fields of the
        /// pairs left, so that what still shares a line is what perf saw
        /// least. `--rank errors,growth`:
        /// no error first, then the least growth, then fewer warnings.
        /// With the default order a suggestion is never worse than the
        /// compiled layout on any build (errors, then warnings, then
        /// notes; no context in more lines); an order of your own may trade
        /// that away, and says so.
        #[arg(long, value_name = "OBJECTIVE,...")]
        rank: Option<String>,
        /// The kernel source tree the builds come from: also print the
        /// header patch that makes the order (a unified diff for git apply).
        #[arg(long, value_name = "DIR")]
        source_tree: Option<PathBuf>,
        /// Also draw the struct in the first build, compiled against
        /// suggested: what `diagram --plan P BUILD TYPE --compare BUILD`
        /// draws.
        #[arg(long)]
        diagram: bool,
        /// Also print the CACHELINE_ASSERT_GROUP_* check function of the
        /// suggested layout on the first build: what `asserts --plan P
        /// BUILD TYPE` prints.
        #[arg(long)]
        asserts: bool,
        /// Output format.
        #[arg(long, default_value = "text", value_parser = formats::<SuggestReport>())]
        format: Format,
        #[command(flatten)]
        input: InputArgs,
        #[command(flatten)]
        perf: PerfArgs,
    },
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
    /// on the control path (netlink, sysctl, ioctl, *_change) and read by
    /// several functions is hot-read. Every rule has its evidence above it
    /// as comments and its kind after it; evidence that disagrees is
    /// listed, not resolved. The output loads in check unchanged. See
    /// docs/evidence.md.
    #[command(after_help = DRAFT_EXAMPLES)]
    Draft {
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
        input: InputArgs,
        #[command(flatten)]
        perf: PerfArgs,
        #[command(flatten)]
        plan: PlanArgs,
    },
    /// Offsets, sizes and cachelines of paths, one column per build
    /// (config), with the rows whose lines differ marked.
    ///
    /// PATH is TYPE, TYPE.member.member[index], or TYPE.member.* for every
    /// member of a struct.
    #[command(after_help = OFFSETS_EXAMPLES)]
    Offsets {
        /// Builds (FILE or NAME=FILE), then paths.
        #[arg(required = true, value_name = "BUILD... PATH")]
        items: Vec<String>,
        /// Output format.
        #[arg(long, default_value = "text", value_parser = formats::<OffsetsReport>())]
        format: Format,
        #[command(flatten)]
        input: InputArgs,
        #[command(flatten)]
        plan: PlanArgs,
    },
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
    #[command(after_help = REVIEW_EXAMPLES)]
    Review {
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
    },
    /// What changed in structs between two builds, and why.
    ///
    /// Members added, removed,
    /// moved or resized (nested ones by path), where a size change comes
    /// from, and with --rules the annotated fields on other lines and the
    /// findings fixed or introduced. Exit code 1 when anything differs.
    #[command(after_help = DIFF_EXAMPLES)]
    Diff {
        /// The old build: FILE or NAME=FILE.
        old: String,
        /// The new build: FILE or NAME=FILE.
        new: String,
        /// Types to compare (at least one).
        #[arg(value_name = "TYPES")]
        types: Vec<String>,
        /// Rules file(s), as for `check`.
        #[arg(long)]
        rules: Vec<PathBuf>,
        /// How deep changed members are listed: 1 for the type's own
        /// members, 2 for those and the members of one they hold; deeper
        /// changes are counted under their ancestor at that depth. `all`
        /// lists every one.
        #[arg(long, value_name = "N|all", default_value = "2")]
        depth: ListDepth,
        /// Output format.
        #[arg(long, default_value = "text", value_parser = formats::<DiffReport>())]
        format: Format,
        #[command(flatten)]
        input: InputArgs,
        #[command(flatten)]
        plan: PlanArgs,
    },
    /// Draw the cachelines of a struct under the rules: ASCII diagrams a
    /// reviewer can paste into a changelog.
    ///
    /// Lines and byte ranges are counted from the start of TYPE. By default
    /// the lines with findings are drawn (every line when there are none);
    /// --around FIELD draws the lines that hold FIELD and those it shares
    /// with the fields it conflicts with. Boxes are the default for up to
    /// four lines, a strip beyond.
    #[command(after_help = diagram_help())]
    Diagram {
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
        input: InputArgs,
        #[command(flatten)]
        perf: PerfArgs,
        #[command(flatten)]
        plan: PlanArgs,
    },
    /// Print the kernel-style check function of a struct's cacheline
    /// groups, or compare the kernel's own.
    ///
    /// A CACHELINE_ASSERT_GROUP_MEMBER for every tabled member a group
    /// holds, a CACHELINE_ASSERT_GROUP_SIZE per group. Members come from the rules (a net_cachelines table or TOML) and
    /// groups from the build's __cacheline_group_begin/end markers; the
    /// sizes are those measured in the build, not budgets. --against
    /// compares the kernel's own function (in a C file) instead of
    /// printing one.
    #[command(after_help = ASSERTS_EXAMPLES)]
    Asserts {
        /// Rules file(s), as for `check`.
        #[arg(long, required = true)]
        rules: Vec<PathBuf>,
        /// The build: FILE or NAME=FILE.
        #[arg(value_name = "BUILD")]
        build: String,
        /// The struct.
        #[arg(value_name = "TYPE")]
        ty: String,
        /// A C file with the kernel's CACHELINE_ASSERT_GROUP_* of TYPE
        /// (net/ipv4/tcp.c): print how it differs from the table and
        /// the build.
        #[arg(long, value_name = "FILE.c")]
        against: Option<PathBuf>,
        /// Output format.
        #[arg(long, default_value = "text", value_parser = formats::<AssertsReport>())]
        format: Format,
        #[command(flatten)]
        input: InputArgs,
        #[command(flatten)]
        plan: PlanArgs,
    },
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
    /// (system call, softirq, scheduler, page fault, packet path, block
    /// I/O, page reclaim) reaches its function through the calls seen,
    /// and the member is shared: its store is marked or atomic, or some
    /// function reads it with READ_ONCE or writes it so. Each line says
    /// the path from the entry point and who else touches the member.
    /// See docs/audit.md.
    #[command(after_help = AUDIT_EXAMPLES)]
    Audit {
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
        /// Report only stores in files under PATH (relative to the tree;
        /// repeatable). The whole tree is still read: who calls a
        /// function and who shares a member are everywhere.
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
    },
}

const AUDIT_EXAMPLES: &str = "Examples:
  cachelint audit --source-tree ~/linux vmlinux
  cachelint audit --source-tree ~/linux --under mm --under include/linux/mm_types.h vmlinux
  cachelint audit --source-tree ~/linux --rules-out drafted/ vmlinux
  cachelint audit --source-tree ~/linux --top 0 --format json vmlinux > audit.json
  cachelint audit --source-tree ~/linux --perf types.txt vmlinux   # perf's samples rank first

Exit codes: 0 the audit ran (findings or not), 2 usage or input error.";

const ASSERTS_EXAMPLES: &str = "Examples:
  cachelint asserts --rules net_cachelines/tcp_sock.rst vmlinux tcp_sock
  cachelint asserts --rules net_cachelines/tcp_sock.rst vmlinux tcp_sock --against net/ipv4/tcp.c

Exit codes: 0 no difference (or no --against), 1 --against found a failing
assert or drift between the table and the kernel's function, 2 usage or
input error.";

const OFFSETS_EXAMPLES: &str = "Examples:
  cachelint offsets base=vmlinux rt=vmlinux-rt mem_cgroup_per_node.lruvec.lru_lock
  cachelint offsets base=vmlinux rt=vmlinux-rt 'mem_cgroup_per_node.lruvec.lrugen.*'
  cachelint offsets a=build-a/vmlinux b=build-b/vmlinux lruvec lru_gen_folio --format markdown

Arguments that name existing files (FILE or NAME=FILE) are builds; the rest
are paths. Rows whose cachelines differ between builds say 'differ'.";

const FOOTPRINT_EXAMPLES: &str = "Examples:
  cachelint footprint --rules Documentation/networking/net_cachelines/tcp_sock.rst vmlinux
  cachelint footprint --rules net_cachelines/tcp_sock.rst --rules net_cachelines/net_device.rst \\
      v6.1=vmlinux-6.1 v6.12=vmlinux-6.12 --type tcp_sock --format markdown";

const SUGGEST_EXAMPLES: &str = "Examples:
  cachelint suggest --rules examples/mm-lru.toml amd64=vmlinux rt=vmlinux-rt lru_gen_folio
  cachelint suggest --rules mm-lru.toml amd64=vmlinux lru_gen_folio --plan-out p.toml
  cachelint suggest vmlinux page_pool task_struct --plan-out packed.toml
  cachelint diagram --rules mm-lru.toml --plan p.toml amd64=vmlinux mem_cgroup_per_node";

const DRAFT_EXAMPLES: &str = "Examples:
  cachelint draft --perf fixtures/perf/code-with-type.txt --source-tree fixtures/perf fixtures/perf/ring ring
  cachelint draft --source-tree ~/linux vmlinux lru_gen_folio > lru.toml
  perf annotate --code-with-type --stdio > types.txt; cachelint draft --perf types.txt vmlinux page_pool
  cachelint check --rules lru.toml --perf types.txt --rank samples vmlinux";

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

const DIFF_EXAMPLES: &str = "Examples:
  cachelint diff old/vmlinux new/vmlinux mem_cgroup_per_node lruvec lru_gen_folio
  cachelint diff before=old/vmlinux after=new/vmlinux mem_cgroup_per_node --rules mm-lru.toml

Exit codes: 0 no difference, 1 differences, 2 usage or input error.";

const DIAGRAM_EXAMPLES: &str = "Examples:
  cachelint diagram --rules examples/mm-lru.toml vmlinux mem_cgroup_per_node --around refaulted
  cachelint diagram --rules mm-lru.toml vmlinux lru_gen_folio --style strip
  cachelint diagram --rules mm-lru.toml before=old/vmlinux mem_cgroup_per_node \\
      --around refaulted --compare after=new/vmlinux
  cachelint diagram --rules mm-lru.toml vmlinux lruvec --lines 2-3 --style table --format markdown";

const CHECK_EXAMPLES: &str = "Examples:
  cachelint check --rules examples/mm-lru.toml vmlinux
  cachelint check --rules mm-lru.toml base=build/vmlinux rt=build-rt/vmlinux
  cachelint check --rules mm-lru.toml --format json vmlinux > old.json
  cachelint check --rules mm-lru.toml --baseline old.json vmlinux   # new findings only
  cachelint check --rules Documentation/networking/net_cachelines/tcp_sock.rst vmlinux

A rules file (TOML):
  [lru_gen_folio]
  enabled   = \"hot-read\"
  refaulted = \"lockless-write\"
  nr_pages  = { class = \"lock-protected\", lock = \"lruvec.lru_lock\" }
  [lruvec]
  lru_lock  = \"lock\"
  [[allow]]
  fields = [\"lruvec.lru_lock\", \"lruvec.cost_lock\"]
  reason = \"why this pair is accepted\"
";

/// `check`'s examples, then its classes and finding kinds, from the
/// rules' own enums.
fn check_help() -> String {
    let classes: Vec<&str> = Class::SHORTHANDS.iter().map(|c| c.name()).collect();
    let mut kinds = Kind::ALL;
    kinds.sort_by_key(|k| std::cmp::Reverse(k.default_severity()));
    let mut out = format!(
        "{CHECK_EXAMPLES}Classes: {}.\n\
         Output also shows {}: a context rule's field (field = {{ write = [\"CTX\"] }})\n\
         whose writers are one CPU at a time; a rules file does not write it.\n\
         A lock-protected field names its lock: a member of the same struct or\n\
         TYPE.member of the nearest enclosing TYPE, of a kernel lock type\n\
         (spinlock_t, mutex, ...) or with class lock, and not the field itself.\n\n\
         Finding kinds and default severities (change them under [severity]):\n",
        classes.join(", "),
        Class::OwnerWrite
    );
    for k in kinds {
        out.push_str(&format!(
            "  {:<21} {:<37} {}\n",
            k.name(),
            k.pair(),
            k.default_severity()
        ));
    }
    out.push_str(
        "\nExit codes: 0 clean, 1 findings at or above --fail-on, 2 usage or input error.",
    );
    out
}

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
fn parse_lines(text: &str) -> Result<(u64, u64), String> {
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

/// Runs the command and writes its report.
fn run(command: Command) -> cachelint::error::Result<Output> {
    match command {
        Command::Layout {
            file,
            types,
            expand,
            macros,
            format,
            input,
            perf,
            plan,
        } => {
            let input = input.with_perf(perf).with_plan(plan);
            let text = file.to_string_lossy();
            build_first(&text, &text, After::Then("the types"))?;
            let opts = LayoutOptions {
                types,
                expand,
                macros,
            };
            let run = input.open(Vec::new(), vec![Build::file(&file)], |r| opts.want(r))?;
            render::output(&commands::layout(&run, &opts)?, format, "layout")
        }
        Command::Offsetof {
            file,
            paths,
            format,
            input,
            plan,
        } => {
            let input = input.with_plan(plan);
            let text = file.to_string_lossy();
            build_first(&text, &text, After::Then("the paths"))?;
            let opts = OffsetofOptions { paths };
            let run = input.open(Vec::new(), vec![Build::file(&file)], |r| opts.want(r))?;
            render::output(&commands::offsetof(&run, &opts)?, format, "offsetof")
        }
        Command::Sizes { file, source } => {
            let setup = Setup::files(
                Vec::new(),
                vec![Build::file(&file)],
                source.source()?.into(),
            )?;
            let run = Run::open(setup, commands::sizes_want)?;
            render::output(&commands::sizes(&run)?, Format::Text, "sizes")
        }
        Command::Check {
            rules,
            builds,
            baseline,
            format,
            fail_on,
            explain,
            adjacent_lines,
            rank,
            source_tree,
            top,
            input,
            perf,
            plan,
        } => {
            let input = input.with_perf(perf).with_plan(plan);
            let opts = CheckOptions {
                fail_on,
                explain,
                adjacent_lines,
                by_samples: rank == "samples",
                source_tree,
                top,
            };
            let then = After::Only("check takes the types from the rules");
            let mut setup = input.setup(rules, parse_builds(&builds, then)?)?;
            setup.baseline = baseline
                .iter()
                .map(|b| Build::parse(b))
                .collect::<cachelint::error::Result<_>>()?;
            let run = Run::open(setup, |r| opts.want(r))?;
            render::output(&commands::check(&run, &opts)?, format, "check")
        }
        Command::Footprint {
            rules,
            builds,
            types,
            format,
            input,
            perf,
            plan,
        } => {
            let input = input.with_perf(perf).with_plan(plan);
            let opts = FootprintOptions { types };
            let then = After::Only("name a type with --type TYPE");
            let run = input.open(rules, parse_builds(&builds, then)?, |r| opts.want(r))?;
            render::output(
                &commands::footprint_report(&run, &opts)?,
                format,
                "footprint",
            )
        }
        Command::Suggest {
            rules,
            items,
            plan_out,
            max_growth,
            no_grow,
            keep_footprint,
            pin,
            unpin_aligned,
            rank,
            source_tree,
            diagram,
            asserts,
            format,
            input,
            perf,
        } => {
            let input = input.with_perf(perf);
            let (builds, types) = builds_then(&items, Rest::Types)?;
            let opts = SuggestOptions {
                types,
                plan_out,
                max_growth: if no_grow { Some(0) } else { max_growth },
                keep_footprint,
                pin,
                unpin_aligned,
                rank,
                source_tree,
                diagram,
                asserts,
            };
            let run = input.open(rules, builds, |r| opts.want(r))?;
            render::output(&commands::suggest(&run, &opts)?, format, "suggest")
        }
        Command::Draft {
            items,
            source_tree,
            arch,
            index,
            format,
            input,
            perf,
            plan,
        } => {
            let input = input.with_perf(perf).with_plan(plan);
            let (builds, types) = builds_then(&items, Rest::Types)?;
            let opts = DraftOptions {
                types,
                source_tree,
                arch,
                index,
            };
            let run = input.open(Vec::new(), builds, |r| opts.want(r))?;
            render::output(&commands::draft(&run, &opts)?, format, "draft")
        }
        Command::Offsets {
            items,
            format,
            input,
            plan,
        } => {
            let input = input.with_plan(plan);
            let (builds, paths) = builds_then(&items, Rest::Paths)?;
            let opts = OffsetsOptions { paths };
            let run = input.open(Vec::new(), builds, |r| opts.want(r))?;
            render::output(&commands::offsets(&run, &opts)?, format, "offsets")
        }
        Command::Review {
            tree,
            base,
            variants,
            types,
            rules,
            no_stores,
            format,
            input,
        } => {
            let cacheline = input.cacheline;
            let mut review =
                cachelint::review::Review::read(&tree, &base, variants.as_deref(), &types)?;
            review.stores = !no_stores;
            let mut setup = Setup::review(rules, &review, input.reading()?);
            setup.cacheline = cacheline;
            let run = Run::open(setup, |rules| Ok(commands::review_want(&review, rules)))?;
            render::output(&commands::review(&run, &review)?, format, "review")
        }
        Command::Diff {
            old,
            new,
            types,
            rules,
            depth,
            format,
            input,
            plan,
        } => {
            let input = input.with_plan(plan);
            let opts = DiffOptions { types, depth };
            let builds = vec![
                build_arg(&old, After::Then("the types"))?,
                build_arg(&new, After::Then("the types"))?,
            ];
            if opts.types.is_empty() {
                return Err(cachelint::error::Error::Usage(
                    "no type given: diff takes two builds (OLD NEW), then the types".into(),
                ));
            }
            let run = input.open(rules, builds, |r| opts.want(r))?;
            render::output(&commands::diff(&run, &opts)?, format, "diff")
        }
        Command::Diagram {
            rules,
            build,
            ty,
            lines,
            around,
            width,
            style,
            format,
            compare,
            explain,
            input,
            perf,
            plan,
        } => {
            let input = input.with_perf(perf).with_plan(plan);
            let opts = DiagramOptions {
                explain,
                ty,
                selection: match (lines, around.is_empty()) {
                    (Some((a, b)), _) => Selection::Lines(a, b),
                    (None, false) => Selection::Around(around),
                    (None, true) => Selection::Flagged,
                },
                width: width as usize,
                style,
            };
            let mut builds = vec![build_arg(&build, After::Then("the type"))?];
            builds.extend(compare.as_deref().map(Build::parse).transpose()?);
            let run = input.open(rules, builds, |r| opts.want(r))?;
            render::output(&commands::diagram(&run, &opts)?, format, "diagram")
        }
        Command::Asserts {
            rules,
            build,
            ty,
            against,
            format,
            input,
            plan,
        } => {
            let input = input.with_plan(plan);
            let opts = AssertsOptions { ty, against };
            let builds = vec![build_arg(&build, After::Then("the type"))?];
            let run = input.open(rules, builds, |r| opts.want(r))?;
            render::output(&commands::asserts(&run, &opts)?, format, "asserts")
        }
        Command::Audit {
            builds,
            source_tree,
            arch,
            under,
            top,
            rules_out,
            format,
            perf,
            input,
        } => {
            let input = input.with_perf(perf);
            let opts = AuditOptions {
                source_tree,
                arch,
                under,
                top,
                rules_out,
            };
            let then = After::Only("the tree is --source-tree DIR");
            let builds = parse_builds(&builds, then)?;
            let run = input.open(Vec::new(), builds, |r| opts.want(r))?;
            let report = commands::audit(&run, &opts)?;
            if let Some(dir) = &opts.rules_out {
                write_rules(dir, &report.rules)?;
            }
            render::output(&report, format, "audit")
        }
    }
}

/// `audit --rules-out DIR`: each drafted rules file, as DIR/STRUCT.toml.
fn write_rules(dir: &std::path::Path, rules: &[(String, String)]) -> cachelint::error::Result<()> {
    let failed = |e: std::io::Error| {
        cachelint::error::Error::Usage(format!("--rules-out {}: {e}", dir.display()))
    };
    std::fs::create_dir_all(dir).map_err(failed)?;
    for (name, text) in rules {
        std::fs::write(dir.join(format!("{name}.toml")), text).map_err(failed)?;
    }
    Ok(())
}

// `suggest` lays out and analyses thousands of candidate layouts, each a
// few thousand small allocations: the system allocator was a third of its
// time (perf), mimalloc a tenth of that.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Help and usage errors are written by or before the parse: they obey
    // a --color read from the arguments first.
    set_color(color_flag(std::env::args_os()));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    set_color(cli.color);
    let result = match cli.command {
        Toplevel::Lint(command) => run(command),
        Toplevel::Completions { shell } => Ok(completions(shell)),
        Toplevel::Man { command } => man(command.as_deref()),
    };
    match result {
        Ok(output) => {
            if !cli.quiet {
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
            ExitCode::from(2)
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

/// `completions SHELL`: the script clap_complete writes for the whole
/// command line.
fn completions(shell: clap_complete::Shell) -> Output {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "cachelint", &mut script);
    Output {
        stdout: String::from_utf8(script).expect("clap_complete writes UTF-8"),
        ..Output::default()
    }
}

/// `man [COMMAND]`: cachelint(1), or cachelint-COMMAND(1), as clap_mangen
/// writes them from the command line.
fn man(command: Option<&str>) -> cachelint::error::Result<Output> {
    // `help` is a subcommand at run time, not a page.
    let mut cli = Cli::command().disable_help_subcommand(true);
    cli.build();
    let page = match command {
        None => cli,
        Some(name) => cli.find_subcommand(name).cloned().ok_or_else(|| {
            let names: Vec<&str> = cli.get_subcommands().map(|c| c.get_name()).collect();
            cachelint::error::Error::Usage(format!(
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
