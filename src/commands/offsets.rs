//! `cachelint offsets BUILD... PATH...`: one row per path, one column per
//! build (config): offset, size and cacheline of each, rows whose lines
//! differ between builds marked.

use std::collections::{HashMap, HashSet};

use comfy_table::{Table, presets};
use serde::Serialize;

use super::{Output, to_json};
use crate::error::{Error, Result};
use crate::load::{self, Build, Source};
use crate::model::{TypeId, TypeTable};
use crate::path::{self, MemberPath, Step};

/// Output format of `offsets`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OffsetsFormat {
    /// A text table.
    Text,
    /// JSON.
    Json,
    /// A markdown table.
    Markdown,
}

/// Where a path lands in one build.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Cell {
    /// Offset from the type's start.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
    /// First cacheline.
    pub cacheline: u64,
    /// Last cacheline.
    pub last_cacheline: u64,
}

#[derive(Serialize)]
struct RowJson {
    path: String,
    lines_differ: bool,
    builds: Vec<(String, Option<Cell>)>,
}

/// Runs `offsets`.
pub fn offsets(
    builds: &[Build],
    paths: &[String],
    format: OffsetsFormat,
    cacheline: Option<u64>,
    source: &Source,
) -> Result<Output> {
    let specs: Vec<PathSpec> = paths
        .iter()
        .map(|p| PathSpec::parse(p))
        .collect::<Result<_>>()?;
    let mut per_build: Vec<Vec<(String, std::result::Result<Cell, String>)>> = Vec::new();
    for build in builds {
        per_build.push(load::open(build, source, |loaded| {
            let line = cacheline.unwrap_or(loaded.cacheline);
            let names: HashSet<&str> = specs.iter().map(|s| s.path.root.as_str()).collect();
            let found = loaded.find_present(&names)?.types;
            let types: HashMap<&str, TypeId> =
                found.iter().map(|(n, f)| (n.as_str(), f.id)).collect();
            Ok(specs
                .iter()
                .flat_map(|s| s.rows(loaded.table(), &types, line))
                .collect())
        })?);
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
        let lines: HashSet<Option<(u64, u64)>> = cells
            .iter()
            .map(|c| c.map(|c| (c.cacheline, c.last_cacheline)))
            .collect();
        table_rows.push((row.clone(), lines.len() > 1, cells));
    }
    let stdout = match format {
        OffsetsFormat::Json => to_json(
            &table_rows
                .iter()
                .map(|(path, differ, cells)| RowJson {
                    path: path.clone(),
                    lines_differ: *differ,
                    builds: builds
                        .iter()
                        .map(|b| b.config.clone())
                        .zip(cells.iter().copied())
                        .collect(),
                })
                .collect::<Vec<_>>(),
        ),
        OffsetsFormat::Text | OffsetsFormat::Markdown => {
            let mut table = Table::new();
            table.load_style(if format == OffsetsFormat::Markdown {
                presets::ASCII_MARKDOWN
            } else {
                presets::ASCII_FULL_CONDENSED
            });
            let mut header = vec!["path".to_owned()];
            header.extend(builds.iter().map(|b| b.config.clone()));
            header.push("lines".into());
            table.set_header(header);
            for (path, differ, cells) in &table_rows {
                let mut row = vec![path.clone()];
                row.extend(cells.iter().map(|c| match c {
                    Some(c) if c.cacheline == c.last_cacheline => {
                        format!("{} +{} L{}", c.offset, c.size, c.cacheline)
                    }
                    Some(c) => format!(
                        "{} +{} L{}-{}",
                        c.offset, c.size, c.cacheline, c.last_cacheline
                    ),
                    None => "absent".to_owned(),
                }));
                row.push(if *differ {
                    "differ".into()
                } else {
                    String::new()
                });
                table.add_row(row);
            }
            format!(
                "{table}\nEach cell: offset +size Lcacheline(s), counted from the start of the path's type.\n"
            )
        }
    };
    Ok(Output {
        stdout,
        ..Output::default()
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
                    cacheline: r.offset / line,
                    last_cacheline: (r.offset + r.size.max(1) - 1) / line,
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
