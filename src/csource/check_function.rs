//! Reads the kernel's own check functions: every
//! `CACHELINE_ASSERT_GROUP_MEMBER(TYPE, GROUP, MEMBER)` and
//! `CACHELINE_ASSERT_GROUP_SIZE(TYPE, GROUP, SIZE)` of one type in a C
//! file, wherever the arguments break lines, with the `#if` conditions
//! around each. It reads the code of the scanner's lines (comments and
//! strings blanked, line numbers kept), so a commented-out assert is not
//! read, and the macros' own `#define`s (whose TYPE is a parameter) name
//! no type.

use std::path::Path;

use super::{Line, Nesting};
use crate::error::{Error, Result};

/// One assert of the type asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KernelAssert {
    /// 1-based line of the macro's name.
    pub line: usize,
    /// The group (second argument).
    pub group: String,
    /// What it asserts.
    pub what: Asserted,
    /// The `#if`/`#ifdef` lines it sits under, outermost first.
    pub conditions: Vec<String>,
}

/// The third argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Asserted {
    /// `CACHELINE_ASSERT_GROUP_MEMBER`: the member designator, without
    /// whitespace.
    Member(String),
    /// `CACHELINE_ASSERT_GROUP_SIZE`: the budget as written (whitespace
    /// collapsed) and its value when it is integer arithmetic.
    Size { text: String, value: Option<u64> },
}

const MEMBER: &str = "CACHELINE_ASSERT_GROUP_MEMBER";
const SIZE: &str = "CACHELINE_ASSERT_GROUP_SIZE";

/// The asserts of `c_type` (`struct tcp_sock`) in C source `text`, in
/// file order.
pub(crate) fn kernel_asserts(text: &str, c_type: &str) -> Vec<KernelAssert> {
    let lines = super::scan(text);
    let code = lines
        .iter()
        .map(|l| l.code.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let conditions = line_conditions(&lines);
    let wanted = super::squash(c_type);
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) = code[at..].find("CACHELINE_ASSERT_GROUP_") {
        let start = at + found;
        at = start + 1;
        let rest = &code[start..];
        let (name, is_member) = if rest.starts_with(MEMBER) {
            (MEMBER, true)
        } else if rest.starts_with(SIZE) {
            (SIZE, false)
        } else {
            continue;
        };
        let before = code[..start].chars().next_back();
        let after = rest[name.len()..].chars().next();
        if before.is_some_and(is_ident) || after.is_some_and(is_ident) {
            continue;
        }
        let Some(args) = arguments(&rest[name.len()..]) else {
            continue;
        };
        let [ty, group, third] = args.as_slice() else {
            continue;
        };
        if super::squash(ty) != wanted {
            continue;
        }
        let line = code[..start].matches('\n').count() + 1;
        let what = if is_member {
            Asserted::Member(third.split_whitespace().collect())
        } else {
            let text = super::squash(third);
            let value = evaluate(&text);
            Asserted::Size { text, value }
        };
        out.push(KernelAssert {
            line,
            group: group.trim().to_owned(),
            what,
            conditions: conditions.get(line - 1).cloned().unwrap_or_default(),
        });
    }
    out
}

/// The asserts of struct or union `name` in `file`; an error when it has
/// none.
pub(crate) fn read(file: &Path, name: &str) -> Result<(String, Vec<KernelAssert>)> {
    let text = super::read(file)?;
    let shown = file.display().to_string();
    for keyword in ["struct", "union"] {
        let found = kernel_asserts(&text, &format!("{keyword} {name}"));
        if !found.is_empty() {
            return Ok((shown, found));
        }
    }
    Err(Error::Content {
        path: file.to_owned(),
        line: None,
        message: format!(
            "no CACHELINE_ASSERT_GROUP_MEMBER or CACHELINE_ASSERT_GROUP_SIZE of struct {name}: \
             nothing to compare with"
        ),
    })
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The comma-separated arguments of the call whose `(` starts `text`
/// (after whitespace), split at top-level commas; `None` when there is no
/// call or it is not closed.
fn arguments(text: &str) -> Option<Vec<String>> {
    let text = text.trim_start();
    let body = text.strip_prefix('(')?;
    let mut depth = 0usize;
    let mut args = vec![String::new()];
    for c in body.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' if depth > 0 => depth -= 1,
            ')' => return Some(args),
            ',' if depth == 0 => {
                args.push(String::new());
                continue;
            }
            _ => {}
        }
        args.last_mut()?.push(c);
    }
    None
}

/// For each line, the conditional directives open around it (a
/// directive's line under its own), each as written, whitespace collapsed,
/// with its `#elif` and `#else` lines so far: `#if A (#else)`.
fn line_conditions(lines: &[Line]) -> Vec<Vec<String>> {
    let written = |l: usize| {
        lines[l]
            .directive
            .as_ref()
            .map_or_else(String::new, |d| format!("#{}", super::squash(&d.text)))
    };
    let mut nesting = Nesting::default();
    let mut out = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        if let Some(d) = &line.directive {
            nesting.step(i, d.kind);
        }
        out.push(
            nesting
                .open()
                .iter()
                .map(|open| {
                    let mut text = written(open.line);
                    for &b in &open.branches {
                        text = format!("{text} ({})", written(b));
                    }
                    text
                })
                .collect(),
        );
    }
    out
}

/// The value of integer arithmetic (`91 + 4`, `(8 * 3)`, `0x40UL`):
/// literals, `+ - *` and parentheses; `None` for anything else
/// (`sizeof(long)`, macros).
fn evaluate(text: &str) -> Option<u64> {
    let tokens = tokens(text)?;
    let mut pos = 0;
    let value = sum(&tokens, &mut pos)?;
    (pos == tokens.len()).then_some(value)
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Token {
    Number(u64),
    Op(char),
}

fn tokens(text: &str) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if "+-*()".contains(c) {
            out.push(Token::Op(c));
            chars.next();
        } else if c.is_ascii_digit() {
            let mut word = String::new();
            while let Some(&d) = chars.peek().filter(|d| d.is_ascii_alphanumeric()) {
                word.push(d);
                chars.next();
            }
            let digits = word.trim_end_matches(['u', 'U', 'l', 'L']);
            let value = match digits.strip_prefix("0x").or(digits.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16).ok()?,
                None => digits.parse().ok()?,
            };
            out.push(Token::Number(value));
        } else {
            return None;
        }
    }
    Some(out)
}

fn sum(t: &[Token], pos: &mut usize) -> Option<u64> {
    let mut value = product(t, pos)?;
    while let Some(Token::Op(op @ ('+' | '-'))) = t.get(*pos).copied() {
        *pos += 1;
        let rhs = product(t, pos)?;
        value = if op == '+' {
            value.checked_add(rhs)?
        } else {
            value.checked_sub(rhs)?
        };
    }
    Some(value)
}

fn product(t: &[Token], pos: &mut usize) -> Option<u64> {
    let mut value = atom(t, pos)?;
    while t.get(*pos) == Some(&Token::Op('*')) {
        *pos += 1;
        value = value.checked_mul(atom(t, pos)?)?;
    }
    Some(value)
}

fn atom(t: &[Token], pos: &mut usize) -> Option<u64> {
    let token = t.get(*pos).copied()?;
    *pos += 1;
    match token {
        Token::Number(n) => Some(n),
        Token::Op('(') => {
            let value = sum(t, pos)?;
            (t.get(*pos) == Some(&Token::Op(')'))).then(|| *pos += 1)?;
            Some(value)
        }
        Token::Op(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r#"
#define CACHELINE_ASSERT_GROUP_MEMBER(TYPE, GROUP, MEMBER) BUILD_BUG_ON(0)
static void __init t_struct_check(void)
{
	/* CACHELINE_ASSERT_GROUP_MEMBER(struct t, g, commented); */
	CACHELINE_ASSERT_GROUP_MEMBER(struct t, g, a);
	CACHELINE_ASSERT_GROUP_MEMBER(struct t, g,
				      b);
	// CACHELINE_ASSERT_GROUP_MEMBER(struct t, g, line_comment);
#ifdef CONFIG_X
	CACHELINE_ASSERT_GROUP_MEMBER( struct
		t ,  h , c . d [ 1 ] );
#endif
	CACHELINE_ASSERT_GROUP_MEMBER(struct other, g, a);
	MY_CACHELINE_ASSERT_GROUP_MEMBER(struct t, g, prefixed);
	pr_info("CACHELINE_ASSERT_GROUP_SIZE(struct t, g, 1)");
	CACHELINE_ASSERT_GROUP_SIZE(struct t, g, 91 + 4);
	CACHELINE_ASSERT_GROUP_SIZE(struct t, h, sizeof(long) * 2);
}
"#;

    #[test]
    fn asserts_of_one_type_across_lines_comments_and_conditions() {
        let got = kernel_asserts(SOURCE, "struct t");
        let brief: Vec<(usize, &str, String, usize)> = got
            .iter()
            .map(|a| {
                let what = match &a.what {
                    Asserted::Member(m) => m.clone(),
                    Asserted::Size { text, value } => format!("{text}={value:?}"),
                };
                (a.line, a.group.as_str(), what, a.conditions.len())
            })
            .collect();
        assert_eq!(
            brief,
            vec![
                (6, "g", "a".to_owned(), 0),
                (7, "g", "b".to_owned(), 0),
                (11, "h", "c.d[1]".to_owned(), 1),
                (17, "g", "91 + 4=Some(95)".to_owned(), 0),
                (18, "h", "sizeof(long) * 2=None".to_owned(), 0),
            ]
        );
        assert_eq!(got[2].conditions, vec!["#ifdef CONFIG_X".to_owned()]);
        assert!(kernel_asserts(SOURCE, "struct absent").is_empty());
    }

    #[test]
    fn a_stray_quote_hides_nothing_and_conditions_are_read_whole() {
        // A quote left open blanked the file up to the next quote, the
        // assert with it; a condition went on over lines, cut at its
        // backslash.
        let text = "#if 0\nit's off\n#endif\n#if defined(A) && \\\n    defined(B)\n\
                    CACHELINE_ASSERT_GROUP_MEMBER(struct t, g, a);\n#endif\n/* 'b' */\n";
        let got = kernel_asserts(text, "struct t");
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].line, 6);
        assert_eq!(got[0].conditions, ["#if defined(A) && defined(B)"]);
    }

    #[test]
    fn budgets_are_integer_arithmetic_only() {
        assert_eq!(evaluate("160"), Some(160));
        assert_eq!(evaluate("0x40UL"), Some(64));
        assert_eq!(evaluate("(8 + 4) * 2 - 1"), Some(23));
        assert_eq!(evaluate("PAGE_POOL_FRAG_GROUP_ALIGN"), None);
        assert_eq!(evaluate("1 - 2"), None);
        assert_eq!(evaluate("(1 + 2"), None);
        assert_eq!(evaluate(""), None);
    }

    #[test]
    fn an_unclosed_call_is_not_an_assert() {
        assert!(
            kernel_asserts("CACHELINE_ASSERT_GROUP_MEMBER(struct t, g, a", "struct t").is_empty()
        );
        assert!(
            kernel_asserts("CACHELINE_ASSERT_GROUP_MEMBER(struct t, g)", "struct t").is_empty()
        );
    }
}
