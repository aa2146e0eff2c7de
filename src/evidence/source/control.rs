//! The control path across calls: a function whose every seen call is
//! made from the control path (a netlink or ioctl handler, a function
//! that holds or asserts the RTNL, or a function itself on the control
//! path by this rule) runs there too, whatever its name: `dev_set_mtu()`
//! calls `__dev_set_mtu()`, which stores `dev->mtu`. The least such set,
//! from nothing, rounds until nothing changes; the fast-path accesses
//! made in it are then [`Role::Control`].
//!
//! A function named as a value (`.ndo_open = foo`, a callback given to
//! `INIT_WORK()`) is called through the pointer, from wherever that is:
//! it is left out, as a function defined twice. Seen: an initializer at
//! file scope or in a body, an argument or an assignment in a body of the
//! file that defines it. An iterator's callback
//! (`netdev_for_each_tx_queue(dev, f, arg)`) is a call (see the walker).

use std::collections::HashSet;

use super::callers::Sites;
use super::{Declaration, Role};

/// Rounds of the fixpoint, at most: a chain of callees this deep.
const MAX_ROUNDS: usize = 16;

/// The functions of `sites` never named as a value (not in `pointed`,
/// see [`super::callers::pointed`]) every seen call of which is made on
/// the control path.
pub(super) fn control_by_callers(sites: &Sites<'_>, pointed: &HashSet<&str>) -> HashSet<String> {
    let mut control: HashSet<String> = HashSet::new();
    for _ in 0..MAX_ROUNDS {
        let next: HashSet<String> = sites
            .iter()
            .filter(|(callee, calls)| {
                !pointed.contains(*callee)
                    && calls
                        .iter()
                        .all(|c| c.control || control.contains(&c.caller))
            })
            .map(|(callee, _)| (*callee).to_owned())
            .collect();
        if next == control {
            break;
        }
        control = next;
    }
    control
}

/// Marks the fast-path accesses in `declarations` made in a function of
/// `control` (see [`control_by_callers`]) as the control path's.
pub(super) fn mark_control_by_callers(declarations: &mut [Declaration], control: &HashSet<String>) {
    for d in declarations.iter_mut() {
        if d.role == Role::Fast && d.function.as_ref().is_some_and(|f| control.contains(f)) {
            d.role = Role::Control;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::source::callers::{Call, pointed, sites};
    use std::collections::HashMap;

    fn call(caller: &str, callee: &str, control: bool, pointer: bool) -> Call {
        Call {
            control,
            pointer,
            ..Call::between(caller, callee)
        }
    }

    #[test]
    fn a_function_only_the_control_path_calls_is_on_it() {
        let calls = [
            // dev_set_mtu holds the RTNL; __dev_set_mtu and what it calls
            // are on the control path; notify is also called from a fast
            // path; open is an ops member, called from who knows where.
            call("dev_set_mtu", "__dev_set_mtu", true, false),
            call("__dev_set_mtu", "__dev_set_mtu_ext", false, false),
            call("__dev_set_mtu", "notify", false, false),
            call("xmit", "notify", false, false),
            call("dev_set_mtu", "open", true, false),
            call("ops_table", "open", false, true),
            // reset_task is given to INIT_WORK() by a control function,
            // and runs later from a worker.
            call("dev_set_mtu", "reset_task", true, false),
            // A recursion entered only from itself is on no path.
            call("walk", "walk2", false, false),
            call("walk2", "walk", false, false),
        ];
        let defined: HashMap<String, usize> = [
            "dev_set_mtu",
            "__dev_set_mtu",
            "__dev_set_mtu_ext",
            "notify",
            "xmit",
            "open",
            "walk",
            "walk2",
            "reset_task",
        ]
        .iter()
        .map(|f| (f.to_string(), 1))
        .collect();
        let named = HashSet::from(["reset_task".to_owned()]);
        let control = control_by_callers(&sites(&calls, &defined), &pointed(&calls, &named));
        let mut got: Vec<&str> = control.iter().map(String::as_str).collect();
        got.sort_unstable();
        assert_eq!(got, ["__dev_set_mtu", "__dev_set_mtu_ext"]);

        let decl = |f: &str, role| Declaration::read_in("net_device", "mtu", f, role, None);
        let mut ds = [
            decl("__dev_set_mtu", Role::Fast),
            decl("__dev_set_mtu", Role::Construction),
            decl("notify", Role::Fast),
        ];
        mark_control_by_callers(&mut ds, &control);
        let roles: Vec<Role> = ds.iter().map(|d| d.role).collect();
        assert_eq!(roles, [Role::Control, Role::Construction, Role::Fast]);
    }
}
