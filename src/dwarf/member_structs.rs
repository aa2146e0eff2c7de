//! Of every named struct and union of a DWARF file (its first layout of
//! each name), the members that lead to a struct: the parts of
//! [`crate::member_types::MemberTypes`]. Units are decoded in parallel,
//! as `sizes` decodes them.

use rayon::prelude::*;

use crate::dwarf::DwarfFile;
use crate::dwarf::decode::Decoder;
use crate::dwarf::layouts;
use crate::error::Result;
use crate::member_types::StructPart;
use crate::model::TypeId;

/// Anonymous members nested deeper than this are not followed.
const MAX_ANONYMOUS_DEPTH: usize = 8;

/// `(struct, its members' structs)` for every named struct and union of
/// `file`, in file order.
pub(crate) fn scan(file: &DwarfFile<'_>) -> Result<Vec<StructPart>> {
    let firsts = layouts::first_layouts(file)?;
    let by_unit = layouts::by_unit(&firsts);
    let per_unit: Vec<Vec<StructPart>> = by_unit
        .par_iter()
        .map(|defs| {
            let mut decoder = Decoder::without_source_locations(file);
            let mut out = Vec::with_capacity(defs.len());
            for d in defs.iter() {
                let Some(name) = file.name_str(d.name) else {
                    continue;
                };
                let id = decoder.type_at(d.unit, d.offset)?;
                load_deep(&mut decoder, id, 0)?;
                out.push((
                    name.to_owned(),
                    crate::member_types::member_structs(&decoder.table, id),
                ));
            }
            Ok(out)
        })
        .collect::<Result<_>>()?;
    Ok(per_unit.into_iter().flatten().collect())
}

/// `(typedef, struct)` for every typedef of `file` that names a struct or
/// union (through qualifiers and other typedefs: `pg_data_t` is
/// `pglist_data`), its first definition of each name, in file order.
pub(crate) fn typedefs(file: &DwarfFile<'_>) -> Result<Vec<(String, String)>> {
    use crate::dwarf::index::{self, Filter};
    let mut seen = std::collections::HashSet::new();
    let firsts: Vec<index::Definition<'_>> = index::scan(file, &Filter::Typedefs)?
        .into_iter()
        .filter(|d| seen.insert(d.name))
        .collect();
    let per_chunk: Vec<Vec<(String, String)>> = firsts
        .par_chunks(256)
        .map(|chunk| {
            let mut decoder = Decoder::without_source_locations(file);
            let mut out = Vec::new();
            for d in chunk {
                let id = decoder.type_at(d.unit, d.offset)?;
                let named = decoder.table.strip(id);
                if let Some(name) = decoder.table.composite(named).and_then(|c| c.name.clone()) {
                    out.push((d.name.to_owned(), name));
                }
            }
            Ok(out)
        })
        .collect::<Result<_>>()?;
    Ok(per_chunk.into_iter().flatten().collect())
}

/// Loads the members of `id` and of its anonymous members, recursively.
fn load_deep(decoder: &mut Decoder<'_, '_>, id: TypeId, depth: usize) -> Result<()> {
    decoder.load_members(id)?;
    if depth >= MAX_ANONYMOUS_DEPTH {
        return Ok(());
    }
    let anonymous: Vec<TypeId> = decoder
        .table
        .composite(id)
        .and_then(|c| c.members.as_ref())
        .map(|ms| {
            ms.iter()
                .filter(|m| m.name.is_none())
                .map(|m| decoder.table.strip(m.ty))
                .collect()
        })
        .unwrap_or_default();
    for inner in anonymous {
        load_deep(decoder, inner, depth + 1)?;
    }
    Ok(())
}
