//! Stores made only on a change ([`Write::Tested`]): a member set after
//! a test of it found another value (`if (!test_bit(n, &x->f))
//! set_bit(n, &x->f)`, `test_bit(n, &x->f) || test_and_set_bit(n,
//! &x->f)`, `if (x->f != v) WRITE_ONCE(x->f, v)`, `if (!x->on) x->on =
//! true`). Such a store takes the line exclusive when the value changes,
//! not on every pass: the kernel writes it so on purpose ("calling
//! test_bit() prior to test_and_set_bit() is intentional, it avoids
//! dirtying the cacheline", `__blk_mq_tag_busy()`), and its member is
//! read on the fast path, not written there.

use tree_sitter::Node;

use super::needless::{
    bare, calls_on, contains, copies_of, function_body, op_of, squeeze, unwrap_value,
};
use super::{Function, leaves, strip_address};
use crate::evidence::source::Write;
use crate::evidence::source::callers::Test;
use crate::evidence::source::vocabulary::{is_atomic_write, is_bit_test};

/// What a store puts in its member.
#[derive(Clone, Copy)]
pub(super) enum Stored<'t> {
    /// A value (`=`, `WRITE_ONCE`, a release store).
    Value(Node<'t>),
    /// A bit, by its number (`set_bit(nr, addr)`, `test_and_clear_bit`).
    Bit(Node<'t>),
}

impl Function<'_> {
    /// `write` of member `target`, storing `stored`: [`Write::Tested`]
    /// when a test of the same member and value comes first (see this
    /// module), else as it is.
    pub(super) fn on_change(&self, target: Node<'_>, stored: Stored<'_>, write: Write) -> Write {
        let target = strip_address(target);
        let through = target.kind() == "field_expression" && self.of(target).contains("->");
        match through && self.changes_only(target, stored) {
            true => write.on_change(),
            false => write,
        }
    }

    /// Does a test of member `at` for the value `stored` come first: the
    /// condition of an `if` (or `?:`, `while`) around it, the left side of
    /// a `||` or `&&` whose right side stores, or an `if` before it that
    /// leaves when the test says so?
    fn changes_only(&self, at: Node<'_>, stored: Stored<'_>) -> bool {
        let want = squeeze(self.of(at));
        let Some(body) = function_body(at) else {
            return false;
        };
        // A value made from the member itself (`x->n = x->n * 2`) changes
        // it every time.
        if let Stored::Value(v) = stored
            && squeeze(self.of(v)).contains(&want)
        {
            return false;
        }
        let guards = guards(at, body, self.text);
        if guards.is_empty() {
            return false;
        }
        // A member the function also stores otherwise (`__dev_xmit_skb()`
        // sets `q->owner` to its CPU and back to -1) changes on every pass.
        if self.stored_twice(body, at, &want) {
            return false;
        }
        // The variables read from the member (`old = READ_ONCE(x->f)`),
        // read once, when a stored variable or a guard asks.
        let mut copies = None;
        let mut copies = || -> Vec<String> {
            copies
                .get_or_insert_with(|| copies_of(body, at, &want, self.text))
                .clone()
        };
        // A copy of the member stored back (`tail = pipe->tail; ...
        // tail++; pipe->tail = tail;`) is a new value, whatever tests the
        // copy.
        if let Stored::Value(v) = stored
            && let v = unwrap_value(v, self.text)
            && v.kind() == "identifier"
            && copies().iter().any(|c| c == self.of(v))
        {
            return false;
        }
        let object = want.rsplit_once("->").map(|(o, _)| o.to_owned());
        let object = object.as_deref();
        if guards
            .iter()
            .any(|g| self.tests(*g, &want, &[], object, stored))
        {
            return true;
        }
        // Through a variable read from the member (`if (old != v)`): looked
        // for only when no guard names the member itself.
        let copies = copies();
        !copies.is_empty()
            && guards
                .iter()
                .any(|g| self.tests(*g, &want, &copies, object, stored))
    }

    /// Does function body `body` store to member `want` somewhere other
    /// than at `at` (`=`, `WRITE_ONCE`, an atomic or bit operation)?
    fn stored_twice(&self, body: Node<'_>, at: Node<'_>, want: &str) -> bool {
        let text = &self.text[body.byte_range()];
        let word = want.rsplit(['>', '.']).next().unwrap_or(want);
        if text.matches(word).count() < 2 {
            return false;
        }
        let names = |x: Node<'_>| squeeze(self.of(strip_address(x))) == want;
        let mut stack = vec![body];
        while let Some(n) = stack.pop() {
            let other = !contains(n, at)
                && match n.kind() {
                    "assignment_expression" => n.child_by_field_name("left").is_some_and(names),
                    "call_expression" => {
                        let stores = n
                            .child_by_field_name("function")
                            .is_some_and(|f| stores_through(self.of(f)));
                        stores
                            && n.child_by_field_name("arguments").is_some_and(|a| {
                                let mut cursor = a.walk();
                                a.named_children(&mut cursor).any(names)
                            })
                    }
                    _ => false,
                };
            if other {
                return true;
            }
            let mut cursor = n.walk();
            stack.extend(n.named_children(&mut cursor));
        }
        false
    }

    /// Does condition `cond` test member `want` (or a variable read from
    /// it, one of `copies`) for the value `stored`: a test naming the value
    /// stored too (`x->f != v`; any test of it before a truth value is
    /// stored), or the bit (`test_bit(nr, &x->f)`); or a test helper of
    /// the object named for the bit (`wb_has_dirty_io(wb)` before
    /// `set_bit(WB_has_dirty_io, &wb->state)`)?
    fn tests(
        &self,
        cond: Node<'_>,
        want: &str,
        copies: &[String],
        object: Option<&str>,
        stored: Stored<'_>,
    ) -> bool {
        let text = &self.text[cond.byte_range()];
        let squeezed = squeeze(text);
        let names_member = squeezed.contains(want)
            || (!copies.is_empty()
                && crate::csource::tokens(text)
                    .iter()
                    .any(|t| copies.contains(t)));
        match stored {
            Stored::Value(v) => {
                let v = unwrap_value(v, self.text);
                let value = self.of(v);
                // A variable is named whole (`area` is not in `xol_area`);
                // a constant too, but for a truth value (`if (!x->on) x->on
                // = true`): a test of another state (`if (frozen !=
                // SB_UNFROZEN)` before `frozen = SB_FREEZE_WRITE`) is a
                // transition, made every time the code runs.
                let named = match v.kind() {
                    _ if matches!(value.trim(), "0" | "1" | "true" | "false" | "NULL") => true,
                    "identifier" => crate::csource::tokens(text).iter().any(|t| t == value),
                    _ => squeezed.contains(&squeeze(value)),
                };
                names_member && named
            }
            Stored::Bit(nr) => {
                let nr = squeeze(self.of(nr));
                (names_member && squeezed.contains(&nr))
                    || object.is_some_and(|o| {
                        let stem = bit_stem(&nr);
                        !stem.is_empty()
                            && calls_on(cond, o, self.text, |name| {
                                name.to_ascii_lowercase().contains(&stem)
                            })
                    })
            }
        }
    }
}

impl Function<'_> {
    /// The [`Call::tested`] of call `node` of `name` with `args`, its
    /// tests kept in this function's.
    ///
    /// [`Call::tested`]: crate::evidence::source::callers::Call::tested
    pub(super) fn test_index(&mut self, node: Node<'_>, name: &str, args: &[Node<'_>]) -> u32 {
        let tests = self.tests_before(node, name, args);
        if tests.is_empty() {
            return 0;
        }
        self.tests.push(tests.into());
        u32::try_from(self.tests.len()).unwrap_or(0)
    }

    /// What this function tests before call `node` of `name` with `args`
    /// (see [`Test`]): its twin asked of the same arguments, or a bit of
    /// an argument's member. Asked only in a function whose body names
    /// such a test.
    fn tests_before(&self, node: Node<'_>, name: &str, args: &[Node<'_>]) -> Vec<Test> {
        let twin = self
            .asks_twins
            .then(|| stem(name, &["set", "clear"]))
            .flatten();
        if (twin.is_none() && !self.tests_bits) || args.is_empty() {
            return Vec::new();
        }
        let Some(body) = function_body(node) else {
            return Vec::new();
        };
        let guards = guards(node, body, self.text);
        if guards.is_empty() {
            return Vec::new();
        }
        let args: Vec<String> = args.iter().map(|a| squeeze(self.of(*a))).collect();
        let mut out: Vec<Test> = Vec::new();
        let mut stack = guards;
        while let Some(n) = stack.pop() {
            let mut cursor = n.walk();
            stack.extend(n.named_children(&mut cursor));
            let Some(test) = n
                .child_by_field_name("function")
                .filter(|_| n.kind() == "call_expression")
                .map(|f| self.of(f))
                .filter(|f| f.contains("test"))
            else {
                continue;
            };
            let asked: Vec<String> = n
                .child_by_field_name("arguments")
                .map(|a| {
                    let mut cursor = a.walk();
                    a.named_children(&mut cursor)
                        .map(|x| squeeze(self.of(x)))
                        .collect()
                })
                .unwrap_or_default();
            let found = if twin.is_some() && twin == stem(test, &["test"]) && asked == args {
                Some(Test::Twin)
            } else if let [nr, at] = &asked[..]
                && is_bit_test(test)
                && let Some((object, member)) = at.strip_prefix('&').unwrap_or(at).rsplit_once("->")
                && !member.is_empty()
                && let Some(arg) = args.iter().position(|a| a == object)
            {
                Some(Test::Bit {
                    arg,
                    member: member.into(),
                    bit: nr.as_str().into(),
                })
            } else {
                None
            };
            if let Some(t) = found.filter(|t| !out.contains(t)) {
                out.push(t);
            }
        }
        out
    }
}

/// Function `name` with its word of `words` taken out, its leading
/// underscores too (`folio_*_idle` of `__folio_clear_idle` with `set`
/// and `clear`, of `folio_test_idle` with `test`): a family's members
/// share it. None when no word of `words` is one of its words.
fn stem(name: &str, words: &[&str]) -> Option<String> {
    let name = name.trim_start_matches('_');
    let mut parts: Vec<&str> = name.split('_').collect();
    let at = parts.iter().position(|p| words.contains(p))?;
    parts[at] = "*";
    Some(parts.join("_"))
}

/// Does a call of `name` store to the member whose address it is
/// passed: `WRITE_ONCE`, a release store, an atomic or bit operation?
fn stores_through(name: &str) -> bool {
    matches!(
        name,
        "WRITE_ONCE" | "__WRITE_ONCE" | "smp_store_release" | "rcu_assign_pointer"
    ) || is_atomic_write(name)
}

/// The conditions tested before `at` runs in function body `body`: of an
/// `if` (or `?:`, `while`) around it, the left side of a `||` or `&&`
/// whose right side holds it, and of an `if` before it that leaves.
fn guards<'t>(at: Node<'t>, body: Node<'t>, text: &str) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    let mut child = at;
    let mut up = at.parent();
    while let Some(n) = up {
        if n.kind() == "function_definition" {
            break;
        }
        match n.kind() {
            "if_statement" | "while_statement" | "conditional_expression" => out.extend(
                n.child_by_field_name("condition")
                    .filter(|c| !contains(*c, at)),
            ),
            "binary_expression" if matches!(op_of(n, text), Some("||" | "&&")) => out.extend(
                n.child_by_field_name("right")
                    .filter(|r| contains(*r, at))
                    .and_then(|_| n.child_by_field_name("left")),
            ),
            "compound_statement" => out.extend(before_leaving(n, child)),
            _ => {}
        }
        if n.id() == body.id() {
            break;
        }
        child = n;
        up = n.parent();
    }
    out
}

/// The conditions of the `if` statements of `block` before its child
/// `child` that leave when taken (`if (test_bit(n, &x->f)) return;`):
/// past them, the test found another value.
fn before_leaving<'t>(block: Node<'t>, child: Node<'t>) -> impl Iterator<Item = Node<'t>> {
    let mut cursor = block.walk();
    let earlier: Vec<Node<'t>> = block
        .named_children(&mut cursor)
        .take_while(|s| s.id() != child.id() && s.end_byte() <= child.start_byte())
        .collect();
    earlier.into_iter().filter_map(|s| {
        let leaving = s.kind() == "if_statement"
            && s.child_by_field_name("alternative").is_none()
            && s.child_by_field_name("consequence").is_some_and(leaves);
        leaving
            .then(|| s.child_by_field_name("condition").map(bare))
            .flatten()
    })
}

/// A bit's name as a helper testing it spells it: `has_dirty_io` of
/// `WB_has_dirty_io`, `referenced` of `PG_referenced`; empty for a bit
/// with no prefix or a number.
fn bit_stem(nr: &str) -> String {
    match nr.split_once('_') {
        Some((_, rest))
            if rest.len() >= 4 && rest.chars().all(|c| c.is_alphanumeric() || c == '_') =>
        {
            rest.to_ascii_lowercase()
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::{bit_stem, stem};

    #[test]
    fn a_setter_and_its_test_share_a_stem() {
        let set = |n| stem(n, &["set", "clear"]);
        let test = |n| stem(n, &["test"]);
        assert_eq!(set("bdev_set_flag"), test("bdev_test_flag"));
        assert_eq!(set("__folio_clear_idle"), test("folio_test_idle"));
        assert_ne!(set("folio_clear_idle"), test("folio_test_locked"));
        assert_ne!(set("folio_set_dirty"), test("folio_test_set_dirty"));
        assert_eq!(set("reset_stats"), None);
        assert_eq!(test("contested"), None);
    }

    #[test]
    fn a_bits_stem_is_its_name_past_the_prefix() {
        assert_eq!(bit_stem("WB_has_dirty_io"), "has_dirty_io");
        assert_eq!(bit_stem("PG_referenced"), "referenced");
        assert_eq!(bit_stem("BLK_MQ_S_TAG_ACTIVE"), "mq_s_tag_active");
        assert_eq!(bit_stem("nr"), "");
        assert_eq!(bit_stem("X_on"), "");
        assert_eq!(bit_stem("X_a+1"), "");
    }
}
