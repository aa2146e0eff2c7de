//! The command line's pieces that several commands share: argument
//! groups in [`args`], the split of positional arguments into builds and
//! what follows them in [`positional`].

pub(crate) mod args;
pub(crate) mod positional;
