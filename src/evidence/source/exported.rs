//! The lock wrappers `.c` files define for other files to call
//! (`netif_tx_lock()` in net/sched/sch_generic.c takes
//! `&dev->tx_global_lock` for the drivers that call it): found as each
//! file is walked, they are known only once every file has been; the
//! headers that call them (`netif_tx_lock_bh()`) are read again with
//! them known, and the files that call what changed are walked again.

use std::collections::HashSet;

use super::WRAPPER_ROUNDS;
use super::callers::Call;
use super::vocabulary::may_lock;
use super::wrappers::Wrappers;

/// The wrappers `.c` files export (see [`super::Bodies::exported`]),
/// merged: a name two files export with different effects is none.
pub(super) fn merged(files: impl Iterator<Item = Wrappers>) -> Wrappers {
    files.fold(Wrappers::default(), Wrappers::merge)
}

/// The headers' wrappers `first` (read with no `.c` file's known) with
/// `exported` known: the headers that name a wrapper whose effects
/// changed read again, round after round. `reread(known, changed)` reads
/// every header that mentions a name of `changed` (see [`mentions`]) with
/// `known` known, and gives what they define, merged.
pub(super) fn headers_with<E>(
    first: &Wrappers,
    exported: &Wrappers,
    mut reread: impl FnMut(&Wrappers, &HashSet<String>) -> Result<Wrappers, E>,
) -> Result<Wrappers, E> {
    let mut known = first.clone().exporting(exported);
    let mut changed = known.changed_from(first);
    for _ in 0..WRAPPER_ROUNDS {
        if changed.is_empty() {
            break;
        }
        let found = reread(&known, &changed)?;
        let next = known.clone().overridden_by(found);
        changed = next.changed_from(&known);
        known = next;
    }
    Ok(known)
}

/// May C text `text` define a wrapper that calls one of `names`: does
/// it have a body and the kernel's locking words, as
/// [`super::wrappers_in`] asks (most of a kernel tree's header bytes are
/// register definitions), and spell one of them as a word?
pub(super) fn mentions(text: &str, names: &HashSet<String>) -> bool {
    text.contains('{')
        && may_lock(text)
        && text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|word| !word.is_empty() && names.contains(word))
}

/// Must a file whose functions made `calls`, and which defines
/// `defined` (sorted), be walked again once the wrappers `changed` are
/// known otherwise? When it calls one it does not define itself.
pub(super) fn calls_changed(calls: &[Call], defined: &[String], changed: &HashSet<String>) -> bool {
    calls
        .iter()
        .any(|c| changed.contains(&c.callee) && defined.binary_search(&c.callee).is_err())
}
