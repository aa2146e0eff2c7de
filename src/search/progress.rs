//! The search's progress on a terminal: layouts tried against the budget
//! (a large struct's) or the neighbourhood so far, drawn on standard
//! error only when it is a terminal (indicatif hides it otherwise), and
//! gone when the search ends.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// A search's progress bar and clock.
pub(super) struct Progress {
    bar: ProgressBar,
    started: Instant,
}

impl Progress {
    /// Starts the clock, and the bar of struct `name` when standard error
    /// is a terminal: out of `budget` layouts when there is one.
    pub(super) fn start(name: &str, budget: Option<usize>) -> Progress {
        let bar = match budget {
            Some(b) => ProgressBar::new(b as u64),
            None => ProgressBar::no_length(),
        };
        let template = match budget {
            Some(_) => "{msg}: {bar:30} {pos}/{len} layouts, {elapsed}",
            None => "{msg}: {spinner} {pos} layouts, {elapsed}",
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        bar.set_message(format!("suggest {name}"));
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress {
            bar,
            started: Instant::now(),
        }
    }

    /// Layouts tried so far.
    pub(super) fn tried(&self, tried: usize) {
        self.bar.set_position(tried as u64);
    }

    /// Clears the bar: the time the search took.
    pub(super) fn finish(self) -> Duration {
        self.bar.finish_and_clear();
        self.started.elapsed()
    }
}
