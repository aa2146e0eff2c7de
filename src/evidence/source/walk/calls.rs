//! A call in a function's body: a lock taken or released (by its name,
//! a header's or the file's own wrapper, the socket or run-queue lock),
//! a marked or atomic load, a write through `WRITE_ONCE`, a release
//! store, an atomic or a bit operation, `data_race()`, a per-CPU access,
//! and the call itself recorded for callers' locks and reach.

use tree_sitter::Node;

use super::on_change::Stored;
use super::{Function, leaves_after, strip_address, strip_parentheses};
use crate::evidence::source::callers::Call;
use crate::evidence::source::reach::dispatcher_of_argument;
use crate::evidence::source::vocabulary::{
    is_assertion, is_atomic_read, is_atomic_write, is_bitop, is_diagnostic_call, is_lock,
    is_unlock, iteration_state, list_write, run_queue_lock, socket_lock,
};
use crate::evidence::source::wrappers::{Act, Effect};
use crate::evidence::source::{Declaration, Said, Write};

impl Function<'_> {
    /// A call: a lock taken or released, or a write through a macro or
    /// an atomic. True when its arguments need no further reading.
    pub(super) fn call(&mut self, node: Node<'_>, out: &mut Vec<Declaration>) -> bool {
        let Some(function) = node.child_by_field_name("function") else {
            return false;
        };
        let args: Vec<Node<'_>> = node
            .child_by_field_name("arguments")
            .map(|a| {
                let mut c = a.walk();
                a.named_children(&mut c).collect()
            })
            .unwrap_or_default();
        // `guard(spinlock_irq)(&x->lock)`, `scoped_guard(spinlock, &x->lock)`.
        if function.kind() == "call_expression"
            && let Some(inner) = function.child_by_field_name("function")
            && self.of(inner) == "guard"
        {
            if let Some(lock) = args.first() {
                self.take(*lock, "guard", out);
            }
            return true;
        }
        let name = self.of(function);
        // `kenter("%d", key->serial)`, `trace_x(p->pid)`: loads made only
        // to print or trace, on request.
        if is_diagnostic_call(name) {
            return true;
        }
        if let Some(member) = iteration_state(name)
            && let [var, object, ..] = args[..]
            && var.kind() == "identifier"
            && let Some(object) = self.of(object).strip_prefix('&')
        {
            let var = self.of(var).to_owned();
            self.states.retain(|(v, _, _)| *v != var);
            self.states.push((var, member, object.trim().to_owned()));
            return true;
        }
        if function.kind() == "identifier" {
            let passed = args.iter().map(|a| self.passed(*a)).collect();
            let tested = self.test_index(node, name, &args);
            self.calls.push(Call {
                held: self.held.iter().filter(|h| !h.shared).cloned().collect(),
                passed,
                control: self.control,
                rare: self.in_rare_branch(node),
                line: u32::try_from(node.start_position().row + 1).unwrap_or(u32::MAX),
                tested,
                ..Call::between(&self.name, name)
            });
        }
        // `INIT_WORK(&w, f)`: `f` may be a function, called through the
        // pointer later. An iterator's (`netdev_for_each_tx_queue(dev, f,
        // arg)`) calls it here, with this function's locks and path; a
        // list iterator's cursor is a variable.
        for arg in args.iter().filter(|a| a.kind() == "identifier") {
            let arg = self.of(*arg);
            if self.params.iter().any(|p| p == arg) {
                continue;
            }
            match name.contains("for_each") {
                true if !self.variables.iter().any(|(v, _)| v == arg) => {
                    self.values.iterated.push(Call {
                        held: self.held.iter().filter(|h| !h.shared).cloned().collect(),
                        control: self.control,
                        ..Call::between(&self.name, arg)
                    })
                }
                true => {}
                false => self.values.named.push(arg),
            }
        }
        // `netif_napi_add_weight(dev, napi, poll, 64)`: `poll` is called
        // by the kernel's NAPI loop, on the receive path.
        for (i, arg) in args.iter().enumerate() {
            if arg.kind() == "identifier"
                && let Some(dispatcher) = dispatcher_of_argument(name, i)
            {
                self.calls.push(Call::dispatch(dispatcher, self.of(*arg)));
            }
        }
        // `INDIRECT_CALL_INET(pt_prev->func, ipv6_rcv, ip_rcv, skb, ...)`:
        // the functions the pointer usually is, named for the fast path.
        if name.starts_with("INDIRECT_CALL") {
            for arg in args.iter().skip(1).filter(|a| a.kind() == "identifier") {
                self.calls.push(Call {
                    control: self.control,
                    pointer: true,
                    ..Call::between(&self.name, self.of(*arg))
                });
            }
        }
        if name == "scoped_guard" {
            if let Some(lock) = args.get(1) {
                self.take(*lock, "scoped_guard", out);
            }
            return false;
        }
        // An accessor (`qdisc_lock(q)`) does nothing here: the lock whose
        // address it returns is taken where that is passed.
        let effects = socket_lock(name)
            .or_else(|| run_queue_lock(name))
            .or_else(|| self.wrapper(name).cloned())
            .filter(|e| e.iter().any(|e| e.act != Act::Address));
        if let Some(effects) = effects {
            for e in &effects {
                let Some(arg) = args.get(e.param) else {
                    continue;
                };
                let text = self.on_state_object(self.through(*arg, &e.member));
                match e.act {
                    Act::Release if leaves_after(node) => {}
                    Act::Release => self.release(text),
                    Act::Take { shared } => {
                        let chain = self.resolve_text(&text);
                        self.hold(text, chain, name, shared, node, out);
                    }
                    Act::Address => {}
                }
            }
            // Its arguments are evaluated all the same:
            // `mmap_read_lock(vma->vm_mm)` loads `vm_mm`.
            return false;
        }
        if is_assertion(name) || is_lock(name) {
            if let Some(lock) = args.first() {
                self.take(*lock, name, out);
            }
            return true;
        }
        if is_unlock(name) {
            // An unlock on a path that then leaves (`unlock; goto
            // restart;`) releases nothing for the code after its block.
            if leaves_after(node) {
                return true;
            }
            if let Some(lock) = args.first() {
                let text = match self.lock_alias(*lock) {
                    Some((text, _)) => text,
                    None => self.of(*lock).to_owned(),
                };
                self.release(text);
            }
            return true;
        }
        if matches!(
            name,
            "READ_ONCE" | "smp_load_acquire" | "rcu_dereference" | "rcu_access_pointer"
        ) || name.starts_with("rcu_dereference_")
        {
            if let Some(arg) = args.first() {
                self.marked_load(*arg);
            }
            return false;
        }
        // `atomic_read(&x->count)`, `test_bit(nr, &x->flags)`: a lockless
        // load of the member whose address is passed.
        if is_atomic_read(name) {
            for arg in self.addresses(&args) {
                self.marked_load(arg);
            }
            return false;
        }
        if name == "data_race" {
            for arg in &args {
                let target = match arg.kind() {
                    "assignment_expression" => arg.child_by_field_name("left"),
                    "update_expression" => arg.child_by_field_name("argument"),
                    _ => None,
                };
                if let Some(t) = target {
                    self.written(t, Write::DataRace, out);
                    return true;
                }
            }
            return false;
        }
        if name.starts_with("this_cpu_")
            || name.starts_with("raw_cpu_")
            || name.starts_with("per_cpu_ptr")
        {
            if let Some(arg) = args.first() {
                // `this_cpu_inc(x->stats->n)`: the per-CPU pointer is `stats`.
                let pointer = self.pointer_of(*arg);
                for (ty, path) in self.resolve(pointer) {
                    if self.types.contains(&ty) {
                        out.push(self.declaration(&ty, &path, Said::PerCpu(name.to_owned()), *arg));
                    }
                }
            }
            return false;
        }
        if !self.types.is_empty() {
            self.needless_call(node, name, &args, out);
        }
        let write = match name {
            "WRITE_ONCE" | "__WRITE_ONCE" => Some((0, Write::Once)),
            "smp_store_release" | "store_release" | "rcu_assign_pointer" => {
                Some((0, Write::Release(name.to_owned())))
            }
            _ if is_atomic_write(name) => {
                // The address is whichever argument is one (`atomic_inc(v)`,
                // `atomic_long_add(i, v)`, `set_bit(nr, addr)`).
                let from_null = name.contains("cmpxchg")
                    && !name.contains("try_")
                    && args
                        .get(1)
                        .is_some_and(|a| matches!(self.of(*a).trim(), "NULL" | "0"));
                // A non-atomic bit operation, or a CPU's own counter's
                // (`local64_add()`: no locked instruction, only the CPU
                // owning it writes it).
                let plain = name.starts_with("__") && is_bitop(name)
                    || name.starts_with("local_")
                    || name.starts_with("local64_");
                let write = match (plain, from_null) {
                    (true, _) => Write::NonAtomic(name.to_owned()),
                    (false, true) => Write::Publish(name.to_owned()),
                    (false, false) => Write::Atomic(name.to_owned()),
                };
                // What it stores, for a test of the same before it: the
                // bit of a bit operation, the value of an `atomic_set`.
                let stored = match (is_bitop(name), name.ends_with("_set")) {
                    (true, _) => args.first().map(|nr| Stored::Bit(*nr)),
                    (false, true) => args.get(1).map(|v| Stored::Value(*v)),
                    _ => None,
                };
                for arg in self.addresses(&args) {
                    let write = match stored {
                        Some(stored) => self.on_change(arg, stored, write.clone()),
                        None => write.clone(),
                    };
                    self.written(arg, write, out);
                }
                None
            }
            // `list_add(&x->node, &y->list)` stores to both.
            _ if let Some(write) = list_write(name) => {
                for arg in self.addresses(&args) {
                    self.written(arg, write.clone(), out);
                }
                None
            }
            _ => None,
        };
        if let Some((at, write)) = write
            && let Some(arg) = args.get(at)
        {
            let write = match args.get(at + 1) {
                Some(value) => self.on_change(*arg, Stored::Value(*value), write),
                None => write,
            };
            self.written(*arg, write, out);
        }
        false
    }

    /// A wrapper's effects by its name: the file's own, else the
    /// headers', else those another `.c` file exports under a name this
    /// file does not define.
    fn wrapper(&self, name: &str) -> Option<&Vec<Effect>> {
        self.local
            .and_then(|l| l.get(name))
            .or_else(|| self.wrappers.get(name))
            .or_else(|| match self.own.contains(name) {
                true => None,
                false => self.wrappers.exported(name),
            })
    }

    /// Lock expression `lock` as the lock it stands for, with the
    /// members it names (see [`Function::resolve`]), when it is a call of
    /// an accessor (`qdisc_lock(q)`: `&q->q.lock`) or a local pointer to a
    /// lock (`root_lock` after `root_lock = qdisc_lock(q)` or `root_lock =
    /// &q->q.lock`; `ptl` after `ptl = pud_lock(mm, pud)`, a wrapper that
    /// takes one lock and returns it, which `spin_unlock(ptl)` releases).
    pub(super) fn lock_alias(&self, lock: Node<'_>) -> Option<(String, Vec<(String, String)>)> {
        let lock = strip_parentheses(lock);
        match lock.kind() {
            "identifier" => {
                let name = self.of(lock);
                self.aliases
                    .iter()
                    .rev()
                    .find(|a| a.variable == name)
                    .map(|a| (a.text.clone(), a.chain.clone()))
            }
            "call_expression" => {
                let function = lock.child_by_field_name("function")?;
                let [
                    Effect {
                        param,
                        member,
                        act: Act::Address | Act::Take { .. },
                    },
                ] = &self.wrapper(self.of(function))?[..]
                else {
                    return None;
                };
                let mut cursor = lock.walk();
                let arg = lock
                    .child_by_field_name("arguments")?
                    .named_children(&mut cursor)
                    .filter(|a| a.kind() != "comment")
                    .nth(*param)?;
                let text = self.on_state_object(self.through(arg, member));
                let chain = self.resolve_text(&text);
                Some((text, chain))
            }
            _ => None,
        }
    }

    /// Lock expression `text` through an iteration state's pointer
    /// (`&xas.xa->xa_lock` of `XA_STATE(xas, &mapping->i_pages, i)`) as
    /// the object's own (`&mapping->i_pages.xa_lock`).
    fn on_state_object(&self, text: String) -> String {
        for (var, member, object) in self.states.iter().rev() {
            if let Some(rest) = text.strip_prefix(&format!("&{var}.{member}->")) {
                return format!("&{object}.{rest}");
            }
        }
        text
    }

    /// The arguments of a call that are addresses (`&x->m`): those an
    /// atomic or bit operation works on (`atomic_inc(&v)`,
    /// `set_bit(nr, &x->flags)`).
    fn addresses<'n>(&self, args: &[Node<'n>]) -> Vec<Node<'n>> {
        args.iter()
            .copied()
            .filter(|a| self.of(*a).starts_with('&'))
            .collect()
    }

    /// A marked load (`READ_ONCE`, an atomic read) of the member `arg`
    /// names, or whose address it is.
    fn marked_load(&mut self, arg: Node<'_>) {
        let arg = strip_address(arg);
        if arg.kind() == "field_expression" {
            self.loaded(arg, true);
        }
    }
}
