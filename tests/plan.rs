//! Layout plans against the compiler. The truth is never cachelint's own
//! output: a plan applied to one build must give exactly the offsets and
//! sizes the compiler put in `cachelint_truth[]` of the build compiled
//! with the planned source (fixtures/src/mm_lru.h: LAYOUT_AFTER is RFC
//! patch 3/3, tests/plans/rfc3.toml the same patch as a plan).

mod common;

use std::path::{Path, PathBuf};

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
