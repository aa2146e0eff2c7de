//! cachelint: false sharing in kernel structs, from the exact layouts in
//! DWARF or BTF.
//!
//! Data flows one way: [`input`] (ELF, sections) → loaders ([`dwarf`],
//! [`btf`]) → [`model`] (types) → [`layout`] (flattened members, holes,
//! lines) → [`analysis`] (rules × layout → findings, from [`rules`]) →
//! [`render`] (text, JSON, diagnostics, SARIF, diagrams). [`commands`]
//! wires one command each; the command line in `main.rs` only parses
//! arguments and maps errors to exit codes.

#![warn(missing_docs)]

pub mod analysis;
pub mod btf;
pub mod commands;
pub mod diff;
pub mod dwarf;
pub mod error;
pub mod exercise;
pub mod input;
pub mod kconfig;
pub mod layout;
pub mod lines;
pub mod load;
pub mod lookup;
pub mod model;
pub mod path;
pub mod render;
pub mod report;
pub mod rules;
pub mod sizes;
pub mod suggest;
