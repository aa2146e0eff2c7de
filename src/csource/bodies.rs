//! The top-level struct and union definitions of a C file: each one's
//! name, the lines it spans, and the tokens of its body, as a header
//! search (which structs embed which) and a patch review (which
//! definitions a hunk touches) read them. Preprocessor lines are skipped;
//! a function's body (after a `(`) and a declaration (ended by `;` or
//! `=` before a brace) are not definitions.

use super::{scan, tokens};

/// One top-level `struct NAME { ... }` or `union NAME { ... }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Body {
    /// Its tag.
    pub name: String,
    /// The line of its tag (1-based).
    pub first: usize,
    /// The line of its closing brace.
    pub last: usize,
    /// The tokens between its braces (nested bodies included).
    pub tokens: Vec<String>,
}

/// The top-level struct and union definitions of C text `text`, in order.
pub(crate) fn bodies(text: &str) -> Vec<Body> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut pending: Option<(String, usize)> = None;
    let mut open: Option<Body> = None;
    let mut after_tag = false;
    for (i, line) in scan(text).iter().enumerate() {
        if line.preprocessor {
            continue;
        }
        for token in tokens(&line.code) {
            if depth > 0
                && let Some(body) = &mut open
                && !(depth == 1 && token == "}")
            {
                body.tokens.push(token.clone());
            }
            match token.as_str() {
                "{" => {
                    if depth == 0 {
                        open = pending.take().map(|(name, first)| Body {
                            name,
                            first,
                            last: first,
                            tokens: Vec::new(),
                        });
                    }
                    depth += 1;
                    after_tag = false;
                }
                "}" => {
                    depth = depth.saturating_sub(1);
                    if depth == 0
                        && let Some(mut body) = open.take()
                    {
                        body.last = i + 1;
                        out.push(body);
                    }
                    after_tag = false;
                }
                // A tag followed by these names no body: a parameter's
                // type (`f(struct napi_struct *napi) {`), a variable's.
                ";" | "(" | ")" | "=" | "*" | "," => {
                    if depth == 0 {
                        pending = None;
                    }
                    after_tag = false;
                }
                "struct" | "union" => after_tag = depth == 0,
                _ => {
                    if after_tag && token.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    {
                        pending = Some((token.clone(), i + 1));
                    }
                    after_tag = false;
                }
            }
        }
    }
    out
}

/// True when tokens `t` declare a member of type `struct NAME` or
/// `union NAME` by value (`struct NAME member`, not `struct NAME *p`).
pub(crate) fn embeds(t: &[String], name: &str) -> bool {
    t.windows(3).any(|w| {
        matches!(w[0].as_str(), "struct" | "union")
            && w[1] == name
            && w[2].starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "struct a {\n\tint x;\n};\n\nstatic inline struct a *f(void) { return 0; }\n\
                        struct b {\n\tstruct {\n\t\tstruct a in;\n\t} n;\n\tstruct a *p;\n} __aligned(8);\n\
                        struct a decl;\n";

    #[test]
    fn bodies_are_the_top_level_definitions() {
        let found = bodies(TEXT);
        let spans: Vec<(&str, usize, usize)> = found
            .iter()
            .map(|b| (b.name.as_str(), b.first, b.last))
            .collect();
        assert_eq!(spans, [("a", 1, 3), ("b", 6, 11)]);
        assert!(embeds(&found[1].tokens, "a"));
        assert!(!embeds(&found[0].tokens, "a"));
        assert!(!embeds(
            &["struct".into(), "a".into(), "*".into(), "p".into()],
            "a"
        ));
    }

    #[test]
    fn a_functions_body_is_no_body_of_its_parameters_struct() {
        let text = "void f(struct net_device *dev, struct napi_struct *napi)\n{\n\tnapi->weight = 1;\n}\n\
                    struct napi_struct\n{\n\tint weight;\n};\n";
        let found: Vec<(String, usize)> = bodies(text)
            .into_iter()
            .map(|b| (b.name, b.first))
            .collect();
        assert_eq!(found, [("napi_struct".to_owned(), 5)]);
    }
}
