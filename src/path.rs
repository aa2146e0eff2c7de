//! Member paths as C's `offsetof` writes them: `TYPE.a.b[1][2].c`. Members
//! of anonymous structs and unions are reached directly, as in C.

use crate::error::{Error, Result};
use crate::model::{Member, SourceLoc, Type, TypeId, TypeTable, element_count};

/// One step after the type name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// `.name`
    Field(String),
    /// `[index]`
    Index(u64),
}

/// A parsed path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberPath {
    /// The root type name (may carry `#N` or `@FILE`).
    pub root: String,
    /// The steps after it.
    pub steps: Vec<Step>,
}

impl MemberPath {
    /// Parses `TYPE(.field|[N])*`.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = |why: &str| Error::BadPath(format!("bad path '{text}': {why}"));
        let root_end = text.find(['.', '[']).unwrap_or(text.len());
        let root = &text[..root_end];
        if root.is_empty() {
            return Err(bad("it must start with a type name"));
        }
        let mut steps = Vec::new();
        let mut rest = &text[root_end..];
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('.') {
                let end = after.find(['.', '[']).unwrap_or(after.len());
                let name = &after[..end];
                if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(bad("expected a member name after '.'"));
                }
                steps.push(Step::Field(name.to_owned()));
                rest = &after[end..];
            } else if let Some(after) = rest.strip_prefix('[') {
                let end = after.find(']').ok_or_else(|| bad("missing ']'"))?;
                let index: u64 = after[..end]
                    .trim()
                    .parse()
                    .map_err(|_| bad("an index must be a non-negative integer"))?;
                steps.push(Step::Index(index));
                rest = &after[end + 1..];
            } else {
                return Err(bad("expected '.' or '['"));
            }
        }
        Ok(MemberPath {
            root: root.to_owned(),
            steps,
        })
    }
}

/// Where a path lands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// Byte offset from the root.
    pub offset: u64,
    /// Size in bytes (the storage unit for bitfields).
    pub size: u64,
    /// For bitfields: absolute bit offset and width.
    pub bits: Option<(u64, u64)>,
    /// The type at the end of the path (`None` inside a sub-array).
    pub ty: Option<TypeId>,
    /// Declaration of the last member named in the path.
    pub decl: Option<SourceLoc>,
}

/// Walks `steps` from composite `root`, whose members must be loaded deeply.
pub fn resolve(table: &TypeTable, root: TypeId, steps: &[Step], shown: &str) -> Result<Resolved> {
    let mut ty = root;
    // Dimensions of the current array still to index; empty when not in an array.
    let mut dims: Vec<Option<u64>> = Vec::new();
    let mut element = root;
    let mut bit_offset: u64 = 0;
    let mut bits = None;
    let mut decl = None;
    for step in steps {
        match step {
            Step::Field(name) => {
                if !dims.is_empty() {
                    return Err(Error::BadPath(format!(
                        "'{shown}': '.{name}' applied to an array; index it first"
                    )));
                }
                let (member, at) = find_member(table, ty, name)?
                    .ok_or_else(|| no_member(table, ty, name, shown))?;
                bit_offset = bit_offset
                    .checked_add(at)
                    .ok_or_else(|| Error::BadPath(format!("'{shown}': offset overflows")))?;
                bits = member.bit_size.map(|w| (bit_offset, w));
                decl = member.decl.clone();
                ty = member.ty;
                if let Type::Array {
                    element: e,
                    dims: d,
                } = table.get(table.strip(ty))
                {
                    dims = d.clone();
                    element = *e;
                }
            }
            Step::Index(i) => {
                if dims.is_empty() {
                    return Err(Error::BadPath(format!(
                        "'{shown}': [{i}] applied to something that is not an array"
                    )));
                }
                let bound = dims.remove(0);
                if let Some(n) = bound
                    && *i >= n
                    && n > 0
                {
                    return Err(Error::BadPath(format!(
                        "'{shown}': index {i} is out of bounds (dimension of {n})"
                    )));
                }
                let stride = stride(table, element, &dims)
                    .ok_or_else(|| Error::BadPath(format!("'{shown}': element size unknown")))?;
                bit_offset = i
                    .checked_mul(stride)
                    .and_then(|b| b.checked_mul(8))
                    .and_then(|b| b.checked_add(bit_offset))
                    .ok_or_else(|| Error::BadPath(format!("'{shown}': offset overflows")))?;
                if dims.is_empty() {
                    ty = element;
                    if let Type::Array {
                        element: e,
                        dims: d,
                    } = table.get(table.strip(ty))
                    {
                        dims = d.clone();
                        element = *e;
                    }
                }
            }
        }
    }
    let size = if dims.is_empty() {
        table.size_of(ty).unwrap_or(0)
    } else {
        stride(table, element, &dims).unwrap_or(0)
    };
    Ok(Resolved {
        offset: bit_offset / 8,
        size,
        bits,
        ty: dims.is_empty().then_some(ty),
        decl,
    })
}

fn stride(table: &TypeTable, element: TypeId, dims: &[Option<u64>]) -> Option<u64> {
    table.size_of(element)?.checked_mul(element_count(dims)?)
}

/// Finds a member by name, looking inside anonymous members as C does.
/// Returns the member and its bit offset from the start of `ty`.
/// The member `name` of struct or union `ty` (inside its anonymous members
/// too, as C allows) and its bit offset; `None` when it has none.
/// True when member path `path` is `member` or lies inside it
/// (`lrugen.max_seq` inside `lrugen`, `refaulted[1]` inside `refaulted`,
/// not `lrugen_x`).
pub(crate) fn within(path: &str, member: &str) -> bool {
    path.strip_prefix(member)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
}

pub(crate) fn find_member<'t>(
    table: &'t TypeTable,
    ty: TypeId,
    name: &str,
) -> Result<Option<(&'t Member, u64)>> {
    find_member_at(table, ty, name, 0)
}

/// Anonymous members nested deeper than this are corrupt input (a struct
/// holding itself anonymously).
const MAX_ANONYMOUS_DEPTH: usize = 32;

fn find_member_at<'t>(
    table: &'t TypeTable,
    ty: TypeId,
    name: &str,
    depth: usize,
) -> Result<Option<(&'t Member, u64)>> {
    if depth > MAX_ANONYMOUS_DEPTH {
        return Ok(None);
    }
    let stripped = table.strip(ty);
    let Some(c) = table.composite(stripped) else {
        return Err(Error::BadPath(format!(
            "'.{name}' applied to a type that is not a struct or union"
        )));
    };
    let members = c.members.as_deref().unwrap_or(&[]);
    if let Some(m) = members.iter().find(|m| m.name.as_deref() == Some(name)) {
        return Ok(Some((m, m.bit_offset)));
    }
    for m in members.iter().filter(|m| m.name.is_none()) {
        if table.composite(table.strip(m.ty)).is_some()
            && let Some((inner, at)) = find_member_at(table, m.ty, name, depth + 1)?
        {
            return Ok(Some((inner, m.bit_offset + at)));
        }
    }
    Ok(None)
}

/// Names reachable from `ty` with one `.name` step (members of anonymous
/// structs and unions included, as C allows).
pub fn member_names(table: &TypeTable, ty: TypeId, out: &mut Vec<String>) {
    member_names_at(table, ty, out, 0);
}

fn member_names_at(table: &TypeTable, ty: TypeId, out: &mut Vec<String>, depth: usize) {
    let Some(c) = table.composite(table.strip(ty)) else {
        return;
    };
    if depth > MAX_ANONYMOUS_DEPTH {
        return;
    }
    for m in c.members.as_deref().unwrap_or(&[]) {
        match &m.name {
            Some(n) => out.push(n.clone()),
            None => member_names_at(table, m.ty, out, depth + 1),
        }
    }
}

fn no_member(table: &TypeTable, ty: TypeId, name: &str, shown: &str) -> Error {
    let mut names = Vec::new();
    member_names(table, ty, &mut names);
    let type_name = table
        .composite(table.strip(ty))
        .map(crate::layout::display_name)
        .unwrap_or_default();
    let hint = crate::suggest::did_you_mean(name, names.iter().map(String::as_str));
    Error::BadPath(format!(
        "'{shown}': {type_name} has no member '{name}'{hint}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse_like_c() {
        let p = MemberPath::parse("lru_gen_folio.refaulted[0][1][2]").unwrap();
        assert_eq!(p.root, "lru_gen_folio");
        assert_eq!(
            p.steps,
            vec![
                Step::Field("refaulted".into()),
                Step::Index(0),
                Step::Index(1),
                Step::Index(2)
            ]
        );
        assert_eq!(MemberPath::parse("lruvec").unwrap().steps, vec![]);
        for bad in ["", ".a", "a..b", "a[", "a[-1]", "a[x]", "a.b c"] {
            assert!(MemberPath::parse(bad).is_err(), "{bad}");
        }
    }
}
