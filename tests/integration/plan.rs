//! Layout plans against the compiler. The truth is never cachelint's own
//! output: a plan applied to one build must give exactly the offsets and
//! sizes the compiler put in `cachelint_truth[]` of the build compiled
//! with the planned source (fixtures/src/mm_lru.h: LAYOUT_AFTER is RFC
//! patch 3/3, tests/plans/rfc3.toml the same patch as a plan).

use std::path::{Path, PathBuf};

use crate::common;
use common::run;
use common::{COMPILERS, cachelint, fixture, truth_lines, truth_values};

fn plan(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/plans")
        .join(name)
}

/// Every truth.def path of `base` laid out by `plan` equals the
/// compiler's value in `compiled`.
fn assert_planned_equals_compiled(base: &str, plan_file: &Path, compiled: &str) {
    let lines = truth_lines(true);
    let values = truth_values(&fixture(compiled));
    assert_eq!(
        values.len(),
        lines.len() * 2,
        "{compiled}: truth.def and the binary disagree"
    );
    let paths: Vec<String> = lines.iter().map(|l| l.path.clone()).collect();
    let rows = run::offsetof_planned(&fixture(base), &paths, plan_file)
        .unwrap_or_else(|e| panic!("{base}: {e}"));
    let mut checked = 0;
    for (i, (line, row)) in lines.iter().zip(&rows).enumerate() {
        assert_eq!(
            row["offset"],
            values[2 * i],
            "{base} planned vs {compiled}: offsetof({})",
            line.path
        );
        if line.has_size {
            assert_eq!(
                row["size"],
                values[2 * i + 1],
                "{base} planned vs {compiled}: sizeof({})",
                line.path
            );
        }
        checked += 1;
    }
    assert!(checked > 30, "{checked} rows");
}

#[test]
fn the_rfc3_plan_gives_the_compiled_rfc3_layout_for_every_compiler_and_config() {
    for cc in COMPILERS {
        for (base, after) in [("base", "after"), ("rt", "rt-after")] {
            assert_planned_equals_compiled(
                &format!("{cc}-{base}"),
                &plan("rfc3.toml"),
                &format!("{cc}-{after}"),
            );
        }
    }
}

#[test]
fn the_rfc3_plan_on_cross_targets_keeps_the_compiled_identity() {
    // The cross objects have no RFC 3/3 twin; the plan that restates the
    // compiled order must give back every compiled offset.
    for target in ["i386", "aarch64", "s390x", "powerpc64"] {
        let file = format!("clang-{target}-base.o");
        assert_planned_equals_compiled(&file, &plan("identity.toml"), &file);
    }
}

#[test]
fn a_planned_layout_says_it_is_planned() {
    let (code, out, err) = cachelint(&[
        "layout",
        "--plan",
        plan("rfc3.toml").to_str().unwrap(),
        fixture("gcc-dwarf5-base").to_str().unwrap(),
        "lru_gen_folio",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("__cacheline_group_begin__lrugen_stats")
            || out.contains("cacheline group lrugen_stats")
    );
    assert!(err.contains("not compiled"), "{err}");
    assert!(out.starts_with("/* planned by "), "{out}");
    let rows = run::offsetof_planned(
        &fixture("gcc-dwarf5-base"),
        &["lruvec".into()],
        &plan("rfc3.toml"),
    )
    .unwrap();
    assert!(
        rows[0]["planned_by"]
            .as_str()
            .unwrap()
            .ends_with("rfc3.toml")
    );
    let rows = run::offsetof_json(&fixture("gcc-dwarf5-base"), &["lruvec".into()]).unwrap();
    assert!(rows[0]["planned_by"].is_null());
}

/// fixtures/src/variants.plans.toml: per variant, the plan that turns a
/// base struct into it and the labels of its `cachelint_truth[]` values.
#[derive(serde::Deserialize)]
struct Manifest {
    truth_len: usize,
    smp_cache_bytes: u64,
    variant: Vec<Variant>,
}

#[derive(serde::Deserialize)]
struct Variant {
    name: String,
    truth_start: usize,
    rows: Vec<String>,
    plan: String,
}

/// The offsetof path a truth row label asks about, and whether the row
/// is the size (`#size`) rather than the offset. `#align` rows have no
/// path: offsetof does not print alignments (the outer struct's offsets
/// test them).
fn row_query(label: &str) -> Option<(&str, bool)> {
    match label.split_once('#') {
        Some((path, "size")) => Some((path, true)),
        Some(_) => None,
        None => Some((label, false)),
    }
}

#[test]
fn five_hundred_planned_variants_equal_the_compilers_layouts_on_every_target() {
    use rayon::prelude::*;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/src");
    let manifest: Manifest =
        toml::from_str(&std::fs::read_to_string(dir.join("variants.plans.toml")).unwrap()).unwrap();
    let planned = manifest
        .variant
        .iter()
        .filter(|v| !v.plan.trim().is_empty())
        .count();
    assert!(planned >= 500, "{planned} planned variants");
    let binaries = [
        "gcc-dwarf4",
        "gcc-dwarf5",
        "clang-dwarf4",
        "clang-dwarf5",
        "clang-i386",
        "clang-aarch64",
        "clang-s390x",
        "clang-powerpc64",
    ];
    let tmp = std::env::temp_dir().join(format!("cachelint-variants-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let failures: Vec<String> = binaries
        .par_iter()
        .flat_map(|bin| {
            let file = fixture(&format!("variants-{bin}.o"));
            let values = truth_values(&file);
            assert_eq!(values.len(), manifest.truth_len, "{bin}");
            manifest
                .variant
                .par_iter()
                .filter_map(|v| {
                    let queries: Vec<(usize, &str, bool)> = v
                        .rows
                        .iter()
                        .enumerate()
                        .filter_map(|(i, r)| row_query(r).map(|(p, s)| (i, p, s)))
                        .collect();
                    let paths: Vec<String> =
                        queries.iter().map(|(_, p, _)| p.to_string()).collect();
                    let rows = if v.plan.trim().is_empty() {
                        run::offsetof_json(&file, &paths)
                    } else {
                        let plan_file = tmp.join(format!("{bin}-{}.toml", v.name));
                        // variants.c is built with SMP_CACHE_BYTES 64 on every target.
                        let text =
                            format!("smp_cache_bytes = {}\n{}", manifest.smp_cache_bytes, v.plan);
                        std::fs::write(&plan_file, text).unwrap();
                        run::offsetof_planned(&file, &paths, &plan_file)
                    };
                    let rows = match rows {
                        Ok(rows) => rows,
                        Err(e) => return Some(format!("{bin} {}: {e}", v.name)),
                    };
                    for ((i, path, size), row) in queries.iter().zip(&rows) {
                        let want = values[v.truth_start + i];
                        let key = if *size { "size" } else { "offset" };
                        if row[key] != want {
                            return Some(format!(
                                "{bin} {}: {key} of {path}: planned {}, compiled {want}",
                                v.name, row[key]
                            ));
                        }
                    }
                    None
                })
                .collect::<Vec<_>>()
        })
        .collect();
    std::fs::remove_dir_all(&tmp).ok();
    assert!(
        failures.is_empty(),
        "{} of {} variant layouts differ from the compiler's:\n{}",
        failures.len(),
        manifest.variant.len() * binaries.len(),
        failures[..failures.len().min(40)].join("\n")
    );
}

#[test]
fn moves_adds_and_removes_lay_out_as_computed_by_hand() {
    // tests/plans/moves.toml on struct lruvec of fixtures/src/mm_lru.h
    // (x86_64, CONFIG_LRU_GEN, spinlock_t 4 bytes), computed by hand:
    // flags 0-7, lists[5] 8-87, lru_lock 88-91, 4 bytes hole, batch 96,
    // anon_cost 104, (file_cost removed) nonresident_age 112, refaults[2]
    // 120-135, lrugen (8-aligned, 1344 bytes) 136, pgdat 1480, size 1488.
    let want = [
        ("lruvec.flags", 0),
        ("lruvec.lists", 8),
        ("lruvec.lru_lock", 88),
        ("lruvec.batch", 96),
        ("lruvec.anon_cost", 104),
        ("lruvec.nonresident_age", 112),
        ("lruvec.refaults", 120),
        ("lruvec.lrugen", 136),
        ("lruvec.pgdat", 1480),
        ("lruvec", 0),
    ];
    let paths: Vec<String> = want.iter().map(|(p, _)| p.to_string()).collect();
    let rows =
        run::offsetof_planned(&fixture("gcc-dwarf5-base"), &paths, &plan("moves.toml")).unwrap();
    for ((path, offset), row) in want.iter().zip(&rows) {
        assert_eq!(row["offset"], *offset, "{path}");
    }
    assert_eq!(rows[3]["type"], "struct lru_gen_folio *");
    assert_eq!(rows[9]["size"], 1488);
    let gone = run::offsetof_planned(
        &fixture("gcc-dwarf5-base"),
        &["lruvec.file_cost".into()],
        &plan("moves.toml"),
    );
    assert!(gone.is_err(), "a removed member is gone");
}

/// Each bad plan is refused with exit 2 and one located line.
#[test]
fn bad_plans_are_located_errors() {
    let dir = std::env::temp_dir().join(format!("cachelint-bad-plans-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases: &[(&str, &str, &str)] = &[
        (
            "[lruvec]\norder = [\"lists\", \"lru_lok\"]\n",
            ":2:19: struct lruvec has no member 'lru_lok'",
            "did you mean 'lru_lock'",
        ),
        (
            "[lruvec]\norder = [\"lists\", \"lru_lock\"]\n",
            ":1:2: the order of struct lruvec leaves out 'anon_cost'",
            "remove = [...]",
        ),
        (
            "[lruvec]\nmoves = [{ member = \"flags\", after = \"flags\" }]\n",
            ":2:",
            "moved next to itself",
        ),
        (
            "[lruvec]\nmoves = [{ member = \"flags\", after = \"lists\" }, { member = \"flags\", before = \"lists\" }]\n",
            ":2:",
            "'flags' is named twice",
        ),
        (
            "[lruvecc]\norder = []\n",
            ":1:2: no struct, union or typedef named 'lruvecc'",
            "did you mean 'lruvec'",
        ),
        (
            "[lruvec]\nmoves = [{ add = \"x\", type = \"struct nosuch\", after = \"flags\" }]\n",
            ":2:",
            "has no type 'struct nosuch'",
        ),
        (
            "[lruvec]\nmoves = [{ add = \"flags\", type = \"long\", after = \"lists\" }]\n",
            ":2:",
            "'flags' is a member already",
        ),
        (
            "[lruvec]\nmoves = [{ member = \"flags\", after = \"lists\" }]\nremove = [\"lists\"]\n",
            ":2:",
            "'lists' is removed",
        ),
        (
            "[lruvec]\norder = \"lists\"\n",
            ":2:9: 'order' must be an array",
            "",
        ),
        (
            "[lruvec]\nordre = []\n",
            ":2:1: unknown key 'ordre'",
            "order, moves",
        ),
        ("[lruvec\n", ":1:", "invalid TOML"),
    ];
    for (i, (text, at, also)) in cases.iter().enumerate() {
        let file = dir.join(format!("bad{i}.toml"));
        std::fs::write(&file, text).unwrap();
        let (code, out, err) = cachelint(&[
            "layout",
            "--plan",
            file.to_str().unwrap(),
            fixture("gcc-dwarf5-base").to_str().unwrap(),
            "lruvec",
        ]);
        assert_eq!(code, 2, "{text}: {err}");
        assert!(out.is_empty(), "{text}");
        let want = format!("cachelint: error: {}{at}", file.display());
        assert!(
            err.starts_with(&want) && err.contains(also),
            "{text}\nwant {want} ... {also}\ngot  {err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    // Not TOML text at all, and a missing file.
    let bin = fixture("gcc-dwarf5-base");
    let (code, _, err) = cachelint(&[
        "layout",
        "--plan",
        bin.to_str().unwrap(),
        bin.to_str().unwrap(),
        "lruvec",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("not a plan file"), "{err}");
    let (code, _, err) = cachelint(&[
        "layout",
        "--plan",
        "/nonexistent/p.toml",
        bin.to_str().unwrap(),
        "lruvec",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/p.toml"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bitfield_runs_anonymous_members_and_flexible_arrays_move_by_their_rules() {
    // fixtures/src/shapes.h: struct bits is one run of bitfields a..f,
    // struct anon holds an anonymous union (as_long, lo, hi, bytes),
    // struct arrays ends in the flexible array flex[].
    let dir = std::env::temp_dir().join(format!("cachelint-shape-plans-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases: &[(&str, &str, &str)] = &[
        (
            "[bits]\norder = [\"tail\", \"a\", \"b\"]\n",
            "bits",
            "'b' and 'a' move as one",
        ),
        (
            "[bits]\norder = [\"tail\", { member = \"c\", align = 8 }]\n",
            "bits",
            "'c' is a bitfield",
        ),
        (
            "[anon]\norder = [\"lo\", \"kind\", \"as_long\", \"named\", \"x\"]\n",
            "anon",
            "'as_long' and 'lo' move as one",
        ),
        (
            "[arrays]\norder = [\"flex\", \"c\", \"grid\", \"chain\", \"zero\"]\n",
            "arrays",
            "flexible array 'flex' must stay the last",
        ),
    ];
    for (i, (text, ty, want)) in cases.iter().enumerate() {
        let file = dir.join(format!("shape{i}.toml"));
        std::fs::write(&file, text).unwrap();
        let (code, _, err) = cachelint(&[
            "layout",
            "--plan",
            file.to_str().unwrap(),
            fixture("gcc-dwarf5-base").to_str().unwrap(),
            ty,
        ]);
        assert_eq!(code, 2, "{text}: {err}");
        assert!(err.contains(want), "{text}: {err}");
    }
    // Named once, a run and an anonymous union move whole: the run after
    // tail, the union first (its members keep their offsets in it).
    let file = dir.join("ok.toml");
    std::fs::write(
        &file,
        "[bits]\norder = [\"tail\", \"d\"]\n[anon]\norder = [\"hi\", \"kind\", \"named\", \"y\"]\n",
    )
    .unwrap();
    let rows = run::offsetof_planned(
        &fixture("gcc-dwarf5-base"),
        &[
            "bits.tail".into(),
            "bits".into(),
            "bits.a".into(),
            "bits.f".into(),
            "anon.as_long".into(),
            "anon.lo".into(),
            "anon.hi".into(),
            "anon.kind".into(),
        ],
        &file,
    )
    .unwrap();
    // By hand, by the System V bitfield rule: tail at 0; a at bit 8 (it
    // fits the int unit after tail), b at 11, c at 32 (the ':0' in the
    // source is invisible in DWARF, but c would not fit 18-31 anyway), d
    // at 64, e at 68, f at 128 (e's unit is full): 158 bits, size 24.
    // The union is 8 bytes at 0 (lo at 0, hi at 2 inside it), kind at 8.
    assert_eq!(rows[0]["offset"], 0);
    assert_eq!(rows[1]["size"], 24);
    assert_eq!(rows[2]["bit_offset"], 8);
    assert_eq!(rows[3]["bit_offset"], 128);
    assert_eq!(rows[4]["offset"], 0);
    assert_eq!(rows[5]["offset"], 0);
    assert_eq!(rows[6]["offset"], 2);
    assert_eq!(rows[7]["offset"], 8);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_move_can_be_placed_next_to_a_member_an_earlier_move_added() {
    // fixtures/src/mm_lru.h, x86_64: lru_lock (4 bytes) at 80 leaves a
    // 4-byte hole before anon_cost at 88. x (u32) fills it at 84; y, a
    // pointer after x, goes at 88, and anon_cost moves to 96. By hand.
    let dir = std::env::temp_dir().join(format!("cachelint-anchor-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("p.toml");
    std::fs::write(
        &file,
        "[lruvec]\nmoves = [\n  { add = \"x\", type = \"u32\", after = \"lru_lock\" },\n  \
         { add = \"y\", type = \"struct lruvec *\", after = \"x\" },\n]\n",
    )
    .unwrap();
    let paths: Vec<String> = ["lruvec.x", "lruvec.y", "lruvec.anon_cost"]
        .map(String::from)
        .into();
    let rows = run::offsetof_planned(&fixture("gcc-dwarf5-base"), &paths, &file).unwrap();
    let offsets: Vec<u64> = rows.iter().map(|r| r["offset"].as_u64().unwrap()).collect();
    assert_eq!(offsets, [84, 88, 96]);
    std::fs::remove_dir_all(&dir).ok();
}

/// `optional = [...]`: one plan over the members of every config. The
/// identity order of lruvec over base (which has `lrugen`, under
/// `CONFIG_LRU_GEN`) and nolrugen (which lacks it), `lrugen` optional,
/// must give back the compiler's own offsets and sizes on both; without
/// `optional` the absent name is refused, and a misspelt name still is.
#[test]
fn an_optional_member_is_skipped_on_a_build_that_lacks_it() {
    let dir = std::env::temp_dir().join(format!("cachelint-optional-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let members = "\"lists\", \"lru_lock\", \"anon_cost\", \"file_cost\", \"nonresident_age\", \
                   \"refaults\", \"flags\", \"lrugen\", \"pgdat\"";
    let identity = dir.join("identity.toml");
    std::fs::write(
        &identity,
        format!("[lruvec]\noptional = [\"lrugen\"]\norder = [{members}]\n"),
    )
    .unwrap();
    for cc in COMPILERS {
        for (config, lru_gen) in [("base", true), ("nolrugen", false)] {
            let build = format!("{cc}-{config}");
            let lines = truth_lines(lru_gen);
            let values = truth_values(&fixture(&build));
            assert_eq!(values.len(), lines.len() * 2, "{build}");
            let paths: Vec<String> = lines.iter().map(|l| l.path.clone()).collect();
            let rows = run::offsetof_planned(&fixture(&build), &paths, &identity)
                .unwrap_or_else(|e| panic!("{build}: {e}"));
            for (i, (line, row)) in lines.iter().zip(&rows).enumerate() {
                assert_eq!(row["offset"], values[2 * i], "{build}: {}", line.path);
                if line.has_size {
                    assert_eq!(row["size"], values[2 * i + 1], "{build}: {}", line.path);
                }
            }
        }
    }
    let refused = |text: &str, build: &str, want: &str| {
        let file = dir.join("bad.toml");
        std::fs::write(&file, text).unwrap();
        let (code, _, err) = cachelint(&[
            "layout",
            "--plan",
            file.to_str().unwrap(),
            fixture(build).to_str().unwrap(),
            "lruvec",
        ]);
        assert_eq!(code, 2, "{text}: {err}");
        assert!(err.contains(want), "{text}\nwant {want}\ngot  {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    };
    refused(
        &format!("[lruvec]\norder = [{members}]\n"),
        "gcc-dwarf5-nolrugen",
        ":2:97: struct lruvec has no member 'lrugen'",
    );
    refused(
        &format!(
            "[lruvec]\noptional = [\"lrugen\"]\norder = [{}]\n",
            members.replace("\"flags\"", "\"flgas\"")
        ),
        "gcc-dwarf5-nolrugen",
        "has no member 'flgas'; did you mean 'flags'",
    );
    refused(
        "[lruvec]\noptional = [\"lrugen\", \"lrugen\"]\norder = []\n",
        "gcc-dwarf5-base",
        ":2:23: 'lrugen' is optional twice",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `layout --macros` writes C: the fixture's `grouped` as compiled and as
/// a plan regroups it (an aligned group, whose end macro declares the
/// pad), printed, given the kernel's macros (include/linux/cache.h's,
/// with SMP_CACHE_BYTES 64), compiled by the host's C compiler, and read
/// back: the compiler's offsets and size are the ones printed.
#[test]
fn layout_with_macros_is_c_the_compiler_lays_out_as_printed() {
    let dir = std::env::temp_dir().join(format!("cachelint-macros-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("regroup.toml");
    std::fs::write(
        &plan,
        "[grouped]\nremove = [\"__cacheline_group_begin__read_mostly\", \
         \"__cacheline_group_end__read_mostly\", \"__cacheline_group_begin__write_hot\", \
         \"__cacheline_group_end__write_hot\"]\n\
         order = [\"a\", { group = \"hot\", aligned = true, members = [\"counter\"] }, \"b\"]\n",
    )
    .unwrap();
    let base = fixture("gcc-dwarf5-base");
    let base = base.to_str().unwrap();
    for (name, extra) in [
        ("compiled", vec![]),
        ("planned", vec!["--plan", plan.to_str().unwrap()]),
    ] {
        let mut args = vec!["layout", "--macros", base, "grouped"];
        args.extend(extra);
        let (code, printed, err) = cachelint(&args);
        assert_eq!(code, 0, "{err}");
        let macros = [
            "__cacheline_group_begin(read_mostly);",
            "__cacheline_group_begin_aligned(write_hot);",
        ];
        match name {
            "compiled" => assert!(macros.iter().all(|m| printed.contains(m)), "{printed}"),
            _ => assert!(
                printed.contains("__cacheline_group_begin_aligned(hot);")
                    && printed.contains("__cacheline_group_end_aligned(hot);")
                    && !printed.contains("__cacheline_group_pad__"),
                "{printed}"
            ),
        }
        // The C as printed (comments dropped), renamed so it is a new type.
        let body: String = printed
            .lines()
            .filter(|l| !l.starts_with("/*"))
            .map(|l| l.split("/*").next().unwrap())
            .collect::<Vec<_>>()
            .join("\n")
            .replace("struct grouped {", "struct grouped_c {");
        let c = dir.join(format!("{name}.c"));
        std::fs::write(
            &c,
            format!(
                "typedef unsigned char __u8;\n\
                 #define SMP_CACHE_BYTES 64\n\
                 #define __cacheline_group_begin(G) __u8 __cacheline_group_begin__##G[0]\n\
                 #define __cacheline_group_end(G) __u8 __cacheline_group_end__##G[0]\n\
                 #define __cacheline_group_begin_aligned(G, ...) __cacheline_group_begin(G) \
                 __attribute__((__aligned__((__VA_ARGS__ + 0) ? : SMP_CACHE_BYTES)))\n\
                 #define __cacheline_group_end_aligned(G, ...) __cacheline_group_end(G) \
                 __attribute__((__aligned__(sizeof(long)))); struct {{ }} \
                 __cacheline_group_pad__##G \
                 __attribute__((__aligned__((__VA_ARGS__ + 0) ? : SMP_CACHE_BYTES)))\n\
                 {body}\nstruct grouped_c cachelint_grouped;\n"
            ),
        )
        .unwrap();
        let object = dir.join(format!("{name}.o"));
        common::cc(
            &[
                "-g".as_ref(),
                "-c".as_ref(),
                "-o".as_ref(),
                object.as_os_str(),
                c.as_os_str(),
            ],
            &format!("{name}: the printed C does not build"),
        );
        // Offsets as printed, and as the compiler laid them out.
        let offsets = |text: &str| -> Vec<String> {
            text.lines()
                .filter_map(|l| l.split_once("/*").map(|(_, c)| c.trim().to_owned()))
                .filter(|c| c.chars().next().is_some_and(|ch| ch.is_ascii_digit()))
                .collect()
        };
        let (code, compiled, err) =
            cachelint(&["layout", "--macros", object.to_str().unwrap(), "grouped_c"]);
        assert_eq!(code, 0, "{err}");
        let size = |text: &str| {
            text.lines()
                .find(|l| l.contains("/* size:"))
                .map(str::to_owned)
        };
        assert_eq!(
            offsets(&compiled),
            offsets(&printed),
            "{name}:\n{printed}\n{compiled}"
        );
        assert_eq!(size(&compiled), size(&printed), "{name}");
        assert!(offsets(&printed).len() >= 5);
    }
    std::fs::remove_dir_all(dir).unwrap();
}
