//! Roots that say a finding again: an outer struct that holds the
//! annotated struct at the same place in a line as another root
//! (`tcp6_sock` around `tcp_sock` at offset 0) gives the same findings
//! again, from other paths. Each such finding is told once, for the root
//! with the fewest findings that has it (the struct itself before the
//! structs holding it: `sock` before `packet_sock`), the earlier root on
//! a tie; a root whose findings are all told for another is reported
//! through it.

use std::collections::{HashMap, HashSet};

use super::{ReportFinding, ReportSide};

/// A finding as it is wherever its root is: the fields by name,
/// declaration, rule and place in a line, never by path or line number.
fn signature(f: &ReportFinding, line: u64) -> String {
    let side = |s: &ReportSide| {
        format!(
            "{}|{}|{}|{:?}:{:?}|{}|{}|{}",
            s.name,
            s.class,
            s.why,
            s.decl_file,
            s.decl_line,
            s.size,
            s.offset % line.max(1),
            s.bytes[0] % line.max(1)
        )
    };
    format!(
        "{}|{}|{:?}|{:?}|{}|{}",
        f.kind,
        f.severity,
        f.allowed,
        f.placement.as_ref().map(|p| (p.sharing, p.of)),
        side(&f.a),
        side(&f.b)
    )
}

/// Which root tells each finding of a build's roots.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Told {
    /// Per root (in the order analysed), per finding: the root it is told
    /// for (the root itself, or another with the same finding).
    pub(crate) by: Vec<Vec<usize>>,
}

impl Told {
    /// The root that tells every finding of root `r`, when it is one
    /// other root: it stands for `r`.
    pub(crate) fn stood_for(&self, r: usize) -> Option<usize> {
        let first = *self.by[r].first()?;
        (first != r && self.by[r].iter().all(|&q| q == first)).then_some(first)
    }

    /// The roots telling some but not all of root `r`'s findings, and
    /// how many they tell.
    pub(crate) fn partly(&self, r: usize) -> Option<(Vec<usize>, usize)> {
        let others: Vec<usize> = self.by[r].iter().copied().filter(|&q| q != r).collect();
        if others.is_empty() || others.len() == self.by[r].len() {
            return None;
        }
        let mut roots = others.clone();
        roots.sort_unstable();
        roots.dedup();
        Some((roots, others.len()))
    }
}

/// For each root's findings (in the order analysed), the root each is
/// told for: of the roots with that finding, the one with the fewest
/// findings, the earlier on a tie.
pub(crate) fn told(roots: &[&[ReportFinding]], line: u64) -> Told {
    let sigs: Vec<Vec<String>> = roots
        .iter()
        .map(|fs| fs.iter().map(|f| signature(f, line)).collect())
        .collect();
    let sizes: Vec<usize> = sigs
        .iter()
        .map(|s| s.iter().collect::<HashSet<_>>().len())
        .collect();
    let mut teller: HashMap<&str, usize> = HashMap::new();
    for (r, s) in sigs.iter().enumerate() {
        for sig in s {
            teller
                .entry(sig)
                .and_modify(|q| {
                    if sizes[r] < sizes[*q] {
                        *q = r;
                    }
                })
                .or_insert(r);
        }
    }
    Told {
        by: sigs
            .iter()
            .map(|s| s.iter().map(|sig| teller[sig.as_str()]).collect())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Kind, Severity};

    fn finding(
        root: &str,
        prefix: &str,
        line_of_root: u64,
        a: (&str, u64),
        b: (&str, u64),
    ) -> ReportFinding {
        let side = |(name, offset): (&str, u64)| ReportSide {
            name: name.into(),
            path: format!("{prefix}{name}"),
            part: format!("{prefix}{name}"),
            class: "hot-read".into(),
            offset,
            size: 8,
            bytes: [offset, offset + 7],
            why: format!("rule of tcp_sock at r.toml:1:{name}"),
            lock: None,
            decl_file: None,
            decl_line: None,
            group: None,
            contexts: None,
            samples: None,
        };
        ReportFinding {
            root: root.into(),
            kind: Kind::FalseSharing,
            severity: Severity::Error,
            cacheline: line_of_root,
            a: side(a),
            b: side(b),
            config: "base".into(),
            description: String::new(),
            cacheline_bytes: [0, 0],
            cachelines: vec![line_of_root],
            placement: None,
            allowed: None,
            elements: None,
            meeting: None,
            heat: None,
        }
    }

    #[test]
    fn a_finding_is_told_for_the_root_with_the_fewest_findings_that_has_it() {
        // tcp_sock's x at 8 and y at 16 share line 0 of tcp_sock. tcp6_sock
        // holds tcp_sock at 0, another_sock at 128 (0 mod 64): same pair,
        // same place in the line, lines 0 and 2. odd_sock holds it at 8: x
        // at 16, y at 24, another place: a finding of its own.
        let tcp = [finding("tcp_sock", "", 0, ("x", 8), ("y", 16))];
        let tcp6 = [finding("tcp6_sock", "tcp.", 0, ("x", 8), ("y", 16))];
        let another = [finding("another_sock", "sk.", 2, ("x", 136), ("y", 144))];
        let odd = [finding("odd_sock", "sk.", 0, ("x", 16), ("y", 24))];
        let none: [ReportFinding; 0] = [];
        let roots: [&[ReportFinding]; 5] = [&tcp6, &odd, &tcp, &none, &another];
        let told = told(&roots, 64);
        // The same finding everywhere: the earliest of equals tells it.
        assert_eq!(told.by, [vec![0], vec![1], vec![0], vec![], vec![0]]);
        let stood: Vec<Option<usize>> = (0..5).map(|r| told.stood_for(r)).collect();
        assert_eq!(stood, [None, None, Some(0), None, Some(0)]);
        assert!((0..5).all(|r| told.partly(r).is_none()));
        // An outer root with a finding of its own tells only that one: the
        // struct itself, with fewer, tells the rest.
        let mut more = tcp6.to_vec();
        more.push(finding("tcp6_sock", "", 40, ("inet6", 2560), ("z", 2568)));
        let roots: [&[ReportFinding]; 2] = [&more, &tcp];
        let told = super::told(&roots, 64);
        assert_eq!(told.by, [vec![1, 0], vec![1]]);
        assert_eq!(told.stood_for(0), None);
        assert_eq!(told.stood_for(1), None);
        assert_eq!(told.partly(0), Some((vec![1], 1)));
    }
}
