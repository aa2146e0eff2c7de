//! Which struct each member of every named struct and union of a build
//! leads to (through pointers, arrays and typedefs, and through anonymous
//! members as C allows): what the source reader needs to follow a member
//! access whatever types a run decoded. A draft of `mm_struct` decodes
//! `mm_struct` and what it holds, not `vm_area_struct`, yet
//! `vma->vm_mm->mm_lock_seq` is a read of `mm_struct.mm_lock_seq`.

use std::collections::HashMap;

use crate::model::{Type, TypeId, TypeTable};

/// One struct's part: its name, and its members that lead to a struct
/// with that struct's name.
pub(crate) type StructPart = (String, Vec<(String, String)>);

/// Per struct (tag name), its members that lead to a struct, by name.
#[derive(Clone, Debug, Default)]
pub(crate) struct MemberTypes {
    structs: HashMap<String, HashMap<String, String>>,
    /// Typedef name → the struct it names (`pg_data_t` → `pglist_data`).
    typedefs: HashMap<String, String>,
}

impl MemberTypes {
    /// From `(struct, its members' structs)` parts, in the build's order:
    /// the first definition of a name is the one kept (as lookups do).
    /// With `typedefs` (typedef name, struct), first of a name kept too.
    pub(crate) fn from_parts(
        parts: impl IntoIterator<Item = StructPart>,
        typedefs: impl IntoIterator<Item = (String, String)>,
    ) -> Self {
        let mut structs: HashMap<String, HashMap<String, String>> = HashMap::new();
        for (name, members) in parts {
            structs
                .entry(name)
                .or_insert_with(|| members.into_iter().collect());
        }
        let mut named = HashMap::new();
        for (typedef, target) in typedefs {
            named.entry(typedef).or_insert(target);
        }
        MemberTypes {
            structs,
            typedefs: named,
        }
    }

    /// The struct typedef `name` names.
    pub(crate) fn typedef(&self, name: &str) -> Option<&str> {
        self.typedefs.get(name).map(String::as_str)
    }

    /// The typedef names of struct `ty`, sorted.
    pub(crate) fn typedefs_of(&self, ty: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .typedefs
            .iter()
            .filter(|(name, target)| *target == ty && *name != ty)
            .map(|(name, _)| name.clone())
            .collect();
        out.sort();
        out
    }

    /// The struct member `member` of struct `ty` leads to.
    pub(crate) fn member_type(&self, ty: &str, member: &str) -> Option<&str> {
        self.structs.get(ty)?.get(member).map(String::as_str)
    }

    /// How many structs have a member that leads to struct `ty` (by
    /// value or through a pointer): a handful for an object, thousands
    /// for a `list_head`.
    pub(crate) fn users(&self, ty: &str) -> usize {
        self.structs
            .values()
            .filter(|members| members.values().any(|t| t == ty))
            .count()
    }

    /// How many structs it knows.
    pub(crate) fn len(&self) -> usize {
        self.structs.len()
    }
}

/// The members of composite `id` in `table` (those of its anonymous
/// members included) that lead to a struct or union, with its name.
pub(crate) fn member_structs(table: &TypeTable, id: TypeId) -> Vec<(String, String)> {
    let mut names = Vec::new();
    crate::path::member_names(table, id, &mut names);
    names
        .into_iter()
        .filter_map(|name| {
            let (m, _) = crate::path::find_member(table, id, &name).ok()??;
            let target = struct_behind(table, m.ty)?;
            Some((name, target))
        })
        .collect()
}

/// The name of the struct or union type `ty` is, points to or holds an
/// array of, through typedefs and qualifiers.
pub(crate) fn struct_behind(table: &TypeTable, ty: TypeId) -> Option<String> {
    let mut t = ty;
    for _ in 0..crate::model::MAX_TYPE_DEPTH {
        match table.get(t) {
            Type::Typedef { target, .. } | Type::Qualified { target, .. } => t = *target,
            Type::Pointer { target, .. } => t = *target,
            Type::Array { element, .. } => t = *element,
            Type::Composite(c) => return c.name.clone(),
            _ => return None,
        }
    }
    None
}

/// `(typedef, struct)` for every typedef of `table` that names a struct or
/// union through qualifiers and other typedefs.
pub(crate) fn typedefs(table: &TypeTable) -> Vec<(String, String)> {
    (0..table.len())
        .filter_map(|i| match table.get(TypeId(i)) {
            Type::Typedef { name, target } => {
                let named = table.composite(table.strip(*target))?.name.clone()?;
                Some((name.clone(), named))
            }
            _ => None,
        })
        .collect()
}
