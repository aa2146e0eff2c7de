//! Setters: a function whose body is one expression setting a member of
//! a parameter (`bdev_set_flag()`'s `atomic_or(1 << flag, &bdev->
//! __bd_flags)`, `blk_queue_flag_set()`'s `set_bit(flag, &q->
//! queue_flags)`, `mapping_set_unevictable()`) stores where it is called.
//! Its store is told at each call seen instead, with the caller's name,
//! line and locks, on the caller's path: a driver's probe, an ioctl, an
//! object being built, or a fast path. Told in the setter, one line of a
//! header made the member a fast path's lockless writer whoever called
//! it. A reference count's getter (`refcount_inc()`, `atomic_dec()`)
//! stays its own: it is no setting; so does a plain store, which the
//! locks of its setter's callers already place.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::callers::{Call, Passed, Test};
use super::graph::{Graph, Own, spelled, tests_of};
use super::vocabulary::is_failure;
use super::{Declaration, Role, Said, Write};

/// One call of a setter, its caller's file, and whether the caller
/// tests the setter's twin first (see [`Test::Twin`]).
#[derive(Clone, Debug)]
pub(super) struct Site {
    call: Call,
    file: Arc<PathBuf>,
    twin: bool,
}

/// Per setter, as the graph names it: the calls seen.
pub(super) type Setters = HashMap<String, Vec<Site>>;

/// The calls of `graph`'s one-expression functions written in the source
/// (not through a pointer, nor an ops table's dispatch).
pub(super) fn sites(graph: &Graph) -> Setters {
    let files: Vec<Arc<PathBuf>> = graph.files.iter().cloned().map(Arc::new).collect();
    let mut out: Setters = HashMap::new();
    for c in graph.calls.iter().filter(|c| {
        c.line > 0 && !c.pointer && !c.dispatched && graph.one_liners.contains(&c.callee)
    }) {
        let Some(file) = files.get(c.file as usize) else {
            continue;
        };
        out.entry(c.callee.clone()).or_default().push(Site {
            call: c.clone(),
            file: Arc::clone(file),
            twin: tests_of(&graph.tests, c).contains(&Test::Twin),
        });
    }
    out
}

/// Is `write` an atomic setting (a flag set or cleared, a value set
/// whole), not a count moved (`refcount_inc`, `atomic_long_add`), nor a
/// plain store (whose setter's callers' locks say who makes it: see
/// [`super::callers`])?
pub(super) fn sets(write: &Write) -> bool {
    match write.untested() {
        Write::Atomic(name) | Write::NonAtomic(name) => {
            name.contains("_bit")
                || name.ends_with("_set")
                || name.ends_with("_or")
                || name.ends_with("_andnot")
                || name.ends_with("_and")
                || name == "set_mask_bits"
        }
        _ => false,
    }
}

/// `declarations` with each setting a setter of `setters` makes through
/// a parameter on the fast path told at its calls instead (see this
/// module). `own` names a file's own functions as the graph does.
pub(super) fn at_call_sites(declarations: &mut Vec<Declaration>, setters: &Setters, own: &Own) {
    let calls = |d: &Declaration| -> Option<&Vec<Site>> {
        let (Said::Written(w, _), Role::Fast, Some(_), Some(f)) =
            (&d.said, d.role, d.param, &d.function)
        else {
            return None;
        };
        if !sets(w) {
            return None;
        }
        setters
            .get(Graph::key(own, f, &d.file).as_ref())
            .filter(|s| !s.is_empty())
    };
    if !declarations.iter().any(|d| calls(d).is_some()) {
        return;
    }
    let mut out = Vec::with_capacity(declarations.len());
    for d in declarations.drain(..) {
        match calls(&d) {
            Some(sites) => out.extend(sites.iter().map(|s| at_site(&d, s))),
            None => out.push(d),
        }
    }
    *declarations = out;
}

/// Store `d` of a setter, made at call `site`.
fn at_site(d: &Declaration, Site { call, file, twin }: &Site) -> Declaration {
    let param = d.param.unwrap_or(0);
    let caller = spelled(&call.caller);
    let passed = call.passed.get(param).copied();
    let role = match passed {
        _ if call.control => Role::Control,
        Some(Passed::Built) => Role::Construction,
        Some(Passed::Dying) => Role::Teardown,
        _ if call.rare || is_failure(caller) => Role::Failure,
        _ => Role::Fast,
    };
    // `if (bdev_test_flag(b, F)) return false; bdev_set_flag(b, F);`
    // sets `F` only on a change.
    let said = match &d.said {
        Said::Written(w, held) => Said::Written(
            match twin {
                true => w.clone().on_change(),
                false => w.clone(),
            },
            call.held.iter().chain(held).cloned().collect(),
        ),
        other => other.clone(),
    };
    Declaration {
        said,
        function: Some(caller.to_owned()),
        file: file.as_ref().clone(),
        line: call.line as usize,
        role,
        param: match passed {
            Some(Passed::Param(j)) => Some(j),
            _ => None,
        },
        ..d.clone()
    }
}
