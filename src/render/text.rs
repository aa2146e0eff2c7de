//! pahole-style text: offset/size comments, cacheline boundaries, holes,
//! and the closing summary, so a kernel developer reads it without learning
//! anything new.

use std::fmt::Write;

use super::cdecl::declaration;
use crate::layout::{Field, GROUP_PAD, Item, Layout};
use crate::lines::Lines;
use crate::model::TypeTable;

/// Renders a layout. With `flat`, nested members are listed with dotted
/// paths and absolute offsets (`--expand`); without it, anonymous structs
/// and unions are shown inline in braces as pahole does. With `macros`
/// (not with `flat`), kernel cacheline group markers are written as the
/// kernel's macros, not as comments, so the text is the struct's C.
///
/// perf's share of each member (`shares`, by path: `--perf`) goes in a
/// comment after its row.
pub fn layout(
    table: &TypeTable,
    layout: &Layout,
    flat: bool,
    macros: bool,
    shares: &std::collections::BTreeMap<String, String>,
) -> String {
    let mut out = String::new();
    let name = layout.name.as_deref().unwrap_or("<anonymous>");
    let _ = writeln!(out, "{} {} {{", layout.kind.keyword(), name);
    let pads = if macros && !flat {
        GroupPads::of(&layout.items)
    } else {
        GroupPads::default()
    };
    // pahole's blank lines: a run of comments after a member (its struct's
    // padding, a bit hole, a byte hole) opens with one, and the next member
    // (not a closing brace, not the summary) is preceded by one.
    let mut in_comments = false;
    for (i, item) in layout.items.iter().enumerate() {
        if pads.rows.contains(&i) {
            continue;
        }
        let row = match item {
            Item::Group {
                name,
                begin,
                offset,
                alignment,
                depth,
            } if macros && !flat => {
                let aligned = |a: u64| match a == layout.cacheline {
                    true => format!("({name});"),
                    false => format!("({name}, {a});"),
                };
                let call = match (begin, alignment, pads.align.get(name.as_str())) {
                    (true, Some(a), _) => format!("__cacheline_group_begin_aligned{}", aligned(*a)),
                    (true, None, _) => format!("__cacheline_group_begin({name});"),
                    (false, Some(_), Some(pad)) => {
                        format!("__cacheline_group_end_aligned{}", aligned(*pad))
                    }
                    (false, Some(a), None) => {
                        format!("__cacheline_group_end({name}) __attribute__((__aligned__({a})));")
                    }
                    (false, None, _) => format!("__cacheline_group_end({name});"),
                };
                Some(Row::Line(format!(
                    "{}{call:<48} /* {offset:>5} {:>5} */\n",
                    indent(*depth, flat),
                    0
                )))
            }
            _ => row(table, layout, item, flat).map(|r| match (r, item) {
                (Row::Line(text), Item::Member(f)) if shares.contains_key(&f.path) => {
                    let text = text.trim_end_matches('\n');
                    Row::Line(format!("{text} /* perf: {} */\n", shares[&f.path]))
                }
                (r, _) => r,
            }),
        };
        let Some(row) = row else {
            continue;
        };
        match row {
            Row::Comment(text) => {
                if !in_comments {
                    out.push('\n');
                    in_comments = true;
                }
                out.push_str(&text);
            }
            Row::Close(text) => {
                in_comments = false;
                out.push_str(&text);
            }
            Row::Unnamed(text) => out.push_str(&text),
            Row::Line(text) => {
                if in_comments {
                    out.push('\n');
                    in_comments = false;
                }
                out.push_str(&text);
            }
        }
    }
    summary(&mut out, layout);
    match layout.attribute {
        Some(a) => {
            let _ = writeln!(out, "}} __attribute__((__aligned__({a})));");
        }
        None => out.push_str("};\n"),
    }
    out
}

/// The `__cacheline_group_pad__G` members of a layout, which the kernel's
/// `__cacheline_group_end_aligned(G)` declares with the end marker: their
/// rows (the member and its closing brace) and their alignment by group.
#[derive(Default)]
struct GroupPads<'a> {
    rows: std::collections::HashSet<usize>,
    align: std::collections::HashMap<&'a str, u64>,
}

impl<'a> GroupPads<'a> {
    fn of(items: &'a [Item]) -> GroupPads<'a> {
        let mut pads = GroupPads::default();
        for (i, item) in items.iter().enumerate() {
            let Item::Member(f) = item else { continue };
            let Some(group) = f.name.as_deref().and_then(|n| n.strip_prefix(GROUP_PAD)) else {
                continue;
            };
            let Some(a) = f.alignment else { continue };
            pads.rows.insert(i);
            if f.expanded {
                let close = items[i + 1..].iter().position(
                    |c| matches!(c, Item::Close { depth, name, .. } if *depth == f.depth && name == &f.name),
                );
                pads.rows.extend(close.map(|c| i + 1 + c));
            }
            pads.align.insert(group, a);
        }
        pads
    }
}

/// One rendered row and how it takes part in pahole's blank lines.
enum Row {
    /// A member, marker or boundary: after comments, a blank line first.
    Line(String),
    /// An `XXX` comment: the first of a run opens with a blank line.
    Comment(String),
    /// The closing line of an inline body: no blank line before it.
    Close(String),
    /// An unnamed bitfield, printed right after the bit hole's comments.
    Unnamed(String),
}

fn indent(depth: usize, flat: bool) -> String {
    "\t".repeat(if flat { 1 } else { depth + 1 })
}

fn attribute(alignment: Option<u64>) -> String {
    alignment.map_or_else(String::new, |a| {
        format!(" __attribute__((__aligned__({a})))")
    })
}

fn row(table: &TypeTable, layout: &Layout, item: &Item, flat: bool) -> Option<Row> {
    let mut out = String::new();
    let kind: fn(String) -> Row = match item {
        Item::Member(f) => {
            member_line(&mut out, table, f, flat);
            Row::Line
        }
        Item::Close {
            depth,
            name,
            ty,
            offset,
            size,
            alignment,
            type_alignment,
        } => {
            if flat {
                return None;
            }
            let mut close = format!("}}{}", attribute(*type_alignment));
            if let Some(name) = name {
                // The name with any array dimensions: `} bar_entry[4];`.
                let _ = write!(close, " {}", declaration(table, *ty, name).1);
            }
            let _ = write!(close, "{};", attribute(*alignment));
            let _ = writeln!(
                out,
                "{}{close:<48} /* {offset:>5} {size:>5} */",
                indent(*depth, flat)
            );
            Row::Close
        }
        Item::Hole { size, depth, .. } => {
            let _ = writeln!(
                out,
                "{}/* XXX {size} byte{} hole, try to pack */",
                indent(*depth, flat),
                plural(*size)
            );
            Row::Comment
        }
        Item::BitHole { bits, depth, .. } => {
            let _ = writeln!(
                out,
                "{}/* XXX {bits} bit{} hole, try to pack */",
                indent(*depth, flat),
                plural(*bits)
            );
            Row::Comment
        }
        Item::MemberPadding { size, depth } => {
            // --expand lists the struct's own members and its padding.
            if flat {
                return None;
            }
            let _ = writeln!(
                out,
                "{}/* XXX last struct has {size} byte{} of padding */",
                indent(*depth, flat),
                plural(*size)
            );
            Row::Comment
        }
        Item::UnnamedBits { ty, bits, depth } => {
            if flat {
                return None;
            }
            let at = indent(*depth, flat);
            if *bits == 0 {
                let _ = writeln!(out, "\n{at}/* Force alignment to the next boundary: */");
            }
            let (ty, _) = declaration(table, *ty, "");
            let _ = writeln!(out, "{at}{ty:<26} :{bits};");
            Row::Unnamed
        }
        Item::Combined { with_next, depth } => {
            if flat {
                return None;
            }
            let _ = writeln!(
                out,
                "{}/* Bitfield combined with {} fields */",
                indent(*depth, flat),
                if *with_next { "next" } else { "previous" }
            );
            Row::Comment
        }
        Item::Padding { size, depth, .. } => {
            // Without --expand, a nested struct's padding is the member's
            // MemberPadding row, after the member as pahole shows it.
            if *depth == 0 || !flat {
                return None;
            }
            let _ = writeln!(
                out,
                "{}/* XXX {size} byte{} padding */",
                indent(*depth, flat),
                plural(*size)
            );
            Row::Comment
        }
        Item::Boundary { line, ago, depth } => {
            let at = line * layout.cacheline;
            let ago = if *ago > 0 {
                format!(" was {ago} byte{} ago", plural(*ago))
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "{}/* --- cacheline {line} boundary ({at} bytes){ago} --- */",
                indent(*depth, flat)
            );
            Row::Line
        }
        Item::Group {
            name,
            begin,
            offset,
            depth,
            ..
        } => {
            let (mark, what) = if *begin {
                ("[", "begins")
            } else {
                ("]", "ends")
            };
            let _ = writeln!(
                out,
                "{}/* {mark} cacheline group {name} {what} at {offset} (line {}) */",
                indent(*depth, flat),
                offset / layout.cacheline
            );
            Row::Line
        }
        Item::LinePad {
            path,
            offset,
            depth,
        } => {
            let _ = writeln!(
                out,
                "{}/* CACHELINE_PADDING({path}) at {offset} (line {}) */",
                indent(*depth, flat),
                offset / layout.cacheline
            );
            Row::Line
        }
    };
    // An anonymous member in a --expand listing has no row of its own.
    (!out.is_empty()).then(|| kind(out))
}

fn member_line(out: &mut String, table: &TypeTable, f: &Field, flat: bool) {
    let shown = if flat {
        f.path.as_str()
    } else {
        f.name.as_deref().unwrap_or("")
    };
    let (ty, mut name) = declaration(table, f.ty, shown);
    if let Some((_, width)) = f.bits {
        let _ = write!(name, ":{width}");
    }
    if f.expanded && !flat {
        // Opening of an inline body; the offsets follow on the closing line.
        let opening = ty.trim_end_matches(" {...}");
        let _ = writeln!(out, "{}{opening} {{", indent(f.depth, flat));
        return;
    }
    if f.expanded && f.name.is_none() {
        return; // anonymous container in a flat listing: its members say it all
    }
    let decl = match f.alignment {
        Some(a) => format!("{name} __attribute__((__aligned__({a})));"),
        None => format!("{name};"),
    };
    let comment = match f.bits {
        Some((bit, _)) => format!("/* {:>5}:{bit:>2} {:>4} */", f.offset, f.size),
        None => format!("/* {:>5} {:>5} */", f.offset, f.size),
    };
    let line = if ty.len() <= 26 {
        format!("{ty:<26} {decl:<21} {comment}")
    } else {
        format!("{ty} {decl:<21} {comment}")
    };
    let _ = writeln!(out, "{}{line}", indent(f.depth, flat));
}

fn summary(out: &mut String, l: &Layout) {
    let s = &l.summary;
    out.push('\n');
    let _ = writeln!(
        out,
        "\t/* size: {}, cachelines: {}, members: {} */",
        l.size,
        l.cachelines(),
        s.members
    );
    // pahole prints the sums only when there are holes of either kind.
    if s.sum_holes > 0 || s.sum_bit_holes > 0 {
        if s.sum_members > 0 {
            let _ = write!(out, "\t/* sum members: {}", s.sum_members);
            if s.sum_holes > 0 {
                let _ = write!(out, ", holes: {}, sum holes: {}", s.holes, s.sum_holes);
            }
            out.push_str(" */\n");
        }
        if s.sum_bitfield_bits > 0 {
            let _ = write!(
                out,
                "\t/* sum bitfield members: {} bits",
                s.sum_bitfield_bits
            );
            if s.sum_bit_holes > 0 {
                let _ = write!(
                    out,
                    ", bit holes: {}, sum bit holes: {} bits",
                    s.bit_holes, s.sum_bit_holes
                );
            } else {
                let _ = write!(out, " ({} bytes)", s.sum_bitfield_bits / 8);
            }
            out.push_str(" */\n");
        }
    }
    if s.padding > 0 {
        let _ = writeln!(out, "\t/* padding: {} */", s.padding);
    }
    if s.paddings > 0 {
        let _ = writeln!(
            out,
            "\t/* paddings: {}, sum paddings: {} */",
            s.paddings, s.sum_paddings
        );
    }
    if s.bit_padding > 0 {
        let _ = writeln!(out, "\t/* bit_padding: {} bits */", s.bit_padding);
    }
    if s.forced_alignments > 0 {
        let _ = write!(out, "\t/* forced alignments: {}", s.forced_alignments);
        if s.forced_holes > 0 {
            let _ = write!(
                out,
                ", forced holes: {}, sum forced holes: {}",
                s.forced_holes, s.sum_forced_holes
            );
        }
        out.push_str(" */\n");
    }
    for g in &l.groups {
        let _ = match g.end {
            Some(end) => writeln!(
                out,
                "\t/* group {}: {}-{} ({} bytes, lines {}-{}) */",
                g.name,
                g.begin,
                end,
                end - g.begin,
                Lines::of_range(g.begin, end, l.cacheline).first,
                Lines::of_range(g.begin, end, l.cacheline).last
            ),
            None => writeln!(
                out,
                "\t/* group {}: begins at {}, no end marker */",
                g.name, g.begin
            ),
        };
    }
    let last = l.size % l.cacheline;
    if last > 0 {
        // pahole's wording, "1 bytes" included.
        let _ = writeln!(out, "\t/* last cacheline: {last} bytes */");
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}
