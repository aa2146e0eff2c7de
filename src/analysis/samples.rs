//! perf's samples placed on a struct of a build: each sample's type and
//! offset resolved against the build's own layout, wherever that type
//! sits relative to the struct (the struct itself, a struct it embeds, or
//! one that embeds it), and checked against the member perf named.

use std::collections::HashMap;

use super::{Origin, Span};
use crate::evidence::perf::{Format, Op, PerfFile, Sample};
use crate::layout::{self, Depth, Field};
use crate::model::{Type, TypeId, TypeTable};
use crate::rules::Class;

/// Elements of an array of structs walked for a sample, at most.
const MAX_ELEMENTS: u64 = 4096;

/// A sample placed on the struct.
#[derive(Clone, Debug)]
pub struct Placed<'p> {
    /// The sample.
    pub sample: &'p Sample,
    /// Its file.
    pub file: &'p PerfFile,
    /// Byte offset in the struct.
    pub offset: u64,
    /// The deepest member there, as a path from the struct.
    pub path: String,
}

/// A sample that names a type of the struct but does not fit its layout.
#[derive(Clone, Debug)]
pub struct Misfit<'p> {
    /// The sample.
    pub sample: &'p Sample,
    /// Its file.
    pub file: &'p PerfFile,
    /// Why, in words.
    pub why: String,
}

impl Misfit<'_> {
    /// The note, located at the sample's line.
    pub fn note(&self) -> String {
        format!(
            "{}:{}: {}",
            self.file.path.display(),
            self.sample.line,
            self.why
        )
    }
}

/// The samples of `files` placed on struct `root` of `table` (laid out
/// with `line`), and those that name one of its types but do not fit.
/// `types` names the build's types by perf's spelling (`struct ring`).
pub fn place<'p>(
    table: &TypeTable,
    root: TypeId,
    line: u64,
    types: &HashMap<String, TypeId>,
    files: &'p [PerfFile],
) -> (Vec<Placed<'p>>, Vec<Misfit<'p>>) {
    let (mut placed, mut misfits) = (Vec::new(), Vec::new());
    let Ok(root_layout) = layout::layout(table, root, line, Depth::Expand) else {
        return (placed, misfits);
    };
    let fields: Vec<&Field> = root_layout.fields().collect();
    let root_name = perf_name(table, root);
    // Where each type perf names sits in the root: offsets of the root in
    // it (negative: it encloses the root) or of it in the root.
    let mut bases: HashMap<&str, Vec<Base>> = HashMap::new();
    for file in files {
        for sample in &file.samples {
            let bases = bases.entry(sample.ty.as_str()).or_insert_with(|| {
                bases_of(table, root, &root_name, &fields, line, types, &sample.ty)
            });
            for base in bases.iter() {
                let Some(offset) = base.apply(sample.offset) else {
                    continue;
                };
                if offset >= root_layout.size {
                    // The root's own offset past its end is a misfit; an
                    // enclosing type's offset outside the root is not ours.
                    if base.shift == 0 && base.prefix.is_none() {
                        misfits.push(Misfit {
                            sample,
                            file,
                            why: format!(
                                "{} +{:#x} is past its end in this build ({} bytes)",
                                sample.ty, sample.offset, root_layout.size
                            ),
                        });
                    }
                    continue;
                }
                let Some(field) = covering(
                    &fields,
                    offset,
                    base.prefix.as_deref(),
                    sample.field.as_deref(),
                ) else {
                    misfits.push(Misfit {
                        sample,
                        file,
                        why: format!(
                            "{} +{:#x} falls in padding of {} in this build",
                            sample.ty, sample.offset, root_name
                        ),
                    });
                    continue;
                };
                if let Some(named) = &sample.field
                    && !agrees(&field.path, base.prefix.as_deref(), named)
                {
                    misfits.push(Misfit {
                        sample,
                        file,
                        why: format!(
                            "perf names '{named}' at {} +{:#x}, this build has '{}' there: \
                             a profile of another build?",
                            sample.ty, sample.offset, field.path
                        ),
                    });
                    continue;
                }
                placed.push(Placed {
                    sample,
                    file,
                    offset,
                    path: field.path.clone(),
                });
            }
        }
    }
    (placed, misfits)
}

/// Where a type perf names sits relative to the root.
#[derive(Clone, Debug)]
struct Base {
    /// Added to a sample's offset to give the root's (may be negative:
    /// the type encloses the root).
    shift: i128,
    /// The root's path in the perf type, when the type encloses the root,
    /// or the perf type's path in the root: perf's member name is then
    /// checked without it.
    prefix: Option<String>,
}

impl Base {
    fn apply(&self, offset: u64) -> Option<u64> {
        u64::try_from(i128::from(offset) + self.shift).ok()
    }
}

/// Does the build's `path` at the offset agree with perf's `named`
/// member? perf names from its own type: equal, or the same with the
/// root's path in it in front, or the inner type's path removed.
fn agrees(path: &str, prefix: Option<&str>, named: &str) -> bool {
    let strip = |p: &str| p.replace(['[', ']'], "");
    let (path, named) = (strip(path), strip(named));
    if path == named
        || path.starts_with(&format!("{named}."))
        || named.starts_with(&format!("{path}."))
    {
        return true;
    }
    let Some(prefix) = prefix.map(strip) else {
        return path.ends_with(&format!(".{named}"));
    };
    // perf's type encloses the root: its name has the root's path first.
    if let Some(rest) = named.strip_prefix(&format!("{prefix}.")) {
        return rest == path
            || path.starts_with(&format!("{rest}."))
            || rest.starts_with(&format!("{path}."));
    }
    // The root encloses perf's type: the path has the type's path first.
    let full = format!("{prefix}.{named}");
    path == full || path.starts_with(&format!("{full}.")) || path.ends_with(&format!(".{named}"))
}

/// The deepest member of `fields` holding byte `offset`; of a union's
/// alternatives there, the one perf `named` when one agrees with it.
fn covering<'f>(
    fields: &[&'f Field],
    offset: u64,
    prefix: Option<&str>,
    named: Option<&str>,
) -> Option<&'f Field> {
    let holding = || {
        fields
            .iter()
            .filter(move |f| f.offset <= offset && offset < f.end().max(f.offset + 1))
    };
    named
        .and_then(|n| {
            holding()
                .filter(|f| agrees(&f.path, prefix, n))
                .max_by_key(|f| f.depth)
        })
        .or_else(|| holding().max_by_key(|f| f.depth))
        .copied()
}

/// `struct NAME`, `union NAME`, or a typedef's or base type's name: how
/// perf names a type.
pub fn perf_name(table: &TypeTable, id: TypeId) -> String {
    match table.get(id) {
        Type::Composite(c) => format!("{} {}", c.kind.keyword(), c.name.as_deref().unwrap_or("")),
        Type::Typedef { name, .. } | Type::Base { name, .. } => name.clone(),
        _ => String::new(),
    }
}

/// Every place type `ty` (perf's name) has relative to the root.
fn bases_of(
    table: &TypeTable,
    root: TypeId,
    root_name: &str,
    fields: &[&Field],
    line: u64,
    types: &HashMap<String, TypeId>,
    ty: &str,
) -> Vec<Base> {
    let mut out = Vec::new();
    if ty == root_name {
        out.push(Base {
            shift: 0,
            prefix: None,
        });
        return out;
    }
    // The type inside the root: each member (or array element) of it.
    for f in fields {
        for (offset, _) in elements_of(table, f, ty) {
            out.push(Base {
                shift: i128::from(offset),
                prefix: Some(f.path.clone()),
            });
        }
    }
    // The type enclosing the root: where the root sits in it.
    if let Some(&outer) = types.get(ty)
        && outer != root
        && let Ok(l) = layout::layout(table, outer, line, Depth::Expand)
    {
        for f in l.fields() {
            for (offset, _) in elements_of(table, f, root_name) {
                out.push(Base {
                    shift: -i128::from(offset),
                    prefix: Some(f.path.clone()),
                });
            }
        }
    }
    out
}

/// The offsets of field `f` (or of its elements, for an array) when its
/// type is the one perf names `ty`.
fn elements_of(table: &TypeTable, f: &Field, ty: &str) -> Vec<(u64, u64)> {
    let id = table.strip(f.ty);
    if perf_name(table, id) == ty || perf_name(table, f.ty) == ty {
        return vec![(f.offset, f.size)];
    }
    if let Type::Array { element, dims } = table.get(id)
        && (perf_name(table, table.strip(*element)) == ty || perf_name(table, *element) == ty)
        && let Some(size) = table.size_of(*element).filter(|&s| s > 0)
    {
        let n = crate::model::element_count(dims)
            .unwrap_or(0)
            .min(MAX_ELEMENTS);
        return (0..n).map(|i| (f.offset + i * size, size)).collect();
    }
    Vec::new()
}

/// `placed`, samples placed on struct `root` as `from` (the build as
/// compiled, which perf ran) lays it out, carried to where `to` (the
/// same types with a plan applied) puts the members they fell on; each
/// one whose member `to` no longer has is a note (of `config`).
pub fn carried<'p>(
    from: &TypeTable,
    to: &TypeTable,
    root: TypeId,
    placed: Vec<Placed<'p>>,
    config: &str,
) -> (Vec<Placed<'p>>, Vec<String>) {
    let (mut kept, mut notes) = (Vec::with_capacity(placed.len()), Vec::new());
    let at = |table: &TypeTable, path: &str| {
        let parsed = crate::path::MemberPath::parse(&format!("root.{path}")).ok()?;
        crate::path::resolve(table, root, &parsed.steps, path)
            .ok()
            .map(|r| r.offset)
    };
    for mut p in placed {
        match (at(from, &p.path), at(to, &p.path)) {
            (Some(was), Some(is)) if p.offset >= was => {
                p.offset = is + (p.offset - was);
                kept.push(p);
            }
            _ => notes.push(format!(
                "[{config}] {}:{}: perf's samples on '{}' have no place in the planned layout",
                p.file.path.display(),
                p.sample.line,
                p.path
            )),
        }
    }
    (kept, notes)
}

/// The samples `placed` on bytes `[offset, offset + size)`.
pub fn samples_in(placed: &[Placed<'_>], offset: u64, size: u64) -> f64 {
    placed
        .iter()
        .filter(|p| p.offset >= offset && p.offset < offset.saturating_add(size.max(1)))
        .map(|p| p.sample.samples)
        .sum()
}

/// Notes, at the rule, for the hot-read rules perf saw written: a store,
/// an update or a locked update on their bytes, by function.
pub fn contradicted(spans: &[Span], placed: &[Placed<'_>], config: &str) -> Vec<String> {
    let mut out = Vec::new();
    for span in spans.iter().filter(|s| s.class == Some(Class::HotRead)) {
        let Origin::Rule { at, .. } = &span.origin else {
            continue;
        };
        let end = span.offset.saturating_add(span.size.max(1));
        let writes: Vec<String> = placed
            .iter()
            .filter(|p| p.offset >= span.offset && p.offset < end)
            .filter(|p| p.sample.op.is_some_and(|op| op != Op::Load))
            .map(|p| {
                format!(
                    "{} in {} ({}:{})",
                    p.sample.op.map_or("", |o| o.name()),
                    p.sample.function.as_deref().unwrap_or("?"),
                    p.file.path.display(),
                    p.sample.line
                )
            })
            .collect();
        if let Some(first) = writes.first() {
            out.push(format!(
                "{}:{}:{}: [{config}] '{}' is ruled hot-read, but perf saw it written: {first}{}",
                at.file.display(),
                at.line,
                at.column,
                span.path,
                match writes.len() {
                    1 => String::new(),
                    n => format!(" and {} more", n - 1),
                }
            ));
        }
    }
    out
}

/// perf's shares of each member the samples fall in, and of every member
/// enclosing it, as perf printed them: the percentage of all samples
/// (`perf report`), of the type's (`annotate --data-type`), and the
/// samples on its instructions (`--code-with-type`), per file.
pub fn shares(placed: &[Placed<'_>]) -> std::collections::BTreeMap<String, String> {
    use std::collections::BTreeMap;
    // path → per file: the percentages or samples summed, and the type.
    let mut sums: BTreeMap<String, Vec<(&PerfFile, f64, String)>> = BTreeMap::new();
    for p in placed {
        let value = match p.file.format {
            Format::CodeWithType => p.sample.samples,
            _ => p.sample.shown.trim_end_matches('%').parse().unwrap_or(0.0),
        };
        let mut path = p.path.as_str();
        loop {
            let entry = sums.entry(path.to_owned()).or_default();
            match entry.iter_mut().find(|(f, ..)| std::ptr::eq(*f, p.file)) {
                Some(e) => e.1 += value,
                None => entry.push((p.file, value, p.sample.ty.clone())),
            }
            match path.rfind(['.', '[']) {
                Some(i) => path = &path[..i],
                None => break,
            }
        }
    }
    sums.into_iter()
        .map(|(path, files)| {
            let parts: Vec<String> = files
                .iter()
                .map(|(f, v, ty)| match f.format {
                    Format::Report => format!("{v:.2}% of all samples"),
                    Format::AnnotateType => format!("{v:.2}% of {ty}'s"),
                    Format::CodeWithType => {
                        format!("{v:.0} samples on its instructions")
                    }
                })
                .collect();
            (path, parts.join(", "))
        })
        .collect()
}
