//! Work on several builds at once: each build is opened and read on its
//! own (they share nothing but the rules), so a run over three configs
//! takes about as long as its slowest one rather than the sum.

use rayon::prelude::*;

use crate::error::Result;

/// `f` applied to every item, the results in the items' order. The first
/// error in that order is the one returned, as a loop over the items
/// would return it.
pub(crate) fn in_order<I: Sync, T: Send>(
    items: &[I],
    f: impl Fn(&I) -> Result<T> + Sync + Send,
) -> Result<Vec<T>> {
    // Every result is kept, so the error returned is the first in item
    // order, not whichever thread failed first.
    let results: Vec<Result<T>> = items.par_iter().map(f).collect();
    results.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    #[test]
    fn items_run_at_the_same_time_and_come_back_in_order() {
        // Each item waits (up to 10 s) until every other has started: run
        // one after the other, the first never sees the second start. A
        // pool of its own, so other tests' work cannot hold a thread.
        let n = 3;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap();
        let started = AtomicUsize::new(0);
        let items: Vec<usize> = (0..n).collect();
        let out = pool
            .install(|| {
                in_order(&items, |&i| {
                    started.fetch_add(1, Ordering::SeqCst);
                    let t = Instant::now();
                    while started.load(Ordering::SeqCst) < n {
                        if t.elapsed() > Duration::from_secs(10) {
                            return Err(Error::Usage(format!("item {i} ran alone")));
                        }
                        std::thread::yield_now();
                    }
                    Ok(i * 10)
                })
            })
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out, (0..n).map(|i| i * 10).collect::<Vec<_>>());
    }

    #[test]
    fn the_first_error_in_item_order_wins() {
        let items = [0, 1, 2, 3];
        let got = in_order(&items, |&i| {
            if i == 0 {
                // The later failures finish first.
                std::thread::sleep(Duration::from_millis(50));
            }
            if i % 2 == 0 {
                Err(Error::Usage(format!("item {i}")))
            } else {
                Ok(i)
            }
        });
        assert_eq!(got.err().map(|e| e.to_string()), Some("item 0".to_owned()));
    }
}
