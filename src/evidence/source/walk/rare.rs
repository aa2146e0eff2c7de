//! Code its own hints mark as rare: the body of `if (unlikely(...))`,
//! the `else` of `if (likely(...))`, and what follows an `if
//! (likely(...))` that leaves (`if (likely(subflow->fully_established))
//! { ...; goto check_notify; }`: the rest of the function runs once per
//! connection). A store there is no hot path's, whatever reaches its
//! function, and neither is a call made there.

use tree_sitter::Node;

use super::needless::{contains, function_body};
use super::{Function, leaves};

/// A function's jumps, read once: each `goto`'s byte and label, each
/// label's byte and name, and each `if (likely(...))` that leaves, by
/// its end and the bytes of the block it is in.
#[derive(Default)]
pub(super) struct Jumps {
    gotos: Vec<(usize, String)>,
    labels: Vec<(usize, String)>,
    exits: Vec<(usize, std::ops::Range<usize>)>,
}

impl Function<'_> {
    /// Is `at` in code its function marks as rare (see this module)?
    pub(super) fn in_rare_branch(&self, at: Node<'_>) -> bool {
        if !self.hinted {
            return false;
        }
        let Some(body) = function_body(at) else {
            return false;
        };
        in_hinted_branch(at, self.text)
            || after_likely_exit(at, self.jumps.get_or_init(|| read_jumps(body, self.text)))
    }
}

/// Is `at` in the body of an `if (unlikely(...))` or the `else` of an
/// `if (likely(...))`?
fn in_hinted_branch(at: Node<'_>, text: &str) -> bool {
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

/// Does an `if (likely(...))` that leaves come before `at` in a block
/// that holds it, with no label between them that a jump from before
/// it, or its own, goes to?
fn after_likely_exit(at: Node<'_>, jumps: &Jumps) -> bool {
    let to = at.start_byte();
    jumps.exits.iter().any(|(from, block)| {
        *from <= to
            && block.contains(&to)
            && !jumps.labels.iter().any(|(at, label)| {
                (*from..=to).contains(at)
                    && jumps
                        .gotos
                        .iter()
                        .any(|(g, target)| g < from && target == label)
            })
    })
}

/// The jumps of function body `body`.
fn read_jumps(body: Node<'_>, text: &str) -> Jumps {
    let mut out = Jumps::default();
    let label = |n: Node<'_>| {
        n.child_by_field_name("label")
            .map(|l| text[l.byte_range()].to_owned())
    };
    let mut stack = vec![body];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "goto_statement" => out.gotos.extend(label(n).map(|l| (n.start_byte(), l))),
            "labeled_statement" => out.labels.extend(label(n).map(|l| (n.start_byte(), l))),
            "if_statement"
                if n.child_by_field_name("alternative").is_none()
                    && hint(n, text) == Some("likely")
                    && n.child_by_field_name("consequence").is_some_and(leaves) =>
            {
                out.exits.extend(
                    n.parent()
                        .filter(|p| p.kind() == "compound_statement")
                        .map(|p| (n.end_byte(), p.byte_range())),
                );
            }
            _ => {}
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    out
}
