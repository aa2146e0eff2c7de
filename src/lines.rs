//! The cachelines a byte range touches: the one formula every command,
//! analysis and renderer uses.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How many more lines of `line` bytes `new` bytes take than `old` bytes
/// (negative when fewer): how a struct or root grows.
pub fn growth(old: u64, new: u64, line: u64) -> i64 {
    new.div_ceil(line) as i64 - old.div_ceil(line) as i64
}

/// The cacheline sizes cachelint accepts, from the command line or a rules
/// file: a power of two from 16 to 4096 bytes.
pub fn is_cacheline_size(bytes: u64) -> bool {
    bytes.is_power_of_two() && (16..=4096).contains(&bytes)
}

/// Cachelines `first..=last` (numbered from the start of the root type)
/// that a byte range touches. An empty range touches its first byte's line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Lines {
    /// The first line.
    #[serde(rename = "cacheline")]
    pub first: u64,
    /// The last line.
    #[serde(rename = "last_cacheline")]
    pub last: u64,
}

impl Lines {
    /// The lines of `size` bytes at `offset`, with `line`-byte cachelines
    /// (`line` is at least 1: the command line and the rules refuse 0).
    pub fn of(offset: u64, size: u64, line: u64) -> Lines {
        let line = line.max(1);
        Lines {
            first: offset / line,
            last: offset.saturating_add(size.max(1) - 1) / line,
        }
    }

    /// The lines of the byte range `[start, end)`.
    pub fn of_range(start: u64, end: u64, line: u64) -> Lines {
        Lines::of(start, end.saturating_sub(start), line)
    }

    /// Each line number.
    pub fn iter(self) -> std::ops::RangeInclusive<u64> {
        self.first..=self.last
    }
}

/// `3` or `3-4`.
impl fmt::Display for Lines {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.first == self.last {
            write!(f, "{}", self.first)
        } else {
            write!(f, "{}-{}", self.first, self.last)
        }
    }
}

/// `(first, last)`, as the diff report's JSON writes it.
impl From<Lines> for (u64, u64) {
    fn from(l: Lines) -> (u64, u64) {
        (l.first, l.last)
    }
}

#[cfg(test)]
mod tests {
    use super::Lines;

    #[test]
    fn ranges_map_to_the_lines_they_touch() {
        assert_eq!(Lines::of(0, 64, 64), Lines { first: 0, last: 0 });
        assert_eq!(Lines::of(60, 8, 64), Lines { first: 0, last: 1 });
        assert_eq!(Lines::of(128, 0, 64), Lines { first: 2, last: 2 });
        assert_eq!(Lines::of(u64::MAX - 1, 8, 64).last, u64::MAX / 64);
        assert_eq!(Lines::of_range(64, 192, 64), Lines { first: 1, last: 2 });
        assert_eq!(Lines::of(60, 8, 64).to_string(), "0-1");
        assert_eq!(Lines::of(64, 8, 64).to_string(), "1");
    }
}
