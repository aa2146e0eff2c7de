//! What `asserts` found: the tabled members of one struct in each kernel
//! cacheline group of a build, the groups' measured sizes, and, with
//! `--against`, how the kernel's own check function differs. The analysis
//! compares them, so it owns the types.

pub use crate::analysis::asserts::{
    AssertsReport, Comparison, ComparisonSummary, Difference, DifferenceKind, GroupAsserts, Member,
    Outside, Placement, Weight,
};
