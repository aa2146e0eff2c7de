//! `cachelint check --rules R BUILD...`: the rules checked against every
//! build (config), findings per root and line, `[[allow]]` and
//! `--baseline` applied, a verdict for CI.

use std::collections::HashSet;
use std::path::Path;

use crate::analysis::validate::Check;
use crate::error::{Error, Result};
use crate::evidence::source::{Declaration, Said};
use crate::report::explain::ExplainedLine;
use crate::report::{
    BuildInfo, Checked, Identity, PairKey, REPORT_VERSION, Report, ReportFinding, RootInfo, Summary,
};
use crate::report::{elements, stands_for};
use crate::rules::{Class, Location, Rules, Severity};
use crate::run::{self, Roots, Run, View, Want};

/// Everything `check` needs besides the run (the rules, the builds and
/// the baseline).
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Lowest severity that fails the check.
    pub fail_on: Severity,
    /// `--explain FIELD`: the field whose lines to explain.
    pub explain: Option<String>,
    /// `--adjacent-lines`: also report pairs on one 128-byte pair of lines.
    pub adjacent_lines: bool,
    /// `--rank samples`: findings ordered by the samples of their fields
    /// (from `--perf`), most first.
    pub by_samples: bool,
    /// `--source-tree`: the kernel tree the builds come from, whose
    /// declarations locate members the debug info does not (BTF) and
    /// contradict rules (`__guarded_by` another lock).
    pub source_tree: Option<std::path::PathBuf>,
    /// `--top N`: the first N diagnostics only (worst first, then
    /// hottest); the summary and the exit code count every one.
    pub top: Option<usize>,
}

impl CheckOptions {
    /// What `check` reads of each build: the rules' types and roots.
    pub fn want(&self, _rules: &Rules) -> Result<Want> {
        Ok(Want {
            roots: true,
            member_types: self.source_tree.is_some(),
            ..Want::default()
        })
    }
}

/// Runs `check`.
pub fn check(run: &Run, opts: &CheckOptions) -> Result<Checked> {
    let mut rules = run.rules.clone();
    rules.adjacent_lines |= opts.adjacent_lines;
    let mut labels = HashSet::new();
    for b in &run.builds {
        if !labels.insert(&b.build.config) {
            return Err(Error::Usage(format!(
                "two builds are labelled '{}'; name them: base=FILE rt=FILE",
                b.build.config
            )));
        }
    }
    let views = run.views()?;
    let declared = match &opts.source_tree {
        Some(tree) => {
            let types: Vec<String> = rules
                .types
                .iter()
                .flat_map(|t| t.names().map(str::to_owned).collect::<Vec<_>>())
                .collect();
            run.declarations(tree, &types, None, false)?
        }
        None => Vec::new(),
    };
    let results = run::in_order(&views, |view| {
        run_build(run, view, &rules, opts.explain.as_deref(), &declared)
    })?;
    let checks: Vec<&[(Location, Check)]> = results.iter().map(|r| r.checks.as_slice()).collect();
    let view_refs: Vec<&View<'_>> = views.iter().collect();
    let mut notes = run::rules_fit(run, &view_refs, &checks)?;
    let baseline = Baseline::load(run, &rules)?;
    let mut report = Report {
        version: REPORT_VERSION,
        ..Report::default()
    };
    let mut in_baseline = 0;
    for r in results {
        report.explained.extend(r.explained);
        report.builds.push(r.info);
        notes.extend(r.notes);
        report.allowed.extend(r.allowed);
        for f in r.findings {
            if baseline.has(&f) {
                in_baseline += 1;
            } else {
                report.findings.push(f);
            }
        }
    }
    // Worst first over the whole run; stable, so within a severity the
    // builds keep their order, then the roots, then each root's own order
    // (line, first field, kind, second field); with the rules' [heat],
    // hottest first within a severity.
    report
        .findings
        .sort_by_key(|f| (std::cmp::Reverse(f.severity), std::cmp::Reverse(f.heat)));
    if opts.by_samples {
        run.need_samples()?;
        let weight = |f: &ReportFinding| {
            std::cmp::Reverse(f.a.samples.unwrap_or(0) + f.b.samples.unwrap_or(0))
        };
        report.findings.sort_by_key(weight);
    }
    report.findings = crate::report::cross_line::gather(std::mem::take(&mut report.findings));
    report
        .allowed
        .sort_by_key(|f| std::cmp::Reverse(f.severity));
    if let Some(field) = &opts.explain
        && report.explained.is_empty()
    {
        return Err(Error::Usage(format!(
            "--explain '{field}': no field of that name in any root analysed; \
             name it as a path from the root, a member name, or TYPE.member"
        )));
    }
    notes.extend(run.perf_notes());
    report.notes = crate::report::unique_notes(notes);
    report.summary = Summary::count(
        &report.findings,
        report.notes.len(),
        report.allowed.len(),
        in_baseline,
    );
    let failed = report.findings.iter().any(|f| f.severity >= opts.fail_on);
    if let Some(top) = opts.top {
        let groups: Vec<usize> = crate::report::diagnostics(&report.findings)
            .map(<[ReportFinding]>::len)
            .collect();
        if groups.len() > top {
            let kept: usize = groups[..top].iter().sum();
            report.findings.truncate(kept);
            report.notes.push(format!(
                "--top {top}: the first {top} of {} diagnostics are shown (worst first, then hottest); \
                 the summary and the exit code count them all",
                groups.len()
            ));
        }
    }
    Ok(Checked { report, failed })
}

/// What one build gave.
struct BuildResult {
    info: BuildInfo,
    findings: Vec<ReportFinding>,
    allowed: Vec<ReportFinding>,
    checks: Vec<(Location, Check)>,
    notes: Vec<String>,
    explained: Vec<ExplainedLine>,
}

fn run_build(
    run: &Run,
    view: &View<'_>,
    rules: &Rules,
    explain: Option<&str>,
    declared: &[Declaration],
) -> Result<BuildResult> {
    let line = run.line(view.opened);
    let analyzed = run::analyze(run, view, rules, line, Roots::FromRules)?;
    let explained = match explain {
        Some(field) => run::explained(&analyzed, field, rules),
        None => Vec::new(),
    };
    let build = &view.opened.build;
    let mut info = BuildInfo {
        config: analyzed.config.clone(),
        file: analyzed.file.clone(),
        cacheline: analyzed.cacheline,
        roots: Vec::new(),
    };
    let mut findings = Vec::new();
    let mut allowed = Vec::new();
    let per_root: Vec<Vec<ReportFinding>> = analyzed
        .roots
        .iter()
        .map(|root| {
            let a = &root.analysis;
            let found = a.findings.iter();
            elements::merge(
                found
                    .map(|f| ReportFinding::new(&build.config, a, f))
                    .collect(),
            )
        })
        .collect();
    let mut per_root = per_root;
    let mut notes = analyzed.notes;
    if !declared.is_empty() {
        for (root, found) in analyzed.roots.iter().zip(&mut per_root) {
            let spans = &root.analysis.annotated.spans;
            for f in found.iter_mut() {
                for side in [&mut f.a, &mut f.b] {
                    locate_in_source(side, spans, declared);
                }
            }
            notes.extend(guarded_contradictions(spans, declared));
        }
    }
    for (root, found) in analyzed.roots.iter().zip(&mut per_root) {
        let a = &root.analysis;
        if let Some((placed, misfits)) = run.samples_on_named(view, &a.root, line) {
            notes.extend(misfits);
            for f in found.iter_mut() {
                for side in [&mut f.a, &mut f.b] {
                    let n = crate::analysis::samples::samples_in(&placed, side.offset, side.size);
                    side.samples = Some(n.round() as u64);
                }
            }
            notes.extend(crate::analysis::samples::contradicted(
                &a.annotated.spans,
                &placed,
                &build.config,
            ));
        }
    }
    let slices: Vec<&[ReportFinding]> = per_root.iter().map(Vec::as_slice).collect();
    let told = stands_for::told(&slices, analyzed.cacheline);
    let name = |r: usize| format!("'{}'", analyzed.roots[r].analysis.root);
    for (q, root) in analyzed.roots.iter().enumerate() {
        let others: Vec<String> = (0..told.by.len())
            .filter(|&r| told.stood_for(r) == Some(q))
            .map(name)
            .collect();
        if !others.is_empty() {
            notes.push(format!(
                "[{}] root '{}' stands for {}: they hold its annotated fields at the same places in a line, and their findings are among its own",
                build.config,
                root.analysis.root,
                others.join(", ")
            ));
        }
        if let Some((tellers, n)) = told.partly(q) {
            let tellers: Vec<String> = tellers.into_iter().map(name).collect();
            notes.push(format!(
                "[{}] root '{}': {n} of its findings are those of {} too (the same fields at the same places in a line), told for them",
                build.config,
                root.analysis.root,
                tellers.join(", ")
            ));
        }
    }
    for (q, (root, found)) in analyzed.roots.iter().zip(per_root).enumerate() {
        let a = &root.analysis;
        for (r, _) in found
            .into_iter()
            .zip(&told.by[q])
            .filter(|(_, teller)| **teller == q)
        {
            if r.allowed.is_some() {
                allowed.push(r);
            } else {
                findings.push(r);
            }
        }
        info.roots.push(RootInfo {
            name: a.root.clone(),
            size: a.size,
            alignment: a.alignment,
            annotated_fields: a
                .annotated
                .spans
                .iter()
                .filter(|s| s.class.is_some())
                .count(),
        });
    }
    Ok(BuildResult {
        info,
        findings,
        allowed,
        checks: analyzed.checks,
        notes,
        explained,
    })
}

/// Findings an earlier build or report already had.
struct Baseline {
    full: HashSet<Identity>,
    configs: HashSet<String>,
    any_config: HashSet<PairKey>,
}

impl Baseline {
    fn load(run: &Run, rules: &Rules) -> Result<Baseline> {
        // Each item's configs and findings; builds analysed in parallel.
        let loaded = run::in_order(&run.baseline, |item| match item {
            run::Baseline::Report(path) => {
                let report = read_report(path)?;
                let configs: Vec<String> = report.builds.iter().map(|b| b.config.clone()).collect();
                Ok((configs, [report.findings, report.allowed].concat()))
            }
            run::Baseline::Build(opened) => {
                let r = run_build(run, &run.view(opened)?, rules, None, &[])?;
                Ok((
                    vec![opened.build.config.clone()],
                    [r.findings, r.allowed].concat(),
                ))
            }
        })?;
        let mut findings = Vec::new();
        let mut configs = HashSet::new();
        for (c, f) in loaded {
            configs.extend(c);
            findings.extend(f);
        }
        let full: HashSet<_> = findings.iter().flat_map(elements::identities).collect();
        let any_config = full.iter().map(|i| i.pair.clone()).collect();
        Ok(Baseline {
            full,
            configs,
            any_config,
        })
    }

    /// Matched per config when the baseline has that config, else against
    /// all; a finding told for a range of elements matches when the
    /// baseline has it in each of them.
    fn has(&self, f: &ReportFinding) -> bool {
        elements::identities(f).iter().all(|id| {
            if self.configs.contains(&f.config) {
                self.full.contains(id)
            } else {
                self.any_config.contains(&id.pair)
            }
        })
    }
}

/// A saved JSON report (the run opened the baseline items that are
/// builds); anything else is an error.
fn read_report(path: &Path) -> Result<Report> {
    /// A report of the kernel-wide limit of 50,000 findings is about 75 MB.
    const MAX_REPORT_BYTES: u64 = 256 << 20;
    let start = crate::input::head(path, 4096)?;
    if start.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(Error::Content {
            path: path.to_owned(),
            line: None,
            message: "not a baseline: neither a cachelint JSON report (from check --format \
                      json) nor a build (ELF or raw BTF)"
                .into(),
        });
    }
    let bytes = crate::input::read_limited(path, MAX_REPORT_BYTES, "a JSON report")?;
    let report: Report = serde_json::from_slice(&bytes).map_err(|e| Error::Content {
        path: path.to_owned(),
        line: None,
        message: format!("not a cachelint JSON report (from check --format json): {e}"),
    })?;
    // Version 2 changed only what the summary counts: a version 1
    // report's findings match as they are.
    if !(1..=REPORT_VERSION).contains(&report.version) {
        return Err(Error::Content {
            path: path.to_owned(),
            line: None,
            message: format!(
                "report version {} is not 1 to {REPORT_VERSION}; regenerate it with this cachelint",
                report.version
            ),
        });
    }
    Ok(report)
}

/// The struct and member a span is declared as: its innermost owner and
/// the member of it the span lies in.
fn declared_as(span: &crate::analysis::Span) -> Option<(&str, &str)> {
    let (ty, inner) = span.owners.last()?;
    Some((ty.as_str(), inner.split(['.', '[']).next()?))
}

/// A side the debug info gave no source line (BTF) gets its member's
/// declaration in the source tree.
fn locate_in_source(
    side: &mut crate::report::ReportSide,
    spans: &[crate::analysis::Span],
    declared: &[Declaration],
) {
    if side.decl_file.is_some() {
        return;
    }
    let Some((ty, member)) = spans
        .iter()
        .find(|s| s.path == side.path)
        .and_then(declared_as)
    else {
        return;
    };
    if let Some(d) = declared
        .iter()
        .find(|d| d.said == Said::Member && d.ty == ty && d.path == member)
    {
        side.decl_file = Some(d.file.display().to_string());
        side.decl_line = Some(d.line as u64);
    }
}

/// Notes, at the rule, for rules the source's `__guarded_by` contradicts:
/// lock-protected by another lock, or not lock-protected at all.
fn guarded_contradictions(
    spans: &[crate::analysis::Span],
    declared: &[Declaration],
) -> Vec<String> {
    let mut out = Vec::new();
    for span in spans {
        let (crate::analysis::Origin::Rule { at, .. }, Some(class)) = (&span.origin, span.class)
        else {
            continue;
        };
        let Some((ty, member)) = declared_as(span) else {
            continue;
        };
        for d in declared.iter().filter(|d| d.ty == ty && d.path == member) {
            let Said::GuardedBy {
                locks,
                pointee: false,
            } = &d.said
            else {
                continue;
            };
            let named = |l: &str| {
                let l = l.trim_start_matches('&');
                span.lock
                    .as_deref()
                    .is_some_and(|own| own == l || own.ends_with(&format!(".{l}")))
            };
            let why = match class {
                Class::LockProtected if locks.iter().any(|l| named(l)) => continue,
                Class::LockProtected => format!(
                    "is ruled lock-protected by {}",
                    span.lock.as_deref().unwrap_or("?")
                ),
                Class::Lock | Class::Cold => continue,
                other => format!("is ruled {}", other.name()),
            };
            out.push(format!(
                "{at}: '{ty}.{member}' {why}, but the source declares it __guarded_by({}) ({}:{})",
                locks.join(", "),
                d.file.display(),
                d.line
            ));
        }
    }
    out
}
