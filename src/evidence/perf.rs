//! perf's data-type profiling (perf 6.8 and later) as text, in any of the
//! three outputs that carry it, told apart by their content:
//!
//! - `perf report -s type,typeoff --stdio` ([`Format::Report`]): a row per
//!   type and offset, its share of all samples (and, with `-n`, its count);
//! - `perf annotate --data-type --stdio` ([`Format::AnnotateType`]): per
//!   type, a row per member with its share of the type's samples;
//! - `perf annotate --code-with-type --stdio` ([`Format::CodeWithType`]):
//!   per function, every memory instruction tagged with the type and
//!   offset it touches, which says whether it loads, stores or updates.
//!
//! The text is read as perf prints it: columns split on two or more
//! spaces (type names have single spaces), offsets in hex with `0x` and
//! zero as `+0`. Rows perf could not type (`(unknown)`, `(stack
//! operation)`, a base type's `(no field)`) are counted, not attributed.

use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Result};

/// The largest perf output read: a whole kernel's `--code-with-type`
/// (every sampled function's disassembly) is tens of MB.
const MAX_PERF_BYTES: u64 = 256 << 20;

/// Which of perf's outputs a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `perf report -s type,typeoff --stdio`.
    Report,
    /// `perf annotate --data-type --stdio`.
    AnnotateType,
    /// `perf annotate --code-with-type --stdio`.
    CodeWithType,
}

impl Format {
    /// The command that prints it.
    pub fn command(self) -> &'static str {
        match self {
            Format::Report => "perf report -s type,typeoff",
            Format::AnnotateType => "perf annotate --data-type",
            Format::CodeWithType => "perf annotate --code-with-type",
        }
    }
}

/// What an instruction does to the memory it touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    /// Reads it (`mov 0x8(%rdi),%rdx`, `cmp`, `ldr`).
    Load,
    /// Writes it (`mov %rdx,(%rdi)`, `str`).
    Store,
    /// Reads and writes it, not atomically (`addq $0x1,0x20(%rbx)`).
    Update,
    /// Reads and writes it atomically (`lock addq`, `xchg`, `ldadd`).
    Locked,
}

impl Op {
    /// Its name in evidence: `load`, `store`, `update`, `locked update`.
    pub fn name(self) -> &'static str {
        match self {
            Op::Load => "load",
            Op::Store => "store",
            Op::Update => "update",
            Op::Locked => "locked update",
        }
    }
}

/// Samples perf attributed to one offset of one type.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The type as perf names it (`struct ring`).
    pub ty: String,
    /// Byte offset in it.
    pub offset: u64,
    /// The member perf named there (`events.counter`), if any.
    pub field: Option<String>,
    /// The percentage as perf printed it (`13.40%`).
    pub shown: String,
    /// Samples: exact with `-n` or from an annotation's count, else the
    /// share of the file's rounded total.
    pub samples: f64,
    /// Line of the file.
    pub line: usize,
    /// The function, for `--code-with-type`.
    pub function: Option<String>,
    /// What the instruction does, for `--code-with-type`.
    pub op: Option<Op>,
}

impl Sample {
    /// A row of percentage `p` at line `line`, of no function.
    fn row(
        ty: String,
        offset: u64,
        field: Option<String>,
        p: f64,
        samples: f64,
        line: usize,
    ) -> Sample {
        Sample {
            ty,
            offset,
            field,
            shown: format!("{p:.2}%"),
            samples,
            line,
            function: None,
            op: None,
        }
    }
}

/// One perf output read.
#[derive(Clone, Debug)]
pub struct PerfFile {
    /// Where it was read.
    pub path: Arc<Path>,
    /// Which output it is.
    pub format: Format,
    /// The sampled events (`cpu-clock`), when the output names them.
    pub events: Vec<String>,
    /// The typed samples.
    pub samples: Vec<Sample>,
    /// Samples perf could not attribute to a member: unknown, stack, or a
    /// base type.
    pub untyped: f64,
}

impl PerfFile {
    /// Reads the perf output at `path`.
    pub fn read(path: &Path) -> Result<PerfFile> {
        let bytes = crate::input::read_limited(path, MAX_PERF_BYTES, "a perf output")?;
        let text = String::from_utf8_lossy(&bytes);
        parse(path, &text)
    }

    /// True when every event sampled is precise (`:p` modifiers, memory
    /// events): per-field shares are then exact, not skidded.
    pub fn precise(&self) -> bool {
        !self.events.is_empty() && self.events.iter().all(|e| is_precise(e))
    }

    /// How far to trust per-field shares, in words.
    pub fn skid(&self) -> String {
        let events = if self.events.is_empty() {
            "an event the output does not name".to_owned()
        } else {
            self.events.join(", ")
        };
        if self.precise() {
            format!("{events}: precise, samples are on the instruction that accessed")
        } else {
            format!(
                "{events}: not precise, samples skid to a neighbouring instruction, \
                 so per-field shares are approximate"
            )
        }
    }
}

/// A precise event: a `p` in its modifiers, or a memory event.
fn is_precise(event: &str) -> bool {
    let (name, modifiers) = event.rsplit_once(':').unwrap_or((event, ""));
    modifiers.contains('p')
        || modifiers.contains('P')
        || name.contains("mem-loads")
        || name.contains("mem-stores")
        || name.contains("ldlat")
}

/// Parses perf output `text` read from `path`.
pub fn parse(path: &Path, text: &str) -> Result<PerfFile> {
    let path: Arc<Path> = Arc::from(path);
    let format = recognise(text).ok_or_else(|| Error::Content {
        path: path.to_path_buf(),
        line: None,
        message: "not a perf output cachelint reads: give perf report -s type,typeoff \
                      --stdio, perf annotate --data-type --stdio or perf annotate \
                      --code-with-type --stdio"
            .into(),
    })?;
    let mut file = PerfFile {
        path,
        format,
        events: Vec::new(),
        samples: Vec::new(),
        untyped: 0.0,
    };
    match format {
        Format::Report => report(&mut file, text)?,
        Format::AnnotateType => annotate_type(&mut file, text)?,
        Format::CodeWithType => code_with_type(&mut file, text)?,
    }
    Ok(file)
}

/// Which output `text` is, from its content.
fn recognise(text: &str) -> Option<Format> {
    let mut report = false;
    for line in text.lines().take(10_000) {
        if line.starts_with("Annotate type: '") {
            return Some(Format::AnnotateType);
        }
        if line.contains("# data-type: ") || line.contains("Disassembly of") {
            return Some(Format::CodeWithType);
        }
        if line.starts_with('#') && line.contains("Data Type") {
            report = true;
        }
    }
    report.then_some(Format::Report)
}

/// An error at line `n` of the file.
fn at(file: &PerfFile, n: usize, message: impl std::fmt::Display) -> Error {
    Error::Content {
        path: file.path.to_path_buf(),
        line: Some(n),
        message: message.to_string(),
    }
}

/// The cells of a row: split on runs of two or more spaces (or tabs).
fn cells(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let (mut start, mut i) = (None, 0);
    while i < bytes.len() {
        let gap = bytes[i] == b'\t'
            || (bytes[i] == b' ' && bytes.get(i + 1).is_some_and(|&c| c == b' ' || c == b'\t'));
        if gap {
            if let Some(s) = start.take() {
                out.push(&line[s..i]);
            }
            while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
                i += 1;
            }
            continue;
        }
        start.get_or_insert(i);
        i += 1;
    }
    if let Some(s) = start {
        out.push(line[s..].trim_end());
    }
    out
}

/// A type and offset as perf prints them: `struct ring +0x18
/// (events.counter)`, `long int +0 (no field)`, `long unsigned int +0`;
/// `None` for `(unknown)`, `(stack operation)` and a row without a member.
fn type_offset(text: &str) -> Option<(String, u64, Option<String>)> {
    let text = text.trim();
    let (head, field) = match text.strip_suffix(')').and_then(|t| t.rsplit_once(" (")) {
        Some((head, field)) => (head, Some(field)),
        None => (text, None),
    };
    let (ty, offset) = head.rsplit_once(" +")?;
    let offset = match offset.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok()?,
        None => offset.parse().ok()?,
    };
    let field = field.filter(|f| *f != "no field").map(str::to_owned);
    Some((ty.trim().to_owned(), offset, field))
}

/// A struct or union as perf names it (`struct ring`), or a typedef's
/// name (`atomic_long_t`, no spaces): not a base type (`long int`, `int`,
/// `char`).
fn is_aggregate(ty: &str) -> bool {
    const BASE: [&str; 12] = [
        "char", "short", "int", "long", "float", "double", "_Bool", "bool", "unsigned", "signed",
        "__int128", "void",
    ];
    ty.starts_with("struct ")
        || ty.starts_with("union ")
        || !ty.contains(' ') && !ty.contains('*') && !BASE.contains(&ty)
}

/// A count as perf abbreviates it: `23K`, `1M`, `812`.
fn count(text: &str) -> Option<f64> {
    let text = text.trim();
    let (digits, scale) = match text.as_bytes().last()? {
        b'K' => (&text[..text.len() - 1], 1e3),
        b'M' => (&text[..text.len() - 1], 1e6),
        b'G' => (&text[..text.len() - 1], 1e9),
        _ => (text, 1.0),
    };
    digits.parse::<f64>().ok().map(|n| n * scale)
}

/// A percentage cell, `13.40%` or `13.40`.
fn percent(text: &str) -> Option<f64> {
    text.trim()
        .trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|p| p.is_finite() && (0.0..=100.0).contains(p))
}

/// `# Samples: 23K of event 'cpu-clock'`: the count and the event.
fn samples_of_event(line: &str) -> Option<(f64, String)> {
    let rest = line.strip_prefix("# Samples: ")?;
    let (n, event) = rest.split_once(" of event '")?;
    Some((count(n)?, event.trim_end_matches('\'').to_owned()))
}

/// `perf report -s type,typeoff --stdio`.
fn report(file: &mut PerfFile, text: &str) -> Result<()> {
    let mut total = 0.0;
    // Column indexes of the share, the count and the type offset.
    let mut columns: Option<(usize, Option<usize>, usize)> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if let Some((samples, event)) = samples_of_event(line) {
            total = samples;
            if !file.events.contains(&event) {
                file.events.push(event);
            }
            continue;
        }
        if let Some(header) = line.strip_prefix('#') {
            let names = cells(header.trim_start());
            if names.iter().any(|c| c.starts_with("Data Type")) {
                let share = names
                    .iter()
                    .position(|c| *c == "Self")
                    .or_else(|| names.iter().position(|c| *c == "Overhead"))
                    .ok_or_else(|| at(file, n, "perf report header without an Overhead column"))?;
                let offset = names
                    .iter()
                    .position(|c| *c == "Data Type Offset")
                    .ok_or_else(|| {
                        at(
                            file,
                            n,
                            "perf report without a Data Type Offset column: \
                             sort by it with perf report -s type,typeoff",
                        )
                    })?;
                let samples = names.iter().position(|c| *c == "Samples");
                columns = Some((share, samples, offset));
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        let Some((share_at, samples_at, offset_at)) = columns else {
            return Err(at(file, n, "a row before perf report's header"));
        };
        let row = cells(line);
        let (Some(share), Some(offset)) = (row.get(share_at), row.get(offset_at)) else {
            return Err(at(
                file,
                n,
                format!("a row of {} columns, the header has more", row.len()),
            ));
        };
        let p =
            percent(share).ok_or_else(|| at(file, n, format!("'{share}' is not a percentage")))?;
        let samples = match samples_at.and_then(|s| row.get(s)) {
            Some(c) => count(c).ok_or_else(|| at(file, n, format!("'{c}' is not a count")))?,
            None => p * total / 100.0,
        };
        match type_offset(offset) {
            Some((ty, offset, field)) if field.is_some() && is_aggregate(&ty) => file
                .samples
                .push(Sample::row(ty, offset, field, p, samples, n)),
            _ => file.untyped += samples,
        }
    }
    if columns.is_none() {
        return Err(at(file, 1, "no perf report header"));
    }
    Ok(())
}

/// `Annotate type: 'struct ring' in /work/ring (4368 samples):`.
fn annotated_type(line: &str) -> Option<(String, f64)> {
    let rest = line.strip_prefix("Annotate type: '")?;
    let (ty, rest) = rest.split_once('\'')?;
    let (_, n) = rest.rsplit_once('(')?;
    let n = n.strip_suffix("samples):")?;
    Some((ty.to_owned(), count(n)?))
}

/// `perf annotate --data-type --stdio`.
fn annotate_type(file: &mut PerfFile, text: &str) -> Result<()> {
    let mut current: Option<(String, f64)> = None;
    // The names of the members open around the row.
    let mut open: Vec<Option<String>> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if let Some(t) = annotated_type(line) {
            current = Some(t);
            open.clear();
            continue;
        }
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('=') || trimmed.starts_with("Percent") {
            continue;
        }
        if trimmed == "};" {
            open.pop();
            continue;
        }
        let Some((ty, total)) = &current else {
            return Err(at(file, n, "a row before any 'Annotate type:' line"));
        };
        // Percent, offset, size, ...
        let row = cells(line);
        if row.len() < 5 {
            return Err(at(file, n, "not a row of percent, offset, size and field"));
        }
        let p = percent(row[0])
            .ok_or_else(|| at(file, n, format!("'{}' is not a percentage", row[0])))?;
        let offset =
            hex(row[1]).ok_or_else(|| at(file, n, format!("'{}' is not an offset", row[1])))?;
        // Then the member's type and "NAME;", "NAME {", or "{" for the
        // type itself and an anonymous member.
        let rest = row[4..].join(" ");
        if let Some(name) = rest.strip_suffix('{') {
            let name = name.trim();
            open.push((!name.is_empty()).then(|| name.to_owned()));
            continue;
        }
        let name = rest.trim_end_matches(';').trim();
        let mut path: Vec<&str> = open.iter().flatten().map(String::as_str).collect();
        if !name.is_empty() {
            path.push(name);
        }
        let samples = p * total / 100.0;
        if path.is_empty() || !is_aggregate(ty) {
            // A base type's samples: no member to give them to.
            file.untyped += samples;
            continue;
        }
        let field = Some(path.join("."));
        file.samples
            .push(Sample::row(ty.clone(), offset, field, p, samples, n));
    }
    if current.is_none() {
        return Err(at(file, 1, "no 'Annotate type:' line"));
    }
    Ok(())
}

/// An offset as the annotation prints it: `0`, `0x18`.
fn hex(text: &str) -> Option<u64> {
    let text = text.trim();
    match text.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => text.parse().ok(),
    }
}

/// ` Percent | Source code & Disassembly of ring for cpu-clock (11920
/// samples, percent: local period)`: the event and the count.
fn disassembly_of(line: &str) -> Option<(String, f64)> {
    let (_, rest) = line.split_once("Disassembly of ")?;
    let (_, rest) = rest.rsplit_once(" for ")?;
    let (event, rest) = rest.split_once(" (")?;
    let (n, _) = rest.split_once(" samples")?;
    Some((event.to_owned(), count(n)?))
}

/// `perf annotate --code-with-type --stdio`.
fn code_with_type(file: &mut PerfFile, text: &str) -> Result<()> {
    let mut block: Option<f64> = None;
    let mut function: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if let Some((event, samples)) = disassembly_of(line) {
            if !file.events.contains(&event) {
                file.events.push(event);
            }
            block = Some(samples);
            function = None;
            continue;
        }
        let Some((left, right)) = line.split_once(" : ") else {
            continue;
        };
        let right = right.trim();
        // `5    00000000000012c0 <consume>:` names the function.
        if let Some(name) = right
            .strip_suffix(">:")
            .and_then(|r| r.rsplit_once('<'))
            .map(|(_, name)| name)
        {
            function = Some(name.split('+').next().unwrap_or(name).to_owned());
            continue;
        }
        let Some((code, tag)) = right.split_once("# data-type: ") else {
            continue;
        };
        let (Some(total), Some(func)) = (block, &function) else {
            return Err(at(file, n, "an instruction before its function"));
        };
        let p = percent(left)
            .ok_or_else(|| at(file, n, format!("'{}' is not a percentage", left.trim())))?;
        let samples = p * total / 100.0;
        // A base type's access (`int +0`) is no member of a struct.
        let Some((ty, offset, field)) = type_offset(tag).filter(|(ty, _, _)| is_aggregate(ty))
        else {
            file.untyped += samples;
            continue;
        };
        let instruction = code.split_once(':').map_or(code, |(_, i)| i).trim();
        file.samples.push(Sample {
            function: Some(func.clone()),
            op: Some(op_of(instruction)),
            ..Sample::row(ty, offset, field, p, samples, n)
        });
    }
    if block.is_none() {
        return Err(at(file, 1, "no 'Disassembly of' line"));
    }
    Ok(())
}

/// What `instruction` (x86 in AT&T syntax, or arm64) does to its memory
/// operand.
pub fn op_of(instruction: &str) -> Op {
    let mut words = instruction.split_whitespace();
    let mut mnemonic = words.next().unwrap_or("");
    if mnemonic == "lock" {
        return Op::Locked;
    }
    if matches!(mnemonic, "rep" | "repz" | "repnz" | "notrack") {
        mnemonic = words.next().unwrap_or("");
    }
    let operands: String = words.collect::<Vec<_>>().join(" ");
    let m = mnemonic.to_ascii_lowercase();
    // arm64, by mnemonic; the atomics first (`ldaxr` before `ldar`).
    if let Some((_, op)) = ARM64.iter().find(|(prefix, _)| m.starts_with(prefix)) {
        return *op;
    }
    // x86, AT&T: the destination is the last operand.
    if m.starts_with("xchg") {
        return Op::Locked;
    }
    let parts = split_operands(&operands);
    let memory_last = parts.last().is_some_and(|p| p.contains('('));
    if !memory_last || parts.len() < 2 && !is_unary_update(&m) {
        return Op::Load;
    }
    if m.starts_with("cmp") || m.starts_with("test") || m.starts_with("bt") && m.len() <= 3 {
        return Op::Load;
    }
    if ["mov", "set", "stos", "cmov"]
        .iter()
        .any(|p| m.starts_with(p))
    {
        return Op::Store;
    }
    Op::Update
}

/// arm64 mnemonics by prefix and what they do to memory, atomics first.
const ARM64: [(&str, Op); 20] = [
    ("ldadd", Op::Locked),
    ("ldclr", Op::Locked),
    ("ldeor", Op::Locked),
    ("ldset", Op::Locked),
    ("stadd", Op::Locked),
    ("stset", Op::Locked),
    ("stclr", Op::Locked),
    ("swp", Op::Locked),
    ("cas", Op::Locked),
    ("ldxr", Op::Locked),
    ("ldax", Op::Locked),
    ("stlx", Op::Locked),
    ("stxr", Op::Locked),
    ("ldr", Op::Load),
    ("ldp", Op::Load),
    ("ldur", Op::Load),
    ("ldar", Op::Load),
    ("str", Op::Store),
    ("stp", Op::Store),
    ("stur", Op::Store),
];

/// `incq (%rax)`, `negl`, `notb`, `decw`: one operand, read and written.
fn is_unary_update(m: &str) -> bool {
    ["inc", "dec", "neg", "not"]
        .iter()
        .any(|u| m.starts_with(u))
}

/// The operands of an AT&T instruction: split on commas outside parentheses.
fn split_operands(operands: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in operands.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(operands[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = operands[start..].trim();
    if !last.is_empty() {
        out.push(last);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_load_store_update_or_lock() {
        assert_eq!(op_of("mov    0x8(%rdi),%rdx"), Op::Load);
        assert_eq!(op_of("mov    %rcx,0x8(%rdi)"), Op::Store);
        assert_eq!(op_of("addq   $0x1,0x20(%rbx)"), Op::Update);
        assert_eq!(op_of("add    %r8,(%rsi)"), Op::Update);
        assert_eq!(op_of("add    0x10(%rdi),%rdx"), Op::Load);
        assert_eq!(op_of("lock addq $0x1,0x18(%rdi)"), Op::Locked);
        assert_eq!(op_of("cmp    %rcx,(%rdx)"), Op::Load);
        assert_eq!(op_of("incl   (%rax)"), Op::Update);
        assert_eq!(op_of("movl   $0x1,(%rdi)"), Op::Store);
        assert_eq!(op_of("xchg   %eax,(%rdx)"), Op::Locked);
        assert_eq!(op_of("ldr     x1, [x0, #8]"), Op::Load);
        assert_eq!(op_of("str     x1, [x0, #8]"), Op::Store);
        assert_eq!(op_of("ldaddal x2, x1, [x0]"), Op::Locked);
    }

    #[test]
    fn type_offsets_as_perf_prints_them() {
        assert_eq!(
            type_offset("struct ring +0x18 (events.counter)"),
            Some(("struct ring".into(), 0x18, Some("events.counter".into())))
        );
        assert_eq!(
            type_offset("long int +0 (no field)"),
            Some(("long int".into(), 0, None))
        );
        assert_eq!(type_offset("(unknown)"), None);
        assert_eq!(type_offset("(stack operation)"), None);
        assert_eq!(
            cells("    13.40%  struct ring  struct ring +0x10 (mask)"),
            ["13.40%", "struct ring", "struct ring +0x10 (mask)"]
        );
    }

    #[test]
    fn text_that_is_no_perf_output_is_refused() {
        let e = parse(Path::new("x.txt"), "hello\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a perf output"), "{e}");
        let e = parse(
            Path::new("r.txt"),
            "# Overhead  Data Type\n    10.00%  struct a\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("-s type,typeoff"), "{e}");
    }
}
