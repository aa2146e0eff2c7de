//! Objects built or torn down across calls: a function that allocates
//! an object and passes it to another before publishing it
//! (`create_cache()` gives the `kmem_cache` it allocated to
//! `do_kmem_cache_create()`, which gives it to `calculate_sizes()`)
//! builds it in the callee too; a function that tears an object down
//! (`inet_csk_destroy_sock()`) tears it down in a callee only it calls. A
//! parameter is built (torn down) when every call of its function seen
//! passes such an object there, or the caller's own such parameter; the
//! least such set, from nothing, rounds until nothing changes. The
//! callee's accesses through it are then [`Role::Construction`]
//! ([`Role::Teardown`]).

use std::collections::HashSet;

use super::callers::{Passed, Sites};
use super::{Declaration, Role};

/// Rounds of the fixpoint, at most: a chain of callees this deep.
const MAX_ROUNDS: usize = 16;

/// The (function, parameter) pairs of `sites` every seen call of which
/// passes an object being built (`stage` is [`Passed::Built`]) or torn
/// down ([`Passed::Dying`]). A function named as a value (in `pointed`:
/// `.reset = fq_reset`, which `fq_destroy()` also calls) is called
/// through the pointer on objects in use too: it is left out.
pub(super) fn passed_parameters(
    sites: &Sites<'_>,
    pointed: &HashSet<&str>,
    stage: Passed,
) -> HashSet<(String, usize)> {
    let mut found: HashSet<(String, usize)> = HashSet::new();
    for _ in 0..MAX_ROUNDS {
        let mut next = HashSet::new();
        for (callee, calls) in sites.iter().filter(|(f, _)| !pointed.contains(*f)) {
            let arity = calls.iter().map(|c| c.passed.len()).min().unwrap_or(0);
            for i in 0..arity {
                let all = calls.iter().all(|c| match c.passed[i] {
                    Passed::Param(j) => found.contains(&(c.caller.clone(), j)),
                    p => p == stage,
                });
                if all {
                    next.insert(((*callee).to_owned(), i));
                }
            }
        }
        if next == found {
            break;
        }
        found = next;
    }
    found
}

/// Marks the fast-path accesses in `declarations` made through a
/// parameter of `passed` (see [`passed_parameters`]) as `role`.
pub(super) fn mark_passed_by_callers(
    declarations: &mut [Declaration],
    passed: &HashSet<(String, usize)>,
    role: Role,
) {
    for d in declarations.iter_mut() {
        if let (Role::Fast, Some(f), Some(i)) = (d.role, &d.function, d.param)
            && passed.contains(&(f.clone(), i))
        {
            d.role = role;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::source::callers::{Call, sites};
    use std::collections::HashMap;

    fn call(caller: &str, callee: &str, passed: &[Passed]) -> Call {
        Call {
            passed: passed.to_vec(),
            ..Call::between(caller, callee)
        }
    }

    #[test]
    fn an_object_built_or_torn_down_by_the_caller_is_so_in_its_callees() {
        use Passed::*;
        let calls = [
            // create_cache allocates s and passes it on; do_create passes
            // its parameter 0 to sizes, which reshape also calls on a
            // cache in use.
            call("create_cache", "do_create", &[Built, Other]),
            call("do_create", "sizes", &[Param(0)]),
            call("do_create", "open", &[Param(0)]),
            call("reshape", "open", &[Other]),
            // destroy tears down its parameter and passes it to reset,
            // which an ops table also names, and to drain.
            call("destroy", "reset", &[Dying]),
            call("destroy", "drain", &[Dying]),
        ];
        let defined: HashMap<String, usize> = [
            "create_cache",
            "do_create",
            "sizes",
            "open",
            "reshape",
            "destroy",
            "reset",
            "drain",
        ]
        .iter()
        .map(|f| (f.to_string(), 1))
        .collect();
        let pointed = HashSet::from(["reset"]);
        let sites = sites(&calls, &defined);
        let built = passed_parameters(&sites, &pointed, Built);
        let mut got: Vec<(String, usize)> = built.iter().cloned().collect();
        got.sort();
        assert_eq!(got, [("do_create".into(), 0), ("sizes".into(), 0)]);
        let dying: Vec<(String, usize)> = passed_parameters(&sites, &pointed, Dying)
            .into_iter()
            .collect();
        assert_eq!(dying, [("drain".into(), 0)]);
        let decl =
            |f: &str, param| Declaration::read_in("kmem_cache", "size", f, Role::Fast, param);
        let mut ds = [
            decl("sizes", Some(0)),
            decl("open", Some(0)),
            decl("sizes", None),
        ];
        mark_passed_by_callers(&mut ds, &built, Role::Construction);
        let roles: Vec<Role> = ds.iter().map(|d| d.role).collect();
        assert_eq!(roles, [Role::Construction, Role::Fast, Role::Fast]);
    }
}
