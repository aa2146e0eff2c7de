//! One analysis of a root against another of the same root in a second
//! build: which annotated fields changed lines, which are gone, which
//! findings were fixed or introduced. `diff --rules` lists it;
//! `diagram --compare` sums it up under its drawings.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use serde::Serialize;

use super::{Analysis, Span};
use crate::lines::Lines;
use crate::rules::{Class, Kind, Severity};

/// A flagged pair, by field paths (offsets move between builds; paths do
/// not). Two pairs are the same by kind and paths: a pair whose severity
/// alone changes is neither fixed nor introduced.
#[derive(Clone, Debug, Serialize)]
pub struct Pair {
    /// The kind of sharing.
    #[serde(serialize_with = "kind_name")]
    pub kind: Kind,
    /// The first field's path.
    pub a: String,
    /// The second field's path.
    pub b: String,
    /// How bad, at its worst in the build it is in.
    pub severity: Severity,
}

impl PartialEq for Pair {
    fn eq(&self, other: &Self) -> bool {
        (self.kind, &self.a, &self.b) == (other.kind, &other.a, &other.b)
    }
}

impl Eq for Pair {}

impl Hash for Pair {
    fn hash<H: Hasher>(&self, h: &mut H) {
        (self.kind, &self.a, &self.b).hash(h)
    }
}

fn kind_name<S: serde::Serializer>(kind: &Kind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(kind.name())
}

/// An annotated field in both builds, on other lines in the second.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Moved {
    /// Its path.
    pub path: String,
    /// Its class (in the first build).
    pub class: Class,
    /// Its lines in the first build.
    pub old: Lines,
    /// Its lines in the second.
    pub new: Lines,
}

/// What changed from `old` to `new`.
#[derive(Clone, Debug, Default)]
pub struct Comparison {
    /// Annotated fields on other lines, in the first build's order.
    pub moved: Vec<Moved>,
    /// Annotated fields of the first build that the second lacks.
    pub gone: Vec<String>,
    /// The first build's findings (not allowed), each pair once.
    pub old_pairs: Vec<Pair>,
    /// The second build's.
    pub new_pairs: Vec<Pair>,
}

impl Comparison {
    /// Pairs of the first build that the second does not have.
    pub fn fixed(&self) -> Vec<&Pair> {
        only_in(&self.old_pairs, &self.new_pairs)
    }

    /// Pairs of the second build that the first does not have.
    pub fn introduced(&self) -> Vec<&Pair> {
        only_in(&self.new_pairs, &self.old_pairs)
    }
}

/// The pairs of `these` that `others` lacks, in order.
fn only_in<'p>(these: &'p [Pair], others: &[Pair]) -> Vec<&'p Pair> {
    let others: HashSet<&Pair> = others.iter().collect();
    these.iter().filter(|p| !others.contains(p)).collect()
}

/// Compares two analyses of one root.
pub fn compare(old: &Analysis, new: &Analysis) -> Comparison {
    let mut out = Comparison {
        old_pairs: pairs(old),
        new_pairs: pairs(new),
        ..Comparison::default()
    };
    // The first span of each path in the new build (a root has up to
    // MAX_SPANS of them: no scan per old span).
    let mut by_path: HashMap<&str, &Span> = HashMap::new();
    for n in &new.annotated.spans {
        by_path.entry(n.path.as_str()).or_insert(n);
    }
    for s in &old.annotated.spans {
        let Some(class) = s.class else { continue };
        match by_path.get(s.path.as_str()) {
            Some(n) => {
                let (a, b) = (
                    Lines::of(s.offset, s.size, old.cacheline),
                    Lines::of(n.offset, n.size, new.cacheline),
                );
                if a != b {
                    out.moved.push(Moved {
                        path: s.path.clone(),
                        class,
                        old: a,
                        new: b,
                    });
                }
            }
            None => out.gone.push(s.path.clone()),
        }
    }
    out
}

/// The findings of `a` that are not allowed, each pair once (at its worst
/// severity), in order.
fn pairs(a: &Analysis) -> Vec<Pair> {
    let mut out: Vec<Pair> = Vec::new();
    let mut at: HashMap<Pair, usize> = HashMap::new();
    for f in a.findings.iter().filter(|f| f.allowed.is_none()) {
        let p = Pair {
            kind: f.kind,
            a: a.span(&f.a).path.clone(),
            b: a.span(&f.b).path.clone(),
            severity: f.severity,
        };
        match at.get(&p) {
            Some(&k) => out[k].severity = out[k].severity.max(p.severity),
            None => {
                at.insert(p.clone(), out.len());
                out.push(p);
            }
        }
    }
    out
}
