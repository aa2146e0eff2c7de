//! `--explain FIELD` as text: a block per line the field occupies.

use std::fmt::Write;

use crate::report::explain::ExplainedLine;

/// The explanation, or nothing when none was asked for.
pub(crate) fn text(lines: &[ExplainedLine]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let l = &lines[i];
        // A run of lines with no neighbour is told once.
        let run = lines[i..]
            .iter()
            .take_while(|n| {
                n.neighbours.is_empty()
                    && (n.config.as_str(), n.root.as_str(), n.field.as_str())
                        == (l.config.as_str(), l.root.as_str(), l.field.as_str())
            })
            .count();
        if run > 1 {
            let last = &lines[i + run - 1];
            let _ = writeln!(
                out,
                "explain: [{}] {} on lines {}-{} of {} (bytes {}-{}): no annotated field shares them",
                l.config, l.field, l.line, last.line, l.root, l.bytes[0], last.bytes[1]
            );
            i += run;
            continue;
        }
        i += 1;
        let _ = writeln!(
            out,
            "explain: [{}] {} on line {} of {} (bytes {}-{}):",
            l.config, l.field, l.line, l.root, l.bytes[0], l.bytes[1]
        );
        if l.neighbours.is_empty() {
            out.push_str("    no annotated field shares the line\n");
        }
        let width = l.neighbours.iter().map(|n| n.path.len()).max().unwrap_or(0);
        for n in &l.neighbours {
            let verdict = match (n.kind, n.severity) {
                (Some(k), Some(s)) => format!("{s}: {k}"),
                (Some(k), None) => format!("off: {k}"),
                _ => "not flagged".to_owned(),
            };
            let contexts = n
                .contexts
                .as_ref()
                .map(|c| format!(", {c}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "    {:<width$}  {} bytes {}-{}{contexts}\n        {verdict}: {}",
                n.path, n.class, n.bytes[0], n.bytes[1], n.reason
            );
        }
    }
    out
}
