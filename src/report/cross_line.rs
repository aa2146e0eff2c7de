//! Cross-context sharing told once per line (issue 29 §5): every
//! cross-context pair of one root on one line is one diagnostic, which
//! says which contexts write the line, through which fields, and what it
//! costs each context that uses the line without those writes.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::ReportFinding;
use crate::rules::Kind;

/// One context's part in a line's cross-context sharing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextOnLine {
    /// The context.
    pub context: String,
    /// The fields of the line it writes that another context does not
    /// need (their parts, in line order).
    pub writes: Vec<String>,
    /// The fields it uses on the line while another context writes it
    /// (their parts, in line order).
    pub uses: Vec<String>,
    /// The bytes of those fields on the line.
    pub bytes: u64,
    /// The contexts whose writes take the line from it.
    pub from: Vec<String>,
}

/// The contexts meeting on one line, from its cross-context findings.
pub fn contexts_on_line(group: &[ReportFinding]) -> Vec<ContextOnLine> {
    let mut by: BTreeMap<String, ContextOnLine> = BTreeMap::new();
    let entry = |by: &mut BTreeMap<String, ContextOnLine>, c: &str| {
        by.entry(c.to_owned())
            .or_insert_with(|| ContextOnLine {
                context: c.to_owned(),
                writes: Vec::new(),
                uses: Vec::new(),
                bytes: 0,
                from: Vec::new(),
            })
            .context
            .clone()
    };
    // (context, part) seen, and each part's first byte (for line order).
    let mut used: HashMap<(String, String), u64> = HashMap::new();
    let mut written: BTreeSet<(String, u64, String)> = BTreeSet::new();
    for f in group {
        let Some(m) = &f.meeting else { continue };
        for w in &m.writes_in {
            entry(&mut by, w);
            written.insert((w.clone(), f.a.bytes[0], f.a.part.clone()));
        }
        for o in &m.others {
            entry(&mut by, o);
            if used
                .insert((o.clone(), f.b.part.clone()), f.b.bytes[0])
                .is_none()
            {
                let c = by.get_mut(o).expect("entered above");
                c.bytes += f.b.bytes[1] + 1 - f.b.bytes[0];
            }
            let c = by.get_mut(o).expect("entered above");
            for w in &m.writes_in {
                if !c.from.contains(w) {
                    c.from.push(w.clone());
                }
            }
        }
    }
    for (context, _, part) in written {
        let c = by.get_mut(&context).expect("entered above");
        if !c.writes.contains(&part) {
            c.writes.push(part);
        }
    }
    let mut uses: Vec<((String, String), u64)> = used.into_iter().collect();
    uses.sort_by(|x, y| (x.1, &x.0.1).cmp(&(y.1, &y.0.1)));
    for ((context, part), _) in uses {
        by.get_mut(&context).expect("entered above").uses.push(part);
    }
    by.into_values()
        .map(|mut c| {
            c.from.sort();
            c
        })
        .collect()
}

/// Puts the cross-context findings of one build, root and line next to
/// each other (where the first of them is), the rest in their order: a
/// line's sharing is then one run, one diagnostic.
pub(crate) fn gather(findings: Vec<ReportFinding>) -> Vec<ReportFinding> {
    let mut runs: Vec<Vec<ReportFinding>> = Vec::new();
    let mut at: HashMap<(String, String, u64, Option<String>), usize> = HashMap::new();
    for f in findings {
        if f.kind != Kind::CrossContext {
            runs.push(vec![f]);
            continue;
        }
        let key = (
            f.config.clone(),
            f.root.clone(),
            f.cacheline,
            f.allowed.clone(),
        );
        match at.get(&key) {
            Some(&i) => runs[i].push(f),
            None => {
                at.insert(key, runs.len());
                runs.push(vec![f]);
            }
        }
    }
    runs.into_iter().flatten().collect()
}
