//! `cachelint suggest` on the fixtures. The suggested plan is checked by
//! the other commands reading it (`check --plan`), and sizes under
//! `--no-grow` against the compiler's own `sizeof` (`cachelint_truth[]`).

mod common;

use std::path::{Path, PathBuf};

use common::{cachelint, fixture, truth};

fn rules(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/rules")
        .join(name)
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cachelint-suggest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn builds() -> Vec<String> {
    ["gcc-dwarf5-base", "gcc-dwarf5-rt"]
        .iter()
        .map(|b| format!("{b}={}", fixture(b).display()))
        .collect()
}

/// `cachelint COMMAND --rules RULES --format json OPTIONS BUILDS... LAST...`
/// on the fixture builds, its exit code one of `codes`: the JSON.
fn json(
    command: &str,
    rules_file: &str,
    options: &[&str],
    last: &[&str],
    codes: &[i32],
) -> serde_json::Value {
    let r = rules(rules_file);
    let b = builds();
    let mut args = vec![command, "--rules", r.to_str().unwrap(), "--format", "json"];
    args.extend(options);
    args.extend(b.iter().map(String::as_str));
    args.extend(last);
    let (code, out, err) = cachelint(&args);
    assert!(codes.contains(&code), "{command}: exit code {code}: {err}");
    serde_json::from_str(&out).unwrap()
}

fn suggest(extra: &[&str]) -> serde_json::Value {
    let mut last = vec!["lru_gen_folio"];
    last.extend(extra);
    json("suggest", "lru.toml", &[], &last, &[0])
}

/// `check --plan PLAN` on the builds: (errors, warnings).
fn check_planned(plan: &Path) -> (u64, u64) {
    let report = json(
        "check",
        "lru.toml",
        &["--plan", plan.to_str().unwrap()],
        &[],
        &[0, 1],
    );
    let count = |s: &str| {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == s)
            .count() as u64
    };
    (count("error"), count("warning"))
}

#[test]
fn the_suggestion_clears_the_errors_and_check_agrees() {
    let plan = temp("lru.plan.toml");
    let report = suggest(&["--plan-out", plan.to_str().unwrap()]);
    let sum = |key: &str, i: usize| -> u64 {
        report["builds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b[key][i].as_u64().unwrap())
            .sum()
    };
    // The compiled layouts have the thread's false sharing; the suggestion
    // has none, and check reading the written plan says the same.
    assert!(sum("errors", 0) > 0);
    assert_eq!(sum("errors", 1), 0);
    assert_eq!(check_planned(&plan), (0, sum("warnings", 1)));
    assert_eq!(std::fs::read_to_string(&plan).unwrap(), report["plan"]);
}

#[test]
fn no_grow_keeps_every_root_at_the_compilers_size() {
    let report = suggest(&["--no-grow"]);
    for b in report["builds"].as_array().unwrap() {
        let config = b["config"].as_str().unwrap();
        let t = truth(&fixture(config), true);
        for root in b["roots"].as_array().unwrap() {
            let name = root[0].as_str().unwrap();
            let compiled = t[name].1;
            assert_eq!(root[1], compiled, "{config} {name}");
            assert_eq!(root[2], compiled, "{config} {name}: grew under --no-grow");
        }
    }
}

#[test]
fn suggest_refuses_what_it_cannot_do() {
    let r = rules("lru.toml");
    let base = format!("base={}", fixture("gcc-dwarf5-base").display());
    let rt = fixture("gcc-dwarf5-rt").display().to_string();
    for (args, want) in [
        (
            vec![
                "suggest",
                "--rules",
                r.to_str().unwrap(),
                &base,
                "lruvec_nope",
            ],
            "the rules annotate no field of 'lruvec_nope'",
        ),
        (
            vec![
                "suggest",
                "--rules",
                r.to_str().unwrap(),
                "--plan",
                "tests/plans/rfc3.toml",
                &base,
                "lru_gen_folio",
            ],
            "suggest starts from the compiled layout",
        ),
        (
            vec!["suggest", "--rules", r.to_str().unwrap(), &base, &rt],
            "the last argument is the struct to reorder",
        ),
    ] {
        let (code, _, err) = cachelint(&args);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(want), "{err}");
    }
}

#[test]
fn the_footprint_suggest_reports_is_the_one_footprint_finds_in_its_plan() {
    // Context rules: suggest scores the struct's footprint as it lays the
    // candidates out in place; footprint --plan lays the written plan out
    // through the loader. The two must agree, build by build.
    let plan = temp("contexts.plan.toml");
    let p = plan.to_str().unwrap();
    let report = json(
        "suggest",
        "lru-contexts.toml",
        &[],
        &["lru_gen_folio", "--plan-out", p],
        &[0],
    );
    let footprint = json(
        "footprint",
        "lru-contexts.toml",
        &["--plan", p, "--type", "lru_gen_folio"],
        &[],
        &[0],
    );
    for (s, f) in report["builds"]
        .as_array()
        .unwrap()
        .iter()
        .zip(footprint["builds"].as_array().unwrap())
    {
        let ours: Vec<(String, u64)> = s["footprint"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| {
                (
                    row[0].as_str().unwrap().to_owned(),
                    row[2].as_u64().unwrap(),
                )
            })
            .collect();
        let theirs: Vec<(String, u64)> = f["types"][0]["contexts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["context"].as_str().unwrap().to_owned(),
                    c["lines"].as_array().unwrap().len() as u64,
                )
            })
            .collect();
        assert!(!ours.is_empty());
        assert_eq!(ours, theirs, "{}", s["config"]);
    }
}
