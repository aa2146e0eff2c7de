//! cachelint: exact struct layouts from DWARF, with cachelines.
//!
//! Data flows one way: [`input`] (ELF, sections) → [`dwarf`] (loader) →
//! [`model`] (types) → [`layout`] (flattened members, holes, lines) →
//! [`render`] (text, JSON). The command line in `main.rs` only parses
//! arguments and maps errors to exit codes.

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
pub mod lookup;
pub mod model;
pub mod path;
pub mod render;
pub mod report;
pub mod rules;
pub mod sizes;
pub mod suggest;
