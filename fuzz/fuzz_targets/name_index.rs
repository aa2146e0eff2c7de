//! Fuzz target: cachelint::exercise::name_index on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cachelint::exercise::name_index(data);
});
