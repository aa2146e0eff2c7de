//! Stores that may write what is already there ([`Needless`]): a
//! constant or another object's member stored through a pointer, a
//! compare-and-exchange loop whose new value is made from the old one, a
//! bit set or cleared; each unless a condition before it (or around it)
//! tests the same member, a variable read from it, or the object through
//! a test helper, or an atomic read-modify-write of the object took its
//! line just before.

use tree_sitter::Node;

use super::{Function, access, strip_address};
use crate::evidence::source::vocabulary::is_atomic_write;
use crate::evidence::source::{Declaration, Needless, Role, Said, Store};

/// Values written longer than this are cut in the evidence.
const MAX_VALUE: usize = 80;

impl Function<'_> {
    /// A call that stores whatever the member holds: `WRITE_ONCE`, a
    /// release store, `atomic_set`, a compare-and-exchange,
    /// `set_mask_bits`, a bit set or cleared (see this module).
    pub(super) fn needless_call(
        &self,
        node: Node<'_>,
        name: &str,
        args: &[Node<'_>],
        out: &mut Vec<Declaration>,
    ) {
        let bit = name.trim_start_matches('_');
        match name {
            "WRITE_ONCE" | "__WRITE_ONCE" | "smp_store_release" | "store_release" => {
                if let [target, value, ..] = args {
                    self.needless_store(*target, *value, name, out);
                }
            }
            _ if is_atomic_write(name) && name.ends_with("_set") => {
                if let [target, value, ..] = args {
                    self.needless_store(*target, *value, name, out);
                }
            }
            // Its old value used (`flags = set_mask_bits(...)`, `if
            // (set_mask_bits(...) & bit)`): a test-and-set, whose store
            // decides something, not a blind one.
            "set_mask_bits" if value_used(node) => {}
            "set_mask_bits" => {
                if let Some(target) = args.first() {
                    self.needless_mask(*target, args.get(2).copied(), name, out);
                }
            }
            _ if name.contains("cmpxchg")
                && !name.starts_with("this_cpu")
                && !name.starts_with("raw_cpu")
                && !name.contains("double")
                && !name.contains("128") =>
            {
                self.needless_exchange(node, name, args, out);
            }
            _ if matches!(bit, "set_bit" | "clear_bit") => {
                if let [nr, target, ..] = args {
                    self.needless_bit(*nr, *target, name, out);
                }
            }
            _ => {}
        }
    }

    /// `target` set to `value` by `how` (`=`, `WRITE_ONCE`, `atomic_set`):
    /// a needless-store candidate when the value is a constant or another
    /// object's member and nothing tests the member first.
    pub(super) fn needless_store(
        &self,
        target: Node<'_>,
        value: Node<'_>,
        how: &str,
        out: &mut Vec<Declaration>,
    ) {
        let target = strip_address(target);
        if !self.through_pointer(target) {
            return;
        }
        let Some(kind) = stored(target, value, self.text) else {
            return;
        };
        self.needless(target, kind, how, self.of(value), out);
    }

    /// A compare-and-exchange `call` (`try_cmpxchg(ptr, &old, new)`,
    /// `cmpxchg(ptr, old, new)`) in a loop whose new value is made from
    /// the old one (not by adding to it), with no test of the two.
    pub(super) fn needless_exchange(
        &self,
        call: Node<'_>,
        name: &str,
        args: &[Node<'_>],
        out: &mut Vec<Declaration>,
    ) {
        let [target, old, new, ..] = args else {
            return;
        };
        let old = match name.contains("try_cmpxchg") {
            true => strip_address(*old),
            false => *old,
        };
        if old.kind() != "identifier" || new.kind() != "identifier" {
            return;
        }
        let (old, new) = (self.of(old), self.of(*new));
        let target = strip_address(*target);
        if !self.through_pointer(target) {
            return;
        }
        let Some(lp) = enclosing_loop(call) else {
            return;
        };
        if made_from(lp, call, old, new, self.text) && !always_changes(lp, old, new, self.text) {
            self.needless(target, Store::Exchange, name, new, out);
        }
    }

    /// `set_mask_bits(ptr, mask, bits)`: a compare-and-exchange loop that
    /// writes even when the bits are already as asked.
    pub(super) fn needless_mask(
        &self,
        target: Node<'_>,
        bits: Option<Node<'_>>,
        how: &str,
        out: &mut Vec<Declaration>,
    ) {
        let target = strip_address(target);
        if self.through_pointer(target) && !self.tested(target) {
            let value = bits.map_or("", |b| self.of(b));
            self.needless(target, Store::Exchange, how, value, out);
        }
    }

    /// Bit `nr` of `target` set or cleared by `how` with no test first.
    pub(super) fn needless_bit(
        &self,
        nr: Node<'_>,
        target: Node<'_>,
        how: &str,
        out: &mut Vec<Declaration>,
    ) {
        let target = strip_address(target);
        if self.through_pointer(target) && !self.toggled(target, nr, how) {
            self.needless(target, Store::Bit, how, self.of(nr), out);
        }
    }

    /// Is bit `nr` of `target`, set or cleared by `how`, changed the other
    /// way in the other branch of the `if` around it (`if (active)
    /// set_bit(X, &zone->flags); else clear_bit(X, &zone->flags);` in
    /// `update_reclaim_active()`): a state its callers flip, each call a
    /// change?
    fn toggled(&self, target: Node<'_>, nr: Node<'_>, how: &str) -> bool {
        let other = match how.trim_start_matches('_') {
            "set_bit" => "clear_bit",
            "clear_bit" => "set_bit",
            _ => return false,
        };
        let (want, nr) = (squeeze(self.of(target)), squeeze(self.of(nr)));
        let mut up = target.parent();
        while let Some(n) = up {
            if n.kind() == "function_definition" {
                return false;
            }
            if n.kind() == "if_statement"
                && let (Some(yes), Some(no)) = (
                    n.child_by_field_name("consequence"),
                    n.child_by_field_name("alternative"),
                )
            {
                let branch = if contains(yes, target) { no } else { yes };
                let said = squeeze(self.of(branch));
                return said.contains(&format!("{other}({nr},&{want})"));
            }
            up = n.parent();
        }
        false
    }

    /// Is `target` a member reached through a pointer (`x->f`, `x->a.b`),
    /// not one of an object on the stack?
    fn through_pointer(&self, target: Node<'_>) -> bool {
        target.kind() == "field_expression" && self.of(target).contains("->")
    }

    /// Records the store at `target`, on a fast path and untested, for
    /// each wanted struct its expression names.
    fn needless(
        &self,
        target: Node<'_>,
        kind: Store,
        how: &str,
        value: &str,
        out: &mut Vec<Declaration>,
    ) {
        let value: String = crate::csource::squash(value)
            .chars()
            .take(MAX_VALUE)
            .collect();
        // A branch the code says is rare (`if (unlikely(...))`, the `else`
        // of `if (likely(...))`) is no hot path, whatever reaches it.
        if self.in_rare_branch(target) {
            return;
        }
        // Whether a condition tests it first is asked only of a store on
        // a fast path of a wanted struct, and once.
        let mut tested = None;
        for (ty, path) in self.resolve(target) {
            if !self.types.contains(&ty) {
                continue;
            }
            let said = Said::Needless(Needless {
                kind,
                how: how.to_owned(),
                value: value.clone(),
                tested: false,
                path: Vec::new(),
            });
            let mut d = self.declaration(&ty, &path, said, target);
            if d.role != Role::Fast {
                continue;
            }
            let tested =
                *tested.get_or_insert_with(|| kind != Store::Exchange && self.tested(target));
            if tested && kind == Store::Bit {
                return;
            }
            if let Said::Needless(n) = &mut d.said {
                n.tested = tested;
            }
            out.push(d);
        }
    }

    /// Does a condition around `at` or before it in its function test the
    /// member `at` names (`if (READ_ONCE(sk->sk_napi_id) != v)`), or a
    /// variable read from it (`old = READ_ONCE(x->f); if (old != v)`), or
    /// the object's state through a test helper (`if
    /// (!folio_test_referenced(folio))`: the flags word it stores into)?
    /// Or has an atomic read-modify-write of the object already taken its
    /// line before (`folio_test_clear_lru(folio)`, `test_and_set_bit(n,
    /// &p->m)`): then the store takes nothing from another CPU.
    fn tested(&self, at: Node<'_>) -> bool {
        let want = squeeze(self.of(at));
        let Some(body) = function_body(at) else {
            return false;
        };
        // The object holding the member: `folio` of `folio->flags.f`.
        let object = want.rsplit_once("->").map(|(o, _)| o.to_owned());
        let copies = copies_of(body, at, &want, self.text);
        // Each way to mention the member names one of these words: a
        // test of the text before any is squeezed or tokenized.
        let words: Vec<&str> = [Some(last_word(&want)), object.as_deref().map(last_word)]
            .into_iter()
            .flatten()
            .chain(copies.iter().map(String::as_str))
            .collect();
        let mentions = |cond: Node<'_>| {
            let text = &self.text[cond.byte_range()];
            if !words.iter().any(|w| text.contains(w)) {
                return false;
            }
            squeeze(text).contains(&want)
                || (!copies.is_empty()
                    && crate::csource::tokens(text)
                        .iter()
                        .any(|t| copies.contains(t)))
                || object
                    .as_deref()
                    .is_some_and(|o| calls_on(cond, o, self.text, |name| name.contains("test")))
        };
        let mut stack = vec![body];
        while let Some(n) = stack.pop() {
            if n.end_byte() <= at.start_byte()
                && n.kind() == "call_expression"
                && object.as_deref().is_some_and(|o| {
                    self.text[n.byte_range()].contains(last_word(o))
                        && calls_on(n, o, self.text, takes_the_line)
                })
            {
                return true;
            }
            if n.start_byte() >= at.start_byte() && !contains(n, at) {
                continue;
            }
            if matches!(
                n.kind(),
                "if_statement" | "while_statement" | "conditional_expression"
            ) && let Some(cond) = n.child_by_field_name("condition")
                && !contains(cond, at)
                && mentions(cond)
            {
                return true;
            }
            let mut cursor = n.walk();
            stack.extend(n.named_children(&mut cursor));
        }
        false
    }
}

/// Is the value of the call `call` used: anything but a statement of its
/// own (`set_mask_bits(...);`, or `(void)` of it)?
pub(super) fn value_used(call: Node<'_>) -> bool {
    let mut up = call.parent();
    while let Some(n) = up {
        match n.kind() {
            "parenthesized_expression" | "cast_expression" => up = n.parent(),
            "expression_statement" => return false,
            _ => return true,
        }
    }
    false
}

/// What storing `value` into `target` is: a constant, another object's
/// member, or neither (a local, a call's result, arithmetic on it).
fn stored(target: Node<'_>, value: Node<'_>, text: &str) -> Option<Store> {
    let value = unwrap_value(value, text);
    if is_constant(&text[value.byte_range()]) {
        return Some(Store::Constant);
    }
    let from = access(value, text)?;
    let to = access(target, text)?;
    (value.kind() == "field_expression"
        && text[value.byte_range()].contains("->")
        && from.0 != to.0)
        .then_some(Store::Copy)
}

/// `value` without parentheses, casts and a `READ_ONCE()` around it.
pub(super) fn unwrap_value<'t>(value: Node<'t>, text: &str) -> Node<'t> {
    let mut v = value;
    for _ in 0..16 {
        let next = match v.kind() {
            "parenthesized_expression" => v.named_child(0),
            "cast_expression" => v.child_by_field_name("value"),
            "call_expression"
                if v.child_by_field_name("function")
                    .is_some_and(|f| &text[f.byte_range()] == "READ_ONCE") =>
            {
                v.child_by_field_name("arguments")
                    .and_then(|a| a.named_child(0))
            }
            _ => None,
        };
        match next {
            Some(n) => v = n,
            None => break,
        }
    }
    v
}

/// Is C expression `text` a constant: numbers, operators, the names of
/// macros and enumerators (no lowercase letter), `true`, `false`, `NULL`,
/// `sizeof` and the words of a cast (`(unsigned long)-1`, `~0UL`,
/// `BIT(PG_workingset)`, `TASK_RUNNING`)?
pub(super) fn is_constant(text: &str) -> bool {
    const WORDS: [&str; 17] = [
        "true", "false", "NULL", "sizeof", "unsigned", "signed", "long", "int", "short", "char",
        "u8", "u16", "u32", "u64", "s32", "s64", "bool",
    ];
    let tokens = crate::csource::tokens(text);
    let constant = |t: &String| match t.chars().next() {
        Some(c) if c.is_ascii_digit() => true,
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {
            !t.chars().any(|c| c.is_ascii_lowercase()) || WORDS.contains(&t.as_str())
        }
        // Operators and parentheses.
        _ => true,
    };
    !tokens.is_empty() && tokens.iter().all(constant)
}

/// The innermost loop around `at` in its function.
fn enclosing_loop(at: Node<'_>) -> Option<Node<'_>> {
    let mut up = at.parent();
    while let Some(n) = up {
        match n.kind() {
            "do_statement" | "while_statement" | "for_statement" => return Some(n),
            "function_definition" => return None,
            _ => up = n.parent(),
        }
    }
    None
}

/// In loop `lp` around exchange `call`: is `new` made from `old` other
/// than by adding to or subtracting from it (`new = old & ~mask`, `new |=
/// bit`, `f(&new)`), with no condition testing the two (`if (new ==
/// old) break;`)?
fn made_from(lp: Node<'_>, call: Node<'_>, old: &str, new: &str, text: &str) -> bool {
    let words = |n: Node<'_>| crate::csource::tokens(&text[n.byte_range()]);
    let mut from_old = false;
    let mut changes = false;
    let mut stack = vec![lp];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "if_statement" | "conditional_expression" | "while_statement" | "do_statement" => {
                if let Some(cond) = n.child_by_field_name("condition") {
                    // The loop's own condition: besides the exchange.
                    let own = &text[cond.byte_range()].replace(&text[call.byte_range()], "");
                    let w = crate::csource::tokens(own);
                    if w.iter().any(|t| t == old) && w.iter().any(|t| t == new) {
                        return false;
                    }
                }
            }
            "assignment_expression" => {
                let left = n.child_by_field_name("left").map(|l| &text[l.byte_range()]);
                let op = n
                    .child_by_field_name("operator")
                    .map(|o| &text[o.byte_range()]);
                if left.map(str::trim) == Some(new) {
                    let right = n.child_by_field_name("right");
                    match op {
                        Some("+=" | "-=") => return false,
                        Some("=") => {
                            let right = right.map(|r| unwrap_value(r, text));
                            if right.is_some_and(|r| adds(r, old, text)) {
                                return false;
                            }
                            from_old |= right.is_some_and(|r| words(r).iter().any(|t| t == old));
                        }
                        _ => {}
                    }
                    changes = true;
                }
            }
            "update_expression"
                if n.child_by_field_name("argument")
                    .is_some_and(|a| &text[a.byte_range()] == new) =>
            {
                return false;
            }
            // `lru_set_refs_flags(&new_flags, refs)`: changed by a helper.
            "pointer_expression"
                if n.id() != call.id()
                    && text[n.byte_range()].starts_with('&')
                    && n.child_by_field_name("argument")
                        .is_some_and(|a| &text[a.byte_range()] == new)
                    && !contains(call, n) =>
            {
                changes = true;
            }
            _ => {}
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    from_old && changes
}

/// In loop `lp`, does a guard that leaves it make sure the new value
/// differs from the old: the loop leaves unless bits the new value clears
/// are set (`if (!(old & X)) goto out; new = old & ~X;`) or unless bits
/// it sets are clear (`if (old & Y) goto out; new = old | Y;`), and
/// nothing else sets bits (`tcp_wfree()`'s `nval = (oval &
/// ~TSQF_THROTTLED) | TSQF_QUEUED`). A bit set from a variable
/// (`folio_update_gen()`'s `(gen + 1UL) << LRU_GEN_PGOFF`) may set again
/// what was cleared: no such guard is then sure.
fn always_changes(lp: Node<'_>, old: &str, new: &str, text: &str) -> bool {
    let mut bits = Bits::default();
    let mut guards: Vec<Node<'_>> = Vec::new();
    let mut stack = vec![lp];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "assignment_expression"
                if n.child_by_field_name("left")
                    .is_some_and(|l| text[l.byte_range()].trim() == new) =>
            {
                let op = n
                    .child_by_field_name("operator")
                    .map(|o| &text[o.byte_range()]);
                let Some(right) = n.child_by_field_name("right") else {
                    return false;
                };
                match op {
                    Some("=") => bits.made(right, old, text),
                    Some("|=") => bits.set(right, text),
                    Some("&=") => bits.cleared(right, text),
                    _ => return false,
                }
            }
            "if_statement" if n.child_by_field_name("consequence").is_some_and(leaves) => {
                guards.extend(n.child_by_field_name("condition"));
            }
            _ => {}
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    if bits.unknown {
        return false;
    }
    guards.iter().any(|g| {
        either(*g, text).into_iter().any(|d| {
            let d = bare(d);
            match d.kind() {
                // `!(old & X)`: past it, some bit of X is set; the new
                // value clears X.
                "unary_expression" if d.child(0).is_some_and(|o| &text[o.byte_range()] == "!") => {
                    masked(d.child_by_field_name("argument").map(bare), old, text).is_some_and(
                        |x| {
                            x.iter()
                                .all(|t| bits.clear.contains(t) && !bits.set.contains(t))
                        },
                    )
                }
                // `old & Y`: past it, Y is clear; the new value sets it.
                _ => masked(Some(d), old, text)
                    .is_some_and(|y| y.iter().all(|t| bits.set.contains(t))),
            }
        })
    })
}

/// The bits a loop's stores give the new value, as constants' names.
#[derive(Default)]
struct Bits {
    /// Cleared: the `X` of `old & ~X`, `new &= ~X`.
    clear: Vec<String>,
    /// Set: the constants of `| Y`, `new |= Y`.
    set: Vec<String>,
    /// A term not read: set from a variable, or made otherwise.
    unknown: bool,
}

impl Bits {
    /// `new = E`: the terms of `E` joined by `|`; the one naming `old`
    /// is `old` with bits cleared (`old & ~X`).
    fn made(&mut self, e: Node<'_>, old: &str, text: &str) {
        for term in joined(e, "|", text) {
            let term = bare(term);
            let t = &text[term.byte_range()];
            let names_old = crate::csource::tokens(t).iter().any(|w| w == old);
            let mask = (term.kind() == "binary_expression" && op_of(term, text) == Some("&"))
                .then(|| term.child_by_field_name("right").map(bare))
                .flatten();
            match (names_old, mask) {
                (false, _) => self.set(term, text),
                // The old value whole: no bit changed.
                (true, _) if t == old => {}
                (true, Some(mask)) => self.cleared(mask, text),
                (true, None) => self.unknown = true,
            }
        }
    }

    /// `| Y`: a constant's bits set, or a variable's (unknown).
    fn set(&mut self, y: Node<'_>, text: &str) {
        let t = &text[y.byte_range()];
        match is_constant(t) {
            true => self.set.extend(constants(t)),
            false => self.unknown = true,
        }
    }

    /// `~X`: a constant's bits cleared.
    fn cleared(&mut self, x: Node<'_>, text: &str) {
        let t = text[x.byte_range()].trim();
        match t.strip_prefix('~') {
            Some(x) if is_constant(x) => self.clear.extend(constants(x)),
            _ => self.unknown = true,
        }
    }
}

/// The constants' names in C text `t` (`TSQF_THROTTLED`, `LRU_GEN_MASK`).
fn constants(t: &str) -> Vec<String> {
    crate::csource::tokens(t)
        .into_iter()
        .filter(|w| w.starts_with(|c: char| c.is_ascii_uppercase() || c == '_'))
        .collect()
}

/// The constants `e` masks `old` with (`old & X`), if that is all it is.
fn masked(e: Option<Node<'_>>, old: &str, text: &str) -> Option<Vec<String>> {
    let e = e?;
    if e.kind() != "binary_expression" || op_of(e, text) != Some("&") {
        return None;
    }
    let (l, r) = (
        bare(e.child_by_field_name("left")?),
        bare(e.child_by_field_name("right")?),
    );
    let mask = match (&text[l.byte_range()] == old, &text[r.byte_range()] == old) {
        (true, _) => r,
        (_, true) => l,
        _ => return None,
    };
    let t = &text[mask.byte_range()];
    let names = constants(t);
    (is_constant(t) && !names.is_empty()).then_some(names)
}

/// `e`'s operands joined by operator `op` at its top (`a | b | c`).
fn joined<'t>(e: Node<'t>, op: &str, text: &str) -> Vec<Node<'t>> {
    let e = bare(e);
    if e.kind() == "binary_expression" && op_of(e, text) == Some(op) {
        let mut out = Vec::new();
        for side in ["left", "right"] {
            if let Some(s) = e.child_by_field_name(side) {
                out.extend(joined(s, op, text));
            }
        }
        return out;
    }
    vec![e]
}

/// The disjuncts of a condition (`a || b`).
fn either<'t>(cond: Node<'t>, text: &str) -> Vec<Node<'t>> {
    joined(cond, "||", text)
}

/// `e` without the parentheses around it.
pub(super) fn bare(e: Node<'_>) -> Node<'_> {
    let mut e = e;
    while e.kind() == "parenthesized_expression"
        && let Some(inner) = e.named_child(0)
    {
        e = inner;
    }
    e
}

/// A binary expression's operator.
pub(super) fn op_of<'t>(e: Node<'_>, text: &'t str) -> Option<&'t str> {
    e.child_by_field_name("operator")
        .map(|o| &text[o.byte_range()])
}

/// Does statement `s` leave the loop (`goto out;`, `return x;`,
/// `break;`, or a block that ends so: `inode_query_iversion()`'s `{ if
/// (!fenced) smp_mb(); break; }`)? A `continue` of a `do ... while
/// (!try_cmpxchg())` runs the exchange again: it does not leave.
fn leaves(s: Node<'_>) -> bool {
    match s.kind() {
        "goto_statement" | "return_statement" | "break_statement" => true,
        "compound_statement" => {
            let mut cursor = s.walk();
            s.named_children(&mut cursor)
                .filter(|n| n.kind() != "comment")
                .last()
                .is_some_and(leaves)
        }
        _ => false,
    }
}

/// Is `value` `old + x` or `old - x` (a counter moved, never the old
/// value again)?
fn adds(value: Node<'_>, old: &str, text: &str) -> bool {
    value.kind() == "binary_expression"
        && value
            .child_by_field_name("operator")
            .is_some_and(|o| matches!(&text[o.byte_range()], "+" | "-"))
        && crate::csource::tokens(&text[value.byte_range()])
            .iter()
            .any(|t| t == old)
}

/// The body of the function `at` is in.
pub(super) fn function_body(at: Node<'_>) -> Option<Node<'_>> {
    let mut up = at.parent();
    let mut last = at;
    while let Some(n) = up {
        if n.kind() == "function_definition" {
            return n.child_by_field_name("body");
        }
        last = n;
        up = n.parent();
    }
    // A system call's body: the outermost block.
    (last.kind() == "compound_statement").then_some(last)
}

/// The variables given a value that reads `want` before `at` in `body`
/// (`old = READ_ONCE(x->f)`), or a whole member enclosing it (`special =
/// t->rcu_read_unlock_special` for `t->rcu_read_unlock_special.s`).
pub(super) fn copies_of(body: Node<'_>, at: Node<'_>, want: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![body];
    while let Some(n) = stack.pop() {
        if n.start_byte() >= at.start_byte() {
            continue;
        }
        let (var, value) = match n.kind() {
            "init_declarator" => (
                n.child_by_field_name("declarator"),
                n.child_by_field_name("value"),
            ),
            "assignment_expression" => (
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            ),
            _ => (None, None),
        };
        if let (Some(var), Some(value)) = (var, value)
            && var.kind() == "identifier"
            && (squeeze(&text[value.byte_range()]).contains(want) || {
                let whole = squeeze(&text[unwrap_value(value, text).byte_range()]);
                whole.contains("->")
                    && want
                        .strip_prefix(whole.as_str())
                        .is_some_and(|rest| rest.starts_with('.'))
            })
        {
            out.push(text[var.byte_range()].to_owned());
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    out
}

/// Does `node` hold a call whose name `pick` takes with `object` (or a
/// member of it, `&object->m`) among its arguments?
pub(super) fn calls_on(
    node: Node<'_>,
    object: &str,
    text: &str,
    pick: impl Fn(&str) -> bool,
) -> bool {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind() == "call_expression"
            && n.child_by_field_name("function")
                .is_some_and(|f| pick(&text[f.byte_range()]))
            && n.child_by_field_name("arguments").is_some_and(|args| {
                let mut cursor = args.walk();
                args.named_children(&mut cursor).any(|a| {
                    let a = squeeze(&text[a.byte_range()]);
                    let a = a.trim_start_matches('&');
                    a == object || a.starts_with(&format!("{object}->"))
                })
            })
        {
            return true;
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    false
}

/// Is `name` an atomic read-modify-write that takes its object's line
/// exclusive whatever it finds (`test_and_set_bit`, `folio_test_clear_lru`,
/// `test_and_clear_bit`)?
fn takes_the_line(name: &str) -> bool {
    ["test_and_", "test_clear_", "test_set_"]
        .iter()
        .any(|w| name.contains(w))
}

/// Does node `outer` contain node `inner`?
pub(super) fn contains(outer: Node<'_>, inner: Node<'_>) -> bool {
    outer.start_byte() <= inner.start_byte() && inner.end_byte() <= outer.end_byte()
}

/// The last word of expression `text` (`f` of `folio->flags.f`, `i` of
/// `x->a[i]`, empty when it has none): whatever text names the
/// expression, whitespace and all, has it.
pub(super) fn last_word(text: &str) -> &str {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    text.trim_end_matches(|c: char| !word(c))
        .rsplit(|c: char| !word(c))
        .next()
        .unwrap_or("")
}

/// `text` without white space: `sk -> sk_napi_id` is `sk->sk_napi_id`.
pub(super) fn squeeze(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

#[cfg(test)]
mod tests {
    use super::last_word;

    #[test]
    fn the_last_word_of_an_expression_is_in_any_spelling_of_it() {
        assert_eq!(last_word("folio->flags.f"), "f");
        assert_eq!(last_word("x->a[i]"), "i");
        assert_eq!(last_word("sk->sk_napi_id"), "sk_napi_id");
        assert_eq!(last_word("*(p)"), "p");
        assert_eq!(last_word("&"), "");
        for spelled in ["folio ->flags. f", "x->a[ i ]", "(*( p ))"] {
            let squeezed: String = spelled.split_whitespace().collect();
            assert!(spelled.contains(last_word(&squeezed)), "{spelled}");
        }
    }
}
