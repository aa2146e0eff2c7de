//! The source reader on snippets of C.

use super::members::members;
use super::vocabulary::{is_lock, is_shared};
use super::walk::functions;
use super::wrappers::Effect;
use super::*;

struct NoTypes;
impl Types for NoTypes {
    fn member_type(&self, ty: &str, member: &str) -> Option<String> {
        (ty == "lruvec" && member == "lrugen").then(|| "lru_gen_folio".to_owned())
    }
    fn canonical(&self, ty: &str) -> String {
        ty.to_owned()
    }
}

/// The declarations of the function bodies of `code` (file `file`)
/// about `types`, no wrapper known.
fn read(code: &str, file: &str, types: &[String]) -> Vec<Declaration> {
    functions(code, Path::new(file), types, &NoTypes, &Wrappers::default()).declarations
}

#[test]
fn writes_locks_and_annotations_are_read() {
    let text = "struct kcov {\n\tspinlock_t lock;\n\tunsigned int size __guarded_by(&lock);\n\tvoid *l2\n\t\t__guarded_by(&a, &b->c);\n};\n\
        static void f(struct lruvec *lruvec, int d)\n{\n\tstruct lru_gen_folio *lrugen = &lruvec->lrugen;\n\
        \tspin_lock_irq(&lruvec->lru_lock);\n\tWRITE_ONCE(lrugen->max_seq, 1);\n\tspin_unlock_irq(&lruvec->lru_lock);\n\
        \tatomic_long_add(d, &lruvec->lrugen.evicted[0][1]);\n\tlrugen->gen++;\n}\n";
    let types = [
        "kcov".to_owned(),
        "lru_gen_folio".to_owned(),
        "lruvec".to_owned(),
    ];
    let mut got = members(text, Path::new("a.c"), &types);
    got.extend(read(text, "a.c", &types));
    let said: Vec<String> = got
        .iter()
        .map(|d| format!("{}:{}.{} {:?}", d.line, d.ty, d.path, d.said))
        .collect();
    let joined = said.join("\n");
    assert!(
        joined.contains("3:kcov.size GuardedBy { locks: [\"&lock\"], pointee: false }"),
        "{joined}"
    );
    assert!(
        joined.contains("5:kcov.l2 GuardedBy { locks: [\"&a\", \"&b->c\"]"),
        "{joined}"
    );
    assert!(
        joined.contains("10:lruvec.lru_lock Locked(\"spin_lock_irq\")"),
        "{joined}"
    );
    assert!(
        joined.contains("11:lru_gen_folio.max_seq Written(Once, [Held { member: Some((\"lruvec\", \"lru_lock\"))"),
        "{joined}"
    );
    assert!(
        joined.contains("13:lru_gen_folio.evicted Written(Atomic(\"atomic_long_add\"), [])"),
        "{joined}"
    );
    assert!(
        joined.contains("13:lruvec.lrugen.evicted Written(Atomic"),
        "{joined}"
    );
    assert!(
        joined.contains("14:lru_gen_folio.gen Written(Assign, [])"),
        "{joined}"
    );
}

#[test]
fn must_hold_data_race_and_per_cpu_are_read() {
    let text = "static void g(struct lruvec *lruvec)\n\t__must_hold(&lruvec->lru_lock)\n{\n\
        \tlruvec->lrugen.gen = 1;\n\tdata_race(lruvec->lrugen.seg++);\n\tthis_cpu_inc(lruvec->lrugen.stats->n);\n}\n";
    let types = ["lru_gen_folio".to_owned(), "lruvec".to_owned()];
    let got = read(text, "b.c", &types);
    let said: Vec<String> = got
        .iter()
        .filter(|d| d.ty == "lru_gen_folio")
        .map(|d| format!("{}:{} {:?}", d.line, d.path, d.said))
        .collect();
    let joined = said.join("\n");
    assert!(
        joined.contains("4:gen Written(Assign, [Held { member: Some((\"lruvec\", \"lru_lock\")), text: \"&lruvec->lru_lock\", how: \"__must_hold\", shared: false }])"),
        "{joined}"
    );
    assert!(joined.contains("5:seg Written(DataRace,"), "{joined}");
    assert!(
        joined.contains("6:stats.n PerCpu(\"this_cpu_inc\")"),
        "{joined}"
    );
}

#[test]
fn a_headers_lock_wrappers_take_and_release_their_arguments_lock() {
    // mmap_lock.h's shapes: a wrapper, a killable one, an assertion, a
    // release, and a wrapper of a wrapper (found in the second round).
    let header = "static inline void mmap_write_lock(struct mm_struct *mm)\n{\n\ttrace(mm);\n\tdown_write(&mm->mmap_lock);\n}\n\
        static inline int mmap_write_lock_killable(struct mm_struct *mm)\n{\n\tint ret;\n\tret = down_write_killable(&mm->mmap_lock);\n\treturn ret;\n}\n\
        static inline void mmap_assert_write_locked(const struct mm_struct *mm)\n{\n\trwsem_assert_held_write(&mm->mmap_lock);\n}\n\
        static inline void mmap_write_unlock(struct mm_struct *mm)\n{\n\tup_write(&mm->mmap_lock);\n}\n\
        static inline void task_mm_lock(int flags, struct task_struct *t)\n{\n\tmmap_write_lock(t->mm);\n}\n\
        static inline void balanced(struct mm_struct *mm)\n{\n\tdown_write(&mm->mmap_lock);\n\tup_write(&mm->mmap_lock);\n}\n\
        static inline bool mmap_read_trylock(struct mm_struct *mm)\n{\n\treturn down_read_trylock(&mm->mmap_lock) != 0;\n}\n";
    let mut wrappers = Wrappers::default();
    for _ in 0..WRAPPER_ROUNDS {
        wrappers = wrappers_in(header, &NoTypes, &wrappers);
    }
    let effect = |name: &str| wrappers.get(name).cloned().unwrap_or_default();
    let take = |param, member: &str| Effect {
        param,
        member: member.to_owned(),
        release: false,
        shared: false,
    };
    assert_eq!(effect("mmap_write_lock"), [take(0, "mmap_lock")]);
    assert_eq!(effect("mmap_write_lock_killable"), [take(0, "mmap_lock")]);
    assert_eq!(effect("mmap_assert_write_locked"), [take(0, "mmap_lock")]);
    assert_eq!(
        effect("mmap_write_unlock"),
        [Effect {
            release: true,
            ..take(0, "mmap_lock")
        }]
    );
    assert_eq!(effect("task_mm_lock"), [take(1, "mm->mmap_lock")]);
    assert!(effect("balanced").is_empty());
    // spin_lock_init() takes nothing; pthread_mutex_lock has "read" in
    // it, not as a word.
    assert!(!is_lock("spin_lock_init") && !is_lock("spin_is_locked") && is_lock("spin_lock_irq"));
    assert!(!is_shared("pthread_mutex_lock") && is_shared("down_read_trylock"));
    assert_eq!(
        effect("mmap_read_trylock"),
        [Effect {
            shared: true,
            ..take(0, "mmap_lock")
        }]
    );

    // A caller: the write between the wrappers is under mm's lock, the
    // one after is not; the wrapper is the lock's taker.
    let code = "void set(struct mm_struct *mm, void *f)\n{\n\tmmap_write_lock(mm);\n\trcu_assign_pointer(mm->exe_file, f);\n\tmmap_write_unlock(mm);\n\tmm->flags = 0;\n}\n";
    let types = ["mm_struct".to_owned()];
    let got = functions(code, Path::new("fork.c"), &types, &NoTypes, &wrappers).declarations;
    let said: Vec<String> = got
        .iter()
        .map(|d| format!("{}:{} {:?}", d.line, d.path, d.said))
        .collect();
    assert_eq!(
        said,
        [
            "3:mmap_lock Locked(\"mmap_write_lock\")",
            "4:exe_file Written(Release(\"rcu_assign_pointer\"), [Held { member: Some((\"mm_struct\", \"mmap_lock\")), text: \"&mm->mmap_lock\", how: \"mmap_write_lock\", shared: false }])",
            "6:flags Written(Assign, [])",
        ],
        "{said:#?}"
    );
    // Two definitions of one name that disagree make no wrapper.
    let other = "static void mmap_write_lock(struct mm_struct *mm, struct x *y)\n{\n\tspin_lock(&y->lock);\n}\n";
    let merged = wrappers.merge(wrappers_in(other, &NoTypes, &Wrappers::default()));
    assert!(merged.get("mmap_write_lock").is_none());
    assert!(merged.get("mmap_write_unlock").is_some());
}

#[test]
fn an_unlock_then_leaving_keeps_the_lock_only_inside_the_function() {
    let code = "int f(struct lruvec *s, int x)\n{\n\tspin_lock(&s->l);\n\tif (x) {\n\t\tspin_unlock(&s->l);\n\t\tgoto out;\n\t}\n\
        \ts->c = 3;\n\tspin_unlock(&s->l);\n\ts->b = 2;\n\treturn 0;\nout:\n\treturn 1;\n}\n";
    let types = ["lruvec".to_owned()];
    let got = read(code, "f.c", &types);
    let held = |path: &str| -> Vec<String> {
        got.iter()
            .find_map(|d| match &d.said {
                Said::Written(_, held) if d.path == path => {
                    Some(held.iter().map(|h| h.text.clone()).collect())
                }
                _ => None,
            })
            .unwrap()
    };
    // The branch that unlocks and leaves releases nothing after it; the
    // unlock in the body itself releases, its final return
    // notwithstanding.
    assert_eq!(held("c"), ["&s->l"]);
    assert!(held("b").is_empty());
}

#[test]
fn a_system_calls_body_is_read_as_a_function() {
    let code = "SYSCALL_DEFINE1(brk, unsigned long, brk)\n{\n\tstruct lruvec *s = get();\n\tspin_lock(&s->l);\n\ts->b = brk;\n\tspin_unlock(&s->l);\n\treturn 0;\n}\n";
    let types = ["lruvec".to_owned()];
    let got = functions(
        code,
        Path::new("mmap.c"),
        &types,
        &NoTypes,
        &Wrappers::default(),
    );
    let said: Vec<String> = got
        .declarations
        .iter()
        .map(|d| format!("{}:{} {:?} in {:?}", d.line, d.path, d.said, d.function))
        .collect();
    assert!(
        said.iter().any(|d| d
            .starts_with("5:b Written(Assign, [Held { member: Some((\"lruvec\", \"l\"))")
            && d.ends_with("in Some(\"sys_brk\")")),
        "{said:#?}"
    );
    assert_eq!(got.defined, ["sys_brk"]);
}

#[test]
fn a_members_line_is_its_names_not_a_bound_or_an_attribute() {
    let text = "struct a {\n\tlong ev[N][M];\n\tspinlock_t lock ____cacheline_aligned_in_smp;\n\tint b : 3;\n};\n";
    let got = members(text, Path::new("a.h"), &["a".to_owned()]);
    let declared: Vec<(String, usize)> = got.iter().map(|d| (d.path.clone(), d.line)).collect();
    assert_eq!(
        declared,
        [
            ("ev".to_owned(), 2),
            ("lock".to_owned(), 3),
            ("b".to_owned(), 4)
        ]
    );
}
