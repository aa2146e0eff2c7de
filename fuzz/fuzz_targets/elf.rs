//! Fuzz target: cachelint::exercise::elf on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cachelint::exercise::elf(data);
});
