//! Alternatives of one union are the same memory, never a false-sharing
//! pair (issue 29 §1), on `fixtures/src/unions.c` under
//! `tests/rules/unions.toml`. Every expectation below is reasoned by hand
//! from the C source and the rules file (LP64: long and pointers 8 bytes,
//! int 4; every struct is at most 40 bytes, so with the struct at byte 0
//! of a line all its members share line 0), never pasted from cachelint's
//! output.

use std::collections::BTreeSet;

use crate::common;
use cachelint::commands::Kind;
use cachelint::report::Report;
use common::run::{self as cli, Format};
use common::{fixture, rules};

fn check(format: Format) -> String {
    let file = fixture("unions.o");
    let opts = cli::check_options(&[rules("unions.toml")], &[("unions", file.as_path())]);
    cli::check(&opts, format)
        .unwrap_or_else(|e| panic!("{e}"))
        .stdout
}

/// `(root, writer path, other path, kind)` of every finding.
type Pair = (String, String, String, Kind);

fn pair(root: &str, a: &str, b: &str, kind: Kind) -> Pair {
    (root.into(), a.into(), b.into(), kind)
}

/// The pairs the C source and the rules make, by hand:
///
/// - `u_named` { before@0 HR; cnt@8 = union { swap, memsw } of counter
///   { usage@+0 LW, max@+8 HR, parent@+16 HR }; after@32 HR }, with
///   `cnt.memsw.max` reclassed LW: before and after each meet the three
///   writers (swap.usage, memsw.usage, memsw.max); inside swap, usage meets
///   max and parent; inside memsw, usage meets max (two writers) and
///   parent, and max meets parent. Nothing of swap meets anything of memsw.
/// - `u_anon` { union { flags LW; word HR }@0; tail@8 HR }: flags meets
///   tail; word is flags' own bytes.
/// - `u_nested` { n = union { struct { a@0 LW; b@4 HR };
///   union { c@0 HR; de { d@0 LW; e@4 HR } } } }: a meets b and d meets e,
///   each pair in one alternative; c is de's memory, and the outer
///   alternatives are each other's.
/// - `u_deep` { struct { union { struct { p@0 LW; q@8 HR };
///   struct { r@0 HR; s@8 LW } } } }: p meets q, s meets r.
fn expected() -> BTreeSet<Pair> {
    use Kind::{FalseSharing as Fs, WriteVsWrite as Ww};
    let n = "u_named";
    [
        pair(n, "cnt.swap.usage", "before", Fs),
        pair(n, "cnt.memsw.usage", "before", Fs),
        pair(n, "cnt.memsw.max", "before", Fs),
        pair(n, "cnt.swap.usage", "after", Fs),
        pair(n, "cnt.memsw.usage", "after", Fs),
        pair(n, "cnt.memsw.max", "after", Fs),
        pair(n, "cnt.swap.usage", "cnt.swap.max", Fs),
        pair(n, "cnt.swap.usage", "cnt.swap.parent", Fs),
        pair(n, "cnt.memsw.usage", "cnt.memsw.max", Ww),
        pair(n, "cnt.memsw.usage", "cnt.memsw.parent", Fs),
        pair(n, "cnt.memsw.max", "cnt.memsw.parent", Fs),
        pair("u_anon", "flags", "tail", Fs),
        pair("u_nested", "n.a", "n.b", Fs),
        pair("u_nested", "n.de.d", "n.de.e", Fs),
        pair("u_deep", "p", "q", Fs),
        pair("u_deep", "s", "r", Fs),
    ]
    .into_iter()
    .collect()
}

#[test]
fn alternatives_of_a_union_are_never_a_pair() {
    let report: Report = serde_json::from_str(&check(Format::Json)).unwrap();
    let got: BTreeSet<Pair> = report
        .findings
        .iter()
        .map(|f| {
            // Two writers: the order of the sides is the offset's.
            let (a, b) = if f.kind == Kind::WriteVsWrite && f.a.offset > f.b.offset {
                (&f.b, &f.a)
            } else {
                (&f.a, &f.b)
            };
            pair(&f.root, &a.path, &b.path, f.kind)
        })
        .collect();
    assert_eq!(got, expected());
    assert_eq!(
        report.findings.len(),
        expected().len(),
        "one finding per pair"
    );
}

#[test]
fn each_union_whose_alternatives_disagree_is_one_note() {
    let report: Report = serde_json::from_str(&check(Format::Json)).unwrap();
    let unions: Vec<&String> = report
        .notes
        .iter()
        .filter(|n| n.contains("alternatives of one union"))
        .collect();
    // One per union instance whose alternatives class the same bytes
    // differently: u_named's cnt (swap.max HR, memsw.max LW), u_anon's
    // (flags, word), u_nested's outer n (a LW, c HR) and inner (c HR, d LW),
    // u_deep's (p LW, r HR).
    assert_eq!(unions.len(), 5, "{unions:#?}");
    for (root, a, b) in [
        ("u_named", "'cnt.memsw.max'", "'cnt.swap.max'"),
        ("u_anon", "'flags'", "'word'"),
        ("u_nested", "'n.a'", "'n.c'"),
        ("u_nested", "'n.c'", "'n.de.d'"),
        ("u_deep", "'p'", "'r'"),
    ] {
        assert!(
            unions
                .iter()
                .any(|n| n.contains(&format!("in {root} ")) && n.contains(a) && n.contains(b)),
            "{root} {a} {b}: {unions:#?}"
        );
    }
}

#[test]
fn sarif_has_a_result_per_pair_and_none_between_alternatives() {
    let sarif: serde_json::Value = serde_json::from_str(&check(Format::Sarif)).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), expected().len());
}

#[test]
fn a_diagram_draws_the_alternatives_in_one_cell() {
    // u_named's cnt is a union of two counters at byte 8: swap.usage and
    // memsw.usage are bytes 8-15 both, so one cell names both, and no
    // cell holds one of them alone.
    let file = fixture("unions.o");
    let r = rules("unions.toml");
    let (code, out, err) = common::cachelint(&[
        "diagram",
        "--rules",
        r.to_str().unwrap(),
        file.to_str().unwrap(),
        "u_named",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Vec<&str>> = out
        .lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| l.split('|').map(str::trim).collect())
        .collect();
    // The column whose byte range is 8-15.
    let column = rows
        .iter()
        .find_map(|r| r.iter().position(|c| c.starts_with("8-15")))
        .unwrap_or_else(|| panic!("no cell of bytes 8-15: {out}"));
    let cell: String = rows
        .iter()
        .filter_map(|r| r.get(column))
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        cell.contains("memsw.usage") && cell.contains("swap.usage"),
        "{cell}"
    );
}

#[test]
fn suggest_moves_a_union_whole_and_never_parts_its_alternatives() {
    let file = fixture("unions.o");
    let r = rules("unions.toml");
    let (code, out, err) = common::cachelint(&[
        "suggest",
        "--rules",
        r.to_str().unwrap(),
        "--format",
        "json",
        file.to_str().unwrap(),
        "u_named",
    ]);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let order: Vec<&str> = report["order"]
        .as_array()
        .unwrap()
        .iter()
        // A group entry (`G (aligned): a, b`) by its members.
        .flat_map(|m| m.as_str().unwrap().rsplit(": ").next().unwrap().split(", "))
        .collect();
    // before, cnt, after in some order: the union is one unit.
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(sorted, ["after", "before", "cnt"], "{order:?}");
    // Its plan, checked: still no pair between swap and memsw.
    let dir = std::env::temp_dir().join(format!("cachelint-unions-s-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("u.toml");
    std::fs::write(&plan, report["plan"].as_str().unwrap()).unwrap();
    let (code, out, err) = common::cachelint(&[
        "check",
        "--rules",
        r.to_str().unwrap(),
        "--plan",
        plan.to_str().unwrap(),
        "--format",
        "json",
        file.to_str().unwrap(),
    ]);
    assert!(code <= 1, "{err}");
    let checked: serde_json::Value = serde_json::from_str(&out).unwrap();
    for f in checked["findings"].as_array().unwrap() {
        let (a, b) = (
            f["a"]["path"].as_str().unwrap(),
            f["b"]["path"].as_str().unwrap(),
        );
        let alt = |p: &str| {
            ["cnt.swap.", "cnt.memsw."]
                .into_iter()
                .find(|x| p.starts_with(x))
        };
        assert!(
            !matches!((alt(a), alt(b)), (Some(x), Some(y)) if x != y),
            "{a} x {b}"
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}
