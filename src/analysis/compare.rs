//! One analysis of a root against another of the same root in a second
//! build: which annotated fields changed lines, which are gone, which
//! findings were fixed or introduced. `diff --rules` lists it;
//! `diagram --compare` sums it up under its drawings.

use serde::Serialize;

use super::Analysis;
use crate::lines::Lines;
use crate::rules::{Class, Kind};

/// A flagged pair, by field paths (offsets move between builds; paths do
/// not).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Pair {
    /// The kind of sharing.
    #[serde(serialize_with = "kind_name")]
    pub kind: Kind,
    /// The first field's path.
    pub a: String,
    /// The second field's path.
    pub b: String,
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
        self.old_pairs
            .iter()
            .filter(|p| !self.new_pairs.contains(p))
            .collect()
    }

    /// Pairs of the second build that the first does not have.
    pub fn introduced(&self) -> Vec<&Pair> {
        self.new_pairs
            .iter()
            .filter(|p| !self.old_pairs.contains(p))
            .collect()
    }
}

/// Compares two analyses of one root.
pub fn compare(old: &Analysis, new: &Analysis) -> Comparison {
    let mut out = Comparison {
        old_pairs: pairs(old),
        new_pairs: pairs(new),
        ..Comparison::default()
    };
    for s in &old.annotated.spans {
        let Some(class) = s.class else { continue };
        match new.annotated.spans.iter().find(|n| n.path == s.path) {
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

/// The findings of `a` that are not allowed, each pair once.
fn pairs(a: &Analysis) -> Vec<Pair> {
    let mut out: Vec<Pair> = Vec::new();
    for f in a.findings.iter().filter(|f| f.allowed.is_none()) {
        let p = Pair {
            kind: f.kind,
            a: a.span(&f.a).path.clone(),
            b: a.span(&f.b).path.clone(),
        };
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}
