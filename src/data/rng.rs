//! The data layer's random numbers: PCG32 (O'Neill, 2014), written out in a few lines.
//!
//! Why not `rand`: the seed is part of the recipe (which 20,000 images, which order, which
//! flips), so a seed must give the same numbers natively and in wasm32, today and after a
//! dependency upgrade. rand 0.10 documents both `StdRng` and `SmallRng` as non-portable
//! (`SmallRng` is even a different algorithm on 32-bit targets such as wasm32). PCG32 is fixed
//! by its paper, passes the usual statistical batteries, and needs no dependency.

/// A PCG32 (XSH-RR, 64-bit state) generator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pcg32 {
    state: u64,
    increment: u64,
}

const MULTIPLIER: u64 = 6_364_136_223_846_793_005;

impl Pcg32 {
    /// Seeds the generator as the reference `pcg32_srandom(seed, stream)` does. Different
    /// `stream`s give independent sequences for the same seed (e.g. one per epoch).
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut rng = Self { state: 0, increment: (stream << 1) | 1 };
        rng.next_u32();
        rng.state = rng.state.wrapping_add(seed);
        rng.next_u32();
        rng
    }

    /// 32 uniformly random bits.
    pub fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old.wrapping_mul(MULTIPLIER).wrapping_add(self.increment);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        xorshifted.rotate_right((old >> 59) as u32)
    }

    /// A uniform integer in `0..bound`, without modulo bias (Lemire's method).
    ///
    /// # Panics
    /// If `bound` is 0 or above `u32::MAX`.
    pub fn below(&mut self, bound: usize) -> usize {
        let bound = u32::try_from(bound).ok().filter(|&bound| bound > 0).expect("0 < bound ≤ u32::MAX");
        let threshold = bound.wrapping_neg() % bound;
        loop {
            let product = u64::from(self.next_u32()) * u64::from(bound);
            if (product as u32) >= threshold {
                return (product >> 32) as usize;
            }
        }
    }

    /// A uniform float in `[0, 1)` with 24 random bits.
    pub fn unit(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / (1u32 << 24) as f32)
    }

    /// A uniform float in `[low, high)`.
    pub fn uniform(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * self.unit()
    }

    /// A standard normal float (Box–Muller, from two uniforms; the second value is dropped,
    /// so a draw always takes two numbers of the sequence).
    pub fn normal(&mut self) -> f64 {
        // 1 − unit is in (0, 1], so the logarithm stays finite.
        let radius = (-2.0 * (1.0 - self.unit() as f64).ln()).sqrt();
        radius * (std::f64::consts::TAU * self.unit() as f64).cos()
    }

    /// `true` with probability `probability`.
    pub fn chance(&mut self, probability: f32) -> bool {
        self.unit() < probability
    }

    /// Shuffles `items` in place (Fisher–Yates), every order equally likely.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for last in (1..items.len()).rev() {
            items.swap(last, self.below(last + 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_implementation() {
        // pcg32-demo from pcg-c-basic: pcg32_srandom(42, 54).
        let mut rng = Pcg32::new(42, 54);
        let first: Vec<u32> = (0..6).map(|_| rng.next_u32()).collect();
        assert_eq!(first, [0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293, 0xbfa4784b, 0xcbed606e]);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut rng = Pcg32::new(1, 2);
        let mut seen = [0usize; 7];
        for _ in 0..7_000 {
            seen[rng.below(7)] += 1;
        }
        assert!(seen.iter().all(|&count| (800..1200).contains(&count)), "{seen:?}");
        assert!((0..1000).map(|_| rng.unit()).all(|value| (0.0..1.0).contains(&value)));
    }

    #[test]
    fn normal_draws_have_mean_zero_and_variance_one() {
        let mut rng = Pcg32::new(7, 3);
        let draws: Vec<f64> = (0..40_000).map(|_| rng.normal()).collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let variance = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / draws.len() as f64;
        // Standard errors: 0.005 for the mean, about 0.007 for the variance.
        assert!(mean.abs() < 0.02 && (variance - 1.0).abs() < 0.03, "mean {mean}, variance {variance}");
        assert!(draws.iter().all(|x| x.is_finite()));
    }

    #[test]
    fn shuffle_is_a_seeded_permutation() {
        let shuffled = |seed| {
            let mut items: Vec<usize> = (0..100).collect();
            Pcg32::new(seed, 0).shuffle(&mut items);
            items
        };
        let mut sorted = shuffled(3);
        assert_eq!(sorted, shuffled(3));
        assert_ne!(sorted, shuffled(4));
        sorted.sort();
        assert_eq!(sorted, (0..100).collect::<Vec<_>>());
    }
}
