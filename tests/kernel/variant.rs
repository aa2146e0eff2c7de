//! Variants of Debian's 6.12 source with Debian's own configs against
//! Debian's kernels built from them: the same layouts, member by member,
//! for the structs the tier uses (pahole on the vmlinux is the truth); a
//! config nobody built (LRU_GEN_STATS=y) held to a delta worked out by
//! hand and to the edit reverted; the tree never written.

use std::path::{Path, PathBuf};

use cachelint::commands::Source;

use super::{env_path, kernel_source, mm_lru_rules, pahole, rt_vmlinux, vmlinux};
use crate::common::pahole_text;
use crate::common::run::{self, Format};
use crate::common::tree_snapshot;

/// The structs compared: the tier's own, spread over mm, sched, net, fs
/// and block, public headers and private ones (`rq` in
/// kernel/sched/sched.h, `kmem_cache` in mm/slab.h).
const STRUCTS: &[&str] = &[
    "rq",
    "task_struct",
    "mm_struct",
    "mem_cgroup",
    "mem_cgroup_per_node",
    "lruvec",
    "lru_gen_folio",
    "pglist_data",
    "zone",
    "page_counter",
    "page",
    "folio",
    "kmem_cache",
    "tcp_sock",
    "sock",
    "sk_buff",
    "net_device",
    "netns_ipv4",
    "napi_struct",
    "softnet_data",
    "inode",
    "super_block",
    "file",
    "bio",
    "request_queue",
];

/// The variant cache the tier shares across runs (and with the user's
/// default): preparing a tree costs 20-40 s per config.
fn cache_dir() -> PathBuf {
    std::env::var_os("CACHELINT_VARIANT_DIR").map_or_else(
        || Path::new(&std::env::var_os("HOME").expect("HOME")).join(".cache/cachelint/variants"),
        PathBuf::from,
    )
}

/// Writes a variant file of the 6.12 tree under the test's name.
fn variant_file(test: &str, body: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cachelint-kvariant-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{test}.toml"));
    let text = format!("tree = \"{}\"\n{body}", kernel_source().display());
    std::fs::write(&path, text).unwrap();
    path
}

/// cachelint's layout of STRUCTS in `build` (a variant), compared with
/// pahole's of the same structs in `vmlinux`: the differing structs, and
/// the notes of the variant's build.
fn against(build: &str, vmlinux: &Path) -> (Vec<String>, usize, Vec<String>) {
    let names: Vec<String> = STRUCTS.iter().map(|s| s.to_string()).collect();
    let out = run::layout(
        Path::new(build),
        &names,
        false,
        Format::Text,
        None,
        &Source::Auto,
    )
    .unwrap_or_else(|e| panic!("{build}: {e}"));
    let mut theirs = String::new();
    // pahole 1.24 given a long -C list leaves some out: one at a time.
    for name in STRUCTS {
        theirs.push_str(&pahole(&[
            "-F",
            "dwarf",
            "-C",
            name,
            vmlinux.to_str().unwrap(),
        ]));
    }
    let (differences, lines, skipped) = pahole_text::compare(&theirs, &out.stdout, &names, 64);
    assert!(
        skipped.is_empty(),
        "{build}: pahole printed typedefs for {skipped:?}"
    );
    (differences, lines, out.notes)
}

#[test]
#[ignore = "needs Debian's 6.12 source, configs and amd64/arm64/armhf kernels: .ci/run sets CACHELINT_KERNEL_SOURCE, CACHELINT_CONFIG_* and CACHELINT_VMLINUX_*"]
fn variants_of_debians_configs_equal_debians_kernels_member_by_member() {
    let mut body = String::new();
    let arches = [
        (
            "amd64",
            "x86_64",
            "CACHELINT_CONFIG_AMD64",
            env_path("CACHELINT_VMLINUX_AMD64", "Debian's amd64 vmlinux"),
        ),
        (
            "arm64",
            "arm64",
            "CACHELINT_CONFIG_ARM64",
            env_path("CACHELINT_VMLINUX_ARM64", "Debian's arm64 vmlinux"),
        ),
        (
            "armhf",
            "arm",
            "CACHELINT_CONFIG_ARMMP",
            env_path("CACHELINT_VMLINUX_ARMMP", "Debian's armmp vmlinux"),
        ),
        ("rt", "x86_64", "CACHELINT_CONFIG_RT", rt_vmlinux()),
        ("cloud", "x86_64", "CACHELINT_CONFIG_CLOUD", vmlinux()),
    ];
    for (name, arch, config, _) in &arches {
        let config = env_path(config, "a Debian kernel config (scripts/fetch-config.sh)");
        body.push_str(&format!(
            "[[variant]]\nname = \"{name}\"\narch = \"{arch}\"\nconfig = \"{}\"\n",
            config.display()
        ));
    }
    let file = variant_file("debian", &body);
    let before = tree_snapshot(&kernel_source());
    for (name, _, _, vmlinux) in &arches {
        let build = format!("{}#{name}", file.display());
        let (differences, lines, notes) = against(&build, vmlinux);
        let dropped: Vec<&String> = notes
            .iter()
            .filter(|n| n.contains("not set after olddefconfig"))
            .collect();
        eprintln!(
            "variant {name}: {lines} lines of {} structs compared with {}: {} differ; dropped: {dropped:?}",
            STRUCTS.len(),
            vmlinux.display(),
            differences.len()
        );
        match *name {
            // Debian's rt flavour carries patches linux-source-6.12 lacks
            // (PREEMPT_LAZY): the options they add are dropped, and named.
            "rt" => assert!(
                dropped.iter().any(|n| n.contains("ARCH_HAS_PREEMPT_LAZY")),
                "rt: {notes:?}"
            ),
            // The same tree and config as Debian's build: the same layouts.
            _ => assert!(
                differences.is_empty(),
                "variant {name} differs from {}:\n{}",
                vmlinux.display(),
                differences[..differences.len().min(10)].join("\n")
            ),
        }
    }
    assert_eq!(
        tree_snapshot(&kernel_source()),
        before,
        "the source tree was written"
    );
    eprintln!("variants: cache {}", cache_dir().display());
}

#[test]
#[ignore = "needs Debian's 6.12 source, configs and kernels: .ci/run sets CACHELINT_KERNEL_SOURCE, CACHELINT_CONFIG_* and CACHELINT_VMLINUX_*"]
fn mm_lru_rules_run_on_amd64_lru_gen_stats_and_armhf_in_one_command() {
    let amd64 = env_path("CACHELINT_CONFIG_AMD64", "Debian's amd64 config");
    let armmp = env_path("CACHELINT_CONFIG_ARMMP", "Debian's armmp config");
    let vmlinux = env_path("CACHELINT_VMLINUX_AMD64", "Debian's amd64 vmlinux");
    let file = variant_file(
        "lru",
        &format!(
            "[[variant]]\nname = \"amd64\"\nconfig = \"{}\"\n\
             [[variant]]\nname = \"armhf\"\narch = \"arm\"\nconfig = \"{}\"\n\
             [matrix]\nstats = [\"LRU_GEN_STATS=y\"]\nreverted = [\"LRU_GEN_STATS=n\"]\n",
            amd64.display(),
            armmp.display()
        ),
    );
    let before = tree_snapshot(&kernel_source());
    let builds: Vec<(&str, &Path)> =
        vec![("debian", vmlinux.as_path()), ("variants", file.as_path())];
    let mut opts = run::check_options(&[mm_lru_rules()], &builds);
    opts.builds = vec![
        cachelint::commands::Build::parse(&format!("debian={}", vmlinux.display())).unwrap(),
        cachelint::commands::Build::file(&file),
    ];
    let out = run::check(&opts, Format::Json).unwrap();
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let labels: Vec<&str> = json["builds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["config"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "debian",
            "amd64",
            "amd64+stats",
            "amd64+reverted",
            "armhf",
            "armhf+stats",
            "armhf+reverted"
        ]
    );
    // The amd64 variant finds what Debian's kernel finds, pair for pair;
    // so does the edit reverted (a config prepared again from the edit).
    let findings = |label: &str| -> Vec<String> {
        let mut f: Vec<String> = json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["config"] == label)
            .map(|f| {
                let mut f = f.clone();
                f["config"] = serde_json::Value::Null;
                // The variant's source paths are the tree's; the kernel's
                // are relative to the root Debian built in.
                f.to_string()
                    .replace(&format!("{}/", kernel_source().display()), "")
            })
            .collect();
        f.sort();
        f
    };
    assert!(!findings("debian").is_empty());
    assert_eq!(findings("amd64"), findings("debian"));
    assert_eq!(findings("amd64+reverted"), findings("amd64"));
    assert_eq!(findings("armhf+reverted"), findings("armhf"));
    // LRU_GEN_STATS=y: NR_HIST_GENS goes from 1 to 4 (include/linux/mmzone.h),
    // and three arrays of lru_gen_folio have it as their first dimension:
    // protected[NR_HIST_GENS][ANON_AND_FILE][MAX_NR_TIERS - 1] (2 x 3 longs),
    // evicted and refaulted [NR_HIST_GENS][ANON_AND_FILE][MAX_NR_TIERS]
    // (2 x 4 atomic_long_t each): 3 more generations of 6 + 8 + 8 longs,
    // 66 longs: 528 bytes on amd64, 264 on armhf (4-byte longs).
    let size = |build: &str| -> u64 {
        let names = vec!["lru_gen_folio".to_owned()];
        let json = run::layout_json(Path::new(build), &names, false, &Source::Auto);
        json[0]["size"].as_u64().unwrap()
    };
    let f = file.display();
    assert_eq!(
        size(&format!("{f}#amd64+stats")),
        size(&format!("{f}#amd64")) + 528
    );
    assert_eq!(
        size(&format!("{f}#armhf+stats")),
        size(&format!("{f}#armhf")) + 264
    );
    assert_eq!(size(&format!("{f}#amd64")), size(vmlinux.to_str().unwrap()));
    assert_eq!(
        tree_snapshot(&kernel_source()),
        before,
        "the source tree was written"
    );
}

#[test]
#[ignore = "needs Debian's 6.12 source and amd64 config: .ci/run sets CACHELINT_KERNEL_SOURCE and CACHELINT_CONFIG_AMD64"]
fn a_patched_variant_compiles_the_patch_in_a_private_copy() {
    let amd64 = env_path("CACHELINT_CONFIG_AMD64", "Debian's amd64 config");
    let tree = kernel_source();
    let mmzone = std::fs::read_to_string(tree.join("include/linux/mmzone.h")).unwrap();
    let at = mmzone
        .find("\tbool enabled;\n")
        .expect("lru_gen_folio's enabled");
    let line = mmzone[..at].matches('\n').count() + 1;
    // Eight longs after `enabled`. Before: enabled, gen and seg (three
    // bytes) and a 5-byte hole up to `list` (8-aligned), 8 bytes. After:
    // enabled, a 7-byte hole, the 64 bytes, gen and seg, a 6-byte hole,
    // 80 bytes: 72 more, by hand from mmzone.h.
    let patch =
        std::env::temp_dir().join(format!("cachelint-kvariant-{}.patch", std::process::id()));
    std::fs::write(
        &patch,
        format!(
            "--- a/include/linux/mmzone.h\n+++ b/include/linux/mmzone.h\n@@ -{line},1 +{line},2 @@\n \tbool enabled;\n+\tunsigned long cachelint_added[8];\n"
        ),
    )
    .unwrap();
    let file = variant_file(
        "patched",
        &format!(
            "config = \"{}\"\n[[variant]]\nname = \"base\"\n[[variant]]\nname = \"patched\"\npatch = \"{}\"\n",
            amd64.display(),
            patch.display()
        ),
    );
    let before = tree_snapshot(&tree);
    let names = vec!["lru_gen_folio".to_owned()];
    let layout = |v: &str| {
        run::layout_json(
            Path::new(&format!("{}#{v}", file.display())),
            &names,
            false,
            &Source::Auto,
        )
    };
    let (base, patched) = (layout("base"), layout("patched"));
    assert_eq!(
        patched[0]["size"].as_u64().unwrap(),
        base[0]["size"].as_u64().unwrap() + 72
    );
    assert!(patched[0].to_string().contains("cachelint_added"));
    assert_eq!(tree_snapshot(&tree), before, "the source tree was written");
}

#[test]
#[ignore = "needs Debian's 6.12 source and configs: .ci/run sets CACHELINT_KERNEL_SOURCE and CACHELINT_CONFIG_*"]
fn suggests_header_patch_compiles_as_planned_on_every_variant() {
    let amd64 = env_path("CACHELINT_CONFIG_AMD64", "Debian's amd64 config");
    let armmp = env_path("CACHELINT_CONFIG_ARMMP", "Debian's armmp config");
    let file = variant_file(
        "suggest",
        &format!(
            "[[variant]]\nname = \"amd64\"\nconfig = \"{}\"\n\
             [[variant]]\nname = \"armhf\"\narch = \"arm\"\nconfig = \"{}\"\n\
             [matrix]\nstats = [\"LRU_GEN_STATS=y\"]\n",
            amd64.display(),
            armmp.display()
        ),
    );
    let before = tree_snapshot(&kernel_source());
    let mut opts = run::suggest_options(&[mm_lru_rules()], &[file.to_str().unwrap()]);
    opts.source_tree = Some(kernel_source());
    let out = run::suggest(&opts, &["lru_gen_folio"], Format::Text).unwrap();
    assert!(
        out.stdout.contains("+++ b/include/linux/mmzone.h"),
        "{}",
        out.stdout
    );
    // The plan engine's prediction against the compiler, on each: the
    // patch compiled in a private copy of the tree.
    for label in ["amd64", "amd64+stats", "armhf", "armhf+stats"] {
        let agreed =
            format!("[{label}] the header patch compiled: struct lru_gen_folio is as planned");
        assert!(
            out.notes.iter().any(|n| n.starts_with(&agreed)),
            "{label}: {:?}",
            out.notes
        );
    }
    assert_eq!(
        tree_snapshot(&kernel_source()),
        before,
        "the source tree was written"
    );
}

#[test]
#[ignore = "needs Debian's 6.12 source, git, and the cross compilers: .ci/run sets CACHELINT_KERNEL_SOURCE"]
fn review_of_a_tcp_sock_group_change_gives_the_per_arch_table() {
    let source = kernel_source();
    let before = tree_snapshot(&source);
    // A git tree of the 6.12 source (hard links: a file the test changes
    // is written anew, never through a link) with the patch at HEAD. Only
    // the two files the review reads history of are committed.
    let tree = std::env::temp_dir().join("cachelint-review-tree");
    let git = crate::git_tree_of(&source, &tree, &["include/linux/tcp.h", "net/ipv4/tcp.c"]);
    let header = tree.join("include/linux/tcp.h");
    let text = std::fs::read_to_string(&header).unwrap();
    let anchor = "\tu32\tnotsent_lowat;\t/* TCP_NOTSENT_LOWAT */\n";
    assert!(text.contains(anchor), "tcp_sock_read_tx's notsent_lowat");
    std::fs::remove_file(&header).unwrap();
    std::fs::write(
        &header,
        text.replace(anchor, &format!("{anchor}\tu64\tcachelint_added;\n")),
    )
    .unwrap();
    git(&["commit", "-qam", "tcp: a u64 in tcp_sock_read_tx"]);
    // The stores of the patch's code are another test's (the seeds'
    // review): two readings of the whole tree.
    let (code, out, err) = crate::common::cachelint(&[
        "review",
        "--tree",
        tree.to_str().unwrap(),
        "--no-stores",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(json["stores"].is_null(), "{}", json["stores"]);
    assert_eq!(
        json["variants"],
        serde_json::json!(["x86_64", "i386", "arm", "arm64"])
    );
    // No rules given: tcp_sock's are drafted from the tree at HEAD and
    // checked at the base and HEAD on the variants.
    assert!(
        json["compared"]["drafted"]
            .as_array()
            .is_some_and(|d| d.iter().any(|n| n == "tcp_sock")),
        "{}",
        json["compared"]
    );
    eprintln!(
        "drafted pairs introduced: {} ({} errors)",
        json["introduced"], json["introduced_errors"]
    );
    // tcp_sock_read_tx: four u32 (16 bytes), the u64, gso_segs (u16) and
    // two pointers. 64-bit: the u64 at 16 (the group starts 8-aligned),
    // gso_segs at 24, a 6-byte hole to the pointers at 32 and 40: 48, over
    // net/ipv4/tcp.c's budget of 40 (40 before: gso_segs, a hole, the
    // pointers). i386 (a u64 4-aligned in a struct) and ARM EABI (8-aligned,
    // at 16 too): the u64 ends at 24, gso_segs at 24, a 2-byte hole to the
    // 4-byte pointers at 28 and 32: 36 (28 before), under the budget.
    let tcp = json["structs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "tcp_sock")
        .unwrap();
    let group = |i: usize| -> (u64, u64) {
        let g = tcp["on"][i]["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["name"] == "tcp_sock_read_tx")
            .unwrap();
        (g["base"].as_u64().unwrap(), g["head"].as_u64().unwrap())
    };
    assert_eq!(
        [group(0), group(1), group(2), group(3)],
        [(40, 48), (28, 36), (28, 36), (40, 48)]
    );
    let budget = json["asserts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["text"] == "tcp_sock_read_tx <= 40")
        .expect("tcp_struct_check()'s size assert of tcp_sock_read_tx");
    let heads: Vec<&str> = budget["on"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v[1]["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(heads, ["fails", "holds", "holds", "fails"]);
    assert_eq!(json["failures"], 1);
    // Where the members land: the u64 is new on every arch, and gso_segs
    // (after it) moves by its 8 bytes on each.
    for on in tcp["on"].as_array().unwrap() {
        let member = |path: &str| {
            on["members"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["path"] == path)
                .unwrap_or_else(|| panic!("{path} does not change on {}", on["variant"]))
                .clone()
        };
        assert_eq!(member("cachelint_added")["change"], "added");
        let gso = member("gso_segs");
        assert_eq!(
            gso["new"]["offset"].as_u64().unwrap() - gso["old"]["offset"].as_u64().unwrap(),
            8,
            "{gso} on {}",
            on["variant"]
        );
    }
    assert_eq!(
        tree_snapshot(&source),
        before,
        "the source tree was written"
    );
    std::fs::remove_dir_all(&tree).unwrap();
}
