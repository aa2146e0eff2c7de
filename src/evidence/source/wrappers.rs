//! Lock wrappers: functions of the headers whose body takes (and does
//! not release), asserts or releases a lock that is a member of one of
//! their parameters (`mmap_write_lock(mm)` takes `&mm->mmap_lock`).

use std::collections::{HashMap, HashSet};

/// What a call of a lock wrapper does: takes or releases the lock that
/// is member `member` of its argument `param` (`mmap_write_lock(mm)`
/// takes `&mm->mmap_lock`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Effect {
    pub(super) param: usize,
    pub(super) member: String,
    pub(super) release: bool,
    /// Taken shared (see [`Held::shared`]).
    pub(super) shared: bool,
}

/// The lock wrappers of a tree's headers, by name: functions whose body
/// takes (and does not release), asserts or releases a lock that is a
/// member of one of their parameters. A name defined twice with different
/// effects is no wrapper.
#[derive(Clone, Debug, Default)]
pub(crate) struct Wrappers {
    known: HashMap<String, Vec<Effect>>,
    ambiguous: HashSet<String>,
}

impl Wrappers {
    /// Adds wrapper `name` with `effects`: a name seen before with other
    /// effects is no wrapper.
    pub(super) fn add(&mut self, name: String, effects: Vec<Effect>) {
        if self.ambiguous.contains(&name) {
            return;
        }
        match self.known.get(&name) {
            Some(known) if *known != effects => {
                self.known.remove(&name);
                self.ambiguous.insert(name);
            }
            Some(_) => {}
            None => {
                self.known.insert(name, effects);
            }
        }
    }

    /// Adds the wrappers `other` found.
    pub(super) fn merge(mut self, other: Wrappers) -> Wrappers {
        for name in other.ambiguous {
            self.known.remove(&name);
            self.ambiguous.insert(name);
        }
        for (name, effects) in other.known {
            self.add(name, effects);
        }
        self
    }

    pub(super) fn get(&self, name: &str) -> Option<&Vec<Effect>> {
        self.known.get(name)
    }
}
