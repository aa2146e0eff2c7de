//! `cachelint diagram --rules R BUILD TYPE`: cacheline diagrams of one
//! struct under the rules, for a changelog; `--compare OTHER` draws the
//! same fields in a second build and sums up what changed. The drawing
//! itself is the run's ([`crate::run::draw`]), shared with `suggest`.

use crate::error::{Error, Result};
use crate::report::diagram::{DiagramReport, Style};
use crate::rules::Rules;
use crate::run::{DrawSpec, Run, Selection, Want, draw};

/// Everything `diagram` needs besides the run (the rules; its build, and
/// with `--compare` the other build second).
#[derive(Clone, Debug)]
pub struct DiagramOptions {
    /// The struct to draw (lines counted from its start).
    pub ty: String,
    /// Which lines.
    pub selection: Selection,
    /// Maximum width in columns.
    pub width: usize,
    /// Style; `None` picks boxes for up to 4 lines, else a strip.
    pub style: Option<Style>,
    /// `--explain FIELD`: the field whose lines to explain under the drawing.
    pub explain: Option<String>,
}

impl DiagramOptions {
    /// What `diagram` reads of each build: the struct and the rules' types.
    pub fn want(&self, _rules: &Rules) -> Result<Want> {
        Ok(Want {
            names: vec![self.ty.clone()],
            ..Want::default()
        })
    }
}

/// Runs `diagram`. With a plan and `--compare`, the plan lays out the
/// compared build only: the same build twice shows what the plan changes.
pub fn diagram(run: &Run, opts: &DiagramOptions) -> Result<DiagramReport> {
    let spec = DrawSpec {
        ty: opts.ty.clone(),
        selection: opts.selection.clone(),
        width: opts.width,
        style: opts.style,
        explain: opts.explain.clone(),
    };
    match run.builds.as_slice() {
        [one] => draw(run, &[&run.view(one)?], &spec),
        [first, other] => {
            let first = first.compiled();
            let mut other = run.view(other)?;
            other.label_against(&first);
            draw(run, &[&first, &other], &spec)
        }
        _ => Err(Error::Usage(
            "diagram draws one build, or two with --compare".into(),
        )),
    }
}
