//! "Did you mean" hints for names that do not exist.

/// Returns `", did you mean 'a', 'b'?"` with up to three names close to
/// `wanted`, or an empty string when nothing is close.
pub fn did_you_mean<'n>(wanted: &str, candidates: impl Iterator<Item = &'n str>) -> String {
    let mut scored: Vec<(f64, &str)> = candidates
        .filter(|c| *c != wanted)
        .map(|c| (strsim::jaro_winkler(wanted, c), c))
        .filter(|(score, _)| *score >= 0.85)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let names: Vec<String> = scored
        .iter()
        .take(3)
        .map(|(_, n)| format!("'{n}'"))
        .collect();
    if names.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", names.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn close_names_are_suggested_best_first() {
        let names = [
            "lruvec",
            "lru_gen_folio",
            "mem_cgroup_per_node",
            "list_head",
        ];
        assert_eq!(
            did_you_mean("lruvc", names.into_iter()),
            "; did you mean 'lruvec'?"
        );
        assert_eq!(did_you_mean("zzzz", names.into_iter()), "");
    }
}
