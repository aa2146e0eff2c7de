//! What `diff` found between two builds.

use serde::Serialize;

use crate::analysis::compare::Pair;
use crate::diff::TypeDiff;

/// An annotated field on other lines in the new build.
#[derive(Clone, Debug, Serialize)]
pub struct MovedField {
    /// Its path from the type.
    pub path: String,
    /// Its class.
    pub class: String,
    /// First and last line in the old build.
    pub old_lines: (u64, u64),
    /// First and last line in the new build.
    pub new_lines: (u64, u64),
}

/// One type compared.
#[derive(Serialize)]
pub struct TypeReport {
    /// The type's name.
    pub name: String,
    /// `both`, or the build the type exists in.
    pub present: String,
    /// The member changes, when it is in both.
    pub diff: Option<TypeDiff>,
    /// With rules: annotated fields on other lines.
    pub moved_fields: Vec<MovedField>,
    /// With rules: findings of the old build that the new lacks.
    pub findings_fixed: Vec<Pair>,
    /// With rules: findings of the new build that the old lacks.
    pub findings_introduced: Vec<Pair>,
}

impl TypeReport {
    /// True when anything differs for this type.
    pub fn differs(&self) -> bool {
        self.present != "both"
            || self.diff.as_ref().is_some_and(|d| !d.is_same())
            || !self.moved_fields.is_empty()
            || !self.findings_fixed.is_empty()
            || !self.findings_introduced.is_empty()
    }
}

/// The kernel configs of the two builds, where they can be found.
#[derive(Serialize)]
pub struct ConfigReport {
    /// Where the old build's config came from.
    pub old: Option<String>,
    /// Where the new build's came from.
    pub new: Option<String>,
    /// Options known to change struct layouts that differ: name, old, new.
    pub layout_options: Vec<(String, String, String)>,
    /// How many other options differ.
    pub other_options: usize,
}

/// `diff`'s whole result.
#[derive(Serialize)]
pub struct DiffReport {
    /// Line size used.
    pub cacheline: u64,
    /// The old build's label.
    pub old: String,
    /// The new build's label.
    pub new: String,
    /// Each type asked for.
    pub types: Vec<TypeReport>,
    /// The configs.
    pub config: ConfigReport,
    /// True when anything differs (exit code 1).
    pub differ: bool,
    /// Notes for standard error.
    #[serde(skip)]
    pub notes: Vec<String>,
}
