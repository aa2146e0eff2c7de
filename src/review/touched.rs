//! The structs whose definitions a patch's hunks touch: the top-level
//! `struct NAME { ... }` (and `union`) bodies of a header, by line, met by
//! a hunk's old lines in the base text or its new lines in HEAD's.

/// A top-level struct or union definition: its name and first and last
/// line (1-based).
type Span = (String, usize, usize);

/// The top-level struct and union definitions of C text `text`.
fn struct_spans(text: &str) -> Vec<Span> {
    let mut spans = Vec::new();
    let mut depth = 0usize;
    let mut pending: Option<(String, usize)> = None;
    let mut open: Option<(String, usize)> = None;
    let mut last_tag = false;
    for (i, line) in crate::csource::scan(text).iter().enumerate() {
        if line.preprocessor {
            continue;
        }
        for token in crate::csource::tokens(&line.code) {
            match token.as_str() {
                "{" => {
                    if depth == 0 {
                        open = pending.take();
                    }
                    depth += 1;
                    last_tag = false;
                }
                "}" => {
                    depth = depth.saturating_sub(1);
                    if depth == 0
                        && let Some((name, first)) = open.take()
                    {
                        spans.push((name, first, i + 1));
                    }
                    last_tag = false;
                }
                ";" | "(" | "=" => {
                    if depth == 0 {
                        pending = None;
                    }
                    last_tag = false;
                }
                "struct" | "union" => last_tag = depth == 0,
                _ => {
                    if last_tag && token.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    {
                        pending = Some((token.clone(), i + 1));
                    }
                    last_tag = false;
                }
            }
        }
    }
    spans
}

/// The structs of `before` (the base's text) and `after` (HEAD's) whose
/// definitions `hunks` (old start, old count, new start, new count) meet,
/// in HEAD's order, then those only the base had.
pub(super) fn touched(
    before: &str,
    after: &str,
    hunks: &[(usize, usize, usize, usize)],
) -> Vec<String> {
    // A side with no lines (an insertion's old side, a deletion's new
    // side) meets nothing: the other side holds the change.
    let meets = |first: usize, last: usize, start: usize, count: usize| {
        count > 0 && start <= last && start + count > first
    };
    let mut names: Vec<String> = Vec::new();
    for (name, first, last) in struct_spans(after) {
        if hunks.iter().any(|&(_, _, c, d)| meets(first, last, c, d)) && !names.contains(&name) {
            names.push(name);
        }
    }
    for (name, first, last) in struct_spans(before) {
        if hunks.iter().any(|&(a, b, _, _)| meets(first, last, a, b)) && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "struct a {\n\tint x;\n};\n\nstatic inline struct a *f(void) { return 0; }\n\
                        struct b {\n\tstruct {\n\t\tint y;\n\t} in;\n\tint z;\n} __aligned(8);\n";

    #[test]
    fn spans_are_the_top_level_bodies() {
        assert_eq!(
            struct_spans(TEXT),
            [("a".to_owned(), 1, 3), ("b".to_owned(), 6, 11)]
        );
    }

    #[test]
    fn a_hunk_touches_the_bodies_it_meets() {
        // Line 8 (inside b's anonymous struct) changed.
        assert_eq!(touched(TEXT, TEXT, &[(8, 1, 8, 1)]), ["b"]);
        // Lines inserted after line 4, between the two: none.
        assert!(touched(TEXT, TEXT, &[(4, 0, 5, 0)]).is_empty());
        // A line added at 2 in HEAD: a.
        assert_eq!(touched(TEXT, TEXT, &[(1, 0, 2, 1)]), ["a"]);
    }
}
