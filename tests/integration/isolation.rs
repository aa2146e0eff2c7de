//! The author's isolation is kept (issue 29 §2), on
//! `fixtures/src/isolation.c` under `tests/rules/isolation.toml`. Every
//! expectation is reasoned by hand from the C source (LP64, 64-byte
//! lines), never pasted from cachelint's output.

use crate::common;
use common::run::{self as cli, Format};
use common::{fixture, rules};

/// `suggest --format json` of `types` on isolation.o, with `unpin`
/// (`--unpin-aligned`) and `rank`: the reports.
fn suggest(types: &[&str], unpin: bool, rank: Option<&str>) -> Vec<serde_json::Value> {
    let file = fixture("isolation.o");
    let build = format!("iso={}", file.display());
    let mut opts = cli::suggest_options(&[rules("isolation.toml")], &[&build]);
    opts.unpin_aligned = unpin;
    opts.rank = rank.map(str::to_owned);
    let (code, out, err) = cli::as_binary(cli::suggest(&opts, types, Format::Json));
    assert_eq!(code, 0, "{err}");
    // One type's report is an object, several a list.
    match serde_json::from_str(&out).unwrap() {
        serde_json::Value::Array(list) => list,
        one => vec![one],
    }
}

fn order(report: &serde_json::Value) -> Vec<String> {
    report["order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let m = m.as_str().unwrap();
            // A group entry, `G (aligned): a, b`, lists its members.
            m.rsplit(": ").next().unwrap().to_owned()
        })
        .flat_map(|m| m.split(", ").map(str::to_owned).collect::<Vec<_>>())
        .collect()
}

fn notes(report: &serde_json::Value) -> String {
    report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The members of page_counter in the C source, by the segment the two
/// CACHELINE_PADDING members cut: before _pad1_, between, after _pad2_.
const SEGMENTS: [&[&str]; 3] = [
    &["usage"],
    &[
        "emin",
        "min_usage",
        "children_min_usage",
        "elow",
        "low_usage",
        "children_low_usage",
        "watermark",
        "local_watermark",
        "failcnt",
    ],
    &["protection_support", "min", "low", "high", "max", "parent"],
];

#[test]
fn padding_and_aligned_members_stay_and_nothing_crosses_them() {
    let reports = suggest(&["page_counter", "mm_head"], false, None);
    let (pc, mm) = (&reports[0], &reports[1]);
    let o = order(pc);
    let at = |name: &str| o.iter().position(|m| m == name).unwrap();
    let (p1, p2) = (at("_pad1_"), at("_pad2_"));
    for (segment, members) in SEGMENTS.iter().enumerate() {
        for m in *members {
            let inside = match segment {
                0 => at(m) < p1,
                1 => p1 < at(m) && at(m) < p2,
                _ => p2 < at(m),
            };
            assert!(inside, "{m} left its segment: {o:?}");
        }
    }
    let n = notes(pc);
    assert!(
        n.contains("_pad1_ (CACHELINE_PADDING), _pad2_ (CACHELINE_PADDING)")
            && n.contains("--unpin-aligned"),
        "{n}"
    );
    // mm_count is declared ____cacheline_aligned_in_smp: flags stays
    // before it, map_count and total_vm after.
    let o = order(mm);
    let at = |name: &str| o.iter().position(|m| m == name).unwrap();
    assert!(at("flags") < at("mm_count"), "{o:?}");
    assert!(at("mm_count") < at("map_count") && at("mm_count") < at("total_vm"));
    assert!(
        notes(mm).contains("mm_count (aligned(64))"),
        "{}",
        notes(mm)
    );
}

#[test]
fn unpinned_the_aligned_member_lets_its_reader_go_and_the_error_with_it() {
    // mm_count (LW) at 64 shares its line with map_count (HR) at 68: one
    // error. Free to move, map_count fits on line 0 after flags (8 + 4
    // bytes), and mm_count, aligned, starts line 1 alone with total_vm
    // (not in the rules): no error, no growth.
    let reports = suggest(&["mm_head"], true, None);
    let o = order(&reports[0]);
    let at = |name: &str| o.iter().position(|m| m == name).unwrap();
    assert!(at("map_count") < at("mm_count"), "{o:?}");
    let b = &reports[0]["builds"][0];
    assert_eq!(b["errors"], serde_json::json!([1, 0]));
    let sizes = &b["sizes"][0]["bytes"];
    assert_eq!(sizes, &serde_json::json!([128, 128]));
}

#[test]
fn the_default_order_is_never_worse_than_compiled_on_any_severity() {
    for unpin in [false, true] {
        for r in suggest(&["page_counter", "mm_head"], unpin, None) {
            for b in r["builds"].as_array().unwrap() {
                let counts =
                    |i: usize| ["errors", "warnings", "notes"].map(|k| b[k][i].as_u64().unwrap());
                assert!(
                    counts(1) <= counts(0),
                    "{} (unpin {unpin}): {:?} -> {:?}",
                    r["name"],
                    counts(0),
                    counts(1)
                );
            }
        }
    }
}
