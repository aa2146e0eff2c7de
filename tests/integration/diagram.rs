//! `cachelint diagram` on the fixtures: properties checked on every style
//! and width (ASCII, width, byte ranges adding up to the line, fields where
//! the compiler put them), golden outputs reviewed by eye, and the
//! before/after summary against the compiler's sizes.

use std::path::Path;

use crate::common;
use common::{COMPILERS, cachelint, fixture, rules, truth};

fn diagram(build: &str, ty: &str, extra: &[&str]) -> String {
    let rules = rules("lru.toml");
    let mut args = vec!["diagram", "--rules", rules.to_str().unwrap(), build, ty];
    args.extend_from_slice(extra);
    let (code, out, err) = cachelint(&args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

fn build_arg(name: &str) -> String {
    format!("{name}={}", fixture(name).display())
}

/// The blocks of a boxes drawing: (line number, first byte, last byte, text).
fn line_blocks(out: &str) -> Vec<(u64, u64, u64, String)> {
    let mut blocks: Vec<(u64, u64, u64, String)> = Vec::new();
    for l in out.lines() {
        if let Some(rest) = l.strip_prefix("line ")
            && let Some((n, rest)) = rest.split_once(" (")
            && let Some((range, _)) = rest.split_once(')')
            && let Some((a, b)) = range.split_once('-')
        {
            blocks.push((
                n.parse().unwrap(),
                a.parse().unwrap(),
                b.parse().unwrap(),
                String::new(),
            ));
        } else if l.starts_with("summary (") {
            break;
        } else if let Some(last) = blocks.last_mut() {
            last.3.push_str(l);
            last.3.push('\n');
        }
    }
    blocks
}

/// Bytes covered by the cells of every box row of a block: the last
/// content row of a box holds each cell's byte range (`a-b` or `a`) or a
/// hole's size.
fn bytes_in_boxes(block: &str) -> u64 {
    let lines: Vec<&str> = block.lines().collect();
    let mut total = 0;
    for (i, l) in lines.iter().enumerate() {
        let closes_box = l.starts_with('+') && i > 0 && lines[i - 1].starts_with('|');
        if !closes_box {
            continue;
        }
        for cell in lines[i - 1]
            .split('|')
            .map(str::trim)
            .filter(|c| !c.is_empty())
        {
            let first = cell.split_whitespace().next().unwrap();
            total += match first.split_once('-') {
                Some((a, b)) => b.parse::<u64>().unwrap() - a.parse::<u64>().unwrap() + 1,
                None => first.parse::<u64>().map_or_else(
                    |_| panic!("{cell:?} in\n{block}"),
                    |n| {
                        // a single byte offset ends in a class letter; a hole's size does not
                        if cell.len() > first.len() { 1 } else { n }
                    },
                ),
            };
        }
    }
    total
}

#[test]
fn every_style_and_width_stays_ascii_within_the_width() {
    for build in ["gcc-dwarf5-base", "clang-dwarf4-rt", "gcc-dwarf5-after"] {
        let b = build_arg(build);
        for width in ["40", "56", "72", "100"] {
            for style in ["boxes", "strip", "table"] {
                for ty in ["mem_cgroup_per_node", "lru_gen_folio", "pglist_data"] {
                    let out = diagram(&b, ty, &["--style", style, "--width", width]);
                    let w: usize = width.parse().unwrap();
                    for line in out.lines() {
                        assert!(line.is_ascii(), "{build} {ty} {style}: {line}");
                        assert!(line.len() <= w, "{build} {ty} {style} width {w}: {line:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn byte_ranges_in_each_line_add_up_to_the_line() {
    for build in ["gcc-dwarf5-base", "gcc-dwarf5-after", "clang-dwarf5-rt"] {
        let b = build_arg(build);
        for width in ["40", "72"] {
            let out = diagram(
                &b,
                "mem_cgroup_per_node",
                &["--style", "boxes", "--lines", "0-28", "--width", width],
            );
            let blocks = line_blocks(&out);
            assert_eq!(blocks.len(), 29);
            for (line, first, last, text) in blocks {
                assert_eq!(
                    bytes_in_boxes(&text),
                    last - first + 1,
                    "{build} line {line}:\n{text}"
                );
            }
        }
    }
}

#[test]
fn the_fields_of_the_thread_are_drawn_on_the_lines_the_compiler_put_them() {
    for cc in COMPILERS {
        for cfg in ["base", "rt", "after"] {
            let name = format!("{cc}-{cfg}");
            let t = truth(&fixture(&name), true);
            let out = diagram(
                &build_arg(&name),
                "mem_cgroup_per_node",
                &["--around", "refaulted"],
            );
            let blocks = line_blocks(&out);
            for field in ["refaulted", "enabled", "list"] {
                let (offset, size) = t[&format!("mem_cgroup_per_node.lruvec.lrugen.{field}")];
                for (line, first, last, text) in &blocks {
                    let overlaps = offset <= *last && offset + size > *first;
                    if overlaps {
                        assert!(
                            text.contains(&format!(" {field} "))
                                || text.contains(&format!(" {field},"))
                                || text.contains(&format!(", {field} ")),
                            "{name}: {field} ({offset}+{size}) missing from line {line}:\n{text}"
                        );
                    }
                }
            }
            // refaulted's own lines are all drawn.
            let (offset, size) = t["mem_cgroup_per_node.lruvec.lrugen.refaulted"];
            for line in offset / 64..=(offset + size - 1) / 64 {
                assert!(blocks.iter().any(|b| b.0 == line), "{name}: line {line}");
            }
        }
    }
}

#[test]
fn the_comparison_explains_the_size_change_with_the_compilers_sizes() {
    let before = build_arg("gcc-dwarf5-base");
    let after = build_arg("gcc-dwarf5-after");
    let out = diagram(
        &before,
        "mem_cgroup_per_node",
        &["--around", "refaulted", "--compare", &after],
    );
    let (tb, ta) = (
        truth(&fixture("gcc-dwarf5-base"), true),
        truth(&fixture("gcc-dwarf5-after"), true),
    );
    let summary: String = out
        .split("summary (")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for ty in ["mem_cgroup_per_node", "lruvec"] {
        let (a, b) = (tb[ty].1, ta[ty].1);
        let lines = b.div_ceil(64) as i64 - a.div_ceil(64) as i64;
        let unit = if lines.abs() == 1 { "line" } else { "lines" };
        let want = format!(
            "{ty} {a} -> {b} ({:+} bytes, {lines:+} {unit})",
            b as i64 - a as i64
        );
        assert!(summary.contains(&want), "{want}\n{summary}");
    }
    assert!(
        summary.contains("fixed: false-sharing refaulted / enabled, gen, seg, list"),
        "{summary}"
    );
}

/// Golden outputs, reviewed by eye against the fixture's layout (pahole and
/// the compiler's offsets agree with it) and against the hand-drawn
/// diagram of the mm thread. Regenerate with CACHELINT_BLESS=1 and review
/// the diff by eye before committing.
#[test]
fn golden_diagrams() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let before = build_arg("gcc-dwarf5-base");
    let after = build_arg("gcc-dwarf5-after");
    let cases: Vec<(&str, Vec<&str>)> = vec![
        (
            "before-after-boxes.txt",
            vec![
                &before,
                "mem_cgroup_per_node",
                "--around",
                "refaulted",
                "--compare",
                &after,
            ],
        ),
        (
            "after-lru_gen_folio-strip.txt",
            vec![&after, "lru_gen_folio", "--style", "strip"],
        ),
        (
            "before-around-enabled-table.md",
            vec![
                &before,
                "mem_cgroup_per_node",
                "--around",
                "enabled",
                "--style",
                "table",
                "--format",
                "markdown",
            ],
        ),
    ];
    for (file, args) in cases {
        let out = diagram(args[0], args[1], &args[2..]);
        // Paths of the fixture files differ between machines: only labels are printed.
        let path = dir.join(file);
        if std::env::var_os("CACHELINT_BLESS").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &out).unwrap();
        }
        let want =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(out, want, "{file}");
    }
}

#[test]
fn mistakes_are_one_line_errors() {
    let rules = rules("lru.toml");
    let rules = rules.to_str().unwrap();
    let base = fixture("gcc-dwarf5-base");
    let base = base.to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (
            &[
                "diagram",
                "--rules",
                rules,
                base,
                "mem_cgroup_per_node",
                "--around",
                "refaultd",
            ],
            "has no field 'refaultd'; did you mean 'refaulted'",
        ),
        (
            &[
                "diagram",
                "--rules",
                rules,
                base,
                "mem_cgroup_per_node",
                "--lines",
                "3-99",
            ],
            "--lines 3-99: struct mem_cgroup_per_node has lines 0-28",
        ),
        (
            &["diagram", "--rules", rules, base, "mem_cgroup_per_nod"],
            "no struct, union or typedef named 'mem_cgroup_per_nod'",
        ),
        (
            &["diagram", "--rules", rules, base, "lruvec", "--width", "20"],
            "20 is not in 40..=1000",
        ),
        (
            &["diagram", "--rules", rules, base, "lruvec", "--lines", "x"],
            "'x' is not a line range",
        ),
        (
            &[
                "diagram", "--rules", rules, base, "lruvec", "--lines", "5-3",
            ],
            "--lines 5-3: the range is reversed: write --lines 3-5",
        ),
    ];
    for (args, want) in cases {
        let (code, out, err) = cachelint(args);
        assert_eq!(code, 2, "{args:?}");
        assert!(out.is_empty(), "{args:?}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn every_field_of_a_line_appears_in_its_box() {
    // The table lists one row per field and line; each of those fields must
    // be named in the box of that line, at any width.
    for build in ["gcc-dwarf5-base", "clang-dwarf5-after"] {
        let b = build_arg(build);
        let table = diagram(
            &b,
            "mem_cgroup_per_node",
            &["--style", "table", "--lines", "0-28", "--width", "200"],
        );
        for width in ["40", "72"] {
            let boxes = diagram(
                &b,
                "mem_cgroup_per_node",
                &["--style", "boxes", "--lines", "0-28", "--width", width],
            );
            let blocks = line_blocks(&boxes);
            for row in table
                .lines()
                .filter(|l| l.starts_with("| ") && !l.starts_with("| field"))
            {
                let cells: Vec<&str> = row.split('|').map(str::trim).collect();
                let (field, line) = (cells[1], cells[3].parse::<u64>().unwrap());
                if field.starts_with('(') {
                    continue; // holes and padding
                }
                let name = field.split('[').next().unwrap();
                let block = &blocks.iter().find(|b| b.0 == line).unwrap().3;
                let words: Vec<&str> = block
                    .split(|c: char| c.is_whitespace() || c == '|' || c == ',')
                    .collect();
                assert!(
                    words.contains(&name),
                    "{build} width {width}: {name} missing from line {line}:\n{block}"
                );
            }
        }
    }
}

#[test]
fn bitfields_sharing_a_byte_are_all_drawn_in_every_style() {
    // Hand computation (as in fixtures.rs, bitfields_are_placed_as_the_abi_says):
    // a:3 is bits 0-2 (byte 0) and b:7 bits 3-9 (bytes 0-1); d:4 is bits
    // 64-67 (byte 8) and e:40 bits 68-107 (bytes 8-13). The rules make a and
    // d lockless-write, b and e hot-read: bytes 0 and 8 hold both classes.
    let rules = rules("bits.toml");
    let rules = rules.to_str().unwrap();
    for build in ["gcc-dwarf5-base", "clang-dwarf4-base"] {
        let b = build_arg(build);
        let draw = |style: &str| {
            let args = ["diagram", "--rules", rules, &b, "bits", "--style", style];
            let (code, out, err) = cachelint(&args);
            assert_eq!(code, 0, "{args:?}: {err}");
            out
        };
        let boxes = draw("boxes");
        let words: Vec<&str> = boxes
            .split(|c: char| c.is_whitespace() || c == '|' || c == ',')
            .collect();
        for field in ["a", "b", "c", "d", "e", "f"] {
            assert!(words.contains(&field), "{build}: {field} missing:\n{boxes}");
        }
        let table = draw("table");
        let rows: Vec<Vec<&str>> = table
            .lines()
            .filter(|l| l.starts_with("| "))
            .map(|l| l.split('|').map(str::trim).collect())
            .collect();
        for (field, bytes, class) in [
            ("a", "0", "lockless-write"),
            ("b", "0-1", "hot-read"),
            ("d", "8", "lockless-write"),
            ("e", "8-13", "hot-read"),
        ] {
            assert!(
                rows.iter()
                    .any(|r| r[1] == field && r[2] == bytes && r[4] == class),
                "{build}: no row {field} {bytes} {class}:\n{table}"
            );
        }
        // One character per byte: a writer shares bytes 0 and 8, so both are W;
        // bytes 9-13 are e's alone.
        let strip = draw("strip");
        let row = strip.lines().find(|l| l.starts_with("   0 |")).unwrap();
        let cells = &row["   0 |".len()..];
        assert_eq!(&cells[0..1], "W", "{build}:\n{strip}");
        assert_eq!(&cells[8..9], "W", "{build}:\n{strip}");
        assert_eq!(&cells[9..14], "RRRRR", "{build}: e alone\n{strip}");
    }
}

/// A markdown table is pasted into a review: no cell may be wrapped into
/// continuation rows, however narrow `--width` (text tables still wrap).
/// `lruvec_stats_percpu` (19 characters, `fixtures/src/mm_lru.h`) does not
/// fit a four-column table 40 wide.
#[test]
fn markdown_tables_keep_every_cell_on_one_line() {
    let base = fixture("gcc-dwarf5-base");
    let out = diagram(
        base.to_str().unwrap(),
        "mem_cgroup_per_node",
        &[
            "--style", "table", "--format", "markdown", "--width", "40", "--lines", "0-0",
        ],
    );
    let rows: Vec<Vec<&str>> = out
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|-"))
        .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
        .collect();
    assert_eq!(rows[0], ["field", "bytes", "line", "class"], "{out}");
    // Line 0 of the struct: every row is on it, none a continuation.
    for row in &rows[1..] {
        assert_eq!(row[2], "0", "{out}");
    }
    assert!(rows.iter().any(|r| r[0] == "lruvec_stats_percpu"), "{out}");
}
