//! Walker's alias table (Vose's construction): O(n) to build, O(1) per draw from a discrete
//! distribution. Only IEEE basic operations in a fixed order, so it is deterministic.

use super::rng::Rng;

/// Draws index `i` with probability proportional to `weights[i]`.
pub(crate) struct Alias {
    prob: Vec<f64>,
    alias: Vec<u32>,
}

impl Alias {
    /// The table for positive, finite weights (at least one, at most `2^32`).
    pub(crate) fn new(weights: &[f64]) -> Alias {
        let n = weights.len();
        let total: f64 = weights.iter().sum();
        let mut scaled: Vec<f64> = weights.iter().map(|&w| w * n as f64 / total).collect();
        let mut prob = vec![1.0; n];
        let mut alias: Vec<u32> = (0..n as u64).map(|i| i as u32).collect();
        let (mut small, mut large): (Vec<u32>, Vec<u32>) =
            (0..n as u64).map(|i| i as u32).partition(|&i| scaled[i as usize] < 1.0);
        while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
            small.pop();
            prob[s as usize] = scaled[s as usize];
            alias[s as usize] = l;
            scaled[l as usize] = (scaled[l as usize] + scaled[s as usize]) - 1.0;
            if scaled[l as usize] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        Alias { prob, alias }
    }

    /// One draw.
    pub(crate) fn sample(&self, rng: &mut Rng) -> u32 {
        let i = rng.below(self.prob.len() as u64) as usize;
        if rng.unit() < self.prob[i] { i as u32 } else { self.alias[i] }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frequencies_follow_the_weights() {
        let table = Alias::new(&[1.0, 2.0, 7.0, 0.0001]);
        let mut rng = Rng::new(3, 0);
        let mut counts = [0u32; 4];
        for _ in 0..100_000 {
            counts[table.sample(&mut rng) as usize] += 1;
        }
        let expected = [10_000.0, 20_000.0, 70_000.0];
        for (c, e) in counts.iter().zip(expected) {
            assert!((*c as f64 - e).abs() < 0.03 * e, "{counts:?}");
        }
        assert!(counts[3] < 50, "{counts:?}");
    }
}
