//! `cachelint asserts --rules R BUILD TYPE [--against FILE.c]`: the
//! kernel-style check function (`tcp_struct_check()`) of one struct, from
//! its table and a build ([`crate::run::check_function`]); with
//! `--against`, the differences from the kernel's own function in a C
//! file.

use std::path::PathBuf;

use crate::analysis::asserts as compare;
use crate::error::Result;
use crate::load::lookup::TypeSpec;
use crate::report::asserts::AssertsReport;
use crate::rules::Rules;
use crate::run::{Run, Want, check_function};

/// Everything `asserts` needs besides the run (the rules, one build).
#[derive(Clone, Debug)]
pub struct AssertsOptions {
    /// The struct (`NAME`, `NAME#N`, `NAME@FILE`).
    pub ty: String,
    /// A C file holding the kernel's check function, to compare with.
    pub against: Option<PathBuf>,
}

impl AssertsOptions {
    /// What `asserts` reads of its build.
    pub fn want(&self, _rules: &Rules) -> Result<Want> {
        Ok(Want {
            specs: vec![TypeSpec::parse(&self.ty)?],
            ..Want::default()
        })
    }
}

/// Runs `asserts` on the run's one build.
pub fn asserts(run: &Run, opts: &AssertsOptions) -> Result<AssertsReport> {
    let spec = TypeSpec::parse(&opts.ty)?;
    let kernel = match &opts.against {
        Some(file) => Some(crate::csource::check_function::read(file, &spec.name)?),
        None => None,
    };
    let opened = run.single("asserts")?;
    let view = run.view(opened)?;
    let made = check_function(run, &view, &opened.found[0], &spec.name)?;
    let mut report = made.report.clone();
    if let Some((file, asserts)) = &kernel {
        let placed = |member: &str| made.placement(&view, member);
        report.comparison = Some(compare::compare(file, asserts, &report, placed));
    }
    Ok(report)
}
