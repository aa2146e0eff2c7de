//! Evidence on genuine perf output: fixtures/perf/ring.c recorded with perf
//! 7.3 (fixtures/perf/record.sh). perf's offsets are held against pahole's
//! layout of the same binary (fixtures/perf/pahole.txt), and the draft
//! against the design written at the top of ring.c (reviewed by eye).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cachelint::evidence::perf::{Format, Op, PerfFile};

use crate::common::cachelint;

fn perf_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/perf")
}

fn file(name: &str) -> String {
    perf_dir().join(name).display().to_string()
}

/// pahole's members of the fixture's structs: (struct, offset) → (name, size).
fn pahole() -> HashMap<(String, u64), (String, u64)> {
    let text = std::fs::read_to_string(perf_dir().join("pahole.txt")).unwrap();
    let mut out = HashMap::new();
    let mut current = String::new();
    for line in text.lines() {
        if let Some(name) = line
            .strip_prefix("struct ")
            .and_then(|l| l.strip_suffix(" {"))
        {
            current = format!("struct {name}");
            continue;
        }
        let Some((decl, comment)) = line.split_once("/*") else {
            continue;
        };
        let numbers: Vec<u64> = comment
            .trim_end_matches("*/")
            .split_whitespace()
            .filter_map(|n| n.parse().ok())
            .collect();
        let Some(name) = decl.trim().trim_end_matches(';').split_whitespace().last() else {
            continue;
        };
        if let [offset, size] = numbers[..] {
            out.insert((current.clone(), offset), (name.to_owned(), size));
        }
    }
    assert!(out.len() >= 9, "pahole.txt has the members: {out:?}");
    out
}

#[test]
fn every_attributed_field_and_offset_is_the_fixtures_dwarf() {
    let members = pahole();
    let mut checked = 0;
    for (name, format) in [
        ("report-typeoff.txt", Format::Report),
        ("report-typeoff-n.txt", Format::Report),
        ("annotate-type.txt", Format::AnnotateType),
        ("code-with-type.txt", Format::CodeWithType),
    ] {
        let perf = PerfFile::read(&perf_dir().join(name)).unwrap();
        assert_eq!(perf.format, format, "{name}");
        // `annotate --data-type` does not say which event it counts.
        let events: &[&str] = match format {
            Format::AnnotateType => &[],
            _ => &["cpu-clock"],
        };
        assert_eq!(perf.events, events, "{name}");
        assert!(!perf.precise(), "cpu-clock is a software event");
        assert!(!perf.samples.is_empty(), "{name}");
        for s in &perf.samples {
            let field = s.field.as_deref().expect("typed rows name a member");
            let top = field.split('.').next().unwrap();
            // The member of pahole's layout that holds the offset.
            let (name_at, _) = members
                .iter()
                .filter(|((ty, off), (_, size))| {
                    *ty == s.ty && *off <= s.offset && s.offset < off + size
                })
                .map(|(_, m)| m.clone())
                .next()
                .unwrap_or_else(|| {
                    panic!(
                        "{name}:{}: {} +{:#x} is in no member",
                        s.line, s.ty, s.offset
                    )
                });
            assert_eq!(name_at, top, "{name}:{}: {} +{:#x}", s.line, s.ty, s.offset);
            checked += 1;
        }
    }
    assert!(checked > 40, "{checked} rows checked");
}

#[test]
fn code_with_type_tells_loads_stores_and_locked_updates_per_function() {
    let perf = PerfFile::read(&perf_dir().join("code-with-type.txt")).unwrap();
    let ops = |function: &str, field: &str| -> Vec<Op> {
        let mut v: Vec<Op> = perf
            .samples
            .iter()
            .filter(|s| {
                s.function.as_deref() == Some(function) && s.field.as_deref() == Some(field)
            })
            .filter_map(|s| s.op)
            .collect();
        v.sort();
        v.dedup();
        v
    };
    // From ring.c: produce() loads and stores head, consume() tail; both
    // lock-add events; produce() adds to drops (under the mutex, which
    // the instruction cannot tell).
    assert_eq!(ops("produce", "head"), [Op::Load, Op::Store]);
    assert_eq!(ops("consume", "tail"), [Op::Load, Op::Store]);
    assert_eq!(ops("produce", "tail"), []);
    assert_eq!(ops("consume", "head"), []);
    assert_eq!(ops("produce", "events.counter"), [Op::Locked]);
    assert_eq!(ops("consume", "events.counter"), [Op::Locked]);
    assert_eq!(ops("produce", "drops"), [Op::Update]);
    assert_eq!(ops("produce", "mask"), [Op::Load]);
}

/// The rule lines of a draft, comments dropped.
fn rules_of(draft: &str) -> Vec<String> {
    draft
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split("  #").next().unwrap().trim().to_owned())
        .collect()
}

fn draft_ring() -> String {
    let (code, out, err) = cachelint(&[
        "draft",
        "--perf",
        &file("code-with-type.txt"),
        "--perf",
        &file("report-typeoff.txt"),
        "--source-tree",
        &file(""),
        &file("ring"),
        "ring",
    ]);
    assert_eq!(code, 0, "{err}");
    out
}

#[test]
fn the_draft_of_the_ring_is_its_design_with_evidence() {
    let out = draft_ring();
    assert_eq!(
        rules_of(&out),
        [
            "[contexts]",
            "consume = \"serialized\"",
            "produce = \"serialized\"",
            "[ring]",
            "head = { write = [\"produce\"] }",
            "tail = { write = [\"consume\"] }",
            "mask = { read = [\"consume\", \"produce\"] }",
            "events = \"lockless-write\"",
            "drops = { class = \"lock-protected\", lock = \"lock\" }",
            "lock = \"lock\"",
            "cells = { read = [\"consume\", \"produce\"] }",
            // Heat (ring.c): the fast-path functions touching each (main
            // reads head, tail, drops and events at the end); no kernel
            // entry point reaches them, so their callers (producer,
            // consumer) do not count; ring_init is an initialiser, and
            // cells is only indexed by address there.
            "[heat.ring]",
            "head = 2",
            "tail = 2",
            "mask = 2",
            "events = 3",
            "drops = 2",
            "lock = 1",
        ],
        "{out}"
    );
    // Each class says what backs it, and where.
    for expected in [
        "# head: declared: WRITE_ONCE in produce (ring.c:",
        "# head: measured: store in produce,",
        "# events: measured: locked update in consume,",
        "# events: inferred: its type is atomic_long_t",
        "# drops: declared: assigned in produce (ring.c:",
        "with &r->lock held (pthread_mutex_lock())",
        "# lock: declared: taken with pthread_mutex_lock() in produce",
        "# mask: declared: written in initialisation, by name in ring_init: not counted",
        "# mask: declared: read in 2 functions: in consume (ring.c:75), in produce (ring.c:57)",
        "cpu-clock: not precise, samples skid",
    ] {
        assert!(out.contains(expected), "{expected}\n{out}");
    }
    assert!(
        out.contains("head = { write = [\"produce\"] }  # declared"),
        "{out}"
    );
    assert!(
        out.contains("mask = { read = [\"consume\", \"produce\"] }  # measured"),
        "{out}"
    );
}

#[test]
fn the_draft_loads_in_check_and_the_two_writers_are_a_cross_context_pair() {
    let dir = tempfile_dir();
    let rules = dir.join("ring.toml");
    std::fs::write(&rules, draft_ring()).unwrap();
    let (code, out, err) = cachelint(&["check", "--rules", rules.to_str().unwrap(), &file("ring")]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("warning: [ring] cacheline 0 of ring is written in consume, produce"),
        "{out}"
    );
    assert!(
        out.contains("    consume writes 'tail'\n    produce writes 'head'"),
        "{out}"
    );
    assert!(
        out.contains(
            "error: [ring] lockless-write 'events' shares cacheline 0 of ring with hot-read 'mask'"
        ),
        "{out}"
    );
}

fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cachelint-evidence-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn check_puts_samples_on_findings_ranks_by_them_and_notes_contradicted_rules() {
    let dir = tempfile_dir();
    let rules = dir.join("hand.toml");
    std::fs::write(
        &rules,
        "[ring]\nhead = \"lockless-write\"\ntail = \"lockless-write\"\nmask = \"hot-read\"\ndrops = \"hot-read\"\n",
    )
    .unwrap();
    let rules = rules.to_str().unwrap();
    let perf = file("report-typeoff-n.txt");
    let (code, out, err) = cachelint(&[
        "check",
        "--rules",
        rules,
        "--perf",
        &perf,
        "--perf",
        &file("code-with-type.txt"),
        "--rank",
        "samples",
        &file("ring"),
    ]);
    assert_eq!(code, 1, "{err}");
    // The exact count of mask's samples as perf -n printed it, plus the
    // loads --code-with-type counted (shares of each function's samples).
    let mask_row = std::fs::read_to_string(&perf)
        .unwrap()
        .lines()
        .find(|l| l.contains("(mask)"))
        .map(|l| l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap())
        .unwrap();
    let first = out.lines().next().unwrap();
    assert!(first.contains("'mask'"), "mask is the hottest: {out}");
    let mask_line = out
        .lines()
        .find(|l| l.contains("hot-read       mask"))
        .unwrap();
    let n: u64 = mask_line
        .split(", ")
        .find_map(|p| p.strip_suffix(" samples"))
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        n > mask_row,
        "{n} samples on mask, the report alone has {mask_row}"
    );
    assert!(
        err.contains("hand.toml:5:1: [ring] 'drops' is ruled hot-read, but perf saw it written: update in produce"),
        "{err}"
    );
    let (code, _, err) = cachelint(&[
        "check",
        "--rules",
        rules,
        "--rank",
        "samples",
        &file("ring"),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--rank samples needs samples"), "{err}");
}

#[test]
fn rows_that_do_not_fit_the_build_are_located_notes_and_text_that_is_not_perf_is_refused() {
    let dir = tempfile_dir();
    let report = dir.join("other.txt");
    std::fs::write(
        &report,
        "# Samples: 1K of event 'cpu-clock'\n# Overhead  Data Type  Data Type Offset\n#\n\
         \x20   10.00%  struct ring  struct ring +0x8 (head)\n\
         \x20   5.00%  struct ring  struct ring +0x400 (far)\n",
    )
    .unwrap();
    let (code, _, err) = cachelint(&[
        "draft",
        "--perf",
        report.to_str().unwrap(),
        &file("ring"),
        "ring",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "other.txt:4: perf names 'head' at struct ring +0x8, this build has 'tail' there"
        ),
        "{err}"
    );
    assert!(
        err.contains("other.txt:5: struct ring +0x400 is past its end"),
        "{err}"
    );
    let (code, _, err) = cachelint(&["draft", "--perf", &file("ring.c"), &file("ring"), "ring"]);
    assert_eq!(code, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("ring.c: not a perf output cachelint reads"),
        "{err}"
    );
}

/// The share perf's report printed for `field` of struct ring.
fn report_share(field: &str) -> String {
    std::fs::read_to_string(perf_dir().join("report-typeoff.txt"))
        .unwrap()
        .lines()
        .find(|l| l.ends_with(&format!("({field})")))
        .map(|l| l.split_whitespace().next().unwrap().to_owned())
        .unwrap()
}

/// Each row of `layout`'s ring (`out`) ends with the share perf's report
/// printed for its member.
fn assert_rows_show_the_reports_shares(out: &str) {
    for field in ["head", "tail", "mask", "drops", "cells"] {
        let row = out
            .lines()
            .find(|l| l.contains(&format!(" {field};")))
            .unwrap();
        let expected = format!("*/ /* perf: {} of all samples */", report_share(field));
        assert!(row.ends_with(&expected), "{row}\n{expected}");
    }
}

#[test]
fn layout_diagram_and_footprint_show_the_shares_perf_printed() {
    let report = file("report-typeoff.txt");
    let (code, out, err) = cachelint(&["layout", "--perf", &report, &file("ring"), "ring"]);
    assert_eq!(code, 0, "{err}");
    // The event and how far to trust it, said once.
    assert!(
        err.contains(
            "report-typeoff.txt: perf report -s type,typeoff; cpu-clock: not precise, samples skid"
        ),
        "{err}"
    );
    assert_rows_show_the_reports_shares(&out);
    // events is perf's events.counter: the member's share is its own.
    let events = out.lines().find(|l| l.contains(" events;")).unwrap();
    assert!(events.contains(&report_share("events.counter")), "{events}");

    let dir = tempfile_dir();
    let rules = dir.join("ring-diagram.toml");
    std::fs::write(&rules, draft_ring()).unwrap();
    let rules = rules.to_str().unwrap();
    let diagram = |more: &[&str]| {
        let mut args = vec![
            "diagram", "--rules", rules, "--perf", &report, "--lines", "0",
        ];
        let ring = file("ring");
        args.extend([ring.as_str(), "ring"]);
        args.extend(more);
        let (code, out, err) = cachelint(&args);
        assert_eq!(code, 0, "{err}");
        out
    };
    let out = diagram(&["--style", "table"]);
    let mask = out.lines().find(|l| l.starts_with("| mask")).unwrap();
    assert!(
        mask.contains(&format!("{} of all samples", report_share("mask"))),
        "{out}"
    );
    let out = diagram(&[]);
    assert!(
        out.contains(&format!(
            "measured by perf:\n    head: {} of all samples",
            report_share("head")
        )),
        "{out}"
    );

    let (code, out, err) = cachelint(&[
        "footprint",
        "--rules",
        rules,
        "--perf",
        &file("report-typeoff-n.txt"),
        &file("ring"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("| samples |"), "{out}");
    // consume's fields are tail, mask and cells: their counts in the -n
    // report, summed.
    let counts: u64 = std::fs::read_to_string(perf_dir().join("report-typeoff-n.txt"))
        .unwrap()
        .lines()
        .filter(|l| {
            ["(tail)", "(mask)", "(cells)"]
                .iter()
                .any(|f| l.ends_with(f))
        })
        .map(|l| l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    let consume = out.lines().find(|l| l.contains("| consume ")).unwrap();
    assert!(
        consume.contains(&format!("| {counts} ")),
        "{consume}: {counts}"
    );

    let (code, _, err) = cachelint(&["offsets", "--perf", &report, &file("ring"), "ring.head"]);
    assert_eq!(code, 2);
    assert!(err.contains("unexpected argument '--perf'"), "{err}");
}

/// The rules of the ring's design (the top of ring.c), written by hand.
const RING_RULES: &str = "[contexts]\nconsume = \"serialized\"\nproduce = \"serialized\"\n\
    [ring]\nhead = { write = [\"produce\"] }\ntail = { write = [\"consume\"] }\n\
    mask = { read = [\"consume\", \"produce\"] }\nevents = \"lockless-write\"\n\
    drops = { class = \"lock-protected\", lock = \"lock\" }\nlock = \"lock\"\n\
    cells = { read = [\"consume\", \"produce\"] }\n";

/// The samples perf's `-n` report counts on each member of struct ring,
/// by the member perf names (`events.counter` is `events`).
fn counted() -> HashMap<String, u64> {
    let mut out = HashMap::new();
    for line in std::fs::read_to_string(perf_dir().join("report-typeoff-n.txt"))
        .unwrap()
        .lines()
        .filter(|l| l.contains("struct ring +"))
    {
        let n: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        let field = line.rsplit_once('(').unwrap().1.trim_end_matches(')');
        let member = field.split('.').next().unwrap().to_owned();
        *out.entry(member).or_default() += n;
    }
    assert_eq!(out.len(), 6, "{out:?}");
    out
}

/// `check`'s finding pairs (no samples read) of `rules` on the ring, with
/// `plan` if given: per severity, and the samples of `counted` on their
/// fields, summed.
fn pairs(rules: &str, plan: Option<&str>) -> (Vec<String>, u64) {
    let mut args = vec!["check", "--rules", rules, "--format", "json"];
    if let Some(plan) = plan {
        args.extend(["--plan", plan]);
    }
    let ring = file("ring");
    args.push(&ring);
    let (code, out, err) = cachelint(&args);
    assert_eq!(code, 1, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let weights = counted();
    let (mut severities, mut sum) = (Vec::new(), 0);
    for f in doc["findings"].as_array().unwrap() {
        if !f["allowed"].is_null() {
            continue;
        }
        severities.push(f["severity"].as_str().unwrap().to_owned());
        for side in ["a", "b"] {
            sum += weights.get(f[side]["path"].as_str().unwrap()).unwrap_or(&0);
        }
    }
    severities.sort();
    (severities, sum)
}

#[test]
fn suggest_leaves_the_pairs_perf_saw_least() {
    let dir = tempfile_dir();
    let rules = dir.join("ring-suggest.toml");
    std::fs::write(&rules, RING_RULES).unwrap();
    let rules = rules.to_str().unwrap();
    let report = file("report-typeoff-n.txt");
    let suggest = |perf: bool, plan: &Path| {
        let mut args = vec!["suggest", "--rules", rules, "--no-grow"];
        if perf {
            args.extend(["--perf", &report]);
        }
        let plan = plan.to_str().unwrap();
        let ring = file("ring");
        args.extend(["--plan-out", plan, &ring, "ring"]);
        let (code, out, err) = cachelint(&args);
        assert_eq!(code, 0, "{err}");
        out
    };
    let (without, with) = (dir.join("without.plan.toml"), dir.join("with.plan.toml"));
    let plain = suggest(false, &without);
    let weighed = suggest(true, &with);
    assert!(
        plain.contains("ranked by: errors, warnings, growth, notes, footprint, moved"),
        "{plain}"
    );
    assert!(
        weighed.contains("ranked by: errors, warnings, growth, samples, notes"),
        "{weighed}"
    );
    // Both plans checked without samples, the pairs weighed with perf's own
    // counts: as many pairs of each severity, on fewer samples.
    let (compiled, all) = pairs(rules, None);
    let (plain_pairs, plain_sum) = pairs(rules, Some(without.to_str().unwrap()));
    let (pairs_left, left) = pairs(rules, Some(with.to_str().unwrap()));
    assert_eq!(plain_pairs, pairs_left);
    assert!(pairs_left.len() < compiled.len());
    assert!(
        left < plain_sum,
        "{left} samples left, {plain_sum} without --perf"
    );
    // The table says what the pairs weigh, compiled -> suggested.
    let row = weighed.lines().find(|l| l.starts_with("| ring ")).unwrap();
    assert!(
        row.contains(&format!("| {all} -> {left} ")),
        "{row}: {all} -> {left}"
    );
    assert!(
        weighed.contains("perf samples on their fields"),
        "{weighed}"
    );
    assert!(!plain.contains("perf samples"), "{plain}");

    // Samples need rules to weigh, and the objective needs samples.
    let (code, _, err) = cachelint(&["suggest", "--perf", &report, &file("ring"), "ring"]);
    assert_eq!(code, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("without --rules it packs"), "{err}");
    let (code, _, err) = cachelint(&[
        "suggest",
        "--rules",
        rules,
        "--rank",
        "samples",
        &file("ring"),
        "ring",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--rank samples needs samples"), "{err}");
}

#[test]
fn with_a_plan_the_samples_follow_their_members() {
    let dir = tempfile_dir();
    let plan = dir.join("reversed.plan.toml");
    std::fs::write(
        &plan,
        "[ring]\norder = [\"cells\", \"lock\", \"drops\", \"events\", \"mask\", \"tail\", \"head\"]\n",
    )
    .unwrap();
    let (code, out, err) = cachelint(&[
        "layout",
        "--perf",
        &file("report-typeoff.txt"),
        "--plan",
        plan.to_str().unwrap(),
        &file("ring"),
        "ring",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("a profile of another build"), "{err}");
    assert_rows_show_the_reports_shares(&out);
    // mask moved: its row is not at its compiled offset (16).
    let mask = out.lines().find(|l| l.contains(" mask;")).unwrap();
    assert!(!mask.contains("/*    16     8 */"), "{mask}");
}

#[test]
fn check_notes_rules_the_sources_guarded_by_contradicts() {
    // The fixture's source with Linux 7.0's annotations added: drops
    // under lock, tail under a lock of its own.
    let tree = tempfile_dir().join("guarded");
    std::fs::create_dir_all(&tree).unwrap();
    let text = std::fs::read_to_string(perf_dir().join("ring.c"))
        .unwrap()
        .replace(
            "\tunsigned long tail;",
            "\tunsigned long tail __guarded_by(&tail_lock);",
        )
        .replace(
            "\tunsigned long drops;",
            "\tunsigned long drops __guarded_by(&lock);",
        );
    std::fs::write(tree.join("ring.c"), text).unwrap();
    let rules = tree.join("rules.toml");
    std::fs::write(
        &rules,
        "[ring]\ntail = { class = \"lock-protected\", lock = \"lock\" }\ndrops = \"hot-read\"\nhead = \"lockless-write\"\nlock = \"lock\"\n",
    )
    .unwrap();
    let (_, _, err) = cachelint(&[
        "check",
        "--rules",
        rules.to_str().unwrap(),
        "--source-tree",
        tree.to_str().unwrap(),
        &file("ring"),
    ]);
    assert!(
        err.contains(
            "rules.toml:2:1: 'ring.tail' is ruled lock-protected by lock, but the source declares it __guarded_by(&tail_lock) (ring.c:43)"
        ),
        "{err}"
    );
    assert!(
        err.contains("rules.toml:3:1: 'ring.drops' is ruled hot-read, but the source declares it __guarded_by(&lock) (ring.c:46)"),
        "{err}"
    );
    assert!(!err.contains("'ring.head'"), "{err}");
}

#[test]
fn the_readme_shows_what_draft_and_check_print_on_the_ring() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let section = readme.split("## Evidence:").nth(1).unwrap();
    let block = section.split("```\n").nth(1).unwrap();
    let (shown_draft, shown_check) = block
        .split_once("$ cat ring.toml\n")
        .unwrap()
        .1
        .split_once("$ cachelint check")
        .unwrap();
    let shown_check = shown_check.split_once('\n').unwrap().1;
    let draft = {
        let (code, out, err) = cachelint(&[
            "draft",
            "--perf",
            "fixtures/perf/code-with-type.txt",
            "--source-tree",
            "fixtures/perf",
            "fixtures/perf/ring",
            "ring",
        ]);
        assert_eq!(code, 0, "{err}");
        out
    };
    let rules = tempfile_dir().join("readme-ring.toml");
    std::fs::write(&rules, &draft).unwrap();
    let (code, check, err) = cachelint(&[
        "check",
        "--rules",
        rules.to_str().unwrap(),
        "--perf",
        "fixtures/perf/report-typeoff-n.txt",
        "--rank",
        "samples",
        "fixtures/perf/ring",
    ]);
    assert_eq!(code, 1, "{err}");
    for (shown, printed) in [(shown_draft, &draft), (shown_check, &check)] {
        for line in shown
            .lines()
            .filter(|l| *l != "..." && !l.trim().is_empty())
        {
            let found = match line.strip_suffix(" ...") {
                Some(prefix) => printed.lines().any(|p| p.starts_with(prefix)),
                None => printed.lines().any(|p| p == line),
            };
            assert!(
                found,
                "the README shows a line not printed:\n{line}\n---\n{printed}"
            );
        }
    }
}

#[test]
fn a_draft_from_the_evidence_index_is_the_direct_draft_and_needs_the_cache() {
    let cache = tempfile_dir().join("index-cache");
    let _ = std::fs::remove_dir_all(&cache);
    let (tree, ring) = (file(""), file("ring"));
    let args = |index: bool| {
        let mut a = vec!["draft", "--source-tree", tree.as_str()];
        if index {
            a.push("--index");
        }
        a.extend([ring.as_str(), "ring"]);
        a
    };
    let env = [("CACHELINT_CACHE_DIR", cache.as_os_str())];
    let (code, direct, err) = crate::common::cachelint_with_env(&env, &args(false));
    assert_eq!(code, 0, "{err}");
    // Built by the first run, read by the second: the same rules file.
    for run in ["building", "reading"] {
        let (code, indexed, err) = crate::common::cachelint_with_env(&env, &args(true));
        assert_eq!(code, 0, "{run}: {err}");
        assert_eq!(indexed, direct, "{run}");
    }
    let kept: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".idx"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let mut no_cache = args(true);
    no_cache.insert(1, "--no-cache");
    let (code, _, err) = cachelint(&no_cache);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("the tree's evidence index is kept in the cache directory"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&cache);
}
