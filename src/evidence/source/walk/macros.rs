//! Lock wrappers the kernel writes as macros: `#define xa_lock_irq(xa)
//! spin_lock_irq(&(xa)->xa_lock)`, RCU's `raw_spin_lock_irq_rcu_node(p)`
//! (`raw_spin_lock_irq(&ACCESS_PRIVATE(p, lock))` in a `do { } while
//! (0)`). The macro is read as the function it stands for, with one
//! untyped parameter per macro parameter, so that its effects are a
//! function wrapper's.

use std::cell::RefCell;

use tree_sitter::{Node, Parser};

use super::{Bodies, Effect, Function, Reading, Values, is_vocabulary, may_lock};

thread_local! {
    /// A parser of C for the macros read on this thread.
    static PARSER: RefCell<Option<Parser>> = RefCell::new({
        let mut p = Parser::new();
        p.set_language(&tree_sitter_c::LANGUAGE.into()).ok().map(|_| p)
    });
}

/// The name and effects of the lock wrapper that function-like macro
/// `node` (a `preproc_function_def`) is, if it is one.
pub(super) fn wrapper(node: Node<'_>, read: &Reading<'_>) -> Option<(String, Vec<Effect>)> {
    let text = read.text;
    let name = &text[node.child_by_field_name("name")?.byte_range()];
    let value = &text[node.child_by_field_name("value")?.byte_range()];
    // A word of the vocabulary or a wrapper known, called: first by
    // its text, as most macros of a header are no such thing.
    if !may_lock(value) {
        return None;
    }
    let tokens = crate::csource::tokens(value);
    let locking = tokens.windows(2).any(|w| {
        let t = w[0].as_str();
        w[1] == "("
            && (is_vocabulary(t)
                || read.wrappers.get(t).is_some()
                || read.wrappers.exported(t).is_some()
                || read.local.is_some_and(|l| l.get(t).is_some()))
    });
    if !locking {
        return None;
    }
    let list = node.child_by_field_name("parameters")?;
    let mut cursor = list.walk();
    let params: Vec<&str> = list
        .named_children(&mut cursor)
        .filter(|p| p.kind() == "identifier")
        .map(|p| &text[p.byte_range()])
        .collect();
    let source = as_function(name, &params, tokens);
    let tree = PARSER.with_borrow_mut(|p| p.as_mut().and_then(|p| p.parse(&source, None)))?;
    let function = tree.root_node().named_child(0)?;
    if function.kind() != "function_definition" || function.has_error() {
        return None;
    }
    let reading = Reading {
        text: &source,
        ..*read
    };
    let mut bodies = Bodies::default();
    let mut values = Values::default();
    Function::read(function, &reading, &mut bodies, &mut values)
}

/// The C function macro `name(params) value` stands for: `void
/// name(void *p, ...) { value; }`, with each parenthesized parameter
/// (`(xa)`) bare and `ACCESS_PRIVATE(p, m)` (a member the compiler
/// checker hides) read as `p->m`.
fn as_function(name: &str, params: &[&str], tokens: Vec<String>) -> String {
    let mut out: Vec<String> = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i].as_str();
        let at = |k: usize| tokens.get(i + k).map(String::as_str);
        // `(xa)` → `xa`.
        if t == "(" && at(2) == Some(")") && at(1).is_some_and(|p| params.contains(&p)) {
            out.push(tokens[i + 1].clone());
            i += 3;
            continue;
        }
        // `ACCESS_PRIVATE(p, lock)` → `p->lock`, the parameter maybe
        // parenthesized.
        if t == "ACCESS_PRIVATE" {
            let rest: Vec<&str> = tokens[i + 1..].iter().take(7).map(String::as_str).collect();
            let found = match rest[..] {
                ["(", "(", p, ")", ",", m, ")", ..] => Some((p, m, 8)),
                ["(", p, ",", m, ")", ..] => Some((p, m, 6)),
                _ => None,
            };
            if let Some((p, member, len)) = found {
                out.extend([p.to_owned(), "->".to_owned(), member.to_owned()]);
                i += len;
                continue;
            }
        }
        // A line's continuation.
        if t == "\\" {
            i += 1;
            continue;
        }
        out.push(t.to_owned());
        i += 1;
    }
    let body = join(&out);
    let params: Vec<String> = params.iter().map(|p| format!("void *{p}")).collect();
    format!("void {name}({}) {{ {body}; }}\n", params.join(", "))
}

/// Tokens back to C text: a space between two words only.
fn join(tokens: &[String]) -> String {
    let word = |t: &str| {
        t.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let mut out = String::new();
    for (k, t) in tokens.iter().enumerate() {
        if k > 0 && word(t) && word(&tokens[k - 1]) {
            out.push(' ');
        }
        out.push_str(t);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::as_function;
    use crate::csource::tokens;

    #[test]
    fn a_macro_reads_as_the_function_it_stands_for() {
        assert_eq!(
            as_function(
                "xa_lock_irq",
                &["xa"],
                tokens("spin_lock_irq(&(xa)->xa_lock)")
            ),
            "void xa_lock_irq(void *xa) { spin_lock_irq(&xa->xa_lock); }\n"
        );
        assert_eq!(
            as_function(
                "raw_spin_lock_irqsave_rcu_node",
                &["p", "flags"],
                tokens(
                    "do { raw_spin_lock_irqsave(&ACCESS_PRIVATE(p, lock), flags); \\\n smp_mb__after_unlock_lock(); } while (0)"
                )
            ),
            "void raw_spin_lock_irqsave_rcu_node(void *p, void *flags) { do{raw_spin_lock_irqsave(&p->lock,flags);smp_mb__after_unlock_lock();}while(0); }\n"
        );
    }
}
