//! Fuzz target: cachelint::exercise::btf on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cachelint::exercise::btf(data);
});
