//! Fuzz target: cachelint::exercise::rst on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cachelint::exercise::rst(data);
});
