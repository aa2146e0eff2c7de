//! The lines of a C file told apart: the code of each (its comments and
//! literals blanked), whether a comment is open at its end, and the
//! preprocessor directive it starts or continues.
//!
//! The scanner is tolerant: it never fails. A string or character literal
//! ends at the end of its line when nothing closes it (as the compiler
//! reads one), so a stray quote blanks one line, not the rest of the file;
//! a `//` comment and a directive go on to the next line after a
//! backslash, and a directive also while a comment it opened is open.

/// One physical line of C.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Line<'a> {
    /// The line as written, without its line break.
    pub text: &'a str,
    /// The line with every character of its comments and of its string
    /// and character literals (delimiters included) a space.
    pub code: String,
    /// True when part of the line is a comment.
    pub comment: bool,
    /// True when the line ends inside a `/* */` comment.
    pub in_comment: bool,
    /// The directive that starts on this line.
    pub directive: Option<Directive>,
    /// True when the line is part of a directive: its first line, or one
    /// it goes on to.
    pub preprocessor: bool,
    /// True when the line's directive goes on to the next line: a
    /// backslash ends the line, or a comment opened in it is still open.
    pub joins_next: bool,
}

/// A preprocessor directive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Directive {
    /// What kind it is.
    pub kind: Pp,
    /// Its text after the `#` (`ifdef CONFIG_X`), comments blanked, the
    /// lines it goes on to joined with a space (each without its
    /// backslash).
    pub text: String,
}

/// The kinds of directive the readers tell apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pp {
    /// `#if`, `#ifdef`, `#ifndef`.
    If,
    /// `#elif`, `#elifdef`, `#elifndef`.
    Elif,
    /// `#else`.
    Else,
    /// `#endif`.
    Endif,
    /// `#define` or `#undef`.
    Define,
    /// Any other (`#include`, `#pragma`, `#error`, a lone `#`).
    Other,
}

impl Directive {
    /// Its name: `ifdef` of `#  ifdef X`.
    pub(crate) fn name(&self) -> &str {
        leading_word(&self.text)
    }

    /// What follows its name, trimmed: the condition of an `#if`, the
    /// macro of an `#ifdef`.
    pub(crate) fn argument(&self) -> &str {
        self.text[self.name().len()..].trim()
    }

    /// The macro a `#define NAME` or `#undef NAME` names.
    pub(crate) fn defines(&self) -> Option<&str> {
        if self.kind != Pp::Define {
            return None;
        }
        let rest = self.text[self.name().len()..].trim_start();
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        (end > 0).then_some(&rest[..end])
    }
}

impl Pp {
    /// The kind of the directive named `name`.
    fn of(name: &str) -> Pp {
        match name {
            "if" | "ifdef" | "ifndef" => Pp::If,
            "elif" | "elifdef" | "elifndef" => Pp::Elif,
            "else" => Pp::Else,
            "endif" => Pp::Endif,
            "define" | "undef" => Pp::Define,
            _ => Pp::Other,
        }
    }
}

/// Where the scanner is at a character.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Code,
    /// In a `//` comment.
    LineComment,
    /// In a `/* */` comment.
    Block,
    /// In a literal opened by this quote.
    Quote(char),
}

/// The lines of `text` (as [`str::lines`] splits them), scanned.
pub(crate) fn scan(text: &str) -> Vec<Line<'_>> {
    let mut out: Vec<Line> = Vec::new();
    let mut state = State::Code;
    // The first line of the directive the next line goes on with.
    let mut directive: Option<usize> = None;
    for text in text.lines() {
        let starts_in = state;
        let (code, comment) = blank(text, &mut state);
        let in_comment = state == State::Block;
        let starts =
            directive.is_none() && starts_in == State::Code && code.trim_start().starts_with('#');
        let preprocessor = starts || directive.is_some();
        let joins_next = preprocessor && (in_comment || text.trim_end().ends_with('\\'));
        // The code after the `#`, or all of it on a line gone on to,
        // without the backslash that ends it.
        let part = code.trim_start();
        let part = if starts { part[1..].trim_start() } else { part }.trim_end();
        let part = part.strip_suffix('\\').unwrap_or(part).trim_end();
        let own = starts.then(|| Directive {
            kind: Pp::of(leading_word(part)),
            text: part.to_owned(),
        });
        if starts {
            directive = Some(out.len());
        } else if let Some(d) = directive.and_then(|first| out[first].directive.as_mut()) {
            d.text.push(' ');
            d.text.push_str(part);
        }
        out.push(Line {
            text,
            code,
            comment,
            in_comment,
            directive: own,
            preprocessor,
            joins_next,
        });
        if !joins_next {
            directive = None;
        }
    }
    out
}

/// `text` (one line) with its comments and literals blanked, and whether
/// part of it is a comment; `state` is where the line starts and becomes
/// where the next one does.
fn blank(text: &str, state: &mut State) -> (String, bool) {
    let mut code = String::with_capacity(text.len());
    let mut comment = false;
    // A backslash ends the line inside a literal: it goes on.
    let mut escaped_end = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let before = *state;
        match before {
            State::Code => match (c, chars.peek()) {
                ('/', Some('/')) => *state = State::LineComment,
                ('/', Some('*')) => {
                    chars.next();
                    code.push(' ');
                    *state = State::Block;
                }
                ('"' | '\'', _) => *state = State::Quote(c),
                _ => {
                    code.push(c);
                    continue;
                }
            },
            State::Block if c == '*' && chars.peek() == Some(&'/') => {
                chars.next();
                code.push(' ');
                *state = State::Code;
            }
            State::Quote(q) if c == q => *state = State::Code,
            State::Quote(_) if c == '\\' => match chars.next() {
                Some(_) => code.push(' '),
                None => escaped_end = true,
            },
            _ => {}
        }
        comment |= [before, *state]
            .iter()
            .any(|s| matches!(s, State::LineComment | State::Block));
        code.push(' ');
    }
    *state = match *state {
        State::Quote(_) if !escaped_end => State::Code,
        State::LineComment if !text.trim_end().ends_with('\\') => State::Code,
        other => other,
    };
    (code, comment)
}

/// The leading run of letters and digits of `text`.
fn leading_word(text: &str) -> &str {
    let end = text
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(text.len());
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_literals_are_blanked_line_by_line() {
        let text =
            "int a; /* one\n * two */ int b; // three\nchar *s = \"/* no\"; char c = '\"';\n";
        let lines = scan(text);
        let code: Vec<&str> = lines.iter().map(|l| l.code.as_str()).collect();
        assert_eq!(
            code,
            [
                "int a;       ",
                "          int b;         ",
                "char *s =        ; char c =    ;",
            ]
        );
        let flags: Vec<(bool, bool)> = lines.iter().map(|l| (l.comment, l.in_comment)).collect();
        assert_eq!(flags, [(true, true), (true, false), (false, false)]);
        assert_eq!(lines[1].text, " * two */ int b; // three");
        // Characters, not bytes: one space for each.
        assert_eq!(scan("/* é */x")[0].code, "       x");
    }

    #[test]
    fn a_literal_left_open_ends_with_its_line() {
        // A stray quote (`#error don't`) blanks the rest of its line only.
        let lines = scan("#error don't\nint a;\n\"a \\\nb\" c\n");
        assert_eq!(lines[0].code, "#error don  ");
        assert_eq!(lines[1].code, "int a;");
        // ... unless a backslash carries the literal on.
        assert_eq!(lines[3].code, "   c");
    }

    #[test]
    fn a_line_comment_goes_on_after_a_backslash() {
        let lines = scan("a // b \\\nc\nd\n");
        assert_eq!(lines[1].code, " ");
        assert!(lines[1].comment);
        assert_eq!(lines[2].code, "d");
    }

    #[test]
    fn directives_with_their_names_arguments_and_continuations() {
        let text = "\
#  ifdef CONFIG_X // why
#if defined(A) /* a */ && \\
    B
#define MAX(a, b) \\
\t((a) > (b) ? (a) : (b))
#undef MAX
#elifdef Y
#endif /* X */
#include <linux/types.h>
";
        let lines = scan(text);
        let brief: Vec<Option<(Pp, &str, &str)>> = lines
            .iter()
            .map(|l| {
                l.directive
                    .as_ref()
                    .map(|d| (d.kind, d.name(), d.argument()))
            })
            .collect();
        assert_eq!(
            brief,
            [
                Some((Pp::If, "ifdef", "CONFIG_X")),
                Some((Pp::If, "if", "defined(A)         && B")),
                None,
                Some((Pp::Define, "define", "MAX(a, b) ((a) > (b) ? (a) : (b))")),
                None,
                Some((Pp::Define, "undef", "MAX")),
                Some((Pp::Elif, "elifdef", "Y")),
                Some((Pp::Endif, "endif", "")),
                Some((Pp::Other, "include", "<linux/types.h>")),
            ]
        );
        let defines: Vec<Option<&str>> = lines
            .iter()
            .filter_map(|l| l.directive.as_ref())
            .map(Directive::defines)
            .collect();
        assert_eq!(
            defines,
            [None, None, Some("MAX"), Some("MAX"), None, None, None]
        );
        let parts: Vec<(bool, bool)> = lines
            .iter()
            .map(|l| (l.preprocessor, l.joins_next))
            .collect();
        assert_eq!(
            parts,
            [
                (true, false),
                (true, true),
                (true, false),
                (true, true),
                (true, false),
                (true, false),
                (true, false),
                (true, false),
                (true, false),
            ]
        );
    }

    #[test]
    fn a_comment_open_at_its_end_carries_a_directive_on() {
        let lines = scan("#ifdef X /* long\n   reason */ #if Y\nint a;\n");
        assert!(lines[0].joins_next);
        assert!(lines[1].preprocessor && !lines[1].joins_next);
        assert!(lines[1].directive.is_none() && !lines[2].preprocessor);
        let d = lines[0].directive.as_ref().unwrap();
        assert_eq!(
            (d.text.as_str(), d.argument()),
            ("ifdef X #if Y", "X #if Y")
        );
    }

    #[test]
    fn a_hash_is_a_directive_only_at_the_start_of_code() {
        let lines = scan("/*\n#ifdef X\n*/\n/* c */ #if Y\nint a; #x\n\"\\\n#if Z\"\n");
        let starts: Vec<bool> = lines.iter().map(|l| l.directive.is_some()).collect();
        assert_eq!(starts, [false, false, false, true, false, false, false]);
        assert!(lines[1].comment && lines[1].in_comment);
    }
}
