//! `draft` on Debian's kernels and their trees: the classes the source
//! declares, each with its file and line, held against the source read
//! by the test itself (the lines that declare them, found by a plain
//! text search), and loaded by `check` unchanged; and `suggest` weighing
//! the pairs it leaves by samples perf puts on an enclosing struct.

use std::path::Path;

use super::{env_path, kernel_source, mm_lru_rules, pahole, pahole_offset, vmlinux};
use crate::common::cachelint;

/// The 1-based line of `file` (in `tree`) holding `needle`.
pub(crate) fn line_of(tree: &Path, file: &str, needle: &str) -> usize {
    let text = std::fs::read_to_string(tree.join(file)).unwrap();
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{file} has no '{needle}'"))
        + 1
}

/// The rule line of member `member` under table `[ty]` of a draft.
fn rule<'d>(draft: &'d str, ty: &str, member: &str) -> Option<&'d str> {
    let table = draft.split(&format!("\n[{ty}]\n")).nth(1)?;
    let table = table.split("\n[").next()?;
    table
        .lines()
        .find(|l| l.starts_with(&format!("{member} = ")))
}

/// `draft FLAGS... --source-tree TREE VMLINUX TYPE` on the 6.12 kernel
/// and tree, which must succeed: the rules file.
fn draft_612(flags: &[&str], ty: &str) -> String {
    let (tree, kernel) = (kernel_source(), vmlinux());
    let mut args = vec!["draft"];
    args.extend(flags);
    args.extend([
        "--source-tree",
        tree.to_str().unwrap(),
        kernel.to_str().unwrap(),
        ty,
    ]);
    let (code, draft, err) = cachelint(&args);
    assert_eq!(code, 0, "{err}");
    draft
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn the_draft_of_lru_gen_folio_from_the_6_12_tree_has_its_atomics_and_its_lock() {
    let tree = kernel_source();
    let kernel = vmlinux();
    let draft = draft_612(&[], "lru_gen_folio");
    // evicted and refaulted: atomic_long_add() in lru_gen_eviction() and
    // lru_gen_refault(), at the lines the tree has them. The first's one
    // caller, workingset_eviction(), runs under the page cache's locks
    // (__remove_mapping()): another object's, which leave the atomic
    // lockless to lru_gen_folio.
    let workingset = std::fs::read_to_string(tree.join("mm/workingset.c")).unwrap();
    assert_eq!(workingset.matches("lru_gen_eviction(folio)").count(), 1);
    for (member, function, needle, held) in [
        (
            "evicted",
            "lru_gen_eviction",
            "atomic_long_add(delta, &lrugen->evicted",
            Some("in every caller of lru_gen_eviction, 1 call seen)"),
        ),
        (
            "refaulted",
            "lru_gen_refault",
            "atomic_long_add(delta, &lrugen->refaulted",
            None,
        ),
    ] {
        assert_eq!(
            rule(&draft, "lru_gen_folio", member),
            Some(format!("{member} = \"lockless-write\"  # declared").as_str()),
            "{draft}"
        );
        let line = line_of(&tree, "mm/workingset.c", needle);
        let at = format!(
            "# {member}: declared: atomic_long_add() in {function} (mm/workingset.c:{line})"
        );
        let found = match held {
            Some(callers) => draft.lines().any(|l| {
                l.strip_prefix(&at)
                    .and_then(|rest| rest.strip_prefix(" with &mapping->"))
                    .is_some_and(|rest| rest.ends_with(callers))
            }),
            None => draft.lines().any(|l| l == format!("{at}, no lock held")),
        };
        assert!(found, "{at}\n{draft}");
    }
    // lruvec.lru_lock: a lock, held where the draft says it is.
    assert_eq!(
        rule(&draft, "lruvec", "lru_lock"),
        Some("lru_lock = \"lock\"  # declared"),
        "{draft}"
    );
    let held = draft
        .lines()
        .find(|l| l.starts_with("# lru_lock: declared: held with "))
        .unwrap_or_else(|| panic!("no evidence for lru_lock:\n{draft}"));
    let (file, line) = held
        .rsplit_once(" (")
        .and_then(|(_, at)| at.trim_end_matches(')').rsplit_once(':'))
        .unwrap();
    let line: usize = line.parse().unwrap();
    let text = std::fs::read_to_string(tree.join(file)).unwrap();
    // The write it names is at that line, and the function takes or
    // asserts lru_lock before it.
    let before: Vec<&str> = text.lines().take(line).collect();
    let function_start = before
        .iter()
        .rposition(|l| l.starts_with('{'))
        .expect("inside a function");
    assert!(
        before[function_start..]
            .iter()
            .any(|l| l.contains("lru_lock") && (l.contains("lock") || l.contains("assert"))),
        "{held}"
    );
    // Fields written under it say so.
    assert_eq!(
        rule(&draft, "lru_gen_folio", "avg_total"),
        Some("avg_total = { class = \"lock-protected\", lock = \"lruvec.lru_lock\" }  # declared"),
        "{draft}"
    );
    // min_seq is written in inc_min_seq(), which takes no lock: its one
    // call, in a function that takes lru_lock before it.
    assert_eq!(
        rule(&draft, "lru_gen_folio", "min_seq"),
        Some("min_seq = { class = \"lock-protected\", lock = \"lruvec.lru_lock\" }  # declared"),
        "{draft}"
    );
    assert!(
        draft.contains(
            "with &lruvec->lru_lock held (spin_lock_irq() in every caller of inc_min_seq, 1 call seen)"
        ),
        "{draft}"
    );
    let vmscan = std::fs::read_to_string(tree.join("mm/vmscan.c")).unwrap();
    let lines: Vec<&str> = vmscan.lines().collect();
    let calls: Vec<usize> = (0..lines.len())
        .filter(|&i| {
            let l = lines[i];
            (l.contains("(inc_min_seq(lruvec") || l.contains(" inc_min_seq(lruvec"))
                && !l.starts_with("static")
        })
        .collect();
    assert_eq!(calls.len(), 1, "one call of inc_min_seq");
    let start = (0..calls[0]).rev().find(|&i| lines[i] == "{").unwrap();
    assert!(
        lines[start..calls[0]]
            .iter()
            .any(|l| l.contains("spin_lock_irq(&lruvec->lru_lock)")),
        "inc_min_seq's caller takes lru_lock first"
    );
    // The draft loads in check unchanged.
    let (code, out, err) = check_draft(&draft, &kernel, "lru", &[]);
    assert!(code == 0 || code == 1, "{out}{err}");
    assert!(out.contains("in 1 build"), "{out}");
}

#[test]
#[ignore = "needs Debian's 7.3 kernel and source: .ci/run sets CACHELINT_VMLINUX_73 and CACHELINT_KERNEL_SOURCE_73"]
fn every_guarded_by_member_of_7_3_is_lock_protected_by_its_lock() {
    let tree = env_path("CACHELINT_KERNEL_SOURCE_73", "the 7.3 source tree");
    let kernel = env_path("CACHELINT_VMLINUX_73", "Debian's 7.3 vmlinux");
    // The structs of the 7.3 tree with __guarded_by members that Debian's
    // kernel has (kcov, nvme and scsi_host are not in its vmlinux).
    let structs = [
        ("kfence_metadata", "mm/kfence/kfence.h"),
        ("tomoyo_io_buffer", "security/tomoyo/common.h"),
        ("scomp_scratch", "crypto/scompress.c"),
    ];
    let mut args = vec![
        "draft".to_owned(),
        "--source-tree".into(),
        tree.display().to_string(),
        kernel.display().to_string(),
    ];
    args.extend(structs.iter().map(|(s, _)| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, draft, err) = cachelint(&args);
    assert_eq!(code, 0, "{err}");
    let mut checked = 0;
    for (ty, file) in structs {
        // The test's own reading: `NAME __guarded_by(&LOCK);` lines.
        let text = std::fs::read_to_string(tree.join(file)).unwrap();
        for line in text.lines().filter(|l| l.contains("__guarded_by(&")) {
            let (decl, lock) = line.split_once("__guarded_by(&").unwrap();
            let lock = lock.split(')').next().unwrap();
            let Some(member) = decl.split_whitespace().last() else {
                continue;
            };
            let global = ["static", "extern"]
                .iter()
                .any(|w| decl.trim_start().starts_with(w));
            if global {
                continue;
            }
            let member = member.trim_start_matches('*');
            // A member lock is declared in the same file (`spinlock_t lock;`),
            // a global one `extern` or elsewhere.
            let member_lock = text.lines().any(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                words.len() >= 2
                    && words.last() == Some(&format!("{lock};").as_str())
                    && words[0] != "extern"
            });
            let expected = if member_lock {
                // A member lock: lock-protected by it.
                format!(
                    "{member} = {{ class = \"lock-protected\", lock = \"{lock}\" }}  # declared"
                )
            } else {
                // A global lock: written by its holders, one at a time.
                format!("{member} = {{ write = [\"{lock}\"] }}  # declared")
            };
            assert_eq!(
                rule(&draft, ty, member),
                Some(expected.as_str()),
                "{ty}.{member}\n{draft}"
            );
            let n = text.lines().position(|l| l == line).unwrap() + 1;
            assert!(
                draft.contains(&format!(
                    "# {member}: declared: __guarded_by(&{lock}) ({file}:{n})"
                )),
                "{ty}.{member} at {file}:{n}\n{draft}"
            );
            checked += 1;
        }
    }
    // 5 in kfence_metadata, 4 in tomoyo_io_buffer, 2 in scomp_scratch.
    assert!(checked >= 11, "{checked} members checked");
}

/// The body of the first definition of function `name` in header `text`
/// (from its name to the first line that is a lone `}`).
fn body_of<'t>(text: &'t str, name: &str) -> &'t str {
    definition_in(text, &format!(" {name}(struct mm_struct *mm)"))
}

/// The first definition in `text` that starts with `head`, up to the
/// first line that is a lone `}`.
fn definition_in<'t>(text: &'t str, head: &str) -> &'t str {
    let start = text.find(head).unwrap_or_else(|| panic!("no '{head}'"));
    let end = text[start..].find("\n}\n").unwrap() + start;
    &text[start..end]
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn the_draft_of_mm_struct_sees_mmap_lock_through_its_wrappers() {
    let tree = kernel_source();
    // What the wrappers do, read from the header by the test: the write
    // one takes mmap_lock exclusively, the read one shared.
    let header = std::fs::read_to_string(tree.join("include/linux/mmap_lock.h")).unwrap();
    assert!(
        body_of(&header, "mmap_write_lock_killable")
            .contains("down_write_killable(&mm->mmap_lock)")
    );
    assert!(body_of(&header, "mmap_read_trylock").contains("down_read_trylock(&mm->mmap_lock)"));
    mm_struct_evidence_holds(&tree, &draft_612(&[], "mm_struct"));
}

/// The mm_struct test's judgments, on a draft from the tree's evidence
/// index: the whole tree read once, for every struct (the first run
/// builds it, in the cache directory the tests share).
#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn a_draft_from_the_trees_evidence_index_says_what_the_direct_one_says() {
    let draft = draft_612(&["--index"], "mm_struct");
    mm_struct_evidence_holds(&kernel_source(), &draft);
    let (code, out, err) = check_draft(&draft, &vmlinux(), "mm_struct-index", &[]);
    assert!(code == 0 || code == 1, "{out}{err}");
}

/// An atomic read is a read: `files_struct.count`, read with
/// `atomic_read_acquire()` by every fd lookup, has its readers.
#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn files_structs_count_is_read_by_every_fd_lookup() {
    let tree = kernel_source();
    let fget = line_of(
        &tree,
        "fs/file.c",
        "atomic_read_acquire(&files->count) == 1",
    );
    let draft = draft_612(&[], "files_struct");
    let reads = draft
        .lines()
        .find(|l| l.starts_with("# count: declared: read in "))
        .unwrap_or_else(|| panic!("no read of count: {draft}"));
    assert!(
        reads.contains(&format!("in __fget_light (fs/file.c:{fget})")),
        "{reads}"
    );
    // Its type still decides its class: how often each side runs, the
    // source does not say (docs/evidence.md).
    assert_eq!(
        rule(&draft, "files_struct", "count"),
        Some("count = \"lockless-write\"  # declared"),
        "{draft}"
    );
}

/// What the source says of mm_struct, found by the test in the tree.
fn mm_struct_evidence_holds(tree: &Path, draft: &str) {
    let tree = tree.to_owned();
    // xol_add_vma() stores the xol area with mmap_write_lock_killable()
    // held: under mmap_lock.
    let store = line_of(
        &tree,
        "kernel/events/uprobes.c",
        "smp_store_release(&mm->uprobes_state.xol_area",
    );
    assert!(
        draft.contains(&format!(
            "# uprobes_state: declared: smp_store_release in xol_add_vma \
             (kernel/events/uprobes.c:{store}) with &mm->mmap_lock held (mmap_write_lock_killable())"
        )),
        "{draft}"
    );
    assert_eq!(
        rule(draft, "mm_struct", "uprobes_state"),
        Some("uprobes_state = { class = \"lock-protected\", lock = \"mmap_lock\" }  # declared")
    );
    // task_numa_work() writes numa_scan_offset under mmap_read_trylock():
    // shared, which serialises no writer.
    let write = line_of(
        &tree,
        "kernel/sched/fair.c",
        "mm->numa_scan_offset = start;",
    );
    assert!(
        draft.contains(&format!(
            "# numa_scan_offset: declared: assigned in task_numa_work (kernel/sched/fair.c:{write}), \
             no lock held but &mm->mmap_lock shared (mmap_read_trylock())"
        )),
        "{draft}"
    );
    // Under a lock held shared, a plain store is the owner's: the mm's
    // threads, one at a time, not a context per function.
    let numa = rule(draft, "mm_struct", "numa_scan_offset").unwrap();
    assert!(
        numa.starts_with("numa_scan_offset = { write = [") && numa.contains("\"owner\""),
        "{numa}"
    );
    // arg_end: at exec create_elf_tables() writes it after
    // mmap_write_unlock(), so with no lock; the prctl paths under arg_lock.
    let after = line_of(&tree, "fs/binfmt_elf.c", "\tmm->arg_end = p;");
    assert!(
        draft.contains(&format!(
            "# arg_end: declared: assigned in create_elf_tables (fs/binfmt_elf.c:{after}), no lock held"
        )),
        "{draft}"
    );
    assert_eq!(
        rule(draft, "mm_struct", "arg_end"),
        Some("arg_end = { class = \"lock-protected\", lock = \"arg_lock\" }  # declared")
    );
    // locked_vm: mmap_lock in __account_locked_vm() (asserted) and its
    // callers, page_table_lock in expand_upwards/downwards: a conflict,
    // listed, not resolved silently.
    assert!(
        draft.contains(
            "# locked_vm: CONFLICT: the writes hold different locks (mmap_lock, page_table_lock)"
        ),
        "{draft}"
    );
    // do_brk_flags() takes no lock, but asserts mmap_lock before it
    // counts the new vma: vma_start_write() (mm.h) calls
    // __is_vma_write_locked(), which does mmap_assert_write_locked().
    let mm_h = std::fs::read_to_string(tree.join("include/linux/mm.h")).unwrap();
    assert!(
        definition_in(&mm_h, "static bool __is_vma_write_locked(")
            .contains("\tmmap_assert_write_locked(vma->vm_mm);")
            && definition_in(&mm_h, "static inline void vma_start_write(")
                .contains("if (__is_vma_write_locked(vma, &mm_lock_seq))")
    );
    let mmap = std::fs::read_to_string(tree.join("mm/mmap.c")).unwrap();
    // Its write of map_count: the first after its definition (the last
    // of its two declarations), after its vma_start_write().
    let lines: Vec<&str> = mmap.lines().collect();
    let def = lines
        .iter()
        .rposition(|l| l.starts_with("static int do_brk_flags("))
        .unwrap();
    let at = |needle: &str| {
        def + lines[def..]
            .iter()
            .position(|l| l.contains(needle))
            .unwrap()
            + 1
    };
    let write = at("mm->map_count++");
    assert!(at("\tvma_start_write(vma);") < write);
    assert!(
        draft.contains(&format!(
            "# map_count: declared: assigned in do_brk_flags (mm/mmap.c:{write}) with &vma->vm_mm->mmap_lock \
             held (vma_start_write())"
        )),
        "{draft}"
    );
    // vm_stat_account() takes no lock and asserts none: every one of its
    // calls, counted in the tree by the test, is made with mmap_lock held.
    let calls: usize = [
        "mm/mmap.c",
        "mm/mremap.c",
        "mm/mprotect.c",
        "kernel/fork.c",
        "mm/vma.c",
    ]
    .iter()
    .map(|f| {
        std::fs::read_to_string(tree.join(f))
            .unwrap()
            .lines()
            .filter(|l| l.contains("vm_stat_account(") && !l.starts_with("void vm_stat_account("))
            .count()
    })
    .sum();
    let exec = draft
        .lines()
        .find(|l| l.starts_with("# exec_vm: declared: assigned in vm_stat_account ("))
        .unwrap_or_else(|| panic!("no write of exec_vm in vm_stat_account\n{draft}"));
    assert!(
        exec.contains("->mmap_lock held (")
            && exec.ends_with(&format!(
                " in every caller of vm_stat_account, {calls} calls seen)"
            )),
        "{exec}"
    );
    assert_eq!(
        rule(draft, "mm_struct", "exec_vm"),
        Some("exec_vm = { class = \"lock-protected\", lock = \"mmap_lock\" }  # declared")
    );
    // vma_start_read() reads mm_lock_seq through the vma's pointer to its
    // mm: a struct a draft of mm_struct has no need to decode, followed
    // all the same.
    let read = line_of(
        &tree,
        "include/linux/mm.h",
        "READ_ONCE(vma->vm_mm->mm_lock_seq",
    );
    let evidence = draft
        .lines()
        .find(|l| l.starts_with("# mm_lock_seq: declared: read in "))
        .unwrap_or_else(|| panic!("no reads of mm_lock_seq\n{draft}"));
    assert!(
        evidence.contains(&format!("in vma_start_read (include/linux/mm.h:{read})")),
        "{evidence}"
    );
}

/// The samples the report of the test below puts on members of
/// `lru_gen_folio`, each through `struct lruvec +OFFSET (lrugen.MEMBER)`
/// as perf names a member of an embedded struct.
const LRU_SAMPLES: [(&str, u64); 4] = [
    ("max_seq", 4000),
    ("evicted", 3000),
    ("refaulted", 2000),
    ("enabled", 1000),
];

/// `check`'s finding pairs of the mm rules on `kernel` laid out by
/// `plan` (no samples read): their count, and [`LRU_SAMPLES`] on their
/// fields, summed.
fn lru_pairs(kernel: &str, plan: &Path) -> (usize, u64) {
    let rules = mm_lru_rules();
    let (code, out, err) = cachelint(&[
        "check",
        "--rules",
        rules.to_str().unwrap(),
        "--plan",
        plan.to_str().unwrap(),
        "--format",
        "json",
        kernel,
    ]);
    assert!(code <= 1, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut pairs = 0;
    let mut sum = 0;
    for f in doc["findings"].as_array().unwrap() {
        if !f["allowed"].is_null() {
            continue;
        }
        pairs += 1;
        for side in ["a", "b"] {
            let path = f[side]["path"].as_str().unwrap();
            let member = path.rsplit_once("lrugen.").map_or(path, |(_, m)| m);
            sum += LRU_SAMPLES
                .iter()
                .find(|(name, _)| *name == member)
                .map_or(0, |(_, n)| *n);
        }
    }
    (pairs, sum)
}

#[test]
#[ignore = "needs a real kernel: .ci/run sets CACHELINT_VMLINUX (scripts/fetch-kernel.sh)"]
fn suggest_leaves_lru_gen_folios_pairs_on_the_fields_perf_saw_least() {
    let kernel = vmlinux();
    let k = kernel.to_str().unwrap();
    // A report in perf's format whose offsets are pahole's: lrugen in
    // lruvec, plus the member in lru_gen_folio.
    let lrugen = pahole_offset(k, "lruvec", "lrugen");
    let mut report = String::from(
        "# Samples: 10K of event 'cpu-clock'\n#\n# Overhead  Samples  Data Type  Data Type Offset\n#\n",
    );
    for (member, n) in LRU_SAMPLES {
        let at = lrugen + pahole_offset(k, "lru_gen_folio", member);
        report.push_str(&format!(
            "    {:.2}%  {n}  struct lruvec  struct lruvec +{at:#x} (lrugen.{member})\n",
            n as f64 / 100.0
        ));
    }
    let dir = std::env::temp_dir().join(format!("cachelint-kernel-perf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let perf = dir.join("lru.txt");
    std::fs::write(&perf, report).unwrap();
    let rules = mm_lru_rules();
    let suggest = |with: bool, plan: &Path| {
        let mut args = vec![
            "suggest",
            "--rules",
            rules.to_str().unwrap(),
            "--no-grow",
            "--format",
            "json",
            "--plan-out",
            plan.to_str().unwrap(),
        ];
        if with {
            args.extend(["--perf", perf.to_str().unwrap()]);
        }
        args.extend([k, "lru_gen_folio"]);
        let (code, out, err) = cachelint(&args);
        assert_eq!(code, 0, "{err}");
        assert!(!err.contains("a profile of another build"), "{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    let (without, with) = (dir.join("without.plan.toml"), dir.join("with.plan.toml"));
    suggest(false, &without);
    let doc = suggest(true, &with);
    // Every row fit: the compiled pairs carry samples, and fewer are left.
    let samples = &doc["builds"][0]["samples"];
    let (before, after) = (samples[0].as_u64().unwrap(), samples[1].as_u64().unwrap());
    assert!(before > 0 && after < before, "{samples}");
    // Both plans checked without samples and weighed by the report's own
    // counts: as many pairs, those left with --perf on fewer samples.
    let (plain_pairs, plain) = lru_pairs(k, &without);
    let (pairs, left) = lru_pairs(k, &with);
    assert_eq!(pairs, plain_pairs);
    assert!(left < plain, "{left} samples left, {plain} without --perf");
}

/// `draft --source-tree TREE KERNEL TYPES...`, which must succeed.
pub(crate) fn draft_of(tree: &Path, kernel: &Path, types: &[&str]) -> String {
    let mut args = vec![
        "draft",
        "--source-tree",
        tree.to_str().unwrap(),
        kernel.to_str().unwrap(),
    ];
    args.extend(types);
    let (code, draft, err) = cachelint(&args);
    assert_eq!(code, 0, "{err}");
    draft
}

/// `check --rules DRAFT KERNEL EXTRA...` of a draft written to a
/// temporary file named after `what`: its exit code, output and errors.
fn check_draft(draft: &str, kernel: &Path, what: &str, extra: &[&str]) -> (i32, String, String) {
    let rules = std::env::temp_dir().join(format!(
        "cachelint-draft-{what}-{}.toml",
        std::process::id()
    ));
    std::fs::write(&rules, draft).unwrap();
    let got = cachelint(
        &[
            "check",
            "--rules",
            rules.to_str().unwrap(),
            kernel.to_str().unwrap(),
        ]
        .into_iter()
        .chain(extra.iter().copied())
        .collect::<Vec<_>>(),
    );
    let _ = std::fs::remove_file(&rules);
    got
}

/// The context lines of a draft's `[contexts]` table.
fn contexts_of(draft: &str) -> Vec<&str> {
    draft
        .split("\n[contexts]\n")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .collect()
}

/// The headers whose structs the whole-header draft takes: mm, net, fs,
/// block, sched and io_uring.
const HEADERS: [&str; 13] = [
    "include/linux/mmzone.h",
    "include/linux/mm_types.h",
    "include/linux/memcontrol.h",
    "include/net/sch_generic.h",
    "include/linux/netdevice.h",
    "include/linux/skbuff.h",
    "include/net/sock.h",
    "include/net/page_pool/types.h",
    "include/linux/fs.h",
    "include/linux/blkdev.h",
    "include/linux/blk-mq.h",
    "include/linux/sched.h",
    "include/linux/io_uring_types.h",
];

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn every_struct_of_thirteen_headers_drafts_and_the_draft_loads_in_check() {
    let tree = kernel_source();
    let kernel = vmlinux();
    // The structs the headers define (`struct NAME {` at a line's start)
    // that the build has.
    let known: std::collections::HashSet<String> =
        super::struct_names(&kernel).into_iter().collect();
    let mut types: Vec<String> = Vec::new();
    for h in HEADERS {
        let text = std::fs::read_to_string(tree.join(h)).unwrap();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("struct ") else {
                continue;
            };
            let Some(name) = rest.strip_suffix(" {") else {
                continue;
            };
            if known.contains(name) && !types.iter().any(|t| t == name) {
                types.push(name.to_owned());
            }
        }
    }
    assert!(types.len() >= 200, "{} structs: {types:?}", types.len());
    let names: Vec<&str> = types.iter().map(String::as_str).collect();
    let started = std::time::Instant::now();
    let draft = draft_of(&tree, &kernel, &names);
    eprintln!(
        "drafted {} structs in {:.0?}",
        types.len(),
        started.elapsed()
    );
    // Every struct has its table, ruled or said to rule nothing.
    for t in &types {
        assert!(
            draft.contains(&format!("\n[{t}]\n"))
                || draft.contains(&format!("\n# [{t}]: no member has a rule\n")),
            "no table for {t}"
        );
    }
    // Contexts are paths, not the functions that write: the kernel's
    // function names load as they are, and a struct written by plain
    // stores in hundreds of functions has one owner.
    let contexts = contexts_of(&draft);
    assert!(contexts.contains(&"owner = \"serialized\""), "{contexts:?}");
    // The functions the draft shows storing with no lock: none is a
    // context for that (a function is one only when it stores with
    // WRITE_ONCE or a release store, which its comment says).
    let mut plain_writers: Vec<&str> = draft
        .lines()
        .filter(|l| l.ends_with(", no lock held") && l.contains(": declared: assigned in "))
        .filter_map(|l| {
            l.split(": declared: assigned in ")
                .nth(1)?
                .split(' ')
                .next()
        })
        .collect();
    plain_writers.sort();
    plain_writers.dedup();
    assert!(plain_writers.len() > 1000, "{}", plain_writers.len());
    let section = draft
        .split("\n[contexts]\n")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap();
    let lines: Vec<&str> = section.lines().collect();
    for pair in lines.chunks(2) {
        let [why, context] = pair else {
            panic!("{pair:?}")
        };
        let name = context.split(" = ").next().unwrap();
        assert!(
            name == "owner"
                || (name == "remote-cpus" && why.contains("another CPU's per-CPU object"))
                || why.starts_with("# the holders of ")
                || why.contains("with WRITE_ONCE or a release store")
                || why.ends_with("as the kernel's cacheline groups name it")
                || ((name == "tx" || name == "rx")
                    && why
                        .ends_with(": the object's owner on it at that moment, one CPU at a time")),
            "{why}\n{context}"
        );
    }
    assert!(
        contexts.len() * 4 < plain_writers.len(),
        "{} contexts for {} functions storing with no lock",
        contexts.len(),
        plain_writers.len()
    );
    let (code, out, err) = check_draft(&draft, &kernel, "all", &[]);
    assert!(code == 0 || code == 1, "{err}");
    assert!(out.contains(" in 1 build ("), "{out}");
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn napi_structs_initialiser_is_construction_and_sk_buffs_socket_pointer_no_lock() {
    let tree = kernel_source();
    let kernel = vmlinux();
    let draft = draft_of(&tree, &kernel, &["napi_struct", "sk_buff"]);
    // netif_napi_add_weight() initialises the napi's list and timer, so
    // its writes of poll, dev and weight are its construction.
    let dev_c = std::fs::read_to_string(tree.join("net/core/dev.c")).unwrap();
    let start = dev_c.find("\nvoid netif_napi_add_weight(").unwrap();
    let body = &dev_c[start..start + dev_c[start..].find("\n}\n").unwrap()];
    assert!(body.contains("INIT_LIST_HEAD(&napi->poll_list);"), "{body}");
    for member in ["poll", "dev"] {
        assert!(body.contains(&format!("napi->{member} = ")), "{member}");
        assert!(
            draft.contains(&format!(
                "# {member}: declared: written while the object is built in "
            )),
            "{member}\n{draft}"
        );
        assert_eq!(
            rule(&draft, "napi_struct", member),
            Some(format!("{member} = \"hot-read\"  # declared").as_str()),
            "{draft}"
        );
    }
    // sk_buff.sk points to the socket whose lock is taken: no lock, and
    // sk_buff's plain stores are one owner's.
    let sk = rule(&draft, "sk_buff", "sk").unwrap_or("");
    assert!(!sk.contains("\"lock\""), "{sk}");
    let contexts = contexts_of(&draft);
    assert!(contexts.len() < 40, "{contexts:?}");
}

/// The `[placement]` comment lines about `ty` and its rule, from a draft.
fn placement_of<'d>(draft: &'d str, ty: &str) -> (Vec<&'d str>, Option<&'d str>) {
    let section = draft
        .split("placement]")
        .nth(1)
        .and_then(|s| s.split("\n[").next())
        .unwrap_or("");
    let comments = section
        .lines()
        .filter(|l| l.starts_with(&format!("# {ty}: ")))
        .collect();
    let rule = section.lines().find(|l| l.starts_with(&format!("{ty} = ")));
    (comments, rule)
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn a_struct_only_in_its_own_line_aligned_slab_starts_a_line_and_one_embedded_mid_line_does_not() {
    let tree = kernel_source();
    let kernel = vmlinux();
    let k = kernel.to_str().unwrap();
    let draft = draft_of(&tree, &kernel, &["signal_struct", "sk_buff"]);
    // signal_struct: kernel/fork.c makes its cache with SLAB_HWCACHE_ALIGN
    // (read here from the tree), and it is larger than half a line
    // (pahole): every object starts a line.
    let fork = std::fs::read_to_string(tree.join("kernel/fork.c")).unwrap();
    let size_line = line_of(&tree, "kernel/fork.c", "sizeof(struct signal_struct)");
    let call: String = fork.lines().skip(size_line - 2).take(4).collect();
    assert!(call.contains("SLAB_HWCACHE_ALIGN"), "{call}");
    let (why, placed) = placement_of(&draft, "signal_struct");
    assert_eq!(placed, Some("signal_struct = \"line\""), "{draft}");
    assert!(
        why.iter()
            .any(|l| l.contains(&format!("kernel/fork.c:{}", size_line - 1))
                && l.contains("SLAB_HWCACHE_ALIGN")),
        "{why:?}"
    );
    // init_signals is one object the linker places: listed, not counted.
    assert!(
        why.iter()
            .any(|l| l.contains("init_signals") && l.contains("not counted")),
        "{why:?}"
    );
    // sk_buff has a line-aligned cache too, and sk_buff_fclones holds a
    // second one at byte 232 (pahole), which no line boundary starts. That
    // copy is counted from sk_buff_fclones, a root placed by its own cache,
    // so it does not lower the rule of sk_buff's own objects; those are
    // 8-byte placed because modules' structs the build lacks hold an skb
    // first (the evidence names them), and the rule says so: sk_buff is a
    // root of check at 8.
    let skb2 = pahole_offset(k, "sk_buff_fclones", "skb2");
    assert_ne!(skb2 % 64, 0);
    let (why, placed) = placement_of(&draft, "sk_buff");
    assert_eq!(placed, Some("sk_buff = 8"), "{why:?}");
    assert!(
        why.iter()
            .any(|l| l.contains(&format!("sk_buff_fclones.skb2 at byte {skb2} "))),
        "{why:?}"
    );
    assert!(
        why.iter().any(|l| l.contains("counted from their holders")),
        "{why:?}"
    );
    let eights: Vec<&&str> = why
        .iter()
        .filter(|l| l.contains("multiples of 8 bytes into a line") && !l.contains("embedded as"))
        .collect();
    assert!(
        !eights.is_empty()
            && eights
                .iter()
                .all(|l| l.contains("which the build's debug info does not hold")),
        "{why:?}"
    );
    let (_, fclones) = placement_of(&draft, "sk_buff_fclones");
    assert_eq!(fclones, Some("sk_buff_fclones = \"line\""), "{draft}");
    // The draft loads, and check tries signal_struct at byte 0 only.
    let (code, out, err) = check_draft(&draft, &kernel, "placement", &[]);
    assert!(code < 2, "{err}");
    assert!(
        !out.contains("struct signal_struct is not cacheline-aligned")
            && !err.contains("struct signal_struct is not cacheline-aligned"),
        "{out}"
    );
    let unplaced = draft.replace("signal_struct = \"line\"", "");
    let (_, out, err) = check_draft(&unplaced, &kernel, "unplaced", &[]);
    assert!(
        format!("{out}{err}").contains("struct signal_struct is not cacheline-aligned"),
        "without the rule, 8 placements are tried"
    );
}

/// Sockets live in their protocol's cache: `proto_register()` makes it
/// with `SLAB_HWCACHE_ALIGN` by the size `prot->obj_size` holds, and each
/// protocol sets that to its struct's (`.obj_size = sizeof(struct
/// mptcp_sock)`). A draft of `sock` places `sock` and the roots `check`
/// counts from on a line, from the direct reading and from the index
/// alike, and `check` then tries no other placement.
#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn every_socket_starts_a_line_by_its_protocols_cache_and_a_drafts_roots_say_so() {
    let tree = kernel_source();
    let kernel = vmlinux();
    let k = kernel.to_str().unwrap();
    // The source, read here: the cache, its size and its flags.
    let cache = line_of(
        &tree,
        "net/core/sock.c",
        "kmem_cache_create_usercopy(prot->name,",
    );
    let sock_c = std::fs::read_to_string(tree.join("net/core/sock.c")).unwrap();
    let call: String = sock_c.lines().skip(cache - 1).take(4).collect();
    assert!(
        call.contains("prot->obj_size") && call.contains("SLAB_HWCACHE_ALIGN"),
        "{call}"
    );
    let own = line_of(&tree, "net/mptcp/protocol.c", "sizeof(struct mptcp_sock),");
    let v6 = line_of(
        &tree,
        "net/mptcp/protocol.c",
        "= sizeof(struct mptcp6_sock);",
    );
    // pahole: mptcp_sock is 8-byte aligned and larger than half a line,
    // so SLAB_HWCACHE_ALIGN rounds its slots to whole lines.
    let layout = pahole(&["-F", "dwarf", "-C", "mptcp_sock", k]);
    let size: u64 = layout
        .split("/* size: ")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .and_then(|s| s.trim().parse().ok())
        .unwrap();
    assert!(size > 32, "{layout}");
    assert!(
        layout.contains("} __attribute__((__aligned__(8)));"),
        "{layout}"
    );

    let direct = draft_612(&[], "sock");
    let (why, placed) = placement_of(&direct, "mptcp_sock");
    assert_eq!(placed, Some("mptcp_sock = \"line\""), "{why:?}");
    let slab = why
        .iter()
        .find(|l| l.contains(&format!("net/core/sock.c:{cache}:")))
        .unwrap_or_else(|| panic!("no line of the cache: {why:?}"));
    assert!(
        slab.contains("SLAB_HWCACHE_ALIGN")
            && slab.contains("proto.obj_size")
            && slab.contains(&format!("net/mptcp/protocol.c:{own}"))
            && slab.contains(&format!("mptcp6_sock at net/mptcp/protocol.c:{v6}")),
        "{slab}"
    );
    assert_eq!(placement_of(&direct, "sock").1, Some("sock = \"line\""));
    // The index reads the same.
    let indexed = draft_612(&["--index"], "sock");
    for ty in ["sock", "mptcp_sock", "sctp_sock"] {
        assert_eq!(
            placement_of(&indexed, ty),
            placement_of(&direct, ty),
            "{ty}"
        );
    }
    // check tries the one placement; without the root's rule, eight.
    let (code, out, err) = check_draft(&direct, &kernel, "sock-placed", &[]);
    assert!(code < 2, "{err}");
    assert!(!out.contains("is not cacheline-aligned"), "{out}");
    let unplaced = direct.replace("mptcp_sock = \"line\"", "");
    let (_, out, _) = check_draft(&unplaced, &kernel, "sock-unplaced", &[]);
    assert!(
        out.contains("struct mptcp_sock is not cacheline-aligned"),
        "without the rule, 8 placements are tried"
    );
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn a_draft_reads_its_own_machines_arch_code_only() {
    let tree = kernel_source();
    let kernel = vmlinux();
    // sparc's srmmu takes srmmu_context_spinlock around mm_struct writes
    // (read here from the tree); an x86-64 vmlinux never runs that code.
    let srmmu = std::fs::read_to_string(tree.join("arch/sparc/mm/srmmu.c")).unwrap();
    assert!(srmmu.contains("spin_lock_irqsave(&srmmu_context_spinlock"));
    let draft = draft_of(&tree, &kernel, &["mm_struct"]);
    let spaced = draft.replace("(arch/", " arch/");
    let files: std::collections::BTreeSet<&str> = spaced
        .split(" arch/")
        .skip(1)
        .filter_map(|s| s.split_once('/').map(|(machine, _)| machine))
        .filter(|m| m.chars().all(|c| c.is_ascii_alphanumeric()))
        .collect();
    assert_eq!(
        files.into_iter().collect::<Vec<_>>(),
        ["x86"],
        "by default the build's machine"
    );
    assert!(!draft.contains("srmmu"));
    let (code, sparc, err) = cachelint(&[
        "draft",
        "--source-tree",
        tree.to_str().unwrap(),
        "--arch",
        "sparc",
        kernel.to_str().unwrap(),
        "mm_struct",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(sparc.contains("srmmu_context_spinlock"), "asked for: read");
    // A machine the tree has not: one line, exit 2, the machines listed.
    let (code, _, err) = cachelint(&[
        "draft",
        "--source-tree",
        tree.to_str().unwrap(),
        "--arch",
        "x68",
        kernel.to_str().unwrap(),
        "mm_struct",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no arch/x68") && err.contains("x86") && err.lines().count() == 1,
        "{err}"
    );
}

/// The heat `draft` gives `member` in `[heat.TY]`.
fn heat_in(draft: &str, ty: &str, member: &str) -> Option<u64> {
    let table = draft.split(&format!("\n[heat.{ty}]\n")).nth(1)?;
    table
        .lines()
        .take_while(|l| !l.starts_with('['))
        .find_map(|l| l.strip_prefix(&format!("{member} = "))?.parse().ok())
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn a_refcount_the_scheduler_drops_is_hotter_than_one_a_rare_system_call_sets_and_check_ranks_by_it()
{
    let tree = kernel_source();
    let kernel = vmlinux();
    // finish_task_switch() drops the lazy mm's mm_count on context switch
    // (kernel/sched/core.c, read here); membarrier_state changes when a
    // process registers with sys_membarrier. Its reads count too: since
    // atomic reads are loads, membarrier_switch_mm()'s atomic_read() on
    // a switch is one. Heat counts the paths from fast entry points, so
    // the two are nearer than when every caller counted (6.12: 46 and 36;
    // 188 and 41 with mmdrop()'s 73 callers no entry point reaches).
    let core = std::fs::read_to_string(tree.join("kernel/sched/core.c")).unwrap();
    assert!(core.contains("mmdrop_lazy_tlb_sched(mm)"));
    let draft = draft_of(&tree, &kernel, &["mm_struct"]);
    let count = heat_in(&draft, "mm_struct", "mm_count").expect("mm_count's heat");
    let membarrier = heat_in(&draft, "mm_struct", "membarrier_state").expect("its heat");
    assert!(
        count > membarrier,
        "mm_count {count}, membarrier_state {membarrier}"
    );
    let why = draft
        .lines()
        .find(|l| l.starts_with("# mm_count: declared: heat"))
        .unwrap();
    assert!(why.contains("the scheduler"), "{why}");
    // check of the draft: within each severity, hottest first.
    let rules = std::env::temp_dir().join(format!("cachelint-heat-{}.toml", std::process::id()));
    std::fs::write(&rules, &draft).unwrap();
    let (code, out, err) = cachelint(&[
        "check",
        "--rules",
        rules.to_str().unwrap(),
        "--format",
        "json",
        kernel.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_file(&rules);
    assert!(code < 2, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let findings = report["findings"].as_array().unwrap();
    assert!(findings.len() > 10);
    for pair in findings.windows(2) {
        if pair[0]["severity"] == pair[1]["severity"] && pair[0]["kind"] != "cross-context" {
            assert!(
                pair[0]["heat"].as_u64() >= pair[1]["heat"].as_u64()
                    || pair[1]["kind"] == "cross-context",
                "{} before {}",
                pair[0],
                pair[1]
            );
        }
    }
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn a_variable_declared_by_a_typedef_of_the_struct_is_read_as_the_struct() {
    // kswapd() declares `pg_data_t *pgdat`, a typedef a draft of
    // pglist_data has no other need to decode, and stores kswapd_order.
    let tree = kernel_source();
    let vmscan = std::fs::read_to_string(tree.join("mm/vmscan.c")).unwrap();
    let start = vmscan.find("\nstatic int kswapd(void *p)\n").unwrap();
    let body = &vmscan[start..start + vmscan[start..].find("\n}\n").unwrap()];
    assert!(body.contains("pg_data_t *pgdat = (pg_data_t *)p;"));
    let store = line_of(&tree, "mm/vmscan.c", "WRITE_ONCE(pgdat->kswapd_order, 0);");
    let draft = draft_612(&[], "pglist_data");
    assert!(
        draft.contains(&format!(
            "# kswapd_order: declared: WRITE_ONCE in kswapd (mm/vmscan.c:{store}), no lock held"
        )),
        "{draft}"
    );
}

/// The functions of `file` (in `tree`) whose bodies hold `needle`: the
/// name before `(` on the nearest line above that opens a definition.
fn functions_holding(tree: &Path, file: &str, needle: &str) -> Vec<String> {
    let text = std::fs::read_to_string(tree.join(file)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .filter_map(|(i, _)| {
            let head = lines[..i]
                .iter()
                .rev()
                .find(|l| l.starts_with("static inline ") || l.starts_with("void "))?;
            let name = head.split('(').next()?.split_whitespace().last()?;
            Some(name.trim_start_matches('*').to_owned())
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn the_transmit_paths_stores_to_a_queues_trans_start_are_one_context_not_one_per_helper() {
    let tree = kernel_source();
    // The helpers storing trans_start with WRITE_ONCE and no lock of
    // their own: the queue's lock is taken by HARD_TX_LOCK() three calls
    // up, and drivers call them from their ndo_start_xmit.
    let helpers = functions_holding(
        &tree,
        "include/linux/netdevice.h",
        "WRITE_ONCE(txq->trans_start",
    );
    assert!(
        helpers.iter().any(|h| h == "txq_trans_update"),
        "{helpers:?}"
    );
    // netdev_start_xmit() calls it, on the way from __dev_queue_xmit().
    line_of(&tree, "include/linux/netdevice.h", "txq_trans_update(txq);");
    let draft = draft_612(&[], "netdev_queue");
    let contexts = contexts_of(&draft);
    for h in &helpers {
        assert!(
            !contexts.iter().any(|c| c.starts_with(&format!("{h} "))),
            "{h} is a context: {contexts:?}"
        );
    }
    let trans_start = rule(&draft, "netdev_queue", "trans_start").unwrap();
    assert!(trans_start.contains("\"tx\""), "{trans_start}");
    assert!(
        draft.lines().any(|l| l.starts_with(
            "# trans_start: declared: marked for lockless readers on the transmit path in "
        ) && l.contains("txq_trans_update")),
        "{draft}"
    );
    assert!(contexts.contains(&"tx = \"serialized\""), "{contexts:?}");
}

/// The head of the function enclosing each line of the tree that calls
/// `callee(`: from the last line that starts a definition (no indent, a
/// parenthesis) up to its body's brace, and the file, by `grep -rn`.
fn callers_heads(tree: &Path, callee: &str) -> Vec<(String, String)> {
    let out = std::process::Command::new("grep")
        .args([
            "-rn",
            "--include=*.c",
            "--include=*.h",
            &format!("{callee}("),
        ])
        .arg(tree)
        .output()
        .unwrap();
    let mut heads = Vec::new();
    for hit in String::from_utf8_lossy(&out.stdout).lines() {
        let mut parts = hit.splitn(3, ':');
        let (file, line) = (parts.next().unwrap(), parts.next().unwrap());
        let text = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let at: usize = line.parse::<usize>().unwrap() - 1;
        // A definition of the callee itself is no call.
        if lines[at].contains(&format!(" {callee}(")) && !lines[at].starts_with([' ', '\t']) {
            continue;
        }
        let start = (0..at)
            .rev()
            .find(|&i| {
                lines[i].contains('(') && !lines[i].starts_with([' ', '\t', '#', '/', '*', '}'])
            })
            .unwrap_or_else(|| panic!("{file}:{line}: no enclosing function"));
        let head: Vec<&str> = lines[start..at]
            .iter()
            .take_while(|l| !l.starts_with('{'))
            .copied()
            .collect();
        let file = Path::new(file)
            .strip_prefix(tree)
            .unwrap()
            .display()
            .to_string();
        heads.push((file, head.join(" ")));
    }
    heads
}

/// `draft` has no context of `function` and a line that starts with
/// `said`: the function's accesses are listed, not counted.
fn no_context_but_said(draft: &str, function: &str, said: &str) {
    let contexts = contexts_of(draft);
    assert!(
        !contexts
            .iter()
            .any(|c| c.starts_with(&format!("{function} "))),
        "{contexts:?}"
    );
    assert!(draft.lines().any(|l| l.starts_with(said)), "{draft}");
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn a_helper_only_netlink_handlers_call_is_the_control_paths_not_a_context() {
    let tree = kernel_source();
    // netif_set_gro_max_size() stores gro_max_size with WRITE_ONCE and no
    // lock; nothing in its name says control path. Every call of it in
    // the tree is made by a function taking a netlink_ext_ack.
    let heads = callers_heads(&tree, "netif_set_gro_max_size");
    assert!(heads.len() >= 2, "{heads:?}");
    for (file, head) in &heads {
        assert!(head.contains("struct netlink_ext_ack"), "{file}: {head}");
    }
    line_of(&tree, "net/core/dev.h", "WRITE_ONCE(dev->gro_max_size");
    let draft = draft_612(&[], "net_device");
    no_context_but_said(
        &draft,
        "netif_set_gro_max_size",
        "# gro_max_size: declared: written on the control path in netif_set_gro_max_size",
    );
    // What is left is the kernel's own word: its net_device_read_rx
    // group, which holds the member in the tree, reads it on rx.
    let group_begin = line_of(
        &tree,
        "include/linux/netdevice.h",
        "__cacheline_group_begin(net_device_read_rx)",
    );
    let group_end = line_of(
        &tree,
        "include/linux/netdevice.h",
        "__cacheline_group_end(net_device_read_rx)",
    );
    let member = line_of(&tree, "include/linux/netdevice.h", "\tgro_max_size;");
    assert!(group_begin < member && member < group_end);
    let rule = rule(&draft, "net_device", "gro_max_size").unwrap();
    assert!(!rule.contains("write"), "{rule}");
    assert!(rule.contains("read = [\"rx\"]"), "{rule}");
}

/// The definition in `file` of `tree` that starts with `head`, up to the
/// first line that is a lone `}`.
fn definition(tree: &Path, file: &str, head: &str) -> String {
    let text = std::fs::read_to_string(tree.join(file)).unwrap();
    definition_in(&text, head).to_owned()
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn a_destroy_functions_stores_are_the_teardowns_but_not_those_to_the_parent_it_points_to() {
    let tree = kernel_source();
    // tcp_v4_destroy_sock() is TCP's `.destroy`, which
    // inet_csk_destroy_sock() calls once no process holds the socket; it
    // clears md5sig_info with no lock of its own.
    let destroy = definition(
        &tree,
        "net/ipv4/tcp_ipv4.c",
        "void tcp_v4_destroy_sock(struct sock *sk)\n",
    );
    assert!(destroy.contains("rcu_assign_pointer(tp->md5sig_info, NULL)"));
    line_of(&tree, "net/ipv4/tcp_ipv4.c", "= tcp_v4_destroy_sock,");
    let csk = definition(
        &tree,
        "net/ipv4/inet_connection_sock.c",
        "void inet_csk_destroy_sock(struct sock *sk)\n",
    );
    assert!(csk.contains("sk->sk_prot->destroy(sk);"));
    let draft = draft_612(&[], "tcp_sock");
    no_context_but_said(
        &draft,
        "tcp_v4_destroy_sock",
        "# md5sig_info: declared: written while the object is torn down in tcp_v4_destroy_sock",
    );
    let rule = rule(&draft, "tcp_sock", "md5sig_info").unwrap();
    assert!(!rule.contains("tcp_v4_destroy_sock"), "{rule}");
    // An inode's teardown decrements its super block's s_remove_count:
    // the super block lives on, and that atomic counts.
    let inode = definition(
        &tree,
        "fs/inode.c",
        "void __destroy_inode(struct inode *inode)\n",
    );
    assert!(inode.contains("atomic_long_dec(&inode->i_sb->s_remove_count)"));
    let draft = draft_612(&[], "super_block");
    assert!(
        draft.lines().any(|l| l.starts_with(
            "# s_remove_count: declared: atomic_long_dec() in __destroy_inode (fs/inode.c:"
        )),
        "{draft}"
    );
    assert!(
        !draft
            .lines()
            .any(|l| l.starts_with("# s_remove_count:") && l.contains("torn down")),
        "{draft}"
    );
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn rcu_nodes_lock_is_taken_through_rcus_own_macros_and_its_findings_told_once_for_all_nodes() {
    let tree = kernel_source();
    let kernel = vmlinux();
    // RCU takes a node's lock with macros of kernel/rcu/rcu.h, never with
    // spin_lock() on the node in the function that writes.
    let rcu_h = std::fs::read_to_string(tree.join("kernel/rcu/rcu.h")).unwrap();
    let lock_macro = definition_in(&rcu_h, "#define raw_spin_lock_irq_rcu_node(p)");
    assert!(
        lock_macro.contains("raw_spin_lock_irq(&ACCESS_PRIVATE(p, lock));"),
        "{lock_macro}"
    );
    let cleanup = definition(
        &tree,
        "kernel/rcu/tree.c",
        "static noinline void rcu_gp_cleanup(void)\n",
    );
    let (locked, written) = (
        cleanup.find("raw_spin_lock_irq_rcu_node(rnp);").unwrap(),
        cleanup
            .find("WRITE_ONCE(rnp->gp_seq, new_gp_seq);")
            .unwrap(),
    );
    assert!(locked < written);
    let line = line_of(
        &tree,
        "kernel/rcu/tree.c",
        "WRITE_ONCE(rnp->gp_seq, new_gp_seq);",
    );
    let draft = draft_612(&[], "rcu_node");
    assert!(
        draft.contains(&format!(
            "# gp_seq: declared: WRITE_ONCE in rcu_gp_cleanup (kernel/rcu/tree.c:{line}) with &rnp->lock held (raw_spin_lock_irq_rcu_node())"
        )),
        "{draft}"
    );
    for member in ["gp_seq", "qsmask", "qsmaskinit"] {
        assert_eq!(
            rule(&draft, "rcu_node", member),
            Some(
                format!("{member} = {{ class = \"lock-protected\", lock = \"lock\" }}  # declared")
                    .as_str()
            ),
            "{draft}"
        );
    }
    // The variable the caller names the node by is no context.
    assert!(
        contexts_of(&draft).iter().all(|c| !c.starts_with("rnp =")),
        "{draft}"
    );
    // rcu_node lives in rcu_state.node[], one element per node of the
    // build's tree (pahole's count): each finding in an element is told
    // once, for the range of all of them.
    let state = pahole(&["-C", "rcu_state", kernel.to_str().unwrap()]);
    let nodes: u64 = state
        .lines()
        .find_map(|l| {
            let l = l.trim();
            l.strip_prefix("struct rcu_node")?
                .trim()
                .strip_prefix("node[")?
                .split(']')
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("{state}"));
    assert!(nodes > 1, "{nodes}");
    let (code, out, err) = check_draft(&draft, &kernel, "rcu-node", &["--format", "json"]);
    assert!(code == 0 || code == 1, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let findings = report["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    let range = format!("node[0..{}]", nodes - 1);
    for f in findings {
        let (a, b) = (
            f["a"]["path"].as_str().unwrap(),
            f["b"]["path"].as_str().unwrap(),
        );
        assert!(a.starts_with(&range) && b.starts_with(&range), "{f}");
        assert_eq!(f["elements"]["last"], nodes - 1, "{f}");
    }
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn qdiscs_owner_is_written_under_q_lock_taken_through_qdisc_lock() {
    let tree = kernel_source();
    // sch_generic.h's accessor, and __dev_xmit_skb() taking the lock
    // through a local it returns before it writes owner.
    let header = definition(
        &tree,
        "include/net/sch_generic.h",
        "static inline spinlock_t *qdisc_lock(struct Qdisc *qdisc)\n",
    );
    assert!(header.contains("return &qdisc->q.lock;"), "{header}");
    let xmit = definition(
        &tree,
        "net/core/dev.c",
        "static inline int __dev_xmit_skb(struct sk_buff *skb, struct Qdisc *q,\n",
    );
    let (local, locked, written) = (
        xmit.find("spinlock_t *root_lock = qdisc_lock(q);").unwrap(),
        xmit.find("spin_lock(root_lock);").unwrap(),
        xmit.find("WRITE_ONCE(q->owner, smp_processor_id());")
            .unwrap(),
    );
    assert!(local < locked && locked < written);
    let draft = draft_612(&[], "Qdisc");
    assert_eq!(
        rule(&draft, "Qdisc", "owner"),
        Some("owner = { class = \"lock-protected\", lock = \"q.lock\" }  # declared"),
        "{draft}"
    );
    // The variable the lock is reached by is no context.
    assert!(
        contexts_of(&draft)
            .iter()
            .all(|c| !c.starts_with("root_lock =")),
        "{draft}"
    );
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn qdiscs_state2_is_set_by_a_locked_qdisc_not_under_the_lockless_ones_seqlock() {
    let tree = kernel_source();
    // qdisc_run_begin(): a lockless qdisc trylocks its seqlock in a
    // branch that always returns; only a locked qdisc goes on to set
    // state2, under the root lock its callers hold, not the seqlock.
    let begin = definition(
        &tree,
        "include/net/sch_generic.h",
        "static inline bool qdisc_run_begin(struct Qdisc *qdisc)\n",
    );
    let (branch, trylock, back, set) = (
        begin.find("if (qdisc->flags & TCQ_F_NOLOCK) {").unwrap(),
        begin
            .find("return spin_trylock(&qdisc->seqlock);\n\t}")
            .unwrap(),
        begin.find("\t}\n").unwrap(),
        begin
            .find("__test_and_set_bit(__QDISC_STATE2_RUNNING, &qdisc->state2)")
            .unwrap(),
    );
    assert!(branch < trylock && trylock < back && back < set, "{begin}");
    let draft = draft_612(&[], "Qdisc");
    let state2 = rule(&draft, "Qdisc", "state2").expect("a rule for state2");
    assert!(!state2.contains("seqlock"), "{state2}\n{draft}");
    // Its store, at the line the tree has it, holds no lock of its own.
    let line = line_of(
        &tree,
        "include/net/sch_generic.h",
        "__test_and_set_bit(__QDISC_STATE2_RUNNING, &qdisc->state2)",
    );
    let evidence = format!(
        "# state2: declared: __test_and_set_bit() (non-atomic) in qdisc_run_begin \
         (include/net/sch_generic.h:{line}), no lock held"
    );
    assert!(draft.lines().any(|l| l == evidence), "{evidence}\n{draft}");
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn super_blocks_s_writers_is_under_s_umount_taken_by_a_wrapper_of_wrappers_in_super_c() {
    let tree = kernel_source();
    // fs/super.c: super_lock_excl() calls super_lock(), which calls
    // __super_lock(), which takes s_umount; freeze_super() calls the
    // first, then sets s_writers.frozen.
    let file = "fs/super.c";
    let inner = definition(&tree, file, "static inline void __super_lock(");
    assert!(inner.contains("down_write(&sb->s_umount);"), "{inner}");
    let outer = definition(&tree, file, "static __must_check bool super_lock(");
    assert!(outer.contains("__super_lock(sb, excl);"), "{outer}");
    let excl = definition(&tree, file, "static inline bool super_lock_excl(");
    assert!(excl.contains("return super_lock(sb, true);"), "{excl}");
    let freeze = definition(&tree, file, "int freeze_super(");
    let (taken, set) = (
        freeze.find("if (!super_lock_excl(sb)) {").unwrap(),
        freeze
            .find("sb->s_writers.frozen = SB_FREEZE_WRITE;")
            .unwrap(),
    );
    assert!(taken < set, "{freeze}");
    let draft = draft_612(&[], "super_block");
    let rule = rule(&draft, "super_block", "s_writers").expect("a rule for s_writers");
    assert!(
        rule.starts_with("s_writers = { class = \"lock-protected\", lock = \"s_umount\" }"),
        "{rule}\n{draft}"
    );
    let line = line_of(&tree, file, "sb->s_writers.frozen = SB_FREEZE_WRITE;");
    let evidence = format!(
        "# s_writers: declared: assigned in freeze_super ({file}:{line}) with &sb->s_umount \
         held (super_lock_excl())"
    );
    assert!(draft.lines().any(|l| l == evidence), "{evidence}\n{draft}");
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn dentrys_d_inode_is_cleared_under_the_d_lock_every_caller_of_its_clearer_holds() {
    let tree = kernel_source();
    // fs/dcache.c: __d_clear_type_and_inode() sets d_inode to NULL; its
    // one caller, dentry_unlink_inode(), is called with d_lock held and
    // releases it, from `if` branches whose `else` unlocks d_lock
    // instead. Before an `else` started from its `if`'s locks, the
    // write read "no lock held".
    let file = "fs/dcache.c";
    let text = std::fs::read_to_string(tree.join(file)).unwrap();
    assert_eq!(text.matches("__d_clear_type_and_inode(dentry);").count(), 1);
    let unlink = definition(&tree, file, "static void dentry_unlink_inode(");
    assert!(
        unlink.contains("__releases(dentry->d_lock)")
            && unlink.contains("__d_clear_type_and_inode(dentry);"),
        "{unlink}"
    );
    let kill = definition(&tree, file, "static struct dentry *__dentry_kill(");
    assert!(
        kill.contains("\tif (dentry->d_inode)\n\t\tdentry_unlink_inode(dentry);\n\telse\n\t\tspin_unlock(&dentry->d_lock);"),
        "{kill}"
    );
    let clear = definition(&tree, file, "static inline void __d_clear_type_and_inode(");
    assert!(clear.contains("\tdentry->d_inode = NULL;"), "{clear}");
    let line = line_of(&tree, file, "static inline void __d_clear_type_and_inode(")
        + clear
            .lines()
            .position(|l| l == "\tdentry->d_inode = NULL;")
            .unwrap();
    let draft = draft_612(&[], "dentry");
    let evidence = format!(
        "# d_inode: declared: assigned in __d_clear_type_and_inode ({file}:{line}) with \
         &dentry->d_lock held (spin_lock() in every caller of __d_clear_type_and_inode, 1 call seen)"
    );
    assert!(draft.lines().any(|l| l == evidence), "{evidence}\n{draft}");
}

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn a_pipes_tail_is_under_its_mutex_taken_by_fs_pipe_cs_pipe_lock_in_fuse() {
    let tree = kernel_source();
    // fs/pipe.c exports pipe_lock(), which takes pipe->mutex ("mutex
    // protecting the whole thing", pipe_fs_i.h); fs/fuse/dev.c calls it,
    // then moves the ring's tail. Before `.c` files' wrappers were known
    // to other files, the write read "no lock held".
    let lock = definition(&tree, "fs/pipe.c", "void pipe_lock(");
    assert!(lock.contains("mutex_lock(&pipe->mutex);"), "{lock}");
    let file = "fs/fuse/dev.c";
    let text = std::fs::read_to_string(tree.join(file)).unwrap();
    assert_eq!(text.matches("pipe->tail = tail;").count(), 1);
    let splice = definition(&tree, file, "static ssize_t fuse_dev_splice_write(");
    let (taken, set) = (
        splice.find("\tpipe_lock(pipe);").unwrap(),
        splice.find("pipe->tail = tail;").unwrap(),
    );
    assert!(taken < set, "{splice}");
    let draft = draft_612(&[], "pipe_inode_info");
    let line = line_of(&tree, file, "pipe->tail = tail;");
    let evidence = format!(
        "# tail: declared: assigned in fuse_dev_splice_write ({file}:{line}) with &pipe->mutex \
         held (pipe_lock())"
    );
    assert!(draft.lines().any(|l| l == evidence), "{evidence}\n{draft}");
}
