//! Roots that add nothing: an outer struct that holds the annotated
//! struct at the same place in a line as another root (`tcp6_sock` around
//! `tcp_sock` at offset 0) gives the same findings again, from other
//! paths. Such a root is reported through the other one.

use std::collections::HashSet;

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

/// For each root (its findings, in the order analysed), the earlier or
/// larger root whose findings include all of its own, if any: that root
/// stands for it. Roots without findings stand for themselves.
pub(crate) fn stood_for(roots: &[&[ReportFinding]], line: u64) -> Vec<Option<usize>> {
    let sigs: Vec<HashSet<String>> = roots
        .iter()
        .map(|fs| fs.iter().map(|f| signature(f, line)).collect())
        .collect();
    let mut by: Vec<Option<usize>> = vec![None; roots.len()];
    for r in 0..roots.len() {
        if sigs[r].is_empty() {
            continue;
        }
        by[r] = (0..roots.len()).find(|&q| {
            q != r
                && by[q].is_none()
                && sigs[r].is_subset(&sigs[q])
                && (sigs[q].len() > sigs[r].len() || q < r)
        });
    }
    by
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
    fn a_root_holding_the_struct_at_the_same_place_in_a_line_stands_for_the_other() {
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
        assert_eq!(stood_for(&roots, 64), [None, None, Some(0), None, Some(0)]);
        // An outer root with a finding of its own stands for the inner one.
        let mut more = tcp6.to_vec();
        more.push(finding("tcp6_sock", "", 40, ("inet6", 2560), ("z", 2568)));
        let roots: [&[ReportFinding]; 2] = [&tcp, &more];
        assert_eq!(stood_for(&roots, 64), [Some(1), None]);
    }
}
