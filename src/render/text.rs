//! pahole-style text: offset/size comments, cacheline boundaries, holes,
//! and the closing summary, so a kernel developer reads it without learning
//! anything new.

use std::fmt::Write;

use super::cdecl::declaration;
use crate::layout::{Field, Item, Layout};
use crate::lines::Lines;
use crate::model::TypeTable;

/// Renders a layout. With `flat`, nested members are listed with dotted
/// paths and absolute offsets (`--expand`); without it, anonymous structs
/// and unions are shown inline in braces as pahole does.
pub fn layout(table: &TypeTable, layout: &Layout, flat: bool) -> String {
    let mut out = String::new();
    let name = layout.name.as_deref().unwrap_or("<anonymous>");
    let _ = writeln!(out, "{} {} {{", layout.kind.keyword(), name);
    for item in &layout.items {
        item_line(&mut out, table, layout, item, flat);
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

fn indent(depth: usize, flat: bool) -> String {
    "\t".repeat(if flat { 1 } else { depth + 1 })
}

fn item_line(out: &mut String, table: &TypeTable, layout: &Layout, item: &Item, flat: bool) {
    match item {
        Item::Member(f) => member_line(out, table, f, flat),
        Item::Close {
            depth,
            path,
            offset,
            size,
        } => {
            if !flat {
                let name = path.rsplit('.').next().unwrap_or("");
                let close = if name.is_empty() || path.is_empty() {
                    "};".to_owned()
                } else {
                    format!("}} {name};")
                };
                let _ = writeln!(
                    out,
                    "{}{close:<48} /* {offset:>5} {size:>5} */",
                    indent(*depth, flat)
                );
            }
        }
        Item::Hole { size, depth, .. } => {
            let _ = writeln!(
                out,
                "\n{}/* XXX {size} byte{} hole, try to pack */\n",
                indent(*depth, flat),
                plural(*size)
            );
        }
        Item::BitHole { bits, depth, .. } => {
            let _ = writeln!(
                out,
                "\n{}/* XXX {bits} bit{} hole, try to pack */\n",
                indent(*depth, flat),
                plural(*bits)
            );
        }
        Item::Padding { size, depth, .. } => {
            if *depth > 0 {
                let _ = writeln!(
                    out,
                    "\n{}/* XXX {size} byte{} padding */\n",
                    indent(*depth, flat),
                    plural(*size)
                );
            }
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
        }
        Item::Group {
            name,
            begin,
            offset,
            depth,
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
        }
    }
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
    if s.holes > 0 {
        let _ = writeln!(
            out,
            "\t/* sum members: {}, holes: {}, sum holes: {} */",
            s.sum_members, s.holes, s.sum_holes
        );
    }
    if s.sum_bitfield_bits > 0 {
        let _ = writeln!(
            out,
            "\t/* sum bitfield members: {} bits, bit holes: {}, sum bit holes: {} bits */",
            s.sum_bitfield_bits, s.bit_holes, s.sum_bit_holes
        );
    }
    if s.padding > 0 {
        let _ = writeln!(out, "\t/* padding: {} */", s.padding);
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
        let _ = writeln!(out, "\t/* last cacheline: {last} byte{} */", plural(last));
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}
