//! `cachelint check` on the fixtures. Every expectation is derived in the
//! test from the compiler's own offsets (`cachelint_truth[]`) or computed by
//! hand here, never pasted from cachelint's output.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::common;
use cachelint::commands::Build;
use cachelint::commands::{Kind, Severity};
use cachelint::report::{Report, ReportFinding};
use common::run::CheckOptions;
use common::run::{self as cli, Format};
use common::{COMPILERS, cachelint, fixture, rules, truth};

const LINE: u64 = 64;

fn options(rules_files: &[PathBuf], builds: &[(&str, PathBuf)]) -> CheckOptions {
    let builds: Vec<(&str, &Path)> = builds.iter().map(|(c, p)| (*c, p.as_path())).collect();
    cli::check_options(rules_files, &builds)
}

fn run(opts: &CheckOptions) -> (Report, bool) {
    let out = cli::check(opts, Format::Json).unwrap_or_else(|e| panic!("{e}"));
    (serde_json::from_str(&out.stdout).unwrap(), out.failed)
}

fn check_one(rules_file: &str, build: &str) -> Report {
    run(&options(&[rules(rules_file)], &[(build, fixture(build))])).0
}

/// Bytes `[start, end)` of a path, from the compiler.
fn bytes(file: &Path, path: &str) -> (u64, u64) {
    let (offset, size) = truth(file, true)[path];
    (offset, offset + size)
}

fn lines_of((start, end): (u64, u64)) -> std::ops::RangeInclusive<u64> {
    start / LINE..=(end - 1) / LINE
}

fn false_sharing<'r>(
    report: &'r Report,
    root: &str,
    writer: &str,
    reader: &str,
) -> Option<&'r ReportFinding> {
    report.findings.iter().find(|f| {
        f.kind == Kind::FalseSharing && f.root == root && f.a.name == writer && f.b.name == reader
    })
}

/// The finding the reviewer asked about: refaulted[] written locklessly on
/// the line that holds enabled. Whether it exists, and on which line and
/// bytes, follows from the compiler's offsets.
fn expect_refaulted_vs_enabled(file: &Path, report: &Report) -> Option<u64> {
    let refaulted = bytes(file, "mem_cgroup_per_node.lruvec.lrugen.refaulted");
    let enabled = bytes(file, "mem_cgroup_per_node.lruvec.lrugen.enabled");
    let line = enabled.0 / LINE;
    let shares = lines_of(refaulted).contains(&line);
    let found = false_sharing(report, "mem_cgroup_per_node", "refaulted", "enabled");
    assert_eq!(
        found.is_some(),
        shares,
        "{}: refaulted {refaulted:?}, enabled {enabled:?}",
        file.display()
    );
    let f = found?;
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.cacheline, line);
    assert_eq!(f.cacheline_bytes, [line * LINE, line * LINE + LINE - 1]);
    assert_eq!(
        f.a.bytes,
        [
            refaulted.0.max(line * LINE),
            (refaulted.1 - 1).min(line * LINE + LINE - 1)
        ]
    );
    assert_eq!(f.b.bytes, [enabled.0, enabled.1 - 1]);
    assert_eq!(f.a.path, "lruvec.lrugen.refaulted");
    assert!(f.a.decl_file.as_deref().unwrap().ends_with("mm_lru.h"));
    Some(line)
}

#[test]
fn before_the_patch_refaulted_shares_a_line_with_enabled_and_list() {
    for cc in COMPILERS {
        let build = format!("{cc}-base");
        let file = fixture(&build);
        let report = check_one("lru.toml", &build);
        let line = expect_refaulted_vs_enabled(&file, &report)
            .unwrap_or_else(|| panic!("{build}: no refaulted/enabled sharing"));
        // list sits on the same line in this layout (derived, not assumed).
        let list = bytes(&file, "mem_cgroup_per_node.lruvec.lrugen.list");
        assert!(lines_of(list).contains(&line), "{build}");
        assert!(false_sharing(&report, "mem_cgroup_per_node", "refaulted", "list").is_some());
        assert!(report.summary.errors > 0);
    }
}

#[test]
fn after_the_patch_no_lockless_write_shares_a_line_with_a_reader() {
    for cc in COMPILERS {
        for cfg in ["after", "rt-after"] {
            let build = format!("{cc}-{cfg}");
            let file = fixture(&build);
            let (report, failed) = run(&options(&[rules("lru.toml")], &[(&build, file.clone())]));
            assert_eq!(expect_refaulted_vs_enabled(&file, &report), None, "{build}");
            assert!(
                !report.findings.iter().any(|f| f.kind == Kind::FalseSharing),
                "{build}"
            );
            assert_eq!(report.summary.errors, 0, "{build}");
            assert!(!failed, "{build}");
        }
    }
}

#[test]
fn the_32_byte_lock_moves_the_finding_to_the_line_its_layout_says() {
    for cc in COMPILERS {
        let base = expect_refaulted_vs_enabled(
            &fixture(&format!("{cc}-base")),
            &check_one("lru.toml", &format!("{cc}-base")),
        );
        let rt = expect_refaulted_vs_enabled(
            &fixture(&format!("{cc}-rt")),
            &check_one("lru.toml", &format!("{cc}-rt")),
        );
        let (base, rt) = (base.unwrap(), rt.unwrap());
        // spinlock_t grows from 4 to 32 bytes: everything after it moves.
        let lock = |cfg: &str| {
            bytes(
                &fixture(&format!("{cc}-{cfg}")),
                "mem_cgroup_per_node.lruvec.lru_lock",
            )
        };
        assert_eq!(lock("base").1 - lock("base").0, 4);
        assert_eq!(lock("rt").1 - lock("rt").0, 32);
        assert_ne!(base, rt, "{cc}");
    }
}

#[test]
fn several_builds_tag_each_finding_with_its_config() {
    let opts = options(
        &[rules("lru.toml")],
        &[
            ("base", fixture("gcc-dwarf5-base")),
            ("rt", fixture("gcc-dwarf5-rt")),
        ],
    );
    let (report, failed) = run(&opts);
    assert!(failed);
    let configs: HashSet<&str> = report.findings.iter().map(|f| f.config.as_str()).collect();
    assert_eq!(configs, HashSet::from(["base", "rt"]));
    assert_eq!(report.builds.len(), 2);
}

#[test]
fn a_baseline_config_of_the_same_label_is_the_only_one_matched() {
    // The rule (README, `check --help`): a finding of config C matches the
    // baseline's findings of config C when the baseline has a config
    // labelled C, else the findings of any of its configs.
    let base = fixture("gcc-dwarf5-base");
    let rt = fixture("gcc-dwarf5-rt");
    let key = |f: &ReportFinding| f.identity().pair;
    let (old, _) = run(&options(&[rules("lru.toml")], &[("base", base.clone())]));
    let (all, _) = run(&options(&[rules("lru.toml")], &[("base", rt.clone())]));
    let old_keys: HashSet<_> = old.findings.iter().map(key).collect();
    let with = |baseline: &[(&str, &std::path::Path)]| {
        let mut opts = options(&[rules("lru.toml")], &[("base", rt.clone())]);
        opts.baseline = baseline
            .iter()
            .map(|(config, path)| Build {
                config: config.to_string(),
                path: path.to_path_buf(),
            })
            .collect();
        let (new, _) = run(&opts);
        new.findings.iter().map(key).collect::<HashSet<_>>()
    };
    // No config labelled base in the baseline: rt's own findings, under
    // another label, hide every pair.
    assert!(with(&[("other", &rt)]).is_empty());
    // A config labelled base: only its findings count, though `other` has
    // every pair.
    let shown = with(&[("other", &rt), ("base", &base)]);
    let expected: HashSet<_> = all
        .findings
        .iter()
        .map(key)
        .filter(|k| !old_keys.contains(k))
        .collect();
    assert!(!expected.is_empty(), "the 32-byte lock of rt moves a pair");
    assert_eq!(shown, expected);
}

#[test]
fn the_baseline_hides_pairs_it_has_and_keeps_new_ones() {
    let base = fixture("gcc-dwarf5-base");
    let rt = fixture("gcc-dwarf5-rt");
    let (old, _) = run(&options(&[rules("lru.toml")], &[("base", base.clone())]));
    let (all, _) = run(&options(&[rules("lru.toml")], &[("rt", rt.clone())]));
    let key = |f: &ReportFinding| f.identity().pair;
    let old_keys: HashSet<_> = old.findings.iter().map(key).collect();
    let json = std::env::temp_dir().join(format!("cachelint-baseline-{}.json", std::process::id()));
    std::fs::write(&json, serde_json::to_string(&old).unwrap()).unwrap();
    // A version 1 report (its summary had no `pairs`) is read the same way.
    let mut v1 = serde_json::to_value(&old).unwrap();
    v1["version"] = 1.into();
    v1["summary"].as_object_mut().unwrap().remove("pairs");
    let json1 = json.with_extension("v1.json");
    std::fs::write(&json1, v1.to_string()).unwrap();
    for baseline in [json.clone(), json1.clone(), base.clone()] {
        let mut opts = options(&[rules("lru.toml")], &[("rt", rt.clone())]);
        opts.baseline = vec![Build {
            config: "base".into(),
            path: baseline.clone(),
        }];
        let (new, _) = run(&opts);
        let shown: HashSet<_> = new.findings.iter().map(key).collect();
        for f in &all.findings {
            assert_eq!(
                shown.contains(&key(f)),
                !old_keys.contains(&key(f)),
                "{f:?}"
            );
        }
        assert_eq!(
            new.summary.in_baseline,
            all.findings.len() - new.findings.len()
        );
        // The pair of the thread is in both builds: not reported again.
        assert!(false_sharing(&new, "mem_cgroup_per_node", "refaulted", "enabled").is_none());
        // The 32-byte lock shifts lines: at least one pair is new.
        assert!(!new.findings.is_empty(), "{baseline:?}");
    }
    std::fs::remove_file(json).unwrap();
    std::fs::remove_file(json1).unwrap();
}

#[test]
fn allow_entries_silence_a_pair_and_list_it() {
    let dir = std::env::temp_dir().join(format!("cachelint-allow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("allow.toml");
    let text = std::fs::read_to_string(rules("lru.toml")).unwrap()
        + "\n[[allow]]\nfields = [\"lru_gen_folio.enabled\", \"lru_gen_folio.refaulted\"]\nreason = \"measured: no effect\"\n";
    std::fs::write(&path, text).unwrap();
    let (plain, _) = run(&options(
        &[rules("lru.toml")],
        &[("base", fixture("gcc-dwarf5-base"))],
    ));
    let (report, _) = run(&options(&[path], &[("base", fixture("gcc-dwarf5-base"))]));
    assert!(false_sharing(&report, "mem_cgroup_per_node", "refaulted", "enabled").is_none());
    let allowed: Vec<_> = report
        .allowed
        .iter()
        .filter(|f| f.a.name == "refaulted" && f.b.name == "enabled")
        .collect();
    assert_eq!(
        allowed.len(),
        2,
        "one per root: mem_cgroup_per_node and pglist_data"
    );
    assert!(
        allowed
            .iter()
            .all(|f| f.allowed.as_deref() == Some("measured: no effect"))
    );
    assert_eq!(
        report.findings.len() + report.allowed.len(),
        plain.findings.len()
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn every_element_of_an_array_of_structs_is_an_instance() {
    // struct counter_table { int id; struct counter_pair pairs[6]; },
    // 64-byte aligned; counter_pair is { hits (hot-read), misses (lockless-write) }.
    let build = "gcc-dwarf5-base";
    let file = fixture(build);
    let t = truth(&file, true);
    let pairs = t["counter_table.pairs"];
    let element = pairs.1 / 6;
    assert_eq!(t["counter_table.pairs[1].hits"].0, pairs.0 + element);
    let hits = |i: u64| (pairs.0 + i * element, pairs.0 + i * element + 8);
    let misses = |i: u64| (pairs.0 + i * element + 8, pairs.0 + i * element + 16);
    assert_eq!(misses(5).0, t["counter_table.pairs[5].misses"].0);
    let mut want = HashSet::new();
    for i in 0..6 {
        for j in 0..6 {
            if lines_of(misses(i)).any(|l| lines_of(hits(j)).contains(&l)) {
                want.insert((format!("pairs[{i}].misses"), format!("pairs[{j}].hits")));
            }
        }
    }
    let report = check_one("counters.toml", build);
    // A finding told for a range of elements stands for each of them.
    let got: HashSet<(String, String)> = report
        .findings
        .iter()
        .filter(|f| f.root == "counter_table" && f.kind == Kind::FalseSharing)
        .flat_map(|f| match &f.elements {
            None => vec![(f.a.path.clone(), f.b.path.clone())],
            Some(e) => (e.first..=e.last)
                .map(|i| {
                    let one = |p: &str| p.replace(&e.range(), &format!("{}[{i}]", e.array));
                    (one(&f.a.path), one(&f.b.path))
                })
                .collect(),
        })
        .collect();
    assert_eq!(got, want);
    assert!(
        report.findings.iter().all(|f| f.placement.is_none()),
        "aligned root: one placement"
    );
}

#[test]
fn an_unaligned_root_is_tried_at_every_placement() {
    // pglist_data is 8-byte aligned in the fixture: 8 placements in a line.
    let build = "gcc-dwarf5-base";
    let file = fixture(build);
    let report = check_one("lru.toml", build);
    let f = false_sharing(&report, "pglist_data", "refaulted", "enabled").expect("finding");
    let enabled = bytes(&file, "pglist_data.__lruvec.lrugen.enabled");
    let (r, e) = (
        bytes(&file, "lru_gen_folio.refaulted"),
        bytes(&file, "lru_gen_folio.enabled"),
    );
    let refaulted = (enabled.0 - (e.0 - r.0), enabled.0 - (e.0 - r.1));
    let sharing = (0..LINE)
        .step_by(8)
        .filter(|p| {
            let lines = |(s, e): (u64, u64)| (s + p) / LINE..=(e - 1 + p) / LINE;
            lines(refaulted).any(|l| lines(enabled).contains(&l))
        })
        .count();
    let placement = f.placement.as_ref().expect("placement");
    assert_eq!((placement.sharing, placement.of), (sharing, 8));
}

#[test]
fn a_placement_rule_tries_only_the_placements_the_allocator_makes() {
    // pglist_data is 8-byte aligned in the fixture; `[placement]` says
    // every object starts a line, so the pair is judged at byte 0 only.
    let build = "gcc-dwarf5-base";
    let file = fixture(build);
    let dir = std::env::temp_dir().join(format!("cachelint-placement-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let line = dir.join("line.toml");
    std::fs::write(&line, "[placement]\npglist_data = \"line\"\n").unwrap();
    let (report, _) = run(&cli::check_options(
        &[rules("lru.toml"), line.clone()],
        &[(build, file.as_path())],
    ));
    let enabled = bytes(&file, "pglist_data.__lruvec.lrugen.enabled");
    let (r, e) = (
        bytes(&file, "lru_gen_folio.refaulted"),
        bytes(&file, "lru_gen_folio.enabled"),
    );
    let refaulted = (enabled.0 - (e.0 - r.0), enabled.0 - (e.0 - r.1));
    let lines = |(s, e): (u64, u64)| s / LINE..=(e - 1) / LINE;
    let share = lines(refaulted).any(|l| lines(enabled).contains(&l));
    let f = false_sharing(&report, "pglist_data", "refaulted", "enabled");
    assert_eq!(f.is_some(), share, "judged at byte 0 only");
    assert!(
        report
            .findings
            .iter()
            .filter(|f| f.root == "pglist_data")
            .all(|f| f.placement.is_none()),
        "one placement"
    );
    // A placement and a heat of structs no table annotates are read too
    // (a draft writes them for structs whose members have no rule).
    let other = dir.join("other.toml");
    std::fs::write(
        &other,
        "[placement]\nmem_cgroup_reclaim_iter = 8\n[heat.mem_cgroup_reclaim_iter]\ngeneration = 3\n",
    )
    .unwrap();
    let (code, _, err) = cachelint(&[
        "check",
        "--rules",
        rules("lru.toml").to_str().unwrap(),
        "--rules",
        other.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    assert!(code < 2, "{err}");
    // A placement of no type, and one that is no power of two, are errors
    // at their line.
    let bad = dir.join("bad.toml");
    for (text, want) in [
        ("[placement]\nno_such_struct = \"line\"\n", "no_such_struct"),
        ("[placement]\npglist_data = 48\n", "power of two"),
        ("[placement]\npglist_data = \"lines\"\n", "must be \"line\""),
    ] {
        std::fs::write(&bad, text).unwrap();
        let (code, _, err) = cachelint(&[
            "check",
            "--rules",
            rules("lru.toml").to_str().unwrap(),
            "--rules",
            bad.to_str().unwrap(),
            file.to_str().unwrap(),
        ]);
        assert_eq!(code, 2, "{text}: {err}");
        assert!(
            err.contains(want) && err.contains("bad.toml:2:"),
            "{text}: {err}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn findings_of_one_severity_come_hottest_first() {
    // The fixture's errors without heat, in their order; then a [heat]
    // table that makes the last error's members the hottest: it comes
    // first, with its heat (the colder side's), and the rest keep theirs.
    let build = "gcc-dwarf5-base";
    let file = fixture(build);
    let (plain, _) = run(&cli::check_options(
        &[rules("lru.toml")],
        &[(build, file.as_path())],
    ));
    let errors = |r: &Report| -> Vec<(String, String, String, Option<u64>)> {
        r.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| (f.root.clone(), f.a.path.clone(), f.b.path.clone(), f.heat))
            .collect()
    };
    let before = errors(&plain);
    assert!(before.len() > 2 && before.iter().all(|e| e.3.is_none()));
    let last = plain
        .findings
        .iter()
        .rfind(|f| f.severity == Severity::Error)
        .unwrap();
    let owner = |path: &str| -> (String, String) {
        // The member of lru_gen_folio or lruvec the path ends in.
        let (ty, member) = match path.rsplit_once("lrugen.") {
            Some((_, m)) => ("lru_gen_folio", m),
            None => ("lruvec", path.rsplit('.').next().unwrap()),
        };
        let member = member.split('[').next().unwrap();
        (ty.to_owned(), member.to_owned())
    };
    let (ta, ma) = owner(&last.a.path);
    let (tb, mb) = owner(&last.b.path);
    let dir = std::env::temp_dir().join(format!("cachelint-heat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let heat = dir.join("heat.toml");
    let text = if ta == tb {
        format!("[heat.{ta}]\n{ma} = 90\n{mb} = 70\n")
    } else {
        format!("[heat.{ta}]\n{ma} = 90\n[heat.{tb}]\n{mb} = 70\n")
    };
    std::fs::write(&heat, &text).unwrap();
    let (hot, _) = run(&cli::check_options(
        &[rules("lru.toml"), heat.clone()],
        &[(build, file.as_path())],
    ));
    let after = errors(&hot);
    assert_eq!(after.len(), before.len());
    // The pair (in every root that holds it) first, with the colder
    // side's heat; then pairs with one hot side (heat 0); then the rest,
    // each group in its old order.
    let same = |e: &(String, String, String, Option<u64>)| {
        e.1.ends_with(&last.a.path.replace("__lruvec.", "").replace("lruvec.", ""))
            && e.2
                .ends_with(&last.b.path.replace("__lruvec.", "").replace("lruvec.", ""))
    };
    let hottest: Vec<_> = after.iter().take_while(|e| same(e)).collect();
    assert!(!hottest.is_empty(), "{text}: {after:?}");
    assert!(
        hottest.iter().all(|e| e.3 == Some(70)),
        "the colder side's heat"
    );
    assert!(
        after[hottest.len()..].iter().all(|e| e.3 != Some(70)),
        "no other pair is that hot"
    );
    let heats: Vec<Option<u64>> = after.iter().map(|e| e.3).collect();
    let mut sorted = heats.clone();
    sorted.sort_by(|x, y| y.cmp(x));
    assert_eq!(heats, sorted, "hottest first");
    // A heat for a member the struct lacks is an error at its line.
    std::fs::write(&heat, "[heat.lruvec]\nno_such = 3\n").unwrap();
    let (code, _, err) = cachelint(&[
        "check",
        "--rules",
        rules("lru.toml").to_str().unwrap(),
        "--rules",
        heat.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("heat.toml:2:1") && err.contains("no_such"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn top_shows_the_first_diagnostics_and_counts_them_all() {
    let base = fixture("gcc-dwarf5-base");
    let lru = rules("lru.toml");
    let args = [
        "check",
        "--rules",
        lru.to_str().unwrap(),
        base.to_str().unwrap(),
    ];
    let (code, all, _) = cachelint(&args);
    let (top_code, top, err) = cachelint(&[&args[..], &["--top", "1"]].concat());
    let heads = |text: &str| {
        text.lines()
            .filter(|l| {
                l.contains(": error: ") || l.contains(": warning: ") || l.contains(": note: ")
            })
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let (every, first) = (heads(&all), heads(&top));
    assert!(every.len() > 1);
    assert_eq!(first, every[..1], "the first diagnostic, as without --top");
    assert_eq!(top_code, code, "the exit code counts them all");
    let summary = |text: &str, err: &str| {
        format!("{text}{err}")
            .lines()
            .find(|l| l.starts_with("cachelint: ") && l.contains(" errors"))
            .map(str::to_owned)
    };
    let (_, _, all_err) = cachelint(&args);
    assert_eq!(summary(&top, &err), summary(&all, &all_err));
    assert!(
        format!("{top}{err}").contains(&format!(
            "--top 1: the first 1 of {} diagnostics",
            every.len()
        )),
        "{err}"
    );
}

#[test]
fn fail_on_and_exit_codes() {
    let code = |args: &[&str]| cachelint(args).0;
    let lru = rules("lru.toml");
    let lru = lru.to_str().unwrap();
    let after = fixture("gcc-dwarf5-after");
    let after = after.to_str().unwrap();
    let base = fixture("gcc-dwarf5-base");
    let base = base.to_str().unwrap();
    // after: warnings only (derived above: no error); base: errors.
    let (report, _) = run(&options(&[rules("lru.toml")], &[("after", after.into())]));
    assert!(report.summary.warnings > 0 && report.summary.errors == 0);
    assert_eq!(code(&["check", "--rules", lru, after]), 0);
    assert_eq!(
        code(&["check", "--rules", lru, "--fail-on", "warning", after]),
        1
    );
    assert_eq!(code(&["check", "--rules", lru, base]), 1);
    assert_eq!(code(&["check", "--rules", lru, "nope"]), 2);
    assert_eq!(code(&["check", base]), 2);
}

#[test]
fn text_diagnostics_are_compiler_style() {
    let build = format!("rt={}", fixture("gcc-dwarf5-rt").display());
    let (_, text, _) = cachelint(&[
        "check",
        "--rules",
        rules("lru.toml").to_str().unwrap(),
        &build,
    ]);
    let (report, _) = run(&options(
        &[rules("lru.toml")],
        &[("rt", fixture("gcc-dwarf5-rt"))],
    ));
    let f = false_sharing(&report, "mem_cgroup_per_node", "refaulted", "enabled").unwrap();
    let want = format!(
        "{}:{}: error: [rt] lockless-write 'refaulted' shares cacheline {} of mem_cgroup_per_node with hot-read 'enabled', 'gen', 'seg'",
        f.a.decl_file.as_deref().unwrap(),
        f.a.decl_line.unwrap(),
        f.cacheline
    );
    assert!(text.contains(&want), "{want}\n{text}");
    let last = text.lines().last().unwrap();
    assert!(
        last.starts_with(&format!("cachelint: {} errors", report.summary.errors)),
        "{last}"
    );
}

#[test]
fn sarif_has_one_result_per_finding_at_its_declaration() {
    let opts = options(
        &[rules("lru.toml")],
        &[("base", fixture("gcc-dwarf5-base"))],
    );
    let (report, _) = run(&opts);
    let sarif: serde_json::Value =
        serde_json::from_str(&cli::check(&opts, Format::Sarif).unwrap().stdout).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let run = &sarif["runs"][0];
    let rule_ids: HashSet<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), report.findings.len());
    for (r, f) in results.iter().zip(&report.findings) {
        assert!(rule_ids.contains(r["ruleId"].as_str().unwrap()));
        assert_eq!(r["level"], f.severity.name());
        let region = &r["locations"][0]["physicalLocation"];
        assert_eq!(
            region["artifactLocation"]["uri"],
            f.a.decl_file.as_deref().unwrap()
        );
        assert_eq!(region["region"]["startLine"], f.a.decl_line.unwrap());
    }
}

/// Writes `text` as a rules file and returns the one-line error of `check`.
fn rules_error(text: &str, builds: &[&str]) -> String {
    let dir = std::env::temp_dir().join(format!(
        "cachelint-rules-{}-{}",
        std::process::id(),
        text.len()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("r.toml");
    std::fs::write(&path, text).unwrap();
    let builds: Vec<(&str, PathBuf)> = builds.iter().map(|b| (*b, fixture(b))).collect();
    let err = cli::check(&options(std::slice::from_ref(&path), &builds), Format::Json)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    std::fs::remove_dir_all(dir).unwrap();
    err.replace(path.to_str().unwrap(), "r.toml")
}

#[test]
fn rules_that_do_not_fit_the_binary_are_located_errors() {
    let base = &["gcc-dwarf5-base"];
    let cases = [
        (
            "[lruvc]\nlru_lock = \"lock\"",
            "r.toml:1:2: no struct, union or typedef named 'lruvc'; did you mean 'lruvec'?",
        ),
        (
            "[lruvec]\nlru_lok = \"lock\"",
            "r.toml:2:1: 'lruvec.lru_lok': struct lruvec has no member 'lru_lok'; did you mean 'lru_lock'?",
        ),
        (
            "[lru_gen_folio]\nfolios = { class = \"lock-protected\", lock = \"lruvec.lru_lok\" }",
            "r.toml:2:45: 'lruvec.lru_lok': struct lruvec has no member 'lru_lok'",
        ),
        (
            "[lru_gen_folio]\nfolios = { class = \"lock-protected\", lock = \"nosuch.lock\" }",
            "r.toml:2:45: lock 'nosuch.lock' is neither a member of lru_gen_folio nor TYPE.member",
        ),
        (
            "roots = [\"pglist\"]\n[lruvec]\nlru_lock = \"lock\"",
            "r.toml:1:10: no struct, union or typedef named 'pglist'",
        ),
        (
            "[lruvec]\nlru_lock = \"lock\"\n[[allow]]\nfields = [\"lruvec.lru_lock\", \"lruvec.nope\"]\nreason = \"r\"",
            "r.toml:4:30: 'lruvec.nope': struct lruvec has no member 'nope'",
        ),
        (
            "[lruvec]\n\"lrugen.nope\" = \"cold\"",
            "r.toml:2:1: 'lruvec.lrugen.nope': struct lru_gen_folio has no member 'nope'",
        ),
        // Neither name of a renamed type: both said, the hint from either.
        (
            "[zz_renamed]\nlru_lock = \"lock\"\naliases = [\"lruvc\"]",
            "r.toml:1:2: no struct, union or typedef named 'zz_renamed' or 'lruvc'; did you mean 'lruvec'?",
        ),
        // Two of its names in one build, laid out differently.
        (
            "[lruvec]\nlru_lock = \"lock\"\naliases = [\"mem_cgroup_per_node\"]",
            "r.toml:3:12: ",
        ),
    ];
    for (text, want) in cases {
        let got = rules_error(text, base);
        assert!(got.starts_with(want), "{text:?}\n got: {got}\nwant: {want}");
    }
    // Without the alias, nothing is close.
    assert_eq!(
        rules_error("[zz_renamed]\nlru_lock = \"lock\"", base),
        "r.toml:1:2: no struct, union or typedef named 'zz_renamed'"
    );
    let got = rules_error(
        "[lruvec]\nlru_lock = \"lock\"\naliases = [\"mem_cgroup_per_node\"]",
        base,
    );
    assert!(
        got.contains("defines both 'lruvec' and its alias 'mem_cgroup_per_node' of [lruvec], with different layouts"),
        "{got}"
    );
}

#[test]
fn a_type_renamed_in_the_rules_is_found_under_its_alias() {
    let path = common::renamed_rules("alias");
    for cc in COMPILERS {
        let build = format!("{cc}-base");
        let file = fixture(&build);
        let (report, _) = run(&options(
            std::slice::from_ref(&path),
            &[(&build, file.clone())],
        ));
        // The same finding as under the build's own name, from the
        // compiler's offsets, told under the name the build has.
        expect_refaulted_vs_enabled(&file, &report)
            .unwrap_or_else(|| panic!("{build}: no refaulted/enabled sharing"));
        let f = false_sharing(&report, "mem_cgroup_per_node", "refaulted", "enabled").unwrap();
        assert!(
            f.a.why.starts_with("rule of lru_gen_folio at "),
            "{}",
            f.a.why
        );
        assert!(
            !report
                .notes
                .iter()
                .any(|n| n.contains("lru_gen_folio_next")),
            "{:?}",
            report.notes
        );
    }
    // A build with neither name (`dup`: two layouts of another struct):
    // a note there, not an error.
    let (report, _) = run(&options(
        std::slice::from_ref(&path),
        &[
            ("base", fixture("gcc-dwarf5-base")),
            ("dup", fixture("dup")),
        ],
    ));
    assert!(
        report.notes.iter().any(|n| n.starts_with("[dup] ")
            && n.contains(
                "no struct, union or typedef named 'lru_gen_folio_next' or 'lru_gen_folio'"
            )),
        "{:?}",
        report.notes
    );
    // The same struct under two names (a typedef): no error, the rules'
    // own name.
    let dir = path.parent().unwrap();
    let same = dir.join("same.toml");
    std::fs::write(
        &same,
        "[spinlock_t]\nrlock = \"cold\"\naliases = [\"spinlock\"]\n",
    )
    .unwrap();
    let (code, _, err) = common::cachelint(&[
        "check",
        "--rules",
        same.to_str().unwrap(),
        fixture("gcc-dwarf5-base").to_str().unwrap(),
    ]);
    assert!(code == 0 || code == 1, "{err}");
    // On the command line, two layouts under one type's names: one line,
    // exit code 2.
    let two = dir.join("two.toml");
    std::fs::write(
        &two,
        "[lruvec]\nlru_lock = \"lock\"\naliases = [\"mem_cgroup_per_node\"]\n",
    )
    .unwrap();
    let (code, out, err) = common::cachelint(&[
        "check",
        "--rules",
        two.to_str().unwrap(),
        fixture("gcc-dwarf5-base").to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("cachelint: error: {}:3:12: ", two.display())),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_member_absent_in_one_config_is_a_note_there_and_an_error_nowhere_else() {
    // lruvec.lrugen exists only with CONFIG_LRU_GEN.
    let dir = std::env::temp_dir().join(format!("cachelint-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("r.toml");
    std::fs::write(
        &path,
        "[lruvec]\n\"lrugen.max_seq\" = \"hot-read\"\nnonresident_age = \"lockless-write\"\n",
    )
    .unwrap();
    let both = options(
        std::slice::from_ref(&path),
        &[
            ("base", fixture("gcc-dwarf5-base")),
            ("nolrugen", fixture("gcc-dwarf5-nolrugen")),
        ],
    );
    let (report, _) = run(&both);
    assert!(
        report.notes.iter().any(|n| n.starts_with("[nolrugen] ")
            && n.contains(":2:1: ")
            && n.contains("no member 'lrugen'")),
        "{:?}",
        report.notes
    );
    let alone = options(&[path], &[("nolrugen", fixture("gcc-dwarf5-nolrugen"))]);
    let err = cli::check(&alone, Format::Json)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(":2:1: ") && err.contains("no member 'lrugen'"),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// Runs `check` with rules given as text, on one build.
fn check_text(text: &str, build: &str) -> Report {
    // One directory per call: two tests' rules of one length once took
    // each other's.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("cachelint-text-{}-{call}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("r.toml");
    std::fs::write(&path, text).unwrap();
    let (report, _) = run(&options(&[path], &[(build, fixture(build))]));
    std::fs::remove_dir_all(dir).unwrap();
    report
}

#[test]
fn kernel_lock_types_are_locks_and_atomics_are_only_suggested() {
    // No rule names lru_lock, but it is a spinlock_t inside an annotated struct.
    for build in ["gcc-dwarf5-base", "clang-dwarf5-rt"] {
        let file = fixture(build);
        let report = check_text("[lruvec]\nflags = \"lockless-write\"\n", build);
        let lock = bytes(&file, "mem_cgroup_per_node.lruvec.lru_lock");
        let flags = bytes(&file, "mem_cgroup_per_node.lruvec.flags");
        let shares = lines_of(lock).any(|l| lines_of(flags).contains(&l));
        let found = report.findings.iter().find(|f| {
            f.root == "mem_cgroup_per_node" && f.kind == Kind::WriteVsLock && f.b.name == "lru_lock"
        });
        assert_eq!(
            found.is_some(),
            shares,
            "{build}: lock {lock:?} flags {flags:?}"
        );
        // nonresident_age is an atomic_long_t without a rule: a note, no finding.
        assert!(
            report
                .notes
                .iter()
                .any(|n| n.contains("'lruvec.nonresident_age' (atomic_long_t) has no rule")),
            "{:?}",
            report.notes
        );
        assert!(
            !report
                .findings
                .iter()
                .any(|f| f.a.name == "nonresident_age" || f.b.name == "nonresident_age")
        );
    }
}

#[test]
fn findings_name_the_cacheline_group_their_fields_sit_in() {
    // struct grouped: a and b between the read_mostly markers (bytes 0..16).
    let report = check_text(
        "[grouped]\na = \"lockless-write\"\nb = \"hot-read\"\n",
        "gcc-dwarf5-base",
    );
    let f = report
        .findings
        .iter()
        .find(|f| f.root == "grouped")
        .expect("a finding in grouped");
    assert_eq!((f.a.name.as_str(), f.b.name.as_str()), ("a", "b"));
    assert_eq!(f.a.group.as_deref(), Some("read_mostly"));
    assert_eq!(f.b.group.as_deref(), Some("read_mostly"));
}

#[test]
fn a_lock_protected_field_next_to_its_own_lock_is_fine_and_next_to_another_is_not() {
    // lists and lru_lock share line 1 of lruvec-in-mem_cgroup_per_node in
    // every build; which lock protects lists decides the finding.
    let build = "gcc-dwarf5-base";
    let file = fixture(build);
    let base = bytes(&file, "mem_cgroup_per_node.lruvec").0;
    let (start, end) = bytes(&file, "lruvec.lists");
    let lists = (base + start, base + end);
    let lock = bytes(&file, "mem_cgroup_per_node.lruvec.lru_lock");
    assert!(lines_of(lists).any(|l| lines_of(lock).contains(&l)));
    let own = check_text(
        "[lruvec]\nlists = { class = \"lock-protected\", lock = \"lru_lock\" }\n",
        build,
    );
    assert!(!own.findings.iter().any(|f| f.root == "mem_cgroup_per_node"));
    let other = check_text(
        "[lruvec]\nlists = { class = \"lock-protected\", lock = \"mem_cgroup_per_node.iter\" }\nlru_lock = \"lock\"\n\
         [mem_cgroup_per_node]\niter = \"lock\"\n",
        build,
    );
    assert!(
        other
            .findings
            .iter()
            .any(|f| f.root == "mem_cgroup_per_node" && f.kind == Kind::LockedVsOtherLock),
        "{:?}",
        other.findings
    );
}

#[test]
fn a_net_cachelines_row_that_names_no_member_is_a_note_not_an_error() {
    // The kernel's tables name macro aliases (inet_daddr is
    // sk.__sk_common.skc_daddr), which DWARF cannot resolve.
    let dir = std::env::temp_dir().join(format!("cachelint-rst-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("lru_gen_folio.rst");
    std::fs::write(
        &path,
        "Type  Name        fastpath_tx_access  fastpath_rx_access\n\
         bool  enabled     read_mostly\n\
         long  refaulted   -                   read_write\n\
         long  nr_refault  read_write\n",
    )
    .unwrap();
    let (report, failed) = run(&options(
        std::slice::from_ref(&path),
        &[("base", fixture("gcc-dwarf5-base"))],
    ));
    // The real rows still find refaulted (written in rx) on enabled's
    // line (read in tx): a warning, as the table's writers are owners.
    assert!(!failed);
    assert!(report.findings.iter().any(|f| f.kind == Kind::CrossContext
        && f.root == "mem_cgroup_per_node"
        && f.a.name == "refaulted"
        && f.b.name == "enabled"));
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains(":4:7: ") && n.contains("no member 'nr_refault'")),
        "{:?}",
        report.notes
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn each_side_says_which_rule_gave_its_class() {
    let report = check_one("lru.toml", "gcc-dwarf5-base");
    let f = false_sharing(&report, "mem_cgroup_per_node", "refaulted", "enabled").unwrap();
    // refaulted is line 14 of tests/rules/lru.toml, enabled line 6.
    assert!(
        f.a.why.starts_with("rule of lru_gen_folio at ") && f.a.why.ends_with("lru.toml:14:1"),
        "{}",
        f.a.why
    );
    assert!(f.b.why.ends_with("lru.toml:6:1"), "{}", f.b.why);
}

/// A rules file or a baseline is read whole, so an endless or huge one is
/// refused after its first 16 MB (a JSON baseline: its first bytes), and
/// a binary one is named as such, not as "invalid UTF-8".
#[test]
fn endless_and_binary_rules_files_are_refused_at_once() {
    let build = fixture("gcc-dwarf5-base");
    let build = build.to_str().unwrap();
    let lru = rules("lru.toml");
    let lru = lru.to_str().unwrap();
    let binary = std::env::temp_dir().join(format!("cachelint-binary-{}", std::process::id()));
    std::fs::write(&binary, b"a=\xff\xfe").unwrap();
    let binary = binary.to_str().unwrap();
    for (args, want) in [
        (
            vec!["check", "--rules", "/dev/zero", build],
            "/dev/zero: more than 16 MB, too large for a rules file",
        ),
        (
            vec!["check", "--rules", build, build],
            "not a rules file (TOML or a net_cachelines .rst table): an ELF or BTF file",
        ),
        (
            vec!["check", "--rules", binary, build],
            "not a text file (invalid UTF-8 at byte 2)",
        ),
        (
            vec!["check", "--rules", lru, "--baseline", "/dev/zero", build],
            "/dev/zero: not a baseline",
        ),
    ] {
        let (code, _, err) = cachelint(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    std::fs::remove_file(binary).unwrap();
}

#[test]
fn a_files_roots_restrict_only_that_files_types() {
    // lru-roots.toml names mem_cgroup_per_node; counters.toml names no
    // roots, so counter_pair's are discovered: the fixture embeds it only
    // in counter_table (fixtures/src/shapes.h). pglist_data also embeds a
    // lruvec, but lru-roots.toml's roots exclude it.
    let build = "gcc-dwarf5-base";
    let (alone, _) = run(&options(
        &[rules("counters.toml")],
        &[(build, fixture(build))],
    ));
    let counted = |r: &Report| {
        r.findings
            .iter()
            .filter(|f| f.root == "counter_table")
            .count()
    };
    assert!(counted(&alone) > 0);
    for files in [
        [rules("lru-roots.toml"), rules("counters.toml")],
        [rules("counters.toml"), rules("lru-roots.toml")],
    ] {
        let (report, _) = run(&options(&files, &[(build, fixture(build))]));
        let mut roots: Vec<&str> = report.builds[0]
            .roots
            .iter()
            .map(|r| r.name.as_str())
            .collect();
        roots.sort();
        assert_eq!(roots, ["counter_table", "mem_cgroup_per_node"], "{files:?}");
        assert_eq!(counted(&report), counted(&alone), "{files:?}");
        assert!(
            report
                .findings
                .iter()
                .any(|f| f.root == "mem_cgroup_per_node"
                    && f.a.name == "refaulted"
                    && f.b.name == "enabled"),
            "{files:?}"
        );
    }
}

#[test]
fn a_lock_must_be_a_lock_of_an_enclosing_instance() {
    // From fixtures/src: counter_pair is embedded only in counter_table, not
    // in lruvec; lruvec.flags is an unsigned long and anon_cost too;
    // lruvec.lru_lock is a spinlock_t.
    let base = &["gcc-dwarf5-base"];
    let cases = [
        (
            "[counter_pair]\nhits = { class = \"lock-protected\", lock = \"lruvec.lru_lock\" }",
            "r.toml:2:43: lock 'lruvec.lru_lock': struct lruvec does not enclose struct counter_pair",
        ),
        (
            "[lruvec]\nanon_cost = { class = \"lock-protected\", lock = \"flags\" }",
            "r.toml:2:48: lock 'flags' is not a lock:",
        ),
        (
            "[lru_gen_folio]\nnr_pages = { class = \"lock-protected\", lock = \"lruvec.anon_cost\" }",
            "r.toml:2:47: lock 'lruvec.anon_cost' is not a lock:",
        ),
        (
            "[lru_gen_folio]\nnr_pages = { class = \"lock-protected\", lock = \"nr_pages\" }",
            "r.toml:2:47: lock 'nr_pages' is the field itself",
        ),
        (
            "[lruvec]\nflags = { class = \"lock-protected\", lock = \"lruvec.flags\" }",
            "r.toml:2:44: lock 'lruvec.flags' is the field itself",
        ),
    ];
    for (text, want) in cases {
        let got = rules_error(text, base);
        assert!(got.starts_with(want), "{text:?}\n got: {got}\nwant: {want}");
    }
    // A lock type, or a field the rules class as a lock, is a lock.
    for text in [
        "[lru_gen_folio]\nnr_pages = { class = \"lock-protected\", lock = \"lruvec.lru_lock\" }",
        "[lruvec]\nflags = \"lock\"\n[lru_gen_folio]\nnr_pages = { class = \"lock-protected\", lock = \"lruvec.flags\" }",
        "[mem_cgroup_per_node]\non_tree = { class = \"lock-protected\", lock = \"lruvec.lru_lock.rlock\" }",
    ] {
        check_text(text, "gcc-dwarf5-base");
    }
}

#[test]
fn the_summary_counts_what_is_printed() {
    // Diagnostics are counted by their `SEVERITY:` lines, and the
    // messages on the rules and builds apart, by their `note:` lines on
    // stderr (findings only in the counts of severities); the pairs of
    // fields behind them by the JSON findings. JSON and SARIF carry the
    // same summary. --quiet hides the messages, not the findings.
    let build = format!("base={}", fixture("gcc-dwarf5-base").display());
    let files = [rules("lru.toml"), rules("counters.toml")];
    let mut args = vec!["check".to_owned()];
    for f in &files {
        args.extend(["--rules".to_owned(), f.display().to_string()]);
    }
    args.push(build);
    let (_, stdout, stderr) = cachelint(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let printed = |severity: &str| {
        stdout
            .lines()
            .filter(|l| !l.starts_with(' ') && l.contains(&format!(": {severity}: [base] ")))
            .count()
    };
    let (errors, warnings) = (printed("error"), printed("warning"));
    let notes = printed("note");
    let messages = stderr.lines().filter(|l| l.starts_with("note: ")).count();
    assert!(errors > 0 && messages > 0, "{stdout}{stderr}");
    let opts = options(&files, &[("base", fixture("gcc-dwarf5-base"))]);
    let (report, _) = run(&opts);
    let pairs = report.findings.len();
    assert!(pairs > errors + warnings, "the fixture groups pairs");
    let n = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let want = format!(
        "cachelint: {}, {}, {} in 1 build ({pairs} pairs of fields; 0 allowed, 0 in the baseline); {}",
        n(errors, "error"),
        n(warnings, "warning"),
        n(notes, "note"),
        n(messages, "message")
    );
    let last = stdout.lines().last().unwrap();
    assert_eq!(last, want, "{stdout}");
    args.insert(1, "--quiet".to_owned());
    let (_, quiet, stderr) = cachelint(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(quiet, stdout);
    assert!(!stderr.contains("note: "), "{stderr}");
    let json = serde_json::to_value(&report.summary).unwrap();
    for (key, n) in [
        ("errors", errors),
        ("warnings", warnings),
        ("notes", notes),
        ("messages", messages),
        ("pairs", pairs),
    ] {
        assert_eq!(json[key], n, "{key}: {json}");
    }
    let sarif: serde_json::Value =
        serde_json::from_str(&cli::check(&opts, Format::Sarif).unwrap().stdout).unwrap();
    assert_eq!(sarif["runs"][0]["properties"]["summary"], json);
}

#[test]
fn findings_come_worst_first_then_in_build_order() {
    // The after build has warnings only (README), the base build errors:
    // given after first, the base build's errors must still come first.
    let builds = [
        ("after", fixture("gcc-dwarf5-after")),
        ("base", fixture("gcc-dwarf5-base")),
    ];
    let (report, _) = run(&options(
        &[rules("lru.toml"), rules("counters.toml")],
        &builds,
    ));
    let order: Vec<(std::cmp::Reverse<Severity>, usize)> = report
        .findings
        .iter()
        .map(|f| {
            let build = builds.iter().position(|(c, _)| *c == f.config).unwrap();
            (std::cmp::Reverse(f.severity), build)
        })
        .collect();
    assert!(order.iter().any(|o| o.1 == 0) && order.iter().any(|o| o.1 == 1));
    assert!(order.is_sorted(), "{order:?}");
    // Within one build and root: by line, then the first field's offset.
    for w in report.findings.windows(2) {
        let (x, y) = (&w[0], &w[1]);
        if (x.severity, &x.config, &x.root) == (y.severity, &y.config, &y.root) {
            assert!(
                (x.cacheline, x.a.offset) <= (y.cacheline, y.a.offset),
                "{x:?}\n{y:?}"
            );
        }
    }
}

#[test]
fn a_rules_file_without_rules_is_an_error() {
    let base = &["gcc-dwarf5-base"];
    for text in ["", "# only a comment\n\n", "\n   \n"] {
        let got = rules_error(text, base);
        assert!(
            got.starts_with("r.toml: no rules in this file"),
            "{text:?}: {got}"
        );
    }
    let got = rules_error("[severity]\nwrite-vs-write = \"off\"\n", base);
    assert!(
        got.starts_with("no struct is annotated in the rules"),
        "{got}"
    );
}

#[test]
fn a_baseline_that_is_neither_a_report_nor_a_build_says_so() {
    let dir = std::env::temp_dir().join(format!("cachelint-notjson-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("notjson.json");
    std::fs::write(&path, "not json at all\n").unwrap();
    let (code, _, err) = cachelint(&[
        "check",
        "--rules",
        rules("lru.toml").to_str().unwrap(),
        "--baseline",
        path.to_str().unwrap(),
        fixture("gcc-dwarf5-base").to_str().unwrap(),
    ]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("notjson.json: not a baseline: neither a cachelint JSON report"),
        "{err}"
    );
}

#[test]
fn builds_checked_together_give_what_each_gives_alone_in_build_order() {
    // Three builds with findings of every severity, checked in parallel,
    // must give each build's own findings, merged worst first in the
    // order the builds were given: what checking them one after the
    // other gives.
    let builds = [
        ("rt", fixture("gcc-dwarf5-rt")),
        ("base", fixture("gcc-dwarf5-base")),
        ("after", fixture("clang-dwarf4-after")),
    ];
    let files = [rules("lru.toml"), rules("counters.toml")];
    let (together, _) = run(&options(&files, &builds));
    let mut merged = Vec::new();
    let mut allowed = Vec::new();
    let mut infos = Vec::new();
    for b in &builds {
        let (alone, _) = run(&options(&files, std::slice::from_ref(b)));
        merged.extend(alone.findings);
        allowed.extend(alone.allowed);
        infos.extend(alone.builds);
    }
    merged.sort_by_key(|f| std::cmp::Reverse(f.severity));
    allowed.sort_by_key(|f| std::cmp::Reverse(f.severity));
    assert_eq!(json(&together.findings), json(&merged));
    assert_eq!(json(&together.allowed), json(&allowed));
    assert_eq!(json(&together.builds), json(&infos));
    assert!(together.findings.len() > 3, "{}", together.findings.len());

    // And byte for byte what one thread (one build after the other) gives,
    // in every format.
    let args: Vec<String> = ["check", "--rules"]
        .iter()
        .map(|s| s.to_string())
        .chain([files[0].display().to_string(), "--rules".into()])
        .chain([files[1].display().to_string()])
        .chain(builds.iter().map(|(c, p)| format!("{c}={}", p.display())))
        .collect();
    for format in ["text", "json", "sarif"] {
        let out = |threads: &str| {
            let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
            args.extend(["--format", format]);
            common::cachelint_with_env(&[("RAYON_NUM_THREADS", threads.as_ref())], &args)
        };
        let (one, three) = (out("1"), out("3"));
        assert_eq!(one.0, 1, "{format}");
        assert_eq!(one.0, three.0, "{format}");
        assert_eq!(one.1, three.1, "{format}");
        assert_eq!(one.2, three.2, "{format}");
    }
}

/// Serialized, for comparing report parts.
fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap()
}

#[test]
fn a_finding_in_each_element_of_an_array_of_structs_is_told_once_with_the_range() {
    // counter_table { int id; struct counter_pair pairs[6]; }, 64-byte
    // aligned, counter_pair { hits (hot-read), misses (lockless-write) }.
    // The same-element pair pairs[i].misses / pairs[i].hits shares a line
    // for the i where both sit on one line. By hand, from pairs at 8 with
    // 16-byte elements: i = 0..2 on line 0, i = 3 split (hits 56-63 on
    // line 0, misses 64-71 on line 1), i = 4..5 on line 1: two findings,
    // pairs[0..2] and pairs[4..5]. Derived here from the compiler's offsets.
    let build = "gcc-dwarf5-base";
    let t = truth(&fixture(build), true);
    let pairs = t["counter_table.pairs"];
    let element = pairs.1 / 6;
    let hits = |i: u64| pairs.0 + i * element;
    let misses = |i: u64| hits(i) + 8;
    assert_eq!(hits(1), t["counter_table.pairs[1].hits"].0);
    assert_eq!(misses(5), t["counter_table.pairs[5].misses"].0);
    let runs = |i: u64| {
        lines_of((hits(i), hits(i) + 8)).any(|l| lines_of((misses(i), misses(i) + 8)).contains(&l))
    };
    let mut want: Vec<(u64, u64)> = Vec::new();
    for i in (0..6).filter(|&i| runs(i)) {
        match want.last_mut() {
            Some(r) if r.1 + 1 == i => r.1 = i,
            _ => want.push((i, i)),
        }
    }
    assert_eq!(want, [(0, 2), (4, 5)], "the hand computation");
    let report = check_one("counters.toml", build);
    let same_element: Vec<&ReportFinding> = report
        .findings
        .iter()
        .filter(|f| {
            f.kind == Kind::FalseSharing && f.a.path.split('.').next() == f.b.path.split('.').next()
        })
        .collect();
    let got: Vec<(String, String)> = same_element
        .iter()
        .map(|f| (f.a.path.clone(), f.b.path.clone()))
        .collect();
    let wanted: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| {
            (
                format!("pairs[{a}..{b}].misses"),
                format!("pairs[{a}..{b}].hits"),
            )
        })
        .collect();
    assert_eq!(got, wanted);
    for (f, (first, last)) in same_element.iter().zip(&want) {
        let e = f.elements.as_ref().expect("elements");
        assert_eq!(
            (e.array.as_str(), e.first, e.last),
            ("pairs", *first, *last)
        );
    }
    // With the misses written by an owner, each element's pair names the
    // readers of its own element (`the users of pairs[1].hits`): the
    // same runs, the context named for the range.
    let owned = check_one("counters-owner.toml", build);
    let got: Vec<(String, String, Vec<String>)> = owned
        .findings
        .iter()
        .filter(|f| f.a.path.split('.').next() == f.b.path.split('.').next())
        .map(|f| {
            let others = f.meeting.as_ref().map(|m| m.others.clone());
            (
                f.a.path.clone(),
                f.b.path.clone(),
                others.unwrap_or_default(),
            )
        })
        .collect();
    let wanted: Vec<(String, String, Vec<String>)> = wanted
        .into_iter()
        .zip(&want)
        .map(|((a, b), (first, last))| {
            (
                a,
                b,
                vec![format!("the users of pairs[{first}..{last}].hits")],
            )
        })
        .collect();
    assert_eq!(got, wanted);
    // The text names the range once, in the headline; SARIF has it in the
    // message; the report matches itself as a baseline.
    let file = fixture(build).display().to_string();
    let counters = rules("counters.toml").display().to_string();
    let (_, text, _) = common::cachelint(&["check", "--rules", &counters, &file]);
    assert!(
        text.contains("with hot-read 'hits' in each of pairs[0..2] ("),
        "{text}"
    );
    assert!(
        text.contains("    lockless-write pairs[4..5].misses"),
        "{text}"
    );
    let (_, sarif, _) =
        common::cachelint(&["check", "--rules", &counters, &file, "--format", "sarif"]);
    assert!(sarif.contains("in each of pairs[4..5]"), "{sarif}");
    let (code, again, _) =
        common::cachelint(&["check", "--rules", &counters, &file, "--baseline", &file]);
    assert_eq!(code, 0, "{again}");
    assert!(
        again.contains(&format!(", {} in the baseline)", report.findings.len())),
        "{again}"
    );
    // A report that has the finding once per element (as before ranges)
    // is the same baseline; one that lacks an element of a range is not.
    let per_element = |drop: Option<u64>| {
        let mut old = report.clone();
        old.findings = report
            .findings
            .iter()
            .flat_map(|f| match &f.elements {
                None => vec![f.clone()],
                Some(e) => (e.first..=e.last)
                    .filter(|&i| Some(i) != drop)
                    .map(|i| {
                        let mut one = f.clone();
                        one.elements = None;
                        for side in [&mut one.a, &mut one.b] {
                            side.path = side.path.replace(&e.range(), &format!("pairs[{i}]"));
                        }
                        one
                    })
                    .collect(),
            })
            .collect();
        let path = std::env::temp_dir().join(format!(
            "cachelint-elements-{}-{drop:?}.json",
            std::process::id()
        ));
        std::fs::write(&path, serde_json::to_string(&old).unwrap()).unwrap();
        path
    };
    for (drop, shown) in [(None, 0), (Some(1), 1)] {
        let old = per_element(drop);
        let mut opts = options(&[rules("counters.toml")], &[(build, fixture(build))]);
        opts.baseline = vec![Build {
            config: build.into(),
            path: old.clone(),
        }];
        let (new, _) = run(&opts);
        let paths: Vec<&str> = new.findings.iter().map(|f| f.a.path.as_str()).collect();
        assert_eq!(new.findings.len(), shown, "{paths:?}");
        if shown == 1 {
            assert_eq!(paths, ["pairs[0..2].misses"]);
        }
        std::fs::remove_file(old).unwrap();
    }
}

#[test]
fn a_struct_the_rules_place_is_a_root_and_tells_the_findings_its_holders_share() {
    // lruvec is embedded in mem_cgroup_per_node, so discovery alone never
    // counts lines from lruvec itself. A [placement] row says its objects
    // exist (where they start): it is a root then, before the discovered
    // ones, and the holder's findings at the same places are told for it.
    let text = std::fs::read_to_string(rules("lru.toml")).unwrap();
    for compiler in COMPILERS {
        let build = format!("{compiler}-after");
        let discovered = check_text(&text, &build);
        assert!(!discovered.findings.is_empty(), "{build}");
        assert!(
            discovered.findings.iter().all(|f| f.root != "lruvec"),
            "{build}"
        );
        let placed = check_text(&format!("{text}\n[placement]\nlruvec = \"line\"\n"), &build);
        assert!(
            placed.findings.iter().any(|f| f.root == "lruvec"),
            "{build}: {:?}",
            placed.notes
        );
        // Each pair once: as many findings as the holder alone gave.
        assert_eq!(placed.findings.len(), discovered.findings.len(), "{build}");
        let note = format!("[{build}] root 'lruvec' stands for 'mem_cgroup_per_node'");
        assert!(
            placed.notes.iter().any(|n| n.starts_with(&note)),
            "{:?}",
            placed.notes
        );
    }
}

#[test]
fn a_root_holding_another_at_the_same_place_in_a_line_is_reported_through_it() {
    // In the after builds lruvec is 64-byte aligned (its stats group) and
    // mem_cgroup_per_node holds it at a multiple of 64 (the compiler's
    // offsets, checked here): naming both as roots gives the same pairs on
    // the same places of their lines, so they are told once, for lruvec,
    // with a note that lruvec stands for mem_cgroup_per_node.
    let text = std::fs::read_to_string(rules("lru.toml")).unwrap();
    let text = format!("roots = [\"lruvec\", \"mem_cgroup_per_node\"]\n{text}");
    for compiler in COMPILERS {
        let build = format!("{compiler}-after");
        let t = truth(&fixture(&build), true);
        assert_eq!(t["mem_cgroup_per_node.lruvec"].0 % LINE, 0);
        assert_eq!(t["lruvec"].1 % LINE, 0, "aligned: size a multiple of 64");
        let alone = check_text(
            &text.replace("\"mem_cgroup_per_node\"", "\"lruvec\""),
            &build,
        );
        let report = check_text(&text, &build);
        assert!(!alone.findings.is_empty());
        assert!(
            report.findings.iter().all(|f| f.root == "lruvec"),
            "{build}"
        );
        // The rules files differ (their temporary paths are in `why`).
        let blank = |r: &Report| {
            let mut f = r.findings.clone();
            for side in f.iter_mut().flat_map(|f| [&mut f.a, &mut f.b]) {
                side.why.clear();
            }
            json(&f)
        };
        assert_eq!(blank(&report), blank(&alone), "{build}");
        let note = format!("[{build}] root 'lruvec' stands for 'mem_cgroup_per_node'");
        assert!(
            report.notes.iter().any(|n| n.starts_with(&note)),
            "{:?}",
            report.notes
        );
    }
}
