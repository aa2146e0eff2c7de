//! The kernel's own access tables,
//! `Documentation/networking/net_cachelines/*.rst`: one row per member with
//! columns `Type`, `Name`, `fastpath_tx_access`, `fastpath_rx_access` and
//! `Comments`. Both shapes the kernel has used are read: the plain
//! whitespace-aligned table, and the RST "simple table" with `====` border
//! rows. Columns are found from the header row's word positions, which is
//! how RST itself aligns them.
//!
//! `read_mostly` in either direction makes a field hot-read; `read_write` or
//! `write_mostly` in either direction makes it lockless-write (the tables do
//! not say which lock, if any, a writer holds). Rows with no access are
//! documentation only.

use std::path::Path;
use std::sync::Arc;

use super::{Class, FieldRule, Location, Rules, Source, TypeRules, valid_member_path};
use crate::error::Result;

/// Parses the text of a net_cachelines table read from `file`.
pub fn parse(file: &Arc<Path>, text: &str) -> Result<Rules> {
    let lines: Vec<&str> = text.lines().collect();
    let located = |line: usize, column: usize| Location {
        file: file.clone(),
        line: line + 1,
        column: column + 1,
    };
    let (header_line, columns) = lines
        .iter()
        .enumerate()
        .find_map(|(i, l)| Columns::from_header(l).map(|c| (i, c)))
        .ok_or_else(|| {
            located(0, 0).error(
                "no net_cachelines table here: expected a header row with the columns \
                 Type, Name, fastpath_tx_access and fastpath_rx_access",
            )
        })?;
    let mut name = title_name(&lines[..header_line]);
    let mut fields = Vec::new();
    for (i, line) in lines.iter().enumerate().skip(header_line + 1) {
        if line.trim().is_empty() || is_border(line) {
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        let cell = |from: usize, to: Option<usize>| -> String {
            let end = to.unwrap_or(chars.len()).min(chars.len());
            chars
                .get(from..end)
                .map_or(String::new(), |c| c.iter().collect::<String>())
        };
        let member = cell(columns.name, Some(columns.tx));
        let member = member.split_whitespace().next().unwrap_or("");
        if cell(columns.ty, Some(columns.name)).trim() == "..struct" {
            // `..struct  ..tcp_sock`: the struct the table describes.
            name = Some(member.trim_start_matches('.').to_owned());
            continue;
        }
        let tx = access(&cell(columns.tx, Some(columns.rx)))
            .map_err(|v| located(i, columns.tx).error(bad_access(&v)))?;
        let rx = access(&cell(columns.rx, columns.comments))
            .map_err(|v| located(i, columns.rx).error(bad_access(&v)))?;
        let Some(class) = combine(tx, rx) else {
            continue;
        };
        let path = member.split('[').next().unwrap_or("");
        if !valid_member_path(path) {
            return Err(located(i, columns.name).error(format!("'{member}' is not a member name")));
        }
        fields.push(FieldRule {
            path: path.to_owned(),
            class,
            lock: None,
            at: located(i, columns.name),
            source: Source::NetCachelines,
        });
    }
    let name = name
        .or_else(|| Some(file.file_stem()?.to_str()?.to_owned()))
        .filter(|n| valid_member_path(n) && !n.contains('.'))
        .ok_or_else(|| located(0, 0).error("cannot tell which struct this table describes"))?;
    Ok(Rules {
        types: vec![TypeRules {
            name,
            at: located(header_line, 0),
            fields,
        }],
        ..Rules::default()
    })
}

/// Character columns where each cell starts.
struct Columns {
    ty: usize,
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
        Some(Columns {
            ty: at("Type")?,
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
enum Access {
    None,
    Read,
    Write,
}

/// The access in a cell; only its first word counts, so a comment that
/// runs into the column (or a header without a Comments column) is harmless.
fn access(cell: &str) -> std::result::Result<Access, String> {
    match cell.split_whitespace().next().unwrap_or("") {
        "" | "-" => Ok(Access::None),
        "read_mostly" => Ok(Access::Read),
        "read_write" | "write_mostly" => Ok(Access::Write),
        other => Err(other.to_owned()),
    }
}

fn bad_access(value: &str) -> String {
    format!("unknown access '{value}'; use read_mostly, read_write, write_mostly, - or nothing")
}

fn combine(tx: Access, rx: Access) -> Option<Class> {
    if tx == Access::Write || rx == Access::Write {
        Some(Class::LocklessWrite)
    } else if tx == Access::Read || rx == Access::Read {
        Some(Class::HotRead)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(name: &str, text: &str) -> Result<Rules> {
        parse(&Arc::from(Path::new(name)), text)
    }

    fn classes(rules: &Rules) -> Vec<(String, Class, usize)> {
        rules.types[0]
            .fields
            .iter()
            .map(|f| (f.path.clone(), f.class, f.at.line))
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
                ("header_len".into(), Class::HotRead, 7),
                ("bytes_received".into(), Class::LocklessWrite, 8),
                ("clean_acked".into(), Class::HotRead, 9),
                ("chrono_stat".into(), Class::LocklessWrite, 10),
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
                ("flags".into(), Class::HotRead, 8),
                ("drops".into(), Class::LocklessWrite, 10),
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
                ("ipv6_fl_list".into(), Class::HotRead, 5),
                ("inet_sport".into(), Class::HotRead, 6),
            ]
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
