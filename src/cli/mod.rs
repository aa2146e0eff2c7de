//! The command line of each command, one file a command (as cargo's
//! `src/bin/cargo/commands/`): its clap `Args`, its help and examples, and
//! `exec`, which builds the library's options from them and runs the
//! library's command. `main.rs` parses and dispatches to these.
//!
//! Shared argument groups live in [`args`], the split of positional
//! arguments into builds and what follows them in [`positional`].

pub(crate) mod args;
pub(crate) mod positional;

pub(crate) mod asserts;
pub(crate) mod audit;
pub(crate) mod check;
pub(crate) mod completions;
pub(crate) mod diagram;
pub(crate) mod diff;
pub(crate) mod draft;
pub(crate) mod footprint;
pub(crate) mod layout;
pub(crate) mod man;
pub(crate) mod offsetof;
pub(crate) mod offsets;
pub(crate) mod review;
pub(crate) mod sizes;
pub(crate) mod suggest;
