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
