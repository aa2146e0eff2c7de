//! Evidence for access classes, besides the rules a developer writes:
//! measured ([`perf`]: perf's data-type samples, placed on a build's
//! layout by `analysis::samples`) and declared (`source`: what a source tree
//! says of the members and the functions that write them). The third
//! kind, inferred from the types (locks, atomics), is read off the
//! build's own types where it is used (`analysis::draft`).

pub mod perf;
pub(crate) mod source;

use std::collections::HashMap;

use crate::model::{Type, TypeId, TypeTable};

/// A build's types by name, as the source reader and the sample
/// placement look them up: tags and typedef names, and perf's spelling
/// (`struct ring`).
pub(crate) struct Names<'t> {
    table: &'t TypeTable,
    by_name: HashMap<String, TypeId>,
}

impl<'t> Names<'t> {
    /// Every defined struct and union of `table` (and typedef of one).
    pub(crate) fn of(table: &'t TypeTable) -> Names<'t> {
        let mut by_name = HashMap::new();
        for i in 0..table.len() {
            let id = TypeId(i);
            match table.get(id) {
                Type::Composite(c) if c.members.is_some() => {
                    if let Some(name) = &c.name {
                        by_name.entry(name.clone()).or_insert(id);
                        by_name
                            .entry(format!("{} {name}", c.kind.keyword()))
                            .or_insert(id);
                    }
                }
                Type::Typedef { name, target }
                    if table.composite(table.strip(*target)).is_some() =>
                {
                    by_name.entry(name.clone()).or_insert(table.strip(*target));
                }
                _ => {}
            }
        }
        Names { table, by_name }
    }

    /// Its types by name.
    pub(crate) fn map(&self) -> &HashMap<String, TypeId> {
        &self.by_name
    }
}

/// What the source reader resolves member accesses with: the run's
/// decoded types, then, for a struct the run did not decode, which struct
/// each of its members leads to in the whole build.
pub(crate) struct Resolver<'t> {
    /// The run's types.
    pub(crate) names: Names<'t>,
    /// Every struct's members, when the build was read for them.
    pub(crate) members: Option<&'t crate::member_types::MemberTypes>,
}

impl source::Types for Resolver<'_> {
    fn member_type(&self, ty: &str, member: &str) -> Option<String> {
        self.names.member_type(ty, member).or_else(|| {
            let ty = self.names.canonical(ty);
            Some(self.members?.member_type(&ty, member)?.to_owned())
        })
    }

    fn canonical(&self, ty: &str) -> String {
        let known = self.names.canonical(ty);
        match (known == ty, self.members.and_then(|m| m.typedef(ty))) {
            (true, Some(named)) => named.to_owned(),
            _ => known,
        }
    }

    fn spellings(&self, ty: &str) -> Vec<String> {
        let mut out = self.names.spellings(ty);
        if let Some(members) = self.members {
            for typedef in members.typedefs_of(ty) {
                if !out.contains(&typedef) {
                    out.push(typedef);
                }
            }
        }
        out
    }
}

impl source::Types for Names<'_> {
    fn member_type(&self, ty: &str, member: &str) -> Option<String> {
        let id = *self.by_name.get(ty)?;
        let (m, _) = crate::path::find_member(self.table, id, member).ok()??;
        crate::member_types::struct_behind(self.table, m.ty)
    }

    fn canonical(&self, ty: &str) -> String {
        match self
            .by_name
            .get(ty)
            .and_then(|&id| self.table.composite(id))
        {
            Some(c) => c.name.clone().unwrap_or_else(|| ty.to_owned()),
            None => ty.to_owned(),
        }
    }

    fn spellings(&self, ty: &str) -> Vec<String> {
        let tagged = ["struct", "union"]
            .iter()
            .map(|k| format!("{k} {ty}"))
            .find(|s| self.by_name.contains_key(s));
        let Some(tagged) = tagged else {
            // A typedef's own name (of an anonymous struct), or a name the
            // build lacks: the word.
            return vec![ty.to_owned()];
        };
        let id = self.by_name[&tagged];
        let mut out = vec![tagged];
        let mut typedefs: Vec<String> = self
            .by_name
            .iter()
            .filter(|(name, i)| **i == id && !name.contains(' ') && name.as_str() != ty)
            .map(|(name, _)| name.clone())
            .collect();
        typedefs.sort();
        out.extend(typedefs);
        out
    }
}
