//! The TOML rules file (its format is in the README and docs/rules.md), read with `toml`'s spanned
//! document parser so that every mistake is reported at its line and column.
//!
//! ```toml
//! cacheline = 64                 # optional
//! roots = ["mem_cgroup_per_node"] # optional, for this file's types; default: discovered
//!
//! [lru_gen_folio]
//! enabled   = "hot-read"
//! refaulted = "lockless-write"
//! nr_pages  = { class = "lock-protected", lock = "lruvec.lru_lock" }
//!
//! [[allow]]
//! fields = ["lruvec.lru_lock", "lruvec.cost_lock"]
//! reason = "..."
//!
//! [severity]
//! write-vs-write = "warning"     # or "error", "note", "off"
//!
//! [contexts]                     # paths of execution, and who writes in them
//! refault = "lockless"           # many CPUs at once
//! reclaim = "serialized"         # one CPU at a time (an owner, or a lock holder)
//!
//! [lruvec]
//! "lrugen.refaulted" = { read = ["reclaim"], write = ["refault"] }
//! ```

use std::path::Path;
use std::sync::Arc;

use toml::Spanned;
use toml::de::{DeString, DeTable, DeValue};

use super::{
    Access, Allow, Class, Context, FieldRef, FieldRule, Heat, Kind, Location, LockRef, Placement,
    Rules, Severity, Source, Start, TypeRules, Writers, valid_member_path,
};
use crate::error::Result;

/// Parses the text of a TOML rules file read from `file`.
pub fn parse(file: &Arc<Path>, text: &str) -> Result<Rules> {
    let doc = DeTable::parse(text).map_err(|e| {
        let at = Location::at(file, text, e.span().map_or(0, |s| s.start));
        at.error(format!("invalid TOML: {}", e.message().trim()))
    })?;
    let p = Parser { file, text };
    let mut rules = Rules::default();
    for (key, value) in doc.get_ref() {
        let name: &str = key.get_ref();
        match name {
            "cacheline" => rules.cacheline = Some(p.cacheline(value)?),
            "roots" => rules.roots = p.roots(value)?,
            "allow" => rules.allow = p.allows(value)?,
            "severity" => p.severities(value, &mut rules)?,
            "contexts" => rules.contexts = p.contexts(value)?,
            "placement" => rules.placement = p.placement(value)?,
            "heat" => rules.heat = p.heat(value)?,
            "absent-members" => {
                rules.absent_members_note = match p.string(value, "'absent-members'")? {
                    "note" => true,
                    "error" => false,
                    other => {
                        return Err(p.at(value).error(format!(
                            "'absent-members' is \"note\" or \"error\", not \"{other}\""
                        )));
                    }
                }
            }
            "adjacent-lines" => match value.get_ref() {
                DeValue::Boolean(on) => rules.adjacent_lines = *on,
                other => {
                    return Err(p.at(value).error(format!(
                        "'adjacent-lines' must be true or false, not {}",
                        other.type_str()
                    )));
                }
            },
            _ => rules.types.push(p.type_rules(key, value)?),
        }
    }
    Ok(rules)
}

type Key<'i> = Spanned<DeString<'i>>;
type Value<'i> = Spanned<DeValue<'i>>;

/// A TOML value as an unsigned integer: `None` for anything else, or a
/// negative one. (Shared with the plan file's parser.)
pub(crate) fn unsigned(value: &DeValue<'_>) -> Option<u64> {
    match value {
        DeValue::Integer(i) => u64::from_str_radix(i.as_str(), i.radix()).ok(),
        _ => None,
    }
}

/// A TOML value as a cacheline size: a power of two from 16 to 4096.
pub(crate) fn cacheline_size(value: &DeValue<'_>) -> Option<u64> {
    unsigned(value).filter(|&l| crate::lines::is_cacheline_size(l))
}

struct Parser<'a> {
    file: &'a Arc<Path>,
    text: &'a str,
}

impl Parser<'_> {
    fn at<T>(&self, spanned: &Spanned<T>) -> Location {
        Location::at(self.file, self.text, spanned.span().start)
    }

    fn cacheline(&self, value: &Value<'_>) -> Result<u64> {
        match cacheline_size(value.get_ref()) {
            Some(l) => Ok(l),
            _ => Err(self
                .at(value)
                .error("'cacheline' must be a power of two between 16 and 4096 (bytes)")),
        }
    }

    fn string<'v>(&self, value: &'v Value<'_>, what: &str) -> Result<&'v str> {
        match value.get_ref() {
            DeValue::String(s) => Ok(s),
            other => Err(self
                .at(value)
                .error(format!("{what} must be a string, not {}", other.type_str()))),
        }
    }

    fn table<'v, 'i>(&self, value: &'v Value<'i>, what: &str) -> Result<&'v DeTable<'i>> {
        match value.get_ref() {
            DeValue::Table(t) => Ok(t),
            other => Err(self
                .at(value)
                .error(format!("{what} must be a table, not {}", other.type_str()))),
        }
    }

    fn roots(&self, value: &Value<'_>) -> Result<Vec<(String, Location)>> {
        let DeValue::Array(items) = value.get_ref() else {
            return Err(self
                .at(value)
                .error("'roots' must be an array of struct names"));
        };
        items
            .iter()
            .map(|item| {
                let name = self.string(item, "a root")?;
                if !valid_member_path(name) || name.contains('.') {
                    return Err(self
                        .at(item)
                        .error(format!("'{name}' is not a struct name")));
                }
                Ok((name.to_owned(), self.at(item)))
            })
            .collect()
    }

    fn severities(&self, value: &Value<'_>, rules: &mut Rules) -> Result<()> {
        for (key, level) in self.table(value, "'severity'")? {
            let kind = Kind::parse(key.get_ref()).ok_or_else(|| {
                let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
                self.at(key).error(format!(
                    "unknown finding kind '{}'; the kinds are {}",
                    key.get_ref(),
                    names.join(", ")
                ))
            })?;
            let severity = match self.string(level, "a severity")? {
                "error" => Some(Severity::Error),
                "warning" => Some(Severity::Warning),
                "note" => Some(Severity::Note),
                "off" => None,
                other => {
                    return Err(self.at(level).error(format!(
                        "unknown severity '{other}'; use error, warning, note or off"
                    )));
                }
            };
            rules.severity.set(kind, severity);
        }
        Ok(())
    }

    fn allows(&self, value: &Value<'_>) -> Result<Vec<Allow>> {
        let DeValue::Array(items) = value.get_ref() else {
            return Err(self.at(value).error(
                "'allow' must be an array of tables: write each entry as [[allow]] with 'fields' and 'reason'",
            ));
        };
        items.iter().map(|item| self.allow(item)).collect()
    }

    fn allow(&self, item: &Value<'_>) -> Result<Allow> {
        let entry = self.table(item, "an [[allow]] entry")?;
        let mut fields = None;
        let mut reason = None;
        for (key, value) in entry {
            match &**key.get_ref() {
                "fields" => fields = Some(self.allow_fields(value)?),
                "reason" => {
                    let text = self.string(value, "'reason'")?.trim();
                    if text.is_empty() {
                        return Err(self
                            .at(value)
                            .error("'reason' must say why the pair is accepted"));
                    }
                    reason = Some(text.to_owned());
                }
                other => {
                    return Err(self.at(key).error(format!(
                        "unknown key '{other}' in [[allow]]; it takes 'fields' and 'reason'"
                    )));
                }
            }
        }
        let at = self.at(item);
        let fields = fields
            .ok_or_else(|| at.error("[[allow]] needs fields = [\"TYPE.field\", \"TYPE.field\"]"))?;
        let reason = reason
            .ok_or_else(|| at.error("[[allow]] needs a 'reason': say why the pair is accepted"))?;
        Ok(Allow { fields, reason, at })
    }

    fn allow_fields(&self, value: &Value<'_>) -> Result<[FieldRef; 2]> {
        let bad = || {
            self.at(value)
                .error("'fields' must be two member paths: [\"TYPE.field\", \"TYPE.field\"]")
        };
        let DeValue::Array(items) = value.get_ref() else {
            return Err(bad());
        };
        let refs = items
            .iter()
            .map(|item| self.field_ref(item))
            .collect::<Result<Vec<_>>>()?;
        <[FieldRef; 2]>::try_from(refs).map_err(|_| bad())
    }

    fn field_ref(&self, item: &Value<'_>) -> Result<FieldRef> {
        let text = self.string(item, "a field")?;
        let at = self.at(item);
        match text.split_once('.') {
            Some((ty, path)) if valid_member_path(text) => Ok(FieldRef {
                ty: ty.to_owned(),
                path: path.to_owned(),
                at,
            }),
            _ => Err(at.error(format!(
                "'{text}' is not TYPE.field (a struct name, a dot, a member path)"
            ))),
        }
    }

    fn type_rules(&self, key: &Key<'_>, value: &Value<'_>) -> Result<TypeRules> {
        let name: &str = key.get_ref();
        let DeValue::Table(table) = value.get_ref() else {
            return Err(self.at(key).error(format!(
                "unknown setting '{name}'; the settings are cacheline, roots, adjacent-lines, allow, \
                 severity, contexts, placement, heat and absent-members, \
                 and a struct's rules are a table: [{name}]"
            )));
        };
        let ty_name = name.strip_prefix("struct ").unwrap_or(name);
        if !valid_member_path(ty_name) || ty_name.contains('.') {
            return Err(self.at(key).error(format!("'{name}' is not a struct name")));
        }
        let mut fields = Vec::new();
        self.field_rules(table, "", &mut fields)?;
        if fields.is_empty() {
            return Err(self
                .at(key)
                .error(format!("[{ty_name}] annotates no field")));
        }
        let aliases = match table.get("aliases") {
            Some(value) if matches!(value.get_ref(), DeValue::Array(_)) => {
                self.aliases(ty_name, value)?
            }
            _ => Vec::new(),
        };
        Ok(TypeRules {
            name: ty_name.to_owned(),
            at: self.at(key),
            fields,
            rows: Vec::new(),
            aliases,
        })
    }

    /// `aliases = ["lru_gen_struct"]` at the top of a struct's table: the
    /// struct's other names.
    fn aliases(&self, ty: &str, value: &Value<'_>) -> Result<Vec<(String, Location)>> {
        let DeValue::Array(items) = value.get_ref() else {
            unreachable!("called on arrays");
        };
        if items.is_empty() {
            return Err(self.at(value).error(format!(
                "'aliases' of [{ty}] is empty: list the struct's other names, e.g. [\"{ty}_old\"]"
            )));
        }
        let mut out: Vec<(String, Location)> = Vec::new();
        for item in items {
            let text = self.string(item, "an alias")?;
            let name = text.strip_prefix("struct ").unwrap_or(text);
            if !valid_member_path(name) || name.contains('.') {
                return Err(self
                    .at(item)
                    .error(format!("alias '{text}' is not a struct name")));
            }
            if name == ty {
                return Err(self
                    .at(item)
                    .error(format!("'{name}' is the struct's own name, not an alias")));
            }
            if let Some((_, first)) = out.iter().find(|(a, _)| a == name) {
                return Err(self
                    .at(item)
                    .error(format!("alias '{name}' is already given at {first}")));
            }
            out.push((name.to_owned(), self.at(item)));
        }
        Ok(out)
    }

    /// Collects the rules of one table; `prefix` is the dotted path of a
    /// sub-table (`lrugen.max_seq = ...` written without quotes).
    fn field_rules(
        &self,
        table: &DeTable<'_>,
        prefix: &str,
        out: &mut Vec<FieldRule>,
    ) -> Result<()> {
        for (key, value) in table {
            let path = format!("{prefix}{}", key.get_ref());
            if !valid_member_path(&path) {
                let hint = if path.contains('[') {
                    "; annotate the whole array: an element is annotated with its array"
                } else {
                    ""
                };
                return Err(self
                    .at(key)
                    .error(format!("'{path}' is not a member path{hint}")));
            }
            match value.get_ref() {
                DeValue::String(class) => {
                    let class = self.class(value, class)?;
                    if class == Class::LockProtected {
                        return Err(self.at(value).error(format!(
                            "'{path}' is lock-protected: name the lock, e.g. {path} = {{ class = \"lock-protected\", lock = \"lock_field\" }}"
                        )));
                    }
                    out.push(FieldRule {
                        path,
                        class,
                        access: None,
                        lock: None,
                        was: Vec::new(),
                        at: self.at(key),
                        source: Source::Rules,
                    });
                }
                DeValue::Table(inner) if inner.contains_key("class") => {
                    out.push(self.full_rule(key, path, inner)?);
                }
                DeValue::Table(inner) if is_context_rule(inner) => {
                    out.push(self.context_rule(key, path, inner)?);
                }
                DeValue::Table(inner) => self.field_rules(inner, &format!("{path}."), out)?,
                // The struct's other names (`Parser::aliases`).
                DeValue::Array(_) if path == "aliases" => {}
                other => {
                    return Err(self.at(value).error(format!(
                        "the rule for '{path}' must be a class name or {{ class = ..., lock = ... }}, not {}",
                        other.type_str()
                    )));
                }
            }
        }
        Ok(())
    }

    fn full_rule(&self, key: &Key<'_>, path: String, inner: &DeTable<'_>) -> Result<FieldRule> {
        let mut class = None;
        let mut lock = None;
        let mut was = Vec::new();
        for (k, v) in inner {
            match &**k.get_ref() {
                "class" => class = Some(self.class(v, self.string(v, "'class'")?)?),
                "was" => was = self.was(&path, v)?,
                "lock" => {
                    let text = self.string(v, "'lock'")?;
                    if !valid_member_path(text) {
                        return Err(self.at(v).error(format!(
                            "'{text}' is not a lock path: write a member of the same struct (lru_lock) or TYPE.member (lruvec.lru_lock)"
                        )));
                    }
                    lock = Some(LockRef {
                        text: text.to_owned(),
                        at: self.at(v),
                    });
                }
                other => {
                    return Err(self.at(k).error(format!(
                        "unknown key '{other}' in the rule for '{path}'; a rule takes 'class', 'lock' and 'was'"
                    )));
                }
            }
        }
        let class = class.expect("tables with a class key");
        match (class, &lock) {
            (Class::LockProtected, None) => Err(self.at(key).error(format!(
                "'{path}' is lock-protected but names no lock: add lock = \"...\""
            ))),
            (c, Some(l)) if c != Class::LockProtected => Err(l.at.error(format!(
                "'lock' only goes with class = \"lock-protected\", not \"{c}\""
            ))),
            _ => Ok(FieldRule {
                path,
                class,
                access: None,
                lock,
                was,
                at: self.at(key),
                source: Source::Rules,
            }),
        }
    }

    /// `was = ["state"]`: a member's names in other releases.
    fn was(&self, path: &str, value: &Value<'_>) -> Result<Vec<String>> {
        let DeValue::Array(items) = value.get_ref() else {
            return Err(self.at(value).error(format!(
                "'was' of '{path}' must be an array of the member's other names, e.g. [\"{path}_old\"]"
            )));
        };
        if items.is_empty() {
            return Err(self.at(value).error(format!(
                "'was' of '{path}' is empty: list the member's names in other releases"
            )));
        }
        let mut out: Vec<String> = Vec::new();
        for item in items {
            let name = self.string(item, "a member's other name")?;
            if !valid_member_path(name) {
                return Err(self
                    .at(item)
                    .error(format!("'{name}' is not a member path")));
            }
            if name == path || out.iter().any(|n| n == name) {
                return Err(self
                    .at(item)
                    .error(format!("'{name}' is named twice for '{path}'")));
            }
            out.push(name.to_owned());
        }
        Ok(out)
    }

    /// `{ read = ["rx"], write = ["tx"] }`.
    fn context_rule(&self, key: &Key<'_>, path: String, inner: &DeTable<'_>) -> Result<FieldRule> {
        let mut access = Access::default();
        let mut was = Vec::new();
        for (k, v) in inner {
            let list = match &**k.get_ref() {
                "read" => &mut access.reads,
                "write" => &mut access.writes,
                "was" => {
                    was = self.was(&path, v)?;
                    continue;
                }
                other => {
                    return Err(self.at(k).error(format!(
                        "unknown key '{other}' in the rule for '{path}'; a context rule takes 'read', 'write' and 'was'"
                    )));
                }
            };
            let DeValue::Array(items) = v.get_ref() else {
                return Err(self.at(v).error(format!(
                    "'{}' must be an array of context names, e.g. [\"tx\"]",
                    k.get_ref()
                )));
            };
            for item in items {
                let name = self.string(item, "a context")?;
                if !list.iter().any(|n| n == name) {
                    list.push(name.to_owned());
                }
            }
        }
        // A context that writes a field uses it: it is not also a reader.
        let writes = access.writes.clone();
        access.reads.retain(|r| !writes.contains(r));
        if access.reads.is_empty() && access.writes.is_empty() {
            return Err(self.at(key).error(format!(
                "the rule for '{path}' names no context: give read = [...] or write = [...]"
            )));
        }
        Ok(FieldRule {
            path,
            // Until the contexts are resolved (Rules::resolve_contexts).
            class: if access.writes.is_empty() {
                Class::HotRead
            } else {
                Class::OwnerWrite
            },
            access: Some(Arc::new(access)),
            lock: None,
            was,
            at: self.at(key),
            source: Source::Rules,
        })
    }

    /// `[contexts]`: `NAME = "serialized" | "lockless"`.
    fn contexts(&self, value: &Value<'_>) -> Result<Vec<Context>> {
        let mut out = Vec::new();
        for (key, writers) in self.table(value, "'contexts'")? {
            let name: &str = key.get_ref();
            if !valid_context_name(name) {
                return Err(self.at(key).error(format!(
                    "'{name}' is not a context name: use letters, digits, '-' and '_', starting with a letter or '_'"
                )));
            }
            let writers = match self.string(writers, "a context's writers")? {
                "serialized" => Writers::Serialized,
                "lockless" => Writers::Lockless,
                other => {
                    return Err(self.at(writers).error(format!(
                        "unknown writers '{other}' for context '{name}'; use \"serialized\" \
                         (one CPU at a time: an owner or a lock holder) or \"lockless\" (many CPUs at once)"
                    )));
                }
            };
            out.push(Context {
                name: name.to_owned(),
                writers,
                at: self.at(key),
                implied: false,
            });
        }
        Ok(out)
    }

    /// `[heat.TYPE]`: `member = N`, how hot each member is.
    fn heat(&self, value: &Value<'_>) -> Result<Vec<Heat>> {
        let mut out: Vec<Heat> = Vec::new();
        for (key, members) in self.table(value, "'heat'")? {
            let text: &str = key.get_ref();
            let ty = text.strip_prefix("struct ").unwrap_or(text);
            if !valid_member_path(ty) || ty.contains('.') {
                return Err(self.at(key).error(format!(
                    "'{text}' is not a struct name: write [heat.TYPE] with member = N lines"
                )));
            }
            for (member, n) in self.table(members, &format!("[heat.{ty}]"))? {
                let path: &str = member.get_ref();
                if !valid_member_path(path) {
                    return Err(self
                        .at(member)
                        .error(format!("'{path}' is not a member path")));
                }
                let Some(value) = unsigned(n.get_ref()) else {
                    return Err(self.at(n).error(format!(
                        "the heat of {ty}.{path} must be a whole number (how hot, compared with the others)"
                    )));
                };
                out.push(Heat {
                    ty: ty.to_owned(),
                    path: path.to_owned(),
                    value,
                    at: self.at(member),
                });
            }
        }
        Ok(out)
    }

    /// `[placement]`: `TYPE = "line"` (every object starts a line) or
    /// `TYPE = 32` (at a multiple of 32 bytes from a line boundary).
    fn placement(&self, value: &Value<'_>) -> Result<Vec<Placement>> {
        let mut out: Vec<Placement> = Vec::new();
        for (key, start) in self.table(value, "'placement'")? {
            let text: &str = key.get_ref();
            let ty = text.strip_prefix("struct ").unwrap_or(text);
            if !valid_member_path(ty) || ty.contains('.') {
                return Err(self.at(key).error(format!("'{text}' is not a struct name")));
            }
            let bad = || {
                self.at(start).error(format!(
                    "the placement of {ty} must be \"line\" (every object starts a cacheline) \
                     or a power of two of bytes up to 4096 (every object starts at a multiple of it from a line boundary)"
                ))
            };
            let start = match start.get_ref() {
                DeValue::String(s) if &**s == "line" => Start::Line,
                v => match unsigned(v) {
                    Some(n) if n.is_power_of_two() && n <= 4096 => Start::Bytes(n),
                    _ => return Err(bad()),
                },
            };
            if let Some(first) = out.iter().find(|p| p.ty == ty) {
                return Err(self.at(key).error(format!(
                    "the placement of {ty} is already given at {}",
                    first.at
                )));
            }
            out.push(Placement {
                ty: ty.to_owned(),
                start,
                at: self.at(key),
            });
        }
        Ok(out)
    }

    fn class(&self, value: &Value<'_>, text: &str) -> Result<Class> {
        Class::parse(text).ok_or_else(|| {
            if text == Class::OwnerWrite.name() {
                return self.at(value).error(format!(
                    "'{text}' is not written in a rules file: it is how a context rule's field is shown; \
                     write {{ write = [\"CONTEXT\"] }} with CONTEXT = \"serialized\" under [contexts]"
                ));
            }
            let names: Vec<&str> = Class::SHORTHANDS.iter().map(|c| c.name()).collect();
            let hint = crate::suggest::did_you_mean(text, names.iter().copied());
            self.at(value).error(format!(
                "unknown class '{text}'{}",
                if hint.is_empty() {
                    format!("; the classes are {}", names.join(", "))
                } else {
                    hint
                }
            ))
        })
    }
}

/// True for `{ read = [...], write = [...] }`: a table whose `read` or
/// `write` is an array (a member named `read` under a sub-table takes a
/// class string instead).
fn is_context_rule(inner: &DeTable<'_>) -> bool {
    ["read", "write"].iter().any(|k| {
        inner
            .get(*k)
            .is_some_and(|v| matches!(v.get_ref(), DeValue::Array(_)))
    })
}

/// A context name: letters, digits, `-` and `_`, starting with a letter.
fn valid_context_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Rules> {
        parse(&Arc::from(Path::new("r.toml")), text)
    }

    #[test]
    fn a_kernel_functions_name_is_a_context_name() {
        let rules = parse_str(
            "[contexts]\n____napi_schedule = \"serialized\"\n\n[napi_struct]\nweight = { write = [\"____napi_schedule\"] }\n",
        )
        .unwrap();
        assert_eq!(rules.contexts[0].name, "____napi_schedule");
        let err = parse_str("[contexts]\n\"-x\" = \"serialized\"\n").unwrap_err();
        assert!(
            err.to_string().contains("'-x' is not a context name"),
            "{err}"
        );
    }

    /// The error of a file read alone: parsed, then merged as
    /// `Rules::load` does (which checks what spans tables: aliases).
    fn error_of(text: &str) -> String {
        parse_str(text)
            .and_then(|parsed| Rules::default().merge(parsed))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn was_names_a_members_other_releases_and_placement_where_objects_start() {
        let file: Arc<Path> = Arc::from(Path::new("r.toml"));
        let rules = parse(
            &file,
            "absent-members = \"note\"\n[placement]\nt = \"line\"\n\"struct u\" = 32\n\
             [t]\n__state = { class = \"lockless-write\", was = [\"state\"] }\n\
             q = { write = [\"c\"], was = [\"old_q\", \"older_q\"] }\n",
        )
        .unwrap();
        let t = &rules.types[0];
        assert_eq!(t.fields[0].was, ["state"]);
        assert_eq!(t.fields[1].was, ["old_q", "older_q"]);
        assert!(rules.absent_members_note);
        assert_eq!(rules.placement_of("t", 64), Some(64));
        assert_eq!(rules.placement_of("u", 64), Some(32));
        assert_eq!(rules.placement_of("u", 16), Some(16));
        assert_eq!(rules.placement_of("v", 64), None);
    }

    #[test]
    fn aliases_are_a_structs_other_names() {
        let rules = parse_str(
            "[lru_gen_folio]\nenabled = \"hot-read\"\naliases = [\"lru_gen_struct\", \"struct old\"]\n\
             [a]\naliases = \"cold\"\nsub.aliases = \"cold\"",
        )
        .unwrap();
        let folio = rules.type_rules("lru_gen_folio").unwrap();
        let names: Vec<&str> = folio.names().collect();
        assert_eq!(names, ["lru_gen_folio", "lru_gen_struct", "old"]);
        assert_eq!(folio.aliases[0].1.to_string(), "r.toml:3:12");
        assert_eq!(folio.fields.len(), 1);
        // A member named `aliases` takes a class string, as any member.
        let a = rules.type_rules("a").unwrap();
        assert!(a.aliases.is_empty());
        let paths: Vec<&str> = a.fields.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["aliases", "sub.aliases"]);
    }

    #[test]
    fn the_readme_example_parses() {
        let rules = parse_str(
            r#"
cacheline = 64
[lru_gen_folio]
enabled   = "hot-read"
refaulted = "lockless-write"
nr_pages  = { class = "lock-protected", lock = "lruvec.lru_lock" }
[lruvec]
lru_lock  = "lock"
"lrugen.max_seq" = "hot-read"
lrugen.gen = "cold"
[[allow]]
fields = ["lruvec.lru_lock", "lruvec.cost_lock"]
reason = "fits the hole"
[severity]
write-vs-write = "off"
"#,
        )
        .unwrap();
        assert_eq!(rules.cacheline, Some(64));
        let folio = rules.type_rules("lru_gen_folio").unwrap();
        assert_eq!(folio.fields.len(), 3);
        assert_eq!(folio.fields[2].class, Class::LockProtected);
        assert_eq!(
            folio.fields[2].lock.as_ref().unwrap().text,
            "lruvec.lru_lock"
        );
        assert_eq!(folio.fields[2].at.line, 6);
        let lruvec = rules.type_rules("lruvec").unwrap();
        let paths: Vec<&str> = lruvec.fields.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["lru_lock", "lrugen.max_seq", "lrugen.gen"]);
        assert_eq!(rules.allow[0].fields[1].path, "cost_lock");
        assert_eq!(rules.severity.of(Kind::WriteVsWrite), None);
        assert_eq!(rules.severity.of(Kind::FalseSharing), Some(Severity::Error));
    }

    #[test]
    fn every_mistake_is_located() {
        let cases = [
            (
                "[a]\nx = \"hot-reed\"",
                "r.toml:2:5: unknown class 'hot-reed'; did you mean 'hot-read'?",
            ),
            (
                "[a]\nx = \"owner-write\"",
                "r.toml:2:5: 'owner-write' is not written in a rules file: it is how a context rule's field is shown",
            ),
            (
                "[a]\nx = { class = \"lock-protected\" }",
                "r.toml:2:1: 'x' is lock-protected but names no lock",
            ),
            (
                "[a]\nx = \"lock-protected\"",
                "r.toml:2:5: 'x' is lock-protected: name the lock",
            ),
            (
                "[a]\nx = { class = \"hot-read\", lock = \"l\" }",
                "r.toml:2:34: 'lock' only goes with",
            ),
            (
                "[a]\nx = { class = \"hot-read\", lokc = \"l\" }",
                "r.toml:2:27: unknown key 'lokc'",
            ),
            (
                "[a]\nx = 3",
                "r.toml:2:5: the rule for 'x' must be a class name",
            ),
            (
                "[a]\n\"x[1]\" = \"cold\"",
                "r.toml:2:1: 'x[1]' is not a member path; annotate the whole array",
            ),
            (
                "[a]\nx = \"cold\"\nx = \"cold\"",
                "r.toml:3:1: invalid TOML: duplicate key",
            ),
            ("[a]", "r.toml:1:2: [a] annotates no field"),
            ("cachline = 64", "r.toml:1:1: unknown setting 'cachline'"),
            (
                "cacheline = 63",
                "r.toml:1:13: 'cacheline' must be a power of two",
            ),
            ("roots = \"x\"", "r.toml:1:9: 'roots' must be an array"),
            (
                "roots = [\"a.b\"]",
                "r.toml:1:10: 'a.b' is not a struct name",
            ),
            (
                "[severity]\nfalse-sharin = \"off\"",
                "r.toml:2:1: unknown finding kind 'false-sharin'",
            ),
            (
                "[severity]\nfalse-sharing = \"fatal\"",
                "r.toml:2:17: unknown severity 'fatal'",
            ),
            (
                "[[allow]]\nfields = [\"a.b\"]\nreason = \"r\"",
                "r.toml:2:10: 'fields' must be two member paths",
            ),
            (
                "[[allow]]\nfields = [\"a.b\", \"c\"]\nreason = \"r\"",
                "r.toml:2:18: 'c' is not TYPE.field",
            ),
            (
                "[[allow]]\nfields = [\"a.b\", \"c.d\"]",
                "r.toml:1:1: [[allow]] needs a 'reason'",
            ),
            (
                "[[allow]]\nfields = [\"a.b\", \"c.d\"]\nreason = \" \"",
                "r.toml:3:10: 'reason' must say why",
            ),
            (
                "allow = 1",
                "r.toml:1:9: 'allow' must be an array of tables",
            ),
            (
                "[a]\nx = \"cold\"\n[[a.y]]",
                "r.toml:3:1: the rule for 'y' must be a class name",
            ),
            ("[a\n", "r.toml:1:3: invalid TOML"),
            (
                "[a]\nx = \"cold\"\naliases = []",
                "r.toml:3:11: 'aliases' of [a] is empty",
            ),
            (
                "[a]\nx = { class = \"cold\", was = [] }",
                "r.toml:2:29: 'was' of 'x' is empty",
            ),
            (
                "[a]\nx = { class = \"cold\", was = \"y\" }",
                "r.toml:2:29: 'was' of 'x' must be an array",
            ),
            (
                "[a]\nx = { write = [\"c\"], was = [\"x\"] }",
                "r.toml:2:29: 'x' is named twice for 'x'",
            ),
            (
                "[a]\nx = { class = \"cold\", was = [\"y[1]\"] }",
                "r.toml:2:30: 'y[1]' is not a member path",
            ),
            (
                "absent-members = \"warn\"\n[a]\nx = \"cold\"",
                "r.toml:1:18: 'absent-members' is \"note\" or \"error\", not \"warn\"",
            ),
            (
                "[placement]\na = \"lines\"\n[a]\nx = \"cold\"",
                "r.toml:2:5: the placement of a must be \"line\"",
            ),
            (
                "[placement]\na = 3\n[a]\nx = \"cold\"",
                "r.toml:2:5: the placement of a must be",
            ),
            (
                "[placement]\n\"a.b\" = 8\n[a]\nx = \"cold\"",
                "r.toml:2:1: 'a.b' is not a struct name",
            ),
            (
                "[a]\nx = \"cold\"\naliases = [\"b.c\"]",
                "r.toml:3:12: alias 'b.c' is not a struct name",
            ),
            (
                "[a]\nx = \"cold\"\naliases = [1]",
                "r.toml:3:12: an alias must be a string",
            ),
            (
                "[a]\nx = \"cold\"\naliases = [\"a\"]",
                "r.toml:3:12: 'a' is the struct's own name",
            ),
            (
                "[a]\nx = \"cold\"\naliases = [\"b\", \"b\"]",
                "r.toml:3:17: alias 'b' is already given at r.toml:3:12",
            ),
            (
                "[a]\nx = \"cold\"\naliases = [\"b\"]\n[b]\ny = \"cold\"",
                "r.toml:3:12: 'b' is an alias of a and annotated at r.toml:4:2",
            ),
            (
                "[a]\nx = \"cold\"\naliases = [\"c\"]\n[b]\ny = \"cold\"\naliases = [\"c\"]",
                "r.toml:6:12: 'c' is an alias of b here and of a at r.toml:3:12",
            ),
            (
                "[a]\nx = \"cold\"\nsub.aliases = [\"b\"]",
                "r.toml:3:15: the rule for 'sub.aliases' must be a class name",
            ),
        ];
        for (text, want) in cases {
            let got = error_of(text);
            assert!(got.starts_with(want), "{text:?}\n got: {got}\nwant: {want}");
        }
    }
}
