//! A struct whose members live in one anonymous struct (6.12 mm_struct's
//! shape, issue 29 §3), on `fixtures/src/wrapper.c`: a plan of the
//! anonymous member (`["mm_like.base"]`) against the compiler's layout of
//! the same order (`wrapper-reordered.o`, built with -DREORDERED), and
//! suggest ordering the members where they live.

use crate::common;
use common::{cachelint, fixture, rules};

fn plan(name: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/plans")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn a_plan_of_the_anonymous_member_is_the_compilers_layout_of_that_order() {
    let base = fixture("wrapper.o").display().to_string();
    let reordered = fixture("wrapper-reordered.o").display().to_string();
    let p = plan("wrapper.toml");
    let (code, planned, err) = cachelint(&["layout", "--expand", "--plan", &p, &base, "mm_like"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("struct mm_like.base 128 -> 128 bytes (planned)"),
        "{err}"
    );
    let (code, compiled, err) = cachelint(&["layout", "--expand", &reordered, "mm_like"]);
    assert_eq!(code, 0, "{err}");
    let planned: Vec<&str> = planned
        .lines()
        .filter(|l| !l.contains("planned by"))
        .collect();
    assert_eq!(planned, compiled.lines().collect::<Vec<_>>());
}

#[test]
fn an_anonymous_member_no_struct_has_or_an_unquoted_key_is_a_located_error() {
    let base = fixture("wrapper.o").display().to_string();
    let dir = std::env::temp_dir().join(format!("cachelint-wrapper-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (text, want) in [
        (
            "[\"mm_like.nosuch\"]\norder = [\"count\"]\n",
            "p.toml:1:2: struct mm_like has no anonymous struct or union holding 'nosuch'",
        ),
        (
            "[mm_like.base]\norder = [\"count\"]\n",
            "the plan of the anonymous struct or union of mm_like holding 'base' is \
             [\"mm_like.base\"], quoted",
        ),
        (
            "[\"mm_like.\"]\norder = [\"count\"]\n",
            "is not a struct name",
        ),
    ] {
        let p = dir.join("p.toml");
        std::fs::write(&p, text).unwrap();
        let (code, _, err) =
            cachelint(&["layout", "--plan", p.to_str().unwrap(), &base, "mm_like"]);
        assert_eq!(code, 2, "{text}: {err}");
        assert!(err.contains(want), "{text}: {err}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn suggest_orders_the_members_inside_the_wrapper_and_says_so() {
    // users (LW, 4 bytes at 72) shares line 1 with pgd and flag (HR): two
    // errors as compiled. Inside the wrapper they can part; as the one
    // member of mm_like the wrapper itself could not move anything.
    let base = fixture("wrapper.o").display().to_string();
    let r = rules("wrapper.toml").display().to_string();
    let (code, out, err) = cachelint(&[
        "suggest", "--rules", &r, "--format", "json", &base, "mm_like",
    ]);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["name"], "mm_like.base");
    assert!(
        err.contains("every member of struct mm_like lives in one anonymous struct"),
        "{err}"
    );
    let text = report["plan"].as_str().unwrap();
    assert!(text.starts_with("[\"mm_like.base\"]\n"), "{text}");
    assert_eq!(report["builds"][0]["errors"][0], 2);
    assert_eq!(report["builds"][0]["errors"][1], 0, "{out}");
    // The plan it prints is one check --plan reads: no error left there.
    let dir = std::env::temp_dir().join(format!("cachelint-wrapper-s-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("s.toml");
    std::fs::write(&p, text).unwrap();
    let (code, out, err) = cachelint(&[
        "check",
        "--rules",
        &r,
        "--plan",
        p.to_str().unwrap(),
        "--format",
        "json",
        &base,
    ]);
    assert_eq!(code, 0, "{err}");
    let checked: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(checked["summary"]["errors"], 0, "{out}");
    std::fs::remove_dir_all(dir).unwrap();
}
