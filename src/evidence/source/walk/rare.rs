//! Code its own hints mark as rare: the body of `if (unlikely(...))`,
//! the `else` of `if (likely(...))`, and what follows an `if
//! (likely(...))` that leaves (`if (likely(subflow->fully_established))
//! { ...; goto check_notify; }`: the rest of the function runs once per
//! connection). A store there is no hot path's, whatever reaches its
//! function, and neither is a call made there.

use tree_sitter::Node;

use super::leaves;
use super::needless::{contains, function_body};

/// Is `at` in code its function marks as rare (see this module)?
pub(super) fn in_rare_branch(at: Node<'_>, text: &str) -> bool {
    let mut child = at;
    let mut up = at.parent();
    while let Some(n) = up {
        if n.kind() == "function_definition" {
            return false;
        }
        if n.kind() == "if_statement" {
            let rare = match hint(n, text) {
                Some("unlikely") => n.child_by_field_name("consequence"),
                Some("likely") => n.child_by_field_name("alternative"),
                _ => None,
            };
            if rare.is_some_and(|r| contains(r, at)) {
                return true;
            }
        }
        if n.kind() == "compound_statement" && after_likely_exit(n, child, at, text) {
            return true;
        }
        child = n;
        up = n.parent();
    }
    false
}

/// `likely` or `unlikely` when the condition of `if` statement `n` is
/// one of them.
fn hint<'t>(n: Node<'_>, text: &'t str) -> Option<&'t str> {
    let cond = n.child_by_field_name("condition")?;
    let said = text[cond.byte_range()].trim_start_matches(|c: char| c == '(' || c.is_whitespace());
    ["unlikely(", "likely("]
        .into_iter()
        .find(|h| said.starts_with(h))
        .map(|h| h.trim_end_matches('('))
}

/// Does a statement of `block` before its child `child` (which holds
/// `at`) leave when its `likely()` test holds, with no label between it
/// and `at` that a jump from before it, or its own, goes to?
fn after_likely_exit(block: Node<'_>, child: Node<'_>, at: Node<'_>, text: &str) -> bool {
    let mut cursor = block.walk();
    let exits: Vec<Node<'_>> = block
        .named_children(&mut cursor)
        .take_while(|s| s.end_byte() <= child.start_byte())
        .filter(|s| {
            s.kind() == "if_statement"
                && s.child_by_field_name("alternative").is_none()
                && hint(*s, text) == Some("likely")
                && s.child_by_field_name("consequence").is_some_and(leaves)
        })
        .collect();
    exits.into_iter().any(|exit| {
        let Some(body) = function_body(exit) else {
            return false;
        };
        let (gotos, labels) = jumps(body, exit.end_byte(), at.start_byte(), text);
        !labels.iter().any(|l| gotos.contains(l))
    })
}

/// In `body`: the labels jumped to from before byte `before`, and the
/// labels of statements between bytes `from` and `to`.
fn jumps<'t>(
    body: Node<'_>,
    from: usize,
    to: usize,
    text: &'t str,
) -> (Vec<&'t str>, Vec<&'t str>) {
    let (mut gotos, mut labels) = (Vec::new(), Vec::new());
    let label = |n: Node<'_>| {
        n.child_by_field_name("label")
            .map(|l| &text[l.byte_range()])
    };
    let mut stack = vec![body];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "goto_statement" if n.start_byte() < from => gotos.extend(label(n)),
            "labeled_statement" if (from..=to).contains(&n.start_byte()) => labels.extend(label(n)),
            _ => {}
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    (gotos, labels)
}
