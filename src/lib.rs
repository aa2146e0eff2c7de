//! cachelint: false sharing in kernel structs, from the exact layouts in
//! DWARF or BTF.
//!
//! Data flows one way: `input` (ELF, sections) → loaders (`dwarf`, `btf`,
//! behind `load`) → [`run`] (every build opened once, the rules read once)
//! → [`commands`] (one leaf per command, over the run's types: `model`,
//! `layout`, `plan`, `analysis`, `search`) → [`report`] (plain data) →
//! [`render`] (text, JSON, diagnostics, SARIF, diagrams). The command line
//! (`main.rs`, and a file a command in `cli/`) only parses arguments, opens
//! the [`run::Run`] and maps errors ([`error`]) to exit codes. `docs/design.md` walks through it.
//!
//! What is public is what the binary, the tests and the fuzz targets
//! (`exercise`) use; the rest is the crate's own.

#![warn(missing_docs)]

pub(crate) mod analysis;
pub(crate) mod btf;
pub mod commands;
pub(crate) mod csource;
pub(crate) mod diff;
pub(crate) mod dwarf;
pub mod error;
pub mod evidence;
#[cfg(feature = "exercise")]
pub mod exercise;
pub(crate) mod input;
pub(crate) mod kconfig;
pub(crate) mod layout;
pub(crate) mod lines;
pub(crate) mod load;
pub(crate) mod member_types;
pub(crate) mod model;
pub(crate) mod path;
pub(crate) mod plan;
pub mod render;
pub mod report;
pub mod review;
pub(crate) mod rules;
pub mod run;
pub(crate) mod search;
pub(crate) mod suggest;
pub(crate) mod variant;
