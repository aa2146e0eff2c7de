//! Fuzz target: cachelint::exercise::variant_file on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cachelint::exercise::variant_file(data);
});
