//! Unpreprocessed C as cachelint reads it: the kernel's C files, whose
//! check functions `asserts --against` compares with ([`asserts`]).

pub(crate) mod asserts;

use std::path::Path;

use crate::error::Result;

/// The largest C file read: net/core/dev.c is 340 KB in 6.12.
const MAX_SOURCE_BYTES: u64 = 64 << 20;

/// The text of the C file at `path`, invalid UTF-8 replaced; refused past
/// [`MAX_SOURCE_BYTES`].
pub(crate) fn read(path: &Path) -> Result<String> {
    let bytes = crate::input::read_limited(path, MAX_SOURCE_BYTES, "a C file")?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
