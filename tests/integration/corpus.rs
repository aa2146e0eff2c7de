//! Replays every input in tests/corpus/TARGET (inputs the fuzzers found,
//! kept after their fix, plus whatever `scripts/fuzz.sh` adds there)
//! through the same drivers the fuzz targets use: each must return, never
//! panic.

use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return 0;
    };
    let mut n = 0;
    for entry in entries {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let outcome = std::panic::catch_unwind(|| run(&data));
        assert!(outcome.is_ok(), "{} panics", path.display());
        n += 1;
    }
    n
}

#[test]
fn the_corpus_never_panics() {
    let mut total = 0;
    total += replay("elf", cachelint::exercise::elf);
    total += replay("btf", cachelint::exercise::btf);
    total += replay("rules_toml", cachelint::exercise::rules_toml);
    total += replay("rst", cachelint::exercise::rst);
    total += replay("plan", cachelint::exercise::plan);
    total += replay("name_index", cachelint::exercise::name_index);
    total += replay("header_patch", cachelint::exercise::header_patch);
    total += replay("variant_file", cachelint::exercise::variant_file);
    total += replay("perf_output", cachelint::exercise::perf_output);
    total += replay("c_declarations", cachelint::exercise::c_declarations);
    assert!(total > 0, "tests/corpus holds no input");
}
