//! Fuzz target: cachelint::exercise::rules_toml on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cachelint::exercise::rules_toml(data);
});
