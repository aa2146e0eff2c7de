//! A draft as the rules file it is: TOML that `check --rules` reads,
//! whose every rule has its evidence above it as comments and its mark
//! after it. `draft` prints it; `audit` checks it and writes it.

use std::fmt::Write;

use crate::report::draft::{DraftField, DraftReport};

impl DraftReport {
    /// The draft as a rules file: TOML that `check --rules` reads, each
    /// rule with its evidence above it as comments and its mark after it.
    pub fn rules_file(&self) -> String {
        toml(self)
    }
}

fn toml(r: &DraftReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Drafted by cachelint draft from:");
    for line in &r.read {
        let _ = writeln!(out, "#   {line}");
    }
    let _ = writeln!(
        out,
        "# Each rule has its evidence above it and after it the kind it rests on:\n\
         # declared (the source), measured (perf) or inferred (the type). Accept\n\
         # or change it line by line; a member without evidence has no rule."
    );
    if !r.contexts.is_empty() {
        let _ = writeln!(out, "\n[contexts]");
        for c in &r.contexts {
            let _ = writeln!(out, "# {}", c.why);
            let _ = writeln!(out, "{} = \"{}\"", key(&c.name), c.writers);
        }
    }
    if !r.placements.is_empty() {
        placements(&mut out, r);
    }
    for t in &r.types {
        // `check` refuses a table that rules nothing.
        match t.fields.iter().any(|f| f.rule.is_some()) {
            true => writeln!(out, "\n[{}]", key(&t.name)),
            false => writeln!(out, "\n# [{}]: no member has a rule", key(&t.name)),
        }
        .ok();
        for f in &t.fields {
            field(&mut out, f);
        }
        // How hot each ruled member is: check ranks findings by it.
        let hot: Vec<(&str, u64)> = t
            .fields
            .iter()
            .filter(|f| f.rule.is_some())
            .filter_map(|f| Some((f.path.as_str(), f.heat?)))
            .collect();
        if !hot.is_empty() {
            let _ = writeln!(
                out,
                "\n# How hot each member is (its heat evidence above): check ranks findings by it.\n[heat.{}]",
                key(&t.name)
            );
            for (path, heat) in hot {
                let _ = writeln!(out, "{} = {heat}", key(path));
            }
        }
    }
    out
}

/// `[placement]`, each rule with its sites above it. A struct whose
/// sites give no more than its alignment gets a rule at its alignment when
/// some site makes it on its own (so that `check` counts lines from it);
/// one only embedded, comments only.
fn placements(out: &mut String, r: &DraftReport) {
    let ruled = r.placements.iter().any(|p| p.start.is_some() || p.alone);
    let _ = match ruled {
        true => writeln!(out, "\n[placement]"),
        false => writeln!(
            out,
            "\n# [placement]: no struct is placed beyond its alignment"
        ),
    };
    for p in &r.placements {
        for e in &p.evidence {
            let _ = writeln!(out, "# {}: {e}", p.ty);
        }
        let start = match (p.start, p.alone) {
            (Some(s), _) => s,
            (None, true) => {
                let _ = writeln!(
                    out,
                    "# {}: placed as its {}-byte alignment allows; made on its own, so a root of check",
                    p.ty, p.alignment
                );
                p.alignment
            }
            // Only inside its holders (its evidence says so): no rule.
            (None, false) => continue,
        };
        let _ = match start >= p.cacheline {
            true => writeln!(out, "{} = \"line\"", key(&p.ty)),
            false => writeln!(out, "{} = {start}", key(&p.ty)),
        };
    }
}

fn field(out: &mut String, f: &DraftField) {
    for e in &f.evidence {
        let _ = writeln!(out, "# {}: {}: {}", f.path, e.mark.name(), e.text);
    }
    for c in &f.conflicts {
        let _ = writeln!(out, "# {}: CONFLICT: {c}", f.path);
    }
    match (&f.rule, f.mark) {
        (Some(rule), Some(mark)) => {
            let _ = writeln!(out, "{} = {}  # {}", key(&f.path), rule.toml(), mark.name());
        }
        _ if f.evidence.is_empty() => {
            let _ = writeln!(out, "# {}: no evidence", f.path);
        }
        _ => {
            let _ = writeln!(out, "# {}: no rule: the evidence gives no class", f.path);
        }
    }
}

/// A TOML key: bare when it can be, else quoted.
fn key(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        name.to_owned()
    } else {
        format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""))
    }
}
