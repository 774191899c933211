//! Shared helpers of dfgnn's benchmarks: timing with warm-up and a median of repeats.

use std::time::{Duration, Instant};

/// Runs `work` `warmup` times untimed, then `repeats` times timed; returns the median and the
/// fastest and slowest run.
pub fn median_of(warmup: usize, repeats: usize, mut work: impl FnMut()) -> (Duration, Duration, Duration) {
    for _ in 0..warmup {
        work();
    }
    let mut times: Vec<Duration> = (0..repeats.max(1))
        .map(|_| {
            let start = Instant::now();
            work();
            start.elapsed()
        })
        .collect();
    times.sort();
    (times[times.len() / 2], times[0], times[times.len() - 1])
}
