//! Fuzz target: cachelint::exercise::c_declarations on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cachelint::exercise::c_declarations(data);
});
