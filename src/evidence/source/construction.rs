//! Objects built across calls: a function that allocates an object and
//! passes it to another before publishing it (`create_cache()` gives the
//! `kmem_cache` it allocated to `do_kmem_cache_create()`, which gives it
//! to `calculate_sizes()`) builds it in the callee too. A parameter is
//! built when every call of its function seen passes a built object
//! there, or the caller's own built parameter; the least such set, from
//! nothing, rounds until nothing changes. The callee's accesses through
//! it are then [`Role::Construction`].

use std::collections::HashSet;

use super::callers::{Passed, Sites};
use super::{Declaration, Role};

/// Rounds of the fixpoint, at most: a chain of callees this deep.
const MAX_ROUNDS: usize = 16;

/// The (function, parameter) pairs of `sites` every seen call of which
/// passes an object being built.
pub(super) fn built_parameters(sites: &Sites<'_>) -> HashSet<(String, usize)> {
    let mut built: HashSet<(String, usize)> = HashSet::new();
    for _ in 0..MAX_ROUNDS {
        let mut next = HashSet::new();
        for (callee, calls) in sites {
            let arity = calls.iter().map(|c| c.passed.len()).min().unwrap_or(0);
            for i in 0..arity {
                let all = calls.iter().all(|c| match c.passed[i] {
                    Passed::Built => true,
                    Passed::Param(j) => built.contains(&(c.caller.clone(), j)),
                    Passed::Other => false,
                });
                if all {
                    next.insert(((*callee).to_owned(), i));
                }
            }
        }
        if next == built {
            break;
        }
        built = next;
    }
    built
}

/// Marks the fast-path accesses in `declarations` made through a
/// parameter every caller passes while building the object (`built`, see
/// [`built_parameters`]) as construction.
pub(super) fn mark_built_by_callers(
    declarations: &mut [Declaration],
    built: &HashSet<(String, usize)>,
) {
    for d in declarations.iter_mut() {
        if let (Role::Fast, Some(f), Some(i)) = (d.role, &d.function, d.param)
            && built.contains(&(f.clone(), i))
        {
            d.role = Role::Construction;
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
            callee: callee.into(),
            caller: caller.into(),
            held: Vec::new(),
            passed: passed.to_vec(),
            control: false,
            pointer: false,
            dispatched: false,
        }
    }

    #[test]
    fn an_object_built_by_the_caller_is_built_in_its_callees() {
        use Passed::*;
        let calls = [
            // create_cache allocates s and passes it on; do_create passes
            // its parameter 0 to sizes, which reshape also calls on a
            // cache in use.
            call("create_cache", "do_create", &[Built, Other]),
            call("do_create", "sizes", &[Param(0)]),
            call("do_create", "open", &[Param(0)]),
            call("reshape", "open", &[Other]),
        ];
        let defined: HashMap<String, usize> =
            ["create_cache", "do_create", "sizes", "open", "reshape"]
                .iter()
                .map(|f| (f.to_string(), 1))
                .collect();
        let built = built_parameters(&sites(&calls, &defined));
        let mut got: Vec<(String, usize)> = built.into_iter().collect();
        got.sort();
        assert_eq!(got, [("do_create".into(), 0), ("sizes".into(), 0)]);
        let decl =
            |f: &str, param| Declaration::read_in("kmem_cache", "size", f, Role::Fast, param);
        let mut ds = [
            decl("sizes", Some(0)),
            decl("open", Some(0)),
            decl("sizes", None),
        ];
        mark_built_by_callers(&mut ds, &built_parameters(&sites(&calls, &defined)));
        let roles: Vec<Role> = ds.iter().map(|d| d.role).collect();
        assert_eq!(roles, [Role::Construction, Role::Fast, Role::Fast]);
    }
}
