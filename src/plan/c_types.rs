//! C types: the types of the members a plan adds (a C type as written,
//! raw bytes, group markers and paddings), made in a build's table, and a
//! struct's name as C writes it.

use super::abi::Abi;
use crate::error::Result;
use crate::model::{Composite, CompositeKind, Type, TypeId, TypeTable};

/// The types of group markers and paddings, each made once.
#[derive(Default)]
pub(super) struct Made {
    marker: Option<TypeId>,
    pad: Option<TypeId>,
}

impl Made {
    /// `__u8[0]`, the type of the group markers.
    pub(super) fn marker(&mut self, table: &mut TypeTable) -> TypeId {
        if let Some(id) = self.marker {
            return id;
        }
        let byte = scalar(table, "unsigned char", 1);
        let u8_t = table.push(Type::Typedef {
            name: "__u8".into(),
            target: byte,
        });
        let id = table.push(Type::Array {
            element: u8_t,
            dims: vec![Some(0)],
        });
        self.marker = Some(id);
        id
    }

    /// `struct { }`, the type of an aligned group's end padding.
    pub(super) fn pad(&mut self, table: &mut TypeTable) -> TypeId {
        if let Some(id) = self.pad {
            return id;
        }
        let id = table.push(Type::Composite(Composite {
            kind: CompositeKind::Struct,
            name: None,
            size: Some(0),
            alignment: None,
            members: Some(Vec::new()),
            decl: None,
        }));
        self.pad = Some(id);
        id
    }
}

/// A new base type `name` of `size` bytes.
pub(super) fn scalar(table: &mut TypeTable, name: &str, size: u64) -> TypeId {
    table.push(Type::Base {
        name: name.to_owned(),
        size,
    })
}

/// The type an added member's C type `text` names, on a machine of `abi`.
pub(super) fn added(
    table: &mut TypeTable,
    abi: Abi,
    text: &str,
    at: &crate::rules::Location,
) -> Result<TypeId> {
    let c = CType::parse(text).map_err(|why| at.plan_error(format!("'{text}': {why}")))?;
    let mut id = match base_scalar(&c.base, abi) {
        Some((name, size, typedef)) => {
            let base = scalar(table, name, size);
            match typedef {
                Some(t) => table.push(Type::Typedef {
                    name: t.to_owned(),
                    target: base,
                }),
                None => base,
            }
        }
        None => match find_named(table, &c.base) {
            Some(id) => id,
            None if c.pointers > 0 => {
                let (kind, name) = match c.base.split_once(' ') {
                    Some(("union", n)) => (CompositeKind::Union, n),
                    Some((_, n)) => (CompositeKind::Struct, n),
                    None => (CompositeKind::Struct, c.base.as_str()),
                };
                if c.base.contains(' ') {
                    table.push(Type::Composite(Composite {
                        kind,
                        name: Some(name.to_owned()),
                        size: None,
                        alignment: None,
                        members: None,
                        decl: None,
                    }))
                } else {
                    table.push(Type::Typedef {
                        name: name.to_owned(),
                        target: TypeTable::VOID,
                    })
                }
            }
            None => {
                return Err(at.plan_error(format!(
                    "'{text}': the build's debug info has no type '{}'",
                    c.base
                )));
            }
        },
    };
    for _ in 0..c.pointers {
        id = table.push(Type::Pointer {
            target: id,
            size: abi.pointer_size,
        });
    }
    if !c.dims.is_empty() {
        id = table.push(Type::Array {
            element: id,
            dims: c.dims.iter().map(|d| Some(*d)).collect(),
        });
    }
    Ok(id)
}

/// The type name an added member's C type `text` needs decoded: its base
/// type, unless that is a scalar of a machine of `abi`.
pub(super) fn decoded_name(text: &str, abi: Abi) -> Option<String> {
    let c = CType::parse(text).ok()?;
    base_scalar(&c.base, abi)
        .is_none()
        .then(|| c.base.rsplit(' ').next().unwrap_or(&c.base).to_owned())
}

/// A struct's name as C writes it: `struct NAME`, or an anonymous one.
pub(super) fn struct_name(c: &Composite) -> String {
    match &c.name {
        Some(n) => format!("{} {n}", c.kind.keyword()),
        None => format!("an anonymous {}", c.kind.keyword()),
    }
}

/// The type, among those decoded, that a C type name names.
fn find_named(table: &TypeTable, base: &str) -> Option<TypeId> {
    let (kind, name) = match base.split_once(' ') {
        Some(("struct", n)) => (Some(CompositeKind::Struct), n),
        Some(("union", n)) => (Some(CompositeKind::Union), n),
        _ => (None, base),
    };
    let mut fallback = None;
    for i in 0..table.len() {
        let id = TypeId(i);
        match table.get(id) {
            Type::Composite(c)
                if c.name.as_deref() == Some(name) && kind.is_none_or(|k| k == c.kind) =>
            {
                if c.members.is_some() {
                    return Some(id);
                }
                fallback.get_or_insert(id);
            }
            Type::Typedef { name: n, .. } if kind.is_none() && n == name => return Some(id),
            _ => {}
        }
    }
    fallback
}

/// A C type as an added member writes it: a base name, pointers, array
/// dimensions.
struct CType {
    base: String,
    pointers: usize,
    dims: Vec<u64>,
}

impl CType {
    fn parse(text: &str) -> std::result::Result<CType, String> {
        let mut rest = text.trim();
        let mut dims = Vec::new();
        while let Some(open) = rest.strip_suffix(']').and_then(|r| r.rfind('[')) {
            let n = rest[open + 1..rest.len() - 1].trim();
            let n: u64 = n
                .parse()
                .map_err(|_| format!("array size '{n}' is not a number"))?;
            dims.push(n);
            rest = rest[..open].trim_end();
        }
        dims.reverse();
        let pointers = rest.len() - rest.trim_end_matches(['*', ' ']).len();
        let stars = rest[rest.len() - pointers..].matches('*').count();
        let base = rest[..rest.len() - pointers].trim();
        let words: Vec<&str> = base
            .split_whitespace()
            .filter(|w| *w != "const" && *w != "volatile")
            .collect();
        if words.is_empty() || !words.iter().all(|w| super::parse::is_identifier(w)) {
            return Err(
                "not a C type (write it like \"struct foo *\", \"u64\" or \"unsigned long[4]\")"
                    .into(),
            );
        }
        if dims.len() > 8 || stars > 8 {
            return Err("too many array dimensions or pointers".into());
        }
        Ok(CType {
            base: words.join(" "),
            pointers: stars,
            dims,
        })
    }
}

/// C's scalar type names and the kernel's fixed-width typedefs: (the
/// name the compiler gives the base type, size, typedef name).
fn base_scalar(name: &str, abi: Abi) -> Option<(&'static str, u64, Option<&'static str>)> {
    let long = abi.pointer_size;
    let fixed = |n: &str| -> Option<(&'static str, u64)> {
        Some(match n {
            "u8" | "__u8" => ("unsigned char", 1),
            "s8" | "__s8" => ("signed char", 1),
            "u16" | "__u16" => ("short unsigned int", 2),
            "s16" | "__s16" => ("short int", 2),
            "u32" | "__u32" => ("unsigned int", 4),
            "s32" | "__s32" => ("int", 4),
            "u64" | "__u64" => ("long long unsigned int", 8),
            "s64" | "__s64" => ("long long int", 8),
            _ => return None,
        })
    };
    if let Some((base, size)) = fixed(name) {
        let typedef = [
            "u8", "__u8", "s8", "__s8", "u16", "__u16", "s16", "__s16", "u32", "__u32", "s32",
            "__s32", "u64", "__u64", "s64", "__s64",
        ]
        .into_iter()
        .find(|t| *t == name);
        return Some((base, size, typedef));
    }
    Some(match name {
        "char" => ("char", 1, None),
        "signed char" => ("signed char", 1, None),
        "unsigned char" => ("unsigned char", 1, None),
        "_Bool" | "bool" => ("_Bool", 1, None),
        "short" | "short int" | "signed short" => ("short int", 2, None),
        "unsigned short" | "short unsigned int" | "unsigned short int" => {
            ("short unsigned int", 2, None)
        }
        "int" | "signed" | "signed int" => ("int", 4, None),
        "unsigned" | "unsigned int" => ("unsigned int", 4, None),
        "long" | "long int" | "signed long" => ("long int", long, None),
        "unsigned long" | "long unsigned int" | "unsigned long int" => {
            ("long unsigned int", long, None)
        }
        "long long" | "long long int" => ("long long int", 8, None),
        "unsigned long long" | "long long unsigned int" => ("long long unsigned int", 8, None),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_types_parse() {
        let c = CType::parse("struct foo *").unwrap();
        assert_eq!(
            (c.base.as_str(), c.pointers, c.dims.len()),
            ("struct foo", 1, 0)
        );
        let c = CType::parse("unsigned long[2][3]").unwrap();
        assert_eq!(
            (c.base.as_str(), c.pointers, c.dims.clone()),
            ("unsigned long", 0, vec![2, 3])
        );
        assert!(CType::parse("struct foo (*)(void)").is_err());
        assert!(CType::parse("int[x]").is_err());
        assert!(CType::parse("").is_err());
    }
}
