//! `asserts` on the fixtures: the `after` config's `lrugen_stats` group of
//! `struct lru_gen_folio` (RFC patch 3/3's layout, kernel-style markers)
//! against the compiler's own offsets, and `--against` on check functions
//! written here from those offsets.

use std::path::{Path, PathBuf};

use crate::common;
use cachelint::render::Output;
use common::run::Format;
use common::{COMPILERS, cachelint, fixture, rules, truth};
use serde_json::Value;

const TY: &str = "lru_gen_folio";

fn run(build: &Path, against: Option<&Path>, format: Format) -> Output {
    common::run::asserts(&[rules("lru_gen_folio.rst")], build, TY, against, format)
        .unwrap_or_else(|e| panic!("{}: {e}", build.display()))
}

/// A fresh directory for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cachelint-asserts-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn json(build: &Path, against: Option<&Path>) -> Value {
    serde_json::from_str(&run(build, against, Format::Json).stdout).unwrap()
}

/// The group as the markers of `mm_lru.h` place it, from the compiler's
/// offsets: the begin marker is a zero-size array right before `evicted`
/// (aligned to the line, and `evicted` needs no more), the end marker one
/// aligned to a long right after `refaulted`, whose size is a multiple of
/// a long.
fn group_from_truth(build: &Path) -> (u64, u64) {
    let t = truth(build, true);
    let (evicted, _) = t[&format!("{TY}.evicted")];
    let (refaulted, size) = t[&format!("{TY}.refaulted")];
    (evicted, refaulted + size)
}

/// Names of `members` of a JSON list, with their offsets and sizes.
fn members(list: &Value) -> Vec<(String, u64, u64)> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let m = m.get("member").unwrap_or(m);
            (
                m["name"].as_str().unwrap().to_owned(),
                m["offset"].as_u64().unwrap(),
                m["size"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_group_and_its_tabled_members_are_the_compilers() {
    for compiler in COMPILERS {
        let build = fixture(&format!("{compiler}-after"));
        let t = truth(&build, true);
        let at = |m: &str| {
            let (o, s) = t[&format!("{TY}.{m}")];
            (m.to_owned(), o, s)
        };
        let (begin, end) = group_from_truth(&build);
        let j = json(&build, None);
        let groups = j["groups"].as_array().unwrap();
        assert_eq!(groups.len(), 1, "{compiler}");
        let g = &groups[0];
        assert_eq!(g["name"], "lrugen_stats", "{compiler}");
        assert_eq!(g["begin"].as_u64(), Some(begin), "{compiler}");
        assert_eq!(g["end"].as_u64(), Some(end), "{compiler}");
        assert_eq!(g["size"].as_u64(), Some(end - begin), "{compiler}");
        // The table's rows with an access inside the group, in offset order.
        assert_eq!(
            members(&g["members"]),
            vec![at("evicted"), at("refaulted")],
            "{compiler}"
        );
        // The others are outside, said so, in offset order; `folios`,
        // a row with no access, is not tabled. (min_seq has no truth
        // line: only its name is checked.)
        let outside = members(&j["outside"]);
        let names: Vec<&str> = outside.iter().map(|m| m.0.as_str()).collect();
        assert_eq!(
            names,
            ["max_seq", "min_seq", "enabled", "gen", "seg", "list"],
            "{compiler}"
        );
        for m in outside.iter().filter(|m| m.0 != "min_seq") {
            assert_eq!(*m, at(&m.0), "{compiler}");
        }
    }
}

#[test]
fn the_function_is_written_in_the_kernels_style() {
    let build = fixture("gcc-dwarf5-after");
    let (begin, end) = group_from_truth(&build);
    let out = run(&build, None, Format::Text);
    let lines: Vec<&str> = out.stdout.lines().collect();
    let start = lines
        .iter()
        .position(|l| *l == "static void __init lru_gen_folio_struct_check(void)")
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert_eq!(lines[start + 1], "{");
    let asserts: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("\tCACHELINE_ASSERT_GROUP_"))
        .copied()
        .collect();
    let size = format!(
        "\tCACHELINE_ASSERT_GROUP_SIZE(struct lru_gen_folio, lrugen_stats, {});",
        end - begin
    );
    assert_eq!(
        asserts,
        [
            "\tCACHELINE_ASSERT_GROUP_MEMBER(struct lru_gen_folio, lrugen_stats, evicted);",
            "\tCACHELINE_ASSERT_GROUP_MEMBER(struct lru_gen_folio, lrugen_stats, refaulted);",
            size.as_str(),
        ]
    );
    assert_eq!(lines.last(), Some(&"}"));
    // The sizes are said to be measured, and the members left out named,
    // in the function and on standard error.
    assert!(
        out.stdout.contains("measured in this build"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(" *   enabled (offset "),
        "{}",
        out.stdout
    );
    assert!(
        out.notes.iter().any(|n| n.contains("6 tabled members")),
        "{:?}",
        out.notes
    );
    assert!(!out.failed);
}

/// A kernel-style check function with every kind of difference, the line
/// of each (1-based) noted as it is written: (line, weight, kind).
fn drifted(measured: u64) -> (String, Vec<(usize, &'static str, &'static str)>) {
    let budget = measured - 8;
    let text = format!(
        "/* SPDX */\n\
         static void __init lru_gen_folio_struct_check(void)\n\
         {{\n\
         \t/* CACHELINE_ASSERT_GROUP_MEMBER(struct lru_gen_folio, lrugen_stats, gen); */\n\
         \tCACHELINE_ASSERT_GROUP_MEMBER(struct lru_gen_folio, lrugen_stats,\n\
         \t\t\t\t      evicted);\n\
         \tCACHELINE_ASSERT_GROUP_MEMBER(struct lru_gen_folio, lrugen_stats, enabled);\n\
         \tCACHELINE_ASSERT_GROUP_MEMBER(struct lru_gen_folio, lrugen_stats, folios);\n\
         #ifdef CONFIG_GONE\n\
         \tCACHELINE_ASSERT_GROUP_MEMBER(struct lru_gen_folio, lrugen_stats, gone);\n\
         #endif\n\
         \tCACHELINE_ASSERT_GROUP_MEMBER(struct lruvec, lrugen_stats, lru_lock);\n\
         \tCACHELINE_ASSERT_GROUP_SIZE(struct lru_gen_folio, lrugen_stats, {budget});\n\
         \tCACHELINE_ASSERT_GROUP_MEMBER(struct lru_gen_folio, lrugen_hot, max_seq);\n\
         }}\n"
    );
    let expected = vec![
        // enabled: the build has it in no group, and so does the table.
        (7, "failure", "assert-fails"),
        (7, "drift", "kernel-only"),
        // folios: in no group, and a row without an access.
        (8, "failure", "assert-fails"),
        (8, "drift", "kernel-only"),
        // gone: not in this build, under an #ifdef.
        (10, "info", "assert-fails"),
        (10, "drift", "kernel-only"),
        (13, "failure", "budget-too-small"),
        // refaulted, tabled in the group: where its assert would go.
        (13, "drift", "table-only"),
        (14, "failure", "group-kernel-only"),
    ];
    (text, expected)
}

#[test]
fn against_a_drifted_function_every_difference_is_at_its_line() {
    let dir = scratch("drifted");
    for compiler in COMPILERS {
        let build = fixture(&format!("{compiler}-after"));
        let (begin, end) = group_from_truth(&build);
        let (text, expected) = drifted(end - begin);
        let file = dir.join("check.c");
        std::fs::write(&file, text).unwrap();
        let j = json(&build, Some(&file));
        let c = &j["comparison"];
        assert_eq!(
            c["member_asserts"], 5,
            "{compiler}: the other struct's is not read"
        );
        assert_eq!(c["size_asserts"], 1, "{compiler}");
        let got: Vec<(usize, &str, &str)> = c["differences"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d["line"].as_u64().unwrap() as usize,
                    d["weight"].as_str().unwrap(),
                    d["kind"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(got, expected, "{compiler}");
        let budget = &c["differences"][6];
        assert_eq!(budget["measured"].as_u64(), Some(end - begin), "{compiler}");
        assert_eq!(
            budget["bytes"].as_u64(),
            Some(end - begin - 8),
            "{compiler}"
        );
        assert_eq!(c["summary"]["failures"], 4, "{compiler}");
        assert_eq!(c["summary"]["drift"], 4, "{compiler}");
        assert_eq!(c["summary"]["info"], 1, "{compiler}");
    }
    // As text: one note per difference at FILE:LINE, then the summary;
    // exit code 1, as `diff` with differences.
    let build = fixture("gcc-dwarf5-after");
    let file = dir.join("check.c");
    let (code, out, _) = cachelint(&[
        "asserts",
        "--rules",
        rules("lru_gen_folio.rst").to_str().unwrap(),
        build.to_str().unwrap(),
        TY,
        "--against",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), drifted(8).1.len() + 1, "{out}");
    let at = format!(
        "{}:13: note: failure: lrugen_stats measures",
        file.display()
    );
    assert!(out.contains(&at), "{out}");
    assert!(
        lines
            .last()
            .unwrap()
            .ends_with("4 failures, 4 drift, 1 info"),
        "{out}"
    );
}

#[test]
fn against_a_matching_function_there_is_no_difference() {
    let dir = scratch("matching");
    let build = fixture("clang-dwarf5-after");
    let (begin, end) = group_from_truth(&build);
    let file = dir.join("check.c");
    // Members in another order, a budget with room: slack, no drift.
    let text = format!(
        "CACHELINE_ASSERT_GROUP_MEMBER(struct lru_gen_folio, lrugen_stats, refaulted);\n\
         CACHELINE_ASSERT_GROUP_MEMBER(struct lru_gen_folio, lrugen_stats, evicted);\n\
         CACHELINE_ASSERT_GROUP_SIZE(struct lru_gen_folio, lrugen_stats, {} + 8);\n",
        end - begin
    );
    std::fs::write(&file, text).unwrap();
    let out = run(&build, Some(&file), Format::Text);
    assert!(!out.failed, "{}", out.stdout);
    assert_eq!(
        out.stdout.lines().next().unwrap(),
        format!(
            "{}:3: note: slack: lrugen_stats measures {} bytes in this build, 8 under the \
             kernel's budget of {} ({} + 8)",
            file.display(),
            end - begin,
            end - begin + 8,
            end - begin
        )
    );
    assert!(
        out.stdout.ends_with("0 failures, 0 drift, 1 info\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn mistakes_are_one_line_errors_with_exit_code_2() {
    let dir = scratch("mistakes");
    let rules = rules("lru_gen_folio.rst");
    let rules = rules.to_str().unwrap();
    let after = fixture("gcc-dwarf5-after");
    let after = after.to_str().unwrap();
    let base = fixture("gcc-dwarf5-base");
    let other = dir.join("other.toml");
    std::fs::write(&other, "[lruvec]\nlru_lock = \"lock\"\n").unwrap();
    let unrelated = dir.join("unrelated.c");
    std::fs::write(&unrelated, "int main(void) { return 0; }\n").unwrap();
    let cases: [(Vec<&str>, &str); 5] = [
        (
            vec![rules, after, "lru_gen_foli"],
            "no struct, union or typedef named 'lru_gen_foli'",
        ),
        // The markers are lrugen's, a named member: not lruvec's own.
        (
            vec![rules, after, "lruvec"],
            "struct lruvec has no cacheline groups",
        ),
        (
            vec![rules, base.to_str().unwrap(), TY],
            "struct lru_gen_folio has no cacheline groups",
        ),
        (
            vec![other.to_str().unwrap(), after, TY],
            "the rules name no member of struct lru_gen_folio",
        ),
        (
            vec![rules, after, TY, "--against", unrelated.to_str().unwrap()],
            "no CACHELINE_ASSERT_GROUP_MEMBER or CACHELINE_ASSERT_GROUP_SIZE of struct \
             lru_gen_folio",
        ),
    ];
    for (args, message) in cases {
        let mut all = vec!["asserts", "--rules"];
        all.extend(&args);
        let (code, out, err) = cachelint(&all);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
    }
}
