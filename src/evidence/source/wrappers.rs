//! Lock wrappers: functions of the headers whose body takes (and does
//! not release), asserts or releases a lock that is a member of one of
//! their parameters (`mmap_write_lock(mm)` takes `&mm->mmap_lock`), or
//! returns its address (`qdisc_lock(q)` is `&q->q.lock`).

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use super::members::is_identifier;
use super::vocabulary::may_lock;

/// What a call of a lock wrapper does to the lock that is member
/// `member` of its argument `param` (`mmap_write_lock(mm)` takes
/// `&mm->mmap_lock`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Effect {
    pub(super) param: usize,
    pub(super) member: String,
    pub(super) act: Act,
}

/// What a wrapper does to its lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Act {
    /// Takes (or asserts) it, shared or not (see [`Held::shared`]).
    ///
    /// [`Held::shared`]: super::Held::shared
    Take { shared: bool },
    /// Releases it.
    Release,
    /// Returns its address and does nothing else (`qdisc_lock(q)`): a
    /// lock expression of its own, taken where it is passed to a lock.
    Address,
}

/// The lock wrappers of a tree's headers, by name: functions whose body
/// takes (and does not release), asserts or releases a lock that is a
/// member of one of their parameters, or only returns its address. A
/// name defined twice with different effects is no wrapper.
#[derive(Clone, Debug, Default)]
pub(crate) struct Wrappers {
    known: HashMap<String, Vec<Effect>>,
    ambiguous: HashSet<String>,
    /// Functions named for a lock that do nothing to one: beside an
    /// accessor of the same name (`pmd_lockptr()` returns `&mm->
    /// page_table_lock` only when page tables have no locks of their
    /// own), neither is known.
    plain: HashSet<String>,
    /// The wrappers that release a lock under a name without the
    /// kernel's locking words (see [`Wrappers::may_lock_in`]), listed
    /// once all are known.
    unworded: OnceLock<Vec<String>>,
    /// Members named by a macro (`#define d_lock d_lockref.lock`,
    /// `#define sk_state __sk_common.skc_state`): the path each stands
    /// for.
    aliases: HashMap<String, Vec<String>>,
    /// Names defined as two different paths: no alias.
    ambiguous_aliases: HashSet<String>,
    /// The wrappers `.c` files define for other files to call
    /// (`netif_tx_lock()` in net/sched/sch_generic.c takes
    /// `&dev->tx_global_lock`), looked up after these, where the calling
    /// file does not define the name itself (see [`Wrappers::exported`]).
    exported: HashMap<String, Vec<Effect>>,
}

impl Wrappers {
    /// Adds wrapper `name` with `effects`: a name seen before with other
    /// effects is no wrapper.
    pub(super) fn add(&mut self, name: String, effects: Vec<Effect>) {
        self.unworded = OnceLock::new();
        if !self.ambiguous.contains(&name) && self.plain.contains(&name) && is_address(&effects) {
            self.ambiguous.insert(name);
            return;
        }
        insert_once(&mut self.known, &mut self.ambiguous, name, effects);
    }

    /// Adds function `name`, named for a lock, that does nothing to one.
    pub(super) fn add_plain(&mut self, name: String) {
        self.unworded = OnceLock::new();
        if self.known.get(&name).is_some_and(|e| is_address(e)) {
            self.known.remove(&name);
            self.ambiguous.insert(name.clone());
        }
        self.plain.insert(name);
    }

    /// Adds member alias `name` for `path` (see [`member_aliases`]): a
    /// name defined before as another path is none.
    pub(super) fn add_alias(&mut self, name: String, path: Vec<String>) {
        insert_once(&mut self.aliases, &mut self.ambiguous_aliases, name, path);
    }

    /// The member path macro `name` stands for, if it is a member alias.
    pub(super) fn alias(&self, name: &str) -> Option<&[String]> {
        self.aliases.get(name).map(Vec::as_slice)
    }

    /// Adds the wrappers `other` found.
    pub(super) fn merge(mut self, other: Wrappers) -> Wrappers {
        for name in other.ambiguous {
            self.known.remove(&name);
            self.ambiguous.insert(name);
        }
        for name in other.plain {
            self.add_plain(name);
        }
        for (name, effects) in other.known {
            self.add(name, effects);
        }
        for name in other.ambiguous_aliases {
            self.aliases.remove(&name);
            self.ambiguous_aliases.insert(name);
        }
        for (name, path) in other.aliases {
            self.add_alias(name, path);
        }
        self
    }

    /// The names of the wrappers that take a lock, sorted.
    pub(super) fn takers(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .known
            .iter()
            .filter(|(_, effects)| effects.iter().any(|e| matches!(e.act, Act::Take { .. })))
            .map(|(name, _)| name.clone())
            .collect();
        names.sort_unstable();
        names
    }

    /// Do these wrappers say what `other` says of every name?
    pub(super) fn same_as(&self, other: &Wrappers) -> bool {
        self.known == other.known
            && self.ambiguous == other.ambiguous
            && self.plain == other.plain
            && self.aliases == other.aliases
            && self.ambiguous_aliases == other.ambiguous_aliases
            && self.exported == other.exported
    }

    pub(super) fn get(&self, name: &str) -> Option<&Vec<Effect>> {
        self.known.get(name)
    }

    /// The effects of `name` when a `.c` file exports it as a wrapper
    /// (see [`Wrappers::exporting`]).
    pub(super) fn exported(&self, name: &str) -> Option<&Vec<Effect>> {
        self.exported.get(name)
    }

    /// Are any wrappers of `.c` files known?
    pub(super) fn exports(&self) -> bool {
        !self.exported.is_empty()
    }

    /// These wrappers with the known wrappers of `files` (the merged
    /// wrappers `.c` files export, see [`Wrappers::only`]) as the
    /// exported ones, replacing those they had.
    pub(super) fn exporting(mut self, files: &Wrappers) -> Wrappers {
        self.exported = files.known.clone();
        self
    }

    /// These wrappers with what `found` (wrappers read again) says of
    /// each name it knows in place of what these said; a name these
    /// found ambiguous stays so.
    pub(super) fn overridden_by(mut self, found: Wrappers) -> Wrappers {
        self.unworded = OnceLock::new();
        for name in found.ambiguous {
            self.known.remove(&name);
            self.ambiguous.insert(name);
        }
        for (name, effects) in found.known {
            if !self.ambiguous.contains(&name) {
                self.known.insert(name, effects);
            }
        }
        self
    }

    /// The wrappers these are for the functions `names` (a `.c` file's
    /// non-static ones, which other files may call).
    pub(super) fn only(&self, names: &HashSet<&str>) -> Wrappers {
        let keep = |name: &String| names.contains(name.as_str());
        Wrappers {
            known: self
                .known
                .iter()
                .filter(|(n, _)| keep(n))
                .map(|(n, e)| (n.clone(), e.clone()))
                .collect(),
            ambiguous: self.ambiguous.iter().filter(|n| keep(n)).cloned().collect(),
            plain: self.plain.iter().filter(|n| keep(n)).cloned().collect(),
            ..Wrappers::default()
        }
    }

    /// The names a reading with `self` known takes otherwise than one with
    /// `before` known: a wrapper's effects changed, found or lost, in
    /// either layer.
    pub(super) fn changed_from(&self, before: &Wrappers) -> HashSet<String> {
        let lookup = |w: &Wrappers, n: &str| w.known.get(n).or_else(|| w.exported.get(n)).cloned();
        self.known
            .keys()
            .chain(self.exported.keys())
            .chain(before.known.keys())
            .chain(before.exported.keys())
            .filter(|n| lookup(self, n) != lookup(before, n))
            .cloned()
            .collect()
    }

    /// May C text `text` (a function) take or release a lock, with these
    /// wrappers known? A test of its text only: the kernel's locking
    /// words, the socket lock's `release_sock()`, or the name of a
    /// wrapper that releases a lock without them.
    pub(super) fn may_lock_in(&self, text: &str) -> bool {
        let unworded = self.unworded.get_or_init(|| {
            let mut names: Vec<String> = self
                .known
                .iter()
                .filter(|(name, effects)| {
                    !may_lock(name) && effects.iter().any(|e| e.act == Act::Release)
                })
                .map(|(name, _)| name.clone())
                .collect();
            names.sort_unstable();
            names
        });
        may_lock(text)
            || text.contains("release_sock")
            || unworded.iter().any(|n| text.contains(n.as_str()))
    }
}

/// Adds `value` for `name` to `map` unless `name` is in `ambiguous`; a
/// name seen before with another value moves there.
fn insert_once<V: PartialEq>(
    map: &mut HashMap<String, V>,
    ambiguous: &mut HashSet<String>,
    name: String,
    value: V,
) {
    if ambiguous.contains(&name) {
        return;
    }
    match map.get(&name) {
        Some(known) if *known != value => {
            map.remove(&name);
            ambiguous.insert(name);
        }
        Some(_) => {}
        None => {
            map.insert(name, value);
        }
    }
}

/// The member aliases C text `text` defines: object-like macros whose
/// whole body is a path of two or more members (`#define d_lock
/// d_lockref.lock`, `#define inet_daddr sk.__sk_common.skc_daddr`), which
/// the preprocessor puts wherever the name is a field (`dentry->d_lock`).
pub(super) fn member_aliases(text: &str) -> Vec<(String, Vec<String>)> {
    if !text.contains("#define") {
        return Vec::new();
    }
    // An identifier, all of it (`is_identifier()` looks at its start).
    let word =
        |w: &str| is_identifier(w) && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    text.lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix('#')?.trim_start();
            let rest = rest.strip_prefix("define")?;
            let rest = rest.strip_prefix([' ', '\t'])?.trim_start();
            let (name, body) = rest.split_once([' ', '\t'])?;
            let body = match body.find("/*") {
                Some(at) => &body[..at],
                None => body,
            }
            .trim();
            let path: Vec<String> = body.split('.').map(str::to_owned).collect();
            (word(name) && path.len() >= 2 && path.iter().all(|p| word(p)))
                .then(|| (name.to_owned(), path))
        })
        .collect()
}

/// Effects that only return a lock's address.
fn is_address(effects: &[Effect]) -> bool {
    effects.iter().any(|e| e.act == Act::Address)
}
