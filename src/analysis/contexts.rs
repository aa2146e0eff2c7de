//! Contexts on a line: two fields on one cacheline are true sharing when
//! every context that uses one needs the other's writes anyway, and
//! cross-context sharing when a context writes one and another context
//! uses the line without touching it.
//!
//! A field of a context rule is used by the contexts its rule names. A
//! field of a shorthand class is given contexts of its own so that both
//! kinds of rule meet on one scale: a hot-read or lockless-write field is
//! used by a context that is its own (its readers, its lockless writers,
//! many CPUs), and a lock-protected field or a lock by the context "holds
//! that lock" (one CPU at a time). Two shorthand fields are still judged by
//! the severity matrix ([`crate::rules::Class::pair_kind`]), whose verdicts
//! this scale reproduces.

use super::annotate::Span;
use crate::rules::{Class, Kind, Rules, Writers};

/// A context as the line sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ctx<'a> {
    /// A context named by the rules.
    Named(&'a str),
    /// The users of one shorthand field (its index among the spans).
    Own(usize),
    /// Whoever holds a lock.
    Lock(&'a str),
}

/// Which contexts use a span and which write it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Usage<'a> {
    uses: Vec<Ctx<'a>>,
    writes: Vec<(Ctx<'a>, Writers)>,
}

impl<'a> Usage<'a> {
    /// The usage of span `index`.
    pub(crate) fn of(spans: &'a [Span], index: usize, rules: &Rules) -> Usage<'a> {
        let span = &spans[index];
        if let Some(access) = &span.access {
            return Usage {
                uses: access.uses().map(Ctx::Named).collect(),
                writes: access
                    .writes
                    .iter()
                    .map(|w| (Ctx::Named(w.as_str()), rules.writers(w)))
                    .collect(),
            };
        }
        let lock = span.lock.as_deref().map_or(Ctx::Own(index), Ctx::Lock);
        let (uses, writes) = match span.class {
            None | Some(Class::Cold) | Some(Class::OwnerWrite) => (vec![], vec![]),
            Some(Class::HotRead) => (vec![Ctx::Own(index)], vec![]),
            Some(Class::LocklessWrite) => (
                vec![Ctx::Own(index)],
                vec![(Ctx::Own(index), Writers::Lockless)],
            ),
            Some(Class::LockProtected) | Some(Class::Lock) => {
                (vec![lock], vec![(lock, Writers::Serialized)])
            }
        };
        Usage { uses, writes }
    }

    fn uses(&self, ctx: Ctx<'_>) -> bool {
        self.uses.contains(&ctx)
    }
}

/// A pair flagged on the context scale: `writer` writes in `writes_in`,
/// and `others` use the line through the other field without touching
/// the writer's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Harm<'a> {
    /// True when the first span given is the writer.
    pub(crate) first_writes: bool,
    /// Who writes.
    pub(crate) writers: Writers,
    /// The contexts where it writes.
    pub(crate) writes_in: Vec<Ctx<'a>>,
    /// The contexts hurt.
    pub(crate) others: Vec<Ctx<'a>>,
    /// The kind of the finding.
    pub(crate) kind: Kind,
}

/// Why two fields on one line are or are not flagged, on the context scale.
pub(crate) fn judge<'a>(x: &Usage<'a>, y: &Usage<'a>) -> Result<Harm<'a>, &'static str> {
    if x.uses.is_empty() || y.uses.is_empty() {
        return Err("one of them is used in no context");
    }
    if x.writes.is_empty() && y.writes.is_empty() {
        return Err("both are only read");
    }
    let mut worst: Option<Harm<'a>> = None;
    for (first_writes, w, o) in [(true, x, y), (false, y, x)] {
        for &(ctx, writers) in &w.writes {
            let others: Vec<Ctx<'a>> = o
                .uses
                .iter()
                .copied()
                .filter(|&d| d != ctx && !w.uses(d))
                .collect();
            if others.is_empty() {
                continue;
            }
            let better = match &worst {
                None => true,
                Some(h) => writers == Writers::Lockless && h.writers == Writers::Serialized,
            };
            let same = worst
                .as_ref()
                .is_some_and(|h| h.writers == writers && h.first_writes == first_writes);
            if same {
                let h = worst.as_mut().expect("checked");
                h.writes_in.push(ctx);
                for d in others {
                    if !h.others.contains(&d) {
                        h.others.push(d);
                    }
                }
            } else if better {
                let kind = match writers {
                    Writers::Serialized => Kind::CrossContext,
                    Writers::Lockless => {
                        if o.writes.iter().any(|(_, m)| *m == Writers::Lockless) {
                            Kind::WriteVsWrite
                        } else if o.writes.is_empty() {
                            Kind::FalseSharing
                        } else {
                            Kind::WriteVsLocked
                        }
                    }
                };
                worst = Some(Harm {
                    first_writes,
                    writers,
                    writes_in: vec![ctx],
                    others,
                    kind,
                });
            }
        }
    }
    worst.ok_or("true sharing: every context that uses one of them also uses the other")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Access;

    fn usage<'a>(reads: &[&'a str], writes: &[(&'a str, Writers)]) -> Usage<'a> {
        Usage {
            uses: reads
                .iter()
                .chain(writes.iter().map(|(c, _)| c))
                .map(|c| Ctx::Named(c))
                .collect(),
            writes: writes.iter().map(|&(c, w)| (Ctx::Named(c), w)).collect(),
        }
    }

    #[test]
    fn one_context_is_true_sharing_and_two_are_not() {
        let s = Writers::Serialized;
        let tx_writer = usage(&[], &[("tx", s)]);
        let tx_reader = usage(&["tx"], &[]);
        let rx_reader = usage(&["rx"], &[]);
        assert!(judge(&tx_writer, &tx_reader).is_err());
        let harm = judge(&rx_reader, &tx_writer).unwrap();
        assert_eq!(
            (harm.first_writes, harm.kind, harm.writes_in, harm.others),
            (
                false,
                Kind::CrossContext,
                vec![Ctx::Named("tx")],
                vec![Ctx::Named("rx")]
            )
        );
        // rx reads the written field too: it needs tx's writes anyway.
        let both = usage(&["rx"], &[("tx", s)]);
        assert!(judge(&both, &rx_reader).is_err());
        // Read-only pairs are never flagged.
        assert_eq!(judge(&tx_reader, &rx_reader), Err("both are only read"));
    }

    #[test]
    fn lockless_writers_keep_the_matrix_kinds() {
        let l = Writers::Lockless;
        let counter = usage(&[], &[("refault", l)]);
        let reader = usage(&["reclaim"], &[]);
        let other_counter = usage(&[], &[("lru-add", l)]);
        let owned = usage(&[], &[("reclaim", Writers::Serialized)]);
        assert_eq!(judge(&counter, &reader).unwrap().kind, Kind::FalseSharing);
        assert_eq!(
            judge(&counter, &other_counter).unwrap().kind,
            Kind::WriteVsWrite
        );
        // The lockless side is the worse of the two writers.
        let harm = judge(&owned, &counter).unwrap();
        assert_eq!((harm.kind, harm.first_writes), (Kind::WriteVsLocked, false));
    }

    #[test]
    fn shorthand_fields_meet_contexts_on_one_scale() {
        let span = |class, lock: Option<&str>, access: Option<Access>| Span {
            path: "f".into(),
            offset: 0,
            size: 8,
            class: Some(class),
            lock: lock.map(str::to_owned),
            access: access.map(std::sync::Arc::new),
            origin: super::super::Origin::None,
            owners: vec![],
            array: None,
            decl: None,
            group: None,
            unions: vec![],
        };
        let mut rules = Rules::default();
        rules.contexts.push(crate::rules::Context {
            name: "tx".into(),
            writers: Writers::Serialized,
            at: crate::rules::Location {
                file: std::path::Path::new("r").into(),
                line: 1,
                column: 1,
            },
            implied: false,
        });
        let tx_write = Access {
            reads: vec![],
            writes: vec!["tx".into()],
        };
        let spans = [
            span(Class::HotRead, None, None),
            span(Class::OwnerWrite, None, Some(tx_write)),
            span(Class::LockProtected, Some("l"), None),
            span(Class::Lock, Some("l"), None),
        ];
        let u: Vec<Usage<'_>> = (0..spans.len())
            .map(|i| Usage::of(&spans, i, &rules))
            .collect();
        // tx's writes hurt the hot-read field's readers.
        assert_eq!(judge(&u[0], &u[1]).unwrap().kind, Kind::CrossContext);
        // A field under lock l and the lock itself: true sharing.
        assert!(judge(&u[2], &u[3]).is_err());
    }
}
