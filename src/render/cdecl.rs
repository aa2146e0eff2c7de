//! C spellings of types and declarations, as pahole prints them.

use crate::model::{Type, TypeId, TypeTable};

/// Longest declarator chain followed before giving up (cyclic input).
const MAX_DEPTH: usize = 32;

/// Types visited to spell one declaration, at most: a function type whose
/// parameters point back at it would otherwise spell forever.
const MAX_STEPS: usize = 512;

/// The C name of a type: `struct list_head *`, `atomic_long_t`, `long[4]`.
pub fn type_name(table: &TypeTable, id: TypeId) -> String {
    type_name_within(table, id, &mut MAX_STEPS.clone())
}

fn type_name_within(table: &TypeTable, id: TypeId, budget: &mut usize) -> String {
    let (base, declarator) = split(table, id, String::new(), 0, budget);
    if declarator.is_empty() {
        base
    } else if declarator.starts_with('[') {
        format!("{base}{declarator}")
    } else {
        format!("{base} {declarator}")
    }
}

/// A member declaration split into pahole's two columns: the type
/// (`struct list_head *`) and the declarator with the name (`lists[5]`,
/// `(*open)(struct callbacks *, const char *)`).
pub fn declaration(table: &TypeTable, id: TypeId, name: &str) -> (String, String) {
    let (base, declarator) = split(table, id, name.to_owned(), 0, &mut MAX_STEPS.clone());
    if !declarator.contains('(') {
        let stars = declarator.len() - declarator.trim_start_matches('*').len();
        if stars > 0 {
            return (
                format!("{base} {}", &declarator[..stars]),
                declarator[stars..].to_owned(),
            );
        }
    }
    (base, declarator)
}

fn split(
    table: &TypeTable,
    id: TypeId,
    inner: String,
    depth: usize,
    budget: &mut usize,
) -> (String, String) {
    if depth > MAX_DEPTH || *budget == 0 {
        return ("<cycle>".into(), inner);
    }
    *budget -= 1;
    let next = depth + 1;
    match table.get(id) {
        Type::Pointer { target, .. } => {
            let pointee = table.get(*target);
            let wrapped = if matches!(pointee, Type::Function { .. } | Type::Array { .. }) {
                format!("(*{inner})")
            } else {
                format!("*{inner}")
            };
            split(table, *target, wrapped, next, budget)
        }
        Type::Array { element, dims } => {
            let mut s = inner;
            for d in dims {
                match d {
                    Some(n) => s.push_str(&format!("[{n}]")),
                    None => s.push_str("[]"),
                }
            }
            split(table, *element, s, next, budget)
        }
        Type::Function {
            ret,
            params,
            variadic,
        } => {
            let mut list: Vec<String> = params
                .iter()
                .map(|p| type_name_within(table, *p, budget))
                .collect();
            if *variadic {
                list.push("...".into());
            }
            if list.is_empty() {
                list.push("void".into());
            }
            split(
                table,
                *ret,
                format!("{inner}({})", list.join(", ")),
                next,
                budget,
            )
        }
        Type::Qualified { qualifier, target } => {
            if matches!(table.get(*target), Type::Pointer { .. }) {
                let inner = if inner.is_empty() {
                    qualifier.keyword().to_owned()
                } else {
                    format!("{} {inner}", qualifier.keyword())
                };
                split(table, *target, inner, next, budget)
            } else {
                let (base, declarator) = split(table, *target, inner, next, budget);
                let keyword = qualifier.keyword();
                // A qualified array is an array of qualified elements: GCC
                // writes `const char iname[]` as a const array of const
                // char, which C (and pahole) spell with one `const`.
                let already = base == keyword || base.starts_with(&format!("{keyword} "));
                if already && matches!(table.get(*target), Type::Array { .. }) {
                    (base, declarator)
                } else {
                    (format!("{keyword} {base}"), declarator)
                }
            }
        }
        Type::Void => ("void".into(), inner),
        Type::Base { name, .. } | Type::Typedef { name, .. } => (name.clone(), inner),
        Type::Enum { name, .. } => (
            format!("enum {}", name.as_deref().unwrap_or("{...}")),
            inner,
        ),
        Type::Composite(c) => (
            format!(
                "{} {}",
                c.kind.keyword(),
                c.name.as_deref().unwrap_or("{...}")
            ),
            inner,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Qualifier;

    #[test]
    fn declarations_read_like_c() {
        let mut t = TypeTable::new();
        let int = t.push(Type::Base {
            name: "int".into(),
            size: 4,
        });
        let char_ = t.push(Type::Base {
            name: "char".into(),
            size: 1,
        });
        let cchar = t.push(Type::Qualified {
            qualifier: Qualifier::Const,
            target: char_,
        });
        let pcchar = t.push(Type::Pointer {
            target: cchar,
            size: 8,
        });
        let cpcchar = t.push(Type::Qualified {
            qualifier: Qualifier::Const,
            target: pcchar,
        });
        let names = t.push(Type::Array {
            element: cpcchar,
            dims: vec![Some(3)],
        });
        assert_eq!(
            declaration(&t, names, "names"),
            ("const char *".into(), "const names[3]".into())
        );
        let f = t.push(Type::Function {
            ret: int,
            params: vec![pcchar],
            variadic: true,
        });
        let pf = t.push(Type::Pointer { target: f, size: 8 });
        assert_eq!(
            declaration(&t, pf, "open"),
            ("int".into(), "(*open)(const char *, ...)".into())
        );
        assert_eq!(
            declaration(&t, pcchar, "p"),
            ("const char *".into(), "p".into())
        );
        assert_eq!(type_name(&t, pcchar), "const char *");
        let grid = t.push(Type::Array {
            element: int,
            dims: vec![Some(2), Some(3)],
        });
        assert_eq!(type_name(&t, grid), "int[2][3]");
        // `const char iname[]` as GCC records it: const (array of const char).
        let flexible = t.push(Type::Array {
            element: cchar,
            dims: vec![None],
        });
        let const_flexible = t.push(Type::Qualified {
            qualifier: Qualifier::Const,
            target: flexible,
        });
        assert_eq!(
            declaration(&t, const_flexible, "iname"),
            ("const char".into(), "iname[]".into())
        );
        // A const array of plain elements keeps its one `const`.
        let const_grid = t.push(Type::Qualified {
            qualifier: Qualifier::Const,
            target: grid,
        });
        assert_eq!(type_name(&t, const_grid), "const int[2][3]");
    }
}
