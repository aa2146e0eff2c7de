//! Fuzz target: cachelint::exercise::plan on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cachelint::exercise::plan(data);
});
