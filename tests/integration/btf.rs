//! BTF input on the fixtures: BTF that pahole encoded from a fixture's
//! DWARF, as a `.BTF` section without DWARF, as a raw file, and as split
//! BTF on top of a base. Offsets are checked against the compiler's
//! `offsetof`, sizes against `pahole -F btf --sizes`.

use crate::common;
use crate::common::run::CheckOptions;
use cachelint::commands::Source;
use common::run::{self, Format};
use common::{cachelint, expected, fixture, truth, truth_lines};
use serde_json::Value;

#[test]
fn btf_offsets_equal_offsetof() {
    for (btf, source_of_truth) in [
        ("gcc-btf-base", "gcc-dwarf5-base"),
        ("gcc-btf-base.raw", "gcc-dwarf5-base"),
        ("gcc-btf-rt", "gcc-dwarf5-rt"),
    ] {
        let t = truth(&fixture(source_of_truth), true);
        // pahole's BTF encoder flattens int a[2][3] into a[6] (BTF has no
        // dimensions of its own), so paths indexing several dimensions are
        // not expressible; bitfield paths have no sizeof in the truth.
        let paths: Vec<String> = truth_lines(true)
            .into_iter()
            .filter(|l| l.path.contains('.') && l.path.matches('[').count() < 2)
            .map(|l| l.path)
            .collect();
        let out = run::offsetof(&fixture(btf), &paths, Format::Json, None, &Source::Auto)
            .unwrap_or_else(|e| panic!("{btf}: {e}"));
        assert!(
            out.notes.iter().any(|n| n.starts_with("types from BTF")),
            "{btf}"
        );
        let rows: Value = serde_json::from_str(&out.stdout).unwrap();
        for (row, path) in rows.as_array().unwrap().iter().zip(&paths) {
            let (offset, size) = t[path];
            assert_eq!(row["offset"], offset, "{btf}: offsetof({path})");
            if row["bit_size"].is_null() {
                assert_eq!(row["size"], size, "{btf}: sizeof({path})");
            }
            assert!(row["decl_file"].is_null(), "BTF has no source lines");
        }
    }
}

#[test]
fn btf_sizes_equal_paholes() {
    for (args, reference) in [
        (
            vec![
                "sizes".into(),
                fixture("gcc-btf-base").to_str().unwrap().to_owned(),
            ],
            "gcc-btf-base.btf.sizes",
        ),
        (
            vec![
                "sizes".into(),
                fixture("gcc-btf-base.raw").to_str().unwrap().to_owned(),
            ],
            "gcc-btf-base.btf.sizes",
        ),
        (
            vec![
                "sizes".into(),
                fixture("gcc-btf-rt").to_str().unwrap().to_owned(),
            ],
            "gcc-btf-rt.btf.sizes",
        ),
        (
            vec![
                "sizes".into(),
                "--btf-base".into(),
                fixture("gcc-btf-base.raw").to_str().unwrap().to_owned(),
                fixture("gcc-btf-rt-split.raw").to_str().unwrap().to_owned(),
            ],
            "gcc-btf-rt-split.btf.sizes",
        ),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = cachelint(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert_eq!(out, expected(reference), "{args:?}");
    }
}

#[test]
fn a_modules_split_btf_shows_its_own_layout_first() {
    let base = fixture("gcc-btf-base.raw");
    let split = fixture("gcc-btf-rt-split.raw");
    let out = run::offsetof(
        &split,
        &["lruvec.lru_lock".into()],
        Format::Json,
        None,
        &Source::Btf { base: Some(base) },
    )
    .unwrap();
    let rows: Value = serde_json::from_str(&out.stdout).unwrap();
    let (_, rt_size) = truth(&fixture("gcc-dwarf5-rt"), true)["lruvec.lru_lock"];
    assert_eq!(rows[0]["size"], rt_size);
    assert_eq!(rt_size, 32);
}

#[test]
fn sources_are_chosen_and_refused_clearly() {
    let btf_only = fixture("gcc-btf-base");
    let dwarf_only = fixture("gcc-dwarf5-base");
    let (code, _, err) = cachelint(&[
        "layout",
        "--source",
        "dwarf",
        btf_only.to_str().unwrap(),
        "lruvec",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("no DWARF debug info"), "{err}");
    let (code, _, err) = cachelint(&[
        "layout",
        "--source",
        "btf",
        dwarf_only.to_str().unwrap(),
        "lruvec",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("no .BTF section"), "{err}");
    let (code, _, err) = cachelint(&["layout", btf_only.to_str().unwrap(), "lruvc"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean 'lruvec'"), "{err}");
    let (code, _, err) = cachelint(&["layout", btf_only.to_str().unwrap(), "lruvec@mm_lru.h"]);
    assert_eq!(code, 2);
    assert!(err.contains("BTF records no source files"), "{err}");
}

#[test]
fn every_truncation_of_raw_btf_is_an_error_or_a_result() {
    let data = std::fs::read(fixture("gcc-btf-base.raw")).unwrap();
    let dir = std::env::temp_dir().join(format!("cachelint-btf-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cut.raw");
    for cut in (0..data.len()).step_by(7) {
        std::fs::write(&path, &data[..cut]).unwrap();
        let r = run::sizes(&path, &Source::Btf { base: None });
        if let Err(e) = r {
            assert!(!e.to_string().is_empty());
        }
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// `.BTF` in an ELF file cut anywhere: the section headers end the file
/// (`readelf -h`: 31 of 64 bytes from 18200, the file's 20184 bytes), so
/// every cut says the file is truncated.
#[test]
fn every_truncation_of_an_elf_with_btf_says_truncated() {
    let data = std::fs::read(fixture("gcc-btf-base")).unwrap();
    let dir = std::env::temp_dir().join(format!("cachelint-btf-elf-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cut");
    for cut in (1..data.len()).step_by(61) {
        std::fs::write(&path, &data[..cut]).unwrap();
        let err = run::sizes(&path, &Source::Btf { base: None })
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains(": truncated: "), "cut at {cut}: {err}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn check_from_btf_finds_what_check_from_dwarf_finds() {
    // The BTF was encoded from the DWARF of the same build; with the
    // cacheline_padding alignment known, every finding agrees (array
    // elements are numbered flat in BTF, so parts are compared as bytes).
    let rules = common::rules("lru.toml");
    let check = |config: &str, file: &str, source: Source| {
        let out = run::check(
            &CheckOptions {
                reading: source.into(),
                ..run::check_options(std::slice::from_ref(&rules), &[(config, &fixture(file))])
            },
            Format::Json,
        )
        .unwrap();
        let report: cachelint::report::Report = serde_json::from_str(&out.stdout).unwrap();
        report
            .findings
            .iter()
            .map(|f| {
                (
                    f.root.clone(),
                    f.kind,
                    f.a.path.clone(),
                    f.b.path.clone(),
                    f.cacheline,
                    f.a.bytes,
                    f.b.bytes,
                )
            })
            .collect::<std::collections::BTreeSet<_>>()
    };
    for (btf, dwarf) in [
        ("gcc-btf-base", "gcc-dwarf5-base"),
        ("gcc-btf-rt", "gcc-dwarf5-rt"),
    ] {
        let from_btf = check("b", btf, Source::Btf { base: None });
        assert!(!from_btf.is_empty());
        assert_eq!(from_btf, check("d", dwarf, Source::Dwarf), "{btf}");
    }
}

/// `offsets` on raw BTF and on a `.BTF` section: every offset and size
/// from the compiler's `offsetof`/`sizeof` of the build pahole encoded
/// the BTF from.
#[test]
fn offsets_read_btf() {
    let truths = [
        truth(&fixture("gcc-dwarf5-base"), true),
        truth(&fixture("gcc-dwarf5-rt"), true),
    ];
    // BTF flattens multi-dimensional arrays (see btf_offsets_equal_offsetof).
    let mut paths: Vec<String> = Vec::new();
    for l in truth_lines(true) {
        if l.has_size
            && l.path.starts_with("mem_cgroup_per_node.")
            && l.path.matches('[').count() < 2
            && !paths.contains(&l.path)
        {
            paths.push(l.path);
        }
    }
    for (base, rt, extra) in [
        ("gcc-btf-base.raw", "gcc-btf-rt.raw", None),
        ("gcc-btf-base", "gcc-btf-rt", Some("--source=btf")),
    ] {
        let builds = [
            format!("base={}", fixture(base).display()),
            format!("rt={}", fixture(rt).display()),
        ];
        let mut args: Vec<&str> = vec!["offsets", "--format", "json"];
        args.extend(extra);
        args.extend(builds.iter().map(String::as_str));
        args.extend(paths.iter().map(String::as_str));
        let (code, out, err) = cachelint(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(
            err.contains("note: [rt] types from BTF: no source files"),
            "{err}"
        );
        let rows: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(rows.as_array().unwrap().len(), paths.len());
        for (row, path) in rows.as_array().unwrap().iter().zip(&paths) {
            for (i, t) in truths.iter().enumerate() {
                let (offset, size) = t[path];
                let cell = &row["builds"][i];
                assert_eq!(cell["offset"], offset, "{base}: {path}");
                assert_eq!(cell["size"], size, "{base}: {path}");
            }
        }
    }
}

/// `diff` between two raw BTF files: the size change of each struct is
/// the compiler's, and its explanation adds up to it.
#[test]
fn diff_reads_btf() {
    let (a, b) = (
        truth(&fixture("gcc-dwarf5-base"), true),
        truth(&fixture("gcc-dwarf5-rt"), true),
    );
    let (code, out, err) = cachelint(&[
        "diff",
        "--format",
        "json",
        &format!("base={}", fixture("gcc-btf-base.raw").display()),
        &format!("rt={}", fixture("gcc-btf-rt.raw").display()),
        "mem_cgroup_per_node",
        "lruvec",
    ]);
    assert_eq!(code, 1, "{err}");
    // Both builds are BTF: the note is told once, for both.
    assert!(err.contains("note: [base, rt] types from BTF"), "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    for t in report["types"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        let d = &t["diff"];
        assert_eq!(
            d["size"],
            serde_json::json!([a[name].1, b[name].1]),
            "{name}"
        );
        let top = common::top_level_delta(d);
        assert_eq!(top, b[name].1 as i64 - a[name].1 as i64, "{name}: {d}");
    }
}

/// Every member's type, as C spells it, is the same from BTF as from the
/// DWARF pahole encoded it from: `void` included (BTF id 0), which once
/// came out as the first BTF type (`void *` as `long unsigned int *`).
/// Multi-dimensional arrays are the one difference: BTF flattens them.
/// (BTF writes `a[0]` and a flexible `a[]` alike; a count-0 array where C
/// allows a flexible one is read as one, as pahole prints it.)
#[test]
fn btf_member_types_equal_dwarfs() {
    let dwarf = fixture("gcc-dwarf5-base");
    let sizes = run::sizes(&dwarf, &Source::Dwarf).unwrap().stdout;
    let mut names: Vec<String> = sizes
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_owned())
        .collect();
    names.sort();
    names.dedup();
    let members = |file: &std::path::Path, source: Source| -> Vec<(String, String)> {
        run::layout_json(file, &names, true, &source)
            .iter()
            .flat_map(|t| t["members"].as_array().unwrap().clone())
            .map(|m| {
                (
                    format!("{}+{}", m["path"].as_str().unwrap(), m["offset"]),
                    m["type"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect()
    };
    let from_dwarf = members(&dwarf, Source::Dwarf);
    let from_btf = members(&fixture("gcc-btf-base"), Source::Btf { base: None });
    assert_eq!(from_dwarf.len(), from_btf.len());
    let mut compared = 0;
    for ((path, d), (btf_path, b)) in from_dwarf.iter().zip(&from_btf) {
        assert_eq!(path, btf_path);
        if d.matches('[').count() > 1 {
            continue;
        }
        assert_eq!(d, b, "{path}");
        compared += 1;
    }
    assert!(compared > 100, "{compared} members compared");
    assert!(from_dwarf.iter().any(|(_, t)| t == "void (*)(void)"));
}

/// Split BTF on the wrong base is refused, not read under the base's
/// names: the rt build's split BTF was encoded on the base build, and the
/// rt build's own BTF is a base of other strings.
#[test]
fn split_btf_on_the_wrong_base_is_refused() {
    let split = fixture("gcc-btf-rt-split.raw");
    let split = split.to_str().unwrap();
    let right = fixture("gcc-btf-base.raw");
    let (code, _, err) = cachelint(&["sizes", "--btf-base", right.to_str().unwrap(), split]);
    assert_eq!(code, 0, "{err}");
    let wrong = fixture("gcc-btf-rt.raw");
    let (code, out, err) = cachelint(&["sizes", "--btf-base", wrong.to_str().unwrap(), split]);
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("split BTF does not fit its base"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// fixtures/src/shapes.h: `struct aligned { char c; long big
/// __aligned__(32); char d; } __aligned__(64)`. DWARF records both
/// attributes; BTF records none, and the offsets show big's (32: the
/// largest power of two up to the line that puts it at 32 after byte 1)
/// but not the struct's (64 bytes are 32-aligned already), which is then
/// taken from its members. Computed by hand from the source.
#[test]
fn alignment_attributes_are_printed_from_dwarf_and_inferred_from_btf() {
    let text = |file: &str| {
        run::layout(
            &fixture(file),
            &["aligned".into()],
            false,
            Format::Text,
            None,
            &Source::Auto,
        )
        .unwrap()
        .stdout
    };
    for dwarf in [
        "gcc-dwarf4-base",
        "gcc-dwarf5-base",
        "clang-dwarf4-base",
        "clang-dwarf5-base",
    ] {
        let out = text(dwarf);
        assert!(
            out.contains("big __attribute__((__aligned__(32))); /*    32     8 */"),
            "{dwarf}:\n{out}"
        );
        assert!(
            out.contains("/* forced alignments: 1, forced holes: 1, sum forced holes: 31 */"),
            "{dwarf}:\n{out}"
        );
        assert!(
            out.ends_with("} __attribute__((__aligned__(64)));\n"),
            "{dwarf}:\n{out}"
        );
    }
    let out = text("gcc-btf-base.raw");
    assert!(
        out.contains("big __attribute__((__aligned__(32))); /*    32     8 */"),
        "{out}"
    );
    assert!(
        out.contains("/* forced alignments: 1, forced holes: 1, sum forced holes: 31 */"),
        "{out}"
    );
    assert!(
        out.ends_with("} __attribute__((__aligned__(32)));\n"),
        "{out}"
    );
    let json = run::layout_json(
        &fixture("gcc-btf-base.raw"),
        &["aligned".into()],
        false,
        &Source::Auto,
    );
    assert_eq!(json[0]["alignment"], 32);
}

/// SARIF's location of each result: the file's name and the line.
fn locations(doc: &Value) -> Vec<Option<(String, u64)>> {
    doc["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let at = &r["locations"][0]["physicalLocation"];
            let uri = at["artifactLocation"]["uri"].as_str()?;
            let name = uri.rsplit('/').next().unwrap().to_owned();
            Some((name, at["region"]["startLine"].as_u64()?))
        })
        .collect()
}

#[test]
fn with_the_source_tree_btf_findings_are_located_where_the_compiler_says() {
    let lru = common::rules("lru.toml").display().to_string();
    let sarif = |args: &[&str]| -> Value {
        let mut all = vec!["check", "--format", "sarif", "--rules", lru.as_str()];
        all.extend(args);
        let (code, out, err) = cachelint(&all);
        assert_eq!(code, 1, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let btf = fixture("gcc-btf-base").display().to_string();
    let dwarf = fixture("gcc-dwarf5-base").display().to_string();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/src");
    let without = locations(&sarif(&[&btf]));
    assert!(
        without.iter().all(Option::is_none),
        "BTF records no source lines"
    );
    let located = locations(&sarif(&[&btf, "--source-tree", src.to_str().unwrap()]));
    // The compiler's own lines for the same findings: the DWARF build of
    // the same source.
    let compiler = locations(&sarif(&[&dwarf]));
    assert!(!located.is_empty());
    assert_eq!(located, compiler);
}
