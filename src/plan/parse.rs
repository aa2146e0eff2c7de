//! The TOML plan file, read with `toml`'s spanned parser so that every
//! mistake is reported at its line and column.
//!
//! ```toml
//! [lru_gen_folio]
//! order = [
//!   "max_seq", "min_seq", "timestamps", "enabled", "gen", "seg", "list",
//!   "folios", "nr_pages", "avg_refaulted", "avg_total", "protected",
//!   { group = "lrugen_stats", aligned = true, members = ["evicted", "refaulted"] },
//! ]
//!
//! [lruvec]
//! moves = [
//!   { member = "cost_lock", after = "lru_lock" },
//!   { add = "batch", type = "struct lru_batch *", before = "lists" },
//! ]
//! ```

use std::path::Path;
use std::sync::Arc;

use toml::Spanned;
use toml::de::{DeArray, DeTable, DeValue};

use super::{Item, Move, NewType, Shape, TypePlan};
use crate::error::Result;
use crate::rules::Location;
use crate::rules::toml::{cacheline_size, unsigned};

type Value<'i> = Spanned<DeValue<'i>>;

/// A key and its value in a table.
type Entry<'v, 'i> = (&'v Spanned<toml::de::DeString<'i>>, &'v Value<'i>);

/// Largest alignment a plan may ask for (the kernel's largest page).
const MAX_ALIGN: u64 = 1 << 16;

/// Deepest nesting of groups: deeper is a mistake, not a layout.
const MAX_GROUP_DEPTH: usize = 8;

/// Parses a plan's text, read from `file`.
pub(super) fn parse(file: &Arc<Path>, text: &str) -> Result<(Vec<TypePlan>, Option<u64>)> {
    let doc = DeTable::parse(text).map_err(|e| {
        let at = Location::at(file, text, e.span().map_or(0, |s| s.start));
        at.plan_error(format!("invalid TOML: {}", e.message().trim()))
    })?;
    let p = Parser { file, text };
    let mut types: Vec<TypePlan> = Vec::new();
    let mut smp_cache_bytes = None;
    for (key, value) in doc.get_ref() {
        let name: &str = key.get_ref();
        let at = p.at(key);
        if name == "smp_cache_bytes" {
            smp_cache_bytes = Some(cacheline_size(value.get_ref()).ok_or_else(|| {
                p.at(value).plan_error(
                    "'smp_cache_bytes' must be a power of two between 16 and 4096 (bytes)",
                )
            })?);
            continue;
        }
        let DeValue::Table(table) = value.get_ref() else {
            return Err(at.plan_error(format!(
                "'{name}' is not a struct's plan: write each struct as a table, [{name}], \
                 with order = [...] or moves = [...] (the one other setting is smp_cache_bytes)"
            )));
        };
        let name = name.strip_prefix("struct ").unwrap_or(name);
        // `["OUTER.MEMBER"]`: the anonymous struct or union inside OUTER
        // that holds MEMBER (deeper with more names).
        if !name.split('.').all(is_identifier) {
            return Err(at.plan_error(format!(
                "'{name}' is not a struct name (nor OUTER.MEMBER, the anonymous struct or \
                 union of OUTER holding MEMBER)"
            )));
        }
        if types.iter().any(|t| t.name == name) {
            return Err(at.plan_error(format!("[{name}] is planned twice")));
        }
        types.push(p.type_plan(name, at, table)?);
    }
    if types.is_empty() {
        let at = Location::at(file, text, 0);
        return Err(at.plan_error(
            "the plan plans no struct: write [TYPE] with order = [...] or moves = [...]",
        ));
    }
    Ok((types, smp_cache_bytes))
}

/// A C identifier.
pub(crate) fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

struct Parser<'a> {
    file: &'a Arc<Path>,
    text: &'a str,
}

impl Parser<'_> {
    fn at<T>(&self, spanned: &Spanned<T>) -> Location {
        Location::at(self.file, self.text, spanned.span().start)
    }

    fn type_plan(&self, name: &str, at: Location, table: &DeTable<'_>) -> Result<TypePlan> {
        let mut shape = None;
        let mut remove = Vec::new();
        let mut optional: Vec<(String, Location)> = Vec::new();
        let mut packed = None;
        let mut align = None;
        for (key, value) in table {
            match &**key.get_ref() {
                "order" | "moves" if shape.is_some() => {
                    return Err(self.at(key).plan_error(format!(
                        "[{name}] has both 'order' and 'moves': give the whole order, or moves"
                    )));
                }
                "order" => {
                    shape = Some(Shape::Order(self.items(self.array(value, "'order'")?, 0)?))
                }
                "moves" => shape = Some(Shape::Moves(self.moves(value)?)),
                "remove" => {
                    for item in self.array(value, "'remove'")? {
                        remove.push((self.name(item, "a removed member")?, self.at(item)));
                    }
                }
                "optional" => {
                    for item in self.array(value, "'optional'")? {
                        let member = self.name(item, "an optional member")?;
                        if optional.iter().any(|(o, _)| *o == member) {
                            return Err(self
                                .at(item)
                                .plan_error(format!("'{member}' is optional twice")));
                        }
                        optional.push((member, self.at(item)));
                    }
                }
                "packed" => match value.get_ref() {
                    DeValue::Boolean(b) => packed = Some(*b),
                    _ => return Err(self.at(value).plan_error("'packed' must be true or false")),
                },
                "align" => align = Some(self.alignment(value)?),
                other if matches!(value.get_ref(), DeValue::Table(_)) => {
                    return Err(self.at(key).plan_error(format!(
                        "a table '{other}' inside [{name}]: the plan of the anonymous struct \
                         or union of {name} holding '{other}' is [\"{name}.{other}\"], quoted"
                    )));
                }
                other => {
                    return Err(self.at(key).plan_error(format!(
                        "unknown key '{other}' in [{name}]; a struct's plan takes order, moves, \
                         remove, optional, packed and align"
                    )));
                }
            }
        }
        let shape = shape.ok_or_else(|| {
            at.plan_error(format!(
                "[{name}] says no new layout: give order = [...] (every member) or moves = [...]"
            ))
        })?;
        Ok(TypePlan {
            name: name.to_owned(),
            at,
            shape,
            remove,
            optional,
            packed,
            align,
        })
    }

    fn array<'v, 'i>(&self, value: &'v Value<'i>, what: &str) -> Result<&'v DeArray<'i>> {
        match value.get_ref() {
            DeValue::Array(a) => Ok(a),
            other => Err(self
                .at(value)
                .plan_error(format!("{what} must be an array, not {}", other.type_str()))),
        }
    }

    fn name(&self, value: &Value<'_>, what: &str) -> Result<String> {
        match value.get_ref() {
            DeValue::String(s) if is_identifier(s) => Ok(s.to_string()),
            DeValue::String(s) => Err(self
                .at(value)
                .plan_error(format!("'{s}' is not a member name"))),
            other => Err(self
                .at(value)
                .plan_error(format!("{what} must be a string, not {}", other.type_str()))),
        }
    }

    fn alignment(&self, value: &Value<'_>) -> Result<u64> {
        match unsigned(value.get_ref()) {
            Some(n) if n.is_power_of_two() && n <= MAX_ALIGN => Ok(n),
            _ => Err(self.at(value).plan_error(format!(
                "an alignment must be a power of two from 1 to {MAX_ALIGN} (bytes)"
            ))),
        }
    }

    fn size(&self, value: &Value<'_>) -> Result<u64> {
        unsigned(value.get_ref())
            .filter(|&n| n <= 1 << 32)
            .ok_or_else(|| {
                self.at(value)
                    .plan_error("'size' must be a byte count from 0 to 2^32")
            })
    }

    fn items(&self, array: &DeArray<'_>, depth: usize) -> Result<Vec<Item>> {
        array.iter().map(|v| self.item(v, depth)).collect()
    }

    fn item(&self, value: &Value<'_>, depth: usize) -> Result<Item> {
        let at = self.at(value);
        let table = match value.get_ref() {
            DeValue::String(_) => {
                return Ok(Item::Member {
                    name: self.name(value, "a member")?,
                    align: None,
                    at,
                });
            }
            DeValue::Table(t) => t,
            other => {
                return Err(at.plan_error(format!(
                    "an entry of the order must be a member name or a table \
                     ({{ member = ... }}, {{ group = ... }}, {{ add = ... }}), not {}",
                    other.type_str()
                )));
            }
        };
        let (item, rest) = self.item_table(table, &at, depth)?;
        if let Some((key, _)) = rest.first() {
            return Err(self.at(key).plan_error(format!(
                "unknown key '{}' here; {}",
                key.get_ref(),
                keys_of(&item)
            )));
        }
        Ok(item)
    }

    /// Reads an item's table; returns it with the keys it did not take
    /// (a move's `after`/`before`).
    fn item_table<'v, 'i>(
        &self,
        table: &'v DeTable<'i>,
        at: &Location,
        depth: usize,
    ) -> Result<(Item, Vec<Entry<'v, 'i>>)> {
        let get = |k: &str| table.iter().find(|(key, _)| &**key.get_ref() == k);
        let kinds: Vec<&str> = ["member", "group", "add"]
            .into_iter()
            .filter(|k| get(k).is_some())
            .collect();
        let kind = match kinds.as_slice() {
            [one] => *one,
            [] => {
                return Err(at.plan_error(
                    "this entry names nothing: write { member = \"NAME\", align = N }, \
                     { group = \"G\", members = [...] } or { add = \"NAME\", type = \"C TYPE\" }",
                ));
            }
            [a, b, ..] => {
                return Err(at.plan_error(format!(
                    "this entry is both a '{a}' and a '{b}'; write one per entry"
                )));
            }
        };
        let align = get("align").map(|(_, v)| self.alignment(v)).transpose()?;
        let (_, named) = get(kind).unwrap();
        let name = self.name(named, &format!("'{kind}'"))?;
        let mut used = vec![kind, "align"];
        let item = match kind {
            "member" => Item::Member {
                name,
                align,
                at: at.clone(),
            },
            "group" => {
                if depth >= MAX_GROUP_DEPTH {
                    return Err(at.plan_error("groups nested too deep"));
                }
                used.extend(["members", "aligned"]);
                let aligned = match get("aligned").map(|(_, v)| (v, v.get_ref())) {
                    None | Some((_, DeValue::Boolean(false))) if align.is_some() => {
                        return Err(at.plan_error(
                            "'align' on a group is the alignment of __cacheline_group_begin_aligned(): \
                             add aligned = true",
                        ));
                    }
                    None | Some((_, DeValue::Boolean(false))) => None,
                    Some((_, DeValue::Boolean(true))) => Some(align),
                    Some((v, _)) => {
                        return Err(self.at(v).plan_error("'aligned' must be true or false"));
                    }
                };
                let (_, members) = get("members").ok_or_else(|| {
                    at.plan_error(format!(
                        "group '{name}' needs members = [...]: the members between its markers"
                    ))
                })?;
                let items = self.items(self.array(members, "'members'")?, depth + 1)?;
                Item::Group {
                    name,
                    aligned,
                    items,
                    at: at.clone(),
                }
            }
            _ => {
                used.extend(["type", "size"]);
                let ty = match (get("type"), get("size")) {
                    (Some((_, t)), None) => match t.get_ref() {
                        DeValue::String(s) if !s.trim().is_empty() => {
                            NewType::C(s.trim().to_owned())
                        }
                        _ => {
                            return Err(self
                                .at(t)
                                .plan_error("'type' must be a C type, like \"struct foo *\""));
                        }
                    },
                    (None, Some((_, s))) => NewType::Raw {
                        size: self.size(s)?,
                        align: align.unwrap_or(1),
                    },
                    (Some(_), Some(_)) => {
                        return Err(at.plan_error(format!(
                            "added member '{name}' has both a 'type' and a 'size'; give one"
                        )));
                    }
                    (None, None) => {
                        return Err(at.plan_error(format!(
                            "added member '{name}' needs type = \"C TYPE\" or size = BYTES \
                             (with align = N)"
                        )));
                    }
                };
                let align = match ty {
                    NewType::Raw { .. } => None,
                    NewType::C(_) => align,
                };
                Item::Add {
                    name,
                    ty,
                    align,
                    at: at.clone(),
                }
            }
        };
        let rest = table
            .iter()
            .filter(|(k, _)| !used.contains(&&**k.get_ref()))
            .collect();
        Ok((item, rest))
    }

    fn moves(&self, value: &Value<'_>) -> Result<Vec<Move>> {
        let mut out = Vec::new();
        for entry in self.array(value, "'moves'")? {
            let at = self.at(entry);
            let DeValue::Table(table) = entry.get_ref() else {
                return Err(at.plan_error(
                    "a move is a table: { member = \"NAME\", after = \"OTHER\" } (or before)",
                ));
            };
            let (item, rest) = self.item_table(table, &at, 0)?;
            if matches!(item, Item::Group { .. }) {
                return Err(at.plan_error(
                    "a group cannot be moved relative to a member; use order = [...]",
                ));
            }
            let mut place = None;
            for (key, v) in rest {
                let after = match &**key.get_ref() {
                    "after" => true,
                    "before" => false,
                    other => {
                        return Err(self.at(key).plan_error(format!(
                            "unknown key '{other}' in a move; {}, and after or before",
                            keys_of(&item)
                        )));
                    }
                };
                if place.is_some() {
                    return Err(self
                        .at(key)
                        .plan_error("a move has both 'after' and 'before'; give one"));
                }
                place = Some((after, self.name(v, "the anchor")?, self.at(v)));
            }
            let (after, anchor, anchor_at) = place.ok_or_else(|| {
                at.plan_error("a move says where: add after = \"MEMBER\" or before = \"MEMBER\"")
            })?;
            out.push(Move {
                item,
                after,
                anchor,
                anchor_at,
            });
        }
        Ok(out)
    }
}

fn keys_of(item: &Item) -> &'static str {
    match item {
        Item::Member { .. } => "a member takes 'member' and 'align'",
        Item::Group { .. } => "a group takes 'group', 'members', 'aligned' and 'align'",
        Item::Add { .. } => "an added member takes 'add', 'type' or 'size', and 'align'",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(text: &str) -> Result<Vec<TypePlan>> {
        parse(&Arc::from(Path::new("p.toml")), text).map(|(types, _)| types)
    }

    fn error(text: &str) -> String {
        plan(text).unwrap_err().to_string()
    }

    #[test]
    fn the_issue_example_parses() {
        let types = plan(
            r#"
[lru_gen_folio]
order = [
  "max_seq", "min_seq",
  { member = "list", align = 16 },
  { group = "lrugen_stats", aligned = true, members = ["evicted", "refaulted"] },
  { add = "batch", type = "struct lru_batch *" },
  { add = "raw", size = 12, align = 4 },
]
"#,
        )
        .unwrap();
        let [t] = types.as_slice() else { panic!() };
        assert_eq!(t.name, "lru_gen_folio");
        let Shape::Order(items) = &t.shape else {
            panic!()
        };
        assert_eq!(items.len(), 6);
        assert!(matches!(&items[2], Item::Member { name, align: Some(16), .. } if name == "list"));
        assert!(matches!(&items[3],
            Item::Group { name, aligned: Some(None), items, .. } if name == "lrugen_stats" && items.len() == 2));
        assert!(
            matches!(&items[4], Item::Add { ty: NewType::C(t), .. } if t == "struct lru_batch *")
        );
        assert!(matches!(
            &items[5],
            Item::Add {
                ty: NewType::Raw { size: 12, align: 4 },
                ..
            }
        ));
    }

    #[test]
    fn smp_cache_bytes_is_the_one_setting() {
        let (_, line) = parse(
            &Arc::from(Path::new("p.toml")),
            "smp_cache_bytes = 128\n[a]\norder = []\n",
        )
        .unwrap();
        assert_eq!(line, Some(128));
        assert!(
            error("smp_cache_bytes = 100\n[a]\norder = []\n")
                .starts_with("p.toml:1:19: 'smp_cache_bytes' must be")
        );
    }

    #[test]
    fn moves_parse() {
        let types = plan(
            "[lruvec]\nmoves = [{ member = \"cost_lock\", after = \"lru_lock\" }, \
             { add = \"b\", type = \"u64\", before = \"lists\" }]\nremove = [\"x\"]\n",
        )
        .unwrap();
        let Shape::Moves(moves) = &types[0].shape else {
            panic!()
        };
        assert!(moves[0].after && moves[0].anchor == "lru_lock");
        assert!(!moves[1].after && moves[1].anchor == "lists");
        assert_eq!(types[0].remove[0].0, "x");
    }

    #[test]
    fn mistakes_are_located() {
        assert_eq!(
            error("[a]\norder = [\"x\", 3]\n"),
            "p.toml:2:15: an entry of the order must be a member name or a table \
             ({ member = ... }, { group = ... }, { add = ... }), not integer"
        );
        assert!(
            error("[a]\norder = [{ member = \"x\", align = 3 }]\n")
                .starts_with("p.toml:2:34: an alignment")
        );
        assert!(error("[a]\norder = [{ group = \"g\" }]\n").contains("needs members"));
        assert!(
            error("[a]\norder = [{ group = \"g\", members = [], colour = 1 }]\n")
                .starts_with("p.toml:2:39: unknown key 'colour'")
        );
        assert!(error("[a]\nmoves = [{ member = \"x\" }]\n").contains("says where"));
        assert!(
            error("[a]\nmoves = [{ member = \"x\", after = \"y\", before = \"z\" }]\n")
                .contains("both 'after' and 'before'")
        );
        assert!(error("[a]\norder = []\nmoves = []\n").contains("both 'order' and 'moves'"));
        assert!(error("[a]\nremove = []\n").starts_with("p.toml:1:2: [a] says no new layout"));
        assert!(error("a = 1\n").contains("not a struct's plan"));
        assert!(error("# nothing\n").contains("plans no struct"));
        assert!(error("[a]\norder = [\"x y\"]\n").contains("'x y' is not a member name"));
        assert!(
            error("[a]\norder = [{ member = \"x\", add = \"y\" }]\n")
                .contains("both a 'member' and a 'add'")
        );
        assert!(error("[a]\norder = [{ add = \"y\" }]\n").contains("needs type"));
        assert!(
            error("[a]\norder = [{ group = \"g\", align = 8, members = [] }]\n")
                .contains("add aligned = true")
        );
        assert!(error("[a]\norder = [\n").starts_with("p.toml:"));
        assert!(error("[a]\norder = [\"x\"]\n[a]\n").starts_with("p.toml:"));
    }

    #[test]
    fn nesting_is_bounded() {
        let mut text = String::from("[a]\norder = [");
        for _ in 0..20 {
            text.push_str("{ group = \"g\", members = [");
        }
        text.push_str(&"] }".repeat(20));
        text.push_str("]\n");
        assert!(error(&text).contains("nested too deep"));
    }
}
