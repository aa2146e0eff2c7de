//! Context rules (`[contexts]`, `{ read = [...], write = [...] }`, and the
//! tx/rx columns of net_cachelines tables) on the fixtures. The expected
//! findings are computed here from the compiler's offsets
//! (`cachelint_truth[]`) and the written contexts, by the rule of the
//! design (a line written in context A and used in context B that does
//! not use the written field is flagged), never pasted from cachelint.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use crate::common;
use crate::common::run::CheckOptions;
use cachelint::commands::{Kind, Severity};
use cachelint::report::Report;
use common::run::{self as cli, Format};
use common::{cachelint, fixture, rules, truth};

const LINE: u64 = 64;
const BUILDS: [&str; 4] = [
    "gcc-dwarf5-base",
    "gcc-dwarf5-after",
    "clang-dwarf4-rt",
    "gcc-dwarf4-stats",
];

/// `check`'s options for one fixture build, labelled by its name.
fn options(rules: Vec<PathBuf>, build: &str) -> CheckOptions {
    cli::check_options(&rules, &[(build, &fixture(build))])
}

fn check(rules_files: &[PathBuf], build: &str) -> (Report, bool) {
    let opts = options(rules_files.to_vec(), build);
    let out = cli::check(&opts, Format::Json).unwrap_or_else(|e| panic!("{e}"));
    (serde_json::from_str(&out.stdout).unwrap(), out.failed)
}

/// One field's contexts: `(name, reads, writes)`.
type Field = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
);

/// What tests/rules/lru-contexts.toml says, for the members the
/// compiler's truth has offsets of (min_seq has none and is left out).
const TOML_FIELDS: &[Field] = &[
    ("max_seq", &["refault", "reclaim", "add"], &[]),
    ("enabled", &["add", "reclaim"], &[]),
    ("gen", &["add"], &[]),
    ("seg", &["add"], &[]),
    ("list", &["reclaim"], &[]),
    ("folios", &["reclaim"], &["add"]),
    ("nr_pages", &[], &["add", "reclaim"]),
    ("evicted", &[], &["reclaim"]),
    ("refaulted", &["reclaim"], &["refault"]),
];

/// What tests/rules/lru-contexts.rst says (tx and rx), likewise.
const RST_FIELDS: &[Field] = &[
    ("max_seq", &["tx", "rx"], &[]),
    ("evicted", &[], &["tx"]),
    ("refaulted", &[], &["rx"]),
    ("enabled", &["tx", "rx"], &[]),
    ("gen", &["tx"], &[]),
    ("seg", &["rx"], &[]),
];

/// The flagged pairs of lru_gen_folio in root mem_cgroup_per_node (a
/// 64-byte aligned root: one placement), as unordered names with the kind.
fn expected(
    build: &str,
    fields: &[Field],
    lockless: &[&str],
) -> BTreeSet<(&'static str, &'static str, Kind)> {
    let t = truth(&fixture(build), !build.contains("nolrugen"));
    let base = t["mem_cgroup_per_node.lruvec.lrugen"].0;
    let lines: HashMap<&str, (u64, u64)> = fields
        .iter()
        .map(|(name, _, _)| {
            let (offset, size) = t[format!("lru_gen_folio.{name}").as_str()];
            let start = base + offset;
            (*name, (start / LINE, (start + size - 1) / LINE))
        })
        .collect();
    let uses = |f: &Field, c: &str| f.1.contains(&c) || f.2.contains(&c);
    // Who writes A and which of B's contexts suffer: the worst writer.
    let harm = |a: &Field, b: &Field| -> Option<bool> {
        let mut worst = None;
        for w in a.2 {
            let hurt = b.1.iter().chain(b.2.iter()).any(|d| d != w && !uses(a, d));
            if hurt {
                let many = lockless.contains(w);
                worst = Some(worst.unwrap_or(false) || many);
            }
        }
        worst
    };
    let mut out = BTreeSet::new();
    for (i, a) in fields.iter().enumerate() {
        for b in &fields[i + 1..] {
            let (la, lb) = (lines[a.0], lines[b.0]);
            if la.1 < lb.0 || lb.1 < la.0 {
                continue;
            }
            let kind = |o: &Field, many: bool| {
                if !many {
                    Kind::CrossContext
                } else if o.2.iter().any(|c| lockless.contains(c)) {
                    Kind::WriteVsWrite
                } else if o.2.is_empty() {
                    Kind::FalseSharing
                } else {
                    Kind::WriteVsLocked
                }
            };
            let found = match (harm(a, b), harm(b, a)) {
                (None, None) => continue,
                (Some(ma), Some(mb)) if mb && !ma => kind(a, true),
                (Some(ma), _) => kind(b, ma),
                (None, Some(mb)) => kind(a, mb),
            };
            let (x, y) = if a.0 < b.0 { (a.0, b.0) } else { (b.0, a.0) };
            out.insert((x, y, found));
        }
    }
    out
}

fn found(report: &Report, fields: &[Field]) -> BTreeSet<(String, String, Kind)> {
    let known = |n: &str| fields.iter().any(|f| f.0 == n);
    report
        .findings
        .iter()
        .chain(&report.allowed)
        .filter(|f| f.root == "mem_cgroup_per_node" && known(&f.a.name) && known(&f.b.name))
        .map(|f| {
            let (x, y) = if f.a.name < f.b.name {
                (f.a.name.clone(), f.b.name.clone())
            } else {
                (f.b.name.clone(), f.a.name.clone())
            };
            (x, y, f.kind)
        })
        .collect()
}

fn owned(set: BTreeSet<(&str, &str, Kind)>) -> BTreeSet<(String, String, Kind)> {
    set.into_iter()
        .map(|(a, b, k)| (a.to_owned(), b.to_owned(), k))
        .collect()
}

#[test]
fn context_rules_flag_what_the_contexts_say_on_every_config() {
    let mut flagged = 0;
    for build in BUILDS {
        let (report, _) = check(&[rules("lru-contexts.toml")], build);
        let want = expected(build, TOML_FIELDS, &["refault"]);
        flagged += want.len();
        assert_eq!(found(&report, TOML_FIELDS), owned(want), "{build}");
    }
    // The oracle is not vacuous: the fixtures put several pairs on lines.
    assert!(flagged >= 8, "{flagged}");
}

#[test]
fn one_context_on_a_line_is_true_sharing() {
    // gen and seg are read only in add, and folios is written in add:
    // when they share a line, nothing between them is flagged.
    for build in BUILDS {
        let (report, _) = check(&[rules("lru-contexts.toml")], build);
        let pair = |x: &str, y: &str| {
            report
                .findings
                .iter()
                .any(|f| (f.a.name == x && f.b.name == y) || (f.a.name == y && f.b.name == x))
        };
        assert!(!pair("gen", "folios"), "{build}");
        assert!(!pair("seg", "folios"), "{build}");
    }
}

#[test]
fn net_cachelines_writes_are_their_owners_unless_a_context_is_declared_lockless() {
    let dir = std::env::temp_dir().join(format!("cachelint-ctx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lockless = dir.join("rx-lockless.toml");
    std::fs::write(&lockless, "[contexts]\nrx = \"lockless\"\n").unwrap();
    for build in BUILDS {
        // As the tables mean them: every write is its context's owner's.
        let (report, failed) = check(&[rules("lru-contexts.rst")], build);
        let want = expected(build, RST_FIELDS, &[]);
        assert_eq!(found(&report, RST_FIELDS), owned(want), "{build}");
        assert!(!failed, "{build}: no error from serialized writers");
        assert!(
            report.findings.iter().all(|f| f.severity < Severity::Error),
            "{build}"
        );
        // A rules file that says rx writes locklessly turns rx's writes
        // into false sharing (and the table's contexts stay).
        let (report, _) = check(&[rules("lru-contexts.rst"), lockless.clone()], build);
        let want = expected(build, RST_FIELDS, &["rx"]);
        assert_eq!(found(&report, RST_FIELDS), owned(want), "{build}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_cross_context_diagnostic_says_who_writes_and_which_contexts_meet() {
    let (report, _) = check(&[rules("lru-contexts.rst")], "gcc-dwarf5-base");
    let f = report
        .findings
        .iter()
        .find(|f| f.kind == Kind::CrossContext && f.a.name == "refaulted")
        .expect("refaulted (rx writes) shares a line with a tx reader");
    assert!(
        f.description
            .contains("rx writes refaulted (one CPU at a time)"),
        "{}",
        f.description
    );
    assert!(
        f.description.contains("tx uses the line"),
        "{}",
        f.description
    );
    assert_eq!(f.a.contexts.as_deref(), Some("rx: write"));
    assert_eq!(f.severity, Severity::Warning);
}

#[test]
fn context_rule_mistakes_are_located() {
    let dir = std::env::temp_dir().join(format!("cachelint-ctxerr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            "[contexts]\ntx = \"serialized\"\n[lru_gen_folio]\nmax_seq = { read = [\"xt\"] }\n",
            ":4:1: 'max_seq' names context 'xt', which is not declared; the contexts are tx",
        ),
        (
            "[lru_gen_folio]\nmax_seq = { read = [\"tx\"] }\n",
            ":2:1: 'max_seq' names context 'tx', which is not declared; declare it under [contexts]",
        ),
        (
            "[contexts]\ntx = \"owner\"\n",
            ":2:6: unknown writers 'owner' for context 'tx'",
        ),
        (
            "[contexts]\ntx = \"serialized\"\n[lru_gen_folio]\nmax_seq = { read = [\"tx\"], wirte = [\"tx\"] }\n",
            ":4:28: unknown key 'wirte' in the rule for 'max_seq'",
        ),
        (
            "[contexts]\ntx = \"serialized\"\n[lru_gen_folio]\nmax_seq = { read = [] }\n",
            ":4:1: the rule for 'max_seq' names no context",
        ),
        (
            "adjacent-lines = 1\n[a]\nx = \"hot-read\"\n",
            ":1:18: 'adjacent-lines' must be true or false",
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let path = dir.join(format!("bad{i}.toml"));
        std::fs::write(&path, text).unwrap();
        let opts = options(vec![path.clone()], "gcc-dwarf5-base");
        let err = cli::check(&opts, Format::Text).unwrap_err().to_string();
        assert!(err.contains(want), "{text}\n{err}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn footprint_counts_lines_and_bytes_from_the_compilers_offsets() {
    // Contexts whose fields all have compiler offsets: add and refault.
    let wanted: [(&str, &[&str]); 2] = [
        (
            "add",
            &["max_seq", "enabled", "gen", "seg", "folios", "nr_pages"],
        ),
        ("refault", &["max_seq", "refaulted"]),
    ];
    for build in BUILDS {
        let file = fixture(build);
        let t = truth(&file, true);
        let rules_file = rules("lru-contexts.toml");
        let (code, out, err) = common::cachelint(&[
            "footprint",
            "--rules",
            rules_file.to_str().unwrap(),
            file.to_str().unwrap(),
            "--type",
            "lru_gen_folio",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        let ty = &json["builds"][0]["types"][0];
        let size = t["lru_gen_folio"].1;
        assert_eq!(ty["size"], size);
        assert_eq!(ty["size_lines"], size.div_ceil(LINE));
        for (context, fields) in wanted {
            let row = ty["contexts"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["context"] == context)
                .unwrap_or_else(|| panic!("{build}: no row for {context}"));
            let ranges: Vec<(u64, u64)> = fields
                .iter()
                .map(|f| {
                    let (o, s) = t[format!("lru_gen_folio.{f}").as_str()];
                    (o, o + s)
                })
                .collect();
            let (bytes, lines) = common::bytes_and_lines(ranges, LINE);
            assert_eq!(row["bytes"], bytes, "{build} {context}");
            let got: Vec<u64> = row["lines"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l.as_u64().unwrap())
                .collect();
            assert_eq!(got, lines, "{build} {context}");
            assert_eq!(row["optimum"], bytes.div_ceil(LINE), "{build} {context}");
            assert_eq!(row["fields"].as_array().unwrap().len(), fields.len());
        }
        // The union of the three contexts comes last.
        let last = ty["contexts"].as_array().unwrap().last().unwrap();
        assert_eq!(last["context"], "refault+reclaim+add");
    }
}

#[test]
fn footprint_needs_context_rules() {
    let (code, _, err) = common::cachelint(&[
        "footprint",
        "--rules",
        rules("lru.toml").to_str().unwrap(),
        fixture("gcc-dwarf5-base").to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("the rules give no field a context"), "{err}");
}

#[test]
fn a_table_is_linted_against_the_binary() {
    // tests/rules/lru-contexts.rst on the fixture's RFC 3/3 layout, where
    // evicted[] and refaulted[] sit in the aligned group lrugen_stats and
    // nothing else is in a group. By hand from fixtures/src/mm_lru.h:
    // lru_gen_folio has 14 members besides the group's markers and pad;
    // the table has rows for 8 (list's without an access), so 6 have none.
    let dir = std::env::temp_dir().join(format!("cachelint-lint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let table = dir.join("lru_gen_folio.rst");
    let text = std::fs::read_to_string(rules("lru-contexts.rst")).unwrap()
        + "u8                  gen                     read_mostly\n";
    std::fs::write(&table, &text).unwrap();
    let duplicate_line = text.lines().count();
    let (report, _) = check(std::slice::from_ref(&table), "gcc-dwarf5-after");
    let notes = report.notes.join("\n");
    assert!(
        notes.contains(
            "6 of the 14 members of struct lru_gen_folio have no row: timestamps, folios, \
             nr_pages, avg_refaulted, avg_total, protected"
        ),
        "{notes}"
    );
    assert!(
        notes.contains(&format!(
            ":{duplicate_line}:21: duplicate row for 'gen' (first at line 15)"
        )),
        "{notes}"
    );
    for outside in ["max_seq", "min_seq", "enabled", "gen", "seg"] {
        assert!(
            notes.contains(&format!("'{outside}' is on the fast path")),
            "{outside}: {notes}"
        );
    }
    for inside in ["evicted", "refaulted"] {
        assert!(
            !notes.contains(&format!("'{inside}' is on the fast path")),
            "{notes}"
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn adjacent_line_pairs_are_their_own_kind_and_only_when_asked() {
    // tests/rules/lru.toml: evicted[] and refaulted[] are lockless-write,
    // and every other field below is one they are flagged with on a line
    // (hot-read, lock-protected, or each other). Root mem_cgroup_per_node
    // is 64-byte aligned, so it sits at either half of a 128-byte pair:
    // two fields are on one pair but no line exactly when their nearest
    // lines are neighbours.
    let writers = ["evicted", "refaulted"];
    let others = [
        "max_seq",
        "enabled",
        "gen",
        "seg",
        "list",
        "folios",
        "nr_pages",
        "protected",
        "evicted",
        "refaulted",
    ];
    let dir = std::env::temp_dir().join(format!("cachelint-adj-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let on = dir.join("on.toml");
    std::fs::write(&on, "adjacent-lines = true\n").unwrap();
    let mut seen = 0;
    for build in BUILDS {
        let t = truth(&fixture(build), true);
        let base = t["mem_cgroup_per_node.lruvec.lrugen"].0;
        let lines = |f: &str| {
            let (o, s) = t[format!("lru_gen_folio.{f}").as_str()];
            ((base + o) / LINE, (base + o + s - 1) / LINE)
        };
        let mut want = BTreeSet::new();
        for w in writers {
            for o in others.iter().filter(|o| **o != w) {
                let (a, b) = (lines(w), lines(o));
                let gap = b.0.saturating_sub(a.1).max(a.0.saturating_sub(b.1));
                if gap == 1 {
                    let (x, y) = if w < *o { (w, *o) } else { (*o, w) };
                    want.insert((x.to_owned(), y.to_owned()));
                }
            }
        }
        let pairs = |report: &Report| -> BTreeSet<(String, String)> {
            report
                .findings
                .iter()
                .filter(|f| f.kind == Kind::AdjacentLines && f.root == "mem_cgroup_per_node")
                .filter(|f| {
                    let known = |n: &str| others.contains(&n);
                    known(&f.a.name)
                        && known(&f.b.name)
                        && (writers.contains(&f.a.name.as_str())
                            || writers.contains(&f.b.name.as_str()))
                })
                .map(|f| {
                    let (a, b) = (f.a.name.clone(), f.b.name.clone());
                    if a < b { (a, b) } else { (b, a) }
                })
                .collect()
        };
        let (plain, _) = check(&[rules("lru.toml")], build);
        assert!(pairs(&plain).is_empty(), "{build}: only when asked");
        let (report, _) = check(&[rules("lru.toml"), on.clone()], build);
        assert_eq!(pairs(&report), want, "{build}");
        assert!(
            report
                .findings
                .iter()
                .filter(|f| f.kind == Kind::AdjacentLines)
                .all(|f| f.severity == Severity::Note)
        );
        seen += want.len();
    }
    assert!(seen > 0, "the fixtures have adjacent pairs");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn explain_gives_every_neighbour_a_verdict_and_a_reason() {
    // nr_pages is written only under lru_lock, like folios next to it:
    // not flagged, with the lock as the reason; every line it occupies
    // (from the compiler's offsets) is explained.
    let build = "gcc-dwarf5-base";
    let t = truth(&fixture(build), true);
    let base = t["mem_cgroup_per_node.lruvec.lrugen"].0;
    let (o, s) = t["lru_gen_folio.nr_pages"];
    let (first, last) = ((base + o) / LINE, (base + o + s - 1) / LINE);
    let opts = CheckOptions {
        explain: Some("mem_cgroup_per_node.lruvec.lrugen.nr_pages".into()),
        ..options(vec![rules("lru.toml")], build)
    };
    let out = cli::check(&opts, Format::Json).unwrap();
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let lines: Vec<u64> = report["explained"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, (first..=last).collect::<Vec<_>>());
    for l in report["explained"].as_array().unwrap() {
        for n in l["neighbours"].as_array().unwrap() {
            assert!(!n["reason"].as_str().unwrap().is_empty());
            if n["path"].as_str().unwrap().ends_with("lrugen.folios") {
                assert!(n["kind"].is_null());
                assert!(n["reason"].as_str().unwrap().contains("lru_lock"), "{n}");
            }
        }
    }
    let opts = CheckOptions {
        explain: Some("no_such_field".into()),
        ..opts
    };
    let err = cli::check(&opts, Format::Text).unwrap_err().to_string();
    assert!(err.contains("--explain 'no_such_field'"), "{err}");
}

#[test]
fn diagram_explains_under_the_drawing() {
    let build = fixture("gcc-dwarf5-base");
    let t = truth(&build, true);
    let (o, s) = t["lru_gen_folio.refaulted"];
    let (code, out, err) = common::cachelint(&[
        "diagram",
        "--rules",
        rules("lru.toml").to_str().unwrap(),
        build.to_str().unwrap(),
        "lru_gen_folio",
        "--explain",
        "refaulted",
    ]);
    assert_eq!(code, 0, "{err}");
    let explained: Vec<&str> = out.lines().filter(|l| l.starts_with("explain: ")).collect();
    assert_eq!(
        explained.len() as u64,
        (o + s - 1) / LINE - o / LINE + 1,
        "{out}"
    );
    assert!(explained[0].contains(&format!("line {} of lru_gen_folio", o / LINE)));
}

#[test]
fn cross_context_sharing_is_one_diagnostic_per_line() {
    // tests/rules/lru-contexts-writers.rst: line 23 of
    // mem_cgroup_per_node holds refaulted's last elements, enabled, gen
    // and seg (fixtures/src/mm_lru.h declares them in that order); rx
    // writes refaulted and seg, tx writes gen, both read enabled: every
    // cross-context pair there is one diagnostic, which says who writes
    // and what each context loses (enabled and gen, a byte each, for tx).
    let file = rules("lru-contexts-writers.rst");
    let (report, _) = check(std::slice::from_ref(&file), "gcc-dwarf5-base");
    let lines: BTreeSet<(String, u64)> = report
        .findings
        .iter()
        .filter(|f| f.kind == Kind::CrossContext)
        .map(|f| (f.root.clone(), f.cacheline))
        .collect();
    let pairs = report
        .findings
        .iter()
        .filter(|f| f.kind == Kind::CrossContext)
        .count();
    assert!(pairs > lines.len(), "no line with two pairs: {pairs}");
    assert_eq!(report.summary.warnings, lines.len(), "{lines:?}");
    let path = fixture("gcc-dwarf5-base");
    let (code, text, err) = cachelint(&[
        "check",
        "--rules",
        file.to_str().unwrap(),
        path.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let heads: Vec<&str> = text.lines().filter(|l| l.contains(": warning: ")).collect();
    assert_eq!(heads.len(), lines.len(), "{text}");
    let line23 = text
        .split("\nsrc/")
        .find(|d| d.contains("cacheline 23 of mem_cgroup_per_node is written in rx, tx"))
        .unwrap_or_else(|| panic!("{text}"));
    for want in [
        "    tx writes 'lruvec.lrugen.gen'",
        "'lruvec.lrugen.seg'",
        "tx uses 2 bytes of the line ('lruvec.lrugen.enabled', 'lruvec.lrugen.gen'), and \
         loses it to every write of rx",
    ] {
        assert!(line23.contains(want), "{want}: {line23}");
    }
}
