//! The fixture tier in one test binary: one module per command or subject
//! (CONTRIBUTING.md, "Integration tests on the fixtures"), the helpers in
//! `tests/common`, shared with the real-kernel tier (`tests/kernel`). One
//! binary links once, and compiles the helpers once.
//!
//! One module: `cargo test --release --test integration check::`. The
//! SARIF schema test is ignored unless asked for: `cargo test --release
//! --test integration sarif:: -- --ignored` (with CACHELINT_SARIF_SCHEMA).

#[path = "../common/mod.rs"]
mod common;

mod asserts;
mod audit;
mod btf;
mod check;
mod cli;
mod contexts;
mod corpus;
mod diagram;
mod diff;
mod evidence;
mod fixtures;
mod isolation;
mod nipa;
mod opens;
mod plan;
mod sarif;
mod suggest;
mod unions;
mod variants;
mod wrapper;

// The binary's allocator (src/main.rs): `suggest`, run here in the
// library, makes thousands of small allocations per candidate layout.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
