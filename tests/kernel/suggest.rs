//! `suggest` on the kernels: its header patches built into the oracle
//! modules (lru_gen_folio, net_device, tcp_sock), packing suggestions the
//! compiler lays out as planned, `--keep-footprint` against pahole's
//! offsets, the orders one config likes better, the 6.1 alias.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::common::{self, run};
use crate::{
    assert_module_truth, kernel_source, mm_lru_rules, pahole, pahole_extents, plan_oracles,
    rt_vmlinux, vmlinux,
};

#[test]
#[ignore = "needs real kernels, modules and the source tree: .ci/run sets CACHELINT_PLAN_ORACLE and CACHELINT_KERNEL_SOURCE"]
fn the_suggested_order_equals_the_module_built_with_its_header_patch() {
    // suggest on the oracle's kernels, its patch applied to the headers
    // those kernels were built with, and the module built against them:
    // the compiler's offsets must be the ones suggest laid out.
    let oracles = plan_oracles();
    let dir = std::env::temp_dir().join(format!("cachelint-suggest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rules = mm_lru_rules();
    let kernels: Vec<PathBuf> = oracles.iter().map(|(v, _)| v.clone()).collect();
    let (report, patch, plan) = suggest_patch(
        &dir,
        &rules,
        &kernels,
        "lru_gen_folio",
        &["--max-growth", "2"],
    );
    for ((vmlinux, kmod), build) in oracles.iter().zip(report["builds"].as_array().unwrap()) {
        assert_eq!(build["errors"][1], 0, "{}", vmlinux.display());
        let module = oracle_module("oracle", vmlinux, &["suggested", patch.to_str().unwrap()]);
        let rows = assert_module_truth(vmlinux, &module, Some(&plan));
        // No more growth than RFC 3/3's, by the compiler's sizeof.
        let size_of = |m: &std::path::Path| {
            let labels = std::fs::read_to_string(m.with_extension("rows")).unwrap();
            let i = labels
                .lines()
                .position(|l| l == "mem_cgroup_per_node#size")
                .unwrap();
            common::truth_values(m)[i]
        };
        let ours = size_of(&module);
        let rfc3 = size_of(&kmod.join("oracle-rfc3.ko"));
        assert!(
            ours <= rfc3,
            "{}: {ours} > RFC 3/3's {rfc3}",
            vmlinux.display()
        );
        println!(
            "{}: suggested order, {rows} rows equal to the module built with its patch; \
             mem_cgroup_per_node {ours} bytes (RFC 3/3: {rfc3})",
            vmlinux.display()
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// The net_device oracle module (`KMOD_ORACLE=netdev
/// scripts/kmod-oracle.sh FLAVOUR [NAME PATCH]`): its module path.
fn netdev_module(vmlinux: &std::path::Path, args: &[&str]) -> PathBuf {
    oracle_module("netdev", vmlinux, args)
}

/// `suggest --rules RULES KERNELS... TYPE --source-tree SOURCE --plan-out
/// PLAN --format json` with `extra` options: the JSON, the header patch
/// written to `DIR/TYPE.patch`, and the plan's path.
fn suggest_patch(
    dir: &std::path::Path,
    rules: &std::path::Path,
    kernels: &[PathBuf],
    ty: &str,
    extra: &[&str],
) -> (Value, PathBuf, PathBuf) {
    let plan = dir.join(format!("{ty}.plan.toml"));
    let source = kernel_source();
    let mut args: Vec<String> = vec![
        "suggest".into(),
        "--rules".into(),
        rules.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(kernels.iter().map(|v| v.display().to_string()));
    args.extend(
        [
            ty,
            "--source-tree",
            source.to_str().unwrap(),
            "--plan-out",
            plan.to_str().unwrap(),
            "--format",
            "json",
        ]
        .map(String::from),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = common::cachelint(&args);
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let patch = dir.join(format!("{ty}.patch"));
    std::fs::write(&patch, report["patch"].as_str().expect("a patch")).unwrap();
    (report, patch, plan)
}

/// The oracle module `kind` (KMOD_ORACLE) for `vmlinux`'s flavour, built
/// as shipped or, with `[NAME, PATCH]`, with the patch applied.
fn oracle_module(kind: &str, vmlinux: &std::path::Path, args: &[&str]) -> PathBuf {
    let flavour = vmlinux
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .rsplit_once("deb12-")
        .expect("a Debian 6.12 vmlinux")
        .1;
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/kmod-oracle.sh");
    let built = Command::new(script)
        .env("KMOD_ORACLE", kind)
        .arg(flavour)
        .args(args)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    PathBuf::from(
        String::from_utf8(built.stdout)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
}

/// net_device differs between the flavours (amd64 and rt have members
/// under CONFIG_WIRELESS_EXT, CONFIG_CFG80211, ... that cloud lacks), and
/// its header has 40 conditional lines: one suggestion over every
/// oracle kernel (and amd64's when it lies beside them), its header patch
/// (conditionals kept) built into the net_device module against each
/// flavour's headers, must equal `offsetof --plan` of the plan file on
/// every row of the module; the module as shipped must equal the kernel
/// (so it speaks for it). The suggestion touches no more lines per
/// context than the shipped layout on any build.
#[test]
#[ignore = "needs real kernels, modules and the source tree: .ci/run sets CACHELINT_PLAN_ORACLE and CACHELINT_KERNEL_SOURCE"]
fn the_suggested_net_device_order_with_per_config_members_equals_the_patched_module() {
    let mut kernels: Vec<PathBuf> = plan_oracles().into_iter().map(|(v, _)| v).collect();
    let amd64 = kernels[0].with_file_name("vmlinux-6.12.117+deb12-amd64");
    if amd64.is_file() && !kernels.contains(&amd64) {
        kernels.push(amd64);
    }
    let dir = std::env::temp_dir().join(format!("cachelint-netdev-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let table = kernel_source().join("Documentation/networking/net_cachelines/net_device.rst");
    let (report, patch, plan) = suggest_patch(&dir, &table, &kernels, "net_device", &[]);
    let per_config = report["per_config"].as_array().unwrap();
    let cloud = kernels
        .iter()
        .any(|k| k.to_str().unwrap().ends_with("-cloud-amd64"));
    if cloud && kernels.len() > 1 {
        assert!(
            !per_config.is_empty(),
            "cloud lacks members the others have"
        );
        assert!(report["plan"].as_str().unwrap().contains("optional = ["));
    }
    for (vmlinux, build) in kernels.iter().zip(report["builds"].as_array().unwrap()) {
        for f in build["footprint"].as_array().unwrap() {
            assert!(
                f[2].as_u64() <= f[1].as_u64(),
                "{}: {} touches {} lines suggested, {} shipped",
                vmlinux.display(),
                f[0],
                f[2],
                f[1]
            );
        }
        let shipped = assert_module_truth(vmlinux, &netdev_module(vmlinux, &[]), None);
        let module = netdev_module(vmlinux, &["suggested", patch.to_str().unwrap()]);
        let rows = assert_module_truth(vmlinux, &module, Some(&plan));
        assert!(rows > 150, "{rows} rows");
        println!(
            "{}: net_device as shipped, {shipped} rows, and suggested, {rows} rows, equal to \
             the modules; footprint compiled -> suggested {}",
            vmlinux.display(),
            build["footprint"]
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
#[ignore = "needs a real kernel and its source tree: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn keep_footprint_suggests_no_context_more_lines_than_paholes_offsets_give_as_shipped() {
    // tcp_sock as netdev laid it out for its contexts: with
    // --keep-footprint no context may touch more lines of it than as
    // shipped. Shipped lines come from pahole's offsets, suggested ones
    // from `offsets --plan` of the written plan (the plan engine, checked
    // against the compiler by the module oracle), for the fields the
    // table gives each context.
    let k = vmlinux();
    let k = k.to_str().unwrap();
    let table = kernel_source().join("Documentation/networking/net_cachelines/tcp_sock.rst");
    let table = table.to_str().unwrap();
    let dir = std::env::temp_dir().join(format!("cachelint-keep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("tcp_sock.plan.toml");
    let plan = plan.to_str().unwrap();
    let (code, _, err) = common::cachelint(&[
        "suggest",
        "--rules",
        table,
        "--keep-footprint",
        "--no-grow",
        "--plan-out",
        plan,
        k,
        "tcp_sock",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) =
        common::cachelint(&["footprint", "--rules", table, k, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let extents = pahole_extents(&pahole(&["-C", "tcp_sock", k]));
    let mut contexts = 0;
    for c in json["builds"][0]["types"][0]["contexts"]
        .as_array()
        .unwrap()
    {
        let fields: Vec<&str> = c["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        let shipped: Vec<(u64, u64)> = fields
            .iter()
            .map(|f| {
                let (o, s) = extents[*f];
                (o, o + s)
            })
            .collect();
        let paths: Vec<String> = fields.iter().map(|f| format!("tcp_sock.{f}")).collect();
        let mut args = vec!["offsets", "--plan", plan, "--format", "json", k];
        args.extend(paths.iter().map(String::as_str));
        let (code, out, err) = common::cachelint(&args);
        assert_eq!(code, 0, "{err}");
        let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
        let planned: Vec<(u64, u64)> = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let b = &r["builds"][0];
                let o = b["offset"].as_u64().unwrap();
                (o, o + b["size"].as_u64().unwrap())
            })
            .collect();
        let (_, before) = common::bytes_and_lines(shipped, 64);
        let (_, after) = common::bytes_and_lines(planned, 64);
        let context = c["context"].as_str().unwrap();
        assert!(
            after.len() <= before.len(),
            "{context}: {} lines suggested, {} shipped",
            after.len(),
            before.len()
        );
        eprintln!(
            "tcp_sock {context}: {} lines shipped, {} suggested with --keep-footprint",
            before.len(),
            after.len()
        );
        contexts += 1;
    }
    assert!(contexts >= 2);
    // No larger: the struct's size under the plan is at most pahole's.
    let (code, out, err) =
        common::cachelint(&["offsets", "--plan", plan, "--format", "json", k, "tcp_sock"]);
    assert_eq!(code, 0, "{err}");
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    let size = rows[0]["builds"][0]["size"].as_u64().unwrap();
    let shipped = pahole(&["-C", "tcp_sock", k]);
    let shipped: u64 = shipped
        .split("/* size: ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.trim().parse().ok())
        .expect("pahole prints the size");
    assert!(
        size <= shipped,
        "tcp_sock is {size} bytes under the plan, {shipped} shipped"
    );
    eprintln!("tcp_sock: {shipped} bytes shipped, {size} suggested");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs the cloud and rt kernels: .ci/run sets CACHELINT_VMLINUX and CACHELINT_PLAN_ORACLE"]
fn an_order_one_config_likes_better_is_reported_with_what_check_finds_in_it() {
    // --no-grow leaves findings on cloud and rt together, so each build
    // climbs alone from the suggestion. Every figure reported for an order
    // a build likes better, and for the suggestion beside it, is what
    // check --plan finds in that order's plan, pair by pair.
    let builds = [vmlinux(), rt_vmlinux()];
    let builds: Vec<&str> = builds.iter().map(|b| b.to_str().unwrap()).collect();
    let rules = mm_lru_rules();
    let rules = rules.to_str().unwrap();
    let dir = std::env::temp_dir().join(format!("cachelint-alone-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let suggested = dir.join("suggested.plan.toml");
    let mut args = vec!["suggest", "--rules", rules, "--no-grow", "--format", "json"];
    args.extend(&builds);
    args.extend(["lru_gen_folio", "--plan-out", suggested.to_str().unwrap()]);
    let (code, out, err) = common::cachelint(&args);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    // (errors, warnings) pairs per config that check finds under a plan.
    let pairs = |plan: &std::path::Path| {
        let mut args = vec!["check", "--rules", rules, "--format", "json", "--plan"];
        args.push(plan.to_str().unwrap());
        args.extend(&builds);
        let (code, out, err) = common::cachelint(&args);
        assert!(code == 0 || code == 1, "{err}");
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        let mut counts = std::collections::HashMap::<String, (u64, u64)>::new();
        for f in json["findings"].as_array().unwrap() {
            let c = counts
                .entry(f["config"].as_str().unwrap().to_owned())
                .or_default();
            match f["severity"].as_str().unwrap() {
                "error" => c.0 += 1,
                "warning" => c.1 += 1,
                _ => {}
            }
        }
        counts
    };
    let ours = pairs(&suggested);
    let alone = report["alone"].as_array().unwrap();
    assert!(
        !alone.is_empty(),
        "no build prefers an order of its own: {out}"
    );
    for (i, a) in alone.iter().enumerate() {
        let plan = dir.join(format!("alone-{i}.plan.toml"));
        std::fs::write(&plan, a["plan"].as_str().unwrap()).unwrap();
        let theirs = pairs(&plan);
        for b in a["builds"].as_array().unwrap() {
            let config = b["config"].as_str().unwrap();
            let (e0, w0) = ours.get(config).copied().unwrap_or_default();
            let (e1, w1) = theirs.get(config).copied().unwrap_or_default();
            assert_eq!(b["errors"], serde_json::json!([e0, e1]), "{config}");
            assert_eq!(b["warnings"], serde_json::json!([w0, w1]), "{config}");
        }
        // The build it was found on is better off with it.
        let home = a["config"].as_str().unwrap();
        let (e0, w0) = ours.get(home).copied().unwrap_or_default();
        let (e1, w1) = theirs.get(home).copied().unwrap_or_default();
        assert!(
            e1 + w1 < e0 + w0,
            "{home}: {e1}+{w1} not fewer than {e0}+{w0}"
        );
        println!("{home} alone: {e0}/{w0} -> {e1}/{w1} error/warning pairs there");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
#[ignore = "needs real kernels, modules and the source tree: .ci/run sets CACHELINT_PLAN_ORACLE and CACHELINT_KERNEL_SOURCE"]
fn the_suggested_tcp_sock_order_equals_the_patched_module() {
    // tcp_sock (144 members, climbed inside its context order's groups)
    // with --keep-footprint on the oracle kernels: its header patch applied
    // to include/linux/tcp.h, the tcp oracle module must have every offset
    // and size offsetof --plan gives, and no context may touch more lines
    // than shipped by the module's own offsets (the table's fields).
    let kernels: Vec<PathBuf> = plan_oracles().into_iter().map(|(v, _)| v).collect();
    let dir = std::env::temp_dir().join(format!("cachelint-tcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let table = kernel_source().join("Documentation/networking/net_cachelines/tcp_sock.rst");
    let (_, patch, plan) = suggest_patch(&dir, &table, &kernels, "tcp_sock", &["--keep-footprint"]);
    for vmlinux in &kernels {
        assert_module_truth(vmlinux, &oracle_module("tcp", vmlinux, &[]), None);
        let module = oracle_module("tcp", vmlinux, &["suggested", patch.to_str().unwrap()]);
        let rows = assert_module_truth(vmlinux, &module, Some(&plan));
        println!(
            "{}: suggested tcp_sock, {rows} rows equal to the module built with its patch",
            vmlinux.display()
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// `suggest` without rules of `types` in `vmlinux`, the plans written to
/// `plan`: the reports (JSON array).
fn packing_suggestions(vmlinux: &std::path::Path, types: &[&str], plan: &std::path::Path) -> Value {
    let mut args = vec![
        "suggest",
        "--format",
        "json",
        "--plan-out",
        plan.to_str().unwrap(),
        vmlinux.to_str().unwrap(),
    ];
    args.extend(types);
    let (code, out, err) = common::cachelint(&args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
#[ignore = "needs a real kernel: .ci/run sets CACHELINT_VMLINUX (scripts/fetch-kernel.sh)"]
fn packing_only_suggest_is_the_size_of_its_plan_and_never_larger() {
    // Without rules, on a few structs with holes (task_struct and
    // mm_struct: too many members to climb; page_pool: group markers;
    // rcu_data and sk_buff): the compiled size is pahole's, the suggested
    // size is offsetof --plan of the written plan file (laid out through
    // the loader), and it never exceeds the compiled one.
    let k = vmlinux();
    let types = [
        "task_struct",
        "mm_struct",
        "page_pool",
        "rcu_data",
        "sk_buff",
    ];
    let plan = std::env::temp_dir().join(format!("cachelint-packing-{}.toml", std::process::id()));
    let reports = packing_suggestions(&k, &types, &plan);
    let theirs = pahole(&["-F", "dwarf", "--sizes", k.to_str().unwrap()]);
    let pahole_size = |ty: &str| -> u64 {
        theirs
            .lines()
            .find_map(|l| {
                let mut f = l.split('\t');
                (f.next() == Some(ty)).then(|| f.next().unwrap().parse().unwrap())
            })
            .unwrap_or_else(|| panic!("pahole --sizes has no {ty}"))
    };
    let names: Vec<String> = types.iter().map(|t| t.to_string()).collect();
    let planned = run::offsetof_planned(&k, &names, &plan).unwrap();
    let mut shrunk = 0;
    for ((ty, report), planned) in types.iter().zip(reports.as_array().unwrap()).zip(&planned) {
        // mm_struct's members live in one anonymous struct, which is what
        // is ordered (`mm_struct.mm_mt`): with cpu_bitmap[] taking no
        // bytes, its size is mm_struct's.
        let name = report["name"].as_str().unwrap();
        assert!(
            name == *ty || name.starts_with(&format!("{ty}.")),
            "{ty}: {name}"
        );
        let bytes = &report["builds"][0]["sizes"][0]["bytes"];
        let (compiled, suggested) = (bytes[0].as_u64().unwrap(), bytes[1].as_u64().unwrap());
        assert_eq!(compiled, pahole_size(ty), "{ty}: compiled");
        assert_eq!(
            suggested,
            planned["size"].as_u64().unwrap(),
            "{ty}: planned"
        );
        assert!(suggested <= compiled, "{ty}: {compiled} -> {suggested}");
        shrunk += usize::from(suggested < compiled);
    }
    // task_struct has 19 holes (pahole --sizes): packing saves something
    // on at least one of them.
    assert!(shrunk > 0);
    let _ = std::fs::remove_file(&plan);
}

/// Packing suggestions the compiler lays out as planned: on each oracle
/// kernel, `suggest` without rules for structs of every kind the plan
/// engine handles (pci_dev: bitfield runs sharing units with their
/// neighbours; task_struct: nested anonymous structs, aligned members;
/// page_pool: kernel groups; mm_struct, sk_buff), and each suggested
/// layout, as `layout --macros --plan` prints it in C, built into a module
/// against that kernel's headers by scripts/c-oracle.sh, which compares
/// every member's offset (bits too) and the size the compiler gave.
#[test]
#[ignore = "needs real kernels and their headers: .ci/run sets CACHELINT_PLAN_ORACLE (scripts/kmod-oracle.sh)"]
fn packing_suggestions_compile_to_the_layouts_they_predict() {
    let types = [
        ("pci_dev", "linux/pci.h"),
        ("task_struct", "linux/sched.h"),
        ("page_pool", "net/page_pool/types.h"),
        ("mm_struct", "linux/mm_types.h"),
        ("sk_buff", "linux/skbuff.h"),
    ];
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/c-oracle.sh");
    for (vmlinux, _) in plan_oracles() {
        let plan =
            std::env::temp_dir().join(format!("cachelint-c-oracle-{}.toml", std::process::id()));
        let names: Vec<&str> = types.iter().map(|(t, _)| *t).collect();
        let reports = packing_suggestions(&vmlinux, &names, &plan);
        for ((ty, header), report) in types.iter().zip(reports.as_array().unwrap()) {
            let built = Command::new(&script)
                .env("CACHELINT", env!("CARGO_BIN_EXE_cachelint"))
                .args([
                    vmlinux.to_str().unwrap(),
                    ty,
                    plan.to_str().unwrap(),
                    header,
                ])
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&built.stdout);
            assert!(
                built.status.success(),
                "{}: {ty}: {said}{}",
                vmlinux.display(),
                String::from_utf8_lossy(&built.stderr)
            );
            let bytes = &report["builds"][0]["sizes"][0]["bytes"];
            assert!(
                said.contains(&format!("size {}, as planned", bytes[1])),
                "{said}"
            );
            println!("{}: {}", vmlinux.display(), said.trim());
        }
        // pahole 1.31 --reorganize's valid claim on amd64's pci_dev
        // (scripts/pahole-peer.sh, 2026-12-01): 2648 -> 2616 bytes.
        if vmlinux.to_str().unwrap().ends_with("deb12-amd64") {
            let bytes = &reports[0]["builds"][0]["sizes"][0]["bytes"];
            assert_eq!(bytes[0], 2648);
            assert!(bytes[1].as_u64().unwrap() <= 2616, "pci_dev: {bytes}");
        }
        let _ = std::fs::remove_file(&plan);
    }
}

#[test]
#[ignore = "needs a 6.1 and a 6.12 kernel: .ci/run sets CACHELINT_VMLINUX and CACHELINT_VMLINUX_OLD"]
fn suggest_finds_the_struct_under_its_6_1_alias_and_refuses_builds_that_disagree() {
    // examples/mm-lru.toml calls the struct lru_gen_folio, with the alias
    // lru_gen_struct: the 6.1 kernel has only the latter (pahole says so),
    // and the plan suggest writes for it must name it so, for --plan.
    let new = vmlinux();
    let old = PathBuf::from(
        std::env::var_os("CACHELINT_VMLINUX_OLD")
            .expect("CACHELINT_VMLINUX_OLD must name a 6.1 kernel (.ci/run)"),
    );
    let olds = old.to_str().unwrap();
    let has = |ty: &str| pahole(&["-C", ty, olds]).contains(&format!("struct {ty} {{"));
    assert!(has("lru_gen_struct") && !has("lru_gen_folio"));
    let rules = mm_lru_rules();
    let rules = rules.to_str().unwrap();
    let dir = std::env::temp_dir().join(format!("cachelint-alias-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("old.plan.toml");
    let (code, _, err) = common::cachelint(&[
        "suggest",
        "--rules",
        rules,
        olds,
        "lru_gen_folio",
        "--plan-out",
        plan.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&plan).unwrap();
    assert!(text.starts_with("[lru_gen_struct]\n"), "{text}");
    let (code, out, err) = common::cachelint(&[
        "offsetof",
        "--plan",
        plan.to_str().unwrap(),
        olds,
        "lru_gen_struct.refaulted",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("lru_gen_struct.refaulted"), "{out}");
    // 6.1 and 6.12 together: one plan cannot name both.
    let (code, _, err) = common::cachelint(&[
        "suggest",
        "--rules",
        rules,
        olds,
        new.to_str().unwrap(),
        "lru_gen_folio",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("lru_gen_struct in") && err.contains("lru_gen_folio in"),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
#[ignore = "needs real kernels: .ci/run sets CACHELINT_PLAN_ORACLE (scripts/fetch-kernel.sh)"]
fn page_counters_padding_is_kept_and_the_default_is_never_worse() {
    // 6.12 page_counter: usage alone before CACHELINE_PADDING(_pad1_), the
    // read-mostly limits after _pad2_ ("Keep all the read most fields in
    // a separete cacheline"). Rules from page_counter.h's comments; the
    // root mem_cgroup embeds it four times (memory, swap|memsw, kmem,
    // tcpmem).
    let kernels: Vec<PathBuf> = plan_oracles().into_iter().map(|(v, _)| v).collect();
    let rules = common::rules("page_counter.toml");
    let run = |extra: &[&str]| suggest_json(&rules, &kernels, "page_counter", extra);
    let counts =
        |b: &Value, i: usize| ["errors", "warnings", "notes"].map(|k| b[k][i].as_u64().unwrap());
    let default = run(&[]);
    let order: Vec<&str> = default["order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let at = |m: &str| order.iter().position(|x| *x == m).unwrap();
    assert!(at("usage") < at("_pad1_"), "{order:?}");
    for m in ["protection_support", "min", "low", "high", "max", "parent"] {
        assert!(at("_pad2_") < at(m), "{m} crossed _pad2_: {order:?}");
    }
    for b in default["builds"].as_array().unwrap() {
        assert!(counts(b, 1) <= counts(b, 0), "{}: worse", b["config"]);
        // No byte saved by undoing the isolation.
        assert_eq!(b["sizes"][0]["bytes"][0], b["sizes"][0]["bytes"][1]);
    }
    // Unpinned and growth first, the 64 bytes saved cost bouncing writers,
    // and the report says whose order that was.
    let growth = run(&["--unpin-aligned", "--rank", "growth"]);
    let worse = growth["builds"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| counts(b, 1) > counts(b, 0))
        .count();
    let notes = growth["notes"].to_string();
    assert!(worse > 0, "growth first was no worse: {notes}");
    assert!(notes.contains("--rank growth ranks it so"), "{notes}");
    println!(
        "page_counter: default keeps {} bytes, never worse; --unpin-aligned --rank growth: worse on {worse} of {} builds",
        default["builds"][0]["sizes"][0]["bytes"][0],
        kernels.len()
    );
}

/// `suggest --rules RULES --format json EXTRA... KERNELS... TYPE`, exiting
/// 0: the JSON.
fn suggest_json(rules: &std::path::Path, kernels: &[PathBuf], ty: &str, extra: &[&str]) -> Value {
    let r = rules.to_str().unwrap();
    let mut args = vec!["suggest", "--rules", r, "--format", "json"];
    args.extend(extra);
    args.extend(kernels.iter().map(|k| k.to_str().unwrap()));
    args.push(ty);
    let (code, out, err) = common::cachelint(&args);
    assert_eq!(code, 0, "suggest {ty}: {err}");
    serde_json::from_str(&out).unwrap()
}

/// `patch` applies to the tree `source` with both `patch -p1 --dry-run`
/// and `git apply --check`.
fn assert_applies(source: &std::path::Path, patch: &std::path::Path) {
    let run = |program: &str, args: &[&str]| {
        common::succeed(
            Command::new(program).args(args).current_dir(source),
            program,
            &format!("{program} {args:?}"),
        );
    };
    let p = patch.to_str().unwrap();
    run("patch", &["-p1", "--dry-run", "--silent", "-i", p]);
    run("git", &["apply", "--check", p]);
}

#[test]
#[ignore = "needs real kernels and the source tree: .ci/run sets CACHELINT_PLAN_ORACLE and CACHELINT_KERNEL_SOURCE"]
fn mm_struct_is_ordered_inside_its_wrapper_and_rq_is_searched() {
    // 6.12 mm_struct is `struct { ... } __randomize_layout; cpu_bitmap[]`:
    // every member inside one anonymous struct, which as the one member of
    // mm_struct could not move anything. Rules from mm_types.h's comments
    // ("Fields which are often written to are placed in a separate cache
    // line"; membarrier_state "touched by switch_mm()").
    let kernels: Vec<PathBuf> = plan_oracles().into_iter().map(|(v, _)| v).collect();
    let dir = std::env::temp_dir().join(format!("cachelint-mm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rules = dir.join("mm.toml");
    std::fs::write(
        &rules,
        "[mm_struct]\nmm_count = \"lockless-write\"\nmm_users = \"lockless-write\"\n\
         pgtables_bytes = \"lockless-write\"\nmembarrier_state = \"hot-read\"\n\
         pgd = \"hot-read\"\nmm_mt = \"hot-read\"\ntask_size = \"hot-read\"\n\
         mmap_lock = \"lock\"\npage_table_lock = \"lock\"\n\
         map_count = { class = \"lock-protected\", lock = \"mmap_lock\" }\n",
    )
    .unwrap();
    let (report, patch, _) = suggest_patch(&dir, &rules, &kernels, "mm_struct", &[]);
    assert_eq!(report["name"], "mm_struct.mm_mt");
    assert!(
        report["plan"]
            .as_str()
            .unwrap()
            .starts_with("[\"mm_struct.mm_mt\"]")
    );
    let pairs =
        |b: &Value, i: usize| b["errors"][i].as_u64().unwrap() + b["warnings"][i].as_u64().unwrap();
    for b in report["builds"].as_array().unwrap() {
        assert!(
            pairs(b, 1) < pairs(b, 0),
            "{}: nothing cleared",
            b["config"]
        );
    }
    // The patch moves members of the anonymous struct, with the lru_gen
    // member's inner #ifdef CONFIG_MEMCG moving whole, and applies.
    assert_applies(&kernel_source(), &patch);
    println!(
        "mm_struct: {} members inside its wrapper, {} layouts in {:.2} s; errors+warnings {}",
        report["members"],
        report["tried"],
        report["seconds"].as_f64().unwrap(),
        report["builds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| format!("{} {} -> {}", b["config"], pairs(b, 0), pairs(b, 1)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    // rq has 75 members and no context rules: searched, not refused.
    std::fs::write(
        &rules,
        "[rq]\n__lock = \"lock\"\nnr_running = { class = \"lock-protected\", lock = \"__lock\" }\n\
         clock = { class = \"lock-protected\", lock = \"__lock\" }\n\
         nr_iowait = \"lockless-write\"\nttwu_pending = \"lockless-write\"\n\
         cpu = \"hot-read\"\nonline = \"hot-read\"\nrd = \"hot-read\"\n",
    )
    .unwrap();
    let rq = suggest_json(&rules, &kernels, "rq", &[]);
    assert!(rq["members"].as_u64().unwrap() > 40);
    assert!(rq["rounds"].as_u64().unwrap() > 0, "rq was not climbed");
    println!(
        "rq: {} members, {} layouts in {:.2} s",
        rq["members"],
        rq["tried"],
        rq["seconds"].as_f64().unwrap()
    );
    std::fs::remove_dir_all(dir).unwrap();
}
