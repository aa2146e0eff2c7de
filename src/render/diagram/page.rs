//! The whole of `diagram`'s output: per build a title and its drawing,
//! then with two builds the summary of what changed.

use super::{Drawing, ascii, boxes, compare, strip, table, wrap};
use crate::render::{Format, Output, Render};
use crate::report::diagram::{DiagramPart, DiagramReport, Style};

impl Render for DiagramReport {
    const FORMATS: &'static [Format] = &[Format::Text, Format::Markdown];

    fn render(&self, format: Format) -> Output {
        let mut out = String::new();
        for (i, part) in self.parts.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&draw(part, self.width, format));
        }
        if let (Some(c), [old, new]) = (&self.comparison, self.parts.as_slice()) {
            out.push('\n');
            out.push_str(&compare::summary(
                &side(old),
                &side(new),
                &c.comparison,
                &c.focus,
                self.width,
            ));
        }
        if !self.explained.is_empty() {
            out.push('\n');
            out.push_str(&crate::render::explain::text(&self.explained));
        }
        Output {
            stdout: ascii(&out),
            notes: self.notes.clone(),
            failed: false,
            highlights: Vec::new(),
        }
    }
}

fn side(part: &DiagramPart) -> compare::Side<'_> {
    compare::Side {
        config: &part.config,
        analysis: &part.analysis,
        type_sizes: &part.type_sizes,
    }
}

/// The drawn fields perf sampled, with their shares as perf printed them.
fn measured(d: &Drawing<'_>) -> Option<String> {
    let mut out = String::new();
    for span in super::boxes::drawn_spans(d) {
        if let Some(share) = d.share_of(&span.path) {
            out.push_str(&format!("    {}: {share}\n", span.path));
        }
    }
    (!out.is_empty()).then(|| format!("measured by perf:\n{out}"))
}

fn draw(part: &DiagramPart, width: usize, format: Format) -> String {
    let an = &part.analysis;
    let d = Drawing {
        analysis: an,
        paddings: &part.paddings,
        lines: part.lines.clone(),
        width,
        shares: &part.shares,
    };
    let line_size = if an.cacheline == 64 {
        String::new()
    } else {
        format!(" of {} bytes", an.cacheline)
    };
    let title = format!(
        "struct {} [{}]: {} bytes, {} lines{line_size}",
        an.root,
        part.config,
        an.size,
        an.size.div_ceil(an.cacheline),
    );
    let markdown = format == Format::Markdown;
    let body = match part.style {
        Style::Boxes => boxes::draw(&d),
        Style::Strip => strip::draw(&d),
        Style::Table => table::draw(&d, markdown),
    };
    // Boxes and strips name their fields; perf's shares go under them.
    let body = match (part.style, measured(&d)) {
        (Style::Table, _) | (_, None) => body,
        (_, Some(m)) => format!("{body}\n{m}"),
    };
    let title = wrap(&title, width, "  ").join("\n");
    match (markdown, part.style) {
        (true, Style::Table) => format!("**{title}**\n\n{body}"),
        (true, _) => format!("**{title}**\n\n```text\n{body}```\n"),
        (false, _) => format!("{title}\n\n{body}"),
    }
}
