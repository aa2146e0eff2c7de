//! The annotations on member declarations (`__guarded_by(&lock)`,
//! `__pt_guarded_by`) and each member's line, read with the scanner of
//! [`crate::csource`].

use std::path::Path;

use super::{Declaration, Role, Said, Wanted};

/// `__guarded_by` and `__pt_guarded_by` on the members of the bodies of
/// `types` in `text`.
pub(super) fn members(text: &str, file: &Path, types: Wanted<'_>) -> Vec<Declaration> {
    let lines = crate::csource::scan(text);
    let mut out = Vec::new();
    for body in crate::csource::bodies(text) {
        if !types.contains(&body.name) {
            continue;
        }
        // The member a line's annotation belongs to: the last name before
        // it on the line, else that of the statement it ends.
        let mut last_name: Option<(String, usize)> = None;
        // Inside `[...]`: array bounds, never a name.
        let mut brackets = 0usize;
        for (i, line) in lines.iter().enumerate().take(body.last).skip(body.first) {
            let tokens = crate::csource::tokens(&line.code);
            let mut j = 0;
            while j < tokens.len() {
                let t = &tokens[j];
                let pointee = t == "__pt_guarded_by";
                if (t == "__guarded_by" || pointee) && tokens.get(j + 1).is_some_and(|p| p == "(") {
                    let (locks, end) = arguments(&tokens, j + 1);
                    if let Some((name, _)) = &last_name {
                        out.push(Declaration {
                            ty: body.name.clone(),
                            path: name.clone(),
                            said: Said::GuardedBy { locks, pointee },
                            function: None,
                            file: file.to_owned(),
                            line: i + 1,
                            role: Role::Fast,
                            param: None,
                            entry: None,
                            callers: 0,
                            hot_callers: 0,
                            paths: Vec::new(),
                        });
                    }
                    j = end;
                    continue;
                }
                match t.as_str() {
                    "[" => brackets += 1,
                    "]" => brackets = brackets.saturating_sub(1),
                    _ => {}
                }
                if t == ";" || t == "{" || t == "}" {
                    // A member ends: its name was declared where it was
                    // seen, and the next annotation is the next one's.
                    if let Some((name, at)) = last_name.take().filter(|_| t == ";") {
                        out.push(Declaration {
                            ty: body.name.clone(),
                            path: name,
                            said: Said::Member,
                            function: None,
                            file: file.to_owned(),
                            line: at,
                            role: Role::Fast,
                            param: None,
                            entry: None,
                            callers: 0,
                            hot_callers: 0,
                            paths: Vec::new(),
                        });
                    }
                } else if brackets == 0
                    && is_identifier(t)
                    && !is_attribute(t)
                    && tokens.get(j + 1).is_none_or(|n| n != "(")
                {
                    last_name = Some((t.clone(), i + 1));
                }
                j += 1;
            }
        }
    }
    out
}

/// The comma-separated arguments of the call whose `(` is at `open`, as
/// text, and the index after its `)`.
pub(super) fn arguments(tokens: &[String], open: usize) -> (Vec<String>, usize) {
    let (mut depth, mut args, mut current) = (0usize, Vec::new(), String::new());
    for (k, t) in tokens.iter().enumerate().skip(open) {
        match t.as_str() {
            "(" => {
                depth += 1;
                if depth == 1 {
                    continue;
                }
            }
            ")" => {
                depth -= 1;
                if depth == 0 {
                    if !current.is_empty() {
                        args.push(std::mem::take(&mut current));
                    }
                    return (args, k + 1);
                }
            }
            "," if depth == 1 => {
                args.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push_str(t);
    }
    (args, tokens.len())
}

/// An attribute macro written after a member's name without arguments
/// (`____cacheline_aligned_in_smp`, `__randomize_layout`, `__packed`).
fn is_attribute(t: &str) -> bool {
    t.starts_with("__")
        && [
            "cacheline_aligned",
            "randomize_layout",
            "packed",
            "aligned_largest",
        ]
        .iter()
        .any(|a| t.contains(a))
}

/// A C identifier that is not a keyword of a declaration.
pub(super) fn is_identifier(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && !matches!(
            t,
            "struct" | "union" | "enum" | "const" | "volatile" | "unsigned" | "signed"
        )
}
