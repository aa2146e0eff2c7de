//! `audit`'s layout half: every struct the tree writes from many CPUs at
//! once (lockless or marked stores on a fast path) that the builds have,
//! drafted from the tree's evidence index as `draft` drafts it, the draft
//! checked on every build as `check --rules` checks it, and the pairs it
//! reports ranked across the kernel. A struct that holds one of them by
//! value, and whose own members fast paths read, is drafted with it and
//! checked as the root of both: its pairs across the two (a read-mostly
//! pointer of `mem_cgroup_per_node` beside its `lruvec`'s lock) are its
//! own.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use crate::analysis::draft_report::joined;
use crate::error::Result;
use crate::evidence::source::{Declaration, Role, Said, Write};
use crate::report::ReportFinding;
use crate::report::audit::LayoutFinding;
use crate::report::draft::{DraftField, DraftReport};
use crate::rules::Rules;
use crate::run::{self, Roots, Run};

/// Evidence lines shown per member of a pair.
const EVIDENCE_SHOWN: usize = 3;

/// A struct's other pairs named with its worst, at most.
const OTHERS_NAMED: usize = 10;

/// The structs holding a contended struct by value drafted with it, at
/// most: those whose own members fast paths read in the most functions.
const HOLDERS_DRAFTED: usize = 3;

/// Structs leading to a contended struct (holding it or pointing to it)
/// past which it is a building block of the kernel's (a `list_head`, a
/// `work_struct`, a `refcount_t`), not an object whose holders the layout
/// half drafts.
const BUILDING_BLOCK: usize = 16;

/// How much a pair is worth a patch by its kind and classes: a writer
/// many CPUs share next to what readers or lock takers need most; next
/// to an owner's plain stores (one CPU at a time) least. A reference
/// count beside its object's own lock (`anon_vma.refcount` and `rwsem`,
/// `key.usage` and `sem`) is worth less: the lock's takers hold a
/// reference, taken just before (`folio_lock_anon_vma_read()`), so
/// their CPUs want both at once; the kernel puts them together on
/// purpose (a lockref is both in one word).
fn kind_weight(kind: &str, classes: &[String], references: bool) -> u64 {
    if classes.iter().any(|c| c == "owner-write") {
        return 1;
    }
    match kind {
        "write-vs-lock" if references => 2,
        "false-sharing" | "write-vs-lock" => 4,
        "write-vs-write" | "locked-vs-other-lock" => 3,
        "two-locks" | "read-vs-lock" | "write-vs-locked" => 2,
        _ => 1,
    }
}

/// The pairs of the structs the first build says the tree writes from many
/// CPUs: each struct's worst pair with the count and names of the others,
/// the structs ranked by it (score: the kind's weight, twice for an
/// error, times the heat), and each struct's drafted rules file (those
/// with a pair).
pub(super) fn pairs(run: &Run, tree: &Path, arch: Option<&str>, read: &[String]) -> Result<Pairs> {
    let first = run.first()?;
    let contended = &first.contended;
    if contended.is_empty() {
        return Ok(Pairs::default());
    }
    // The declarations about them and the structs holding them, read once.
    let names: Vec<String> = contended.iter().map(|(n, _)| n.clone()).collect();
    let wanted = run.with_enclosing(first, &names)?;
    let mut declarations = run.declarations(tree, &wanted, arch, true)?;
    declarations.retain(|d| !matches!(d.said, Said::Needless(_)));
    let mut about: HashMap<&str, Vec<&Declaration>> = HashMap::new();
    for d in &declarations {
        about.entry(d.ty.as_str()).or_default().push(d);
    }
    // Each struct drafted on every build, as `draft` does, and the draft
    // checked on every build, as `check --rules` does.
    let builds: Vec<&run::Opened> = run.builds.iter().collect();
    let drafts = run.drafts(&builds, &names, &declarations, read)?;
    let stores_to = |name: &str| {
        contended
            .iter()
            .find(|(n, _)| n == name)
            .map_or(0, |(_, s)| *s)
    };
    // The structs holding a contended one by value, with fast-path
    // readers of their own, drafted too (those not contended themselves).
    let users = |ty: &str| first.member_types.as_ref().map_or(0, |m| m.users(ty));
    let holding = holders_read(run.holders_of(first, &names)?, &declarations, &users);
    let holder_names: Vec<String> = holding
        .iter()
        .map(|(h, ..)| h.clone())
        .filter(|h| !names.contains(h))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let holder_drafts = run.drafts(&builds, &holder_names, &declarations, read)?;
    // Each struct's draft joined with those of the contended structs it
    // holds, to check as one root.
    let mut checks: Vec<Check> = Vec::new();
    for draft in drafts.iter().chain(&holder_drafts) {
        let contended_too = names.contains(&draft.name);
        let mut report = draft.report.clone();
        let mut inside: Vec<(String, String)> = Vec::new();
        for (_, held, members) in holding.iter().filter(|(h, ..)| *h == draft.name) {
            if let Some(d) = drafts.iter().find(|d| d.name == *held) {
                report = joined(&report, &d.report);
                inside.extend(members.iter().map(|m| (m.clone(), held.clone())));
            }
        }
        if !contended_too && inside.is_empty() {
            continue;
        }
        let (text, rules) = match inside.is_empty() {
            true => (draft.text.clone(), draft.rules.clone()),
            false => {
                let text = report.rules_file();
                let file = format!("{}.toml", draft.name);
                let rules = Rules::from_toml(Path::new(&file), &text)?;
                (text, rules)
            }
        };
        let Some(rules) = rules else { continue };
        checks.push(Check {
            name: draft.name.clone(),
            report,
            text,
            rules,
            stores: stores_to(&draft.name),
            inside,
            own_pairs: contended_too,
        });
    }
    let views = run.views()?;
    let mut found: Vec<LayoutFinding> = Vec::new();
    let mut files: Vec<(String, String)> = Vec::new();
    for check in checks {
        let name = &check.name;
        let mut pairs: Vec<LayoutFinding> = Vec::new();
        for view in &views {
            let line = run.line(view.opened);
            let only = [name.clone()];
            let analyzed = run::analyze(run, view, &check.rules, line, Roots::Types(&only))?;
            for root in &analyzed.roots {
                for f in &root.analysis.findings {
                    let f = ReportFinding::new(&view.opened.build.config, &root.analysis, f);
                    // A holder's pairs are those across it and what it
                    // holds, and its own when it is contended too; those
                    // inside what it holds are the held struct's.
                    let held = |path: &str| check.held(path).is_some();
                    let (a, b) = (held(&f.a.path), held(&f.b.path));
                    if a && b || !a && !b && !check.own_pairs {
                        continue;
                    }
                    add_pair(&mut pairs, f, &check, &stores_to, &about);
                }
            }
        }
        if pairs.is_empty() {
            continue;
        }
        files.push((name.clone(), check.text.clone()));
        for p in &mut pairs {
            let severe = match p.severity.as_str() {
                "error" => 2,
                _ => 1,
            };
            let bits = u64::from(u64::BITS - (p.heat + 1).leading_zeros());
            let (ty, member) = check.owner(&p.members[0]);
            let references = counts_references(&about, ty, member);
            p.score = kind_weight(&p.kind, &p.classes, references) * severe * bits;
        }
        pairs.sort_by_key(|p| std::cmp::Reverse((p.score, p.heat)));
        let all = pairs.len();
        let others: Vec<String> = pairs[1..]
            .iter()
            .take(OTHERS_NAMED)
            .map(|p| format!("{} ({})", p.members.join(" / "), p.kind))
            .collect();
        let mut worst = pairs.swap_remove(0);
        worst.pairs = all;
        worst.others = others;
        found.push(worst);
    }
    found.sort_by_key(|f| std::cmp::Reverse((f.score, f.heat, f.stores)));
    for (i, f) in found.iter_mut().enumerate() {
        f.rank = i + 1;
    }
    Ok(Pairs {
        total: found.iter().map(|f| f.pairs).sum(),
        worst: found,
        rules: files,
        structs: drafts.len(),
        holders: holder_drafts.len(),
    })
}

/// What the layout half found.
#[derive(Default)]
pub(super) struct Pairs {
    /// Each struct's worst pair, ranked.
    pub(super) worst: Vec<LayoutFinding>,
    /// The pairs of every struct.
    pub(super) total: usize,
    /// The drafted rules file of each struct with a pair.
    pub(super) rules: Vec<(String, String)>,
    /// The structs drafted and checked.
    pub(super) structs: usize,
    /// The structs holding them drafted and checked.
    pub(super) holders: usize,
}

/// A struct to check: its drafted rules, joined with those of the
/// contended structs it holds, and what its pairs carry.
struct Check {
    name: String,
    report: DraftReport,
    text: String,
    rules: Rules,
    /// The fast-path lockless stores to it.
    stores: usize,
    /// Its members holding a contended struct, and that struct.
    inside: Vec<(String, String)>,
    /// Whether pairs of its own members count: it is contended itself.
    own_pairs: bool,
}

impl Check {
    /// The contended struct `path` lies inside (`lruvec` for
    /// `lruvec.lru_lock` in `mem_cgroup_per_node`), if any.
    fn held(&self, path: &str) -> Option<&str> {
        let member = direct(path);
        self.inside
            .iter()
            .find(|(m, _)| m == member && path.len() > member.len())
            .map(|(_, held)| held.as_str())
    }
}

/// How hot a pair is: the geometric mean of its members' heats, a
/// lockless writer's by its stores alone. A line bounces as often as
/// one side's CPUs write while the other's use it, so a writer that is
/// seldom written beside a member read everywhere (`kvm_vcpu.mode`
/// beside `kvm`) is no hotter than its writes, and a flags word every
/// path tests and a device's setup sets (`address_space.flags`) no
/// hotter than its stores; a member nothing says is hot makes the pair
/// cold.
fn pair_heat(a: Option<u64>, b: Option<u64>) -> u64 {
    a.unwrap_or(0).saturating_mul(b.unwrap_or(0)).isqrt()
}

/// The heat of member `d` of class `class` in a pair: a lockless
/// writer's by its stores (how often it takes the line), any other's
/// by all its uses.
fn side_heat(d: &DraftField, class: &str) -> Option<u64> {
    match class {
        "lockless-write" => d.write_heat,
        _ => d.heat,
    }
}

/// Whether direct member `member` of struct `ty` is a reference count,
/// by how the fast paths write it: each lockless store takes or drops
/// one (`refcount_inc`, `kref_put`, `atomic_inc_not_zero`,
/// `atomic_dec_and_test`), and there is one.
fn counts_references(about: &HashMap<&str, Vec<&Declaration>>, ty: &str, member: &str) -> bool {
    let mut ops = about
        .get(ty)
        .into_iter()
        .flatten()
        .filter(|d| d.role == Role::Fast && direct(&d.path) == member)
        .filter_map(|d| match &d.said {
            Said::Written(w @ Write::Atomic(op), _) if w.lockless() => Some(op.as_str()),
            _ => None,
        })
        .peekable();
    ops.peek().is_some()
        && ops.all(|op| {
            op.starts_with("refcount_")
                || op.starts_with("kref_")
                || op.starts_with("atomic") && (op.contains("_inc") || op.contains("_dec"))
        })
}

impl Check {
    /// The struct member `path` is the direct member of, and that member:
    /// `lruvec` `lru_lock` for `lruvec.lru_lock` in a holder of the
    /// `lruvec`, else this struct's own.
    fn owner<'p>(&'p self, path: &'p str) -> (&'p str, &'p str) {
        match (self.held(path), path.split_once('.')) {
            (Some(held), Some((_, rest))) => (held, direct(rest)),
            _ => (self.name.as_str(), direct(path)),
        }
    }
}

/// The direct member a path starts with (`lruvec` of `lruvec.lru_lock`).
fn direct(path: &str) -> &str {
    path.split(['.', '[']).next().unwrap_or(path)
}

/// Of the structs holding a contended one by value (`(holder, held,
/// members)`), those whose own members (not those holding it) fast paths
/// read: for each held struct the [`HOLDERS_DRAFTED`] read in the most
/// functions. A struct more than [`BUILDING_BLOCK`] structs lead to
/// (`users`) is a building block: its holders are left out.
fn holders_read(
    holding: Vec<(String, String, Vec<String>)>,
    declarations: &[Declaration],
    users: &dyn Fn(&str) -> usize,
) -> Vec<(String, String, Vec<String>)> {
    let mut readers: HashMap<(&str, &str), BTreeSet<&str>> = HashMap::new();
    for d in declarations {
        if let (Said::Read { .. }, Role::Fast, Some(function)) = (&d.said, d.role, &d.function) {
            readers
                .entry((d.ty.as_str(), direct(&d.path)))
                .or_default()
                .insert(function);
        }
    }
    let mut blocks: HashMap<String, bool> = HashMap::new();
    let mut by_held: HashMap<String, Vec<(usize, String, Vec<String>)>> = HashMap::new();
    for (holder, held, members) in holding {
        let block = *blocks
            .entry(held.clone())
            .or_insert_with(|| users(&held) > BUILDING_BLOCK);
        if block {
            continue;
        }
        let functions: BTreeSet<&str> = readers
            .iter()
            .filter(|((t, m), _)| *t == holder && !members.iter().any(|h| h == m))
            .flat_map(|(_, fs)| fs.iter().copied())
            .collect();
        if !functions.is_empty() {
            by_held
                .entry(held)
                .or_default()
                .push((functions.len(), holder, members));
        }
    }
    let mut out = Vec::new();
    for (held, mut holders) in by_held {
        holders.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        for (_, holder, members) in holders.into_iter().take(HOLDERS_DRAFTED) {
            out.push((holder, held.clone(), members));
        }
    }
    out.sort();
    out
}

/// A pair `check` reports, added to a struct's pairs: once, with the
/// builds it is found in.
fn add_pair(
    to: &mut Vec<LayoutFinding>,
    f: ReportFinding,
    check: &Check,
    stores_to: &dyn Fn(&str) -> usize,
    about: &HashMap<&str, Vec<&Declaration>>,
) {
    let draft = &check.report;
    // A pair across a holder and what it holds: the stores are the held
    // struct's.
    let holds = check
        .held(&f.a.path)
        .or_else(|| check.held(&f.b.path))
        .map(str::to_owned);
    let members = vec![f.a.path.clone(), f.b.path.clone()];
    if let Some(seen) = to
        .iter_mut()
        .find(|p| p.members == members && p.kind == f.kind.name())
    {
        if !seen.configs.contains(&f.config) {
            seen.configs.push(f.config);
        }
        return;
    }
    // A member's drafted field: the direct member its path starts with;
    // in a holder's joined draft, a member of the held struct
    // (`lruvec.lru_lock`) is the held struct's.
    let field = |path: &str| {
        let of = |ty: &dyn Fn(&str) -> bool, member: &str| {
            draft
                .types
                .iter()
                .filter(|t| ty(&t.name))
                .flat_map(|t| &t.fields)
                .find(|d| d.path == direct(member))
        };
        match (check.held(path), path.split_once('.')) {
            (Some(held), Some((_, rest))) => of(&|t| t == held, rest),
            _ => of(&|t| t == f.root, path),
        }
    };
    let heat = pair_heat(
        field(&f.a.path).and_then(|d| side_heat(d, &f.a.class)),
        field(&f.b.path).and_then(|d| side_heat(d, &f.b.class)),
    );
    let mut evidence = Vec::new();
    for side in [&f.a, &f.b] {
        if let Some(d) = field(&side.path) {
            // What gives the class, not what was left out of it.
            evidence.extend(
                d.evidence
                    .iter()
                    .filter(|e| !e.text.ends_with("not counted"))
                    .take(EVIDENCE_SHOWN)
                    .map(|e| format!("{}: {}: {}", side.path, e.mark.name(), e.text)),
            );
        }
    }
    // Where the first member is declared: of the tree's definitions of
    // the struct (a host tool may have its own `list_head`), the one in
    // the file the build's debug info names.
    let a = direct(&f.a.path);
    let definitions: Vec<&Declaration> = about
        .get(f.root.as_str())
        .into_iter()
        .flatten()
        .copied()
        .filter(|d| d.path == a && matches!(d.said, Said::Member))
        .collect();
    let built_in = f.a.decl_file.as_deref().unwrap_or_default();
    let declared = definitions
        .iter()
        .find(|d| built_in.ends_with(&*d.file.to_string_lossy()))
        .or(definitions.first())
        .copied();
    to.push(LayoutFinding {
        rank: 0,
        kind: f.kind.name().to_owned(),
        severity: f.severity.name().to_owned(),
        message: format!(
            "{}.{} ({}) and {} ({}) share a line: {}",
            f.root, f.a.path, f.a.class, f.b.path, f.b.class, f.description
        ),
        root: f.root,
        members,
        classes: vec![f.a.class, f.b.class],
        configs: vec![f.config],
        file: declared.map_or(String::new(), |d| d.file.display().to_string()),
        line: declared.map_or(0, |d| d.line),
        heat,
        score: 0,
        pairs: 1,
        others: Vec::new(),
        stores: holds.as_deref().map_or(check.stores, stores_to),
        holds,
        evidence,
        rules_file: None,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(ty: &str, path: &str, function: &str) -> Declaration {
        Declaration::read_in(ty, path, function, Role::Fast, None)
    }

    #[test]
    fn a_member_every_lockless_store_of_which_takes_or_drops_one_counts_references() {
        let written = |path: &str, op: &str| Declaration {
            said: Said::Written(Write::Atomic(op.into()), Vec::new()),
            ..read("anon_vma", path, "f")
        };
        let declarations = [
            written("refcount", "atomic_inc"),
            written("refcount", "atomic_dec_and_test"),
            written("refcount", "atomic_inc_not_zero"),
            written("usage", "refcount_inc"),
            written("usage", "kref_put"),
            written("pgtables", "atomic_long_add"),
            written("pgtables", "atomic_long_inc"),
            read("anon_vma", "root", "f"),
        ];
        let mut about: HashMap<&str, Vec<&Declaration>> = HashMap::new();
        about.insert("anon_vma", declarations.iter().collect());
        let counts = |path: &str| counts_references(&about, "anon_vma", path);
        assert!(counts("refcount"));
        assert!(counts("usage"));
        // An add of a size among them: a counter of pages, not references.
        assert!(!counts("pgtables"));
        // Only read: nothing says.
        assert!(!counts("root"));
        assert_eq!(kind_weight("write-vs-lock", &[], true), 2);
        assert_eq!(kind_weight("write-vs-lock", &[], false), 4);
        assert_eq!(kind_weight("false-sharing", &[], true), 4);
    }

    #[test]
    fn a_pair_is_as_hot_as_the_geometric_mean_of_its_sides() {
        // 7.3's drafted heats: mm_struct's pgtables_bytes (37) beside
        // mmap_lock (961); kvm_vcpu's mode (9), written on guest entry,
        // beside kvm (276 readers): by the hotter side alone they were
        // ranks 1 and 6; by both, a cold writer counts for what it is.
        assert_eq!(pair_heat(Some(37), Some(961)), 188);
        assert_eq!(pair_heat(Some(9), Some(276)), 49);
        assert_eq!(pair_heat(Some(98), Some(708)), 263);
        assert_eq!(pair_heat(None, Some(534)), 0);
        assert_eq!(pair_heat(Some(u64::MAX), Some(u64::MAX)), u32::MAX as u64);
        // 7.3's address_space.flags: tested on 200 paths, set by setup.
        let flags = DraftField {
            path: "flags".into(),
            rule: None,
            mark: None,
            evidence: Vec::new(),
            conflicts: Vec::new(),
            heat: Some(200),
            write_heat: Some(3),
        };
        assert_eq!(side_heat(&flags, "lockless-write"), Some(3));
        assert_eq!(side_heat(&flags, "hot-read"), Some(200));
        let never = DraftField {
            write_heat: None,
            ..flags
        };
        assert_eq!(side_heat(&never, "lockless-write"), None);
    }

    #[test]
    fn holders_read_on_fast_paths_are_kept_the_most_read_first_and_building_blocks_left_out() {
        let held = |holder: &str, held: &str, member: &str| {
            (holder.to_owned(), held.to_owned(), vec![member.to_owned()])
        };
        let holding = vec![
            held("memcg_node", "lruvec", "lruvec"),
            held("pgdat", "lruvec", "__lruvec"),
            held("quiet", "lruvec", "lruvec"),
            held("a", "lruvec", "l"),
            held("b", "lruvec", "l"),
            held("net", "refcount", "ns"),
        ];
        let declarations = vec![
            read("memcg_node", "memcg", "f"),
            read("memcg_node", "stats", "g"),
            read("pgdat", "node_id", "f"),
            // A read through the held member is the held struct's.
            read("quiet", "lruvec", "f"),
            read("a", "x", "f"),
            read("b", "y", "f"),
            read("net", "proc_net", "f"),
        ];
        // refcount: a building block, more structs lead to it than the
        // bound.
        let users = |ty: &str| if ty == "refcount" { 1000 } else { 2 };
        let kept = holders_read(holding, &declarations, &users);
        let names: Vec<&str> = kept.iter().map(|(h, ..)| h.as_str()).collect();
        // Three at most: memcg_node (two readers), then of a, b and pgdat
        // (one each) the first two by name; quiet's only read is through
        // the member holding the lruvec. Sorted.
        assert_eq!(names, ["a", "b", "memcg_node"]);
    }
}
