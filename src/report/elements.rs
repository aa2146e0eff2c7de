//! A finding repeated in each element of an array of structs (every
//! `zone` of `pglist_data.node_zones[]`) told once, with the range of
//! elements (`node_zones[0..4]`), and expanded again for `--baseline`.

use serde::{Deserialize, Serialize};

use super::{Identity, ReportFinding};

/// The elements of an array of structs a finding stands for: its fields
/// are in one element, the same fields in each of `first..=last`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Elements {
    /// Path of the array from the root (`node_zones`).
    pub array: String,
    /// First element.
    pub first: u64,
    /// Last element (inclusive).
    pub last: u64,
}

impl Elements {
    /// `node_zones[0..4]`.
    pub fn range(&self) -> String {
        format!("{}[{}..{}]", self.array, self.first, self.last)
    }
}

/// The array and element both sides of `f` are in: the first `[N]` of the
/// first side's path, which the second side's path shares.
fn element_of(f: &ReportFinding) -> Option<(String, u64)> {
    let path = &f.a.path;
    let open = path.find('[')?;
    let close = open + path[open..].find(']')?;
    let index = path[open + 1..close].parse().ok()?;
    f.b.path
        .starts_with(&path[..=close])
        .then(|| (path[..open].to_owned(), index))
}

/// `text` with every `array[from]` that starts a path replaced by `to`:
/// a path's own start (`node[1].lock`), and one named in words (`the
/// holders of node[1].lock`), not the end of a longer name (`xnode[1]`,
/// `a.node[1]`).
fn rebase(text: &str, array: &str, from: &str, to: &str) -> String {
    let old = format!("{array}[{from}]");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&old) {
        let starts = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.'));
        out.push_str(&rest[..at]);
        out.push_str(if starts { to } else { &old });
        rest = &rest[at + old.len()..];
    }
    out.push_str(rest);
    out
}

/// `f` in element `index` of `array` rewritten to element `to` (a number,
/// `*` or a range): paths, the parts shown, the lock, and the contexts
/// named after a member of the element (`the holders of node[1].lock`)
/// wherever the finding names them.
fn moved(f: &ReportFinding, array: &str, index: u64, to: &str) -> ReportFinding {
    let mut g = f.clone();
    let from = index.to_string();
    let to = format!("{array}[{to}]");
    for side in [&mut g.a, &mut g.b] {
        side.path = rebase(&side.path, array, &from, &to);
        side.part = rebase(&side.part, array, &from, &to);
        side.lock = side.lock.as_deref().map(|l| rebase(l, array, &from, &to));
    }
    g.description = rebase(&g.description, array, &from, &to);
    if let Some(m) = &mut g.meeting {
        for name in m.writes_in.iter_mut().chain(m.others.iter_mut()) {
            *name = rebase(name, array, &from, &to);
        }
    }
    g
}

/// What must be equal for two findings in different elements to be the
/// same finding: everything but where the element sits.
fn shape(f: &ReportFinding, array: &str, index: u64) -> String {
    let mut g = moved(f, array, index, "*");
    g.cacheline = 0;
    g.cacheline_bytes = [0, 0];
    g.cachelines.clear();
    for side in [&mut g.a, &mut g.b] {
        side.offset = 0;
        side.bytes = [0, 0];
    }
    serde_json::to_string(&g).unwrap_or_default()
}

/// Findings of one root, in their order, with each run of the same
/// finding in consecutive elements of an array of structs told as one, at
/// the place of its first element, sharing the lines of all.
pub(crate) fn merge(findings: Vec<ReportFinding>) -> Vec<ReportFinding> {
    /// A merged finding so far: its index in `out`, its shape and its
    /// first element's finding.
    struct Run {
        at: usize,
        shape: String,
        array: String,
        first: u64,
        last: u64,
    }
    let mut out: Vec<ReportFinding> = Vec::with_capacity(findings.len());
    let mut runs: Vec<Run> = Vec::new();
    for f in findings {
        let Some((array, index)) = element_of(&f) else {
            out.push(f);
            continue;
        };
        let shape = shape(&f, &array, index);
        let run = runs
            .iter_mut()
            .rev()
            .find(|r| r.array == array && r.shape == shape);
        match run {
            Some(r) if r.last.checked_add(1) == Some(index) => {
                r.last = index;
                let merged = &mut out[r.at];
                merged.cachelines.extend(f.cachelines);
                merged.cachelines.sort_unstable();
                merged.cachelines.dedup();
            }
            _ => {
                runs.push(Run {
                    at: out.len(),
                    shape,
                    array,
                    first: index,
                    last: index,
                });
                out.push(f);
            }
        }
    }
    for r in runs.into_iter().filter(|r| r.last > r.first) {
        let e = Elements {
            array: r.array,
            first: r.first,
            last: r.last,
        };
        let mut merged = moved(
            &out[r.at],
            &e.array,
            e.first,
            &format!("{}..{}", e.first, e.last),
        );
        merged.elements = Some(e);
        out[r.at] = merged;
    }
    out
}

/// What `--baseline` matches of `f`: one identity per element it stands
/// for (one, when it stands for no range).
pub(crate) fn identities(f: &ReportFinding) -> Vec<Identity> {
    let Some(e) = &f.elements else {
        return vec![f.identity()];
    };
    let range = format!("{}..{}", e.first, e.last);
    (e.first..=e.last)
        .map(|i| {
            let mut one = f.clone();
            for side in [&mut one.a, &mut one.b] {
                side.path = rebase(&side.path, &e.array, &range, &format!("{}[{i}]", e.array));
            }
            one.identity()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::rebase;

    #[test]
    fn an_element_is_rebased_where_a_path_starts_and_nowhere_else() {
        let to = "node[0..520]";
        assert_eq!(rebase("node[1].lock", "node", "1", to), "node[0..520].lock");
        assert_eq!(
            rebase(
                "the holders of node[1].lock, node[1].gp_seq",
                "node",
                "1",
                to
            ),
            "the holders of node[0..520].lock, node[0..520].gp_seq"
        );
        for other in [
            "xnode[1].lock",
            "a.node[1].lock",
            "node[10].lock",
            "node[2].lock",
        ] {
            assert_eq!(rebase(other, "node", "1", to), other);
        }
    }
}
