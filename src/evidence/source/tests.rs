//! The source reader on snippets of C.

use super::members::members;
use super::vocabulary::{is_lock, is_shared};
use super::walk::functions;
use super::wrappers::{Act, Effect};
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
/// about `types`, no wrapper known, but the needless-store candidates
/// (see [`stores`]).
fn read(code: &str, file: &str, types: &[String]) -> Vec<Declaration> {
    let mut out = stores(code, file, types);
    out.retain(|d| !matches!(d.said, Said::Needless(_)));
    out
}

/// [`read`], with the needless-store candidates.
fn stores(code: &str, file: &str, types: &[String]) -> Vec<Declaration> {
    functions(
        code,
        Path::new(file),
        Wanted::Only(types),
        &NoTypes,
        &Wrappers::default(),
    )
    .declarations
}

/// The writes of `ty` in `code` (a `.c` file), with `wrappers` known, in
/// line order: each one's line, path and the locks held there.
fn writes_under(code: &str, ty: &str, wrappers: &Wrappers) -> Vec<(usize, String, Vec<Held>)> {
    let types = [ty.to_owned()];
    let mut out: Vec<(usize, String, Vec<Held>)> = functions(
        code,
        Path::new("f.c"),
        Wanted::Only(&types),
        &NoTypes,
        wrappers,
    )
    .declarations
    .into_iter()
    .filter_map(|d| match d.said {
        Said::Written(_, held) => Some((d.line, d.path, held)),
        _ => None,
    })
    .collect();
    out.sort_by_key(|(line, _, _)| *line);
    out
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
    let mut got = members(text, Path::new("a.c"), Wanted::Only(&types));
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
        joined.contains("4:gen Written(Assign, [Held { member: Some((\"lruvec\", \"lru_lock\")), chain: [(\"lruvec\", \"lru_lock\")], text: \"&lruvec->lru_lock\", how: \"__must_hold\", shared: false, global_mutex: false }])"),
        "{joined}"
    );
    assert!(joined.contains("5:seg Written(DataRace,"), "{joined}");
    assert!(
        joined.contains("6:stats PerCpu(\"this_cpu_inc\")"),
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
        act: Act::Take { shared: false },
    };
    assert_eq!(effect("mmap_write_lock"), [take(0, "mmap_lock")]);
    assert_eq!(effect("mmap_write_lock_killable"), [take(0, "mmap_lock")]);
    assert_eq!(effect("mmap_assert_write_locked"), [take(0, "mmap_lock")]);
    assert_eq!(
        effect("mmap_write_unlock"),
        [Effect {
            act: Act::Release,
            ..take(0, "mmap_lock")
        }]
    );
    assert_eq!(effect("task_mm_lock"), [take(1, "mm->mmap_lock")]);
    assert!(effect("balanced").is_empty());
    // spinlock.h's own definitions are the vocabulary, not wrappers of
    // what they call (else `spin_lock(&mm->arg_lock)` holds `arg_lock.rlock`).
    let spinlock = "static __always_inline void spin_lock(spinlock_t *lock)\n{\n\traw_spin_lock(&lock->rlock);\n}\n\
        static __always_inline void spin_unlock(spinlock_t *lock)\n{\n\traw_spin_unlock(&lock->rlock);\n}\n";
    let own = wrappers_in(spinlock, &NoTypes, &Wrappers::default());
    assert!(own.get("spin_lock").is_none() && own.get("spin_unlock").is_none());
    // spin_lock_init() takes nothing; pthread_mutex_lock has "read" in
    // it, not as a word.
    assert!(!is_lock("spin_lock_init") && !is_lock("spin_is_locked") && is_lock("spin_lock_irq"));
    assert!(!is_shared("pthread_mutex_lock") && is_shared("down_read_trylock"));
    assert_eq!(
        effect("mmap_read_trylock"),
        [Effect {
            act: Act::Take { shared: true },
            ..take(0, "mmap_lock")
        }]
    );

    // A caller: the write between the wrappers is under mm's lock, the
    // one after is not; the wrapper is the lock's taker.
    let code = "void set(struct mm_struct *mm, void *f)\n{\n\tmmap_write_lock(mm);\n\trcu_assign_pointer(mm->exe_file, f);\n\tmmap_write_unlock(mm);\n\tmm->flags = 0;\n}\n";
    let types = ["mm_struct".to_owned()];
    let mut got = functions(
        code,
        Path::new("fork.c"),
        Wanted::Only(&types),
        &NoTypes,
        &wrappers,
    )
    .declarations;
    got.retain(|d| !matches!(d.said, Said::Needless(_)));
    let said: Vec<String> = got
        .iter()
        .map(|d| format!("{}:{} {:?}", d.line, d.path, d.said))
        .collect();
    assert_eq!(
        said,
        [
            "3:mmap_lock Locked(\"mmap_write_lock\")",
            "4:exe_file Written(Release(\"rcu_assign_pointer\"), [Held { member: Some((\"mm_struct\", \"mmap_lock\")), chain: [(\"mm_struct\", \"mmap_lock\")], text: \"&mm->mmap_lock\", how: \"mmap_write_lock\", shared: false, global_mutex: false }])",
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
fn a_headers_lock_macros_are_wrappers_too() {
    // xarray.h's, RCU's (rcu.h: `ACCESS_PRIVATE()` in a `do { } while
    // (0)`), a macro of a macro (`xas_lock()`), and spinlock.h's own
    // macro, which stays the vocabulary.
    let header = "#define xa_lock_irq(xa)\t\tspin_lock_irq(&(xa)->xa_lock)\n\
        #define xa_unlock_irq(xa)\tspin_unlock_irq(&(xa)->xa_lock)\n\
        #define xas_lock_irq(xas)\txa_lock_irq((xas)->xa)\n\
        #define raw_spin_lock_irqsave_rcu_node(p, flags)\t\t\t\\\n\
        do {\t\t\t\t\t\t\t\t\t\\\n\
        \traw_spin_lock_irqsave(&ACCESS_PRIVATE(p, lock), flags);\t\\\n\
        \tsmp_mb__after_unlock_lock();\t\t\t\t\t\\\n\
        } while (0)\n\
        #define raw_spin_unlock_irqrestore_rcu_node(p, flags)\t\t\t\\\n\
        do {\t\t\t\t\t\t\t\t\t\\\n\
        \tlockdep_assert_irqs_disabled();\t\t\t\t\t\\\n\
        \traw_spin_unlock_irqrestore(&ACCESS_PRIVATE(p, lock), flags);\t\\\n\
        } while (0)\n\
        #define spin_lock_irqsave(lock, flags)\t\t\t\t\\\n\
        do {\t\t\t\t\t\t\t\\\n\
        \traw_spin_lock_irqsave(&(lock)->rlock, flags);\t\\\n\
        } while (0)\n\
        #define SQUARE(x) ((x) * (x))\n\
        static inline int unrelated(void) { return 0; }\n";
    let mut wrappers = Wrappers::default();
    for _ in 0..WRAPPER_ROUNDS {
        wrappers = wrappers_in(header, &NoTypes, &wrappers);
    }
    let effect = |name: &str| wrappers.get(name).cloned().unwrap_or_default();
    let take = |member: &str, release| Effect {
        param: 0,
        member: member.to_owned(),
        act: match release {
            true => Act::Release,
            false => Act::Take { shared: false },
        },
    };
    assert_eq!(effect("xa_lock_irq"), [take("xa_lock", false)]);
    assert_eq!(effect("xa_unlock_irq"), [take("xa_lock", true)]);
    assert_eq!(effect("xas_lock_irq"), [take("xa->xa_lock", false)]);
    assert_eq!(
        effect("raw_spin_lock_irqsave_rcu_node"),
        [take("lock", false)]
    );
    assert_eq!(
        effect("raw_spin_unlock_irqrestore_rcu_node"),
        [take("lock", true)]
    );
    assert!(wrappers.get("spin_lock_irqsave").is_none());
    assert!(wrappers.get("SQUARE").is_none());

    // A caller's write between them is under the node's lock, whatever
    // the variable is called; the one after it is not.
    let code = "static void report(struct rcu_node *rnp_root, unsigned long flags)\n{\n\
        \traw_spin_lock_irqsave_rcu_node(rnp_root, flags);\n\
        \trnp_root->qsmask = 0;\n\
        \traw_spin_unlock_irqrestore_rcu_node(rnp_root, flags);\n\
        \trnp_root->gp_seq = 1;\n}\n";
    // Each write of `ty` in `code`: its path, and each lock held there
    // with the member it is.
    let written = |code: &str, ty: &str, wrappers: &Wrappers| -> Vec<String> {
        writes_under(code, ty, wrappers)
            .iter()
            .map(|(_, path, held)| {
                let locks: Vec<_> = held.iter().map(|h| (&h.text, &h.member)).collect();
                format!("{path} {locks:?}")
            })
            .collect()
    };
    assert_eq!(
        written(code, "rcu_node", &wrappers),
        [
            "qsmask [(\"&rnp_root->lock\", Some((\"rcu_node\", \"lock\")))]",
            "gp_seq []"
        ]
    );
    // The page cache's: the lock an iteration state's wrapper takes is
    // the lock of the object the state was declared on.
    let code = "static void add(struct address_space *mapping, long nr)\n{\n\
        \tXA_STATE(xas, &mapping->i_pages, 0);\n\
        \txas_lock_irq(&xas);\n\
        \tmapping->nrpages += nr;\n\
        \txas_unlock_irq(&xas);\n\
        \tmapping->nrpages = 0;\n}\n";
    let wrappers = wrappers.clone().merge(wrappers_in(
        "#define xas_unlock_irq(xas)\txa_unlock_irq((xas)->xa)\nstatic inline int f(void) { return 0; }\n",
        &NoTypes,
        &wrappers,
    ));
    assert_eq!(
        written(code, "address_space", &wrappers),
        [
            "nrpages [(\"&mapping->i_pages.xa_lock\", Some((\"address_space\", \"i_pages.xa_lock\")))]",
            "nrpages []"
        ]
    );
}

#[test]
fn a_lock_held_again_is_held_once_by_its_taker() {
    // RCU's shape: the holder calls a header's helper that asserts the
    // lock (tree_plugin.h's dump_blkd_tasks()); and a trylock with the
    // lock as its fallback. One unlock releases each.
    // And a helper that drops its caller's lock and takes it again
    // (mptcp's path manager's): the lock is still held after it.
    let header = "static inline void dump(struct lruvec *s)\n{\n\tlockdep_assert_held(&s->l);\n}\n\
        static inline void relock(struct lruvec *s)\n{\n\tspin_unlock(&s->l);\n\tcond_resched();\n\tspin_lock(&s->l);\n}\n";
    let wrappers = wrappers_in(header, &NoTypes, &Wrappers::default());
    let code = "void f(struct lruvec *s)\n{\n\tspin_lock(&s->l);\n\tdump(s);\n\ts->c = 1;\n\
        \tspin_unlock(&s->l);\n\ts->b = 2;\n}\n\
        void g(struct lruvec *s)\n{\n\tif (!spin_trylock(&s->l))\n\t\tspin_lock(&s->l);\n\
        \ts->c = 3;\n\tspin_unlock(&s->l);\n\ts->b = 4;\n}\n\
        void h(struct lruvec *s)\n{\n\tspin_lock(&s->l);\n\trelock(s);\n\ts->c = 5;\n\
        \tspin_unlock(&s->l);\n\ts->b = 6;\n}\n";
    let said: Vec<String> = writes_under(code, "lruvec", &wrappers)
        .iter()
        .map(|(line, path, held)| {
            let how: Vec<&str> = held.iter().map(|h| h.how.as_str()).collect();
            format!("{line}:{path} {how:?}")
        })
        .collect();
    assert_eq!(
        said,
        [
            "5:c [\"spin_lock\"]",
            "7:b []",
            "13:c [\"spin_trylock\"]",
            "15:b []",
            "21:c [\"relock\"]",
            "23:b []"
        ]
    );
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
        Wanted::Only(&types),
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
fn functions_named_as_values_are_the_files_callbacks_and_its_ops_tables() {
    let text = "static void reset_task(struct work_struct *w) { }
static void each_queue(struct net_device *dev, struct netdev_queue *q, void *arg) { }
static int open(struct net_device *dev) { return 0; }
static int helper(int len) { return len; }
static void setup(struct net_device *dev, struct work_struct *w, int len)
{
	INIT_WORK(w, reset_task);
	netdev_for_each_tx_queue(dev, each_queue, NULL);
	netdev_for_each_tx_queue(dev, each_elsewhere, NULL);
	list_for_each_entry(q, &dev->queues, node)
		helper(len);
	dev->destructor = teardown;
	helper(len);
	open(dev);
}
static const struct net_device_ops ops = {
	.ndo_open = open,
	.ndo_stop = stop_elsewhere,
};
";
    let got = walk::functions(
        text,
        Path::new("drv.c"),
        Wanted::Only(&[]),
        &NoTypes,
        &Wrappers::default(),
    );
    // `teardown` is not this file's (a variable, for all it knows);
    // `stop_elsewhere` is named at file scope, where only functions are.
    assert_eq!(got.named, ["open", "reset_task", "stop_elsewhere"]);
    // An iterator calls its callback there and then; a list iterator's
    // cursor and member, and a callback this file does not define, are
    // no calls.
    let iterated: Vec<&str> = got
        .calls
        .iter()
        .filter(|c| c.caller == "setup" && !c.pointer)
        .map(|c| c.callee.as_str())
        .collect();
    assert_eq!(
        iterated,
        [
            "INIT_WORK",
            "netdev_for_each_tx_queue",
            "netdev_for_each_tx_queue",
            "list_for_each_entry",
            "helper",
            "helper",
            "open",
            "each_queue"
        ]
    );
}

#[test]
fn a_members_line_is_its_names_not_a_bound_or_an_attribute() {
    let text = "struct a {\n\tlong ev[N][M];\n\tspinlock_t lock ____cacheline_aligned_in_smp;\n\tint b : 3;\n};\n";
    let got = members(text, Path::new("a.h"), Wanted::Only(&["a".to_owned()]));
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

/// The types of the kernel snippets below: what each struct's members
/// are, through pointers.
struct Net;
impl Types for Net {
    fn member_type(&self, ty: &str, member: &str) -> Option<String> {
        match (ty, member) {
            ("napi_struct", "skb") => Some("sk_buff".into()),
            ("sk_buff", "sk") => Some("sock".into()),
            ("sock", "sk_lock") => Some("socket_lock_t".into()),
            ("rq", "__lock") => Some("raw_spinlock".into()),
            _ => None,
        }
    }
    fn canonical(&self, ty: &str) -> String {
        ty.to_owned()
    }
}

fn read_net(code: &str, file: &str) -> Vec<Declaration> {
    let types: Vec<String> = [
        "napi_struct",
        "sk_buff",
        "sock",
        "Qdisc",
        "softnet_data",
        "rq",
    ]
    .map(String::from)
    .into();
    let mut out = read_all(&[(Path::new(file), code)], &types, &Net);
    out.retain(|d| !matches!(d.said, Said::Needless(_)));
    out
}

fn said(ds: &[Declaration], ty: &str, path: &str) -> Vec<(Said, Role, String)> {
    ds.iter()
        .filter(|d| d.ty == ty && d.path == path)
        .map(|d| {
            (
                d.said.clone(),
                d.role,
                d.function.clone().unwrap_or_default(),
            )
        })
        .collect()
}

/// The role and function of each declaration about `ty.path`.
fn roles(ds: &[Declaration], ty: &str, path: &str) -> Vec<(Role, String)> {
    said(ds, ty, path)
        .into_iter()
        .map(|(_, r, f)| (r, f))
        .collect()
}

/// [`roles`], by function name.
fn roles_by_function(ds: &[Declaration], ty: &str, path: &str) -> Vec<(Role, String)> {
    let mut got = roles(ds, ty, path);
    got.sort_by(|a, b| a.1.cmp(&b.1));
    got
}

#[test]
fn construction_and_the_control_path_are_told_from_fast_path_writes() {
    let code = "void netif_napi_add_weight(struct net_device *dev, struct napi_struct *napi, int weight)\n\
        {\n\tINIT_LIST_HEAD(&napi->poll_list);\n\tnapi->weight = weight;\n}\n\
        static int tbf_change(struct Qdisc *sch, struct nlattr *opt, struct netlink_ext_ack *extack)\n\
        {\n\tsch->limit = 5;\n}\n\
        static struct Qdisc *qdisc_alloc(void)\n{\n\tstruct Qdisc *sch = kzalloc(64, GFP_KERNEL);\n\tsch->limit = 1;\n\treturn sch;\n}\n\
        void napi_complete_done(struct napi_struct *n)\n{\n\tlist_del_init(&n->poll_list);\n\tn->weight = 0;\n}\n";
    let ds = read_net(code, "dev.c");
    let weight = said(&ds, "napi_struct", "weight");
    assert_eq!(
        weight
            .iter()
            .map(|(_, r, f)| (*r, f.as_str()))
            .collect::<Vec<_>>(),
        [
            (Role::Construction, "netif_napi_add_weight"),
            // list_del_init() empties a list in use: no construction.
            (Role::Fast, "napi_complete_done")
        ],
        "{weight:?}"
    );
    let limit = said(&ds, "Qdisc", "limit");
    assert_eq!(
        limit
            .iter()
            .map(|(_, r, f)| (*r, f.as_str()))
            .collect::<Vec<_>>(),
        [
            (Role::Control, "tbf_change"),
            (Role::Construction, "qdisc_alloc")
        ],
        "{limit:?}"
    );
}

#[test]
fn a_cgroup_files_and_a_module_parameters_handlers_are_the_control_path() {
    // memcg's memory.max, cpu.shares and a module parameter: written by
    // the writes to their files, never on a fast path; and a setter the
    // controller's reset of a cgroup calls.
    let code = "static ssize_t limit_write(struct kernfs_open_file *of, char *buf, size_t nbytes, loff_t off)\n\
        {\n\tstruct Qdisc *sch = of_sch(of);\n\txchg(&sch->limit, 5);\n}\n\
        static int limit_write_u64(struct cgroup_subsys_state *css, struct cftype *cft, u64 val)\n\
        {\n\tstruct Qdisc *sch = css_sch(css);\n\tsch->limit = val;\n}\n\
        static int limit_param_set(const char *val, const struct kernel_param *kp)\n\
        {\n\tstruct Qdisc *sch = default_qdisc;\n\tsch->limit = 7;\n}\n\
        static void q_css_reset(struct cgroup_subsys_state *css)\n\
        {\n\tqdisc_set_limit(css_sch(css), 8);\n}\n\
        void qdisc_set_limit(struct Qdisc *sch, int limit)\n{\n\tWRITE_ONCE(sch->limit, limit);\n}\n\
        void qdisc_run(struct Qdisc *sch)\n{\n\tsch->limit = 0;\n}\n";
    let ds = read_net(code, "cgroup.c");
    let limit = roles(&ds, "Qdisc", "limit");
    assert_eq!(
        limit,
        [
            (Role::Control, "limit_write".into()),
            (Role::Control, "limit_write_u64".into()),
            (Role::Control, "limit_param_set".into()),
            // Called by the controller's reset only.
            (Role::Control, "qdisc_set_limit".into()),
            (Role::Fast, "qdisc_run".into())
        ],
        "{limit:?}"
    );
}

#[test]
fn a_seq_file_show_handlers_reads_are_the_control_paths() {
    // pids.max's show handler reads the limit when someone reads the
    // file; the fork path reads it on every fork.
    let code = "static int limit_show(struct seq_file *sf, void *v)\n\
        {\n\tstruct Qdisc *sch = sf_sch(sf);\n\tseq_printf(sf, \"%d\", READ_ONCE(sch->limit));\n\treturn 0;\n}\n\
        int qdisc_enqueue(struct Qdisc *sch)\n{\n\treturn READ_ONCE(sch->limit);\n}\n";
    let ds = read_net(code, "cgroup.c");
    let limit = roles(&ds, "Qdisc", "limit");
    assert_eq!(
        limit,
        [
            (Role::Control, "limit_show".into()),
            (Role::Fast, "qdisc_enqueue".into())
        ],
        "{limit:?}"
    );
}

#[test]
fn a_new_object_seen_as_another_type_is_still_being_built() {
    // inet_reqsk_alloc(): the request socket just allocated, written
    // through its views before anyone else can see it; a socket looked
    // up is no view of a new one.
    let code = "struct sock *sk_build(const struct sock *listener)\n{\n\
        \tstruct request_sock *req = reqsk_alloc_noprof(listener);\n\
        \tstruct sock *sk = req_to_sk(req);\n\
        \tstruct sock *full = (struct sock *)req;\n\
        \tstruct sock *tcp = container_of(full, struct sock, sk_common);\n\
        \tsk->sk_mark = listener->sk_mark;\n\tfull->sk_priority = 1;\n\ttcp->sk_hash = 2;\n\
        \treturn sk;\n}\n\
        void sk_touch(struct sock *listener)\n{\n\
        \tstruct sock *sk = sk_lookup(listener);\n\tsk->sk_mark = 2;\n}\n";
    let ds = read_net(code, "inet_connection_sock.c");
    let writes = |path: &str| -> Vec<(Role, String)> {
        said(&ds, "sock", path)
            .into_iter()
            .filter(|(s, ..)| matches!(s, Said::Written(..)))
            .map(|(_, r, f)| (r, f))
            .collect()
    };
    assert_eq!(
        writes("sk_mark"),
        [
            (Role::Construction, "sk_build".into()),
            (Role::Fast, "sk_touch".into())
        ]
    );
    assert_eq!(
        writes("sk_priority"),
        [(Role::Construction, "sk_build".into())]
    );
    assert_eq!(writes("sk_hash"), [(Role::Construction, "sk_build".into())]);
}

#[test]
fn an_object_reached_through_a_built_one_is_built_only_when_allocated_here() {
    // copy_thread() builds the new task p; p->skb is a shared object it
    // points to. srcu-like: the object at n->skb is allocated here.
    let code = "int copy_thread(struct napi_struct *p)\n{\n\tmemset(p, 0, 8);\n\
        \tp->weight = 1;\n\tp->skb->len = 2;\n}\n\
        int init_fields(struct napi_struct *n)\n{\n\tn->skb = kzalloc(64, GFP_KERNEL);\n\
        \tn->skb->len = 3;\n\tn->weight = 4;\n}\n";
    let ds = read_net(code, "fork.c");
    let roles = |ty: &str, path: &str| roles(&ds, ty, path);
    assert_eq!(
        roles("napi_struct", "weight"),
        [
            (Role::Construction, "copy_thread".into()),
            (Role::Fast, "init_fields".into())
        ]
    );
    assert_eq!(
        roles("sk_buff", "len"),
        [
            (Role::Fast, "copy_thread".into()),
            (Role::Construction, "init_fields".into())
        ]
    );
}

#[test]
fn teardown_is_told_from_use_by_name_exit_and_callers() {
    let code = "void inet_csk_destroy_sock(struct sock *sk)\n{\n\tsk->sk_state = 7;\n\
        \tsk_stream_kill_queues(sk);\n\tsock_put(sk);\n}\n\
        void sk_stream_kill_queues(struct sock *sk)\n{\n\tsk->sk_reserved_mem = 0;\n}\n\
        void sock_put(struct sock *sk)\n{\n\tsk->sk_mark = 0;\n}\n\
        void tcp_close(struct sock *sk)\n{\n\tsock_put(sk);\n\tsk->sk_state = 8;\n}\n\
        static void __exit caif_exit(struct sock *sk)\n{\n\tsk->sk_state = 9;\n}\n\
        static void caif_sock_destructor(struct sock *sk, struct genl_info *info)\n{\n\tsk->sk_mark = 1;\n}\n\
        static void sk_free(struct sock *sk)\n{\n\tsk->sk_mark = 2;\n}\n\
        void napi_destroy(struct napi_struct *napi)\n{\n\tnapi->weight = 1;\n\tnapi->skb->len = 0;\n}\n\
        void xprt_destroy_bc(struct sock *sk)\n{\n\tspin_lock_bh(&sk->sk_lock.slock);\n\
        \tsk->sk_reserved_mem = 5;\n\tspin_unlock_bh(&sk->sk_lock.slock);\n}\n";
    let ds = read_net(code, "sock.c");
    let roles = |path: &str| -> Vec<(Role, String)> {
        said(&ds, "sock", path)
            .into_iter()
            .map(|(_, r, f)| (r, f))
            .collect()
    };
    assert_eq!(
        roles("sk_state"),
        [
            (Role::Teardown, "inet_csk_destroy_sock".into()),
            (Role::Fast, "tcp_close".into()),
            (Role::Teardown, "caif_exit".into()),
        ]
    );
    // Only the destroy function calls the helper: its parameter is torn
    // down. `sock_put()` is called on sockets in use too. A destructor
    // that is also a netlink handler is the control path's; `sk_free()`
    // is no teardown by its name.
    // The skb a napi points to lives on.
    assert_eq!(said(&ds, "napi_struct", "weight")[0].1, Role::Teardown);
    assert_eq!(said(&ds, "sk_buff", "len")[0].1, Role::Fast);
    // A destroy function that takes the object's lock tears down a part
    // of an object that lives on.
    assert_eq!(
        roles("sk_reserved_mem"),
        [
            (Role::Teardown, "sk_stream_kill_queues".into()),
            (Role::Fast, "xprt_destroy_bc".into())
        ]
    );
    assert_eq!(
        roles("sk_mark"),
        [
            (Role::Fast, "sock_put".into()),
            (Role::Control, "caif_sock_destructor".into()),
            (Role::Fast, "sk_free".into()),
        ]
    );
}

#[test]
fn reads_non_atomic_bit_ops_and_members_reached_through_pointers() {
    let code = "void ____napi_schedule(struct napi_struct *napi)\n{\n\
        \tif (READ_ONCE(napi->poll))\n\t\tnapi->weight++;\n\
        \t__set_bit(1, &napi->state);\n\
        \tspin_lock(&napi->skb->sk->sk_lock.slock);\n\
        \tnapi->skb->sk->sk_mark = 1;\n\
        \tif (!napi->destroy_cnt++)\n\t\treturn;\n\
        \t*napi->thread = 0;\n}\n";
    let ds = read_net(code, "dev.c");
    assert_eq!(
        said(&ds, "napi_struct", "poll"),
        [(
            Said::Read {
                once: true,
                remote: false
            },
            Role::Fast,
            "____napi_schedule".into()
        )]
    );
    assert!(matches!(
        &said(&ds, "napi_struct", "state")[0].0,
        Said::Written(Write::NonAtomic(n), _) if n == "__set_bit"
    ));
    assert!(!Write::NonAtomic("__set_bit".into()).lockless());
    // `!p->n++` is a write.
    assert!(matches!(
        &said(&ds, "napi_struct", "destroy_cnt")[0].0,
        Said::Written(Write::Assign, _)
    ));
    // The lock and the write are the socket's, not members of the napi
    // or the skb that point to it; the pointers themselves are read.
    assert!(
        ds.iter()
            .all(|d| !(d.ty == "napi_struct" && d.path.starts_with("skb.")
                || d.ty == "sk_buff" && d.path.starts_with("sk."))),
        "{ds:#?}"
    );
    assert!(matches!(
        said(&ds, "sock", "sk_lock.slock")[0].0,
        Said::Locked(_)
    ));
    assert!(matches!(
        said(&ds, "sock", "sk_mark")[0].0,
        Said::Written(..)
    ));
    assert_eq!(
        said(&ds, "napi_struct", "skb")[0].0,
        Said::Read {
            once: false,
            remote: false
        }
    );
    assert_eq!(
        said(&ds, "sk_buff", "sk")[0].0,
        Said::Read {
            once: false,
            remote: false
        }
    );
    // `*p->thread = 0` writes what `thread` points to: `thread` is read.
    assert_eq!(
        said(&ds, "napi_struct", "thread"),
        [(
            Said::Read {
                once: false,
                remote: false
            },
            Role::Fast,
            "____napi_schedule".into()
        )]
    );
}

#[test]
fn atomic_reads_and_bit_tests_are_lockless_loads_of_their_member() {
    // `__fget_light()` reads files->count on every fd lookup; a napi's
    // state bits are tested on every poll. Neither is a write.
    let code = "struct file *napi_poll_once(struct napi_struct *n, struct Qdisc *q)\n{\n\
        \tif (atomic_read_acquire(&n->count) == 1)\n\t\treturn NULL;\n\
        \tif (test_bit(NAPI_STATE_SCHED, &n->state))\n\t\treturn NULL;\n\
        \tif (refcount_read(&q->refcnt) > 1 || atomic_long_read(&q->defer_count))\n\t\treturn NULL;\n\
        \tif (test_and_set_bit(1, &n->flags))\n\t\treturn NULL;\n\
        \treturn NULL;\n}\n";
    let ds = read_net(code, "dev.c");
    let read = Said::Read {
        once: true,
        remote: false,
    };
    for (ty, path) in [
        ("napi_struct", "count"),
        ("napi_struct", "state"),
        ("Qdisc", "refcnt"),
        ("Qdisc", "defer_count"),
    ] {
        assert_eq!(
            said(&ds, ty, path),
            [(read.clone(), Role::Fast, "napi_poll_once".into())],
            "{ty}.{path}: {ds:#?}"
        );
    }
    // A test-and-set writes: no read of its own.
    assert!(matches!(
        &said(&ds, "napi_struct", "flags")[..],
        [(Said::Written(Write::Atomic(n), _), ..)] if n == "test_and_set_bit"
    ));
}

#[test]
fn the_socket_lock_and_a_c_files_own_wrappers_are_held() {
    let code = "static inline void backlog_lock_irq_disable(struct softnet_data *sd)\n{\n\
        \tspin_lock_irq(&sd->input_pkt_queue.lock);\n}\n\
        static void backlog_unlock_irq_enable(struct softnet_data *sd)\n{\n\
        \tspin_unlock_irq(&sd->input_pkt_queue.lock);\n}\n\
        static void process_backlog(struct softnet_data *sd)\n{\n\
        \tbacklog_lock_irq_disable(sd);\n\tsd->in_net_rx_action = 1;\n\
        \tbacklog_unlock_irq_enable(sd);\n\tsd->processed = 2;\n}\n\
        static void tcp_set(struct sock *sk)\n{\n\
        \tlock_sock(sk);\n\tsk->sk_mark = 1;\n\trelease_sock(sk);\n\tsk->sk_priority = 2;\n}\n";
    let ds = read_net(code, "dev.c");
    let held = |ty: &str, path: &str| -> Vec<String> {
        match &said(&ds, ty, path)[0].0 {
            Said::Written(_, held) => held
                .iter()
                .map(|h| format!("{} {}", h.text, h.taken()))
                .collect(),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(
        held("softnet_data", "in_net_rx_action"),
        ["&sd->input_pkt_queue.lock backlog_lock_irq_disable()"]
    );
    assert!(held("softnet_data", "processed").is_empty());
    assert_eq!(held("sock", "sk_mark"), ["&sk->sk_lock lock_sock()"]);
    assert!(held("sock", "sk_priority").is_empty());
    // A `.c` file's function that only asserts a lock is no wrapper.
    let code = "static void helper(struct sock *sk)\n{\n\tlockdep_assert_held(&sk->sk_lock);\n}\n\
        static void g(struct sock *sk)\n{\n\thelper(sk);\n\tsk->sk_mark = 1;\n}\n";
    let ds = read_net(code, "sock.c");
    assert!(matches!(&said(&ds, "sock", "sk_mark")[0].0, Said::Written(_, h) if h.is_empty()));
}

#[test]
fn a_c_files_wrappers_of_its_own_wrappers_are_followed() {
    // fs/super.c: super_lock_excl() calls super_lock(), which calls
    // __super_lock(), which takes &sb->s_umount; a function that takes
    // the lock and then calls the file's own unlock helper holds none.
    let code = "static inline void __super_lock(struct super_block *sb, bool excl)\n{\n\
        \tif (excl)\n\t\tdown_write(&sb->s_umount);\n\telse\n\t\tdown_read(&sb->s_umount);\n}\n\
        static void super_unlock(struct super_block *sb, bool excl)\n{\n\
        \tif (excl)\n\t\tup_write(&sb->s_umount);\n\telse\n\t\tup_read(&sb->s_umount);\n}\n\
        static bool super_lock(struct super_block *sb, bool excl)\n{\n\
        \tlockdep_assert_not_held(&sb->s_umount);\n\t__super_lock(sb, excl);\n\
        \tif (sb->s_flags & SB_DYING) {\n\t\tsuper_unlock(sb, excl);\n\t\treturn false;\n\t}\n\
        \treturn true;\n}\n\
        static inline bool super_lock_excl(struct super_block *sb)\n{\n\treturn super_lock(sb, true);\n}\n\
        static void peek(struct super_block *sb)\n{\n\tdown_read(&sb->s_umount);\n\
        \tsb->s_count = 0;\n\tsuper_unlock(sb, false);\n}\n\
        static void freeze(struct super_block *sb)\n{\n\tif (!super_lock_excl(sb))\n\t\treturn;\n\
        \tsb->s_writers.frozen = 1;\n\tsuper_unlock(sb, true);\n}\n\
        static void thaw(struct super_block *sb)\n{\n\tpeek(sb);\n\tsb->s_flags = 0;\n}\n";
    let writes = writes_under(code, "super_block", &Wrappers::default());
    let held = |member: &str| -> Vec<String> {
        let (_, _, held) = writes.iter().find(|(_, p, _)| p == member).unwrap();
        held.iter()
            .map(|h| format!("{} {}", h.text, h.taken()))
            .collect()
    };
    // Taken one way or the other, as __super_lock()'s caller says.
    assert_eq!(
        held("s_writers.frozen"),
        ["&sb->s_umount super_lock_excl()"; 2],
        "{writes:?}"
    );
    // Taken and released again in peek(): its caller holds nothing.
    assert!(held("s_flags").is_empty(), "{writes:?}");
}

#[test]
fn a_member_named_by_a_macro_is_the_member_it_stands_for() {
    // include/linux/dcache.h: `#define d_lock d_lockref.lock`; sock.h's
    // `#define sk_state __sk_common.skc_state`.
    struct Dentries;
    impl Types for Dentries {
        fn member_type(&self, ty: &str, member: &str) -> Option<String> {
            match (ty, member) {
                ("dentry", "d_lockref") => Some("lockref".into()),
                ("lockref", "lock") => Some("spinlock".into()),
                ("dentry", "d_flags") => Some(String::new()),
                ("sock", "__sk_common") => Some("sock_common".into()),
                _ => None,
            }
        }
        fn canonical(&self, ty: &str) -> String {
            ty.to_owned()
        }
    }
    let header = "#define d_lock\td_lockref.lock\t/* per dentry lock */\n\
        #define sk_state __sk_common.skc_state\n#define SIZE sizeof.x\n#define seq(x) x.seq\n\
        #define sk_call __sk_common.skc_prot(x)\n#define sk_struct struct.x\n";
    let wrappers = wrappers_in(header, &Dentries, &Wrappers::default());
    assert_eq!(
        wrappers.alias("d_lock"),
        Some(&["d_lockref".to_owned(), "lock".to_owned()][..])
    );
    assert!(wrappers.alias("seq").is_none());
    // A path only if every part is an identifier.
    assert!(wrappers.alias("sk_call").is_none());
    assert!(wrappers.alias("sk_struct").is_none());
    // Defined as another path elsewhere: no alias, whichever is merged.
    let other = wrappers_in(
        "#define d_lock d_other.lock\n",
        &Dentries,
        &Wrappers::default(),
    );
    assert!(
        wrappers
            .clone()
            .merge(other.clone())
            .alias("d_lock")
            .is_none()
    );
    assert!(other.merge(wrappers.clone()).alias("d_lock").is_none());
    let code = "void f(struct dentry *dentry, struct sock *sk)\n{\n\tspin_lock(&dentry->d_lock);\n\
        \tdentry->d_flags = 1;\n\tspin_unlock(&dentry->d_lock);\n\tsk->sk_state = 2;\n}\n";
    let types = ["dentry".to_owned(), "sock_common".to_owned()];
    let ds = functions(
        code,
        Path::new("f.c"),
        Wanted::Only(&types),
        &Dentries,
        &wrappers,
    )
    .declarations;
    let said: Vec<String> = ds
        .iter()
        .filter_map(|d| match &d.said {
            Said::Written(_, held) => Some(format!(
                "{}.{} {:?}",
                d.ty,
                d.path,
                held.iter().map(|h| h.member.clone()).collect::<Vec<_>>()
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        said,
        [
            "dentry.d_flags [Some((\"dentry\", \"d_lockref.lock\"))]",
            "sock_common.skc_state []",
        ]
    );
}

#[test]
fn the_run_queue_lock_is_held_through_the_schedulers_own_calls() {
    // kernel/sched: rq_lock() and lockdep_assert_rq_held() reach
    // &rq->__lock through raw_spin_rq_lock_nested() and __rq_lockp(),
    // which no wrapper follows; double_rq_lock() takes two.
    let code = "static void tick(struct rq *rq, struct rq_flags *rf)\n{\n\
        \trq_lock(rq, rf);\n\trq->clock = 1;\n\trq_unlock(rq, rf);\n\trq->nr_switches = 2;\n}\n\
        static void update(struct rq *rq)\n{\n\tlockdep_assert_rq_held(rq);\n\trq->clock_task = 3;\n}\n\
        static void pull(struct rq *a, struct rq *b)\n{\n\tdouble_rq_lock(a, b);\n\tb->nr_running = 4;\n\
        \tdouble_rq_unlock(a, b);\n}\n";
    let ds = read_net(code, "core.c");
    let held = |path: &str| -> Vec<String> {
        match &said(&ds, "rq", path)[0].0 {
            Said::Written(_, held) => held
                .iter()
                .map(|h| format!("{} {}", h.text, h.taken()))
                .collect(),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(held("clock"), ["&rq->__lock rq_lock()"]);
    assert!(held("nr_switches").is_empty(), "after rq_unlock()");
    assert_eq!(held("clock_task"), ["&rq->__lock lockdep_assert_rq_held()"]);
    assert_eq!(
        held("nr_running"),
        ["&a->__lock double_rq_lock()", "&b->__lock double_rq_lock()"]
    );
}

#[test]
fn reads_of_another_cpus_per_cpu_object_are_remote() {
    let code = "static bool busy(int cpu)\n{\n\tstruct rq *rq = cpu_rq(cpu);\n\treturn rq->nr_running > 1;\n}\n\
        static bool mine(void)\n{\n\tstruct rq *rq = cpu_rq(smp_processor_id());\n\treturn rq->nr_running > 1;\n}\n\
        static int backlog(int cpu)\n{\n\tstruct softnet_data *sd = &per_cpu(softnet_data, cpu);\n\
        \treturn sd->processed;\n}\n\
        static int again(int cpu)\n{\n\tstruct rq *rq = cpu_rq(cpu);\n\trq = this_rq();\n\treturn rq->nr_switches;\n}\n";
    let ds = read_net(code, "core.c");
    let remote = |ty: &str, path: &str, f: &str| -> bool {
        ds.iter()
            .find(|d| d.ty == ty && d.path == path && d.function.as_deref() == Some(f))
            .map(|d| matches!(d.said, Said::Read { remote: true, .. }))
            .unwrap_or_else(|| panic!("no read of {ty}.{path} in {f}"))
    };
    assert!(remote("rq", "nr_running", "busy"));
    assert!(!remote("rq", "nr_running", "mine"), "this CPU's own");
    assert!(remote("softnet_data", "processed", "backlog"));
    assert!(!remote("rq", "nr_switches", "again"), "reassigned");
}

/// The needless-store candidates `code` has about `types`, as
/// `function: struct.path kind how value`.
fn needless(code: &str, types: &[&str]) -> Vec<String> {
    let types: Vec<String> = types.iter().map(|t| t.to_string()).collect();
    stores(code, "n.c", &types)
        .into_iter()
        .filter_map(|d| match d.said {
            Said::Needless(n) if !n.tested => Some(format!(
                "{}: {}.{} {:?} {} {}",
                d.function.unwrap_or_default(),
                d.ty,
                d.path,
                n.kind,
                n.how,
                n.value
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn a_constant_stored_with_no_test_first_is_a_needless_store_and_a_tested_one_is_not() {
    let before = "static inline void lru_gen_use_mm(struct mm_struct *mm)\n{\n\tWRITE_ONCE(mm->lru_gen.bitmap, -1);\n}\n";
    assert_eq!(
        needless(before, &["mm_struct"]),
        ["lru_gen_use_mm: mm_struct.lru_gen.bitmap Constant WRITE_ONCE -1"]
    );
    // The seed's patch 1.
    let after = "static inline void lru_gen_use_mm(struct mm_struct *mm)\n{\n\tif (READ_ONCE(mm->lru_gen.bitmap) != -1UL)\n\t\tWRITE_ONCE(mm->lru_gen.bitmap, -1UL);\n}\n";
    assert!(needless(after, &["mm_struct"]).is_empty());
    // Still said, tested: a value the member is given.
    let said = stores(after, "n.c", &["mm_struct".to_owned()]);
    assert!(
        said.iter()
            .any(|d| matches!(&d.said, Said::Needless(n) if n.tested && n.value == "-1UL")),
        "{said:?}"
    );
    // A test before, through a variable read from the member, or one that
    // leaves early.
    let copy = "void f(struct s *p)\n{\n\tunsigned long old = READ_ONCE(p->m);\n\tif (old == FLAG)\n\t\treturn;\n\tp->m = FLAG;\n}\n";
    assert!(needless(copy, &["s"]).is_empty());
    // Plain stores of constants too, and of the names of constants.
    let plain = "void f(struct s *p)\n{\n\tp->m = 0;\n\tp->n = TASK_RUNNING;\n\tp->o = v;\n\tp->q = jiffies;\n}\n";
    assert_eq!(
        needless(plain, &["s"]),
        ["f: s.m Constant = 0", "f: s.n Constant = TASK_RUNNING"]
    );
}

#[test]
fn a_store_to_an_object_on_the_stack_or_being_built_is_no_needless_store() {
    let code = "void f(void)\n{\n\tstruct s local;\n\tstruct s *p = kzalloc(sizeof(*p), GFP_KERNEL);\n\tlocal.m = 0;\n\tp->m = 0;\n}\n";
    assert!(needless(code, &["s"]).is_empty());
}

#[test]
fn a_store_in_a_branch_the_code_marks_rare_is_no_needless_store() {
    // 7.3's exit_rcu(): a task exiting inside an RCU read-side section,
    // "a bug of some sort"; and the else of a likely() test.
    let code = "void exit_rcu(struct s *t)\n{\n\tif (unlikely(!list_empty(&t->node))) {\n\
        \t\tWRITE_ONCE(t->blocked, true);\n\t}\n\tif (likely(t->ok))\n\t\tt->hits = 1;\n\
        \telse\n\t\tt->m = 0;\n}\n";
    assert_eq!(needless(code, &["s"]), ["exit_rcu: s.hits Constant = 1"]);
    // check_fully_established(): once the subflow is established, the
    // likely() branch leaves; what follows runs once per connection. A
    // label the fast branch jumps to is its path again.
    let code = "bool check(struct s *t, struct o *opt)\n{\n\tif (likely(t->established)) {\n\
        \t\tif (opt->ack)\n\t\t\tsend(t);\n\t\tgoto notify;\n\t}\n\tif (opt->deny)\n\
        \t\tWRITE_ONCE(t->deny, true);\n\tcomplete(t);\nnotify:\n\tt->notified = 1;\n\
        \treturn true;\n}\n";
    assert_eq!(needless(code, &["s"]), ["check: s.notified Constant = 1"]);
    let got = functions(
        code,
        Path::new("n.c"),
        Wanted::Only(&[]),
        &NoTypes,
        &Wrappers::default(),
    );
    let rare: Vec<(&str, bool)> = got
        .calls
        .iter()
        .filter(|c| matches!(c.callee.as_str(), "send" | "complete"))
        .map(|c| (c.callee.as_str(), c.rare))
        .collect();
    assert_eq!(rare, [("send", false), ("complete", true)]);
}

#[test]
fn another_objects_member_copied_with_no_test_is_a_needless_store() {
    // 5.10's include/net/busy_poll.h, and 2b13af8ade38's fix.
    let before = "static inline void sk_mark_napi_id(struct sock *sk, const struct sk_buff *skb)\n{\n\tWRITE_ONCE(sk->sk_napi_id, skb->napi_id);\n\tsk_rx_queue_set(sk, skb);\n}\n";
    assert_eq!(
        needless(before, &["sock", "sk_buff"]),
        ["sk_mark_napi_id: sock.sk_napi_id Copy WRITE_ONCE skb->napi_id"]
    );
    let after = "static inline void sk_mark_napi_id(struct sock *sk, const struct sk_buff *skb)\n{\n\tif (unlikely(READ_ONCE(sk->sk_napi_id) != skb->napi_id))\n\t\tWRITE_ONCE(sk->sk_napi_id, skb->napi_id);\n}\n";
    assert!(needless(after, &["sock", "sk_buff"]).is_empty());
    // The same object's member: no copy of another's.
    let same = "void f(struct s *p)\n{\n\tp->a = p->b;\n}\n";
    assert!(needless(same, &["s"]).is_empty());
}

#[test]
fn an_exchange_loop_whose_guard_makes_its_bits_change_is_no_needless_store() {
    // 7.3's tcp_wfree(): the loop leaves unless TSQF_THROTTLED is set and
    // TSQF_QUEUED clear; the new value clears the one and sets the other.
    let wfree = "void tcp_wfree(struct s *sk)\n{\n\tunsigned long oval, nval;\n\
        \toval = smp_load_acquire(&sk->flags);\n\tdo {\n\
        \t\tif (!(oval & TSQF_THROTTLED) || (oval & TSQF_QUEUED))\n\t\t\tgoto out;\n\
        \t\tnval = (oval & ~TSQF_THROTTLED) | TSQF_QUEUED;\n\
        \t} while (!try_cmpxchg(&sk->flags, &oval, nval));\nout:\n\treturn;\n}\n";
    assert!(needless(wfree, &["s"]).is_empty());
    // Either half of the guard is enough.
    for guard in ["!(oval & TSQF_THROTTLED)", "oval & TSQF_QUEUED"] {
        let one = wfree.replace("!(oval & TSQF_THROTTLED) || (oval & TSQF_QUEUED)", guard);
        assert!(needless(&one, &["s"]).is_empty(), "{guard}");
    }
    // A guard on bits the new value leaves alone proves nothing.
    let other = wfree.replace(
        "!(oval & TSQF_THROTTLED) || (oval & TSQF_QUEUED)",
        "!(oval & TSQF_OTHER)",
    );
    assert_eq!(needless(&other, &["s"]).len(), 1);
    // 7.3's folio_update_gen(), the seed's patch 2: its guard tests the
    // generation bits, but the new value sets them again from `gen`.
    let seed = "static int folio_update_gen(struct folio *folio, int gen)\n{\n\
        \tunsigned long new_flags, old_flags = READ_ONCE(folio->flags.f);\n\tdo {\n\
        \t\tif (!(old_flags & LRU_GEN_MASK))\n\t\t\treturn -1;\n\
        \t\tnew_flags = old_flags & ~(LRU_GEN_MASK | LRU_REFS_FLAGS);\n\
        \t\tnew_flags |= ((gen + 1UL) << LRU_GEN_PGOFF) | BIT(PG_workingset);\n\
        \t} while (!try_cmpxchg(&folio->flags.f, &old_flags, new_flags));\n\treturn 0;\n}\n";
    assert_eq!(needless(seed, &["folio"]).len(), 1);
    // 7.3's inode_query_iversion(): the guard's block ends in `break`
    // after a barrier; a `continue` instead would run the exchange again.
    let queried = "u64 inode_query_iversion(struct inode *inode)\n{\n\tu64 cur, new;\n\
        \tcur = inode_peek_iversion_raw(inode);\n\tdo {\n\
        \t\tif (cur & I_VERSION_QUERIED) {\n\t\t\tif (!fenced)\n\t\t\t\tsmp_mb();\n\t\t\tbreak;\n\t\t}\n\
        \t\tnew = cur | I_VERSION_QUERIED;\n\
        \t} while (!atomic64_try_cmpxchg(&inode->i_version, &cur, new));\n\treturn cur;\n}\n";
    assert!(needless(queried, &["inode"]).is_empty());
    let again = queried.replace("\t\t\tbreak;", "\t\t\tcontinue;");
    assert_eq!(needless(&again, &["inode"]).len(), 1);
}

#[test]
fn a_bit_set_in_one_branch_and_cleared_in_the_other_is_a_state_flipped() {
    // 7.3's update_reclaim_active(): kswapd sets the bit when it starts
    // and clears it when it ends, each call a change; a set with no
    // clear beside it, or beside another bit's, may set it again.
    let code = "static void update_reclaim_active(struct s *zone, bool active)\n{\n\
        \tif (active)\n\t\tset_bit(ZONE_RECLAIM_ACTIVE, &zone->flags);\n\
        \telse\n\t\tclear_bit(ZONE_RECLAIM_ACTIVE, &zone->flags);\n}\n\
        static void mark(struct s *zone, bool active)\n{\n\
        \tif (active)\n\t\tset_bit(ZONE_BOOSTED, &zone->flags);\n\
        \telse\n\t\tclear_bit(ZONE_OTHER, &zone->flags);\n}\n";
    assert_eq!(
        needless(code, &["s"]),
        [
            "mark: s.flags Bit set_bit ZONE_BOOSTED",
            "mark: s.flags Bit clear_bit ZONE_OTHER"
        ]
    );
}

#[test]
fn an_exchange_loop_that_can_write_back_what_it_read_is_a_needless_store() {
    // 6.12's mm/vmscan.c folio_update_gen().
    let before = "static int folio_update_gen(struct folio *folio, int gen)\n{\n\tunsigned long new_flags, old_flags = READ_ONCE(folio->flags);\n\tdo {\n\t\tif (!(old_flags & LRU_GEN_MASK)) {\n\t\t\tnew_flags = old_flags | BIT(PG_referenced);\n\t\t\tcontinue;\n\t\t}\n\t\tnew_flags = old_flags & ~(LRU_GEN_MASK | LRU_REFS_MASK);\n\t\tnew_flags |= (gen + 1UL) << LRU_GEN_PGOFF;\n\t} while (!try_cmpxchg(&folio->flags, &old_flags, new_flags));\n\treturn 0;\n}\n";
    assert_eq!(
        needless(before, &["folio"]),
        ["folio_update_gen: folio.flags Exchange try_cmpxchg new_flags"]
    );
    // The seed's patch 2: the loop leaves when nothing changes.
    let after = before.replace(
        "\t} while",
        "\t\tif (new_flags == old_flags)\n\t\t\tbreak;\n\t} while",
    );
    assert!(needless(&after, &["folio"]).is_empty());
    // Changed by a helper through its address, as 7.x writes it.
    let helper = "static void folio_set_lru_refs(struct folio *folio, unsigned int refs)\n{\n\tunsigned long new_flags, old_flags = READ_ONCE(folio->flags);\n\tdo {\n\t\tnew_flags = old_flags;\n\t\tlru_set_refs_flags(&new_flags, refs);\n\t} while (!try_cmpxchg(&folio->flags, &old_flags, new_flags));\n}\n";
    assert_eq!(needless(helper, &["folio"]).len(), 1);
    // A counter moved never writes back what it read.
    let counter = "void f(struct s *p)\n{\n\tint old = atomic_read(&p->n), new;\n\tdo {\n\t\tnew = old + 1;\n\t} while (!atomic_try_cmpxchg(&p->n, &old, new));\n}\n";
    assert!(needless(counter, &["s"]).is_empty());
}

#[test]
fn a_test_helper_on_the_object_or_an_atomic_that_took_its_line_is_a_test() {
    // 7.3's mm/vmscan.c lru_gen_set_refs(): the flags tested through
    // folio_test_*() before each set_mask_bits().
    let helper = "static bool lru_gen_set_refs(struct folio *folio)\n{\n\tif (!folio_test_referenced(folio) && !folio_test_workingset(folio)) {\n\t\tset_mask_bits(&folio->flags.f, LRU_REFS_MASK, BIT(PG_referenced));\n\t\treturn false;\n\t}\n\tif (folio_lru_refs(folio) > 1)\n\t\tset_mask_bits(&folio->flags.f, LRU_REFS_FLAGS, BIT(PG_workingset));\n\treturn true;\n}\n";
    assert!(needless(helper, &["folio"]).is_empty());
    // isolate_folio(): folio_test_clear_lru() took the line just before.
    let taken = "static bool isolate_folio(struct folio *folio)\n{\n\tif (!folio_try_get(folio))\n\t\treturn false;\n\tfolio_test_clear_lru(folio);\n\tset_mask_bits(&folio->flags.f, LRU_REFS_MASK, 0);\n\treturn true;\n}\n";
    assert!(needless(taken, &["folio"]).is_empty());
    let bit = "void f(struct s *p)\n{\n\ttest_and_set_bit(A, &p->m);\n\tp->n = 0;\n}\n";
    assert!(needless(bit, &["s"]).is_empty());
    // A helper on another object, a read of the object, or an atomic
    // after the store: still untested.
    let other = "void f(struct s *p, struct folio *folio)\n{\n\tif (folio_test_lru(folio))\n\t\tp->m = 0;\n\tif (s_count(p) > 1)\n\t\tp->n = 0;\n\tp->o = 0;\n\ttest_and_set_bit(A, &p->q);\n}\n";
    assert_eq!(
        needless(other, &["s"]),
        [
            "f: s.m Constant = 0",
            "f: s.n Constant = 0",
            "f: s.o Constant = 0"
        ]
    );
    // 7.3's rcu_preempt_deferred_qs_irqrestore(): the member tested
    // through a copy of the union around it.
    let union = "void f(struct task_struct *t)\n{\n\tunion rcu_special special;\n\tspecial = t->rcu_read_unlock_special;\n\tif (!special.s && !x)\n\t\treturn;\n\tt->rcu_read_unlock_special.s = 0;\n}\n";
    assert!(needless(union, &["task_struct"]).is_empty());
    // A copy of another member whose name only begins the same is none.
    let prefix =
        "void f(struct s *p)\n{\n\tlong v = p->m;\n\tif (v)\n\t\treturn;\n\tp->mm.x = 0;\n}\n";
    assert_eq!(needless(prefix, &["s"]), ["f: s.mm.x Constant = 0"]);
    // set_mask_bits() whose old value is used: a test-and-set.
    let used = "void f(struct s *p)\n{\n\tunsigned long old = set_mask_bits(&p->m, M, 0);\n\tif (set_mask_bits(&p->n, M, B) & B)\n\t\treturn;\n\tset_mask_bits(&p->o, M, 0);\n}\n";
    assert_eq!(needless(used, &["s"]), ["f: s.o Exchange set_mask_bits 0"]);
    // The seed's exchange loop stays a candidate after a test helper: the
    // loop decides, not the guard before it.
    let update = "static int folio_update_gen(struct folio *folio, int gen)\n{\n\tunsigned long new_flags, old_flags = READ_ONCE(folio->flags.f);\n\tif (!folio_test_referenced(folio))\n\t\treturn -1;\n\tdo {\n\t\tnew_flags = old_flags & ~LRU_GEN_MASK;\n\t\tnew_flags |= (gen + 1UL) << LRU_GEN_PGOFF;\n\t} while (!try_cmpxchg(&folio->flags.f, &old_flags, new_flags));\n\treturn 0;\n}\n";
    assert_eq!(needless(update, &["folio"]).len(), 1);
}

#[test]
fn set_mask_bits_and_an_untested_bit_are_needless_stores() {
    let code = "void f(struct folio *folio, struct s *p)\n{\n\tset_mask_bits(&folio->flags, LRU_REFS_MASK, 0);\n\tset_bit(NAPI_STATE_MISSED, &p->state);\n\tif (!test_bit(BIT_A, &p->other))\n\t\tset_bit(BIT_A, &p->other);\n}\n";
    assert_eq!(
        needless(code, &["folio", "s"]),
        [
            "f: folio.flags Exchange set_mask_bits 0",
            "f: s.state Bit set_bit NAPI_STATE_MISSED"
        ]
    );
}

#[test]
fn a_mutex_the_file_defines_for_the_whole_system_is_told_apart() {
    // mm/shrinker.c's shape: the memcg's shrinker_info replaced under
    // shrinker_mutex, taken or asserted; a spinlock of the file and a mutex
    // of the object are no such mutex.
    let code = "static DEFINE_MUTEX(shrinker_mutex);\nstatic DEFINE_SPINLOCK(shrinker_lock);\n\
        static void expand(struct mem_cgroup_per_node *pn, void *n)\n{\n\tlockdep_assert_held(&shrinker_mutex);\n\
        \trcu_assign_pointer(pn->shrinker_info, n);\n}\n\
        static void grow(struct mem_cgroup_per_node *pn, void *n)\n{\n\tmutex_lock(&shrinker_mutex);\n\
        \tpn->shrinker_info = n;\n\tmutex_unlock(&shrinker_mutex);\n\tspin_lock(&shrinker_lock);\n\
        \tpn->other = n;\n\tspin_unlock(&shrinker_lock);\n\tmutex_lock(&pn->lock);\n\tpn->more = n;\n\
        \tmutex_unlock(&pn->lock);\n}\n";
    let types = ["mem_cgroup_per_node".to_owned()];
    let mut held: Vec<(String, Vec<(String, bool)>)> = read(code, "shrinker.c", &types)
        .into_iter()
        .filter_map(|d| match d.said {
            Said::Written(_, held) => Some((
                d.path,
                held.into_iter().map(|h| (h.text, h.global_mutex)).collect(),
            )),
            _ => None,
        })
        .collect();
    held.sort();
    let owned = |p: &str, t: &str, g: bool| (p.to_owned(), vec![(t.to_owned(), g)]);
    assert_eq!(
        held,
        [
            owned("more", "&pn->lock", false),
            owned("other", "&shrinker_lock", false),
            owned("shrinker_info", "&shrinker_mutex", true),
            owned("shrinker_info", "&shrinker_mutex", true),
        ]
    );
}

#[test]
fn a_compare_and_exchange_from_null_is_a_lazy_initialisation() {
    // 7.3's file_f_owner_allocate(): the owner struct made on first use,
    // published by whichever CPU gets there first; a cmpxchg from a value
    // read, or a try_cmpxchg, is an atomic like any.
    let code = "int alloc(struct file *file, struct fown *f)\n{\n\
        \tif (cmpxchg(&file->f_owner, NULL, f))\n\t\treturn 1;\n\
        \tcmpxchg(&file->f_count, old, old + 1);\n\
        \ttry_cmpxchg(&file->f_flags, &zero, 1);\n\treturn 0;\n}\n";
    let types = ["file".to_owned()];
    let mut said: Vec<String> = read(code, "file.c", &types)
        .into_iter()
        .filter_map(|d| match d.said {
            Said::Written(w, _) => Some(format!("{} {w:?} {}", d.path, w.lockless())),
            _ => None,
        })
        .collect();
    said.sort();
    assert_eq!(
        said,
        [
            "f_count Atomic(\"cmpxchg\") true",
            "f_flags Atomic(\"try_cmpxchg\") true",
            "f_owner Publish(\"cmpxchg\") true",
        ]
    );
}

#[test]
fn a_drivers_ops_and_its_napi_poll_are_on_the_transmit_and_receive_paths() {
    let code = "static netdev_tx_t e1000_xmit_frame(struct sk_buff *skb, struct net_device *d)\n{\n\te1000_tx_queue(d);\n\treturn 0;\n}\n\
static int e1000_clean(struct napi_struct *napi, int budget)\n{\n\te1000_clean_rx_irq(napi);\n\treturn 0;\n}\n\
static int e1000_probe(struct net_device *d, struct e1000_adapter *a)\n{\n\tnetif_napi_add(d, &a->napi, e1000_clean);\n\treturn 0;\n}\n\
static const struct net_device_ops e1000_netdev_ops = {\n\t.ndo_open = e1000_open,\n\t.ndo_start_xmit = e1000_xmit_frame,\n};\n";
    let got = functions(
        code,
        Path::new("e1000_main.c"),
        Wanted::Only(&[]),
        &NoTypes,
        &Wrappers::default(),
    );
    let paths = reach::net_paths(&got.calls);
    assert_eq!(paths.get("e1000_tx_queue"), Some(&vec![NetPath::Transmit]));
    assert_eq!(
        paths.get("e1000_clean_rx_irq"),
        Some(&vec![NetPath::Receive])
    );
    // Opening the device is no path; probing is none either.
    assert!(!paths.contains_key("e1000_open"), "{paths:?}");
    assert!(!paths.contains_key("e1000_probe"), "{paths:?}");
    // Heat does not follow them: a poll's error branch is no hot path.
    assert!(!reach::reached(&got.calls, &Default::default()).contains_key("e1000_clean_rx_irq"));
}

#[test]
fn a_function_a_macro_defines_is_named_by_the_macros_text() {
    let code = "META_COLLECTOR(int_sk_omem_alloc)\n{\n\tconst struct sock *sk = skb_to_full_sk(skb);\n\
        \tdst->value = sk->sk_mark;\n}\n";
    let ds = read_net(code, "em_meta.c");
    assert_eq!(
        said(&ds, "sock", "sk_mark")
            .into_iter()
            .map(|(_, _, f)| f)
            .collect::<Vec<_>>(),
        ["META_COLLECTOR(int_sk_omem_alloc)"]
    );
}

#[test]
fn test_modules_are_told_by_the_kernels_naming() {
    for stem in [
        "test_bpf",
        "test-kstrtox",
        "dev_addr_lists_test",
        "handshake-test",
        "sound_kunit",
        "policy_unpack_test",
    ] {
        assert!(is_test_code(stem), "{stem}");
    }
    for stem in [
        "dev",
        "selftests",
        "test",
        "latest",
        "attest_key",
        "contest",
    ] {
        assert!(!is_test_code(stem), "{stem}");
    }
    let tree = std::env::temp_dir().join(format!("cachelint-testcode-{}", std::process::id()));
    for f in [
        "net/core/dev.c",
        "net/core/net_test.c",
        "lib/test_bpf.c",
        "net/wireless/tests/scan.c",
        "lib/kunit/test.c",
        "net/core/selftests.c",
    ] {
        let path = tree.join(f);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }
    let files = c_files(&tree, None).unwrap();
    std::fs::remove_dir_all(&tree).unwrap();
    assert_eq!(
        files,
        [
            PathBuf::from("net/core/dev.c"),
            PathBuf::from("net/core/selftests.c")
        ]
    );
}

#[test]
fn a_lock_reached_through_an_accessor_or_a_local_pointer_is_the_members() {
    // sch_generic.h's and inet_hashtables.h's accessors; mm.h's
    // `pmd_lockptr()` returns `&mm->page_table_lock` only without split
    // page-table locks: its other definition makes it no accessor.
    let header = "static inline spinlock_t *qdisc_lock(struct Qdisc *qdisc)\n{\n\treturn &qdisc->q.lock;\n}\n\
        static inline spinlock_t *inet_ehash_lockp(struct Qdisc *h, unsigned int hash)\n{\n\
        \treturn &h->locks[hash & h->locks_mask];\n}\n\
        #if USE_SPLIT_PMD_PTLOCKS\n\
        static inline spinlock_t *pmd_lockptr(struct Qdisc *mm, pmd_t *pmd)\n{\n\treturn ptlock_ptr(pmd_ptdesc(pmd));\n}\n\
        #else\n\
        static inline spinlock_t *pmd_lockptr(struct Qdisc *mm, pmd_t *pmd)\n{\n\treturn &mm->page_table_lock;\n}\n\
        #endif\n\
        static inline spinlock_t *qdisc_lock_of(struct Qdisc *q)\n{\n\treturn &q->a[1].lock;\n}\n\
        static inline spinlock_t *pud_lockptr(struct Qdisc *mm, pud_t *pud)\n{\n\treturn &mm->page_table_lock;\n}\n\
        static inline spinlock_t *pud_lock(struct Qdisc *mm, pud_t *pud)\n{\n\tspinlock_t *ptl = pud_lockptr(mm, pud);\n\
        \tspin_lock(ptl);\n\treturn ptl;\n}\n";
    let mut wrappers = Wrappers::default();
    for _ in 0..WRAPPER_ROUNDS {
        wrappers = wrappers_in(header, &NoTypes, &wrappers);
    }
    // __dev_xmit_skb()'s and net_tx_action()'s shapes, an unlock through
    // the local, and the accessor passed straight to the lock.
    let code = "void a(struct Qdisc *q)\n{\n\tspinlock_t *root_lock = qdisc_lock(q);\n\
        \tspin_lock(root_lock);\n\tq->owner = 1;\n\tspin_unlock(root_lock);\n\tq->flags = 2;\n}\n\
        void b(struct Qdisc *q)\n{\n\tspinlock_t *root_lock = NULL;\n\tif (q) {\n\t\troot_lock = qdisc_lock(q);\n\
        \t\tspin_lock(root_lock);\n\t}\n\tq->state = 3;\n\tif (root_lock)\n\t\tspin_unlock(root_lock);\n}\n\
        void c(struct Qdisc *q)\n{\n\tspin_lock_bh(qdisc_lock(q));\n\tq->limit = 4;\n\tspin_unlock_bh(qdisc_lock(q));\n\tq->flags = 5;\n}\n\
        void d(struct Qdisc *q, unsigned int hash)\n{\n\tspinlock_t *l = &q->busylock;\n\tspin_lock(l);\n\tq->gso = 6;\n\
        \tspin_unlock(l);\n\tspin_lock(inet_ehash_lockp(q, hash));\n\tq->hash = 7;\n}\n\
        void e(struct Qdisc *q, pmd_t *pmd)\n{\n\tspin_lock(pmd_lockptr(q, pmd));\n\tq->pmd = 8;\n\tspin_lock(qdisc_lock_of(q));\n\tq->bad = 9;\n}\n\
        void f(struct Qdisc *q, pud_t *pud)\n{\n\tspinlock_t *ptl = pud_lock(q, pud);\n\tq->pud = 10;\n\
        \tspin_unlock(ptl);\n\tq->after = 11;\n}\n";
    let said: Vec<String> = writes_under(code, "Qdisc", &wrappers)
        .iter()
        .map(|(line, path, held)| {
            let locks: Vec<String> = held
                .iter()
                .map(|h| match &h.member {
                    Some((ty, member)) => format!("{ty}.{member}"),
                    None => h.text.clone(),
                })
                .collect();
            format!("{line}:{path} {locks:?}")
        })
        .collect();
    assert_eq!(
        said,
        [
            "5:owner [\"Qdisc.q.lock\"]",
            "7:flags []",
            "16:state [\"Qdisc.q.lock\"]",
            "23:limit [\"Qdisc.q.lock\"]",
            "25:flags []",
            "31:gso [\"Qdisc.busylock\"]",
            "34:hash [\"Qdisc.locks\"]",
            "39:pmd [\"pmd_lockptr(q, pmd)\"]",
            "41:bad [\"pmd_lockptr(q, pmd)\", \"qdisc_lock_of(q)\"]",
            "46:pud [\"Qdisc.page_table_lock\"]",
            "48:after []",
        ]
    );
}

#[test]
fn a_lock_taken_in_a_branch_that_leaves_is_not_held_after_it() {
    // qdisc_run_begin(): a lockless qdisc trylocks its seqlock and
    // returns; a locked one sets state2 with no lock of its own (its
    // callers hold the root lock).
    let header = "static inline bool run_begin(struct lruvec *q)\n{\n\tif (q->flags & 1) {\n\
        \t\tif (spin_trylock(&q->seqlock))\n\t\t\treturn true;\n\t\treturn spin_trylock(&q->seqlock);\n\t}\n\
        \treturn !__test_and_set_bit(0, &q->state2);\n}\n\
        static inline bool plain_trylock(struct lruvec *q)\n{\n\treturn spin_trylock(&q->seqlock);\n}\n";
    let wrappers = wrappers_in(header, &NoTypes, &Wrappers::default());
    assert!(wrappers.get("run_begin").is_none());
    assert!(wrappers.get("plain_trylock").is_some());
    let code = "void f(struct lruvec *q, int x)\n{\n\tif (x) {\n\t\tspin_lock(&q->l);\n\t\tq->a = 1;\n\t\treturn;\n\t}\n\
        \tq->b = 2;\n\tif (x > 1) {\n\t\tspin_lock(&q->l);\n\t\tq->c = 3;\n\t}\n\tq->d = 4;\n}\n";
    let said: Vec<String> = writes_under(code, "lruvec", &wrappers)
        .iter()
        .map(|(line, path, held)| format!("{line}:{path} {}", held.len()))
        .collect();
    assert_eq!(said, ["5:a 1", "8:b 0", "11:c 1", "13:d 1"]);
    // A trylock as the condition of a branch that leaves: held after the
    // `if` only when the branch is taken on failure.
    // A killable lock is 0 when it takes the lock: held after the `if`.
    let code = "void g(struct lruvec *q)\n{\n\tif (spin_trylock(&q->l))\n\t\treturn;\n\tq->e = 5;\n\
        \tif (!spin_trylock(&q->l))\n\t\treturn;\n\tq->f = 6;\n}\n\
        void h(struct lruvec *q)\n{\n\tif (mutex_lock_killable(&q->m))\n\t\treturn;\n\tq->g = 7;\n}\n";
    let said: Vec<String> = writes_under(code, "lruvec", &wrappers)
        .iter()
        .map(|(line, path, held)| format!("{line}:{path} {}", held.len()))
        .collect();
    assert_eq!(said, ["5:e 0", "8:f 1", "14:g 1"]);
}

#[test]
fn an_else_starts_with_the_locks_its_if_started_with() {
    // __remove_mapping(): the page cache's lock released at the end of
    // each branch; the inode's taken only when not swap cache.
    let code = "void rm(struct lruvec *q, int swap)\n{\n\tif (!swap)\n\t\tspin_lock(&q->i_lock);\n\
        \tspin_lock_irq(&q->lru_lock);\n\tif (swap) {\n\t\tq->a = 1;\n\t\tspin_unlock_irq(&q->lru_lock);\n\
        \t} else {\n\t\tq->b = 2;\n\t\tspin_unlock_irq(&q->lru_lock);\n\t\tspin_unlock(&q->i_lock);\n\t}\n\
        \tq->c = 3;\n}\n\
        void mode(struct lruvec *q, int excl)\n{\n\tif (excl)\n\t\tdown_write(&q->sem);\n\telse\n\
        \t\tdown_read(&q->sem);\n\tq->d = 4;\n\tif (excl)\n\t\tspin_lock(&q->l);\n\telse\n\t\treturn;\n\
        \tq->e = 5;\n}\n";
    let said: Vec<String> = writes_under(code, "lruvec", &Wrappers::default())
        .iter()
        .map(|(line, path, held)| {
            let held: Vec<String> = held
                .iter()
                .map(|h| format!("{}{}", h.text, if h.shared { " shared" } else { "" }))
                .collect();
            format!("{line}:{path} {}", held.join(", "))
        })
        .collect();
    assert_eq!(
        said,
        [
            "7:a &q->i_lock, &q->lru_lock",
            "10:b &q->i_lock, &q->lru_lock",
            // Held after the `if` by the branch that took it, as after
            // an `if` with no `else`.
            "14:c &q->i_lock",
            "22:d &q->sem, &q->sem shared",
            "27:e &q->sem, &q->sem shared, &q->l",
        ]
    );
}

#[test]
fn a_function_defined_under_ifdef_and_else_is_one_function_to_its_callers() {
    // update_rq_clock_pelt() of kernel/sched/pelt.h: written under the
    // run queue lock its callers hold, with an empty stub for !SMP.
    let dir = std::env::temp_dir().join(format!("cachelint-ifdef-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("pelt.h"),
        "#ifdef CONFIG_SMP\nstatic inline void upd(struct lruvec *l, long d)\n{\n\tl->lru_size += d;\n}\n\
         #else\nstatic inline void upd(struct lruvec *l, long d) { }\n#endif\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("core.c"),
        "#include \"pelt.h\"\nvoid outer(struct lruvec *l)\n{\n\tspin_lock(&l->lru_lock);\n\
         \tupd(l, 1);\n\tspin_unlock(&l->lru_lock);\n}\n",
    )
    .unwrap();
    let found = declarations(&dir, &["lruvec".to_owned()], &NoTypes, None, None).unwrap();
    let held: Vec<String> = found
        .iter()
        .filter_map(|d| match &d.said {
            Said::Written(_, held) if d.path == "lru_size" => Some(held),
            _ => None,
        })
        .flatten()
        .map(|h| h.how.clone())
        .collect();
    assert_eq!(held, ["spin_lock() in every caller of upd, 1 call seen"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_wrapper_calls_other_arguments_are_still_read() {
    // `mmap_read_lock(vma->vm_mm)` takes the mm's lock and loads `vm_mm`.
    struct Vma;
    impl Types for Vma {
        fn member_type(&self, ty: &str, member: &str) -> Option<String> {
            (ty == "vm_area_struct" && member == "vm_mm").then(|| "mm_struct".to_owned())
        }
        fn canonical(&self, ty: &str) -> String {
            ty.to_owned()
        }
    }
    let header = "static inline void mmap_read_lock(struct mm_struct *mm)\n{\n\tdown_read(&mm->mmap_lock);\n}\n";
    let code = "void vma_stat(struct vm_area_struct *vma)\n{\n\tmmap_read_lock(vma->vm_mm);\n\
        \tvma->vm_flags = 0;\n}\n";
    let types = ["vm_area_struct".to_owned(), "mm_struct".to_owned()];
    let ds = read_all(
        &[(Path::new("mm.h"), header), (Path::new("mm.c"), code)],
        &types,
        &Vma,
    );
    let reads: Vec<usize> = ds
        .iter()
        .filter(|d| d.ty == "vm_area_struct" && d.path == "vm_mm")
        .filter(|d| matches!(d.said, Said::Read { .. }))
        .map(|d| d.line)
        .collect();
    assert_eq!(reads, [3], "{ds:#?}");
    assert!(
        ds.iter().any(|d| d.ty == "vm_area_struct"
            && d.path == "vm_flags"
            && matches!(&d.said, Said::Written(_, held) if held.iter().any(|h| h.text.contains("mmap_lock")))),
        "{ds:#?}"
    );
}

/// How each lock held at the writes of `path` was taken (`how`).
fn taken_by(ds: &[Declaration], path: &str) -> Vec<String> {
    ds.iter()
        .filter(|d| d.path == path)
        .flat_map(|d| match &d.said {
            Said::Written(_, held) => held.iter().map(|h| h.how.clone()).collect(),
            _ => Vec::new(),
        })
        .collect()
}

#[test]
fn a_c_files_external_wrappers_are_known_to_the_files_that_call_them() {
    // sch_generic.c's `netif_tx_lock()` takes `&dev->tx_global_lock` for
    // the drivers that call it, directly or through netdevice.h's
    // `netif_tx_lock_bh()`. Its static helper is its own, so is a
    // function not named for a lock, and a file that defines a function
    // of the same name calls its own.
    let sched = "void netif_tx_lock(struct net_device *dev)\n{\n\tspin_lock(&dev->tx_global_lock);\n\tnetif_freeze_queues(dev);\n}\n\
        static void dev_lock_addr(struct net_device *dev)\n{\n\tspin_lock(&dev->addr_list_lock);\n}\n\
        void dev_hold_all(struct net_device *dev)\n{\n\tspin_lock(&dev->addr_list_lock);\n}\n";
    let header = "static inline void netif_tx_lock_bh(struct net_device *dev)\n{\n\tlocal_bh_disable();\n\tnetif_tx_lock(dev);\n}\n";
    let driver = "void drv_timeout(struct net_device *dev)\n{\n\tnetif_tx_lock(dev);\n\tdev->watchdog_ts = 1;\n}\n\
        void drv_reset(struct net_device *dev)\n{\n\tnetif_tx_lock_bh(dev);\n\tdev->mtu = 2;\n}\n\
        void drv_addr(struct net_device *dev)\n{\n\tdev_lock_addr(dev);\n\tdev->flags = 3;\n}\n\
        void drv_hold(struct net_device *dev)\n{\n\tdev_hold_all(dev);\n\tdev->features = 5;\n}\n";
    let own = "static void netif_tx_lock(struct net_device *dev)\n{\n\tdev->gso_max_size = 0;\n}\n\
        void own_reset(struct net_device *dev)\n{\n\tnetif_tx_lock(dev);\n\tdev->priv_flags = 4;\n}\n";
    let types = ["net_device".to_owned()];
    let ds = read_all(
        &[
            (Path::new("net/sched/sch_generic.c"), sched),
            (Path::new("include/linux/netdevice.h"), header),
            (Path::new("drivers/net/drv.c"), driver),
            (Path::new("drivers/net/own.c"), own),
        ],
        &types,
        &NoTypes,
    );
    let under = |path: &str| taken_by(&ds, path);
    assert_eq!(under("watchdog_ts"), ["netif_tx_lock"], "{ds:#?}");
    assert_eq!(under("mtu"), ["netif_tx_lock_bh"], "{ds:#?}");
    assert!(under("flags").is_empty(), "{ds:#?}");
    assert!(under("features").is_empty(), "{ds:#?}");
    assert!(under("priv_flags").is_empty(), "{ds:#?}");
}

#[test]
fn a_c_files_function_is_one_with_its_header_stubs_and_its_callers_locks_hold() {
    // fair.c's alloc_fair_sched_group() and sched.h's stub of it for the
    // configurations without fair group scheduling: one function, whose
    // every caller holds the lock. A static helper of a `.c` file and a
    // header's inline of the same name are two: no caller's lock.
    let fair = "int alloc_fair_sched_group(struct net_device *dev)\n{\n\tdev->mtu = 1;\n\treturn 1;\n}\n\
        static void reg_write(struct net_device *dev)\n{\n\tdev->flags = 2;\n}\n\
        void fair_set(struct net_device *dev)\n{\n\tspin_lock(&dev->addr_list_lock);\n\treg_write(dev);\n\tspin_unlock(&dev->addr_list_lock);\n}\n";
    let header = "static inline int alloc_fair_sched_group(struct net_device *dev)\n{\n\treturn 1;\n}\n\
        static inline void reg_write(struct net_device *dev)\n{\n}\n";
    let core = "void create_group(struct net_device *dev)\n{\n\tspin_lock(&dev->tx_global_lock);\n\
        \talloc_fair_sched_group(dev);\n\tspin_unlock(&dev->tx_global_lock);\n}\n\
        void other_set(struct net_device *dev)\n{\n\tspin_lock(&dev->addr_list_lock);\n\treg_write(dev);\n\tspin_unlock(&dev->addr_list_lock);\n}\n";
    let types = ["net_device".to_owned()];
    let ds = read_all(
        &[
            (Path::new("kernel/sched/fair.c"), fair),
            (Path::new("kernel/sched/sched.h"), header),
            (Path::new("kernel/sched/core.c"), core),
        ],
        &types,
        &NoTypes,
    );
    let under = |path: &str| taken_by(&ds, path);
    assert_eq!(
        under("mtu"),
        ["spin_lock() in every caller of alloc_fair_sched_group, 1 call seen"],
        "{ds:#?}"
    );
    assert!(under("flags").is_empty(), "{ds:#?}");
}

#[test]
fn a_path_runs_through_a_files_own_static_function_and_a_system_calls_body_only() {
    // Two files' own check_drain(): the scheduler calls the first, the
    // second calls what writes the queue. lib/sys_info.c's sys_info() is
    // no system call; SYSCALL_DEFINE1(brk) is.
    let sched = "static void check_drain(struct rq *rq)\n{\n\trq->nr_running = 0;\n}\n\
        void __schedule(struct rq *rq)\n{\n\tcheck_drain(rq);\n}\n";
    let driver = "static void poll_queue(struct Qdisc *q)\n{\n\tq->limit = 1;\n}\n\
        static void check_drain(struct Qdisc *q)\n{\n\tpoll_queue(q);\n}\n\
        void dump_queues(struct Qdisc *q)\n{\n\tcheck_drain(q);\n}\n";
    let syscalls = "static void set_mark(struct sock *sk)\n{\n\tsk->sk_mark = 1;\n}\n\
        SYSCALL_DEFINE1(brk, unsigned long, brk)\n{\n\tset_mark(current_sk());\n\treturn 0;\n}\n\
        static void clear_mark(struct sock *sk)\n{\n\tsk->sk_mark = 0;\n}\n\
        void sys_info(unsigned long flags)\n{\n\tclear_mark(current_sk());\n}\n";
    let types: Vec<String> = ["rq", "Qdisc", "sock"].map(String::from).into();
    let ds = read_all(
        &[
            (Path::new("kernel/sched/core.c"), sched),
            (Path::new("drivers/md/queue.c"), driver),
            (Path::new("mm/mmap.c"), syscalls),
        ],
        &types,
        &Net,
    );
    let entry = |ty: &str, path: &str, function: &str| {
        ds.iter()
            .find(|d| {
                d.ty == ty
                    && d.path == path
                    && d.function.as_deref() == Some(function)
                    && matches!(d.said, Said::Written(..))
            })
            .map(|d| d.entry.clone())
            .expect("a write")
    };
    assert_eq!(
        entry("rq", "nr_running", "check_drain").as_deref(),
        Some("the scheduler (__schedule)")
    );
    assert_eq!(entry("Qdisc", "limit", "poll_queue"), None);
    assert_eq!(
        entry("sock", "sk_mark", "set_mark").as_deref(),
        Some("a system call (sys_brk)")
    );
    assert_eq!(entry("sock", "sk_mark", "clear_mark"), None);
}

#[test]
fn a_cpus_own_counter_is_written_by_plain_stores() {
    // perf's event count: local64_add() by the CPU the event runs on, no
    // locked instruction; an atomic beside it is one.
    let code = "void napi_count(struct napi_struct *napi, u64 delta)\n{\n\
        \tlocal64_add(delta, &napi->count);\n\tlocal_inc(&napi->hits);\n\tatomic_inc(&napi->refs);\n}\n";
    let ds = read_net(code, "core.c");
    let how = |path: &str| match &said(&ds, "napi_struct", path)[0].0 {
        Said::Written(w, _) => w.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(how("count"), Write::NonAtomic("local64_add".into()));
    assert_eq!(how("hits"), Write::NonAtomic("local_inc".into()));
    assert_eq!(how("refs"), Write::Atomic("atomic_inc".into()));
    assert!(!how("count").lockless());
}

#[test]
fn a_list_operation_stores_to_the_heads_and_nodes_it_is_passed() {
    // d_alloc()'s hlist_add_head() links a child into its parent's
    // d_children under the parent's d_lock: a store to both members,
    // not a read of d_children; an RCU variant stores for lockless
    // readers; an llist exchanges atomically; list_empty() only reads.
    let code = "void link(struct napi_struct *child, struct napi_struct *parent)\n{\n\
        \tspin_lock(&parent->lock);\n\thlist_add_head(&child->sib, &parent->children);\n\
        \tspin_unlock(&parent->lock);\n\thlist_add_head_rcu(&child->hash, &parent->table[3]);\n\
        \tllist_add(&child->free, &parent->free_list);\n\
        \trb_erase(&child->rb, &parent->tree);\n\
        \tif (list_empty(&parent->poll_list))\n\t\treturn;\n}\n";
    let ds = read_net(code, "dcache.c");
    let how = |path: &str| match &said(&ds, "napi_struct", path)[..] {
        [(Said::Written(w, held), ..)] => (w.clone(), held.len()),
        other => panic!("{path}: {other:?}"),
    };
    assert_eq!(how("children"), (Write::Assign, 1));
    assert_eq!(how("sib"), (Write::Assign, 1));
    assert_eq!(how("hash").0, Write::Release("hlist_add_head_rcu".into()));
    assert_eq!(how("table").0, Write::Release("hlist_add_head_rcu".into()));
    assert_eq!(how("free_list").0, Write::Atomic("llist_add".into()));
    assert_eq!(how("rb").0, Write::Assign);
    assert_eq!(how("tree").0, Write::Assign);
    let polled = said(&ds, "napi_struct", "poll_list");
    assert!(
        matches!(&polled[..], [(Said::Read { .. }, ..)]),
        "{polled:?}"
    );
}

#[test]
fn a_drivers_probe_remove_and_power_callbacks_are_the_control_path() {
    // i2c_mark_adapter_suspended()'s set_bit comes from a driver's
    // suspend callback; a probe is known by its match argument; TCP's
    // MTU probe is on the transmit path whatever its name says.
    let code = "static int foo_probe(struct pci_dev *pdev, const struct pci_device_id *id)\n\
        {\n\tstruct napi_struct *n = pci_get_drvdata(pdev);\n\tset_bit(1, &n->state);\n}\n\
        static int foo_suspend_noirq(struct device *dev)\n\
        {\n\tstruct napi_struct *n = dev_get_drvdata(dev);\n\tset_bit(2, &n->state);\n}\n\
        static void bar_remove(struct platform_device *pdev)\n\
        {\n\tstruct napi_struct *n = platform_get_drvdata(pdev);\n\tclear_bit(1, &n->state);\n}\n\
        static int tcp_mtu_probe(struct sock *sk)\n\
        {\n\tstruct napi_struct *n = sk->napi;\n\tset_bit(3, &n->state);\n}\n";
    let ds = read_net(code, "drv.c");
    let got = roles_by_function(&ds, "napi_struct", "state");
    assert_eq!(
        got,
        [
            (Role::Control, "bar_remove".into()),
            (Role::Control, "foo_probe".into()),
            (Role::Control, "foo_suspend_noirq".into()),
            (Role::Fast, "tcp_mtu_probe".into()),
        ]
    );
}

#[test]
fn a_store_in_a_failures_handler_is_no_fast_path_store() {
    // mapping_set_error() sets AS_EIO when writeback failed; the same
    // bit set by a function of the fast path's is a fast-path store.
    let code = "static inline void napi_set_error(struct napi_struct *n, int error)\n\
        {\n\tif (error == -ENOSPC)\n\t\tset_bit(1, &n->state);\n}\n\
        void napi_poll_done(struct napi_struct *n)\n{\n\tset_bit(2, &n->state);\n}\n\
        void show_napi_state(struct napi_struct *n)\n{\n\tset_bit(3, &n->state);\n}\n";
    let ds = read_net(code, "pagemap.h");
    let got = roles_by_function(&ds, "napi_struct", "state");
    // A diagnostic dump (show_*, print_*, dump_*) is one too.
    assert_eq!(
        got,
        [
            (Role::Fast, "napi_poll_done".into()),
            (Role::Failure, "napi_set_error".into()),
            (Role::Failure, "show_napi_state".into()),
        ]
    );
}

#[test]
fn loads_made_only_to_print_or_trace_are_no_reads() {
    // key_lookup()'s kenter("{%d}", key->serial) is no_printk in most
    // builds; pr_debug() and a tracepoint's arguments load only when
    // someone asked. A load passed to a real function is one.
    let code = "void napi_look(struct napi_struct *n)\n{\n\
        \tkenter(\"%d\", n->id);\n\t_debug(\"%d\", n->weight);\n\
        \tpr_debug(\"%d\", n->state);\n\tdev_dbg_ratelimited(d, \"%d\", n->gro_bitmask);\n\
        \ttrace_napi_poll(n, n->poll_list.next);\n\
        \tnetif_receive(n->dev);\n}\n";
    let ds = read_net(code, "key.c");
    let mut read: Vec<&str> = ds
        .iter()
        .filter(|d| matches!(d.said, Said::Read { .. }))
        .map(|d| d.path.as_str())
        .collect();
    read.sort();
    assert_eq!(read, ["dev"]);
}

#[test]
fn an_administrations_system_call_is_the_control_path() {
    // keyctl() and io_uring_register() configure; brk() serves a
    // workload. What only the first calls is on the control path too.
    let code = "SYSCALL_DEFINE5(keyctl, int, option, unsigned long, arg2)\n\
        {\n\tstruct napi_struct *n = lookup(arg2);\n\tatomic_inc(&n->refs);\n\tkey_touch(n);\n\treturn 0;\n}\n\
        static void key_touch(struct napi_struct *n)\n{\n\tatomic_dec(&n->refs);\n}\n\
        SYSCALL_DEFINE1(brk, unsigned long, brk)\n\
        {\n\tstruct napi_struct *n = lookup(brk);\n\tatomic_inc(&n->refs);\n\treturn 0;\n}\n";
    let ds = read_net(code, "keyctl.c");
    let got = roles_by_function(&ds, "napi_struct", "refs");
    assert_eq!(
        got,
        [
            (Role::Control, "key_touch".into()),
            (Role::Fast, "sys_brk".into()),
            (Role::Control, "sys_keyctl".into()),
        ]
    );
}

#[test]
fn a_store_after_a_test_of_the_same_is_made_only_on_a_change() {
    // __blk_mq_tag_busy() tests the bit before it sets it ("it avoids
    // dirtying the cacheline"); wb_io_lists_populated() asks a helper
    // named for the bit; busy polling stores the NAPI id only when it
    // differs; an `if` that leaves on the test comes first. A store with
    // no test, a test of another bit or a value made from the member
    // itself stores every time.
    let code = "void busy(struct napi_struct *n, struct sk_buff *skb)\n{\n\
        \tif (test_bit(ACTIVE, &n->state) || test_and_set_bit(ACTIVE, &n->state))\n\t\treturn;\n}\n\
        void populated(struct napi_struct *n)\n{\n\
        \tif (napi_has_dirty_io(n))\n\t\treturn;\n\tset_bit(NAPI_has_dirty_io, &n->flags);\n}\n\
        void mark(struct napi_struct *n, struct sk_buff *skb)\n{\n\
        \tif (READ_ONCE(n->napi_id) != skb->napi_id)\n\t\tWRITE_ONCE(n->napi_id, skb->napi_id);\n\
        \tif (!n->armed)\n\t\tn->armed = true;\n\tif (n->mask & BUSY)\n\t\treturn;\n\
        \tn->mask |= BUSY;\n}\n\
        void blind(struct napi_struct *n, struct sk_buff *skb)\n{\n\
        \tif (test_bit(OTHER, &n->state))\n\t\tset_bit(ACTIVE, &n->state);\n\
        \tWRITE_ONCE(n->napi_id, skb->napi_id);\n\tif (n->weight)\n\t\tn->weight = n->weight * 2;\n\
        \tif (n->armed)\n\t\tn->count = 0;\n}\n";
    let ds = read_net(code, "dev.c");
    let tested = |path: &str, function: &str| tested_writes(&ds, path, Some(function));
    for (path, function) in [
        ("state", "busy"),
        ("flags", "populated"),
        ("napi_id", "mark"),
        ("armed", "mark"),
        ("mask", "mark"),
    ] {
        assert_eq!(tested(path, function), [true], "{path} in {function}");
    }
    for path in ["state", "napi_id", "weight", "count"] {
        assert_eq!(tested(path, "blind"), [false], "{path} in blind");
    }
    // fuse_dev_splice_write(): the ring's tail, read into a variable,
    // moved, and stored back under a test of the variable. xol_add_vma():
    // a test of `xol_area`, which names no `area`, before storing `area`.
    // __dev_xmit_skb(): the owner set to this CPU after a test of it, and
    // back to -1 later, every pass. freeze_super(): a state moved on from
    // another one the test named.
    let code = "void splice(struct napi_struct *n, int head)\n{\n\tint tail = n->tail;\n\
        \twhile (tail != head) {\n\t\tif (WARN_ON(tail == head))\n\t\t\tbreak;\n\t\ttail++;\n\
        \t\tn->tail = tail;\n\t}\n}\n\
        void publish(struct napi_struct *n, struct area *area)\n{\n\tif (n->xol_area)\n\t\treturn;\n\
        \tsmp_store_release(&n->xol_area, area);\n}\n\
        void xmit(struct napi_struct *q)\n{\n\
        \tif (unlikely(READ_ONCE(q->owner) == smp_processor_id()))\n\t\treturn;\n\
        \tWRITE_ONCE(q->owner, smp_processor_id());\n\trun(q);\n\tWRITE_ONCE(q->owner, -1);\n}\n\
        void freeze(struct napi_struct *q)\n{\n\tif (q->frozen != UNFROZEN)\n\t\treturn;\n\
        \tq->frozen = FREEZE_WRITE;\n}\n";
    let ds = read_net(code, "dev.c");
    assert_eq!(tested_writes(&ds, "tail", None), [false]);
    assert_eq!(tested_writes(&ds, "xol_area", None), [false]);
    assert_eq!(tested_writes(&ds, "owner", None), [false, false]);
    assert_eq!(tested_writes(&ds, "frozen", None), [false]);
}

/// Whether each write of member `path` in `ds` (in `function`, when
/// given) is one made only on a change, in order.
fn tested_writes(ds: &[Declaration], path: &str, function: Option<&str>) -> Vec<bool> {
    ds.iter()
        .filter(|d| d.path == path && function.is_none_or(|f| d.function.as_deref() == Some(f)))
        .filter_map(|d| match &d.said {
            Said::Written(w, _) => Some(matches!(w, Write::Tested(_))),
            _ => None,
        })
        .collect()
}

#[test]
fn a_setters_store_is_told_where_it_is_called() {
    // bdev_set_flag() is one line of a header; its stores are made by
    // an ioctl, a driver's probe, a function building the object, an
    // error branch and one fast path, each where it calls it. A getter
    // that takes a reference is no setting: its count stays its own.
    let header = "static inline void napi_set_flag(struct napi_struct *n, unsigned flag)\n{\n\
        \tatomic_or(1 << flag, &n->flags);\n}\n\
        static inline void napi_hold(struct napi_struct *n)\n{\n\trefcount_inc(&n->refs);\n}\n";
    let code = "static int napi_ioctl(struct net_device *dev, unsigned int cmd, unsigned long arg)\n{\n\
        \tstruct napi_struct *n = dev->napi;\n\tnapi_set_flag(n, RO);\n\treturn 0;\n}\n\
        static int foo_probe(struct pci_dev *pdev, const struct pci_device_id *id)\n{\n\
        \tstruct napi_struct *n = pci_get_drvdata(pdev);\n\tnapi_set_flag(n, PROBED);\n\treturn 0;\n}\n\
        struct napi_struct *napi_alloc(void)\n{\n\tstruct napi_struct *n = kzalloc(sizeof(*n), GFP_KERNEL);\n\
        \tnapi_set_flag(n, NEW);\n\treturn n;\n}\n\
        void napi_rx(struct napi_struct *n, int err)\n{\n\tnapi_hold(n);\n\
        \tif (unlikely(err))\n\t\tnapi_set_flag(n, ERR);\n\tspin_lock(&n->lock);\n\
        \tnapi_set_flag(n, SEEN);\n\tspin_unlock(&n->lock);\n}\n";
    let types = ["napi_struct".to_owned()];
    let ds = read_all(
        &[(Path::new("napi.h"), header), (Path::new("dev.c"), code)],
        &types,
        &Net,
    );
    let stores = |path: &str| -> Vec<(String, usize, Role, usize)> {
        ds.iter()
            .filter(|d| d.ty == "napi_struct" && d.path == path)
            .filter_map(|d| match &d.said {
                Said::Written(_, held) => Some((
                    format!(
                        "{}:{}",
                        d.file.display(),
                        d.function.clone().unwrap_or_default()
                    ),
                    d.line,
                    d.role,
                    held.len(),
                )),
                _ => None,
            })
            .collect()
    };
    assert_eq!(
        stores("flags"),
        [
            ("dev.c:napi_ioctl".to_owned(), 4, Role::Control, 0),
            ("dev.c:foo_probe".to_owned(), 10, Role::Control, 0),
            ("dev.c:napi_alloc".to_owned(), 16, Role::Construction, 0),
            ("dev.c:napi_rx".to_owned(), 23, Role::Failure, 0),
            ("dev.c:napi_rx".to_owned(), 25, Role::Fast, 1),
        ]
    );
    assert_eq!(
        stores("refs"),
        [("napi.h:napi_hold".to_owned(), 7, Role::Fast, 0)]
    );
}

#[test]
fn a_store_every_caller_tests_for_first_is_made_only_on_a_change() {
    // blk_mq_sched_restart() tests the bit __blk_mq_sched_restart()
    // clears, its only caller; bio_check_ro() asks bdev_test_flag()
    // before bdev_set_flag() of the same arguments. A caller testing
    // another bit, or the twin of other arguments, leaves the store as
    // it is.
    let header = "static inline void napi_set_flag(struct napi_struct *n, unsigned flag)\n{\n\
        \tatomic_or(flag, &n->flags);\n}\n\
        void __napi_restart(struct napi_struct *n)\n{\n\tclear_bit(NAPI_RESTART, &n->state);\n\tsmp_mb();\n}\n\
        void __napi_kick(struct napi_struct *n)\n{\n\tset_bit(NAPI_KICK, &n->state);\n\tsmp_mb();\n}\n\
        static inline void napi_restart(struct napi_struct *n)\n{\n\
        \tif (test_bit(NAPI_RESTART, &n->state))\n\t\t__napi_restart(n);\n}\n";
    let code = "void napi_rx(struct napi_struct *n)\n{\n\
        \tif (napi_test_flag(n, WARNED))\n\t\treturn;\n\tnapi_set_flag(n, WARNED);\n\
        \tnapi_restart(n);\n\
        \tif (test_bit(NAPI_KICK, &n->state))\n\t\t__napi_kick(n);\n}\n\
        void napi_tx(struct napi_struct *n, struct napi_struct *m)\n{\n\
        \tif (test_bit(NAPI_OTHER, &n->state))\n\t\t__napi_kick(n);\n\
        \tif (!napi_test_flag(m, SEEN))\n\t\tnapi_set_flag(n, SEEN);\n}\n";
    let types = ["napi_struct".to_owned()];
    let ds = read_all(
        &[(Path::new("napi.h"), header), (Path::new("dev.c"), code)],
        &types,
        &Net,
    );
    assert_eq!(tested_writes(&ds, "flags", Some("napi_rx")), [true]);
    assert_eq!(tested_writes(&ds, "flags", Some("napi_tx")), [false]);
    assert_eq!(tested_writes(&ds, "state", Some("__napi_restart")), [true]);
    assert_eq!(tested_writes(&ds, "state", Some("__napi_kick")), [false]);
    let needless = |f: &str| -> Vec<bool> {
        ds.iter()
            .filter(|d| d.function.as_deref() == Some(f))
            .filter_map(|d| match &d.said {
                Said::Needless(n) => Some(n.tested),
                _ => None,
            })
            .collect()
    };
    assert_eq!(needless("__napi_restart"), [true]);
    assert_eq!(needless("__napi_kick"), [false]);
}
