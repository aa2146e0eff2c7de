//! Colour, as a compiler shows it on a terminal: a renderer marks the
//! spans of its text that are a diagnostic's location or severity
//! ([`Highlight`]s on [`super::Output`]) and decides nothing else. The
//! command line paints them ([`paint`]) only when the stream takes colour
//! (`--color`, `NO_COLOR`, a terminal); every other reader gets the text
//! as it was, byte for byte. Machine formats (JSON, SARIF) and drawings
//! mark nothing.

use std::fmt;
use std::ops::Range;

use anstyle::{AnsiColor, Style};

use crate::rules::Severity;

/// What a marked span is, and so how it is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// `FILE:LINE:` (or the `cachelint:` of a message): bold.
    Location,
    /// `error:`, `warning:`, `note:`: bold red, yellow and cyan, as gcc's.
    Severity(Severity),
}

impl Tone {
    /// The style of this tone: the one palette of the tool.
    pub fn style(self) -> Style {
        let bold = Style::new().bold();
        let colour = |c: AnsiColor| bold.fg_color(Some(c.into()));
        match self {
            Tone::Location => bold,
            Tone::Severity(Severity::Error) => colour(AnsiColor::Red),
            Tone::Severity(Severity::Warning) => colour(AnsiColor::Yellow),
            Tone::Severity(Severity::Note) => colour(AnsiColor::Cyan),
        }
    }
}

/// A span of output text (byte offsets) shown in a [`Tone`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Highlight {
    /// The bytes of the text.
    pub range: Range<usize>,
    /// How they are shown.
    pub tone: Tone,
}

/// `text` with each highlighted span wrapped in its style's escape
/// sequences; `highlights` are in order and do not overlap, as a
/// renderer makes them.
pub fn paint(text: &str, highlights: &[Highlight]) -> String {
    let mut out = String::with_capacity(text.len() + highlights.len() * 16);
    let mut at = 0;
    for h in highlights {
        debug_assert!(at <= h.range.start && h.range.end <= text.len());
        let style = h.tone.style();
        out.push_str(&text[at..h.range.start]);
        out.push_str(&format!(
            "{}{}{}",
            style.render(),
            &text[h.range.clone()],
            style.render_reset()
        ));
        at = h.range.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Text being written, with its highlights: `write!` adds plain text,
/// [`Marked::mark`] a highlighted span.
#[derive(Debug, Default)]
pub struct Marked {
    /// The text, as a reader without colour gets it.
    pub text: String,
    /// Its highlighted spans, in order.
    pub highlights: Vec<Highlight>,
}

impl Marked {
    /// Appends `text`, highlighted in `tone`.
    pub fn mark(&mut self, text: &str, tone: Tone) {
        let start = self.text.len();
        self.text.push_str(text);
        self.highlights.push(Highlight {
            range: start..self.text.len(),
            tone,
        });
    }

    /// Appends plain text.
    pub fn push_str(&mut self, text: &str) {
        self.text.push_str(text);
    }

    /// Appends a plain character.
    pub fn push(&mut self, c: char) {
        self.text.push(c);
    }

    /// Appends `FILE:LINE: SEVERITY: `, the head of a compiler-style
    /// diagnostic, with the location and the severity word highlighted.
    pub fn diagnostic_head(&mut self, location: &str, severity: Severity) {
        self.mark(&format!("{location}:"), Tone::Location);
        self.push_str(" ");
        self.mark(&format!("{severity}:"), Tone::Severity(severity));
        self.push_str(" ");
    }
}

impl fmt::Write for Marked {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.text.push_str(s);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn painting_wraps_only_the_marked_spans() {
        let mut m = Marked::default();
        m.diagnostic_head("a.h:7", Severity::Warning);
        m.push_str("[base] message\n");
        assert_eq!(m.text, "a.h:7: warning: [base] message\n");
        assert_eq!(
            paint(&m.text, &m.highlights),
            "\x1b[1ma.h:7:\x1b[0m \x1b[1m\x1b[33mwarning:\x1b[0m [base] message\n"
        );
        assert_eq!(paint("plain\n", &[]), "plain\n");
    }
}
