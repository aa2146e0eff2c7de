//! Findings: pairs of differently-classed spans on one cacheline of the
//! root, with the kind's default severity (or the rules' `[severity]`), for every placement of
//! the root relative to a line boundary.

use std::collections::BTreeMap;

use super::annotate::{Span, same_lock, same_memory};
use super::contexts::{self, Ctx, Usage};
use super::ranges;
use crate::lines::Lines;
use crate::rules::{Allow, Class, FieldRef, Kind, Rules, Severity, Writers};

/// One side of a pair, as it sits on the line shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Side {
    /// Index into the root's spans.
    pub span: usize,
    /// The path with the array elements on that line (`lrugen.refaulted[0][1][*]`).
    pub part: String,
    /// First and last byte of the span on that line, from the root's start.
    pub bytes: (u64, u64),
}

/// Two fields that must not share a line, and do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// What kind of sharing.
    pub kind: Kind,
    /// How bad (after `[severity]`).
    pub severity: Severity,
    /// The more disruptive side (the writer, or the lock).
    pub a: Side,
    /// The other side.
    pub b: Side,
    /// Cacheline shown: the first shared line at the first sharing placement.
    pub line: u64,
    /// First and last byte of that line, from the root's start (clipped to the root).
    pub line_bytes: (u64, u64),
    /// Every line the two share at that placement.
    pub lines: Vec<u64>,
    /// Offset of the root from a line boundary for the lines shown.
    pub placement: u64,
    /// In how many placements the pair shares a line.
    pub sharing_placements: usize,
    /// How many placements were tried (1 when the root is line-aligned).
    pub placements: usize,
    /// The `[[allow]]` reason, when the pair is accepted.
    pub allowed: Option<String>,
    /// For a pair with a context rule: who writes, and which contexts meet.
    pub meeting: Option<Meeting>,
    /// How hot the pair is, when the rules' `[heat]` says of either side:
    /// the colder side's heat (a line bounces as often as its colder user
    /// touches it), 0 for a side it says nothing of.
    pub heat: Option<u64>,
}

/// Contexts meeting on a line: `writes_in` write the first side, and
/// `others` use the line through the second side without touching the
/// first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meeting {
    /// The contexts writing the first side (`tx`, or `the holders of L`
    /// and `the users of F` for shorthand fields).
    pub writes_in: Vec<String>,
    /// Who writes.
    pub writers: Writers,
    /// The contexts whose line it is through the second side only.
    pub others: Vec<String>,
}

/// Lines listed per finding, at most (two huge arrays that overlap, as
/// union members can, share every line of the overlap).
const MAX_LINES: usize = 64;

/// Pairs of flagged spans compared per root, over all placements, at most.
/// A real layout compares a few pairs per line; spans that all overlap
/// (corrupt offsets, an absurd array) would compare every pair, which for
/// a few thousand spans is millions.
pub const MAX_COMPARED: usize = 10_000_000;

/// Findings per root, at most: each holds its lines and paths, and a corrupt
/// root can flag millions of pairs (an 8 KB fuzzed ELF flagged 4.2 million,
/// 3 GB).
pub const MAX_FINDINGS: usize = 50_000;

/// The flagged pairs of a root.
#[derive(Clone, Debug)]
pub struct Flagged {
    /// Flagged pairs, worst first.
    pub findings: Vec<Finding>,
    /// Why the search stopped early, when it hit a limit: the findings are
    /// then incomplete.
    pub stopped: Option<String>,
}

/// The placements of a root: offsets from a line boundary it can start at.
pub fn placements(alignment: u64, cacheline: u64) -> Vec<u64> {
    if alignment >= cacheline || alignment == 0 {
        vec![0]
    } else {
        (0..cacheline).step_by(alignment as usize).collect()
    }
}

/// Finds every flagged pair among `spans` of a root of `size` bytes, up to
/// [`MAX_COMPARED`] pairs compared and [`MAX_FINDINGS`] found; with
/// `rules.adjacent_lines`, also the pairs that share a 128-byte aligned
/// pair of lines but no line ([`Kind::AdjacentLines`]).
pub fn find(spans: &[Span], size: u64, alignment: u64, cacheline: u64, rules: &Rules) -> Flagged {
    let usages: Option<Vec<Usage<'_>>> = spans.iter().any(|s| s.access.is_some()).then(|| {
        (0..spans.len())
            .map(|i| Usage::of(spans, i, rules))
            .collect()
    });
    let judge = |i: usize, j: usize| classify(spans, usages.as_deref(), i, j);
    let mut limits = Limits::default();
    let by_line = sweep(spans, alignment, cacheline, &judge, &mut limits);
    let mut findings = Vec::new();
    let mut flagged_pairs = std::collections::HashSet::new();
    for ((a, b, kind), shared) in by_line.acc {
        flagged_pairs.insert((a, b));
        let Some(severity) = rules.severity.of(kind) else {
            continue;
        };
        findings.push(finding(
            spans,
            usages.as_deref(),
            (a, b, kind),
            severity,
            shared,
            Unit {
                size: cacheline,
                lines: 1,
            },
            by_line.placements,
            &rules.allow,
            size,
        ));
    }
    let severity = rules.severity.of(Kind::AdjacentLines);
    if let (true, Some(severity), None) = (rules.adjacent_lines, severity, &limits.stopped) {
        let by_pair = sweep(spans, alignment, 2 * cacheline, &judge, &mut limits);
        for ((a, b, _), shared) in by_pair.acc {
            if flagged_pairs.contains(&(a, b)) || !flagged_pairs.insert((a, b)) {
                continue;
            }
            findings.push(finding(
                spans,
                usages.as_deref(),
                (a, b, Kind::AdjacentLines),
                severity,
                shared,
                Unit {
                    size: 2 * cacheline,
                    lines: 2,
                },
                by_pair.placements,
                &rules.allow,
                size,
            ));
        }
    }
    if !rules.heat.is_empty() {
        for f in &mut findings {
            let a = rules.heat_of(&spans[f.a.span].owners);
            let b = rules.heat_of(&spans[f.b.span].owners);
            f.heat = (a.is_some() || b.is_some()).then(|| a.unwrap_or(0).min(b.unwrap_or(0)));
        }
    }
    // Worst first, then hottest first.
    findings.sort_by(|x, y| {
        y.severity
            .cmp(&x.severity)
            .then(y.heat.cmp(&x.heat))
            .then(x.line.cmp(&y.line))
            .then(spans[x.a.span].offset.cmp(&spans[y.a.span].offset))
            .then(x.kind.cmp(&y.kind))
            .then(spans[x.b.span].offset.cmp(&spans[y.b.span].offset))
    });
    Flagged {
        findings,
        stopped: limits.stopped,
    }
}

/// The granularity of a sweep: a line, or a 128-byte pair of lines.
#[derive(Clone, Copy)]
struct Unit {
    /// Bytes per unit.
    size: u64,
    /// Cachelines per unit.
    lines: u64,
}

/// What the sweeps have used of the limits.
#[derive(Default)]
struct Limits {
    compared: usize,
    distinct: usize,
    stopped: Option<String>,
}

/// The flagged pairs of one sweep.
struct Swept {
    acc: BTreeMap<(usize, usize, Kind), Shared>,
    placements: usize,
}

/// Every flagged pair of spans on one unit of `unit` bytes, over every
/// placement of the root.
fn sweep(
    spans: &[Span],
    alignment: u64,
    unit: u64,
    judge: &dyn Fn(usize, usize) -> Option<(usize, usize, Kind)>,
    limits: &mut Limits,
) -> Swept {
    let starts = placements(alignment, unit);
    let mut acc: BTreeMap<(usize, usize, Kind), Shared> = BTreeMap::new();
    let flagged: Vec<usize> = (0..spans.len())
        .filter(|&i| spans[i].size > 0 && spans[i].class.is_some_and(|c| c != Class::Cold))
        .collect();
    'placements: for &p in &starts {
        // Unit range of each span, swept in order: two spans share units
        // exactly when their ranges intersect. Work is bounded by the pairs
        // that share units (and by the limits), never by how many units a
        // (possibly absurd) span claims.
        let mut ranges: Vec<(u64, u64, usize)> = flagged
            .iter()
            .map(|&i| {
                let s = &spans[i];
                let l = Lines::of(s.offset.saturating_add(p), s.size, unit);
                (l.first, l.last, i)
            })
            .collect();
        ranges.sort_unstable();
        let mut here: BTreeMap<(usize, usize, Kind), Vec<u64>> = BTreeMap::new();
        'sweep: for (x, &(_, last_x, i)) in ranges.iter().enumerate() {
            for &(first_y, last_y, j) in &ranges[x + 1..] {
                if first_y > last_x {
                    break;
                }
                limits.compared += 1;
                if limits.compared > MAX_COMPARED {
                    limits.stopped = Some(cut_short(limits.compared - 1, limits.distinct));
                    break 'sweep;
                }
                let Some(key) = judge(i, j) else {
                    continue;
                };
                let new = !acc.contains_key(&key) && !here.contains_key(&key);
                if new && limits.distinct == MAX_FINDINGS {
                    limits.stopped = Some(cut_short(limits.compared - 1, limits.distinct));
                    break 'sweep;
                }
                limits.distinct += usize::from(new);
                let shared = first_y..=last_x.min(last_y);
                here.insert(key, shared.take(MAX_LINES).collect());
            }
        }
        for (key, lines) in here {
            acc.entry(key)
                .or_insert(Shared {
                    placements: 0,
                    first: p,
                    lines,
                })
                .placements += 1;
        }
        if limits.stopped.is_some() {
            break 'placements;
        }
    }
    Swept {
        acc,
        placements: starts.len(),
    }
}

/// The finding of one flagged pair, its lines shown in units of `unit`.
#[allow(clippy::too_many_arguments)]
fn finding(
    spans: &[Span],
    usages: Option<&[Usage<'_>]>,
    (a, b, kind): (usize, usize, Kind),
    severity: Severity,
    shared: Shared,
    unit: Unit,
    placements: usize,
    allow: &[Allow],
    size: u64,
) -> Finding {
    let Shared {
        placements: count,
        first: p,
        lines,
    } = shared;
    let start = (lines[0] * unit.size).saturating_sub(p);
    let end = ((lines[0] + 1) * unit.size - p).min(size).saturating_sub(1);
    let side = |i: usize| {
        let s = &spans[i];
        // A member past the end of a corrupt root still gets a range.
        let first = s.offset.max(start);
        let last = (s.end() - 1).min(end).max(first);
        Side {
            span: i,
            part: ranges::part_on_line(s, first, last),
            bytes: (first, last),
        }
    };
    let lines: Vec<u64> = lines
        .iter()
        .flat_map(|&l| (l * unit.lines)..((l + 1) * unit.lines))
        .take(MAX_LINES)
        .collect();
    Finding {
        kind,
        severity,
        a: side(a),
        b: side(b),
        line: lines[0],
        line_bytes: (start, end),
        lines,
        placement: p,
        sharing_placements: count,
        placements,
        allowed: allowed(allow, &spans[a], &spans[b]),
        meeting: usages.and_then(|u| meeting(spans, &u[a], &u[b])),
        heat: None,
    }
}

/// Who writes and which contexts meet, for a pair with a context rule.
fn meeting(spans: &[Span], a: &Usage<'_>, b: &Usage<'_>) -> Option<Meeting> {
    let harm = contexts::judge(a, b).ok()?;
    let name = |c: &Ctx<'_>| match c {
        Ctx::Named(n) => (*n).to_owned(),
        Ctx::Own(i) => format!("the users of {}", spans[*i].path),
        Ctx::Lock(l) => format!("the holders of {l}"),
    };
    Some(Meeting {
        writes_in: harm.writes_in.iter().map(name).collect(),
        writers: harm.writers,
        others: harm.others.iter().map(name).collect(),
    })
}

/// The note of a search stopped at a limit.
fn cut_short(pairs: usize, findings: usize) -> String {
    format!(
        "stopped comparing fields after {pairs} pairs and {findings} findings: \
         the root is corrupt or enormous, and its findings are incomplete"
    )
}

/// Where one pair shares lines, over all placements.
struct Shared {
    /// Placements in which the pair shares a line.
    placements: usize,
    /// The first such placement.
    first: u64,
    /// The lines shared at that placement.
    lines: Vec<u64>,
}

/// The kind of a pair (none for alternatives of one union, which are the
/// same memory), ordered so that the more disruptive side (the writer)
/// comes first: by the severity matrix for two shorthand fields,
/// on the context scale ([`contexts`]) when either has a context rule.
pub(crate) fn classify(
    spans: &[Span],
    usages: Option<&[Usage<'_>]>,
    i: usize,
    j: usize,
) -> Option<(usize, usize, Kind)> {
    if same_memory(&spans[i], &spans[j]) {
        return None;
    }
    if let Some(u) = usages
        && (spans[i].access.is_some() || spans[j].access.is_some())
    {
        let harm = contexts::judge(&u[i], &u[j]).ok()?;
        let (a, b) = if harm.first_writes { (i, j) } else { (j, i) };
        return Some((a, b, harm.kind));
    }
    let (ci, cj) = (spans[i].class?, spans[j].class?);
    let (a, b) = if (ci.disruption(), spans[i].offset) <= (cj.disruption(), spans[j].offset) {
        (i, j)
    } else {
        (j, i)
    };
    let (sa, sb) = (&spans[a], &spans[b]);
    // The same lock; or a lockless writer that is the other's lock word
    // (a lockref beside what its spinlock protects): the lock's takers
    // write that word, so its writes take nothing they do not need.
    let same = || match (&sa.lock, &sb.lock) {
        (Some(x), Some(y)) => same_lock(x, y),
        (None, Some(y)) => sa.class == Some(Class::LocklessWrite) && same_lock(&sa.path, y),
        _ => false,
    };
    let kind = sa.class?.pair_kind(sb.class?, same())?;
    Some((a, b, kind))
}

fn matches(field: &FieldRef, span: &Span) -> bool {
    span.owners.iter().any(|(ty, path)| {
        ty == &field.ty
            && path
                .strip_prefix(field.path.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
    })
}

fn allowed(allow: &[Allow], a: &Span, b: &Span) -> Option<String> {
    allow
        .iter()
        .find(|e| {
            let [x, y] = &e.fields;
            (matches(x, a) && matches(y, b)) || (matches(y, a) && matches(x, b))
        })
        .map(|e| e.reason.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::annotate::Origin;

    fn span(path: &str, offset: u64, size: u64, class: Option<Class>, lock: Option<&str>) -> Span {
        Span {
            path: path.into(),
            offset,
            size,
            class,
            access: None,
            lock: lock.map(str::to_owned),
            origin: Origin::None,
            owners: vec![("root".into(), path.into())],
            array: None,
            decl: None,
            group: None,
            unions: vec![],
        }
    }

    fn kinds(spans: &[Span], alignment: u64) -> Vec<(Kind, String, String, u64, usize)> {
        find(spans, 256, alignment, 64, &Rules::default())
            .findings
            .into_iter()
            .map(|f| {
                (
                    f.kind,
                    spans[f.a.span].path.clone(),
                    spans[f.b.span].path.clone(),
                    f.line,
                    f.sharing_placements,
                )
            })
            .collect()
    }

    #[test]
    fn the_severity_matrix() {
        use Class::*;
        let l = Some("l");
        let cases = [
            (HotRead, None, HotRead, None, None),
            (HotRead, None, LocklessWrite, None, Some(Kind::FalseSharing)),
            (HotRead, None, LockProtected, l, Some(Kind::ReadVsLocked)),
            (HotRead, None, Lock, Some("k"), Some(Kind::ReadVsLock)),
            (
                LocklessWrite,
                None,
                LocklessWrite,
                None,
                Some(Kind::WriteVsWrite),
            ),
            (
                LockProtected,
                l,
                LocklessWrite,
                None,
                Some(Kind::WriteVsLocked),
            ),
            (
                Lock,
                Some("k"),
                LocklessWrite,
                None,
                Some(Kind::WriteVsLock),
            ),
            (LockProtected, l, LockProtected, l, None),
            (
                LockProtected,
                l,
                LockProtected,
                Some("m"),
                Some(Kind::LocksMixed),
            ),
            (LockProtected, Some("k"), Lock, Some("k"), None),
            (
                LockProtected,
                l,
                Lock,
                Some("k"),
                Some(Kind::LockedVsOtherLock),
            ),
            (Lock, Some("k"), Lock, Some("m"), Some(Kind::TwoLocks)),
            (Cold, None, LocklessWrite, None, None),
        ];
        for (c1, l1, c2, l2, want) in cases {
            let spans = [span("x", 0, 8, Some(c1), l1), span("y", 8, 8, Some(c2), l2)];
            let got = kinds(&spans, 64).first().map(|k| k.0);
            assert_eq!(got, want, "{c1} {l1:?} x {c2} {l2:?}");
        }
    }

    #[test]
    fn a_lockless_writer_holding_the_lock_is_true_sharing_with_what_it_protects() {
        // dentry: d_lockref (a spinlock and a count, cmpxchg'd together)
        // beside d_children, under d_lockref.lock; and beside d_wait,
        // which no lock protects.
        let spans = [
            span("d_lockref", 0, 8, Some(Class::LocklessWrite), None),
            span(
                "d_children",
                8,
                8,
                Some(Class::LockProtected),
                Some("d_lockref.lock"),
            ),
            span("d_sib", 16, 8, Some(Class::LockProtected), Some("d_lock")),
            span("d_wait", 24, 8, Some(Class::HotRead), None),
        ];
        let found: Vec<(Kind, String)> = kinds(&spans, 64)
            .into_iter()
            .filter(|k| k.1 == "d_lockref")
            .map(|k| (k.0, k.2))
            .collect();
        assert_eq!(
            found,
            [
                (Kind::FalseSharing, "d_wait".into()),
                (Kind::WriteVsLocked, "d_sib".into())
            ]
        );
    }

    #[test]
    fn the_writer_comes_first_and_lines_are_counted_from_the_root() {
        let spans = [
            span("reader", 60, 8, Some(Class::HotRead), None),
            span("writer", 70, 8, Some(Class::LocklessWrite), None),
        ];
        // reader spans lines 0 and 1 (60..67); the writer is on line 1 only.
        assert_eq!(
            kinds(&spans, 64),
            [(Kind::FalseSharing, "writer".into(), "reader".into(), 1, 1)]
        );
    }

    #[test]
    fn unaligned_roots_are_tried_at_every_placement() {
        // 8-byte aligned root: 8 placements. Bytes 0..8 and 56..64 share a
        // line only when the root starts at a line boundary.
        let spans = [
            span("a", 0, 8, Some(Class::LocklessWrite), None),
            span("b", 56, 8, Some(Class::HotRead), None),
        ];
        assert_eq!(
            kinds(&spans, 8),
            [(Kind::FalseSharing, "a".into(), "b".into(), 0, 1)]
        );
        // 8 bytes apart: they share a line in 7 of 8 placements.
        let spans = [
            span("a", 0, 8, Some(Class::LocklessWrite), None),
            span("b", 8, 8, Some(Class::HotRead), None),
        ];
        assert_eq!(
            find(&spans, 16, 8, 64, &Rules::default()).findings[0].sharing_placements,
            7
        );
        assert_eq!(placements(8, 64).len(), 8);
        assert_eq!(placements(64, 64), [0]);
        assert_eq!(placements(128, 64), [0]);
    }

    #[test]
    fn overlapping_spans_stop_at_the_limits_with_a_note() {
        // Spans that all overlap, as corrupt offsets make them: n writers
        // and n readers pair up n * n times, each pair a finding.
        let overlapping = |n: usize| -> Vec<Span> {
            (0..2 * n)
                .map(|i| {
                    let class = if i % 2 == 0 {
                        Class::LocklessWrite
                    } else {
                        Class::HotRead
                    };
                    span(&format!("f{i}"), 0, 8, Some(class), None)
                })
                .collect()
        };
        // 200 + 200 spans: 79,800 pairs compared, 59,900 of them flagged
        // (writer/writer and writer/reader), over the findings limit.
        let found = find(&overlapping(200), 8, 64, 64, &Rules::default());
        assert_eq!(found.findings.len(), MAX_FINDINGS);
        let note = found.stopped.expect("the limit is reported");
        assert!(note.contains("incomplete"), "{note}");
        // Below both limits nothing is cut: 40 writers and 40 readers give
        // 40 * 39 / 2 + 40 * 40 = 2380 findings.
        let found = find(&overlapping(40), 8, 64, 64, &Rules::default());
        assert_eq!((found.findings.len(), found.stopped), (2380, None));
        // The same pair at several placements counts once: 150 + 150 spans
        // of an 8-byte aligned root flag 11,175 + 22,500 pairs at each of
        // the 8 placements, and all 33,675 are kept (counting each pair
        // once per placement would pass the limit at the second).
        let found = find(&overlapping(150), 8, 8, 64, &Rules::default());
        assert_eq!((found.findings.len(), found.stopped), (33_675, None));
        // Readers never pair with readers: 5000 of them compare 12.5M
        // pairs, find nothing, and stop at the comparison limit.
        let readers: Vec<Span> = (0..5000)
            .map(|i| span(&format!("r{i}"), 0, 8, Some(Class::HotRead), None))
            .collect();
        let found = find(&readers, 8, 64, 64, &Rules::default());
        assert!(found.findings.is_empty());
        assert!(
            found
                .stopped
                .unwrap()
                .contains(&format!("after {MAX_COMPARED} pairs"))
        );
    }
}
