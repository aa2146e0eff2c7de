//! Fuzz target: cachelint::exercise::perf_output on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cachelint::exercise::perf_output(data);
});
