//! The order `suggest` ranks its objectives in (`--rank`): by default
//! no error first, then fewer warnings, the least growth, the fewest perf
//! samples on the fields still sharing a line (with `--perf`), fewer notes
//! (two lockless writers on one line bounce it: a note by default, but
//! never free), the smallest footprint, the fewest members moved.
//! `--max-growth` and `--keep-footprint` are limits, not objectives: they
//! rank before all.

use std::cmp::Ordering;

/// One objective of a suggestion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Objective {
    /// Error findings, over every root of every build.
    Errors,
    /// Warning findings.
    Warnings,
    /// Note findings (write-vs-write, adjacent lines).
    Notes,
    /// The roots' worst growth, in lines, then in bytes.
    Growth,
    /// perf's samples on the fields of the findings that remain (`--perf`):
    /// of two layouts with as many pairs, the one whose pairs are colder.
    Samples,
    /// The lines the contexts touch in the struct.
    Footprint,
    /// The members moved.
    Moved,
}

impl Objective {
    const ALL: [Objective; 7] = [
        Objective::Errors,
        Objective::Warnings,
        Objective::Growth,
        Objective::Samples,
        Objective::Notes,
        Objective::Footprint,
        Objective::Moved,
    ];

    /// Its name on the command line.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Objective::Errors => "errors",
            Objective::Warnings => "warnings",
            Objective::Notes => "notes",
            Objective::Growth => "growth",
            Objective::Samples => "samples",
            Objective::Footprint => "footprint",
            Objective::Moved => "moved",
        }
    }
}

/// The objectives, most important first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rank(pub(crate) [Objective; 7]);

impl Default for Rank {
    fn default() -> Rank {
        Rank(Objective::ALL)
    }
}

impl Rank {
    /// Reads `--rank`: objectives by name, comma-separated, each at most
    /// once; those not named follow in the default order.
    pub(crate) fn parse(list: &str) -> Result<Rank, String> {
        let mut order: Vec<Objective> = Vec::new();
        for word in list.split(',').map(str::trim) {
            let Some(o) = Objective::ALL.iter().find(|o| o.name() == word) else {
                let names: Vec<&str> = Objective::ALL.iter().map(|o| o.name()).collect();
                return Err(format!(
                    "'{word}' is not an objective (one of {})",
                    names.join(", ")
                ));
            };
            if order.contains(o) {
                return Err(format!("'{word}' is named twice"));
            }
            order.push(*o);
        }
        let rest: Vec<Objective> = Objective::ALL
            .into_iter()
            .filter(|o| !order.contains(o))
            .collect();
        order.extend(rest);
        let mut rank = Rank::default();
        rank.0.copy_from_slice(&order);
        Ok(rank)
    }

    /// This order with growth moved to right after errors.
    pub(crate) fn growth_after_errors(&self) -> Rank {
        let mut order: Vec<Objective> = self
            .0
            .into_iter()
            .filter(|&o| o != Objective::Growth)
            .collect();
        let at = order
            .iter()
            .position(|&o| o == Objective::Errors)
            .map_or(0, |i| i + 1);
        order.insert(at, Objective::Growth);
        let mut rank = *self;
        rank.0.copy_from_slice(&order);
        rank
    }

    /// Compares two candidates, each given as its value per objective, in
    /// this order.
    pub(crate) fn compare(
        &self,
        a: impl Fn(Objective) -> (i64, i64),
        b: impl Fn(Objective) -> (i64, i64),
    ) -> Ordering {
        self.0
            .iter()
            .map(|&o| a(o).cmp(&b(o)))
            .find(|c| c.is_ne())
            .unwrap_or(Ordering::Equal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_objectives_come_first_and_the_rest_keep_their_order() {
        let names = |r: Rank| r.0.map(Objective::name).join(", ");
        assert_eq!(
            names(Rank::parse("growth").unwrap()),
            "growth, errors, warnings, samples, notes, footprint, moved"
        );
        assert_eq!(
            names(Rank::parse("errors,growth").unwrap()),
            "errors, growth, warnings, samples, notes, footprint, moved"
        );
        assert_eq!(
            names(Rank::default()),
            "errors, warnings, growth, samples, notes, footprint, moved"
        );
        assert!(
            Rank::parse("errors,size")
                .unwrap_err()
                .contains("'size' is not an objective")
        );
        assert!(
            Rank::parse("moved,moved")
                .unwrap_err()
                .contains("named twice")
        );
        assert!(Rank::parse("").is_err());
    }

    #[test]
    fn comparison_goes_by_the_first_objective_that_differs() {
        // a: 1 warning, no growth; b: no warning, one line of growth.
        let a = |o: Objective| match o {
            Objective::Warnings => (1, 0),
            _ => (0, 0),
        };
        let b = |o: Objective| match o {
            Objective::Growth => (1, 64),
            _ => (0, 0),
        };
        assert_eq!(Rank::default().compare(a, b), Ordering::Greater);
        assert_eq!(Rank::parse("growth").unwrap().compare(a, b), Ordering::Less);
    }
}
