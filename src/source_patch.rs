//! A struct's members reordered in its C header, as a unified diff that
//! `git apply` takes: each member moves with the comment lines right above
//! it, found through the member's `DW_AT_decl_line`. A struct body with a
//! preprocessor line, a member that starts on another member's line, or a
//! member the debug info gives no line for is refused: the move would
//! break it, or could not be told.

use crate::error::{Error, Result};

/// One entry of the new order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// A member, by its declaration line (1-based).
    Member(u64),
    /// `__cacheline_group_begin_aligned(G)` ... `_end_aligned(G)` around
    /// members.
    AlignedGroup(String, Vec<u64>),
    /// `__cacheline_group_begin(G)` ... `__cacheline_group_end(G)`.
    Group(String, Vec<u64>),
}

/// The unified diff that reorders the struct declared at `struct_line` of
/// `text` (the file `path`, relative to the tree) as `order` says, the
/// members declared at `removed` (old group markers) dropped with their
/// comments.
pub(crate) fn reorder(
    path: &str,
    text: &str,
    struct_line: u64,
    order: &[Piece],
    removed: &[u64],
) -> Result<String> {
    let lines: Vec<&str> = text.lines().collect();
    let open = struct_line as usize - 1;
    let refuse = |line: usize, why: &str| {
        Error::Usage(format!(
            "--source-tree: {path}:{}: {why}; apply the plan by hand",
            line + 1
        ))
    };
    if open >= lines.len() || !lines[open].contains('{') {
        return Err(refuse(
            open,
            "the struct's declaration line opens no body here",
        ));
    }
    // The body: up to the brace that closes the struct's.
    let mut depth = 0i64;
    let mut close = None;
    for (i, l) in lines.iter().enumerate().skip(open) {
        depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
        if depth == 0 {
            close = Some(i);
            break;
        }
    }
    let close = close.ok_or_else(|| refuse(open, "the struct's body does not close"))?;
    if let Some(i) = (open + 1..close).find(|&i| lines[i].trim_start().starts_with('#')) {
        return Err(refuse(i, "a preprocessor line inside the struct's body"));
    }
    let members: Vec<usize> = order
        .iter()
        .flat_map(|p| match p {
            Piece::Member(l) => vec![*l],
            Piece::AlignedGroup(_, m) | Piece::Group(_, m) => m.clone(),
        })
        .map(|l| l as usize - 1)
        .collect();
    let mut starts = members.clone();
    starts.extend(removed.iter().map(|l| *l as usize - 1));
    starts.sort_unstable();
    if starts.windows(2).any(|w| w[0] == w[1]) {
        return Err(refuse(open, "two members are declared on one line"));
    }
    if let Some(&bad) = starts.iter().find(|&&l| l <= open || l >= close) {
        return Err(refuse(
            bad,
            "a member's declaration line is outside the struct's body",
        ));
    }
    // Each member's block: the comment and blank lines above it (down to
    // the previous member's end) and its declaration up to its ';'.
    let mut blocks: std::collections::HashMap<usize, (usize, usize)> = Default::default();
    let mut previous_end = open + 1;
    for &start in &starts {
        if start < previous_end {
            return Err(refuse(
                start,
                "a member starts inside another's declaration",
            ));
        }
        let end = (start..close)
            .find(|&i| lines[i].contains(';'))
            .ok_or_else(|| refuse(start, "a member's declaration does not end"))?;
        let mut first = start;
        while first > previous_end && is_comment_or_blank(lines[first - 1]) {
            first -= 1;
        }
        if first != previous_end {
            return Err(refuse(previous_end, "a line belongs to no member"));
        }
        blocks.insert(start, (first, end));
        previous_end = end + 1;
    }
    if (previous_end..close).any(|i| !lines[i].trim().is_empty()) {
        return Err(refuse(
            previous_end,
            "a line after the last member belongs to none",
        ));
    }
    let indent: String = lines[starts[0]]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect();
    let mut new_body: Vec<String> = Vec::new();
    let block = |l: &u64, out: &mut Vec<String>| {
        let (a, b) = blocks[&(*l as usize - 1)];
        out.extend(lines[a..=b].iter().map(|s| (*s).to_owned()));
    };
    for piece in order {
        match piece {
            Piece::Member(l) => block(l, &mut new_body),
            Piece::AlignedGroup(g, members) => {
                new_body.push(format!("{indent}__cacheline_group_begin_aligned({g});"));
                for l in members {
                    block(l, &mut new_body);
                }
                new_body.push(format!("{indent}__cacheline_group_end_aligned({g});"));
            }
            Piece::Group(g, members) => {
                new_body.push(format!("{indent}__cacheline_group_begin({g});"));
                for l in members {
                    block(l, &mut new_body);
                }
                new_body.push(format!("{indent}__cacheline_group_end({g});"));
            }
        }
    }
    let old_body = &lines[open + 1..close];
    let mut out = format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n");
    out.push_str(&format!(
        "@@ -{},{} +{},{} @@\n",
        open + 1,
        old_body.len() + 2,
        open + 1,
        new_body.len() + 2
    ));
    out.push_str(&format!(" {}\n", lines[open]));
    for l in old_body {
        out.push_str(&format!("-{l}\n"));
    }
    for l in &new_body {
        out.push_str(&format!("+{l}\n"));
    }
    out.push_str(&format!(" {}\n", lines[close]));
    Ok(out)
}

fn is_comment_or_blank(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with("/*") || t.starts_with('*') || t.starts_with("//")
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "\
/* before */
struct s {
\t/* a's comment */
\tint a;
\t/* b's comment,
\t * two lines */
\tlong b;

\tchar c;
};
";

    #[test]
    fn members_move_with_their_comments() {
        let order = [
            Piece::Member(9),
            Piece::AlignedGroup("g".into(), vec![4]),
            Piece::Member(7),
        ];
        let diff = reorder("x.h", HEADER, 2, &order, &[]).unwrap();
        let new: Vec<&str> = diff
            .lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .collect();
        assert_eq!(
            new,
            [
                "+",
                "+\tchar c;",
                "+\t__cacheline_group_begin_aligned(g);",
                "+\t/* a's comment */",
                "+\tint a;",
                "+\t__cacheline_group_end_aligned(g);",
                "+\t/* b's comment,",
                "+\t * two lines */",
                "+\tlong b;",
            ]
        );
        assert!(diff.contains("@@ -2,9 +2,11 @@"), "{diff}");
    }

    #[test]
    fn removed_members_go_with_their_comments() {
        let diff = reorder(
            "x.h",
            HEADER,
            2,
            &[Piece::Member(9), Piece::Member(4)],
            &[7],
        )
        .unwrap();
        assert!(
            !diff
                .lines()
                .any(|l| l.starts_with('+') && l.contains("long b")),
            "{diff}"
        );
        assert!(
            !diff
                .lines()
                .any(|l| l.starts_with('+') && l.contains("two lines")),
            "{diff}"
        );
    }

    #[test]
    fn a_conditional_in_the_body_is_refused() {
        let text = "struct s {\n\tint a;\n#ifdef X\n\tint b;\n#endif\n};\n";
        let err = reorder("x.h", text, 1, &[Piece::Member(4), Piece::Member(2)], &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("x.h:3: a preprocessor line"), "{err}");
    }
}
