//! cachelint: false sharing in kernel structs, from the exact layouts in
//! DWARF or BTF.
//!
//! Data flows one way: [`input`] (ELF, sections) → loaders ([`dwarf`],
//! [`btf`]) → [`model`] (types) → [`layout`] (flattened members, holes,
//! lines) → [`analysis`] (rules × layout → findings, from [`rules`]) →
//! [`render`] (text, JSON, diagnostics, SARIF, diagrams); `search` tries
//! plans (member orders) through the plan engine and the analysis for
//! `suggest`. [`commands`]
//! wires one command each; the command line in `main.rs` only parses
//! arguments and maps errors to exit codes.

#![warn(missing_docs)]

pub mod analysis;
pub(crate) mod btf;
pub mod commands;
pub(crate) mod csource;
pub mod diff;
pub(crate) mod dwarf;
pub mod error;
#[cfg(feature = "exercise")]
pub mod exercise;
pub(crate) mod input;
pub(crate) mod kconfig;
pub mod layout;
pub mod lines;
pub(crate) mod load;
pub(crate) mod lookup;
pub mod model;
pub(crate) mod path;
pub mod plan;
pub mod render;
pub mod report;
pub mod rules;
pub(crate) mod search;
pub mod sizes;
pub(crate) mod source_patch;
pub(crate) mod suggest;
