//! `audit`'s layout half: every struct the tree writes from many CPUs at
//! once (lockless or marked stores on a fast path) that the builds have,
//! drafted from the tree's evidence index as `draft` drafts it, the draft
//! checked on every build as `check --rules` checks it, and the pairs it
//! reports ranked across the kernel.

use std::collections::HashMap;
use std::path::Path;

use crate::error::Result;
use crate::evidence::source::{Declaration, Said};
use crate::report::ReportFinding;
use crate::report::audit::LayoutFinding;
use crate::report::draft::DraftReport;
use crate::run::{self, Roots, Run};

/// Evidence lines shown per member of a pair.
const EVIDENCE_SHOWN: usize = 3;

/// A struct's other pairs named with its worst, at most.
const OTHERS_NAMED: usize = 10;

/// How much a pair is worth a patch by its kind and classes: a writer
/// many CPUs share next to what readers or lock takers need most; next
/// to an owner's plain stores (one CPU at a time) least.
fn kind_weight(kind: &str, classes: &[String]) -> u64 {
    if classes.iter().any(|c| c == "owner-write") {
        return 1;
    }
    match kind {
        "false-sharing" | "write-vs-lock" => 4,
        "write-vs-write" | "locked-vs-other-lock" => 3,
        "two-locks" | "read-vs-lock" | "write-vs-locked" => 2,
        _ => 1,
    }
}

/// The pairs of the structs the first build says the tree writes from many
/// CPUs: each struct's worst pair with the count and names of the others,
/// the structs ranked by it (score: the kind's weight, twice for an
/// error, times the heat), and each struct's drafted rules file (those
/// with a pair).
pub(super) fn pairs(run: &Run, tree: &Path, arch: Option<&str>, read: &[String]) -> Result<Pairs> {
    let first = run.first()?;
    let contended = &first.contended;
    if contended.is_empty() {
        return Ok(Pairs::default());
    }
    // The declarations about them and the structs holding them, read once.
    let names: Vec<String> = contended.iter().map(|(n, _)| n.clone()).collect();
    let wanted = run.with_enclosing(first, &names)?;
    let mut declarations = run.declarations(tree, &wanted, arch, true)?;
    declarations.retain(|d| !matches!(d.said, Said::Needless(_)));
    let mut about: HashMap<&str, Vec<&Declaration>> = HashMap::new();
    for d in &declarations {
        about.entry(d.ty.as_str()).or_default().push(d);
    }
    // Each struct drafted on every build, as `draft` does, and the draft
    // checked on every build, as `check --rules` does.
    let builds: Vec<&run::Opened> = run.builds.iter().collect();
    let drafts = run.drafts(&builds, &names, &declarations, read)?;
    let checked = drafts.len();
    let views = run.views()?;
    let mut found: Vec<LayoutFinding> = Vec::new();
    let mut files: Vec<(String, String)> = Vec::new();
    for draft in drafts {
        let name = &draft.name;
        let stores = contended
            .iter()
            .find(|(n, _)| n == name)
            .map_or(0, |(_, s)| *s);
        let (report, Some(rules)) = (&draft.report, &draft.rules) else {
            continue;
        };
        let mut pairs: Vec<LayoutFinding> = Vec::new();
        for view in &views {
            let line = run.line(view.opened);
            let only = [name.clone()];
            let analyzed = run::analyze(run, view, rules, line, Roots::Types(&only))?;
            for root in &analyzed.roots {
                for f in &root.analysis.findings {
                    let f = ReportFinding::new(&view.opened.build.config, &root.analysis, f);
                    add_pair(&mut pairs, f, stores, report, &about);
                }
            }
        }
        if pairs.is_empty() {
            continue;
        }
        files.push((name.clone(), draft.text.clone()));
        for p in &mut pairs {
            let severe = match p.severity.as_str() {
                "error" => 2,
                _ => 1,
            };
            let bits = u64::from(u64::BITS - (p.heat + 1).leading_zeros());
            p.score = kind_weight(&p.kind, &p.classes) * severe * bits;
        }
        pairs.sort_by_key(|p| std::cmp::Reverse((p.score, p.heat)));
        let all = pairs.len();
        let others: Vec<String> = pairs[1..]
            .iter()
            .take(OTHERS_NAMED)
            .map(|p| format!("{} ({})", p.members.join(" / "), p.kind))
            .collect();
        let mut worst = pairs.swap_remove(0);
        worst.pairs = all;
        worst.others = others;
        found.push(worst);
    }
    found.sort_by_key(|f| std::cmp::Reverse((f.score, f.heat, f.stores)));
    for (i, f) in found.iter_mut().enumerate() {
        f.rank = i + 1;
    }
    Ok(Pairs {
        total: found.iter().map(|f| f.pairs).sum(),
        worst: found,
        rules: files,
        structs: checked,
    })
}

/// What the layout half found.
#[derive(Default)]
pub(super) struct Pairs {
    /// Each struct's worst pair, ranked.
    pub(super) worst: Vec<LayoutFinding>,
    /// The pairs of every struct.
    pub(super) total: usize,
    /// The drafted rules file of each struct with a pair.
    pub(super) rules: Vec<(String, String)>,
    /// The structs drafted and checked.
    pub(super) structs: usize,
}

/// A pair `check` reports, added to a struct's pairs: once, with the
/// builds it is found in.
fn add_pair(
    to: &mut Vec<LayoutFinding>,
    f: ReportFinding,
    stores: usize,
    draft: &DraftReport,
    about: &HashMap<&str, Vec<&Declaration>>,
) {
    let members = vec![f.a.path.clone(), f.b.path.clone()];
    if let Some(seen) = to
        .iter_mut()
        .find(|p| p.members == members && p.kind == f.kind.name())
    {
        if !seen.configs.contains(&f.config) {
            seen.configs.push(f.config);
        }
        return;
    }
    // A member's drafted field: the direct member its path starts with.
    let direct = |path: &str| path.split(['.', '[']).next().unwrap_or(path).to_owned();
    let field = |path: &str| {
        let direct = direct(path);
        draft
            .types
            .iter()
            .filter(|t| t.name == f.root)
            .flat_map(|t| &t.fields)
            .find(|d| d.path == direct)
    };
    let heat = [&f.a.path, &f.b.path]
        .iter()
        .filter_map(|p| field(p)?.heat)
        .max()
        .unwrap_or(0);
    let mut evidence = Vec::new();
    for side in [&f.a, &f.b] {
        if let Some(d) = field(&side.path) {
            // What gives the class, not what was left out of it.
            evidence.extend(
                d.evidence
                    .iter()
                    .filter(|e| !e.text.ends_with("not counted"))
                    .take(EVIDENCE_SHOWN)
                    .map(|e| format!("{}: {}: {}", side.path, e.mark.name(), e.text)),
            );
        }
    }
    // Where the first member is declared: of the tree's definitions of
    // the struct (a host tool may have its own `list_head`), the one in
    // the file the build's debug info names.
    let a = direct(&f.a.path);
    let definitions: Vec<&Declaration> = about
        .get(f.root.as_str())
        .into_iter()
        .flatten()
        .copied()
        .filter(|d| d.path == a && matches!(d.said, Said::Member))
        .collect();
    let built_in = f.a.decl_file.as_deref().unwrap_or_default();
    let declared = definitions
        .iter()
        .find(|d| built_in.ends_with(&*d.file.to_string_lossy()))
        .or(definitions.first())
        .copied();
    to.push(LayoutFinding {
        rank: 0,
        kind: f.kind.name().to_owned(),
        severity: f.severity.name().to_owned(),
        message: format!(
            "{}.{} ({}) and {} ({}) share a line: {}",
            f.root, f.a.path, f.a.class, f.b.path, f.b.class, f.description
        ),
        root: f.root,
        members,
        classes: vec![f.a.class, f.b.class],
        configs: vec![f.config],
        file: declared.map_or(String::new(), |d| d.file.display().to_string()),
        line: declared.map_or(0, |d| d.line),
        heat,
        score: 0,
        pairs: 1,
        others: Vec::new(),
        stores,
        evidence,
        rules_file: None,
    });
}
