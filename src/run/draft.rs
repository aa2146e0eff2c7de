//! Structs drafted from the source's declarations on some of a run's
//! builds, as `draft` drafts them: the rules `audit`'s layout half and a
//! `review` without rules check.

use std::collections::HashMap;
use std::path::Path;

use crate::analysis::draft::{Drafted, Facts, draft as draft_type};
use crate::analysis::draft_report::{Holders, Placer, enclosing, holders_by_value, members, merge};
use crate::error::Result;
use crate::evidence::source::{Declaration, Said};
use crate::report::draft::{DraftPlacement, DraftReport};
use crate::rules::Rules;

use super::{Opened, Run};

/// One struct's draft: the report `draft` would print and the rules its
/// text loads as in `check`.
pub(crate) struct Draft {
    /// The struct.
    pub(crate) name: String,
    /// The draft, merged over the builds.
    pub(crate) report: DraftReport,
    /// Its rules file's text.
    pub(crate) text: String,
    /// That text as `check --rules` reads it; `None` when it annotates
    /// no struct.
    pub(crate) rules: Option<Rules>,
}

impl Run {
    /// Structs `names` and the structs that enclose them in build
    /// `opened` (whose locks may guard their members): what to read the
    /// source about to draft them, sorted, each once.
    pub(crate) fn with_enclosing(&self, opened: &Opened, names: &[String]) -> Result<Vec<String>> {
        let view = self.view(opened)?;
        let holders = Holders::of_table(view.table());
        let mut wanted = names.to_vec();
        for name in names {
            if let Some(f) = opened.present.get(name) {
                wanted.extend(enclosing(view.table(), &holders, f.id));
            }
        }
        wanted.sort();
        wanted.dedup();
        Ok(wanted)
    }

    /// The structs that hold one of `names` by value themselves, in build
    /// `opened`: `(holder, held, the holder's members holding it)`, each
    /// pair once.
    pub(crate) fn holders_of(
        &self,
        opened: &Opened,
        names: &[String],
    ) -> Result<Vec<(String, String, Vec<String>)>> {
        let view = self.view(opened)?;
        let holders = Holders::of_table(view.table());
        let mut out = Vec::new();
        for name in names {
            if let Some(f) = opened.present.get(name) {
                for (holder, members) in holders_by_value(view.table(), &holders, f.id) {
                    out.push((holder, name.clone(), members));
                }
            }
        }
        Ok(out)
    }

    /// The structs `names` that `builds` have, each drafted on every one
    /// of them from `declarations` (about the structs and those enclosing
    /// them; needless-store candidates are left out) and merged, with
    /// `read` as what the drafts say they were drafted from: in `names`'
    /// order.
    pub(crate) fn drafts(
        &self,
        builds: &[&Opened],
        names: &[String],
        declarations: &[Declaration],
        read: &[String],
    ) -> Result<Vec<Draft>> {
        let mut about: HashMap<&str, Vec<&Declaration>> = HashMap::new();
        for d in declarations {
            if !matches!(d.said, Said::Needless(_)) {
                about.entry(d.ty.as_str()).or_default().push(d);
            }
        }
        let sites: Vec<Declaration> = declarations
            .iter()
            .filter(|d| matches!(d.said, Said::Placed(_)))
            .cloned()
            .collect();
        let mut drafted: HashMap<&str, Vec<(String, Drafted)>> = HashMap::new();
        let mut placed: HashMap<&str, Vec<DraftPlacement>> = HashMap::new();
        let mut misfits: HashMap<&str, Vec<String>> = HashMap::new();
        // The structs perf names (`struct ring`): only theirs are placed,
        // so a whole tree's drafts do not each look through every sample.
        let sampled: std::collections::HashSet<&str> = self
            .perf
            .iter()
            .flat_map(|f| &f.samples)
            .map(|s| s.ty.strip_prefix("struct ").unwrap_or(&s.ty))
            .collect();
        for opened in builds {
            let view = self.view(opened)?;
            let table = view.table();
            let line = self.build_line(opened);
            let holders = Holders::of_table(table);
            let mut placer = Placer::new(table, &holders, line, &sites);
            for name in names {
                let Some(f) = opened.present.get(name) else {
                    continue;
                };
                let outer = enclosing(table, &holders, f.id);
                let (samples, notes) = match sampled.contains(name.as_str()) {
                    true => self.samples_on(&view, f.id, line).unwrap_or_default(),
                    false => Default::default(),
                };
                misfits.entry(name).or_default().extend(notes);
                let facts = Facts {
                    ty: name.clone(),
                    members: members(table, f.id, line)?,
                    placed: samples,
                    declarations: std::iter::once(name)
                        .chain(&outer)
                        .flat_map(|t| about.get(t.as_str()).into_iter().flatten().copied())
                        .collect(),
                    enclosing: outer,
                };
                placer.add_placements(placed.entry(name).or_default(), f.id, name);
                drafted
                    .entry(name)
                    .or_default()
                    .push((opened.build.config.clone(), draft_type(&facts)));
            }
        }
        let mut out = Vec::new();
        for name in names {
            let Some(drafts) = drafted.remove(name.as_str()) else {
                continue;
            };
            let mut report = DraftReport {
                read: read.to_vec(),
                contexts: Vec::new(),
                types: Vec::new(),
                placements: placed.remove(name.as_str()).unwrap_or_default(),
                notes: misfits.remove(name.as_str()).unwrap_or_default(),
            };
            merge(&mut report, drafts);
            let text = report.rules_file();
            let file = format!("{name}.toml");
            let rules = Rules::from_toml(Path::new(&file), &text)?;
            out.push(Draft {
                name: name.clone(),
                report,
                text,
                rules,
            });
        }
        Ok(out)
    }
}
