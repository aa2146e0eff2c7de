//! The kernel's own access tables,
//! `Documentation/networking/net_cachelines/*.rst`: one row per member with
//! columns `Type`, `Name`, `fastpath_tx_access`, `fastpath_rx_access` and
//! `Comments`. Both shapes the kernel has used are read: the plain
//! whitespace-aligned table, and the RST "simple table" with `====` border
//! rows. Columns are found from the header row's word positions, which is
//! how RST itself aligns them.
//!
//! The two access columns are two contexts, `tx` and `rx`, as their
//! authors mean them: `read_mostly` is a read in that context, and
//! `read_write` or `write_mostly` a write in it by the path that owns the
//! socket or device at that moment, one CPU at a time (a rules file can
//! declare `tx` or `rx` lockless instead). Rows with no access are
//! documentation only.

use std::path::Path;
use std::sync::Arc;

use super::{
    Access, Class, Context, FieldRule, Location, Rules, Source, TypeRules, Writers,
    valid_member_path,
};
use crate::error::Result;

/// Parses the text of a net_cachelines table read from `file`.
pub fn parse(file: &Arc<Path>, text: &str) -> Result<Rules> {
    let lines: Vec<&str> = text.lines().collect();
    let located = |line: usize, column: usize| Location {
        file: file.clone(),
        line: line + 1,
        column: column + 1,
    };
    let header_line = lines
        .iter()
        .enumerate()
        .find_map(|(i, l)| Columns::from_header(l).map(|c| (i, c)));
    let Some((header_line, columns)) = header_line else {
        if lines.iter().any(|l| l.trim() == ".. toctree::") {
            // index.rst: the list of tables, given with them by a glob.
            return Ok(Rules {
                notes: vec![format!(
                    "{}: an index of tables (a toctree), no table; nothing to check in it",
                    file.display()
                )],
                ..Rules::default()
            });
        }
        return Err(located(0, 0).error(
            "no net_cachelines table here: expected a header row with the columns \
                 Type, Name, fastpath_tx_access and fastpath_rx_access",
        ));
    };
    let mut name = title_name(&lines[..header_line]);
    // 7.3's snmp.rst dropped its `..enum` row: its title still says so.
    let enum_title = lines[..header_line]
        .iter()
        .any(|l| l.contains(" enum fast path usage breakdown"));
    let mut fields: Vec<FieldRule> = Vec::new();
    let mut rows: Vec<(String, usize)> = Vec::new();
    let mut notes = Vec::new();
    for (i, line) in lines.iter().enumerate().skip(header_line + 1) {
        if line.trim().is_empty() || is_border(line) {
            continue;
        }
        let Some(row) = Row::read(line, &columns) else {
            continue;
        };
        if row.ty == "..enum" || enum_title {
            // snmp.rst: MIB counters, an enum's values, not struct members.
            return Ok(Rules {
                notes: vec![format!(
                    "{}: an enum table ({}): its rows are counters, not \
                     struct members; nothing to check in it",
                    file.display(),
                    match row.ty.as_str() {
                        "..enum" => format!("..enum, at line {}", i + 1),
                        _ => "its title says enum".to_owned(),
                    }
                )],
                ..Rules::default()
            });
        }
        if row.ty == "..struct" {
            // `..struct  ..tcp_sock`: the struct the table describes.
            name = Some(row.name.trim_start_matches('.').to_owned());
            continue;
        }
        if C_KEYWORDS.contains(&row.name) {
            // 7.3's net_device.rst, line 136: `void*priv_destructor` runs
            // into the Name column, which then reads `struct net_device`.
            notes.push(format!(
                "{}: '{}' is a C keyword, not a member: the row's Type runs into its Name \
                 column; this row is skipped",
                located(i, row.name_at),
                row.name
            ));
            continue;
        }
        let access_of = |cell: Option<(usize, &str)>| match cell {
            None => Ok(Cell::None),
            Some((at, value)) => access(value).map_err(|v| located(i, at).error(bad_access(&v))),
        };
        let tx = access_of(row.tx)?;
        let rx = access_of(row.rx)?;
        let path = member_path(&row.ty, row.name);
        let path = path.as_str();
        if !valid_member_path(path) {
            return Err(
                located(i, row.name_at).error(format!("'{}' is not a member name", row.name))
            );
        }
        if let Some((_, first)) = rows.iter().find(|(r, _)| r == path) {
            notes.push(format!(
                "{}: duplicate row for '{path}' (first at line {first}); this row is skipped",
                located(i, row.name_at)
            ));
            continue;
        }
        rows.push((path.to_owned(), i + 1));
        let Some(access) = combine(tx, rx) else {
            continue;
        };
        fields.push(FieldRule {
            path: path.to_owned(),
            class: if access.writes.is_empty() {
                Class::HotRead
            } else {
                Class::OwnerWrite
            },
            access: Some(std::sync::Arc::new(access)),
            lock: None,
            was: Vec::new(),
            at: located(i, row.name_at),
            source: Source::NetCachelines,
        });
    }
    let name = name
        .or_else(|| Some(file.file_stem()?.to_str()?.to_owned()))
        .filter(|n| valid_member_path(n) && !n.contains('.'))
        .ok_or_else(|| located(0, 0).error("cannot tell which struct this table describes"))?;
    let contexts = [TX, RX]
        .into_iter()
        .map(|name| Context {
            name: name.to_owned(),
            writers: Writers::Serialized,
            at: located(header_line, 0),
            implied: true,
        })
        .collect();
    Ok(Rules {
        types: vec![TypeRules {
            name,
            at: located(header_line, 0),
            fields,
            rows: rows.into_iter().map(|(r, _)| r).collect(),
            aliases: Vec::new(),
        }],
        contexts,
        notes,
        ..Rules::default()
    })
}

/// One row, read as whitespace-separated words placed by where each
/// starts against the header's columns: a name that runs into the next
/// column (`see_all_hwtstamp_requests` in 6.12's net_device.rst) is still
/// one name, and an access word belongs to the access column it starts
/// nearest to.
struct Row<'l> {
    /// The type: the words before the Name column, joined.
    ty: String,
    /// The member: the first word from the Name column on.
    name: &'l str,
    /// Character column of the name.
    name_at: usize,
    /// TX and RX access words, with their columns.
    tx: Option<(usize, &'l str)>,
    rx: Option<(usize, &'l str)>,
}

impl<'l> Row<'l> {
    fn read(line: &'l str, c: &Columns) -> Option<Row<'l>> {
        if line.trim().is_empty() {
            return None;
        }
        let words = words(line);
        let (before, rest): (Vec<_>, Vec<_>) = words.iter().partition(|(at, _)| *at < c.name);
        let ty = before.iter().map(|(_, w)| *w).collect::<Vec<_>>().join(" ");
        let (&(name_at, name), after) = rest.split_first().unwrap_or((&(c.name, ""), &[]));
        let mut row = Row {
            ty,
            name,
            name_at,
            tx: None,
            rx: None,
        };
        // Up to two access words follow the name, before the comments.
        for &(at, word) in after.iter().take(2) {
            let in_comments = c.comments.is_some_and(|com| at >= com);
            if in_comments && access(word).is_err() {
                break;
            }
            let nearer_tx = at.abs_diff(c.tx) <= at.abs_diff(c.rx);
            match (nearer_tx && row.tx.is_none(), row.rx.is_none()) {
                (true, _) => row.tx = Some((at, word)),
                (false, true) => row.rx = Some((at, word)),
                (false, false) => break,
            }
            if in_comments {
                break;
            }
        }
        Some(row)
    }
}

/// The words of a line with the character column each starts at.
fn words(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    let mut byte_start = 0;
    for (col, (byte, ch)) in line.char_indices().chain([(line.len(), ' ')]).enumerate() {
        match (ch.is_whitespace(), start) {
            (false, None) => {
                start = Some(col);
                byte_start = byte;
            }
            (true, Some(s)) => {
                out.push((s, &line[byte_start..byte]));
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// Character columns where each cell starts.
struct Columns {
    name: usize,
    tx: usize,
    rx: usize,
    comments: Option<usize>,
}

impl Columns {
    fn from_header(line: &str) -> Option<Columns> {
        let mut words = Vec::new();
        let mut start = None;
        for (i, c) in line.chars().chain([' ']).enumerate() {
            match (c.is_whitespace(), start) {
                (false, None) => start = Some(i),
                (true, Some(s)) => {
                    words.push((s, line.chars().skip(s).take(i - s).collect::<String>()));
                    start = None;
                }
                _ => {}
            }
        }
        let at = |name: &str| words.iter().find(|(_, w)| w == name).map(|(i, _)| *i);
        at("Type")?;
        Some(Columns {
            name: at("Name")?,
            tx: at("fastpath_tx_access")?,
            rx: at("fastpath_rx_access")?,
            // "Comments" in most tables, "comment" in some.
            comments: words
                .iter()
                .find(|(_, w)| {
                    w.eq_ignore_ascii_case("comments") || w.eq_ignore_ascii_case("comment")
                })
                .map(|(i, _)| *i),
        })
    }
}

/// The member a row names: its Name without an array's `[N]` or a
/// bitfield's `:N;` (`netmem_tx:2;` in 7.3's net_device.rst), and inside
/// the embedded struct its Type names as `struct MEMBER_TYPE`
/// (`struct icsk_ack_u8  pending` is `icsk_ack.pending`, a member of the
/// anonymous struct `icsk_ack`).
fn member_path(ty: &str, name: &str) -> String {
    let name = name.split('[').next().unwrap_or("");
    let name = name.trim_end_matches(';');
    let name = name.split(':').next().unwrap_or("");
    // 6.12 writes `struct_icsk_ack_u8`, 7.3 `struct icsk_ack_u8`.
    let embedded = ty
        .strip_prefix("struct ")
        .or_else(|| ty.strip_prefix("struct_"))
        .map(|t| t.split(':').next().unwrap_or(t))
        .and_then(|t| {
            SCALARS.iter().find_map(|scalar| {
                t.strip_suffix(scalar)?
                    .strip_suffix('_')
                    .filter(|outer| !outer.is_empty())
            })
        });
    match embedded {
        Some(outer) => format!("{outer}.{name}"),
        None => name.to_owned(),
    }
}

/// Words a member cannot be named.
const C_KEYWORDS: &[&str] = &[
    "struct", "union", "enum", "const", "volatile", "unsigned", "signed", "void",
];

/// The scalar types a row's Type ends with after the embedding member
/// (`struct icsk_mtup_int`, `struct icsk_ack_u16`, 6.12's
/// `struct_icsk_ack_unsigned_long`), the longer first.
const SCALARS: &[&str] = &[
    "unsigned_long",
    "unsigned_int",
    "unsigned_short",
    "unsigned_char",
    "long_long",
    "u8",
    "u16",
    "u32",
    "u64",
    "s8",
    "s16",
    "s32",
    "s64",
    "int",
    "bool",
    "long",
    "char",
];

fn is_border(line: &str) -> bool {
    line.contains('=') && line.chars().all(|c| c == '=' || c.is_whitespace())
}

/// `tcp_sock struct fast path usage breakdown` → `tcp_sock`.
fn title_name(lines: &[&str]) -> Option<String> {
    lines.iter().find_map(|l| {
        let (name, rest) = l.trim().split_once(' ')?;
        rest.starts_with("struct fast path")
            .then(|| name.to_owned())
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Cell {
    None,
    Read,
    Write,
}

/// The access in a cell; only its first word counts, so a comment that
/// runs into the column (or a header without a Comments column) is harmless.
fn access(cell: &str) -> std::result::Result<Cell, String> {
    match cell.split_whitespace().next().unwrap_or("") {
        "" | "-" => Ok(Cell::None),
        "read_mostly" => Ok(Cell::Read),
        "read_write" | "write_mostly" => Ok(Cell::Write),
        other => Err(other.to_owned()),
    }
}

fn bad_access(value: &str) -> String {
    format!("unknown access '{value}'; use read_mostly, read_write, write_mostly, - or nothing")
}

/// The contexts of the two access columns.
pub(crate) const TX: &str = "tx";
/// See [`TX`].
pub(crate) const RX: &str = "rx";

/// The contexts of a row; `None` for a row with no access.
fn combine(tx: Cell, rx: Cell) -> Option<Access> {
    let mut access = Access::default();
    for (cell, context) in [(tx, TX), (rx, RX)] {
        match cell {
            Cell::None => {}
            Cell::Read => access.reads.push(context.to_owned()),
            Cell::Write => access.writes.push(context.to_owned()),
        }
    }
    (!access.reads.is_empty() || !access.writes.is_empty()).then_some(access)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(name: &str, text: &str) -> Result<Rules> {
        parse(&Arc::from(Path::new(name)), text)
    }

    /// Each row's member, contexts and line.
    fn classes(rules: &Rules) -> Vec<(String, &'static str, usize)> {
        rules.types[0]
            .fields
            .iter()
            .map(|f| {
                let access = f.access.as_ref().expect("a context rule").describe();
                let words: &'static str = Box::leak(access.into_boxed_str());
                (f.path.clone(), words, f.at.line)
            })
            .collect()
    }

    const PLAIN: &str = "\
=========================================
demo_sock struct fast path usage breakdown
=========================================

Type                          Name                    fastpath_tx_access  fastpath_rx_access  Comments
..struct                      ..demo_sock
u16                           header_len              read_mostly         read_mostly         tx(tx);rx(rx)
u64                           bytes_received          -                   read_write          rcv(rx)
void *                        clean_acked                                 read_mostly         tcp_ack
u32[3]                        chrono_stat             write_mostly        -
struct_list_head              tsq_node                -                   -
";

    #[test]
    fn the_plain_table_form_is_read() {
        let rules = parse_str("x.rst", PLAIN).unwrap();
        assert_eq!(rules.types[0].name, "demo_sock");
        assert_eq!(
            classes(&rules),
            [
                ("header_len".into(), "tx: read, rx: read", 7),
                ("bytes_received".into(), "rx: write", 8),
                ("clean_acked".into(), "rx: read", 9),
                ("chrono_stat".into(), "tx: write", 10),
            ]
        );
    }

    #[test]
    fn the_bordered_table_form_is_read() {
        let text = "\
===================================
demo_dev struct fast path usage breakdown
===================================

=========== =========== =================== =================== ==================
Type        Name        fastpath_tx_access  fastpath_rx_access  Comments
=========== =========== =================== =================== ==================
unsigned    flags       read_mostly         read_mostly         xmit, rcv (both)
char        name[16]
atomic_t    drops                           read_write
=========== =========== =================== =================== ==================
";
        let rules = parse_str("Documentation/x/other.rst", text).unwrap();
        assert_eq!(rules.types[0].name, "demo_dev");
        assert_eq!(
            classes(&rules),
            [
                ("flags".into(), "tx: read, rx: read", 8),
                ("drops".into(), "rx: write", 10),
            ]
        );
    }

    #[test]
    fn a_lowercase_comment_column_and_comments_in_the_way_are_harmless() {
        // As in the kernel's inet_sock.rst: "comment", and the title names
        // another struct than the ..struct row (the row wins).
        let text = "\
inet_connection_sock struct fast path usage breakdown

Type                    Name                  fastpath_tx_access  fastpath_rx_access  comment
..struct                ..inet_sock
struct ipv6_fl_socklist* ipv6_fl_list         read_mostly                             tcp_v6_connect
be16                    inet_sport            read_mostly         -                   __tcp_transmit_skb
";
        let rules = parse_str("inet_sock.rst", text).unwrap();
        assert_eq!(rules.types[0].name, "inet_sock");
        assert_eq!(
            classes(&rules),
            [
                ("ipv6_fl_list".into(), "tx: read", 5),
                ("inet_sport".into(), "tx: read", 6),
            ]
        );
    }

    #[test]
    fn a_name_that_runs_into_the_next_column_is_still_one_name() {
        // 6.12's net_device.rst, line 167, and a row whose access words
        // are pushed right by a long name (read by the column they start
        // nearest to).
        let text = "\
Type                                Name                    fastpath_tx_access  fastpath_rx_access  Comments
..struct                            ..net_device
unsigned_long:1                     see_all_hwtstamp_requests
unsigned_long:1                     change_proto_down       read_mostly         -
u8                                  an_even_longer_member_name_here read_mostly -                   xmit
u8                                  rx_only                 -                   read_write          rcv
";
        let rules = parse_str("net_device.rst", text).unwrap();
        assert_eq!(
            classes(&rules),
            [
                ("change_proto_down".into(), "tx: read", 4),
                ("an_even_longer_member_name_here".into(), "tx: read", 5),
                ("rx_only".into(), "rx: write", 6),
            ]
        );
    }

    #[test]
    fn rows_of_7_3_name_bitfields_and_members_of_embedded_structs() {
        // Rows copied from 7.3's net_device.rst (line 13) and
        // inet_connection_sock.rst (lines 36-46, and 6.12's spelling of
        // line 37), and 7.3 net_device.rst's line 136; their members, by the
        // headers: `unsigned long netmem_tx:2;` in struct net_device, and
        // `struct { __u8 pending; ... } icsk_ack;` / `struct { int
        // search_high; ... u32 probe_size:31; ... } icsk_mtup;` in struct
        // inet_connection_sock.
        let text = "\
Type                                Name                   fastpath_tx_access  fastpath_rx_access  Comments
..struct                            ..inet_connection_sock
unsigned_long:2                     netmem_tx:2;           read_mostly
struct icsk_ack_u8                  pending                read_write          read_write          inet_csk_ack_scheduled
struct icsk_ack_u16                 rcv_mss                write_mostly        read_mostly         __tcp_select_window
struct icsk_mtup_int                search_high            read_write                              tcp_mtup_init
struct icsk_mtup_u32:31             probe_size             read_write                              tcp_mtup_init
struct_icsk_ack_u8                  quick                  read_write
struct_icsk_ack_unsigned_long       timeout                read_write
struct sock_common                  skc                    read_mostly
void*priv_destructor                struct net_device
";
        let rules = parse_str("inet_connection_sock.rst", text).unwrap();
        let paths: Vec<String> = classes(&rules).into_iter().map(|c| c.0).collect();
        assert_eq!(
            paths,
            [
                "netmem_tx",
                "icsk_ack.pending",
                "icsk_ack.rcv_mss",
                "icsk_mtup.search_high",
                "icsk_mtup.probe_size",
                "icsk_ack.quick",
                "icsk_ack.timeout",
                "skc",
            ]
        );
        assert!(
            rules.notes[0].contains(":11:37: 'struct' is a C keyword"),
            "{:?}",
            rules.notes
        );
    }

    #[test]
    fn an_enum_table_without_its_enum_row_is_a_note() {
        // 7.3's snmp.rst: the `..enum` row is gone, the title still says enum.
        let text = "\
===========================================
netns_ipv4 enum fast path usage breakdown
===========================================

============== ===================================== =================== =================== ==================================================
Type           Name                                  fastpath_tx_access  fastpath_rx_access  comment
============== ===================================== =================== =================== ==================================================
unsigned_long  LINUX_MIB_TCPKEEPALIVE                write_mostly                            tcp_keepalive_timer
";
        let rules = parse_str("snmp.rst", text).unwrap();
        assert!(rules.types.is_empty());
        assert!(
            rules.notes[0].contains("an enum table (its title says enum)"),
            "{:?}",
            rules.notes
        );
    }

    #[test]
    fn an_enum_table_and_an_index_are_notes() {
        // 6.12's snmp.rst (MIB counters) and index.rst (a toctree).
        let text = "\
netns_ipv4 enum fast path usage breakdown

Type           Name                                  fastpath_tx_access  fastpath_rx_access  comment
..enum
unsigned_long  LINUX_MIB_TCPKEEPALIVE                write_mostly        -                   tcp_keepalive_timer
";
        let rules = parse_str("snmp.rst", text).unwrap();
        assert!(rules.types.is_empty());
        assert!(
            rules.notes[0].contains("an enum table"),
            "{:?}",
            rules.notes
        );
        let index = parse_str(
            "index.rst",
            ".. toctree::\n   :maxdepth: 1\n\n   tcp_sock\n",
        )
        .unwrap();
        assert!(index.types.is_empty());
        assert!(
            index.notes[0].contains("an index of tables"),
            "{:?}",
            index.notes
        );
    }

    #[test]
    fn the_struct_name_falls_back_to_the_file_name() {
        let text = "Type  Name  fastpath_tx_access  fastpath_rx_access\nint   a     read_mostly\n";
        let rules = parse_str("dir/net_device.rst", text).unwrap();
        assert_eq!(rules.types[0].name, "net_device");
    }

    #[test]
    fn mistakes_are_located() {
        let text = "Type  Name  fastpath_tx_access  fastpath_rx_access\nint   a     read_mostyl\n";
        let err = parse_str("t.rst", text).unwrap_err().to_string();
        assert!(
            err.starts_with("t.rst:2:13: unknown access 'read_mostyl'"),
            "{err}"
        );
        let err = parse_str("t.rst", "no table\n").unwrap_err().to_string();
        assert!(
            err.starts_with("t.rst:1:1: no net_cachelines table here"),
            "{err}"
        );
        let text = "Type  Name  fastpath_tx_access  fastpath_rx_access\nint   a-b   read_mostly\n";
        let err = parse_str("t.rst", text).unwrap_err().to_string();
        assert!(
            err.starts_with("t.rst:2:7: 'a-b' is not a member name"),
            "{err}"
        );
    }
}
