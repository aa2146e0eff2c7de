//! What the calls seen say of each function, applied to the declarations
//! made in it: the locks every caller holds ([`super::callers`]), the
//! parameters every caller passes while building or tearing down the
//! object ([`super::construction`]), the functions only the control path calls
//! ([`super::control`]), the fast entry point that reaches it and
//! how many functions call it ([`super::reach`]); a setter's stores are
//! told at its calls ([`super::setters`]). Computed once from the
//! calls, it serves every struct: the evidence index applies it to each
//! struct's part.

use std::collections::{HashMap, HashSet};

use super::callers::{self, Passed, Under};
use super::graph::Graph;
use super::{Declaration, Role, Said, construction, control, reach, setters, tested};

/// Per function, what its callers say of it.
#[derive(Default)]
pub(super) struct Summary {
    under: HashMap<String, Under>,
    built: HashSet<(String, usize)>,
    dying: HashSet<(String, usize)>,
    control: HashSet<String>,
    reached: HashMap<String, reach::Reached>,
    paths: HashMap<String, Vec<reach::NetPath>>,
    callers: HashMap<String, (usize, usize)>,
    setters: setters::Setters,
    tested: tested::Tested,
    /// The files' own functions, as the graph names them (see
    /// [`super::graph`]).
    own: super::graph::Own,
}

impl Summary {
    /// From the graph of the calls seen and the functions defined (by
    /// name, how many times).
    pub(super) fn of(graph: &Graph, defined: &HashMap<String, usize>) -> Summary {
        let (calls, named) = (&graph.calls, &graph.named);
        let (sites, pointed) = rayon::join(
            || callers::sites(calls, defined),
            || callers::pointed(calls, named),
        );
        // Each reading of the calls is independent of the others: they
        // run side by side.
        let mut summary = Summary::default();
        let Summary {
            under,
            built,
            dying,
            control,
            reached,
            paths,
            callers,
            setters,
            tested,
            own,
        } = &mut summary;
        own.clone_from(&graph.own);
        let (sites, pointed) = (&sites, &pointed);
        rayon::scope(|s| {
            s.spawn(|_| *under = callers::held_by_callers(sites));
            s.spawn(|_| *built = construction::passed_parameters(sites, pointed, Passed::Built));
            s.spawn(|_| *dying = construction::passed_parameters(sites, pointed, Passed::Dying));
            s.spawn(|_| *control = control::control_by_callers(sites, pointed));
            s.spawn(|_| {
                *reached = reach::reached(calls, &graph.syscalls);
                *callers = reach::callers(calls, reached)
                    .into_iter()
                    .map(|(f, n)| (f.to_owned(), n))
                    .collect()
            });
            s.spawn(|_| *paths = reach::net_paths(calls));
            s.spawn(|_| *setters = setters::sites(graph));
            s.spawn(|_| *tested = tested::by_callers(sites, pointed, &graph.tests));
        });
        summary
    }

    /// Applies it to declarations: a setter's stores told at its calls,
    /// stores every caller tests for first made only on a change,
    /// the callers' locks on writes,
    /// construction (teardown) on accesses through a built (dying)
    /// parameter, the control
    /// path on accesses in a function only it calls, the entry point
    /// and callers of each function, and the path to a needless store.
    pub(super) fn apply(&self, declarations: &mut Vec<Declaration>) {
        setters::at_call_sites(declarations, &self.setters, &self.own);
        tested::mark(declarations, &self.tested, &self.own);
        callers::add_callers_locks(declarations, &self.under);
        construction::mark_passed_by_callers(declarations, &self.built, Role::Construction);
        construction::mark_passed_by_callers(declarations, &self.dying, Role::Teardown);
        control::mark_control_by_callers(declarations, &self.control);
        for d in declarations {
            if let Some(f) = &d.function {
                let key = Graph::key(&self.own, f, &d.file);
                let f: &str = &key;
                d.entry = self.reached.get(f).map(|r| r.entry.clone());
                d.paths = self.paths.get(f).cloned().unwrap_or_default();
                if let Said::Needless(n) = &mut d.said {
                    n.path = reach::path(&self.reached, f);
                }
                (d.callers, d.hot_callers) = self.callers.get(f).copied().unwrap_or((0, 0));
            }
        }
    }
}
