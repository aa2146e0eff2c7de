//! Cacheline diagrams of one struct in one or two views of builds (a
//! build and another, or a build compiled and planned): the lines to
//! draw chosen from the analyses, and what changed between the two. The
//! `diagram` command draws them, and `suggest --diagram` its suggestion.

use super::analyze::{Analyzed, Roots, analyze, explained as explained_lines};
use super::{Run, View, rules_fit};
use crate::analysis::compare::compare;
use crate::analysis::{Analysis, Span};
use crate::error::{Error, Result};
use crate::lines::Lines;
use crate::report::diagram::{DiagramComparison, DiagramPart, DiagramReport, Style};

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

/// Width a diagram is drawn in unless told otherwise.
pub const DEFAULT_WIDTH: usize = 72;

/// Narrowest width a diagram can be drawn in.
pub const MIN_WIDTH: usize = 40;

/// What to draw.
#[derive(Clone, Debug)]
pub(crate) struct DrawSpec {
    /// The struct (lines counted from its start).
    pub(crate) ty: String,
    /// Which lines.
    pub(crate) selection: Selection,
    /// Maximum width in columns.
    pub(crate) width: usize,
    /// Style; `None` picks boxes for up to 4 lines, else a strip.
    pub(crate) style: Option<Style>,
    /// `--explain FIELD`: the field whose lines to explain under the drawing.
    pub(crate) explain: Option<String>,
}

/// Draws `spec.ty` in each of `views` (two: compared, the second against
/// the first) under the run's rules.
pub(crate) fn draw(run: &Run, views: &[&View<'_>], spec: &DrawSpec) -> Result<DiagramReport> {
    if spec.width < MIN_WIDTH {
        return Err(Error::Usage(format!(
            "--width {} is too narrow: a diagram needs at least {MIN_WIDTH} columns",
            spec.width
        )));
    }
    let analyzed: Vec<Analyzed> = views
        .iter()
        .map(|v| {
            analyze(
                run,
                v,
                &run.rules,
                run.line(v.opened),
                Roots::Only(&spec.ty),
            )
        })
        .collect::<Result<_>>()?;
    let checks: Vec<_> = analyzed.iter().map(|a| a.checks.as_slice()).collect();
    let mut notes = rules_fit(run, views, &checks)?;
    notes.extend(run.perf_notes());
    let mut focus = Vec::new();
    let mut parts = Vec::new();
    let mut explained = Vec::new();
    for (a, view) in analyzed.into_iter().zip(views) {
        if let Some(field) = &spec.explain {
            explained.extend(explained_lines(&a, field, &run.rules));
        }
        notes.extend(a.notes.iter().cloned());
        let Some(root) = a.roots.into_iter().next() else {
            continue;
        };
        // A strip asked for without a selection shows the whole struct.
        let selection = match (&spec.selection, spec.style) {
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
        let style = spec.style.unwrap_or(if lines.len() <= 4 {
            Style::Boxes
        } else {
            Style::Strip
        });
        // perf's shares of the root's members (`--perf`).
        let mut shares = std::collections::BTreeMap::new();
        let line = run.line(view.opened);
        if let Some((placed, misfits)) = run.samples_on_named(view, &root.analysis.root, line) {
            notes.extend(misfits);
            shares = crate::analysis::samples::shares(&placed);
        }
        parts.push(DiagramPart {
            shares,
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
    if let Some(field) = &spec.explain
        && explained.is_empty()
    {
        return Err(Error::Usage(format!(
            "--explain '{field}': no field of that name in {}",
            spec.ty
        )));
    }
    Ok(DiagramReport {
        parts,
        comparison,
        width: spec.width,
        notes: crate::report::unique_notes(notes),
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
                let matched = crate::analysis::explain::matching(a, field);
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
