//! Fuzz target: cachelint::exercise::header_patch on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cachelint::exercise::header_patch(data);
});
