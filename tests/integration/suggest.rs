//! `cachelint suggest` on the fixtures. The suggested plan is checked by
//! the other commands reading it (`check --plan`), and sizes under
//! `--no-grow` against the compiler's own `sizeof` (`cachelint_truth[]`).
//! `suggest` runs in the library (`common::run::suggest`), the commands
//! that read its plan in the binary; two tests run `suggest` in the binary
//! for its command line and exit codes.

use std::path::{Path, PathBuf};

use crate::common;
use crate::common::run::SuggestOptions;
use common::run::{self, Format};
use common::{cachelint, fixture, rules, truth};

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

/// `suggest`'s options: the rules file `rules_file` over the fixture
/// builds.
fn options(rules_file: &str) -> SuggestOptions {
    let b = builds();
    let b: Vec<&str> = b.iter().map(String::as_str).collect();
    run::suggest_options(&[rules(rules_file)], &b)
}

/// The options of `lru.toml` over the fixture builds.
fn lru() -> SuggestOptions {
    options("lru.toml")
}

/// `suggest` of `types` under `opts` in `format`, as the binary runs it:
/// exit code, standard output, standard error.
fn suggest_run(opts: &SuggestOptions, types: &[&str], format: Format) -> (i32, String, String) {
    run::as_binary(run::suggest(opts, types, format))
}

/// `suggest --format json` of `types` under `opts`, exiting 0: the JSON.
fn suggest_json(opts: &SuggestOptions, types: &[&str]) -> serde_json::Value {
    let (code, out, err) = suggest_run(opts, types, Format::Json);
    assert_eq!(code, 0, "suggest: exit code {code}: {err}");
    serde_json::from_str(&out).unwrap()
}

/// `suggest` of `types` under `opts` in text, exiting 0: its standard
/// output.
fn suggest_text(opts: &SuggestOptions, types: &[&str]) -> String {
    let (code, out, err) = suggest_run(opts, types, Format::Text);
    assert_eq!(code, 0, "suggest {types:?}: {err}");
    out
}

/// `suggest` of `lru_gen_folio` under `opts`: the JSON.
fn suggest(opts: SuggestOptions) -> serde_json::Value {
    suggest_json(&opts, &["lru_gen_folio"])
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
    let report = suggest(SuggestOptions {
        plan_out: Some(plan.clone()),
        ..lru()
    });
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
    let report = suggest(SuggestOptions {
        max_growth: Some(0),
        ..lru()
    });
    for b in report["builds"].as_array().unwrap() {
        let config = b["config"].as_str().unwrap();
        let t = truth(&fixture(config), true);
        for size in b["sizes"].as_array().unwrap() {
            let name = size["type"].as_str().unwrap();
            let compiled = t[name].1;
            assert_eq!(size["bytes"][0], compiled, "{config} {name}");
            assert_eq!(
                size["bytes"][1], compiled,
                "{config} {name}: grew under --no-grow"
            );
        }
    }
}

/// (errors, warnings, worst growth in lines) of a suggestion, over the
/// builds, and its notes.
fn objectives(report: &serde_json::Value) -> ((u64, u64, i64), u64) {
    let builds = report["builds"].as_array().unwrap();
    let sum = |key: &str| builds.iter().map(|b| b[key][1].as_u64().unwrap()).sum();
    let growth = builds
        .iter()
        .flat_map(|b| b["sizes"].as_array().unwrap())
        .map(|s| s["growth"]["lines"].as_i64().unwrap())
        .max()
        .unwrap();
    ((sum("errors"), sum("warnings"), growth), sum("notes"))
}

#[test]
fn rank_orders_the_objectives_and_the_default_is_no_worse_than_growth_first() {
    let default = suggest(lru());
    let growth_first = suggest(SuggestOptions {
        rank: Some("errors,growth".into()),
        ..lru()
    });
    assert_eq!(
        default["rank"],
        serde_json::json!([
            "errors",
            "warnings",
            "growth",
            "notes",
            "footprint",
            "moved"
        ])
    );
    assert_eq!(
        growth_first["rank"],
        serde_json::json!([
            "errors",
            "growth",
            "warnings",
            "notes",
            "footprint",
            "moved"
        ])
    );
    let ((d, dn), (g, gn)) = (objectives(&default), objectives(&growth_first));
    // The distance to the bounds is these figures (no footprint rules).
    for (report, (e, w, growth), n) in [(&default, d, dn), (&growth_first, g, gn)] {
        assert_eq!(
            report["gap"],
            serde_json::json!({
                "errors": e, "warnings": w, "notes": n, "growth_lines": growth.max(0),
                "footprint_lines": 0
            })
        );
    }
    // Each is no worse than the other by its own order: the default run
    // also climbs growth first and keeps the better by its order.
    assert!(d <= g, "default {d:?}, growth first {g:?}");
    assert!(
        (g.0, g.2, g.1) <= (d.0, d.2, d.1),
        "default {d:?}, growth first {g:?}"
    );
    // And the plans say what they claim: check --plan agrees on both.
    for (report, name) in [(&default, "default"), (&growth_first, "growth")] {
        let plan = temp(&format!("rank-{name}.plan.toml"));
        std::fs::write(&plan, report["plan"].as_str().unwrap()).unwrap();
        let (errors, warnings) = check_planned(&plan);
        let ((e, w, _), _) = objectives(report);
        assert_eq!((errors, warnings), (e, w), "{name}");
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
            // suggest starts from the compiled layout: no --plan.
            "unexpected argument '--plan'",
        ),
        (
            vec!["suggest", "--rules", r.to_str().unwrap(), &base, &rt],
            "the last argument is the struct to reorder",
        ),
        (
            vec![
                "suggest",
                "--rules",
                r.to_str().unwrap(),
                "--rank",
                "errors,size",
                &base,
                "lru_gen_folio",
            ],
            "--rank: 'size' is not an objective (one of errors, warnings, growth, samples, notes, footprint, moved)",
        ),
        (
            vec!["suggest", "--rank", "growth", &base, "lru_gen_folio"],
            "--rank orders the rules' objectives",
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
    let report = suggest_json(
        &SuggestOptions {
            plan_out: Some(plan.clone()),
            ..options("lru-contexts.toml")
        },
        &["lru_gen_folio"],
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

/// `cachelint ARGS` exiting 0: its standard output.
fn stdout(args: &[&str]) -> String {
    let (code, out, err) = cachelint(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

#[test]
fn the_size_table_is_the_compilers_sizeof_and_the_plans_layout() {
    let plan = temp("sizes.plan.toml");
    let report = suggest(SuggestOptions {
        plan_out: Some(plan.clone()),
        ..lru()
    });
    let text = suggest_text(&lru(), &["lru_gen_folio"]);
    // The struct, then the structs of mm_lru.h that embed it (through
    // lruvec): mem_cgroup_per_node and pglist_data.
    let types = ["lru_gen_folio", "mem_cgroup_per_node", "pglist_data"];
    let rows = report["builds"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for build in rows {
        let config = build["config"].as_str().unwrap();
        let file = fixture(config);
        let t = truth(&file, true);
        let sizes = build["sizes"].as_array().unwrap();
        let names: Vec<&str> = sizes.iter().map(|s| s["type"].as_str().unwrap()).collect();
        assert_eq!(names, types, "{config}");
        for (i, s) in sizes.iter().enumerate() {
            let name = types[i];
            assert_eq!(s["role"], if i == 0 { "struct" } else { "root" });
            // Compiled: the compiler's sizeof. Suggested: offsetof --plan
            // of the written plan, laid out through the loader.
            let compiled = t[name].1;
            let planned = common::run::offsetof_planned(&file, &[name.to_owned()], &plan).unwrap()
                [0]["size"]
                .as_u64()
                .unwrap();
            let lines = |bytes: u64| bytes.div_ceil(64);
            assert_eq!(
                s["bytes"],
                serde_json::json!([compiled, planned]),
                "{config} {name}"
            );
            assert_eq!(
                s["lines"],
                serde_json::json!([lines(compiled), lines(planned)]),
                "{config} {name}"
            );
            let grown = planned as i64 - compiled as i64;
            let grown_lines = lines(planned) as i64 - lines(compiled) as i64;
            assert_eq!(s["growth"]["bytes"], grown, "{config} {name}");
            assert_eq!(s["growth"]["lines"], grown_lines, "{config} {name}");
            // The text table has the same row.
            let row = [
                config.to_owned(),
                if i == 0 {
                    name.to_owned()
                } else {
                    format!("{name} (root)")
                },
                format!("{compiled} -> {planned}"),
                format!("{} -> {}", lines(compiled), lines(planned)),
            ];
            assert!(
                text.lines().any(|l| {
                    let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                    cells.len() == 7 && cells[1..5] == row
                }),
                "no row {row:?} in\n{text}"
            );
        }
    }
}

/// `suggest` of lru_gen_folio under `opts`, its plan written to a file
/// named for `name`: the plan's path, the text after `heading` (the last
/// section), and the JSON.
fn suggest_with(
    opts: SuggestOptions,
    name: &str,
    heading: &str,
) -> (PathBuf, String, serde_json::Value) {
    suggest_type_with(opts, "lru_gen_folio", name, heading)
}

/// `suggest` of `ty` under `opts`, its plan written to a file named for
/// `name`: the plan file, the text after `heading`, and the JSON report.
fn suggest_type_with(
    opts: SuggestOptions,
    ty: &str,
    name: &str,
    heading: &str,
) -> (PathBuf, String, serde_json::Value) {
    let plan = temp(&format!("{ty}-{name}.plan.toml"));
    let opts = SuggestOptions {
        plan_out: Some(plan.clone()),
        ..opts
    };
    let text = suggest_text(&opts, &[ty]);
    let (_, section) = text
        .split_once(heading)
        .unwrap_or_else(|| panic!("no '{heading}' in\n{text}"));
    let section = section.to_owned();
    let json = suggest_json(&opts, &[ty]);
    (plan, section, json)
}

#[test]
fn the_diagram_is_what_diagram_compare_draws_for_the_plan() {
    let (plan, text, json) = suggest_with(
        SuggestOptions {
            diagram: true,
            ..lru()
        },
        "diagram",
        "diagram (diagram --plan PLAN BUILD TYPE --compare BUILD):\n\n",
    );
    // The first build, compiled against itself under the written plan.
    let r = rules("lru.toml");
    let b = builds();
    let drawn = stdout(&[
        "diagram",
        "--rules",
        r.to_str().unwrap(),
        "--plan",
        plan.to_str().unwrap(),
        &b[0],
        "lru_gen_folio",
        "--compare",
        &b[0],
    ]);
    assert_eq!(text, drawn);
    assert!(drawn.contains("summary (gcc-dwarf5-base -> gcc-dwarf5-base-planned)"));
    // JSON has the same text (diagram has no JSON of its own).
    assert_eq!(json["diagram"], drawn);
    assert!(json["asserts"].is_null());
    assert!(suggest(lru())["diagram"].is_null());
}

#[test]
fn the_c_is_what_layout_macros_prints_for_the_plan() {
    let (plan, text, json) = suggest_with(
        SuggestOptions {
            max_growth: Some(0),
            ..lru()
        },
        "no-grow",
        "the struct in the new order, as C (on gcc-dwarf5-base; layout --macros --plan PLAN \
         BUILD TYPE):\n\n",
    );
    let base = fixture("gcc-dwarf5-base");
    let printed = stdout(&[
        "layout",
        "--macros",
        "--plan",
        plan.to_str().unwrap(),
        base.to_str().unwrap(),
        "lru_gen_folio",
    ]);
    assert_eq!(text, printed);
    assert!(printed.starts_with(&format!(
        "/* planned by {}, not compiled */",
        plan.display()
    )));
    assert_eq!(json["c"], printed);
}

#[test]
fn the_check_function_is_what_asserts_writes_for_the_plan() {
    // counter_pair's suggestion puts its lockless writer in an aligned
    // group of its own.
    let (plan, text, json) = suggest_type_with(
        SuggestOptions {
            asserts: true,
            ..options("counters.toml")
        },
        "counter_pair",
        "asserts",
        "check function (asserts --plan PLAN BUILD TYPE):\n\n",
    );
    let r = rules("counters.toml");
    let b = builds();
    let asserts = |format: &str| {
        stdout(&[
            "asserts",
            "--rules",
            r.to_str().unwrap(),
            "--plan",
            plan.to_str().unwrap(),
            "--format",
            format,
            &b[0],
            "counter_pair",
        ])
    };
    let written = asserts("text");
    assert_eq!(text, written);
    // The plan's group is asserted: the function is of the suggested
    // layout, not the compiled one (which has no group).
    assert!(
        written.contains("CACHELINE_ASSERT_GROUP_SIZE(struct counter_pair, counter_pair_lockless")
    );
    let theirs: serde_json::Value = serde_json::from_str(&asserts("json")).unwrap();
    assert_eq!(json["asserts"], theirs);
    assert!(json["diagram"].is_null());
    assert!(suggest(lru())["asserts"].is_null());
    // A suggestion that makes no group has no check function: a note says
    // so, and the rest is printed.
    let (code, out, err) = suggest_run(
        &SuggestOptions {
            asserts: true,
            rank: Some("moved".into()),
            ..lru()
        },
        &["lru_gen_folio"],
        Format::Json,
    );
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(report["asserts"].is_null());
    assert!(
        err.contains("the suggested layout of struct lru_gen_folio has no cacheline group"),
        "{err}"
    );
}

#[test]
fn a_pinned_member_keeps_the_offset_the_compiler_gave_it() {
    // Unpinned, the suggestion moves evicted and max_seq (it gathers the
    // lockless writers on lines of their own); pinned, both keep the
    // compiler's offsetof in every build, and the rest may still move.
    let free = temp("unpinned.plan.toml");
    suggest(SuggestOptions {
        plan_out: Some(free.clone()),
        ..lru()
    });
    let plan = temp("pinned.plan.toml");
    let report = suggest(SuggestOptions {
        plan_out: Some(plan.clone()),
        pin: vec!["evicted".into(), "max_seq".into()],
        ..lru()
    });
    assert!(report["moved"].as_u64().unwrap() > 0);
    let paths = [
        "lru_gen_folio.evicted".to_owned(),
        "lru_gen_folio.max_seq".to_owned(),
    ];
    let mut moved_unpinned = false;
    for build in builds() {
        let (_, file) = build.split_once('=').unwrap();
        let file = Path::new(file);
        let t = truth(file, true);
        let offsets = |plan: &Path| -> Vec<u64> {
            common::run::offsetof_planned(file, &paths, plan)
                .unwrap()
                .iter()
                .map(|r| r["offset"].as_u64().unwrap())
                .collect()
        };
        let compiler: Vec<u64> = paths.iter().map(|p| t[p.as_str()].0).collect();
        assert_eq!(offsets(&plan), compiler, "{build}");
        moved_unpinned |= offsets(&free) != compiler;
    }
    // Without the pins, they would have moved: the test pins something.
    assert!(moved_unpinned);
    // A name that is neither a member nor a kernel group is an error.
    let (code, _, err) = suggest_run(
        &SuggestOptions {
            pin: vec!["evicte".into()],
            ..lru()
        },
        &["lru_gen_folio"],
        Format::Text,
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("has no member or kernel group 'evicte'; did you mean 'evicted'?"),
        "{err}"
    );
}

/// lruvec's `lrugen` is under `#ifdef CONFIG_LRU_GEN`: base has it,
/// nolrugen does not. One order holds on both: `lrugen` is listed as a
/// member of base only and is optional in the plan, the compiled sizes
/// are the compiler's `sizeof` on each build, and `offsetof --plan` of
/// the written plan gives each build the suggested size.
#[test]
fn a_member_some_builds_lack_is_optional_in_the_one_order() {
    let plan = temp("lruvec-configs.plan.toml");
    let r = rules("lru.toml");
    let configs = [("gcc-dwarf5-base", true), ("gcc-dwarf5-nolrugen", false)];
    let builds: Vec<String> = configs
        .iter()
        .map(|(b, _)| format!("{b}={}", fixture(b).display()))
        .collect();
    let builds: Vec<&str> = builds.iter().map(String::as_str).collect();
    let (code, out, err) = suggest_run(
        &SuggestOptions {
            plan_out: Some(plan.clone()),
            ..run::suggest_options(&[r], &builds)
        },
        &["lruvec"],
        Format::Json,
    );
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        report["per_config"],
        serde_json::json!([{ "member": "lrugen", "configs": ["gcc-dwarf5-base"] }])
    );
    assert!(
        report["plan"]
            .as_str()
            .unwrap()
            .contains("optional = [\"lrugen\"]\n"),
        "{}",
        report["plan"]
    );
    for ((config, lru_gen), b) in configs.iter().zip(report["builds"].as_array().unwrap()) {
        assert_eq!(b["config"], *config);
        let size = &b["sizes"][0];
        assert_eq!(size["type"], "lruvec");
        assert_eq!(
            size["bytes"][0],
            truth(&fixture(config), *lru_gen)["lruvec"].1
        );
        let rows =
            common::run::offsetof_planned(&fixture(config), &["lruvec".to_owned()], &plan).unwrap();
        assert_eq!(rows[0]["size"], size["bytes"][1], "{config}");
    }
}

/// The C declaration of each unit of `struct anon` and `struct aligned`
/// (fixtures/src/shapes.h), by the name a plan calls it: an anonymous
/// member by its first field.
const UNITS: &[(&str, &str, &str)] = &[
    ("anon", "kind", "int kind;"),
    (
        "anon",
        "as_long",
        "union { long as_long; struct { short lo; short hi; }; char bytes[8]; };",
    ),
    ("anon", "named", "struct { char tag; int value; } named;"),
    ("anon", "x", "struct { u8 x, y; };"),
    ("aligned", "c", "char c;"),
    (
        "aligned",
        "big",
        "long big __attribute__((__aligned__(32)));",
    ),
    ("aligned", "d", "char d;"),
];

/// `offsetof --plan` of every unit of `ty` and of `ty` itself, checked by
/// the C compiler: `struct ty_suggested`, its members in `order`, with a
/// `_Static_assert` per offset and one on the size, built with `cc
/// -fsyntax-only` (the linker rustc uses, so it is there wherever the
/// tests build). Returns the planned size.
fn compiler_agrees(file: &Path, ty: &str, order: &[String], plan: &Path, attrs: &str) -> u64 {
    let paths: Vec<String> = std::iter::once(ty.to_owned())
        .chain(order.iter().map(|m| format!("{ty}.{m}")))
        .collect();
    let planned = common::run::offsetof_planned(file, &paths, plan).unwrap();
    let size = planned[0]["size"].as_u64().unwrap();
    let mut c = format!("#include <stddef.h>\n#include \"shapes.h\"\nstruct {ty}_suggested {{\n");
    for m in order {
        let decl = UNITS
            .iter()
            .find(|(t, n, _)| *t == ty && n == m)
            .unwrap_or_else(|| panic!("no declaration of {ty}.{m}"))
            .2;
        c.push_str(&format!("\t{decl}\n"));
    }
    c.push_str(&format!("}}{attrs};\n"));
    c.push_str(&format!(
        "_Static_assert(sizeof(struct {ty}_suggested) == {size}, \"size\");\n"
    ));
    for (m, v) in order.iter().zip(&planned[1..]) {
        let offset = v["offset"].as_u64().unwrap();
        c.push_str(&format!(
            "_Static_assert(offsetof(struct {ty}_suggested, {m}) == {offset}, \"{m}\");\n"
        ));
    }
    let source = temp(&format!("{ty}_suggested.c"));
    std::fs::write(&source, &c).unwrap();
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/src");
    common::cc(
        &[
            "-fsyntax-only".as_ref(),
            "-std=gnu11".as_ref(),
            "-I".as_ref(),
            include.as_os_str(),
            source.as_os_str(),
        ],
        &format!("the compiler disagrees with the plan engine:\n{c}"),
    );
    size
}

#[test]
fn a_struct_of_few_members_is_searched_exhaustively() {
    // struct anon has 4 units: suggest says it tried every order, and no
    // order of the 24, each written as a plan and laid out by `offsetof
    // --plan`, is smaller than its suggestion.
    let base = fixture("gcc-dwarf5-base");
    let b = base.to_str().unwrap();
    let (code, out, err) = suggest_run(&run::suggest_options(&[], &[b]), &["anon"], Format::Json);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["exact"], true);
    let suggested = report["builds"][0]["sizes"][0]["bytes"][1]
        .as_u64()
        .unwrap();
    let names: Vec<String> = UNITS
        .iter()
        .filter(|(t, _, _)| *t == "anon")
        .map(|(_, n, _)| n.to_string())
        .collect();
    assert_eq!(names.len(), 4);
    let mut smallest = u64::MAX;
    let mut orders = 0;
    for p in 0..24usize {
        // The p-th permutation, by the factorial number system.
        let (mut rest, mut k, mut order) = (names.clone(), p, Vec::new());
        for radix in (1..=4).rev() {
            let f: usize = (1..radix).product();
            order.push(rest.remove(k / f));
            k %= f;
        }
        let plan = temp(&format!("anon-{p}.plan.toml"));
        let quoted: Vec<String> = order.iter().map(|n| format!("\"{n}\"")).collect();
        std::fs::write(&plan, format!("[anon]\norder = [{}]\n", quoted.join(", "))).unwrap();
        let (code, out, err) = cachelint(&[
            "offsetof",
            "--format",
            "json",
            "--plan",
            plan.to_str().unwrap(),
            b,
            "anon",
        ]);
        assert_eq!(code, 0, "{err}");
        let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
        smallest = smallest.min(rows[0]["size"].as_u64().unwrap());
        orders += 1;
    }
    assert_eq!(orders, 24);
    assert_eq!(suggested, smallest);
    // More members than that: a climb, not exhaustive.
    assert_eq!(suggest(lru())["exact"], false);
}

#[test]
fn packing_reports_the_least_size_any_order_gives() {
    // struct bits (shapes.h): bitfields of 3, 7, 30, 4, 40 and 30 bits
    // (114) and a char: 122 bits, 16 bytes, already a multiple of its
    // alignment 8. The `unsigned int :0` keeps its run as compiled, so
    // the suggestion need not reach it; it is never below it.
    let base = fixture("gcc-dwarf5-base");
    let build = format!("base={}", base.display());
    let packing = run::suggest_options(&[], &[&build]);
    let (code, out, err) = suggest_run(&packing, &["bits"], Format::Json);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["builds"][0]["least"], 16);
    let suggested = report["builds"][0]["sizes"][0]["bytes"][1]
        .as_u64()
        .unwrap();
    assert!(suggested >= 16, "{suggested}");
    // With rules there is no such figure, and without them no gap.
    assert!(suggest(lru())["builds"][0].get("least").is_none());
    assert!(report["gap"].is_null());
    let (code, text, err) = suggest_run(&packing, &["bits"], Format::Text);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("least any order gives"), "{text}");
}

#[test]
fn packing_only_shrinks_a_struct_with_holes_to_what_the_compiler_gives() {
    // No rules: the struct's size, then members moved. struct anon is
    // int kind (4, align 4); a union of long (8, align 8); struct { char;
    // int; } named (8, align 4); struct { u8 x, y; } (2, align 1): a
    // 4-byte hole after kind and 6 bytes of tail padding, 32 bytes. Packed
    // 8 + 8 + 4 + 2 = 22, rounded to the alignment 8: 24, which no order
    // beats (22 bytes of members). struct aligned (char c; long big
    // aligned(32); char d; aligned(64)) cannot shrink below its own
    // alignment: it stays 64.
    let base = fixture("gcc-dwarf5-base");
    let build = format!("base={}", base.display());
    let plan = temp("packing.plan.toml");
    let packing = run::suggest_options(&[], &[&build]);
    let (code, out, err) = suggest_run(
        &SuggestOptions {
            plan_out: Some(plan.clone()),
            ..packing.clone()
        },
        &["anon", "aligned"],
        Format::Json,
    );
    assert_eq!(code, 0, "{err}");
    let reports: serde_json::Value = serde_json::from_str(&out).unwrap();
    let reports = reports.as_array().expect("several types: an array");
    let t = truth(&base, true);
    for (report, ty, want, attrs) in [
        (&reports[0], "anon", 24, ""),
        (
            &reports[1],
            "aligned",
            64,
            " __attribute__((__aligned__(64)))",
        ),
    ] {
        assert_eq!(report["name"], ty);
        assert_eq!(report["packing"], true);
        // Both reach the least any order gives (computed above).
        assert_eq!(report["builds"][0]["least"], want, "{ty}");
        let sizes = &report["builds"][0]["sizes"];
        assert_eq!(sizes.as_array().unwrap().len(), 1, "{ty}: no roots");
        assert_eq!(
            sizes[0]["bytes"],
            serde_json::json!([t[ty].1, want]),
            "{ty}"
        );
        let order: Vec<String> = report["order"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap().to_owned())
            .collect();
        let mut sorted = order.clone();
        sorted.sort();
        let mut units: Vec<String> = UNITS
            .iter()
            .filter(|(t, _, _)| *t == ty)
            .map(|(_, n, _)| n.to_string())
            .collect();
        units.sort();
        assert_eq!(sorted, units, "{ty}: every unit once");
        assert_eq!(
            compiler_agrees(&base, ty, &order, &plan, attrs),
            want,
            "{ty}"
        );
    }
    assert_eq!(t["anon"].1, 32);
    // The text says what it did.
    let text = suggest_text(&packing, &["anon"]);
    assert!(text.contains("packing only (no rules)"), "{text}");
    assert!(!text.contains("error pairs"), "{text}");
}

#[test]
fn several_types_print_one_report_each_and_a_refused_one_fails() {
    let build = format!("base={}", fixture("gcc-dwarf5-base").display());
    let one = |ty: &str| stdout(&["suggest", &build, ty]);
    let (code, out, err) = cachelint(&["suggest", &build, "anon", "no_such_struct", "aligned"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no_such_struct: refused"), "{err}");
    let reports: Vec<&str> = out.split("\nsuggest struct ").collect();
    assert_eq!(reports.len(), 3, "{out}");
    assert_eq!(untimed(reports[0]), untimed(&one("anon")));
    assert!(reports[1].starts_with("no_such_struct: refused"));
    assert_eq!(
        untimed(&format!("suggest struct {}", reports[2])),
        untimed(&one("aligned"))
    );
}

/// A report without the time its search took (`; searched in 0.01 s`),
/// which differs from run to run.
fn untimed(report: &str) -> String {
    report
        .lines()
        .map(|l| match l.find("; searched in ") {
            Some(at) if l.ends_with(" s") => &l[..at],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn group_markers_keep_their_members_in_packing() {
    // struct grouped: read_mostly { a, b }, then write_hot { counter }
    // aligned to 64: nothing moves out of a group, and no marker moves.
    let build = format!("base={}", fixture("gcc-dwarf5-base").display());
    let (code, out, err) = suggest_run(
        &run::suggest_options(&[], &[&build]),
        &["grouped"],
        Format::Json,
    );
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let order: Vec<&str> = report["order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        [
            "__cacheline_group_begin__read_mostly",
            "a",
            "b",
            "__cacheline_group_end__read_mostly",
            "__cacheline_group_begin__write_hot",
            "counter",
            "__cacheline_group_end__write_hot",
        ]
    );
    assert!(err.contains("group markers"), "{err}");
}

#[test]
fn several_types_read_a_renamed_rules_type_under_its_alias() {
    // One TYPE honoured a rules type's aliases and several did not
    // ("no struct named 'lru_gen_folio_next'"): one path now. The renamed
    // rules are the fixture rules under another name, so every plan must
    // be the one the fixture rules give under the build's own names.
    let b = builds();
    let renamed = run::suggest_options(&[common::renamed_rules("suggest-alias")], &[&b[0]]);
    let own = run::suggest_options(&[rules("lru.toml")], &[&b[0]]);
    let alone = suggest_json(&renamed, &["lru_gen_folio_next"]);
    let both = suggest_json(&renamed, &["lru_gen_folio_next", "lruvec"]);
    let expected = suggest_json(&own, &["lru_gen_folio", "lruvec"]);
    let both = both.as_array().expect("one report per type");
    let expected = expected.as_array().unwrap();
    assert_eq!(both.len(), 2);
    assert_eq!(
        both[0]["name"], "lru_gen_folio",
        "named as the build has it"
    );
    assert_eq!(both[0]["plan"], alone["plan"]);
    for (got, want) in both.iter().zip(expected) {
        assert_eq!(got["name"], want["name"]);
        assert_eq!(got["plan"], want["plan"], "{}", want["name"]);
        assert_eq!(got["builds"], want["builds"], "{}", want["name"]);
    }
}

#[test]
fn the_report_says_how_the_orders_were_searched() {
    // lru_gen_folio (more than 7 units) with rules climbs; struct anon (4
    // units, no markers) is searched exhaustively; struct grouped (group
    // markers) packs without a climb. Only a large struct's climb has a
    // batch.
    let climbed = suggest(lru());
    assert_eq!(climbed["method"], "climb");
    assert!(climbed["rounds"].as_u64().unwrap() > 0);
    assert!(climbed.get("batch").is_none());
    let build = format!("base={}", fixture("gcc-dwarf5-base").display());
    let method = |ty: &str| {
        let (code, out, err) = cachelint(&["suggest", "--format", "json", &build, ty]);
        assert_eq!(code, 0, "{err}");
        let report: serde_json::Value = serde_json::from_str(&out).unwrap();
        (
            report["method"].clone(),
            report["exact"].clone(),
            report["rounds"].clone(),
        )
    };
    assert_eq!(method("anon"), ("exhaustive".into(), true.into(), 0.into()));
    assert_eq!(
        method("grouped"),
        ("compared".into(), false.into(), 0.into())
    );
}
