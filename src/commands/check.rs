//! `cachelint check --rules R BUILD...`: the rules checked against every
//! build (config), findings per root and line, `[[allow]]` and
//! `--baseline` applied, a verdict for CI.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::analyze::{Roots, analyze_build};
use super::builds;
use crate::analysis::validate::Check;
use crate::error::{Error, Result};
use crate::load::{self, Build, Reading};
use crate::report::explain::ExplainedLine;
use crate::report::{
    BuildInfo, Checked, Identity, PairKey, REPORT_VERSION, Report, ReportFinding, RootInfo, Summary,
};
use crate::report::{elements, stands_for};
use crate::rules::{Location, Rules, Severity};

/// Everything `check` needs.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Rules files (TOML, or net_cachelines `.rst`).
    pub rules: Vec<PathBuf>,
    /// Builds to check.
    pub builds: Vec<Build>,
    /// Baselines: builds to check the same way, or saved JSON reports.
    pub baseline: Vec<Build>,
    /// Lowest severity that fails the check.
    pub fail_on: Severity,
    /// Cacheline size override.
    pub cacheline: Option<u64>,
    /// DWARF, BTF, or whichever the files have.
    pub reading: Reading,
    /// `--explain FIELD`: the field whose lines to explain.
    pub explain: Option<String>,
    /// `--adjacent-lines`: also report pairs on one 128-byte pair of lines.
    pub adjacent_lines: bool,
}

/// Runs `check`.
pub fn check(opts: &CheckOptions) -> Result<Checked> {
    let mut rules = Rules::load(&opts.rules)?;
    rules.adjacent_lines |= opts.adjacent_lines;
    let mut labels = HashSet::new();
    for b in &opts.builds {
        if !labels.insert(&b.config) {
            return Err(Error::Usage(format!(
                "two builds are labelled '{}'; name them: base=FILE rt=FILE",
                b.config
            )));
        }
    }
    let results = builds::in_order(&opts.builds, |build| {
        run_build(
            build,
            &rules,
            opts.cacheline,
            &opts.reading,
            opts.explain.as_deref(),
        )
    })?;
    let checks: Vec<&[(Location, Check)]> = results.iter().map(|r| r.checks.as_slice()).collect();
    let mut notes = rules_fit(&rules, &opts.builds, &opts.reading, &checks)?;
    let baseline = Baseline::load(&opts.baseline, &rules, opts.cacheline, &opts.reading)?;
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
    // (line, first field, kind, second field).
    report
        .findings
        .sort_by_key(|f| std::cmp::Reverse(f.severity));
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
    let mut seen = HashSet::new();
    notes.retain(|n| seen.insert(n.clone()));
    report.notes = notes;
    report.summary = Summary::count(
        &report.findings,
        report.notes.len(),
        report.allowed.len(),
        in_baseline,
    );
    let failed = report.findings.iter().any(|f| f.severity >= opts.fail_on);
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
    build: &Build,
    rules: &Rules,
    cacheline: Option<u64>,
    reading: &Reading,
    explain: Option<&str>,
) -> Result<BuildResult> {
    let analyzed = analyze_build(build, rules, cacheline, Roots::FromRules, reading)?;
    let explained = match explain {
        Some(field) => super::analyze::explained(&analyzed, field, rules),
        None => Vec::new(),
    };
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
    let slices: Vec<&[ReportFinding]> = per_root.iter().map(Vec::as_slice).collect();
    let by = stands_for::stood_for(&slices, analyzed.cacheline);
    let mut notes = analyzed.notes;
    for (q, root) in analyzed.roots.iter().enumerate() {
        let others: Vec<String> = (0..by.len())
            .filter(|&r| by[r] == Some(q))
            .map(|r| format!("'{}'", analyzed.roots[r].analysis.root))
            .collect();
        if !others.is_empty() {
            notes.push(format!(
                "[{}] root '{}' stands for {}: they hold its annotated fields at the same places in a line, and their findings are among its own",
                build.config,
                root.analysis.root,
                others.join(", ")
            ));
        }
    }
    for (root, (found, by)) in analyzed.roots.iter().zip(per_root.into_iter().zip(&by)) {
        let a = &root.analysis;
        for r in found.into_iter().filter(|_| by.is_none()) {
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

/// A rule that fits no build is an error; one that fits only some builds
/// is a note for the others (a struct absent without its CONFIG_).
pub(super) fn rules_fit(
    rules: &Rules,
    builds: &[Build],
    reading: &Reading,
    checks: &[&[(Location, Check)]],
) -> Result<Vec<String>> {
    /// One rule over all builds.
    struct Fit {
        at: Location,
        fits: bool,
        /// (build index, why it does not fit there)
        problems: Vec<(usize, String)>,
    }
    let mut seen: Vec<Fit> = Vec::new();
    for (b, checks) in checks.iter().enumerate() {
        for (at, check) in checks.iter() {
            let i = match seen.iter().position(|f| &f.at == at) {
                Some(i) => i,
                None => {
                    seen.push(Fit {
                        at: at.clone(),
                        fits: false,
                        problems: Vec::new(),
                    });
                    seen.len() - 1
                }
            };
            match check {
                Check::Fits => seen[i].fits = true,
                Check::Missing(why) => seen[i].problems.push((b, why.clone())),
                Check::Undocumented(why) => {
                    seen[i].fits = true;
                    seen[i].problems.push((
                        b,
                        format!(
                            "{why} (a net_cachelines row may name a macro alias, which DWARF does not record)"
                        ),
                    ));
                }
            }
        }
    }
    seen.sort_by(|a, b| {
        (&a.at.file, a.at.line, a.at.column).cmp(&(&b.at.file, b.at.line, b.at.column))
    });
    let mut notes = rules.notes.clone();
    for Fit { at, fits, problems } in seen {
        let Some((first_build, why)) = problems.first() else {
            continue;
        };
        if !fits {
            let hint = type_hint(rules, &at, &builds[*first_build], reading);
            let scope = if builds.len() > 1 {
                " (in any build)"
            } else {
                ""
            };
            return Err(at.error(format!("{why}{hint}{scope}")));
        }
        for (b, why) in &problems {
            notes.push(format!(
                "[{}] {at}: {why}; skipped in this build",
                builds[*b].config
            ));
        }
    }
    Ok(notes)
}

/// "Did you mean" for a rules type name that no build defines.
fn type_hint(rules: &Rules, at: &Location, build: &Build, reading: &Reading) -> String {
    let Some(names) = rules
        .types
        .iter()
        .find(|t| &t.at == at)
        .map(|t| t.names().collect::<Vec<_>>())
        .or_else(|| {
            rules
                .roots
                .iter()
                .find(|(_, l)| l == at)
                .map(|(n, _)| vec![n.as_str()])
        })
    else {
        return String::new();
    };
    load::open(build, reading, |loaded| Ok(loaded.did_you_mean(&names))).unwrap_or_default()
}

/// Findings an earlier build or report already had.
struct Baseline {
    full: HashSet<Identity>,
    configs: HashSet<String>,
    any_config: HashSet<PairKey>,
}

impl Baseline {
    fn load(
        items: &[Build],
        rules: &Rules,
        cacheline: Option<u64>,
        reading: &Reading,
    ) -> Result<Baseline> {
        // Each item's configs and findings; builds analysed in parallel.
        let loaded = builds::in_order(items, |item| match read_report(&item.path)? {
            Some(report) => {
                let configs: Vec<String> = report.builds.iter().map(|b| b.config.clone()).collect();
                Ok((configs, [report.findings, report.allowed].concat()))
            }
            None => {
                let r = run_build(item, rules, cacheline, reading, None)?;
                Ok((vec![item.config.clone()], [r.findings, r.allowed].concat()))
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

/// A saved JSON report, or `None` when the file is a build (ELF or raw
/// BTF); anything else is an error.
fn read_report(path: &Path) -> Result<Option<Report>> {
    /// A report of the kernel-wide limit of 50,000 findings is about 75 MB.
    const MAX_REPORT_BYTES: u64 = 256 << 20;
    // A build (an ELF file) is told from a report by its first bytes,
    // without reading it.
    let start = crate::input::head(path, 4096)?;
    if start.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        let btf = crate::btf::MAGIC;
        let build = start.starts_with(b"\x7fELF")
            || start.starts_with(&btf.to_le_bytes())
            || start.starts_with(&btf.to_be_bytes());
        if build {
            return Ok(None);
        }
        return Err(Error::Usage(format!(
            "{}: not a baseline: neither a cachelint JSON report (from check --format json) \
             nor a build (ELF or raw BTF)",
            path.display()
        )));
    }
    let bytes = crate::input::read_limited(path, MAX_REPORT_BYTES, "a JSON report")?;
    let report: Report = serde_json::from_slice(&bytes).map_err(|e| {
        Error::Usage(format!(
            "{}: not a cachelint JSON report (from check --format json): {e}",
            path.display()
        ))
    })?;
    // Version 2 changed only what the summary counts: a version 1
    // report's findings match as they are.
    if !(1..=REPORT_VERSION).contains(&report.version) {
        return Err(Error::Usage(format!(
            "{}: report version {} is not 1 to {REPORT_VERSION}; regenerate it with this cachelint",
            path.display(),
            report.version
        )));
    }
    Ok(Some(report))
}
