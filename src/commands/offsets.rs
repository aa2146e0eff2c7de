//! `cachelint offsets BUILD... PATH...`: one row per path, one column per
//! build (config): offset, size and cacheline of each, rows whose lines
//! differ between builds marked.

use std::collections::{HashMap, HashSet};

use crate::error::{Error, Result};
use crate::lines::Lines;
use crate::model::{TypeId, TypeTable};
use crate::path::{self, MemberPath, Step};
use crate::report::offsets::{Cell, OffsetsReport, OffsetsRow};
use crate::rules::Rules;
use crate::run::{Run, Want};

/// Everything `offsets` needs besides the run (its builds).
#[derive(Clone, Debug)]
pub struct OffsetsOptions {
    /// The member paths: `TYPE`, `TYPE.a.b[1]`, `TYPE.a.*`.
    pub paths: Vec<String>,
}

impl OffsetsOptions {
    /// What `offsets` reads of each build: the paths' root types.
    pub fn want(&self, _rules: &Rules) -> Result<Want> {
        let mut names = Vec::new();
        for p in &self.paths {
            let root = PathSpec::parse(p)?.path.root;
            if !names.contains(&root) {
                names.push(root);
            }
        }
        Ok(Want {
            names,
            ..Want::default()
        })
    }
}

/// Runs `offsets`.
pub fn offsets(run: &Run, opts: &OffsetsOptions) -> Result<OffsetsReport> {
    let specs: Vec<PathSpec> = opts
        .paths
        .iter()
        .map(|p| PathSpec::parse(p))
        .collect::<Result<_>>()?;
    let mut notes = Vec::new();
    let mut per_build: Vec<Vec<(String, std::result::Result<Cell, String>)>> = Vec::new();
    for opened in &run.builds {
        let view = run.view(opened)?;
        notes.extend(view.tagged_notes());
        let line = run.build_line(opened);
        let types: HashMap<&str, TypeId> = opened
            .present
            .iter()
            .map(|(n, f)| (n.as_str(), f.id))
            .collect();
        per_build.push(
            specs
                .iter()
                .flat_map(|s| s.rows(view.table(), &types, line))
                .collect(),
        );
    }
    // Rows in order of first appearance.
    let mut rows: Vec<String> = Vec::new();
    for (row, _) in per_build.iter().flatten() {
        if !rows.contains(row) {
            rows.push(row.clone());
        }
    }
    let mut table_rows = Vec::new();
    for row in &rows {
        let cells: Vec<Option<Cell>> = per_build
            .iter()
            .map(|b| {
                b.iter()
                    .find(|(r, _)| r == row)
                    .and_then(|(_, c)| c.clone().ok())
            })
            .collect();
        if cells.iter().all(Option::is_none) {
            let why = per_build
                .iter()
                .flatten()
                .find(|(r, _)| r == row)
                .and_then(|(_, c)| c.clone().err())
                .unwrap_or_default();
            return Err(Error::BadPath(why));
        }
        let lines: HashSet<Option<Lines>> = cells.iter().map(|c| c.map(|c| c.lines)).collect();
        table_rows.push(OffsetsRow {
            path: row.clone(),
            lines_differ: lines.len() > 1,
            cells,
        });
    }
    Ok(OffsetsReport {
        configs: run.builds.iter().map(|b| b.build.config.clone()).collect(),
        rows: table_rows,
        notes,
    })
}

/// A path as given: `TYPE`, `TYPE.a.b[1]`, or `TYPE.a.*` (every member of `a`).
struct PathSpec {
    text: String,
    path: MemberPath,
    wildcard: bool,
}

impl PathSpec {
    fn parse(text: &str) -> Result<PathSpec> {
        let (base, wildcard) = match text.strip_suffix(".*") {
            Some(base) => (base, true),
            None => (text, false),
        };
        Ok(PathSpec {
            text: text.to_owned(),
            path: MemberPath::parse(base)?,
            wildcard,
        })
    }

    /// The rows this spec gives in one build.
    fn rows(
        &self,
        table: &TypeTable,
        types: &HashMap<&str, TypeId>,
        line: u64,
    ) -> Vec<(String, std::result::Result<Cell, String>)> {
        let Some(&root) = types.get(self.path.root.as_str()) else {
            let why = format!(
                "no struct, union or typedef named '{}' in any build",
                self.path.root
            );
            return vec![(self.text.clone(), Err(why))];
        };
        let cell = |steps: &[Step], shown: &str| {
            path::resolve(table, root, steps, shown)
                .map(|r| Cell {
                    offset: r.offset,
                    size: r.size,
                    lines: Lines::of(r.offset, r.size, line),
                })
                .map_err(|e| e.to_string())
        };
        if !self.wildcard {
            return vec![(self.text.clone(), cell(&self.path.steps, &self.text))];
        }
        let base = self.text.trim_end_matches(".*");
        let inner = match path::resolve(table, root, &self.path.steps, base) {
            Ok(r) => r.ty,
            Err(e) => return vec![(self.text.clone(), Err(e.to_string()))],
        };
        let mut names = Vec::new();
        if let Some(ty) = inner {
            path::member_names(table, ty, &mut names);
        }
        if names.is_empty() {
            return vec![(
                self.text.clone(),
                Err(format!(
                    "'{base}' is not a struct or union: '.*' lists members"
                )),
            )];
        }
        names
            .into_iter()
            .map(|n| {
                let mut steps = self.path.steps.clone();
                steps.push(Step::Field(n.clone()));
                let shown = format!("{base}.{n}");
                let c = cell(&steps, &shown);
                (shown, c)
            })
            .collect()
    }
}
