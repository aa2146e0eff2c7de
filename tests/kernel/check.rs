//! `check` on the kernel: the mm thread's false sharing where pahole's
//! offsets put the fields, every net_cachelines table of the source tree,
//! source files that are paths of the tree, the 6.1 name of lru_gen_folio.

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::common;
use crate::common::cachelint;
use crate::common::run::{self, Format};
use crate::{env_path, kernel_source, mm_lru_rules, pahole_offset, rt_vmlinux, vmlinux};

#[test]
#[ignore = "needs a real kernel: .ci/run sets CACHELINT_VMLINUX (scripts/fetch-kernel.sh)"]
fn check_finds_the_threads_false_sharing_where_pahole_puts_the_fields() {
    let k = vmlinux();
    let ks = k.to_str().unwrap();
    let rules = mm_lru_rules();
    let out = run::check(
        &run::check_options(&[rules], &[(k.file_name().unwrap().to_str().unwrap(), &k)]),
        Format::Json,
    )
    .unwrap();
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    // Where the fields are, from pahole alone.
    let lruvec = pahole_offset(ks, "mem_cgroup_per_node", "lruvec");
    let lrugen = pahole_offset(ks, "lruvec", "lrugen");
    let refaulted = lruvec + lrugen + pahole_offset(ks, "lru_gen_folio", "refaulted");
    let enabled = lruvec + lrugen + pahole_offset(ks, "lru_gen_folio", "enabled");
    let list = lruvec + lrugen + pahole_offset(ks, "lru_gen_folio", "list");
    let evicted = lruvec + lrugen + pahole_offset(ks, "lru_gen_folio", "evicted");
    // enabled directly follows refaulted[] in lru_gen_folio (no hole in
    // pahole's output between them), so refaulted[] ends where it starts.
    let refaulted_end = enabled;
    let line = enabled / 64;
    let shares = (refaulted / 64..=(refaulted_end - 1) / 64).contains(&line);
    let found = report["findings"].as_array().unwrap().iter().find(|f| {
        f["root"] == "mem_cgroup_per_node"
            && f["kind"] == "false-sharing"
            && f["a"]["name"] == "refaulted"
            && f["b"]["name"] == "enabled"
    });
    assert_eq!(
        found.is_some(),
        shares,
        "refaulted {refaulted}, enabled {enabled}"
    );
    if let Some(f) = found {
        assert_eq!(f["cacheline"], line);
        assert_eq!(f["a"]["offset"], refaulted);
        assert_eq!(f["b"]["offset"], enabled);
        assert_eq!(f["a"]["decl_file"], "include/linux/mmzone.h");
        eprintln!(
            "check: refaulted ({refaulted}) and enabled ({enabled}) share cacheline {line} of mem_cgroup_per_node; list at {list}, evicted at {evicted}"
        );
    }
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn every_net_cachelines_table_of_the_source_tree_loads_on_its_kernel() {
    tables_load(&vmlinux(), &kernel_source());
}

#[test]
#[ignore = "needs Debian's 7.3 kernel and source: .ci/run sets CACHELINT_VMLINUX_73 and CACHELINT_KERNEL_SOURCE_73"]
fn every_net_cachelines_table_of_7_3_loads_on_its_kernel() {
    tables_load(
        &env_path("CACHELINT_VMLINUX_73", "Debian's 7.3 vmlinux"),
        &env_path("CACHELINT_KERNEL_SOURCE_73", "the 7.3 source tree"),
    );
}

/// Every table of `source` loads and checks on `vmlinux`: as many fields
/// as rows that give an access (each member once), an enum table or one
/// without access rows a note, no row naming a member of an embedded
/// struct (`struct_icsk_ack_u8 pending`) skipped, and no error.
fn tables_load(vmlinux: &std::path::Path, source: &std::path::Path) {
    let dir = source.join("Documentation/networking/net_cachelines");
    let mut tables: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rst"))
        .collect();
    tables.sort();
    assert_eq!(tables.len(), 7, "{tables:?}");
    let access = ["read_mostly", "read_write", "write_mostly"];
    let mut args = vec!["check".to_owned()];
    for table in &tables {
        // An independent count of the members whose row gives an access:
        // the word at the header's Name column, counted once, when one
        // of the next two words is an access.
        let text = std::fs::read_to_string(table).unwrap();
        let enum_table = text
            .lines()
            .any(|l| l.trim() == "..enum" || l.contains(" enum fast path"));
        let name_column = text
            .lines()
            .find_map(|l| l.starts_with("Type ").then(|| l.find("Name")).flatten());
        let mut members = std::collections::HashSet::new();
        for l in text.lines() {
            let Some(at) = name_column.filter(|&c| l.len() > c && l.is_char_boundary(c)) else {
                continue;
            };
            let words: Vec<&str> = l[at..].split_whitespace().collect();
            if words.len() > 1
                && words[1..words.len().min(3)]
                    .iter()
                    .any(|w| access.contains(w))
            {
                members.insert(words[0].to_owned());
            }
        }
        let (code, _, err) = common::cachelint(&[
            "check",
            "--rules",
            table.to_str().unwrap(),
            vmlinux.to_str().unwrap(),
        ]);
        assert!(code == 0 || code == 1, "{}: {err}", table.display());
        if enum_table || members.is_empty() {
            assert!(
                err.contains("nothing to check in it"),
                "{}: {err}",
                table.display()
            );
        }
        for note in err.lines().filter(|l| l.contains("has no member")) {
            let row: usize = note
                .split(".rst:")
                .nth(1)
                .and_then(|r| r.split(':').next())
                .and_then(|n| n.parse().ok())
                .unwrap();
            let line = text.lines().nth(row - 1).unwrap();
            assert!(
                !line.starts_with("struct_icsk") && !line.starts_with("struct icsk"),
                "a member of an embedded struct skipped: {note}"
            );
        }
        let rules = cachelint::commands::Rules::load(std::slice::from_ref(table)).unwrap();
        let fields: usize = rules.types.iter().map(|t| t.fields.len()).sum();
        if !enum_table {
            assert_eq!(
                fields,
                members.len(),
                "{}: members with an access",
                table.display()
            );
        }
        eprintln!("{}: {fields} annotated fields", table.display());
        args.extend(["--rules".to_owned(), table.display().to_string()]);
    }
    args.push(vmlinux.display().to_string());
    args.extend(["--format".to_owned(), "json".to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = common::cachelint(&args);
    // No table states lockless writes by many CPUs: no error.
    assert!(code == 0 || code == 1, "all tables: {err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["summary"]["errors"], 0);
    eprintln!(
        "all tables: {} errors, {} warnings (cross-context), {} notes",
        report["summary"]["errors"], report["summary"]["warnings"], report["summary"]["notes"]
    );
}

/// Every `decl_file` of a `check --format json` report's findings, as
/// `(build, field path) -> (file, line, field name)`.
fn decl_files(
    report: &Value,
) -> std::collections::BTreeMap<(String, String), (String, u64, String)> {
    let mut files = std::collections::BTreeMap::new();
    for f in report["findings"].as_array().unwrap() {
        for side in [&f["a"], &f["b"]] {
            files.insert(
                (
                    f["config"].as_str().unwrap().to_owned(),
                    side["path"].as_str().unwrap().to_owned(),
                ),
                (
                    side["decl_file"].as_str().unwrap().to_owned(),
                    side["decl_line"].as_u64().unwrap(),
                    side["name"].as_str().unwrap().to_owned(),
                ),
            );
        }
    }
    files
}

#[test]
#[ignore = "needs the cloud and rt kernels and the source tree: .ci/run sets CACHELINT_VMLINUX, CACHELINT_PLAN_ORACLE and CACHELINT_KERNEL_SOURCE"]
fn source_files_are_paths_in_the_kernel_tree_on_every_flavour() {
    let tree = kernel_source();
    let (cloud, rt) = (vmlinux(), rt_vmlinux());
    let rules = mm_lru_rules();
    let check = |extra: &[&str], format: &str| {
        let mut args: Vec<String> = [
            "check",
            "--rules",
            rules.to_str().unwrap(),
            "--format",
            format,
        ]
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect();
        args.push(format!("cloud={}", cloud.display()));
        args.push(format!("rt={}", rt.display()));
        let (code, out, err) =
            common::cachelint(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(code == 0 || code == 1, "{err}");
        serde_json::from_str::<Value>(&out).unwrap()
    };
    let files = decl_files(&check(&[], "json"));
    assert!(files.len() > 10, "{files:?}");
    // Each is a file of the source tree, whose line declares the field:
    // the path a bot maps to the tree, on the rt flavour too.
    for ((config, path), (file, line, name)) in &files {
        let text = std::fs::read_to_string(tree.join(file))
            .unwrap_or_else(|e| panic!("[{config}] {path}: {file}: {e}"));
        let declared = text.lines().nth(*line as usize - 1).unwrap_or("");
        assert!(
            declared.contains(name.as_str()),
            "[{config}] {path} at {file}:{line}: {declared}"
        );
    }
    // The same file for the same field in both flavours.
    let per_field = |config: &str| -> std::collections::BTreeMap<&str, &str> {
        files
            .iter()
            .filter(|((c, _), _)| c == config)
            .map(|((_, path), (file, ..))| (path.as_str(), file.as_str()))
            .collect()
    };
    let (on_cloud, on_rt) = (per_field("cloud"), per_field("rt"));
    let both: Vec<_> = on_cloud.keys().filter(|p| on_rt.contains_key(*p)).collect();
    assert!(both.len() > 5, "{on_cloud:?} {on_rt:?}");
    for p in both {
        assert_eq!(on_cloud[p], on_rt[p], "{p}");
    }
    // SARIF's artifact locations are those paths.
    let sarif = check(&[], "sarif");
    let uris: HashSet<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| {
            r["locations"]
                .as_array()
                .unwrap()
                .iter()
                .chain(r["relatedLocations"].as_array().into_iter().flatten())
        })
        .map(|l| {
            l["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    let paths: HashSet<&str> = files.values().map(|(f, ..)| f.as_str()).collect();
    assert!(!uris.is_empty());
    assert!(uris.is_subset(&paths), "{uris:?} {paths:?}");
    // As recorded, rt's paths carry the build's prefix, and naming that
    // prefix as the root gives the detected paths back; cloud's do not
    // change.
    let recorded = decl_files(&check(&["--source-root", "none"], "json"));
    assert_eq!(
        recorded.keys().collect::<Vec<_>>(),
        files.keys().collect::<Vec<_>>()
    );
    let mut prefixes = HashSet::new();
    for (key, (file, ..)) in &recorded {
        let detected = &files[key].0;
        if key.0 == "cloud" {
            assert_eq!(file, detected);
        } else {
            let prefix = file.strip_suffix(detected.as_str()).unwrap();
            assert!(prefix.ends_with('/'), "{file} {detected}");
            prefixes.insert(prefix.to_owned());
        }
    }
    assert_eq!(prefixes.len(), 1, "{prefixes:?}");
    let prefix = prefixes.into_iter().next().unwrap();
    assert_eq!(
        decl_files(&check(&["--source-root", &prefix], "json")),
        files
    );
    eprintln!(
        "source root: rt records {prefix}, {} paths checked in the tree",
        files.len()
    );
}

#[test]
#[ignore = "needs a 6.1 and a 6.12 kernel: .ci/run sets CACHELINT_VMLINUX and CACHELINT_VMLINUX_OLD"]
fn the_rules_find_lru_gen_folio_under_its_6_1_name() {
    let new = vmlinux();
    let old = PathBuf::from(
        std::env::var_os("CACHELINT_VMLINUX_OLD")
            .expect("CACHELINT_VMLINUX_OLD must name a 6.1 kernel (.ci/run)"),
    );
    let rules = mm_lru_rules();
    let out = run::check(
        &run::check_options(&[rules], &[("old", &old), ("new", &new)]),
        Format::Json,
    )
    .unwrap();
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    for (config, k) in [("old", &old), ("new", &new)] {
        let ks = k.to_str().unwrap();
        // The name the kernel has, from pahole: one of the two.
        let has = |ty: &str| {
            let out = Command::new("pahole")
                .args(["-F", "dwarf", "-C", ty, ks])
                .output()
                .expect("pahole (package dwarves) must be installed");
            String::from_utf8_lossy(&out.stdout).contains(&format!("struct {ty} {{"))
        };
        let names: Vec<&str> = ["lru_gen_folio", "lru_gen_struct"]
            .into_iter()
            .filter(|n| has(n))
            .collect();
        assert_eq!(names.len(), 1, "{config}: {names:?}");
        let ty = names[0];
        // refaulted[] and enabled of that struct, where pahole puts them.
        let base = pahole_offset(ks, "mem_cgroup_per_node", "lruvec")
            + pahole_offset(ks, "lruvec", "lrugen");
        let refaulted = base + pahole_offset(ks, ty, "refaulted");
        let enabled = base + pahole_offset(ks, ty, "enabled");
        let line = enabled / 64;
        let found = report["findings"].as_array().unwrap().iter().find(|f| {
            f["config"] == config
                && f["root"] == "mem_cgroup_per_node"
                && f["kind"] == "false-sharing"
                && f["a"]["name"] == "refaulted"
                && f["b"]["name"] == "enabled"
        });
        // enabled directly follows refaulted[] in both versions, and
        // shares its last line (the rule is checked through that finding).
        let shares = (refaulted / 64..enabled.div_ceil(64)).contains(&line);
        assert!(shares, "{config}: refaulted {refaulted}, enabled {enabled}");
        let f = found.unwrap_or_else(|| panic!("{config}: no refaulted/enabled finding"));
        assert_eq!(f["a"]["offset"], refaulted);
        assert_eq!(f["b"]["offset"], enabled);
        let why = f["a"]["why"].as_str().unwrap();
        assert!(
            why.starts_with(&format!("rule of {ty} at ")),
            "{config}: {why}"
        );
        eprintln!(
            "{config}: {ty}.refaulted at {refaulted} shares line {line} with enabled at {enabled}"
        );
    }
}

#[test]
#[ignore = "needs a real kernel: .ci/run sets CACHELINT_VMLINUX (scripts/fetch-kernel.sh)"]
fn the_alternatives_of_mem_cgroups_swap_memsw_union_are_never_a_pair() {
    // 6.12 mem_cgroup has `union { struct page_counter swap; struct
    // page_counter memsw; }`. Rules from page_counter.h's own comments
    // (tests/rules/page_counter.toml).
    let k = vmlinux();
    let rules = common::rules("page_counter.toml");
    let out = run::check(&run::check_options(&[rules], &[("k", &k)]), Format::Json).unwrap();
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let findings = report["findings"].as_array().unwrap();
    let alternative = |side: &Value| {
        let path = side["path"].as_str().unwrap();
        ["swap.", "memsw."]
            .into_iter()
            .find(|a| path.starts_with(a))
    };
    let cross = findings.iter().filter(
        |f| matches!((alternative(&f["a"]), alternative(&f["b"])), (Some(x), Some(y)) if x != y),
    );
    assert_eq!(cross.count(), 0, "a pair between swap and memsw");
    // Inside one alternative fields are distinct memory: min_usage and
    // children_min_usage are adjacent atomics between _pad1_ and _pad2_ in
    // page_counter.h, two lockless writers on one line, in each.
    for a in ["swap", "memsw"] {
        assert!(
            findings.iter().any(|f| f["kind"] == "write-vs-write"
                && f["a"]["path"] == format!("{a}.min_usage")
                && f["b"]["path"] == format!("{a}.children_min_usage")),
            "{a}: no write-vs-write pair inside the alternative"
        );
    }
    eprintln!(
        "mem_cgroup under page_counter rules: {} pairs",
        findings.len()
    );
}

#[test]
#[ignore = "needs the 6.12 and 7.3 kernels and sources: .ci/run sets CACHELINT_VMLINUX, CACHELINT_KERNEL_SOURCE and the _73 pair"]
fn tcp_socks_cross_context_sharing_is_told_once_per_line() {
    // netdev laid tcp_sock out in groups per context; where a line still
    // holds fields of two contexts, each pair was a warning of its own (28
    // on 6.12, 71 on 7.3). Once per line: as many warnings as lines.
    for (k, source) in [
        (vmlinux(), kernel_source()),
        (
            env_path("CACHELINT_VMLINUX_73", "Debian's 7.3 vmlinux"),
            env_path("CACHELINT_KERNEL_SOURCE_73", "the 7.3 source tree"),
        ),
    ] {
        let table = source.join("Documentation/networking/net_cachelines/tcp_sock.rst");
        let t = table.to_str().unwrap();
        let b = k.to_str().unwrap();
        let (code, out, err) = common::cachelint(&["check", "--rules", t, "--format", "json", b]);
        assert!(code <= 1, "{err}");
        let report: Value = serde_json::from_str(&out).unwrap();
        let cross: Vec<&Value> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["kind"] == "cross-context")
            .collect();
        let lines: HashSet<(String, u64)> = cross
            .iter()
            .map(|f| (f["root"].to_string(), f["cacheline"].as_u64().unwrap()))
            .collect();
        let warnings = report["summary"]["warnings"].as_u64().unwrap() as usize;
        let other = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == "warning" && f["kind"] != "cross-context")
            .count();
        assert_eq!(other, 0, "{}: warnings of another kind", k.display());
        assert_eq!(warnings, lines.len(), "{}", k.display());
        // Every pair is still in the JSON (and the baseline's identities).
        assert!(cross.len() > lines.len(), "{}", k.display());
        println!(
            "{}: tcp_sock cross-context: {} pairs on {} lines, {warnings} warnings",
            k.display(),
            cross.len(),
            lines.len()
        );
    }
}

#[test]
#[ignore = "needs the 6.12 and 7.3 kernels: .ci/run sets CACHELINT_VMLINUX and CACHELINT_VMLINUX_73"]
fn one_rule_serves_dentrys_short_name_before_and_after_its_rename() {
    // 6.14 turned dentry.d_iname[] into d_shortname (a union whose
    // `string` is the old array; include/linux/dcache.h keeps `#define
    // d_iname d_shortname.string`). One rule names it with `was`.
    let new = vmlinux();
    let k73 = env_path("CACHELINT_VMLINUX_73", "Debian's 7.3 vmlinux");
    let dir = std::env::temp_dir().join(format!("cachelint-was-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let was = write(
        "was.toml",
        "[dentry]\nd_lockref = \"lockless-write\"\n\
         d_shortname = { class = \"hot-read\", was = [\"d_iname\"] }\n",
    );
    // Each kernel alone, then both: the rule is the member as each
    // build names it, where pahole puts it.
    for (builds, names) in [
        (vec![("6.12", new.as_path())], vec!["d_iname"]),
        (vec![("7.3", k73.as_path())], vec!["d_shortname"]),
        (
            vec![("6.12", new.as_path()), ("7.3", k73.as_path())],
            vec!["d_iname", "d_shortname"],
        ),
    ] {
        let out = run::check(
            &run::check_options(std::slice::from_ref(&was), &builds),
            Format::Json,
        )
        .unwrap_or_else(|e| panic!("{builds:?}: {e}"));
        let report: Value = serde_json::from_str(&out.stdout).unwrap();
        for ((config, k), name) in builds.iter().zip(&names) {
            let at = pahole_offset(k.to_str().unwrap(), "dentry", name);
            let side = report["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["config"] == *config)
                .flat_map(|f| [&f["a"], &f["b"]])
                .find(|s| s["class"] == "hot-read")
                .unwrap_or_else(|| panic!("{config}: no hot-read side in {report}"));
            assert!(
                side["name"].as_str().unwrap().starts_with(name),
                "{config}: {side}"
            );
            let (offset, size) = (
                side["offset"].as_u64().unwrap(),
                side["size"].as_u64().unwrap(),
            );
            assert!(
                offset >= at && offset + size <= at + 40,
                "{config}: {side}, pahole {at}"
            );
        }
    }
    // Without `was`, 6.12 alone has no such member: an error at its line;
    // with `absent-members = "note"`, a note.
    let plain = write(
        "plain.toml",
        "[dentry]\nd_lockref = \"lockless-write\"\nd_shortname = \"hot-read\"\n",
    );
    let noted = write(
        "noted.toml",
        "absent-members = \"note\"\n[dentry]\nd_lockref = \"lockless-write\"\nd_shortname = \"hot-read\"\n",
    );
    let k = new.to_str().unwrap();
    let (code, _, err) = cachelint(&["check", "--rules", plain.to_str().unwrap(), k]);
    assert_eq!(code, 2);
    assert!(
        err.contains("plain.toml:3:1") && err.contains("d_shortname"),
        "{err}"
    );
    let (code, _, err) = cachelint(&["check", "--rules", noted.to_str().unwrap(), k]);
    assert!(code < 2, "{err}");
    assert!(
        err.contains("noted.toml:4:1") && err.contains("skipped"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
