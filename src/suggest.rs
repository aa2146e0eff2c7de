//! "Did you mean" hints for names that do not exist.

/// Returns `", did you mean 'a', 'b'?"` with up to three names close to
/// `wanted`, or an empty string when nothing is close.
pub fn did_you_mean<'n>(wanted: &str, candidates: impl Iterator<Item = &'n str>) -> String {
    did_you_mean_any(&[wanted], candidates)
}

/// [`did_you_mean`] for a thing of several names (a type and its
/// aliases): the names closest to any of them.
pub fn did_you_mean_any<'n>(wanted: &[&str], candidates: impl Iterator<Item = &'n str>) -> String {
    let mut scored: Vec<(f64, &str)> = candidates
        .filter(|c| !wanted.contains(c))
        .map(|c| {
            let score = wanted
                .iter()
                .map(|w| strsim::jaro_winkler(w, c))
                .fold(0.0, f64::max);
            (score, c)
        })
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

    #[test]
    fn every_name_of_a_renamed_type_is_considered() {
        let names = ["lru_gen_struct", "lru_gen_mm_list", "lruvec"];
        // A misspelt alias: only its name is close to the build's.
        let alone = did_you_mean("lru_gen_folio", names.into_iter());
        assert!(!alone.contains("'lru_gen_struct'"), "{alone}");
        let both =
            super::did_you_mean_any(&["lru_gen_folio", "lru_gen_structs"], names.into_iter());
        assert!(both.contains("'lru_gen_struct'"), "{both}");
        // A name that is one of those wanted is never suggested.
        let exact = super::did_you_mean_any(&["lruvec", "lru_gen_struct"], names.into_iter());
        assert!(
            !exact.contains("'lruvec'") && !exact.contains("'lru_gen_struct'"),
            "{exact}"
        );
    }
}
