//! Whether the rules fit the builds: a rule that fits none of them is an
//! error at the rule; one that fits only some is a note for the others.

use super::{Run, View};
use crate::analysis::validate::Check;
use crate::error::Result;
use crate::rules::Location;

/// A rule that fits no build is an error; one that fits only some builds
/// is a note for the others (a struct absent without its CONFIG_).
pub(crate) fn rules_fit(
    run: &Run,
    builds: &[&View<'_>],
    checks: &[&[(Location, Check)]],
) -> Result<Vec<String>> {
    let rules = &run.rules;
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
        let member_rule = || {
            rules
                .types
                .iter()
                .any(|t| t.fields.iter().any(|f| f.at == at))
        };
        if !fits && rules.absent_members_note && member_rule() {
            notes.push(format!("{at}: {why}; skipped (absent-members = \"note\")"));
            continue;
        }
        if !fits {
            let hint = type_hint(run, &at, builds[*first_build].opened);
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
fn type_hint(run: &Run, at: &Location, build: &super::Opened) -> String {
    let Some(names) = run
        .rules
        .types
        .iter()
        .find(|t| &t.at == at)
        .map(|t| t.names().collect::<Vec<_>>())
        .or_else(|| {
            run.rules
                .roots
                .iter()
                .find(|(_, l)| l == at)
                .map(|(n, _)| vec![n.as_str()])
        })
    else {
        return String::new();
    };
    run.did_you_mean(build, &names)
}
