//! A run: the rules read once, every build opened once (in parallel), and
//! what the commands need of each build kept as plain data — the decoded
//! types, the types present, the rules' aliases as the build names them,
//! the roots, the located notes. Commands are leaves over a [`Run`]: each
//! is `fn x(&Run, &XOptions) -> Result<XReport>`, and none calls another;
//! what two commands share is an operation here (analyse roots, the rules'
//! fit, a layout re-laid out under a plan, a diagram, a check function).
//!
//! A build is anything that implements `Input`: today a file with DWARF
//! or BTF ([`crate::load::Build`]). A new kind of build (one compiled for
//! the occasion, say) implements `Input` and every command reads it
//! unchanged.

mod analyze;
mod asserts;
mod diagram;
mod draft;
mod evidence;
mod fit;
mod line;
mod open;
mod parallel;
mod variant;

pub(crate) use analyze::{RootAnalysis, Roots, analyze, explained, renamed};
pub(crate) use asserts::{check_function, locate};
pub use diagram::{DEFAULT_WIDTH, MIN_WIDTH, Selection};
pub(crate) use diagram::{DrawSpec, draw};
pub(crate) use draft::Draft;
pub(crate) use fit::rules_fit;
pub(crate) use parallel::in_order;

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::evidence::perf::PerfFile;
use crate::kconfig::KernelConfig;
use crate::load::lookup::{Located, TypeSpec};
use crate::load::sizes::SizeLine;
use crate::load::{Build, Loaded, Reading};
use crate::model::{TypeId, TypeTable};
use crate::plan::Plan;
use crate::plan::abi::Abi;
use crate::plan::planner::Planner;
use crate::rules::{Location, Rules};
use crate::variant::Wanted;

/// A kind of build: something that can be opened as a [`Loaded`] file of
/// types. The run layer asks it for nothing else, so a build made another
/// way (compiled from a configured tree, say) enters every command by
/// implementing this.
pub(crate) trait Input: Send + Sync {
    /// Its label and the file its types are read from (for messages).
    fn build(&self) -> &Build;

    /// What tells two inputs apart: inputs of one key are opened once.
    fn key(&self) -> String {
        self.build().path.display().to_string()
    }

    /// The same build made again with `patch` (a `-p1` patch of its
    /// source tree, as text) applied, when it can be made again (a
    /// variant); `None` for a file.
    fn with_patch(&self, _patch: &str) -> Option<Result<Arc<dyn Input>>> {
        None
    }

    /// Opens it as `reading` says and runs `f` on the loaded file (which
    /// keeps what it reads). `wanted` is every type the run will look up,
    /// for an input made for the occasion (a variant compiles exactly
    /// those); a file ignores it.
    fn open(
        &self,
        reading: &Reading,
        wanted: &Wanted,
        f: &mut dyn FnMut(&mut Loaded<'_, '_>) -> Result<()>,
    ) -> Result<()>;
}

impl Input for Build {
    fn build(&self) -> &Build {
        self
    }

    fn open(
        &self,
        reading: &Reading,
        _: &Wanted,
        f: &mut dyn FnMut(&mut Loaded<'_, '_>) -> Result<()>,
    ) -> Result<()> {
        crate::load::open(self, reading, f)
    }
}

/// What a run is made of, as the command line gives it.
pub struct Setup {
    /// Rules files (TOML or net_cachelines tables); none is no rules.
    pub rules: Vec<PathBuf>,
    /// The builds, in the order given.
    pub(crate) builds: Vec<Box<dyn Input>>,
    /// `check --baseline`: builds or saved JSON reports, in the order
    /// given; the builds among them are opened like the others.
    pub baseline: Vec<Build>,
    /// Where types come from.
    pub reading: Reading,
    /// `--plan`: the builds laid out as planned, on a copy of their
    /// compiled types, instead of as compiled.
    pub plan: Option<Arc<Plan>>,
    /// `--cacheline`.
    pub cacheline: Option<u64>,
    /// `--perf`: perf's data-type outputs (`perf report -s
    /// type,typeoff`, `perf annotate --data-type` or `--code-with-type`).
    pub perf: Vec<PathBuf>,
    /// A variant that cannot be built is kept, as a build that failed
    /// (its `failed` reason), instead of failing the run: a review
    /// reports a patch that breaks the compile on some arch.
    pub keep_failed_variants: bool,
}

impl Setup {
    /// A setup of `builds` and no baseline. A build whose file is a
    /// variant file ([`is_variant_file`]) is its variants: one labelled
    /// as the build, several as their names (`LABEL.NAME` under a label
    /// given as `LABEL=FILE`); `FILE#NAME` is its variant NAME alone.
    pub fn files(rules: Vec<PathBuf>, builds: Vec<Build>, reading: Reading) -> Result<Setup> {
        let mut inputs: Vec<Box<dyn Input>> = Vec::new();
        for mut build in builds {
            // `FILE#NAME`: one variant of a variant file.
            let mut only = None;
            if let Some((file, name)) = one_variant(&build.path) {
                only = Some(name.clone());
                let labelled = build.config != Build::file(&build.path).config;
                build.path = file;
                if !labelled {
                    build.config = name;
                }
            }
            if !crate::variant::is_variant_file(&build.path) {
                inputs.push(Box::new(build));
                continue;
            }
            let mut variants = crate::variant::read(&build.path)?;
            if let Some(name) = &only {
                let names: Vec<String> = variants.iter().map(|v| v.name().to_owned()).collect();
                variants.retain(|v| v.name() == name);
                if variants.is_empty() {
                    return Err(Error::Usage(format!(
                        "{} has no variant '{name}' (it has {})",
                        build.path.display(),
                        names.join(", ")
                    )));
                }
            }
            let labelled = only.is_some() || build.config != Build::file(&build.path).config;
            let several = variants.len() > 1;
            for v in variants {
                let label = match (labelled, several) {
                    (true, false) => build.config.clone(),
                    (true, true) => format!("{}.{}", build.config, v.name()),
                    (false, _) => v.name().to_owned(),
                };
                inputs.push(Box::new(variant::VariantInput::new(label, v)));
            }
        }
        Ok(Setup {
            rules,
            builds: inputs,
            baseline: Vec::new(),
            reading,
            plan: None,
            cacheline: None,
            keep_failed_variants: false,
            perf: Vec::new(),
        })
    }
}

impl Setup {
    /// The setup of a review: each of its variants at the base, then at
    /// HEAD, labelled `NAME.base` and `NAME.head`.
    pub fn review(rules: Vec<PathBuf>, review: &crate::review::Review, reading: Reading) -> Setup {
        let mut builds: Vec<Box<dyn Input>> = Vec::new();
        for (head, base) in &review.variants {
            let (base_label, head_label) = crate::review::Review::labels(head.name());
            builds.push(Box::new(variant::VariantInput::new(
                base_label,
                base.clone(),
            )));
            builds.push(Box::new(variant::VariantInput::new(
                head_label,
                head.clone(),
            )));
        }
        Setup {
            rules,
            builds,
            baseline: Vec::new(),
            reading,
            plan: None,
            cacheline: None,
            keep_failed_variants: true,
            perf: Vec::new(),
        }
    }
}

/// The structs and unions `files` sampled, by tag (`struct ring` →
/// `ring`).
fn perf_types(files: &[PerfFile]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in files {
        for s in &f.samples {
            let name =
                s.ty.strip_prefix("struct ")
                    .or_else(|| s.ty.strip_prefix("union "));
            if let Some(name) = name
                && !out.iter().any(|o| o == name)
            {
                out.push(name.to_owned());
            }
        }
    }
    out
}

/// True when `path` is a variant file (TOML that gives a `tree`): a build
/// described instead of given. See docs/variants.md.
pub fn is_variant_file(path: &std::path::Path) -> bool {
    crate::variant::is_variant_file(path)
}

/// Whether a positional argument names a build: NAME=FILE, a path with a
/// '/' (which no type name or member path holds), or a file that is ELF,
/// BTF or a variant file, or `FILE#NAME`, one variant of a file. A bare
/// name whose file is something else (a text file `lruvec` in the current
/// directory) is not: it stays a type or a path. Every command that takes
/// builds first splits its arguments with this.
pub fn is_build_arg(arg: &str) -> bool {
    let path = std::path::Path::new(arg);
    arg.contains('=')
        || arg.contains('/')
        || crate::load::Build::is_debug_file(path)
        || is_variant_file(path)
        || one_variant(path).is_some()
}

/// The variant file and the name of `FILE#NAME`, one variant of the file
/// (when no file is named so).
pub fn one_variant(path: &std::path::Path) -> Option<(PathBuf, String)> {
    if path.exists() {
        return None;
    }
    let text = path.to_string_lossy();
    let (file, name) = text.rsplit_once('#')?;
    let file = PathBuf::from(file);
    is_variant_file(&file).then(|| (file, name.to_owned()))
}

/// What a command needs read from each build, decided from its options
/// and the rules before any build is opened.
#[derive(Clone, Debug, Default)]
pub struct Want {
    /// Types that must exist (`NAME`, `NAME#N`, `NAME@FILE`), resolved in
    /// order; one a build lacks is an error naming the build.
    pub specs: Vec<TypeSpec>,
    /// Types read when the build has them (the rules' types, their
    /// aliases and roots are always read).
    pub names: Vec<String>,
    /// Discover the rules' roots: the outermost structs that embed an
    /// annotated type.
    pub roots: bool,
    /// Types whose outermost embedding structs are roots too (a review's
    /// touched structs), rules or not.
    pub embedders_of: Vec<String>,
    /// `pahole --sizes` lines of every struct and union.
    pub sizes: bool,
    /// The build's kernel config.
    pub kernel_config: bool,
    /// Which struct each member of every struct of the build leads to:
    /// the source reader follows a member access through whatever struct
    /// the code declares (`vma->vm_mm->mm_lock_seq` reaches `mm_struct`
    /// through `vm_area_struct`, which a draft of `mm_struct` does not
    /// decode).
    pub member_types: bool,
    /// The source files and functions the build has (DWARF only).
    pub built: bool,
    /// A kernel tree: the structs its code writes from many CPUs at once
    /// are read too, while the build is open: those with a lockless or
    /// marked store on a fast path, from the tree's evidence index (built
    /// then when missing). Needs `member_types`.
    pub contended_in: Option<ContendedIn>,
}

/// Where [`Want::contended_in`] looks for the structs many CPUs write.
#[derive(Clone, Debug, Default)]
pub struct ContendedIn {
    /// The kernel tree.
    pub tree: PathBuf,
    /// The machine whose `arch/` to read (else the build's).
    pub arch: Option<String>,
    /// Only the stores made in files under these paths of the tree count
    /// (every file when empty).
    pub under: Vec<PathBuf>,
}

/// One build as read: owned data, usable after its file is closed.
pub struct Decoded {
    /// The build's cacheline size ([`line`]: its config, its padding's
    /// alignment, else its ELF machine's).
    pub(crate) build_line: u64,
    /// The machine's C ABI, for re-layouts.
    pub(crate) abi: Abi,
    /// Every type decoded for the lookups, as compiled.
    pub(crate) table: TypeTable,
    /// The types asked for by name (and the rules'), present in the
    /// build; the discovered roots among them.
    pub(crate) present: HashMap<String, Located>,
    /// [`Want::specs`], resolved in order.
    pub(crate) found: Vec<Located>,
    /// The types found by name (specs, names, the rules'), without the
    /// discovered roots.
    by_name: Vec<TypeId>,
    /// A rules type the build has under an alias: its name → the alias.
    pub(crate) renames: HashMap<String, String>,
    /// A member rule the build has under a `was` name: see
    /// [`crate::rules::MemberRenames`].
    pub(crate) member_renames: crate::rules::MemberRenames,
    /// The rules' roots present, then those discovered, in order.
    pub(crate) roots: Vec<String>,
    /// The outermost structs embedding [`Want::embedders_of`] (each one
    /// itself when nothing embeds it).
    pub(crate) embedders: Vec<String>,
    /// What the loader has to say (untagged).
    pub(crate) notes: Vec<String>,
    /// [`Want::kernel_config`].
    pub(crate) kernel_config: Option<KernelConfig>,
    /// [`Want::sizes`].
    pub(crate) sizes: Vec<SizeLine>,
    /// [`Want::member_types`].
    pub(crate) member_types: Option<crate::member_types::MemberTypes>,
    /// [`Want::built`], when the build's format tells.
    pub(crate) built: Option<crate::dwarf::functions::Built>,
    /// [`Want::contended_in`]: the structs the tree writes from many CPUs
    /// that the build has, with their lockless stores, most first.
    pub(crate) contended: Vec<(String, usize)>,
    /// Why the build could not be made (a variant's failed compile), when
    /// the setup keeps such builds; its types are then empty.
    pub(crate) failed: Option<String>,
    /// Why `--plan` cannot lay this build out (a planned struct it lacks:
    /// where the plan names it, and the message), told when a planned
    /// layout is asked for.
    plan_missing: Option<(Location, String)>,
}

/// One build of a run: its label and what was read from it (shared with
/// the other builds of the same file).
pub struct Opened {
    /// The label and file, as given.
    pub(crate) build: Build,
    data: Arc<Decoded>,
    input: Arc<dyn Input>,
}

impl std::ops::Deref for Opened {
    type Target = Decoded;

    fn deref(&self) -> &Decoded {
        &self.data
    }
}

/// A baseline item of `check`: a build opened with the others, or a saved
/// report to read.
pub enum Baseline {
    /// A build.
    Build(Opened),
    /// A JSON report file.
    Report(PathBuf),
}

/// Everything a command runs on.
pub struct Run {
    /// The rules as read (empty when no rules file was given).
    pub(crate) rules: Rules,
    /// The rules files.
    pub(crate) rules_files: Vec<PathBuf>,
    /// The builds, in the order given.
    pub(crate) builds: Vec<Opened>,
    /// `check`'s baseline, in the order given.
    pub(crate) baseline: Vec<Baseline>,
    /// `--plan`.
    pub(crate) plan: Option<Arc<Plan>>,
    /// `--cacheline`.
    pub(crate) cacheline: Option<u64>,
    /// How the files are read again, for a message (`did_you_mean`).
    reading: Reading,
    /// `--perf`: perf's outputs, each read once.
    pub(crate) perf: Vec<PerfFile>,
    /// When the run began, before its builds were opened.
    pub(crate) started: std::time::Instant,
}

impl Run {
    /// Reads the rules, asks `want` what the command needs of them (it may
    /// refuse the rules' shape before any build is opened), and opens
    /// every build once, in parallel; builds of the same file share what
    /// was read.
    pub fn open(setup: Setup, want: impl FnOnce(&Rules) -> Result<Want>) -> Result<Run> {
        let started = std::time::Instant::now();
        let rules = match setup.rules.is_empty() {
            true => Rules::default(),
            false => Rules::load(&setup.rules)?,
        };
        let perf = setup
            .perf
            .iter()
            .map(|p| PerfFile::read(p))
            .collect::<Result<Vec<_>>>()?;
        let mut want = want(&rules)?;
        // The types perf sampled, read when a build has them: samples are
        // placed on a struct through the types that embed it.
        for name in perf_types(&perf) {
            if !want.names.contains(&name) {
                want.names.push(name);
            }
        }
        // A baseline item is a build when its file starts as one; the
        // others are reports, which `check` reads.
        let (baseline_builds, reports): (Vec<Build>, Vec<Build>) = setup
            .baseline
            .iter()
            .cloned()
            .partition(|b| Build::is_debug_file(&b.path));
        let given = setup.builds.len();
        let inputs: Vec<Arc<dyn Input>> = setup
            .builds
            .into_iter()
            .chain(
                baseline_builds
                    .into_iter()
                    .map(|b| Box::new(b) as Box<dyn Input>),
            )
            .map(Arc::from)
            .collect();
        let plan = setup.plan.as_ref();
        let keep = setup.keep_failed_variants;
        let mut builds = open::all(&inputs, &rules, &want, &setup.reading, plan, keep)?;
        let mut opened = builds.split_off(given).into_iter();
        let baseline = setup
            .baseline
            .into_iter()
            .map(|b| match reports.contains(&b) {
                false => Baseline::Build(opened.next().expect("one opened per baseline build")),
                true => Baseline::Report(b.path),
            })
            .collect();
        Ok(Run {
            rules,
            rules_files: setup.rules,
            builds,
            baseline,
            plan: setup.plan,
            cacheline: setup.cacheline,
            reading: setup.reading,
            perf,
            started,
        })
    }

    /// The run's one build, for a command that reads one (the command
    /// line gives it exactly one).
    pub(crate) fn single(&self, command: &str) -> Result<&Opened> {
        match self.builds.as_slice() {
            [one] => Ok(one),
            _ => Err(Error::Usage(format!("{command} reads one build"))),
        }
    }

    /// What was read of each `--perf` file, as a report's `read` lines
    /// say it: its format, its typed rows, its event's precision.
    pub(crate) fn perf_read(&self) -> Vec<String> {
        self.perf
            .iter()
            .map(|f| {
                format!(
                    "perf {}: {} ({} typed rows); {}",
                    f.path.display(),
                    f.format.command(),
                    f.samples.len(),
                    f.skid()
                )
            })
            .collect()
    }

    /// What each `--perf` file's samples are worth: its format and its
    /// event, precise or skidding (a note for every command that uses
    /// them).
    pub(crate) fn perf_notes(&self) -> Vec<String> {
        self.perf
            .iter()
            .map(|f| format!("{}: {}; {}", f.path.display(), f.format.command(), f.skid()))
            .collect()
    }

    /// The run's first build, for what is read once for all of them.
    pub(crate) fn first(&self) -> Result<&Opened> {
        self.builds
            .first()
            .ok_or_else(|| Error::Usage("no build given".into()))
    }

    /// The line size for `opened` under the rules: `--cacheline`, else the
    /// rules' `cacheline`, else the build's.
    pub(crate) fn line(&self, opened: &Opened) -> u64 {
        self.cacheline
            .or(self.rules.cacheline)
            .unwrap_or(opened.build_line)
    }

    /// The line size for `opened` without the rules: `--cacheline`, else
    /// the build's.
    pub(crate) fn build_line(&self, opened: &Opened) -> u64 {
        self.cacheline.unwrap_or(opened.build_line)
    }

    /// `opened` as the run lays it out: planned with `--plan`, else as
    /// compiled.
    pub(crate) fn view<'r>(&self, opened: &'r Opened) -> Result<View<'r>> {
        match &self.plan {
            Some(plan) => opened.planned(plan),
            None => Ok(opened.compiled()),
        }
    }

    /// [`Run::view`] of every build, in order.
    pub(crate) fn views(&self) -> Result<Vec<View<'_>>> {
        self.builds.iter().map(|b| self.view(b)).collect()
    }

    /// Struct `ty` of `opened` as the compiler lays it out with `patch`
    /// (a `-p1` patch of the build's source tree) applied, when the build
    /// can be compiled again (a variant): its types and the struct's id.
    /// `None` for a file.
    pub(crate) fn compiled_with_patch(
        &self,
        opened: &Opened,
        patch: &str,
        ty: &str,
    ) -> Option<Result<(TypeTable, TypeId)>> {
        let input = match opened.input.with_patch(patch)? {
            Ok(input) => input,
            Err(e) => return Some(Err(e)),
        };
        let want = Want {
            specs: vec![TypeSpec {
                name: ty.to_owned(),
                pick: crate::load::lookup::Pick::First,
            }],
            ..Want::default()
        };
        let compiled = open::all(
            &[input],
            &Rules::default(),
            &want,
            &self.reading,
            None,
            false,
        )
        .map(|mut built| {
            let built = built.remove(0);
            (built.data.table.clone(), built.found[0].id)
        });
        Some(compiled)
    }

    /// The "unknown type" error for `name` in `opened`, with the closest
    /// names it defines: the file is read again for them, on this error
    /// path only.
    pub(crate) fn unknown_type(&self, opened: &Opened, name: &str) -> Error {
        Error::UnknownType {
            name: name.to_owned(),
            path: opened.build.path.clone(),
            hint: self.did_you_mean(opened, &[name]),
        }
    }

    /// `"; did you mean 'a'?"` for a type `opened` lacks under any of
    /// `names`: the file is read again, on an error path only.
    pub(crate) fn did_you_mean(&self, opened: &Opened, names: &[&str]) -> String {
        let mut hint = String::new();
        // The names are a courtesy: a file that no longer opens gives none.
        let _ = opened
            .input
            .open(&self.reading, &Wanted::default(), &mut |loaded| {
                hint = loaded.did_you_mean(names);
                Ok(())
            });
        hint
    }
}

impl Opened {
    /// The build as compiled.
    pub(crate) fn compiled(&self) -> View<'_> {
        View {
            opened: self,
            config: self.build.config.clone(),
            table: Cow::Borrowed(&self.data.table),
            plan_note: None,
            planned_by: None,
        }
    }

    /// The build laid out by `plan`: a copy of the compiled types with the
    /// planned structs, and every struct holding one, re-laid out. A plan
    /// naming a struct the build lacks is an error here.
    pub(crate) fn planned(&self, plan: &Arc<Plan>) -> Result<View<'_>> {
        let mut used = self.data.by_name.clone();
        used.extend(self.present.values().map(|f| f.id));
        self.planned_for(plan, used)
    }

    /// [`Opened::planned`] of the types found by name only, not the roots
    /// discovered: what a command that reads one struct (`diagram`,
    /// `asserts`) re-lays out, so that `suggest` draws and asserts its
    /// suggestion as those commands would.
    pub(crate) fn planned_by_name(&self, plan: &Arc<Plan>) -> Result<View<'_>> {
        self.planned_for(plan, self.data.by_name.clone())
    }

    /// The build laid out by `plan` among `used` and what they hold.
    fn planned_for(&self, plan: &Arc<Plan>, mut used: Vec<TypeId>) -> Result<View<'_>> {
        if let Some((at, why)) = &self.data.plan_missing {
            return Err(at.plan_error(why.clone()));
        }
        let mut table = self.data.table.clone();
        let mut planner = Planner::new(plan.clone(), self.abi, self.build_line);
        used.sort_unstable();
        used.dedup();
        planner.apply(&mut table, &used)?;
        Ok(View {
            opened: self,
            config: self.build.config.clone(),
            table: Cow::Owned(table),
            plan_note: Some(planner.note()),
            planned_by: Some(plan.path.display().to_string()),
        })
    }
}

/// A build's types as one command reads them: compiled, or re-laid out
/// under a plan.
pub(crate) struct View<'r> {
    /// The build.
    pub(crate) opened: &'r Opened,
    /// Its label here (a planned copy of a build may carry another).
    pub(crate) config: String,
    table: Cow<'r, TypeTable>,
    plan_note: Option<String>,
    /// The plan file, when planned.
    pub(crate) planned_by: Option<String>,
}

impl View<'_> {
    /// The types.
    pub(crate) fn table(&self) -> &TypeTable {
        &self.table
    }

    /// The types, owned: for a report that outlives the run.
    pub(crate) fn into_table(self) -> TypeTable {
        self.table.into_owned()
    }

    /// The loader's notes and the plan's, untagged.
    pub(crate) fn notes(&self) -> Vec<String> {
        let mut notes = self.opened.notes.clone();
        notes.extend(self.plan_note.clone());
        notes
    }

    /// Labels this view `LABEL-planned` when a plan lays it out and it
    /// would otherwise carry the label of `first`, the view it is compared
    /// with (`diff --plan P B B` shows what the plan changes in B).
    pub(crate) fn label_against(&mut self, first: &View<'_>) {
        if self.planned_by.is_some() && self.config == first.config {
            self.config.push_str("-planned");
        }
    }

    /// [`View::notes`], each as `[config] note`.
    pub(crate) fn tagged_notes(&self) -> Vec<String> {
        crate::load::tagged(&self.config, self.notes())
    }
}
