//! pahole's `-C` text against cachelint's `layout` text, line by line after
//! the normalisation docs/layout.md lists ("Compared with pahole"): the
//! kernel tier runs it on a vmlinux, tests/integration/fixtures.rs on
//! pahole's output for the fixtures saved under tests/golden/.

use std::collections::HashSet;

/// Removes pahole's `__attribute__((...))` annotations from a declaration.
pub fn strip_attributes(decl: &str) -> String {
    let mut s = decl.to_owned();
    while let Some(start) = s.find("__attribute__((") {
        let mut depth = 0;
        let mut end = s.len();
        for (i, c) in s[start..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = start + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        s.replace_range(start..end, " ");
    }
    s
}

/// Splits pahole output into (type name, block) at `struct NAME {` / `union NAME {` lines.
pub fn pahole_blocks(text: &str) -> Vec<(String, String)> {
    let mut blocks: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let header = line
            .strip_prefix("struct ")
            .or_else(|| line.strip_prefix("union "));
        if let Some(name) = header.and_then(|h| h.strip_suffix(" {")) {
            blocks.push((name.to_owned(), String::new()));
        } else if let Some((_, block)) = blocks.last_mut() {
            block.push_str(line);
            block.push('\n');
        }
    }
    blocks
}

/// One struct's lines from `struct NAME {` to its closing `}` line, for
/// each block of `pahole_blocks`, and whether it is a union.
fn layout_lines(text: &str) -> Vec<(String, bool, Vec<String>)> {
    let unions: HashSet<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("union ")?.strip_suffix(" {"))
        .collect();
    pahole_blocks(text)
        .into_iter()
        .map(|(name, block)| {
            let mut lines = Vec::new();
            for line in block.lines() {
                lines.push(line.to_owned());
                if line.starts_with('}') {
                    break;
                }
            }
            let union = unions.contains(name.as_str());
            (name, union, lines)
        })
        .collect()
}

/// Normalisation 1 (docs/layout.md, "Compared with pahole"): spacing. The
/// indentation (one tab a level) is kept; runs of blanks become one, and
/// blanks around `*` and before `,` and `)` go: pahole's columns, its
/// `const char  *` and `* *`, and its `(const clockid_t , ...)`.
fn spacing(line: &str) -> String {
    let tabs = line.len() - line.trim_start_matches('\t').len();
    let words: Vec<&str> = line.split_whitespace().collect();
    let joined = words
        .join(" ")
        .replace(" *", "*")
        .replace("* ", "*")
        .replace(" ,", ",")
        .replace(" )", ")");
    format!("{}{joined}", "\t".repeat(tabs))
}

/// Normalisation 2: pahole's marker members written as cachelint's markers
/// (`__cacheline_group_begin__G[0]`, `struct cacheline_padding NAME`), with
/// the offset pahole gives; cachelint shows no attribute on a marker.
fn as_marker(line: &str, cacheline: u64) -> String {
    let tabs = &line[..line.len() - line.trim_start_matches('\t').len()];
    let Some((decl, comment)) = line.trim().split_once("/*") else {
        return line.to_owned();
    };
    let decl = strip_attributes(decl);
    let Some(decl) = decl.trim().strip_suffix(';') else {
        return line.to_owned();
    };
    let Some((ty, name)) = decl.trim().rsplit_once(' ') else {
        return line.to_owned();
    };
    let Some(offset) = comment
        .split_whitespace()
        .next()
        .and_then(|o| o.parse::<u64>().ok())
    else {
        return line.to_owned();
    };
    let line_no = offset / cacheline;
    for (prefix, mark, what) in [
        ("__cacheline_group_begin__", "[", "begins"),
        ("__cacheline_group_end__", "]", "ends"),
    ] {
        // `[]` where the marker is the last member (see same_declaration).
        let group = name
            .strip_prefix(prefix)
            .and_then(|g| g.strip_suffix("[0]").or(g.strip_suffix("[]")));
        if let Some(group) = group {
            return format!(
                "{tabs}/* {mark} cacheline group {group} {what} at {offset} (line {line_no}) */"
            );
        }
    }
    if ty.trim() == "struct cacheline_padding" {
        return format!("{tabs}/* CACHELINE_PADDING({name}) at {offset} (line {line_no}) */");
    }
    line.to_owned()
}

/// Normalisation 3: bodies cachelint does not show, folded into its one
/// line: an anonymous enum's enumerators (`enum {...} NAME;`) and the
/// pointed-to anonymous struct or union of a pointer member
/// (`struct {...} *NAME;`), which are no part of this struct's layout.
fn fold_bodies(lines: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        let tabs = &line[..line.len() - line.trim_start_matches('\t').len()];
        let opening = line.trim();
        let close = (!tabs.is_empty() && ["enum {", "struct {", "union {"].contains(&opening))
            .then(|| {
                (i + 1..lines.len()).find(|&j| {
                    lines[j]
                        .strip_prefix(tabs)
                        .is_some_and(|r| r.starts_with('}'))
                })
            })
            .flatten();
        if let Some(j) = close {
            let rest = &lines[j][tabs.len() + 1..];
            if opening == "enum {" || rest.trim_start().starts_with('*') {
                let keyword = opening.trim_end_matches(" {");
                out.push(format!("{tabs}{keyword} {{...}}{rest}"));
                i = j + 1;
                continue;
            }
        }
        out.push(line.clone());
        i += 1;
    }
    out
}

/// Normalisation 4, line against line where the two differ only in how
/// each tool spells the same declaration (`pahole` and `ours` already
/// through [`spacing`]): pahole's `__packed__` for a struct cachelint gives
/// its recorded alignment; `[]` and `[0]`, which pahole does not tell apart
/// (it writes `[]` for a last member, `[0]` elsewhere); a pointer to an
/// array, which pahole shows as a pointer to its element (`T *name` for
/// `T (*name)[N]`); an array of function pointers, its dimensions after
/// the parameters; a const pointer, whose `const` pahole moves to the front
/// (`const T *name` for `T *const name`); and the attribute of an array of
/// an anonymous struct, which pahole writes after the name
/// (`} links __attribute__(...)[15]`). pahole also repeats a `const` that
/// the debug info has twice (a const array of const elements, as GCC
/// records `const char name[16]`): `const const` is read as one.
fn same_declaration(pahole: &str, ours: &str) -> bool {
    const PACKED: &str = " __attribute__((__packed__))";
    const ALIGNED: &str = "__attribute__((__aligned__(";
    let pahole = one_const(pahole);
    let pahole = pahole.as_str();
    if pahole == ours {
        return true;
    }
    let tabs = ours.len() - ours.trim_start_matches('\t').len();
    let (indent, rest) = ours.split_at(tabs);
    // `} ATTR` at the start of cachelint's line: (ATTR, what follows it).
    let type_attribute = rest
        .strip_prefix("} ")
        .filter(|r| r.starts_with(ALIGNED))
        .and_then(|r| r.find(")))").map(|end| r.split_at(end + 3)));
    if pahole.contains(PACKED) {
        let ours = match type_attribute {
            Some((_, after)) => format!("{indent}}}{after}"),
            None => ours.to_owned(),
        };
        return pahole.replace(PACKED, "") == ours;
    }
    if pahole.replace("[0]", "[]") == ours.replace("[0]", "[]") {
        return true;
    }
    if let Some((attribute, after)) = type_attribute
        && let Some(dims) = after.find('[')
    {
        let moved = format!("{indent}}}{} {attribute}{}", &after[..dims], &after[dims..]);
        return pahole == moved;
    }
    if ours.contains("*const") {
        return pahole == one_const(&spacing(&hoist_const(ours)));
    }
    if dims_after_parameters(ours).is_some_and(|moved| pahole == moved) {
        return true;
    }
    if let Some(start) = ours.find("(*") {
        let Some(close) = ours[start..].find(')').map(|c| start + c) else {
            return false;
        };
        let after = &ours[close + 1..];
        let dims = after.len()
            - after
                .trim_start_matches(|c: char| c == '[' || c == ']' || c.is_ascii_digit())
                .len();
        if dims > 0 {
            let name = &ours[start + 2..close];
            let pointer = format!("{}*{name}{}", &ours[..start], &after[dims..]);
            return pahole == spacing(&pointer);
        }
    }
    false
}

/// pahole's spelling of an array of function pointers: `T (*NAME[N])(P)`
/// written `T (*NAME)(P)[N]`.
fn dims_after_parameters(line: &str) -> Option<String> {
    let start = line.find("(*")?;
    let close = start + line[start..].find(')')?;
    let dims_at = start + line[start..close].find('[')?;
    let dims = &line[dims_at..close];
    let params_end = close + 1 + line[close + 1..].find(')')? + 1;
    Some(format!(
        "{}{}{}{dims}{}",
        &line[..dims_at],
        &line[close..close + 1],
        &line[close + 1..params_end],
        &line[params_end..]
    ))
}

/// `const const T` (any number) read as `const T`.
fn one_const(line: &str) -> String {
    let mut s = line.to_owned();
    while s.contains("const const ") {
        s = s.replace("const const ", "const ");
    }
    s
}

/// pahole's spelling of a const pointer: `T *const` written `const T *`,
/// for a member (the type starts after the indentation) and a parameter
/// (after `(` or `,`); a const function pointer `T (*const f)(...)` written
/// `const T (*f)(...)`.
fn hoist_const(line: &str) -> String {
    let mut s = line.to_owned();
    if let Some(at) = s.find("(*const ") {
        s.replace_range(at..at + "(*const ".len(), "(*");
        let tabs = s.len() - s.trim_start_matches('\t').len();
        s.insert_str(tabs, "const ");
    }
    let mut from = 0;
    while let Some(at) = s[from..].find("*const").map(|a| from + a) {
        let end = at + "*const".len();
        if s[end..].starts_with(|c: char| c.is_alphanumeric() || c == '_') {
            from = end;
            continue;
        }
        let start = s[..at].rfind(['(', ',', '\t']).map_or(0, |b| b + 1);
        let ty = s[start..at].trim_start().to_owned();
        let lead = &s[start..at][..s[start..at].len() - ty.len()];
        let replaced = format!("{lead}const {ty}*");
        s.replace_range(start..end, &replaced);
        from = start + replaced.len();
    }
    s
}

/// Not done by cachelint (normalisation 8): pahole's reconstruction of a
/// struct's tail padding as unnamed bitfields of its last member's type
/// (`/* Force padding: */` and `int :32;` lines, the padding fields of
/// `struct __kernel_timex`). Removes the block and the blank line before it.
fn drop_force_padding(lines: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut in_block = false;
    for line in lines {
        if line.trim() == "/* Force padding: */" {
            if out.last().is_some_and(|l| l.is_empty()) {
                out.pop();
            }
            in_block = true;
        } else if in_block && line.trim_end().ends_with(';') && line.contains(" :") {
            continue;
        } else {
            in_block = false;
            out.push(line);
        }
    }
    out
}

/// The first difference of each struct of `names` between pahole's text
/// and cachelint's (struct, line number, both lines), the number of pahole
/// lines compared, and the names pahole printed no struct for.
pub fn compare(
    pahole: &str,
    cachelint: &str,
    names: &[String],
    cacheline: u64,
) -> (Vec<String>, usize, Vec<String>) {
    let theirs = layout_lines(pahole);
    let ours = layout_lines(cachelint);
    let mut differences = Vec::new();
    let mut lines = 0;
    let mut skipped = Vec::new();
    for name in names {
        let find = |blocks: &[(String, bool, Vec<String>)]| {
            blocks.iter().find(|(n, _, _)| n == name).cloned()
        };
        let Some((_, _, o)) = find(&ours) else {
            panic!("{name}: missing from cachelint's output");
        };
        // pahole -C prints a typedef of the same name instead of the struct
        // (`typedef struct ZSTD_matchState_t ZSTD_matchState_t;`).
        let Some((_, union, p)) = find(&theirs) else {
            skipped.push(name.clone());
            continue;
        };
        let p: Vec<String> = fold_bodies(drop_force_padding(p))
            .iter()
            .map(|l| spacing(&as_marker(l, cacheline)))
            .collect();
        // Normalisation 5: cachelint's group lines in the summary.
        let mut o: Vec<&String> = o.iter().filter(|l| !l.starts_with("\t/* group ")).collect();
        if union {
            // Normalisation 6: the summary cachelint prints for a union
            // (pahole 1.24 prints none): the blank line before `size:` on.
            if let Some(at) = o.iter().position(|l| l.starts_with("\t/* size: ")) {
                o.drain(at.saturating_sub(1)..o.len() - 1);
            }
        }
        // Normalisation 7: pahole 1.24 prints no attribute on a union's
        // closing line; cachelint prints the union's alignment there.
        let last = union
            .then(|| o.pop())
            .flatten()
            .map(|l| format!("{};", strip_attributes(l).trim_end_matches([' ', ';'])));
        let mut o: Vec<String> = o.into_iter().cloned().collect();
        o.extend(last);
        let o: Vec<String> = o.iter().map(|l| spacing(l)).collect();
        for i in 0..p.len().max(o.len()) {
            let (a, b) = (p.get(i), o.get(i));
            let same = match (a, b) {
                (Some(a), Some(b)) => a == b || same_declaration(a, b),
                _ => false,
            };
            if !same {
                differences.push(format!(
                    "{name} line {}:\n  pahole:    {}\n  cachelint: {}",
                    i + 1,
                    a.map_or("(none)", String::as_str),
                    b.map_or("(none)", String::as_str)
                ));
                // The rest of a block is usually off by the same lines.
                break;
            }
        }
        lines += p.len();
    }
    (differences, lines, skipped)
}
