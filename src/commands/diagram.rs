//! `cachelint diagram --rules R BUILD TYPE`: cacheline diagrams of one
//! struct under the rules, for a changelog; `--compare OTHER` draws the
//! same fields in a second build and sums up what changed.

use super::analyze::{Analyzed, Roots, analyze_build};
use super::check::rules_fit;
use crate::analysis::compare::compare;
use crate::analysis::{Analysis, Span};
use crate::error::{Error, Result};
use crate::lines::Lines;
use crate::load::{Build, Reading};
use crate::report::diagram::{DiagramComparison, DiagramPart, DiagramReport, Style};
use crate::rules::Rules;

/// Which lines to draw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// Lines with findings, or every line when there are none.
    Flagged,
    /// Lines `first..=last`.
    Lines(u64, u64),
    /// The lines holding these fields and the lines they share with the
    /// fields they conflict with.
    Around(Vec<String>),
}

/// Everything `diagram` needs.
#[derive(Clone, Debug)]
pub struct DiagramOptions {
    /// Rules files.
    pub rules: Vec<std::path::PathBuf>,
    /// The build.
    pub build: Build,
    /// The struct to draw (lines counted from its start).
    pub ty: String,
    /// Which lines.
    pub selection: Selection,
    /// Maximum width in columns.
    pub width: usize,
    /// Style; `None` picks boxes for up to 4 lines, else a strip.
    pub style: Option<Style>,
    /// A second build to draw the same fields in.
    pub compare: Option<Build>,
    /// Cacheline size override.
    pub cacheline: Option<u64>,
    /// DWARF, BTF, or whichever the files have.
    pub reading: Reading,
    /// `--explain FIELD`: the field whose lines to explain under the drawing.
    pub explain: Option<String>,
}

/// Width a diagram is drawn in unless told otherwise.
pub const DEFAULT_WIDTH: usize = 72;

/// Narrowest width a diagram can be drawn in.
pub const MIN_WIDTH: usize = 40;

/// Runs `diagram`.
pub fn diagram(opts: &DiagramOptions) -> Result<DiagramReport> {
    if opts.width < MIN_WIDTH {
        return Err(Error::Usage(format!(
            "--width {} is too narrow: a diagram needs at least {MIN_WIDTH} columns",
            opts.width
        )));
    }
    let rules = Rules::load(&opts.rules)?;
    let mut builds = vec![opts.build.clone()];
    // With --compare, a plan lays out the compared build only: the same
    // build twice shows what the plan changes.
    let mut readings = vec![&opts.reading];
    let compiled = opts.reading.compiled();
    if let Some(other) = &opts.compare {
        builds.push(crate::commands::diff::planned_label(
            &opts.build,
            other,
            &opts.reading,
        ));
        readings = vec![&compiled, &opts.reading];
    }
    let analyzed: Vec<Analyzed> = builds
        .iter()
        .zip(readings)
        .map(|(b, reading)| {
            analyze_build(b, &rules, opts.cacheline, Roots::Only(&opts.ty), reading)
        })
        .collect::<Result<_>>()?;
    let checks: Vec<_> = analyzed.iter().map(|a| a.checks.as_slice()).collect();
    let mut notes = rules_fit(&rules, &builds, &opts.reading, &checks)?;
    let mut focus = Vec::new();
    let mut parts = Vec::new();
    let mut explained = Vec::new();
    for a in analyzed {
        if let Some(field) = &opts.explain {
            explained.extend(super::analyze::explained(&a, field, &rules));
        }
        notes.extend(a.notes.iter().cloned());
        let Some(root) = a.roots.into_iter().next() else {
            continue;
        };
        // A strip asked for without a selection shows the whole struct.
        let selection = match (&opts.selection, opts.style) {
            (Selection::Flagged, Some(Style::Strip)) => Selection::Lines(
                0,
                root.analysis
                    .size
                    .div_ceil(root.analysis.cacheline)
                    .saturating_sub(1),
            ),
            (s, _) => s.clone(),
        };
        let (lines, paths) = select(&root.analysis, &selection)?;
        for p in paths {
            if !focus.contains(&p) {
                focus.push(p);
            }
        }
        let style = opts.style.unwrap_or(if lines.len() <= 4 {
            Style::Boxes
        } else {
            Style::Strip
        });
        parts.push(DiagramPart {
            config: a.config,
            analysis: root.analysis,
            paddings: root.paddings,
            lines,
            style,
            type_sizes: a.type_sizes,
        });
    }
    let comparison = match parts.as_slice() {
        [old, new] => Some(DiagramComparison {
            comparison: compare(&old.analysis, &new.analysis),
            focus,
        }),
        _ => None,
    };
    if let Some(field) = &opts.explain
        && explained.is_empty()
    {
        return Err(Error::Usage(format!(
            "--explain '{field}': no field of that name in {}",
            opts.ty
        )));
    }
    let mut seen = std::collections::HashSet::new();
    notes.retain(|n| seen.insert(n.clone()));
    Ok(DiagramReport {
        parts,
        comparison,
        width: opts.width,
        notes,
        explained,
    })
}

/// The lines to draw and the span paths they were chosen for.
fn select(a: &Analysis, selection: &Selection) -> Result<(Vec<u64>, Vec<String>)> {
    let count = a.size.div_ceil(a.cacheline);
    let lines_of = |s: &Span| Lines::of(s.offset, s.size, a.cacheline).iter();
    let flagged = |f: &&crate::analysis::Finding| f.allowed.is_none() && f.placement == 0;
    let lines: Vec<u64> = match selection {
        Selection::Flagged => {
            let mut l: Vec<u64> = a
                .findings
                .iter()
                .filter(flagged)
                .flat_map(|f| f.lines.clone())
                .collect();
            if l.is_empty() {
                l = (0..count.min(MAX_LINES as u64 + 1)).collect();
            }
            l
        }
        Selection::Lines(first, last) => {
            if first > last {
                return Err(Error::Usage(format!(
                    "--lines {first}-{last}: the range is reversed: write --lines {last}-{first}"
                )));
            }
            if *last >= count {
                return Err(Error::Usage(format!(
                    "--lines {first}-{last}: struct {} has lines 0-{}",
                    a.root,
                    count.saturating_sub(1)
                )));
            }
            (*first..=*last).take(MAX_LINES + 1).collect()
        }
        Selection::Around(fields) => {
            let mut l = Vec::new();
            let mut paths = Vec::new();
            for field in fields {
                let matched: Vec<usize> = (0..a.annotated.spans.len())
                    .filter(|&i| matches(&a.annotated.spans[i], field))
                    .collect();
                if matched.is_empty() {
                    let names: Vec<&str> = a.annotated.spans.iter().map(Span::name).collect();
                    let hint = crate::suggest::did_you_mean(field, names.into_iter());
                    return Err(Error::Usage(format!(
                        "--around {field}: struct {} has no field '{field}'{hint}",
                        a.root
                    )));
                }
                for &i in &matched {
                    l.extend(lines_of(&a.annotated.spans[i]).take(MAX_LINES + 1));
                    paths.push(a.annotated.spans[i].path.clone());
                    for f in a.findings.iter().filter(flagged) {
                        if f.a.span == i || f.b.span == i {
                            l.extend(f.lines.iter().copied());
                        }
                    }
                }
            }
            return capped(a, l, paths);
        }
    };
    capped(a, lines, Vec::new())
}

/// Sorted, deduplicated lines, refused when there are too many to draw.
fn capped(
    a: &Analysis,
    mut lines: Vec<u64>,
    paths: Vec<String>,
) -> Result<(Vec<u64>, Vec<String>)> {
    lines.sort_unstable();
    lines.dedup();
    if lines.len() > MAX_LINES {
        return Err(Error::Usage(format!(
            "struct {} would need {} lines drawn; pick some with --lines A-B or --around FIELD",
            a.root,
            lines.len()
        )));
    }
    Ok((lines, paths))
}

/// Most lines one diagram draws (a 640 KB struct in a strip).
const MAX_LINES: usize = 10_000;

/// True when `field` names `span`: its path, a dotted suffix of it, its
/// own name, or `TYPE.member` of a struct on its way.
fn matches(span: &Span, field: &str) -> bool {
    let field = field.split('[').next().unwrap_or(field);
    span.path == field
        || span.path.ends_with(&format!(".{field}"))
        || span.name() == field
        || span
            .owners
            .iter()
            .any(|(ty, rel)| format!("{ty}.{rel}") == field)
}
