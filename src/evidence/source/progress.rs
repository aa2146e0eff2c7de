//! Progress while a kernel tree is read: on a terminal, a bar per phase on
//! standard error (files scanned, files walked), gone when the phase
//! ends; otherwise, for a tree of kernel size, a line per phase when it
//! ends, with what it did and how long it took. A small tree (a test's)
//! reads in a blink and says nothing.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// Files from which a tree read off a terminal says its phases.
const MIN_FILES_FOR_LINES: usize = 1000;

/// How one reading of a tree reports its phases.
pub(crate) struct Progress {
    /// Draw a bar (standard error is a terminal).
    bar: bool,
    /// Print a line per phase.
    lines: bool,
    /// The current phase: its bar and when it started.
    current: Option<(ProgressBar, Instant)>,
}

impl Progress {
    /// For a tree of `files` C files and headers.
    pub(crate) fn for_tree(files: usize) -> Progress {
        let terminal = std::io::stderr().is_terminal();
        Progress {
            bar: terminal,
            lines: !terminal && files >= MIN_FILES_FOR_LINES,
            current: None,
        }
    }

    /// Says nothing (a text read in memory, a test).
    #[cfg(any(test, feature = "exercise"))]
    pub(crate) fn hidden() -> Progress {
        Progress {
            bar: false,
            lines: false,
            current: None,
        }
    }

    /// Starts phase `what` over `len` items.
    pub(crate) fn start(&mut self, what: &str, len: usize) {
        let bar = match self.bar {
            true => ProgressBar::new(len as u64),
            false => ProgressBar::hidden(),
        };
        if let Ok(style) =
            ProgressStyle::with_template("{msg}: {bar:30} {pos}/{len} files, {elapsed}")
        {
            bar.set_style(style);
        }
        bar.set_message(format!("source: {what}"));
        if self.bar {
            bar.enable_steady_tick(Duration::from_millis(200));
        }
        self.current = Some((bar, Instant::now()));
    }

    /// One more item of the phase done.
    pub(crate) fn step(&self) {
        if let Some((bar, _)) = &self.current {
            bar.inc(1);
        }
    }

    /// Ends the phase, saying what it did (`scanned 61,234 files: 1,234
    /// name sk_buff`).
    pub(crate) fn done(&mut self, did: &str) {
        let Some((bar, started)) = self.current.take() else {
            return;
        };
        bar.finish_and_clear();
        if self.lines {
            eprintln!(
                "cachelint: source: {did} ({:.1} s)",
                started.elapsed().as_secs_f64()
            );
        }
    }
}
