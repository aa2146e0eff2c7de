//! Opening the builds of a run: each file once, in parallel, with every
//! lookup the command wants and the rules need done while it is open.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::parallel::in_order;
use super::{Decoded, Input, Opened, Want};
use crate::error::{Error, Result};
use crate::load::lookup::{self, Located, Present};
use crate::load::{Loaded, Reading};
use crate::model::{TypeId, TypeTable};
use crate::plan::Plan;
use crate::plan::abi::Abi;
use crate::plan::planner::Planner;
use crate::rules::Rules;
use crate::variant::Wanted;

/// Opens every input, builds of the same file once, in the inputs' order.
pub(super) fn all(
    inputs: &[Arc<dyn Input>],
    rules: &Rules,
    want: &Want,
    reading: &Reading,
    plan: Option<&Arc<Plan>>,
    keep_failed: bool,
) -> Result<Vec<Opened>> {
    // The first input of each file is opened; the others share it.
    let mut first: Vec<usize> = Vec::new();
    let mut of: Vec<usize> = Vec::with_capacity(inputs.len());
    for (i, input) in inputs.iter().enumerate() {
        let key = input.key();
        match first.iter().position(|&f| inputs[f].key() == key) {
            Some(u) => of.push(u),
            None => {
                of.push(first.len());
                first.push(i);
            }
        }
    }
    let wanted = wanted(rules, want, plan);
    let decoded = in_order(&first, |&i| {
        let mut decoded = None;
        let opened = inputs[i].open(reading, &wanted, &mut |loaded| {
            decoded = Some(decode(loaded, rules, want, plan, reading)?);
            Ok(())
        });
        match opened {
            Err(Error::VariantBuild(why)) if keep_failed => Ok(Arc::new(Decoded::failed(why))),
            Err(e) => Err(e),
            Ok(()) => Ok(Arc::new(decoded.expect("an opened build is decoded"))),
        }
    })?;
    Ok(inputs
        .iter()
        .zip(of)
        .map(|(input, u)| Opened {
            build: input.build().clone(),
            data: decoded[u].clone(),
            input: input.clone(),
        })
        .collect())
}

impl Decoded {
    /// A build that could not be made, for `why`: no types.
    fn failed(why: String) -> Decoded {
        Decoded {
            build_line: 64,
            abi: Abi::default(),
            notes: Vec::new(),
            table: TypeTable::new(),
            present: HashMap::new(),
            found: Vec::new(),
            by_name: Vec::new(),
            renames: HashMap::new(),
            member_renames: HashMap::new(),
            roots: Vec::new(),
            embedders: Vec::new(),
            kernel_config: None,
            sizes: Vec::new(),
            member_types: None,
            built: None,
            contended: Vec::new(),
            failed: Some(why),
            plan_missing: None,
        }
    }
}

/// Every type a run will look up in a build, before it is opened: the
/// types asked for, the rules' (with their lock owners), the plan's, the
/// kernel's cacheline padding; those whose roots are discovered.
fn wanted(rules: &Rules, want: &Want, plan: Option<&Arc<Plan>>) -> Wanted {
    let mut names: Vec<String> = needed_names(rules).into_iter().map(str::to_owned).collect();
    names.extend(want.names.iter().cloned());
    if let Some(plan) = plan {
        // Scalars are told from types by the ABI; a scalar's name asked
        // for is simply not found.
        names.extend(Planner::new(plan.clone(), Abi::default(), 64).wanted_names());
    }
    names.push(crate::layout::PADDING_TYPE.to_owned());
    names.sort();
    names.dedup();
    let mut required: Vec<String> = want.specs.iter().map(|s| s.name.clone()).collect();
    required.sort();
    required.dedup();
    let mut files: Vec<String> = want
        .specs
        .iter()
        .filter_map(|s| match &s.pick {
            crate::load::lookup::Pick::File(file) => Some(file.clone()),
            _ => None,
        })
        .collect();
    files.sort();
    files.dedup();
    let mut discover: Vec<String> = match want.roots {
        true => rules
            .discovered_types()
            .into_iter()
            .map(str::to_owned)
            .collect(),
        false => Vec::new(),
    };
    discover.extend(want.embedders_of.iter().cloned());
    discover.sort();
    discover.dedup();
    Wanted {
        names,
        required,
        files,
        discover,
    }
}

/// Everything `want` and `rules` ask of one loaded build.
fn decode(
    loaded: &mut Loaded<'_, '_>,
    rules: &Rules,
    want: &Want,
    plan: Option<&Arc<Plan>>,
    reading: &Reading,
) -> Result<Decoded> {
    let found = match want.specs.is_empty() {
        true => Vec::new(),
        false => loaded.find(&want.specs)?,
    };
    let mut names = needed_names(rules);
    names.extend(want.names.iter().map(String::as_str));
    // The plan's structs (and the types of members it adds) are decoded
    // too, to be laid out; only the names asked for stay `present`.
    let plan_names = plan
        .map(|p| Planner::new(p.clone(), loaded.abi(), loaded.cacheline).wanted_names())
        .unwrap_or_default();
    let mut all = names.clone();
    all.extend(plan_names.iter().map(String::as_str));
    // The kernel's cacheline padding tells the build's line size where the
    // debug info records alignments (DWARF; BTF does not).
    let padding_type = crate::layout::PADDING_TYPE;
    let probe_padding = loaded.capabilities().alignment_attributes && !all.contains(&padding_type);
    if probe_padding {
        all.insert(padding_type);
    }
    let mut present = match all.is_empty() {
        true => Present::default(),
        // Roots discovery reads every unit defining an annotated or
        // reviewed type: a scan finds them all; the cache's name index
        // (first layouts only) serves the rest.
        false => loaded.find_present(&all, want.roots || !want.embedders_of.is_empty())?,
    };
    let plan_missing = plan.and_then(|p| {
        p.types.iter().find_map(|t| {
            // `OUTER.MEMBER...`: OUTER, and its anonymous members holding
            // each MEMBER in turn.
            let outer = crate::plan::outer(&t.name);
            let Some(found) = present.types.get(outer) else {
                let why = format!(
                    "no struct, union or typedef named '{outer}' in {}{}",
                    loaded.build.path.display(),
                    loaded.did_you_mean(&[outer])
                );
                return Some((t.at.clone(), why));
            };
            let member =
                crate::plan::embedding::anonymous_path(loaded.table(), found.id, &t.name).err()?;
            let why = format!(
                "struct {outer} has no anonymous struct or union holding '{member}' in {}",
                loaded.build.path.display()
            );
            Some((t.at.clone(), why))
        })
    });
    let padding = present
        .types
        .get(padding_type)
        .and_then(|f| loaded.table().composite(f.id)?.alignment);
    present.types.retain(|n, _| names.contains(n.as_str()));
    present.units.retain(|n, _| names.contains(n.as_str()));
    let renames = alias_renames(rules, &present.types, loaded.table(), loaded)?;
    let mut by_name: Vec<TypeId> = found.iter().map(|f| f.id).collect();
    by_name.extend(present.types.values().map(|f| f.id));
    let roots = match want.roots {
        true => {
            let rules = super::analyze::renamed(rules, &renames, &HashMap::new());
            rule_roots(loaded, &mut present, &rules)?
        }
        false => Vec::new(),
    };
    let embedders: Vec<&str> = want
        .embedders_of
        .iter()
        .map(String::as_str)
        .filter(|n| present.types.contains_key(*n))
        .collect();
    let embedders = match embedders.is_empty() {
        true => Vec::new(),
        false => loaded.discover_roots(&mut present, &embedders)?,
    };
    let kernel_config = want.kernel_config.then(|| loaded.kernel_config()).flatten();
    let beside = match kernel_config {
        Some(_) => None,
        None => loaded.config_beside(),
    };
    let line = super::line::of(
        loaded.cacheline,
        kernel_config.as_ref().or(beside.as_ref()),
        padding,
    );
    let mut notes = loaded.notes();
    notes.extend(line.note(loaded.cacheline));
    let member_types = match want.member_types {
        true => Some(loaded.member_types()?),
        false => None,
    };
    let built = match want.built {
        true => loaded.built()?,
        false => None,
    };
    let contended = match &want.contended_in {
        Some(within) => contended(loaded, &mut present, member_types.as_ref(), within, reading)?,
        None => Vec::new(),
    };
    let sizes = match want.sizes {
        true => loaded.sizes()?,
        false => Vec::new(),
    };
    let member_renames = member_renames(rules, &renames, &present.types, loaded.table());
    Ok(Decoded {
        build_line: line.size,
        abi: loaded.abi(),
        notes,
        table: loaded.take_table(),
        present: present.types,
        found,
        by_name,
        renames,
        member_renames,
        roots,
        embedders,
        kernel_config,
        sizes,
        member_types,
        built,
        contended,
        failed: None,
        plan_missing,
    })
}

/// The structs the code of `within` writes from many CPUs at once that
/// the build has, most written first, each read into `present`.
fn contended(
    loaded: &mut Loaded<'_, '_>,
    present: &mut Present,
    member_types: Option<&crate::member_types::MemberTypes>,
    within: &super::ContendedIn,
    reading: &Reading,
) -> Result<Vec<(String, usize)>> {
    let at = super::evidence::index_at(reading, &loaded.build.path)?;
    let arch = within.arch.as_deref().or(loaded.abi().arch);
    let mut found = {
        let resolver = crate::evidence::Resolver {
            names: crate::evidence::Names::of(loaded.table()),
            members: member_types,
        };
        crate::evidence::source::contended(&within.tree, &resolver, arch, &within.under, &at)?
    };
    // An atomic's own counter is written by the atomic's implementation.
    found.retain(|(n, _)| !crate::analysis::draft::is_primitive(n));
    let names: HashSet<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
    // Every unit defining each: a holder is defined beside the one it
    // holds (backing_file in fs/file_table.c), and the name index gives
    // only a type's first unit.
    let more = loaded.find_present(&names, true)?;
    found.retain(|(n, _)| more.types.contains_key(n));
    for (name, f) in more.types {
        present.types.entry(name).or_insert(f);
    }
    for (name, units) in more.units {
        present.units.entry(name).or_default().extend(units);
    }
    // The structs holding them, decoded with them: the layout half checks
    // a holder's pairs across the two.
    let contended: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
    if !contended.is_empty() {
        loaded.discover_roots(present, &contended)?;
    }
    Ok(found)
}

/// Every type name the rules mention: annotated types and their aliases,
/// roots, `[placement]` and `[heat]` types, `[[allow]]` types and the
/// owners of `TYPE.member` locks.
fn needed_names(rules: &Rules) -> HashSet<&str> {
    let mut names: HashSet<&str> = rules.types.iter().flat_map(|t| t.names()).collect();
    names.extend(rules.roots.iter().map(|(n, _)| n.as_str()));
    names.extend(rules.placement.iter().map(|p| p.ty.as_str()));
    names.extend(rules.heat.iter().map(|h| h.ty.as_str()));
    names.extend(
        rules
            .allow
            .iter()
            .flat_map(|a| a.fields.iter().map(|f| f.ty.as_str())),
    );
    for ty in &rules.types {
        for lock in ty.fields.iter().filter_map(|f| f.lock.as_ref()) {
            if let Some((owner, _)) = lock.text.split_once('.') {
                names.insert(owner);
            }
        }
    }
    names
}

/// For each type of the rules with aliases, the alias the build defines it
/// under when it lacks the type's own name. A build that defines two of
/// its names with different layouts is an error at the second alias: the
/// rules cannot tell which one they describe. The same layout under two
/// names (a typedef, a copy) is the type's own name.
fn alias_renames(
    rules: &Rules,
    found: &HashMap<String, Located>,
    table: &TypeTable,
    loaded: &Loaded<'_, '_>,
) -> Result<HashMap<String, String>> {
    let mut renames = HashMap::new();
    for ty in rules.types.iter().filter(|t| !t.aliases.is_empty()) {
        let mut first: Option<(&str, TypeId)> =
            found.get(&ty.name).map(|f| (ty.name.as_str(), f.id));
        for (alias, at) in &ty.aliases {
            let Some(f) = found.get(alias) else {
                continue;
            };
            match first {
                None => first = Some((alias, f.id)),
                Some((name, id)) => {
                    if lookup::layout_key(table, id) != lookup::layout_key(table, f.id) {
                        return Err(at.error(format!(
                            "{} defines both '{name}' and its alias '{alias}' of [{}], with different layouts: \
                             the rules cannot tell which one they describe (drop the alias, or annotate each in a table of its own)",
                            loaded.build.path.display(),
                            ty.name
                        )));
                    }
                }
            }
        }
        if let Some((name, _)) = first
            && name != ty.name
        {
            renames.insert(ty.name.clone(), name.to_owned());
        }
    }
    Ok(renames)
}

/// For each member rule with `was` names whose member the build lacks,
/// the first of those names it has.
fn member_renames(
    rules: &Rules,
    renames: &HashMap<String, String>,
    found: &HashMap<String, Located>,
    table: &TypeTable,
) -> crate::rules::MemberRenames {
    let mut out = HashMap::new();
    for ty in &rules.types {
        let name = renames.get(&ty.name).unwrap_or(&ty.name);
        let Some(f) = found.get(name) else {
            continue;
        };
        let has = |path: &str| {
            let text = format!("{name}.{path}");
            crate::path::MemberPath::parse(&text)
                .and_then(|p| crate::path::resolve(table, f.id, &p.steps, &text))
                .is_ok()
        };
        for field in ty.fields.iter().filter(|f| !f.was.is_empty()) {
            if has(&field.path) {
                continue;
            }
            if let Some(was) = field.was.iter().find(|w| has(w)) {
                out.insert((name.clone(), field.path.clone()), was.clone());
            }
        }
    }
    out
}

/// The roots the rules give in a build: their `roots` it has, the
/// structs they place (a `[placement]` row says where objects of it
/// start, so there are objects of it: `file` in its own slab cache, not
/// only inside `backing_file`), then the outermost structs embedding
/// their types (discovered; each added to `present`), in that order.
fn rule_roots(
    loaded: &mut Loaded<'_, '_>,
    present: &mut Present,
    rules: &Rules,
) -> Result<Vec<String>> {
    let mut roots: Vec<String> = Vec::new();
    let given = rules.roots.iter().map(|(n, _)| n);
    for name in given.chain(rules.placement.iter().map(|p| &p.ty)) {
        if present.types.contains_key(name) && !roots.contains(name) {
            roots.push(name.clone());
        }
    }
    let discover: Vec<&str> = rules
        .discovered_types()
        .into_iter()
        .filter(|n| present.types.contains_key(*n))
        .collect();
    if !discover.is_empty() {
        for root in loaded.discover_roots(present, &discover)? {
            if !roots.contains(&root) {
                roots.push(root);
            }
        }
    }
    Ok(roots)
}
