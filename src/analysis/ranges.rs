//! Arrays split per cacheline: which elements of an array lie in a byte
//! range, written as C indexes (`refaulted[0][1][*]`,
//! `refaulted[0][0][3]..[0][1][3]`).

use super::annotate::{Span, index_suffix};

/// The span's path with the elements that lie in bytes `first..=last`
/// (from the root's start); the bare path when that is the whole span or
/// the span is not an array.
pub fn part_on_line(span: &Span, first: u64, last: u64) -> String {
    let Some((dims, element)) = &span.array else {
        return span.path.clone();
    };
    let count = dims
        .iter()
        .try_fold(1u64, |a, d| a.checked_mul(*d))
        .unwrap_or(0);
    if *element == 0 || count == 0 {
        return span.path.clone();
    }
    let e0 = (first.saturating_sub(span.offset) / element).min(count - 1);
    let e1 = (last.saturating_sub(span.offset) / element).min(count - 1);
    format!("{}{}", span.path, elements(dims, e0.min(e1), e0.max(e1)))
}

/// Index text for flat elements `first..=last` of an array with `dims`.
pub fn elements(dims: &[u64], first: u64, last: u64) -> String {
    let (first, last) = (first.min(last), first.max(last));
    let count = dims
        .iter()
        .try_fold(1u64, |a, d| a.checked_mul(*d))
        .unwrap_or(u64::MAX);
    if first == 0 && last + 1 >= count {
        return String::new();
    }
    if first == last {
        return index_suffix(dims, first);
    }
    // A whole sub-array: leading indexes, then [*] for each full dimension.
    let mut block = 1;
    for k in 1..=dims.len() {
        block *= dims[dims.len() - k];
        if first.is_multiple_of(block) && last - first + 1 == block {
            let lead = index_suffix(dims, first);
            let keep: String = split_indexes(&lead)[..dims.len() - k].concat();
            return format!("{keep}{}", "[*]".repeat(k));
        }
        if last - first + 1 < block {
            break;
        }
    }
    format!(
        "{}..{}",
        index_suffix(dims, first),
        index_suffix(dims, last)
    )
}

fn split_indexes(text: &str) -> Vec<&str> {
    text.split_inclusive(']').collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_ranges_are_written_as_c_indexes() {
        let dims = [1, 2, 4];
        assert_eq!(elements(&dims, 0, 7), "");
        assert_eq!(elements(&dims, 5, 5), "[0][1][1]");
        assert_eq!(elements(&dims, 4, 7), "[0][1][*]");
        assert_eq!(elements(&dims, 3, 7), "[0][0][3]..[0][1][3]");
        assert_eq!(elements(&dims, 0, 3), "[0][0][*]");
        assert_eq!(elements(&[4, 2, 5], 10, 19), "[1][*][*]");
        assert_eq!(elements(&[8], 2, 5), "[2]..[5]");
    }
}
