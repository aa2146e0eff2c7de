//! The `#if` blocks open at each point of a C file.

use super::Pp;

/// The `#if` blocks open after the directives stepped through so far,
/// outermost first.
#[derive(Clone, Debug, Default)]
pub(crate) struct Nesting {
    open: Vec<Open>,
}

/// One open `#if` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Open {
    /// Its `#if`, `#ifdef` or `#ifndef` line (0-based).
    pub line: usize,
    /// The `#elif` and `#else` lines met in it so far: the branch the
    /// next line is in is their count.
    pub branches: Vec<usize>,
}

impl Nesting {
    /// Steps through a directive of `kind` at `line`: an `#if` opens a
    /// block, an `#elif` or `#else` starts the innermost block's next
    /// branch, an `#endif` closes it. One of those with no block open
    /// changes nothing.
    pub(crate) fn step(&mut self, line: usize, kind: Pp) {
        match kind {
            Pp::If => self.open.push(Open {
                line,
                branches: Vec::new(),
            }),
            Pp::Elif | Pp::Else => {
                if let Some(top) = self.open.last_mut() {
                    top.branches.push(line);
                }
            }
            Pp::Endif => {
                self.open.pop();
            }
            Pp::Define | Pp::Other => {}
        }
    }

    /// The blocks open, outermost first.
    pub(crate) fn open(&self) -> &[Open] {
        &self.open
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_open_branch_and_close() {
        let mut n = Nesting::default();
        n.step(0, Pp::Endif);
        n.step(1, Pp::Else);
        assert!(n.open().is_empty(), "unmatched: nothing changes");
        n.step(2, Pp::If);
        n.step(3, Pp::If);
        n.step(4, Pp::Elif);
        n.step(5, Pp::Define);
        n.step(6, Pp::Else);
        let open = |line, branches: &[usize]| Open {
            line,
            branches: branches.to_vec(),
        };
        assert_eq!(n.open(), [open(2, &[]), open(3, &[4, 6])]);
        n.step(7, Pp::Endif);
        assert_eq!(n.open(), [open(2, &[])]);
    }
}
