//! Whole-pipeline drivers over bytes in memory, for the fuzz targets
//! (`fuzz/`) and the regression corpus test (`tests/integration/corpus.rs`): each runs
//! one input through every stage that reads it and must return, never
//! panic, whatever the bytes are. Errors are the expected outcome for
//! most inputs and are discarded.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, LazyLock};

use crate::analysis;
use crate::dwarf::DwarfFile;
use crate::dwarf::contains::Contains;
use crate::dwarf::decode::Decoder;
use crate::dwarf::index::{self, Filter};
use crate::input::{self, DebugSections};
use crate::layout::{self, Depth};
use crate::model::{TypeId, TypeTable};
use crate::rules::{self, Rules};

/// Types fully decoded and analysed per input, so one run stays short.
///
/// The drivers also stop at the first type whose expanded layout fails, or
/// whose analysis stops at a walk limit: a corrupt input's later structs
/// mostly fail the same way (they hold the same bad member). One that hits
/// the layout budget (200,000 rows) costs tens of milliseconds, one that
/// takes the analysis walk to its limits (200,000 fields or structs) 0.2 to
/// 0.5 s, each time; together they held the btf target near 20 to 30 runs
/// a second. The fuzzer reaches each of those paths through the first
/// struct.
const MAX_TYPES: usize = 16;

/// Struct instances the analysis may walk per input, over all its types,
/// before the drivers stop: twice the largest kernel root's (`rcu_state`,
/// 9,909 in 6.12). A root under every walk limit can still cost 0.05 to
/// 0.3 s (nested arrays of structs that hold annotated fields), and an
/// input can hold several; the budget cut the btf corpus's replay from
/// 108.6 to 94.7 s.
const MAX_VISITS_PER_INPUT: usize = 20_000;

/// A rules file that annotates the fields the fixtures define.
const RULES: &str = "[lru_gen_folio]\nenabled = \"hot-read\"\nrefaulted = \"lockless-write\"\n\
                     folios = { class = \"lock-protected\", lock = \"lruvec.lru_lock\" }\n\
                     [lruvec]\nlru_lock = \"lock\"\n";

/// [`RULES`] parsed once for every input. A parse error is a bug in
/// [`RULES`], not in an input: it panics on the first run (and in
/// `tests/integration/corpus.rs`) rather than fuzzing without rules.
static DRIVER_RULES: LazyLock<Rules> = LazyLock::new(|| {
    rules::toml::parse(&Arc::from(Path::new("rules.toml")), RULES)
        .expect("the drivers' rules parse")
});

/// ELF with DWARF: sections, unit headers, the raw scans (index by name
/// and with every name, the whole-file name index and its byte form,
/// layouts for `sizes`, containment, the functions defined), and the layout and analysis of the
/// first few structs.
pub fn elf(data: &[u8]) {
    let Ok(sections) = DebugSections::load(Path::new("input"), data) else {
        return;
    };
    let Ok(dwarf) = DwarfFile::new(&sections) else {
        return;
    };
    let _ = crate::load::sizes::struct_sizes(&dwarf);
    let _ = index::lookup(&dwarf, &HashSet::from(["lruvec", "no_such_type"]));
    if let Ok(names) = crate::dwarf::name_index::NameIndex::build(&dwarf) {
        // What a cache file would hold, read back against the same file.
        let _ = crate::dwarf::name_index::NameIndex::decode(&names.encode(), &dwarf);
    }
    let every_unit: HashSet<usize> = (0..dwarf.units.len()).collect();
    let _ = Contains::scan(&dwarf, &every_unit, 1);
    // The units and functions the audit checks code against.
    let _ = crate::dwarf::functions::built(&dwarf);
    let Ok(defs) = index::scan(&dwarf, &Filter::Composites) else {
        return;
    };
    let mut decoder = Decoder::new(&dwarf);
    let mut visits = 0;
    for d in defs.iter().take(MAX_TYPES) {
        let Ok(id) = decoder.type_at(d.unit, d.offset) else {
            continue;
        };
        if decoder.load_deep(id).is_err() {
            continue;
        }
        let _ = layout::layout(&decoder.table, id, sections.cacheline, Depth::Direct);
        if !expand_and_analyse(&decoder.table, id, d.name, sections.cacheline, &mut visits) {
            break;
        }
    }
}

/// BTF, raw or in an ELF's `.BTF` (with the pointer and cacheline sizes
/// the commands take from it): the parse, `sizes`, and the layout and
/// analysis of the first structs.
pub fn btf(data: &[u8]) {
    let Ok((bytes, pointer, cacheline)) = input::btf_of(Path::new("input"), data) else {
        return;
    };
    let Ok(types) = crate::btf::parse(&[&bytes], pointer, cacheline) else {
        return;
    };
    let _ = crate::load::sizes::btf_sizes(&types);
    let mut visits = 0;
    for &id in types.composites.iter().take(MAX_TYPES) {
        if !expand_and_analyse(&types.table, id, "root", cacheline, &mut visits) {
            break;
        }
    }
}

/// Lays out root `id` expanded and analyses it with [`DRIVER_RULES`] on
/// `cacheline`-byte lines, adding the struct instances walked to `visits`.
/// False once the input's later roots are not worth their cost: this one's
/// layout failed, its walk hit a limit, or the input is over
/// [`MAX_VISITS_PER_INPUT`].
fn expand_and_analyse(
    table: &TypeTable,
    id: TypeId,
    name: &str,
    cacheline: u64,
    visits: &mut usize,
) -> bool {
    let expanded = layout::layout(table, id, cacheline, Depth::Expand);
    let analysed = analysis::analyze(table, id, name, cacheline, &DRIVER_RULES);
    *visits += analysed.annotated.visits;
    expanded.is_ok() && !analysed.annotated.stopped && *visits <= MAX_VISITS_PER_INPUT
}

/// The fixtures' base build, opened once: what name indexes are read
/// against.
static DRIVER_SECTIONS: LazyLock<DebugSections<'static>> = LazyLock::new(|| {
    let bytes = include_bytes!("../fixtures/bin/gcc-dwarf5-base");
    DebugSections::load(Path::new("gcc-dwarf5-base"), bytes).expect("the fixture's DWARF loads")
});

/// [`DRIVER_SECTIONS`]' DWARF.
static DRIVER_DWARF: LazyLock<DwarfFile<'static>> =
    LazyLock::new(|| DwarfFile::new(&DRIVER_SECTIONS).expect("the fixture's units read"));

/// The bytes of a name index (what a cache file holds after its key and
/// checksum), read against the fixtures' base build; when they decode,
/// the first names are looked up through it, decoding whatever DIEs its
/// offsets point at.
pub fn name_index(data: &[u8]) {
    let file = &*DRIVER_DWARF;
    let Some(index) = crate::dwarf::name_index::NameIndex::decode(data, file) else {
        return;
    };
    let mut decoder = Decoder::new(file);
    for name in index.names().take(MAX_TYPES) {
        if let Ok(spec) = crate::load::lookup::TypeSpec::parse(name) {
            let _ = crate::load::lookup::find_indexed(
                &mut decoder,
                &index,
                &[spec],
                Path::new("input"),
            );
        }
    }
}

/// A TOML rules file.
pub fn rules_toml(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(parsed) = rules::toml::parse(&Arc::from(Path::new("r.toml")), &text) {
        let mut merged = Rules::default();
        if merged.merge(parsed).is_ok() {
            let _ = merged.resolve_contexts();
        }
    }
}

/// A net_cachelines table.
pub fn rst(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = rules::rst::parse(&Arc::from(Path::new("t.rst")), &text);
}

/// The fixtures' base build as BTF, parsed once: the types plans are
/// applied to.
static DRIVER_TYPES: LazyLock<crate::btf::BtfTypes> = LazyLock::new(|| {
    let raw = include_bytes!("../fixtures/bin/gcc-btf-base.raw");
    crate::btf::parse(&[raw], 8, 64).expect("the fixture's BTF parses")
});

/// A TOML plan file: the parse, and when it parses, the plan applied to
/// the fixtures' structs and the planned structs laid out.
pub fn plan(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(plan) = crate::plan::Plan::parse(Path::new("p.toml"), &text) else {
        return;
    };
    let types = &*DRIVER_TYPES;
    let mut table = types.table.clone();
    let mut planner =
        crate::plan::planner::Planner::new(Arc::new(plan), crate::plan::abi::Abi::default(), 64);
    if planner.apply(&mut table, &types.composites).is_ok() {
        let mut visits = 0;
        for &id in types.composites.iter().take(MAX_TYPES) {
            if !expand_and_analyse(&table, id, "root", 64, &mut visits) {
                break;
            }
        }
    }
}

/// The header patch (`suggest --source-tree`) on any text and any member
/// lines: the first byte is the struct's line, the second the number of
/// members to order (up to 8), then one byte per member's line and one
/// for a member removed (0: none), then the header text.
pub fn header_patch(data: &[u8]) {
    let [struct_line, count, rest @ ..] = data else {
        return;
    };
    let count = usize::from(*count % 9).min(rest.len());
    let (lines, rest) = rest.split_at(count);
    let Some((removed, text)) = rest.split_first() else {
        return;
    };
    let order: Vec<crate::csource::member_order::Piece> = lines
        .iter()
        .enumerate()
        .map(|(i, &l)| match i % 3 {
            2 => crate::csource::member_order::Piece::AlignedGroup("g".into(), vec![u64::from(l)]),
            _ => crate::csource::member_order::Piece::Member(u64::from(l)),
        })
        .collect();
    let removed: Vec<u64> = (*removed != 0)
        .then_some(u64::from(*removed))
        .into_iter()
        .collect();
    let text = String::from_utf8_lossy(text);
    let _ = crate::csource::member_order::reorder(
        "x.h",
        &text,
        u64::from(*struct_line),
        &order,
        &removed,
        &[],
    );
}

/// A variant file: the parse and its matrix (paths are resolved against a
/// directory that need not exist; nothing is built), then the option
/// edits, and the file list of a patch, from the same text.
pub fn variant_file(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = crate::variant::parse_file(Path::new("/nonexistent/v.toml"), &text);
    for line in text.lines().take(64) {
        let _ = crate::variant::Edit::parse(line);
    }
    let _ = crate::variant::patched_files(&text);
}

/// perf's data-type outputs: the text recognised and parsed (any of the
/// three), and each line's instruction classified.
pub fn perf_output(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = crate::evidence::perf::parse(Path::new("perf.txt"), &text);
    for line in text.lines().take(256) {
        let _ = crate::evidence::perf::op_of(line);
    }
}

/// A C file as `draft --source-tree` reads it: member annotations and
/// the writes and locks of its functions, for two struct names (one
/// embedding the other).
pub fn c_declarations(data: &[u8]) {
    struct Two;
    impl crate::evidence::source::Types for Two {
        fn member_type(&self, ty: &str, member: &str) -> Option<String> {
            (ty == "outer" && member == "in").then(|| "inner".to_owned())
        }
        fn canonical(&self, ty: &str) -> String {
            ty.to_owned()
        }
    }
    let text = String::from_utf8_lossy(data);
    let types = ["inner".to_owned(), "outer".to_owned()];
    // A header: its wrappers are read, its calls followed; a `.c` file:
    // its own wrappers read first from the same tree, its calls passing
    // built objects followed.
    for file in ["x.h", "x.c"] {
        let _ = crate::evidence::source::read_all(&[(Path::new(file), &text)], &types, &Two);
    }
    // Two `.c` files and a header, split at `#file` lines: each file's
    // external wrappers known to the others, read again.
    let files: Vec<&str> = text.split("\n#file\n").take(3).collect();
    if files.len() > 1 {
        let names = ["a.c", "b.c", "c.h"];
        let texts: Vec<(&Path, &str)> = names
            .iter()
            .zip(&files)
            .map(|(name, text)| (Path::new(*name), *text))
            .collect();
        let _ = crate::evidence::source::read_all(&texts, &types, &Two);
    }
}
