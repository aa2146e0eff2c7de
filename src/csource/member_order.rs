//! A struct's members reordered in its C header, as a unified diff that
//! `git apply` takes: each member moves with the comment lines right above
//! it, found through the member's `DW_AT_decl_line`, and keeps the
//! conditional it is declared under (`#ifdef CONFIG_X` ... `#endif`,
//! nested as written; a member of an `#else` branch under the negated
//! condition). A `#define` moves with the member after it (one ending an
//! `#if` branch goes after the last member, under its conditions), and a
//! conditional block of members no build has stays with the one member
//! beside them. Refused, with the file and line: a member that starts on
//! another member's line, a conditional inside a member's declaration, an
//! `#elif`, a `#define` a member uses, and lines that belong to no member.
//! The header is read through [`crate::csource`]'s scanner: a bracket, a
//! `;` or a `#` in a comment or a literal is no code.

use std::collections::HashMap;

use super::{Directive, Line, Nesting, Pp, scan};
use crate::error::{Error, Result};

/// One entry of the new order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// A member, by its declaration line (1-based).
    Member(u64),
    /// `__cacheline_group_begin_aligned(G)` ... `_end_aligned(G)` around
    /// members.
    AlignedGroup(String, Vec<u64>),
    /// `__cacheline_group_begin(G)` ... `__cacheline_group_end(G)`.
    Group(String, Vec<u64>),
}

/// A conditional frame a line is under: the `#if` line (0-based) and the
/// branch (0: the `#if` one, 1: the `#else` one).
type Frame = (usize, usize);

/// An `#if` block of the body.
#[derive(Default)]
struct Cond {
    /// Its `#else` and `#endif` lines.
    else_line: Option<usize>,
    endif: usize,
    /// The negated condition, for a member of the `#else` branch moved
    /// away from the `#if` branch.
    negated: String,
    /// True when a line in it belongs to no member the builds have (the
    /// members of another config): the block moves whole.
    unknown: bool,
    /// The block it is in, if any.
    parent: Option<usize>,
}

/// What a line of the body is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Blank,
    Comment,
    /// `#if`, `#ifdef`, `#ifndef`.
    If,
    Else,
    Endif,
    /// `#define` or `#undef`, or a line it goes on to.
    Define,
    /// A preprocessor line of another kind (`#include`, `#pragma`).
    Unhandled,
    /// Part of a member's declaration.
    Member,
    /// Anything else: a declaration the debug info does not place.
    Other,
}

/// The unified diff that reorders the struct declared at `struct_line` of
/// `text` (the file `path`, relative to the tree) as `order` says, the
/// members declared at `removed` (old group markers) dropped with their
/// comments. `runs` gives, for a unit of several declarations (a bitfield
/// run), its first line and the line of its last declaration.
pub(crate) fn reorder(
    path: &str,
    text: &str,
    struct_line: u64,
    order: &[Piece],
    removed: &[u64],
    runs: &[(u64, u64)],
) -> Result<String> {
    let mut body = Body::find(path, text, struct_line)?;
    let starts = body.member_starts(order, removed)?;
    let declarations = body.declarations(&starts, runs)?;
    let conds = body.conditionals()?;
    let blocks = body.blocks(&starts, &declarations, &conds, removed)?;
    body.check_defines(&blocks, &declarations.inner)?;
    let new_body = body.place(order, &starts, &blocks, &conds);
    Ok(body.unified_diff(&new_body))
}

impl Piece {
    /// The declaration lines of the members it places.
    fn lines(&self) -> &[u64] {
        match self {
            Piece::Member(l) => std::slice::from_ref(l),
            Piece::AlignedGroup(_, m) | Piece::Group(_, m) => m,
        }
    }
}

/// The header's lines and the struct's body among them, with what each
/// line is; the phases of [`reorder`] are its methods.
struct Body<'a> {
    /// The file, relative to the tree, for refusals and the diff.
    path: &'a str,
    /// The header's lines, scanned.
    lines: Vec<Line<'a>>,
    /// The line of the struct's `{` (0-based).
    open: usize,
    /// The line of the `}` that closes it.
    close: usize,
    /// Each line's kind; the members' lines are marked once their
    /// declarations are read.
    kinds: Vec<Kind>,
}

/// The members' declarations in the body.
struct Declarations {
    /// Each member's first and last line, by the line the debug info
    /// gives (both 0-based).
    extent: HashMap<usize, (usize, usize)>,
    /// `#define`s inside a member's declaration: line, name, the member.
    inner: Vec<(usize, String, usize)>,
}

/// The conditionals of the body.
struct Conditionals {
    /// Each `#if` block, by its `#if` line.
    conds: HashMap<usize, Cond>,
    /// The frames every line is under.
    frames: Vec<Vec<Frame>>,
}

/// A member's block: the lines before it that move with it (comments,
/// blank lines, #defines, whole blocks of other configs, each with its
/// frames), and its own lines, under its frames.
struct Block {
    before: Vec<(usize, Vec<Frame>)>,
    lines: (usize, usize),
    frames: Vec<Frame>,
}

/// The body cut into what moves.
struct Blocks {
    /// Each member's block, by its declaration line.
    of: HashMap<usize, Block>,
    /// The `#define`s outside members: line and name.
    defines: Vec<(usize, String)>,
    /// #defines (and other configs' blocks) no member can take along:
    /// they go last, under their own conditions.
    loose: Vec<(usize, Vec<Frame>)>,
}

impl<'a> Body<'a> {
    /// The body of the struct declared at `struct_line` of `text`: from
    /// that line's `{` to the brace that closes it.
    fn find(path: &'a str, text: &'a str, struct_line: u64) -> Result<Self> {
        let lines = scan(text);
        let open = (struct_line as usize).saturating_sub(1);
        if open >= lines.len() || !lines[open].code.contains('{') {
            return Err(refusal(
                path,
                open,
                "the struct's declaration line opens no body here",
            ));
        }
        let mut depth = 0i64;
        let mut close = None;
        for (i, l) in lines.iter().enumerate().skip(open) {
            if i > open && l.preprocessor {
                continue;
            }
            depth += l.code.matches('{').count() as i64 - l.code.matches('}').count() as i64;
            if depth == 0 {
                close = Some(i);
                break;
            }
        }
        let close = close.ok_or_else(|| refusal(path, open, "the struct's body does not close"))?;
        let kinds = lines.iter().map(kind_of).collect();
        Ok(Body {
            path,
            lines,
            open,
            close,
            kinds,
        })
    }

    /// The refusal of the patch at `line` (0-based), saying why.
    fn refuse(&self, line: usize, why: &str) -> Error {
        refusal(self.path, line, why)
    }

    /// The 0-based index of a 1-based line of the debug info; a 0
    /// (corrupt debug info) names no line.
    fn index(&self, line: u64) -> Result<usize> {
        (line as usize).checked_sub(1).ok_or_else(|| {
            self.refuse(
                self.open,
                "a member's declaration line is 0 in the debug info",
            )
        })
    }

    /// The lines the members of `order` and the `removed` ones are
    /// declared at, sorted: at least one, no two alike, all inside the
    /// body.
    fn member_starts(&self, order: &[Piece], removed: &[u64]) -> Result<Vec<usize>> {
        let mut starts: Vec<usize> = order
            .iter()
            .flat_map(Piece::lines)
            .chain(removed)
            .map(|&l| self.index(l))
            .collect::<Result<_>>()?;
        starts.sort_unstable();
        if starts.is_empty() {
            return Err(self.refuse(self.open, "the order moves no member"));
        }
        if starts.windows(2).any(|w| w[0] == w[1]) {
            return Err(self.refuse(self.open, "two members are declared on one line"));
        }
        if let Some(&bad) = starts.iter().find(|&&l| l <= self.open || l >= self.close) {
            return Err(self.refuse(
                bad,
                "a member's declaration line is outside the struct's body",
            ));
        }
        Ok(starts)
    }

    /// Each member's declaration: from the line that opens what its line
    /// closes (`enum {` ... `} state:16;`) to its `;` outside brackets
    /// (for a unit of `runs`, its last declaration's), with a comment
    /// opened after the `;`. Marks its lines as the member's.
    fn declarations(&mut self, starts: &[usize], runs: &[(u64, u64)]) -> Result<Declarations> {
        let last_of: HashMap<usize, usize> = runs
            .iter()
            .map(|&(a, b)| Ok((self.index(a)?, self.index(b)?)))
            .collect::<Result<_>>()?;
        let lines = &self.lines;
        let mut extent = HashMap::new();
        let mut inner = Vec::new();
        let mut previous_end = self.open;
        for &start in starts {
            let mut first = start;
            let mut depth = unbalanced(&lines[start].code);
            while depth > 0 {
                if first <= previous_end + 1 {
                    return Err(
                        self.refuse(start, "a member's declaration does not open in the body")
                    );
                }
                first -= 1;
                depth += unbalanced(&lines[first].code);
            }
            if first <= previous_end {
                return Err(self.refuse(start, "a member starts inside another's declaration"));
            }
            let from = last_of.get(&start).copied().unwrap_or(start);
            let mut depth = 0i64;
            let mut end = None;
            for (i, l) in lines.iter().enumerate().take(self.close).skip(from) {
                depth += brackets(&l.code);
                if depth <= 0 && l.code.contains(';') {
                    end = Some(i);
                    break;
                }
            }
            let mut end =
                end.ok_or_else(|| self.refuse(start, "a member's declaration does not end"))?;
            // A comment opened after the `;` (`u32 x; /* two ... lines */`)
            // is the member's.
            if lines[end].in_comment {
                end = (end + 1..self.close)
                    .find(|&i| !lines[i].in_comment)
                    .ok_or_else(|| self.refuse(end, "a member's comment does not end"))?;
            }
            // A #define inside (tcp_sock's rack) moves with the member, and
            // so does a conditional opened and closed inside it (6.12
            // mm_struct's lru_gen: `#ifdef CONFIG_MEMCG` around a member of
            // its own struct).
            let closed = conditionals_closed(&lines[first..=end]);
            for (i, line) in lines.iter().enumerate().take(end + 1).skip(first) {
                let Some(directive) = &line.directive else {
                    continue;
                };
                let conditional =
                    matches!(directive.kind, Pp::If | Pp::Elif | Pp::Else | Pp::Endif);
                match directive.defines() {
                    Some(name) if !line.joins_next => {
                        inner.push((i, name.to_owned(), start));
                    }
                    None if conditional && closed && !line.joins_next => {}
                    _ => {
                        return Err(self.refuse(
                            i,
                            "a preprocessor line inside a member's declaration (a conditional \
                             around part of a member)",
                        ));
                    }
                }
            }
            for k in &mut self.kinds[first..=end] {
                *k = Kind::Member;
            }
            extent.insert(start, (first, end));
            previous_end = end;
        }
        Ok(Declarations { extent, inner })
    }

    /// Each `#if` block of the body and the frames of every line;
    /// refused: an `#elif`, a second `#else`, a conditional continued
    /// over lines or not closed in the body, a preprocessor line of
    /// another kind, and a line of no member outside every block. Marks
    /// the continuation lines of a `#define`.
    fn conditionals(&mut self) -> Result<Conditionals> {
        let lines = &self.lines;
        let mut conds: HashMap<usize, Cond> = HashMap::new();
        let mut nesting = Nesting::default();
        let mut frames: Vec<Vec<Frame>> = vec![Vec::new(); lines.len()];
        let mut i = self.open + 1;
        while i < self.close {
            frames[i] = frames_of(&nesting);
            let innermost = frames[i].last().copied();
            let pp = lines[i].directive.as_ref().map(|d| d.kind);
            match self.kinds[i] {
                Kind::If => {
                    if lines[i].joins_next {
                        return Err(self.refuse(i, "a conditional continued over lines"));
                    }
                    conds.insert(
                        i,
                        Cond {
                            negated: lines[i]
                                .directive
                                .as_ref()
                                .map_or_else(String::new, negated),
                            parent: innermost.map(|f| f.0),
                            ..Cond::default()
                        },
                    );
                    nesting.step(i, Pp::If);
                }
                Kind::Else => {
                    let Some((c, branch)) = innermost else {
                        return Err(self.refuse(i, "an #else without its #if in the struct's body"));
                    };
                    if pp == Some(Pp::Elif) {
                        return Err(self.refuse(i, "an #elif (not handled yet)"));
                    }
                    if branch != 0 {
                        return Err(self.refuse(i, "a second #else"));
                    }
                    nesting.step(i, Pp::Else);
                    conds.get_mut(&c).unwrap().else_line = Some(i);
                }
                Kind::Endif => {
                    let Some((c, _)) = innermost else {
                        return Err(
                            self.refuse(i, "an #endif without its #if in the struct's body")
                        );
                    };
                    nesting.step(i, Pp::Endif);
                    conds.get_mut(&c).unwrap().endif = i;
                }
                Kind::Define => {
                    let mut j = i;
                    while lines[j].joins_next && j + 1 < self.close {
                        j += 1;
                        if self.kinds[j] == Kind::Member {
                            return Err(
                                self.refuse(i, "a #define continued into a member's declaration")
                            );
                        }
                        self.kinds[j] = Kind::Define;
                        frames[j] = frames[i].clone();
                    }
                    i = j;
                }
                Kind::Unhandled => {
                    return Err(self.refuse(i, "a preprocessor line of a kind not handled"));
                }
                Kind::Other => match innermost {
                    // Another config's member: its block moves whole.
                    Some((c, _)) => conds.get_mut(&c).unwrap().unknown = true,
                    None => return Err(self.refuse(i, "a line belongs to no member")),
                },
                _ => {}
            }
            i += 1;
        }
        if let Some(open) = nesting.open().last() {
            return Err(self.refuse(open.line, "an #if not closed in the struct's body"));
        }
        Ok(Conditionals { conds, frames })
    }

    /// Cuts the body into what moves: each member's block, the
    /// `#define`s, and the lines no member takes along; refused: an `#if`
    /// block of another config's lines holding several members, and a
    /// line after the last member that belongs to none.
    fn blocks(
        &self,
        starts: &[usize],
        declarations: &Declarations,
        conditionals: &Conditionals,
        removed: &[u64],
    ) -> Result<Blocks> {
        let (lines, kinds) = (&self.lines, &self.kinds);
        let Conditionals { conds, frames } = conditionals;
        let extent = &declarations.extent;
        let mut of: HashMap<usize, Block> = HashMap::new();
        let mut pending: Vec<(usize, Vec<Frame>)> = Vec::new();
        let mut defines: Vec<(usize, String)> = Vec::new();
        let mut loose: Vec<(usize, Vec<Frame>)> = Vec::new();
        let mut i = self.open + 1;
        while i < self.close {
            // The outermost block with another config's lines moves whole.
            let atomic =
                (kinds[i] == Kind::If && conditionals.moves_whole(i) == Some(i)).then_some(i);
            if let Some(c) = atomic {
                let end = conds[&c].endif;
                let inside: Vec<usize> = starts
                    .iter()
                    .copied()
                    .filter(|&s| s > c && s < end)
                    .collect();
                match inside.as_slice() {
                    [] => pending.extend((c..=end).map(|l| (l, frames[c].clone()))),
                    [member] => {
                        let before = keep_before(&mut pending, &frames[c], kinds, &mut loose);
                        of.insert(
                            *member,
                            Block {
                                before,
                                lines: (c, end),
                                frames: frames[c].clone(),
                            },
                        );
                    }
                    [_, second, ..] => {
                        return Err(self.refuse(
                            *second,
                            "an #if block holds several members and lines the debug info does \
                             not place (another config's members): it cannot be split",
                        ));
                    }
                }
                i = end + 1;
                continue;
            }
            match kinds[i] {
                Kind::Member => {
                    let start = *starts
                        .iter()
                        .find(|&&s| extent[&s].0 == i)
                        .expect("a member's first line");
                    let (_, end) = extent[&start];
                    let before = if removed.contains(&(start as u64 + 1)) {
                        // A removed member's comments go with it; a #define
                        // above it stays for the next member.
                        pending.retain(|(l, _)| !matches!(kinds[*l], Kind::Blank | Kind::Comment));
                        Vec::new()
                    } else {
                        keep_before(&mut pending, &frames[i], kinds, &mut loose)
                    };
                    of.insert(
                        start,
                        Block {
                            before,
                            lines: (i, end),
                            frames: frames[i].clone(),
                        },
                    );
                    i = end + 1;
                    continue;
                }
                Kind::Define => {
                    if let Some(name) = lines[i].directive.as_ref().and_then(|d| d.defines()) {
                        defines.push((i, name.to_owned()));
                    }
                    pending.push((i, frames[i].clone()));
                }
                Kind::Blank | Kind::Comment => pending.push((i, frames[i].clone())),
                _ => {}
            }
            i += 1;
        }
        // A #define after the last member stays last.
        let trailing = keep_before(&mut pending, &[], kinds, &mut loose);
        if let Some(&(l, _)) = trailing.iter().find(|(l, _)| kinds[*l] != Kind::Blank) {
            return Err(self.refuse(l, "a line after the last member belongs to none"));
        }
        loose.extend(
            trailing
                .into_iter()
                .filter(|(l, _)| kinds[*l] != Kind::Blank && kinds[*l] != Kind::Comment),
        );
        loose.sort_by_key(|(l, _)| *l);
        Ok(Blocks { of, defines, loose })
    }

    /// Refuses a `#define` that moves away from a member using it: one
    /// before a member (it moves with the next), or one inside a member's
    /// declaration that another member uses.
    fn check_defines(&self, blocks: &Blocks, inner: &[(usize, String, usize)]) -> Result<()> {
        let lines = &self.lines;
        for (at, name) in &blocks.defines {
            let used = blocks.of.values().any(|b| {
                (b.lines.0..=b.lines.1)
                    .filter(|&l| self.kinds[l] != Kind::Define)
                    .any(|l| has_word(lines[l].text, name))
            });
            if used {
                return Err(self.refuse(
                    *at,
                    &format!("a #define in the body ({name}) that a member's declaration uses"),
                ));
            }
        }
        for (at, name, owner) in inner {
            let used = blocks.of.iter().any(|(start, b)| {
                start != owner && (b.lines.0..=b.lines.1).any(|l| has_word(lines[l].text, name))
            });
            if used {
                return Err(self.refuse(
                    *at,
                    &format!(
                        "a #define in a member ({name}) that another member's declaration uses"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The new body: the blocks in `order`, the groups' markers around
    /// theirs (indented as the first member), the loose lines last, each
    /// line under its conditions.
    fn place(
        &self,
        order: &[Piece],
        starts: &[usize],
        blocks: &Blocks,
        conditionals: &Conditionals,
    ) -> Vec<String> {
        let (lines, kinds) = (&self.lines, &self.kinds);
        let indent: String = lines[starts[0]]
            .text
            .chars()
            .take_while(|c| c.is_whitespace())
            .collect();
        let mut out = Emit {
            lines,
            conds: &conditionals.conds,
            body: Vec::new(),
            open: Vec::new(),
        };
        let emit_member = |out: &mut Emit, l: &u64| {
            let b = &blocks.of[&(*l as usize - 1)];
            for (line, frames) in &b.before {
                let k = common(&out.open, &b.frames);
                let content = !matches!(kinds[*line], Kind::Blank | Kind::Comment);
                if b.frames.starts_with(frames) && (content || frames.len() >= k) {
                    // A #define or another config's block under exactly
                    // its own conditions; a comment without closing any.
                    out.to(frames);
                } else {
                    out.to(&b.frames[..k]);
                }
                out.body.push(lines[*line].text.to_owned());
            }
            out.to(&b.frames);
            out.body.extend(
                lines[b.lines.0..=b.lines.1]
                    .iter()
                    .map(|l| l.text.to_owned()),
            );
        };
        for piece in order {
            match piece {
                Piece::Member(l) => emit_member(&mut out, l),
                Piece::AlignedGroup(g, members) | Piece::Group(g, members) => {
                    let aligned = if matches!(piece, Piece::AlignedGroup(..)) {
                        "_aligned"
                    } else {
                        ""
                    };
                    out.to(&[]);
                    out.body
                        .push(format!("{indent}__cacheline_group_begin{aligned}({g});"));
                    for l in members {
                        emit_member(&mut out, l);
                    }
                    out.to(&[]);
                    out.body
                        .push(format!("{indent}__cacheline_group_end{aligned}({g});"));
                }
            }
        }
        for (line, frames) in &blocks.loose {
            out.to(frames);
            out.body.push(lines[*line].text.to_owned());
        }
        out.to(&[]);
        out.body
    }

    /// The unified diff that replaces the old body with `new_body`: only
    /// the lines that change, in hunks with three lines of context, as
    /// `git apply` and `patch -p1` read them; empty when nothing changes
    /// (a plan that moves no member).
    fn unified_diff(&self, new_body: &[String]) -> String {
        const CONTEXT: usize = 3;
        let (path, lines, open, close) = (self.path, &self.lines, self.open, self.close);
        // The struct and three lines each side of it, old and new.
        let first = open.saturating_sub(CONTEXT);
        let end = (close + 1 + CONTEXT).min(lines.len());
        let old: Vec<&str> = lines[first..end].iter().map(|l| l.text).collect();
        let mut new: Vec<&str> = lines[first..=open].iter().map(|l| l.text).collect();
        new.extend(new_body.iter().map(String::as_str));
        new.extend(lines[close..end].iter().map(|l| l.text));
        let diff = similar::TextDiff::from_slices(&old, &new);
        let groups = diff.grouped_ops(CONTEXT);
        if groups.is_empty() {
            return String::new();
        }
        let mut out = format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n");
        for ops in groups {
            let (Some(head), Some(tail)) = (ops.first(), ops.last()) else {
                continue;
            };
            let olds = head.old_range().start..tail.old_range().end;
            let news = head.new_range().start..tail.new_range().end;
            out.push_str(&format!(
                "@@ -{},{} +{},{} @@\n",
                first + olds.start + 1,
                olds.len(),
                first + news.start + 1,
                news.len()
            ));
            for op in &ops {
                for change in diff.iter_changes(op) {
                    let sign = match change.tag() {
                        similar::ChangeTag::Equal => ' ',
                        similar::ChangeTag::Delete => '-',
                        similar::ChangeTag::Insert => '+',
                    };
                    out.push(sign);
                    out.push_str(change.value());
                    out.push('\n');
                }
            }
        }
        out
    }
}

/// The refusal of a patch of `path` at `line` (0-based), saying why.
fn refusal(path: &str, line: usize, why: &str) -> Error {
    Error::Patch {
        at: Some((path.to_owned(), line + 1)),
        why: why.to_owned(),
    }
}

impl Conditionals {
    /// The outermost block around `c` (an `#if` line), itself included,
    /// that moves whole because it holds another config's lines.
    fn moves_whole(&self, mut c: usize) -> Option<usize> {
        let mut out = None;
        loop {
            if self.conds[&c].unknown {
                out = Some(c);
            }
            match self.conds[&c].parent {
                Some(p) => c = p,
                None => return out,
            }
        }
    }
}

/// The new body as it is written, with the conditional frames open at
/// its end.
struct Emit<'a> {
    lines: &'a [Line<'a>],
    conds: &'a HashMap<usize, Cond>,
    body: Vec<String>,
    open: Vec<Frame>,
}

impl Emit<'_> {
    /// Closes and opens conditionals so that the next line is under
    /// `frames`: from one branch of a block straight to the next, its own
    /// `#else`; a branch opened alone, the `#if` line or its negation.
    fn to(&mut self, frames: &[Frame]) {
        let k = common(&self.open, frames);
        let next_branch = k < self.open.len()
            && k < frames.len()
            && self.open[k].0 == frames[k].0
            && frames[k].1 == self.open[k].1 + 1;
        let keep = if next_branch { k + 1 } else { k };
        while self.open.len() > keep {
            let (c, _) = self.open.pop().unwrap();
            self.body
                .push(self.lines[self.conds[&c].endif].text.to_owned());
        }
        if next_branch {
            let c = frames[k].0;
            let at = self.conds[&c].else_line.expect("an #else branch");
            self.body.push(self.lines[at].text.to_owned());
            self.open[k] = frames[k];
        }
        for &(c, branch) in &frames[self.open.len()..] {
            self.body.push(match branch {
                0 => self.lines[c].text.to_owned(),
                _ => self.conds[&c].negated.clone(),
            });
            self.open.push((c, branch));
        }
    }
}

/// How many leading frames two lists share.
fn common(a: &[Frame], b: &[Frame]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// The lines above a member that move with it: comments, and the
/// #defines and other configs' blocks under some of its conditions (none,
/// or the outer ones); those under a condition it is not under (the end
/// of an `#if` branch) go to `loose`, written after the last member.
fn keep_before(
    pending: &mut Vec<(usize, Vec<Frame>)>,
    frames: &[Frame],
    kinds: &[Kind],
    loose: &mut Vec<(usize, Vec<Frame>)>,
) -> Vec<(usize, Vec<Frame>)> {
    let (keep, away): (Vec<_>, Vec<_>) = std::mem::take(pending).into_iter().partition(|(l, f)| {
        matches!(kinds[*l], Kind::Blank | Kind::Comment) || frames.starts_with(f)
    });
    loose.extend(away);
    keep
}

/// The frames the lines after the directives `nesting` stepped through
/// are under.
fn frames_of(nesting: &Nesting) -> Vec<Frame> {
    nesting
        .open()
        .iter()
        .map(|open| (open.line, open.branches.len()))
        .collect()
}

fn kind_of(line: &Line) -> Kind {
    if line.text.trim().is_empty() {
        return Kind::Blank;
    }
    if let Some(d) = &line.directive {
        return match d.kind {
            Pp::If => Kind::If,
            Pp::Elif | Pp::Else => Kind::Else,
            Pp::Endif => Kind::Endif,
            Pp::Define => Kind::Define,
            Pp::Other => Kind::Unhandled,
        };
    }
    if line.comment && line.code.trim().is_empty() {
        Kind::Comment
    } else {
        Kind::Other
    }
}

/// The condition of an `#if` line, negated, as an `#if` line (without
/// its comments, whitespace collapsed).
fn negated(directive: &Directive) -> String {
    let expr = directive
        .argument()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    match directive.name() {
        "ifdef" => format!("#if !defined({expr})"),
        "ifndef" => format!("#if defined({expr})"),
        _ => format!("#if !({expr})"),
    }
}

fn has_word(line: &str, word: &str) -> bool {
    line.match_indices(word).any(|(at, _)| {
        let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
        !line[..at].ends_with(ident) && !line[at + word.len()..].starts_with(ident)
    })
}

/// Opening minus closing brackets of a line.
fn brackets(line: &str) -> i64 {
    line.chars()
        .map(|c| match c {
            '(' | '{' | '[' => 1,
            ')' | '}' | ']' => -1,
            _ => 0,
        })
        .sum()
}

/// Closing brackets a line has beyond those it opens: how far up its
/// declaration began (`} state:16;` closes the `enum {` above).
fn unbalanced(line: &str) -> i64 {
    -brackets(line)
}

/// True when every conditional among `lines` (a member's declaration) is
/// opened and closed among them, and an `#elif` or `#else` is inside one:
/// the member then moves whole, its conditionals with it.
fn conditionals_closed(lines: &[Line]) -> bool {
    let mut depth = 0usize;
    for d in lines.iter().filter_map(|l| l.directive.as_ref()) {
        match d.kind {
            Pp::If => depth += 1,
            Pp::Elif | Pp::Else if depth == 0 => return false,
            Pp::Endif => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            _ => {}
        }
    }
    depth == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "\
/* before */
struct s {
\t/* a's comment */
\tint a;
\t/* b's comment,
\t * two lines */
\tlong b;

\tchar c;
};
";

    #[test]
    fn an_order_that_moves_nothing_is_no_patch() {
        // HEADER's members in their own order: a (line 4), b (7), c (9).
        let order = [Piece::Member(4), Piece::Member(7), Piece::Member(9)];
        assert_eq!(reorder("x.h", HEADER, 2, &order, &[], &[]).unwrap(), "");
    }

    #[test]
    fn members_move_with_their_comments() {
        let order = [
            Piece::Member(9),
            Piece::AlignedGroup("g".into(), vec![4]),
            Piece::Member(7),
        ];
        let diff = reorder("x.h", HEADER, 2, &order, &[], &[]).unwrap();
        assert_eq!(
            added(HEADER, &diff),
            [
                "",
                "\tchar c;",
                "\t__cacheline_group_begin_aligned(g);",
                "\t/* a's comment */",
                "\tint a;",
                "\t__cacheline_group_end_aligned(g);",
                "\t/* b's comment,",
                "\t * two lines */",
                "\tlong b;",
            ]
        );
        // Only what moves is touched (read by eye): the blank line and c
        // go up, the group's two lines come in; a and b stay as context.
        let changed: Vec<&str> = diff
            .lines()
            .filter(|l| {
                (l.starts_with('+') || l.starts_with('-'))
                    && !l.starts_with("+++")
                    && !l.starts_with("---")
            })
            .collect();
        assert_eq!(
            changed,
            [
                "+",
                "+\tchar c;",
                "+\t__cacheline_group_begin_aligned(g);",
                "+\t__cacheline_group_end_aligned(g);",
                "-",
                "-\tchar c;",
            ],
            "{diff}"
        );
    }

    #[test]
    fn removed_members_go_with_their_comments() {
        let diff = reorder(
            "x.h",
            HEADER,
            2,
            &[Piece::Member(9), Piece::Member(4)],
            &[7],
            &[],
        )
        .unwrap();
        assert!(
            !diff
                .lines()
                .any(|l| l.starts_with('+') && l.contains("long b")),
            "{diff}"
        );
        assert!(
            !diff
                .lines()
                .any(|l| l.starts_with('+') && l.contains("two lines")),
            "{diff}"
        );
    }

    /// The new body of `text` reordered as `order` (members by line).
    fn body(text: &str, order: &[u64]) -> Vec<String> {
        let order: Vec<Piece> = order.iter().map(|&l| Piece::Member(l)).collect();
        added(text, &reorder("x.h", text, 1, &order, &[], &[]).unwrap())
    }

    /// The struct body of `text` (the lines between the first `{` line
    /// and the `};` after it) once `diff` is applied, as `patch` applies
    /// a unified diff: hunk by hunk, context and removed lines checked.
    fn added(text: &str, diff: &str) -> Vec<String> {
        let old: Vec<&str> = text.lines().collect();
        let mut new: Vec<String> = Vec::new();
        let mut at = 0;
        let mut hunk = diff.lines().skip_while(|l| !l.starts_with("@@")).peekable();
        while let Some(head) = hunk.next() {
            let start: usize = head
                .trim_start_matches("@@ -")
                .split([',', ' '])
                .next()
                .unwrap()
                .parse()
                .unwrap();
            while at + 1 < start {
                new.push(old[at].to_owned());
                at += 1;
            }
            while let Some(l) = hunk.next_if(|l| !l.starts_with("@@")) {
                match l.split_at(1) {
                    (" ", rest) => {
                        assert_eq!(old[at], rest, "context");
                        new.push(rest.to_owned());
                        at += 1;
                    }
                    ("-", rest) => {
                        assert_eq!(old[at], rest, "removed");
                        at += 1;
                    }
                    ("+", rest) => new.push(rest.to_owned()),
                    _ => panic!("not a hunk line: {l:?}"),
                }
            }
        }
        new.extend(old[at..].iter().map(|l| l.to_string()));
        let open = new.iter().position(|l| l.ends_with('{')).unwrap();
        let close = open
            + new[open..]
                .iter()
                .position(|l| l.starts_with("};"))
                .unwrap();
        new[open + 1..close].to_vec()
    }

    fn refused(text: &str, order: &[u64]) -> String {
        let order: Vec<Piece> = order.iter().map(|&l| Piece::Member(l)).collect();
        reorder("x.h", text, 1, &order, &[], &[])
            .unwrap_err()
            .to_string()
    }

    const CONDITIONALS: &str = "\
struct s {
\tint a;
#ifdef CONFIG_X
\t/* b's comment */
\tint b;
\tint c;
#endif
#if IS_ENABLED(CONFIG_Y) /* y */
\tint d;
#else
\tlong e;
#endif
\tint f;
};
";

    #[test]
    fn moved_members_keep_their_conditions() {
        assert_eq!(
            body(CONDITIONALS, &[5, 2, 6, 13, 11, 9]),
            [
                "#ifdef CONFIG_X",
                "\t/* b's comment */",
                "\tint b;",
                "#endif",
                "\tint a;",
                "#ifdef CONFIG_X",
                "\tint c;",
                "#endif",
                "\tint f;",
                "#if !(IS_ENABLED(CONFIG_Y))",
                "\tlong e;",
                "#endif",
                "#if IS_ENABLED(CONFIG_Y) /* y */",
                "\tint d;",
                "#endif",
            ]
        );
        // #ifdef and #ifndef negate as defined().
        let text = "struct s {\n\tint a;\n#ifndef X\n\tint b;\n#else\n\tint c;\n#endif\n};\n";
        assert_eq!(
            body(text, &[6, 2, 4]),
            [
                "#if defined(X)",
                "\tint c;",
                "#endif",
                "\tint a;",
                "#ifndef X",
                "\tint b;",
                "#endif"
            ]
        );
        let text = "struct s {\n#ifdef X\n\tint b;\n#else\n\tint c;\n#endif\n};\n";
        assert_eq!(
            body(text, &[5, 3]),
            [
                "#if !defined(X)",
                "\tint c;",
                "#endif",
                "#ifdef X",
                "\tint b;",
                "#endif"
            ]
        );
    }

    #[test]
    fn conditional_blocks_kept_in_order_are_kept_as_written() {
        let old: Vec<&str> = CONDITIONALS.lines().skip(1).take(12).collect();
        assert_eq!(body(CONDITIONALS, &[2, 5, 6, 9, 11, 13]), old);
    }

    #[test]
    fn nested_conditionals_nest_again_and_empty_ones_go() {
        let text = "\
struct s {
\tint a;
#ifdef A
\tint b;
#ifdef B
\tint c;
#endif
#endif
};
";
        assert_eq!(
            body(text, &[6, 2, 4]),
            [
                "#ifdef A", "#ifdef B", "\tint c;", "#endif", "#endif", "\tint a;", "#ifdef A",
                "\tint b;", "#endif"
            ]
        );
        // c and b back together under A: one block, B inside it.
        assert_eq!(
            body(text, &[2, 6, 4]),
            [
                "\tint a;", "#ifdef A", "#ifdef B", "\tint c;", "#endif", "\tint b;", "#endif"
            ]
        );
    }

    #[test]
    fn another_configs_block_moves_whole_with_its_member() {
        // r is in no build the debug info comes from: the block stays whole
        // with p, the one member of it a build has.
        let text = "\
struct s {
\tint a;

#ifdef CONFIG_PCPU
\tint *p;
#else
\tint r;
#endif
\tint z;
};
";
        assert_eq!(
            body(text, &[9, 5, 2]),
            [
                "\tint z;",
                "",
                "#ifdef CONFIG_PCPU",
                "\tint *p;",
                "#else",
                "\tint r;",
                "#endif",
                "\tint a;"
            ]
        );
        // With two members a build has, it could not be split.
        let text = "struct s {\n#ifdef X\n\tint p;\n\tint q;\n#else\n\tint r;\n#endif\n};\n";
        let err = refused(text, &[4, 3]);
        assert!(
            err.contains("x.h:4: an #if block holds several members"),
            "{err}"
        );
        // A block of no build's members goes with the next member.
        let text = "struct s {\n\tint a;\n#ifdef X\n\tint r;\n#endif\n\tint b;\n};\n";
        assert_eq!(
            body(text, &[6, 2]),
            ["#ifdef X", "\tint r;", "#endif", "\tint b;", "\tint a;"]
        );
    }

    #[test]
    fn a_define_moves_with_the_next_member_unless_a_member_uses_it() {
        let text = "struct s {\n\tint a;\n/* most */\n#define S_MAX 4\n\tint b;\n};\n";
        assert_eq!(
            body(text, &[5, 2]),
            ["/* most */", "#define S_MAX 4", "\tint b;", "\tint a;"]
        );
        let text = "struct s {\n\tint a;\n#define S_MAX 4\n\tint b[S_MAX];\n};\n";
        let err = refused(text, &[4, 2]);
        assert!(
            err.contains("x.h:3: a #define in the body (S_MAX) that a member's declaration uses"),
            "{err}"
        );
        let text = "struct s {\n\tint a;\n#define S_MAX 4\n#ifdef X\n\tint b;\n#endif\n};\n";
        assert_eq!(
            body(text, &[5, 2]),
            [
                "#define S_MAX 4",
                "#ifdef X",
                "\tint b;",
                "#endif",
                "\tint a;"
            ]
        );
        // At the end of a branch, with no member after it there, it goes
        // last, under its conditions (tcp_sock's BPF_SOCK_OPS_TEST_FLAG).
        let text = "struct s {\n#ifdef X\n\tint a;\n#define F 1\n#else\n#define F 0\n#endif\n\tint b;\n};\n";
        assert_eq!(
            body(text, &[8, 3]),
            [
                "\tint b;",
                "#ifdef X",
                "\tint a;",
                "#define F 1",
                "#else",
                "#define F 0",
                "#endif"
            ]
        );
    }

    #[test]
    fn declarations_over_several_lines_move_whole() {
        let text = "\
struct s {
\tint a;
\tenum {
\t\tE1,
\t} e:16;
\tstruct_group(g,
\t\tint x;
\t);
\tunsigned f:1;
\tunsigned h:1;
};
";
        let order = [
            Piece::Member(9),
            Piece::Member(6),
            Piece::Member(5),
            Piece::Member(2),
        ];
        let diff = reorder("x.h", text, 1, &order, &[], &[(9, 10)]).unwrap();
        assert_eq!(
            added(text, &diff),
            [
                "\tunsigned f:1;",
                "\tunsigned h:1;",
                "\tstruct_group(g,",
                "\t\tint x;",
                "\t);",
                "\tenum {",
                "\t\tE1,",
                "\t} e:16;",
                "\tint a;",
            ]
        );
    }

    #[test]
    fn a_comment_after_the_semicolon_over_lines_is_the_members() {
        // tcp_sock: `u64 bytes_sent; /* RFC4898 ...` over three lines.
        let text = "struct s {\n\tint a;\t/* a's,\n\t\t * two lines */\n\tint b;\n};\n";
        assert_eq!(
            body(text, &[4, 2]),
            ["\tint b;", "\tint a;\t/* a's,", "\t\t * two lines */"]
        );
    }

    #[test]
    fn a_define_continued_into_a_member_is_refused() {
        // The member's line was taken for the #define's: it had no block,
        // and placing it panicked.
        let text = "struct s {\n#define M \\\n\tint a;\n\tint b;\n};\n";
        let err = refused(text, &[4, 3]);
        assert!(
            err.contains("x.h:2: a #define continued into a member's declaration"),
            "{err}"
        );
    }

    #[test]
    fn brackets_and_semicolons_in_comments_are_not_code() {
        // The kernel's drbg_state and agp_allocate: a `)` or `(` in a
        // comment was taken for the declaration's (refused); so was a `;`.
        let text = "struct s {\n\tchar *v;\t/* state 1a) */\n\tu32 p;\t/* phys (some\n\t\t * devices; */\n\tint b;\n};\n";
        assert_eq!(
            body(text, &[5, 3, 2]),
            [
                "\tint b;",
                "\tu32 p;\t/* phys (some",
                "\t\t * devices; */",
                "\tchar *v;\t/* state 1a) */"
            ]
        );
    }

    #[test]
    fn every_line_of_a_comment_is_the_comments() {
        // A line inside a comment that does not start with `*` was taken
        // for a declaration no member has (refused).
        let text = "struct s {\n\tint a;\n\t/* b's comment\n\t   on two lines */\n\tint b;\n};\n";
        assert_eq!(
            body(text, &[5, 2]),
            [
                "\t/* b's comment",
                "\t   on two lines */",
                "\tint b;",
                "\tint a;"
            ]
        );
    }

    #[test]
    fn a_negated_condition_keeps_what_follows_a_comment() {
        // It was cut at the comment: `#if !(defined(A))`, wrong for B.
        let text =
            "struct s {\n#if defined(A) /* a */ && B\n\tint a;\n#else\n\tint b;\n#endif\n};\n";
        assert_eq!(
            body(text, &[5, 3]),
            [
                "#if !(defined(A) && B)",
                "\tint b;",
                "#endif",
                "#if defined(A) /* a */ && B",
                "\tint a;",
                "#endif"
            ]
        );
    }

    #[test]
    fn what_is_not_handled_is_refused_with_its_line() {
        let text = "struct s {\n\tint a;\n#ifdef X\n\tint b;\n#elif Y\n\tint c;\n#endif\n};\n";
        let err = refused(text, &[4, 2, 6]);
        assert!(err.contains("x.h:5: an #elif"), "{err}");
        // A conditional opened and closed inside a member moves with it;
        // one that closes outside is refused.
        let text =
            "struct s {\n\tint a;\n\tunion {\n#ifdef X\n\t\tint p;\n#endif\n\t\tint q;\n\t};\n};\n";
        assert_eq!(
            body(text, &[3, 2]),
            [
                "\tunion {",
                "#ifdef X",
                "\t\tint p;",
                "#endif",
                "\t\tint q;",
                "\t};",
                "\tint a;"
            ]
        );
        let text =
            "struct s {\n\tint a;\n#ifdef X\n\tunion {\n\t\tint p;\n#endif\n\t\tint q;\n\t};\n};\n";
        let err = refused(text, &[4, 2]);
        assert!(
            err.contains("x.h:6: a preprocessor line inside a member's declaration"),
            "{err}"
        );
        let text =
            "struct s {\n\tint a;\n\tstruct {\n#define N 1\n\t\tint x;\n\t} r;\n\tint b[N];\n};\n";
        let err = refused(text, &[7, 6, 2]);
        assert!(err.contains("x.h:4: a #define in a member (N)"), "{err}");
        let text = "struct s {\n\tint a;\n\tstruct {\n#define N 1\n\t\tint x[N];\n\t} r;\n};\n";
        assert_eq!(
            body(text, &[6, 2]),
            [
                "\tstruct {",
                "#define N 1",
                "\t\tint x[N];",
                "\t} r;",
                "\tint a;"
            ]
        );
        let text = "struct s {\n\tint a;\n#include \"b.h\"\n\tint b;\n};\n";
        let err = refused(text, &[4, 2]);
        assert!(
            err.contains("x.h:3: a preprocessor line of a kind not handled"),
            "{err}"
        );
        let text = "struct s {\n\tint a;\n\tint b;\n};\n";
        let err = refused(text, &[2]);
        assert!(err.contains("x.h:3: a line belongs to no member"), "{err}");
    }
}
