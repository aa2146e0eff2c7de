//! The search's progress on a terminal: layouts tried against the budget
//! (a large struct's) or the neighbourhood so far, drawn on standard
//! error only when it is a terminal (indicatif hides it otherwise), and
//! gone when the search ends; off a terminal, a line when a slow search
//! ends.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// A search at least this long says so off a terminal (a CI log), when
/// it ends.
const SLOW_SEARCH: Duration = Duration::from_secs(1);

/// A search's progress bar and clock.
pub(super) struct Progress {
    bar: ProgressBar,
    started: Instant,
    /// The struct searched.
    name: String,
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
            name: name.to_owned(),
        }
    }

    /// Layouts tried so far.
    pub(super) fn tried(&self, tried: usize) {
        self.bar.set_position(tried as u64);
    }

    /// Clears the bar, or off a terminal tells a slow search's layouts
    /// and time: the time the search took.
    pub(super) fn finish(self) -> Duration {
        self.bar.finish_and_clear();
        let took = self.started.elapsed();
        let terminal = std::io::stderr().is_terminal();
        if let Some(line) = told(&self.name, self.bar.position(), took, terminal) {
            eprintln!("{line}");
        }
        took
    }
}

/// The line a search of `name` that tried `tried` layouts in `took` tells
/// when it ends: none on a terminal (the bar was there) or when quick.
fn told(name: &str, tried: u64, took: Duration, terminal: bool) -> Option<String> {
    (!terminal && took >= SLOW_SEARCH).then(|| {
        format!(
            "cachelint: suggest {name}: {tried} layouts tried ({:.1} s)",
            took.as_secs_f64()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_search_off_a_terminal_tells_its_layouts_and_time() {
        let slow = Duration::from_millis(2500);
        assert_eq!(
            told("tcp_sock", 4000, slow, false).as_deref(),
            Some("cachelint: suggest tcp_sock: 4000 layouts tried (2.5 s)")
        );
        assert_eq!(told("tcp_sock", 4000, slow, true), None);
        assert_eq!(told("ring", 12, Duration::from_millis(30), false), None);
    }
}
