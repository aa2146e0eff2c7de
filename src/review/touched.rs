//! The structs whose definitions a patch's hunks touch: the top-level
//! `struct NAME { ... }` (and `union`) bodies of a header, by line, met by
//! a hunk's old lines in the base text or its new lines in HEAD's.

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
    for crate::csource::Body {
        name, first, last, ..
    } in crate::csource::bodies(after)
    {
        if hunks.iter().any(|&(_, _, c, d)| meets(first, last, c, d)) && !names.contains(&name) {
            names.push(name);
        }
    }
    for crate::csource::Body {
        name, first, last, ..
    } in crate::csource::bodies(before)
    {
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
    fn a_hunk_touches_the_bodies_it_meets() {
        // Line 8 (inside b's anonymous struct) changed.
        assert_eq!(touched(TEXT, TEXT, &[(8, 1, 8, 1)]), ["b"]);
        // Lines inserted after line 4, between the two: none.
        assert!(touched(TEXT, TEXT, &[(4, 0, 5, 0)]).is_empty());
        // A line added at 2 in HEAD: a.
        assert_eq!(touched(TEXT, TEXT, &[(1, 0, 2, 1)]), ["a"]);
    }
}
