//! Dropout masks that are a function of a seed and an element's index, not of a generator's
//! state.
//!
//! burn's dropout draws one `f32` per element through `rand`'s distributions on a ChaCha stream,
//! in one serial pass: with the `small` preset's dropout it took about a third of a CPU training
//! step. Here element `i` of a mask is kept when SplitMix64's `i`-th output for the mask's seed
//! (Steele, Lea & Flood, 2014: the finaliser of `seed + (i+1)·γ`) is at or above the drop
//! probability, so any block of a mask can be written on any thread, in any order, and the
//! attention's backward pass can recompute the mask it applied instead of keeping it.

use super::parallel;

/// SplitMix64's increment, `2^64/φ` rounded to odd.
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// One draw of a dropout mask: which elements are kept, and the factor `1/(1−p)` a kept one is
/// scaled by. [`DropoutMask::NONE`] keeps every element unscaled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DropoutMask {
    seed: u64,
    /// The index, in the whole batch's mask, of this mask's element 0: a slice of a batch
    /// ([`DropoutMask::from_element`]) gets the factors the whole batch's mask gives its rows.
    first: u64,
    /// An element is dropped when its 24 random bits are below this.
    threshold: u32,
    scale: f32,
}

impl DropoutMask {
    /// The mask that keeps everything: what inference and a model without dropout apply.
    pub const NONE: Self = Self { seed: 0, first: 0, threshold: 0, scale: 1.0 };

    /// Drops each element with probability `prob` (to 24 bits), independently for each `seed`.
    ///
    /// # Panics
    /// If `prob` is outside `[0, 1)`, as burn's `DropoutConfig::init` does.
    pub fn new(prob: f64, seed: u64) -> Self {
        assert!((0.0..1.0).contains(&prob), "dropout probability {prob} is outside [0, 1)");
        if prob == 0.0 {
            return Self::NONE;
        }
        let threshold = (prob * f64::from(1u32 << 24)).round() as u32;
        Self { seed, first: 0, threshold, scale: (1.0 / (1.0 - prob)) as f32 }
    }

    /// The same mask read from element `first` on: what a slice of a batch that starts there
    /// applies, so that a batch split into slices is masked as the whole batch would be.
    pub fn from_element(self, first: u64) -> Self {
        if self.is_none() { self } else { Self { first, ..self } }
    }

    /// Whether the mask keeps every element unscaled.
    pub fn is_none(&self) -> bool {
        self.threshold == 0 && self.scale == 1.0
    }

    /// Element `index`'s factor: `0` where dropped, `1/(1−p)` where kept.
    #[inline(always)]
    pub fn factor(&self, index: usize) -> f32 {
        if (splitmix64(self.seed, self.first + index as u64) >> 40) as u32 >= self.threshold { self.scale } else { 0.0 }
    }

    /// Multiplies `values`, elements `start..start + values.len()` of the masked tensor, by their
    /// factors.
    pub fn apply(&self, start: usize, values: &mut [f32]) {
        if self.is_none() {
            return;
        }
        for (offset, value) in values.iter_mut().enumerate() {
            *value *= self.factor(start + offset);
        }
    }

    /// `values` (elements `start..` of the masked tensor) with the mask applied: `values` itself
    /// for [`NONE`](Self::NONE), else the products written into `scratch`.
    pub fn applied<'a>(&self, start: usize, values: &'a [f32], scratch: &'a mut Vec<f32>) -> &'a [f32] {
        if self.is_none() {
            return values;
        }
        scratch.clear();
        scratch.extend(values.iter().enumerate().map(|(offset, &value)| value * self.factor(start + offset)));
        scratch
    }

    /// The first `len` factors, written on the pool's threads.
    pub fn factors(&self, len: usize) -> Vec<f32> {
        let mut factors = vec![0.0; len];
        let block = parallel::block_len(len);
        parallel::for_each(factors.chunks_mut(block).enumerate(), |(index, chunk)| {
            for (offset, factor) in chunk.iter_mut().enumerate() {
                *factor = self.factor(index * block + offset);
            }
        });
        factors
    }
}

/// SplitMix64's output number `index` (from 0) for the generator seeded with `seed`: also how a
/// training session derives each epoch's device seed from (seed, epoch).
#[inline(always)]
pub(crate) fn splitmix64(seed: u64, index: u64) -> u64 {
    let mut bits = seed.wrapping_add(index.wrapping_add(1).wrapping_mul(GAMMA));
    bits = (bits ^ (bits >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    bits = (bits ^ (bits >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    bits ^ (bits >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference implementation's outputs (Vigna's `splitmix64.c`).
    #[test]
    fn the_bits_are_splitmix64s() {
        assert_eq!(splitmix64(0, 0), 0xe220_a839_7b1d_cdaf);
        assert_eq!(splitmix64(0, 1), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(splitmix64(1_234_567, 0), 6_457_827_717_110_365_317);
    }

    /// The same figures are asserted in the browser (`tests/browser/main.rs`), where `usize` has 32
    /// bits: a mask is the same numbers natively and in wasm.
    #[test]
    fn a_known_mask() {
        let mask = DropoutMask::new(0.25, 12_345);
        let dropped: Vec<usize> = (0..10_000).filter(|&i| mask.factor(i) == 0.0).collect();
        assert_eq!((dropped.len(), &dropped[..8]), (2_501, &[0, 1, 2, 3, 6, 10, 20, 22][..]));
    }

    #[test]
    fn keeps_about_one_minus_p_and_scales_what_it_keeps() {
        let mask = DropoutMask::new(0.1, 7);
        let factors = mask.factors(100_000);
        let kept = factors.iter().filter(|&&f| f != 0.0).count();
        // Binomial(100,000, 0.9): the standard deviation is under 95.
        assert!((89_500..=90_500).contains(&kept), "{kept} kept");
        assert!(factors.iter().all(|&f| f == 0.0 || (f - 1.0 / 0.9).abs() < 1e-6));
        // Dropout keeps the expectation: the factors average to 1.
        let mean = factors.iter().sum::<f32>() / factors.len() as f32;
        assert!((mean - 1.0).abs() < 0.01, "mean factor {mean}");
    }

    #[test]
    fn the_same_seed_gives_the_same_mask_and_another_seed_another() {
        let (a, b, c) = (DropoutMask::new(0.5, 1), DropoutMask::new(0.5, 1), DropoutMask::new(0.5, 2));
        assert_eq!(a.factors(1_000), b.factors(1_000));
        let differ = a.factors(1_000).iter().zip(c.factors(1_000)).filter(|(x, y)| **x != *y).count();
        assert!((400..=600).contains(&differ), "{differ} of 1,000 differ between seeds");
    }

    #[test]
    fn a_block_applied_on_its_own_matches_the_whole_mask() {
        let mask = DropoutMask::new(0.3, 11);
        let whole = mask.factors(300);
        let mut block = vec![2.0; 100];
        mask.apply(150, &mut block);
        let expected: Vec<f32> = whole[150..250].iter().map(|f| 2.0 * f).collect();
        assert_eq!(block, expected);
    }

    #[test]
    fn a_mask_from_an_element_on_is_the_rest_of_the_whole_mask() {
        let mask = DropoutMask::new(0.4, 21);
        assert_eq!(mask.from_element(100).factors(200), mask.factors(300)[100..]);
        assert!(DropoutMask::NONE.from_element(5).is_none());
    }

    #[test]
    fn applied_is_apply_into_a_scratch_buffer() {
        let mask = DropoutMask::new(0.5, 4);
        let values: Vec<f32> = (0..64).map(|i| i as f32).collect();
        let mut expected = values.clone();
        mask.apply(10, &mut expected);
        let mut scratch = Vec::new();
        assert_eq!(mask.applied(10, &values, &mut scratch), &expected[..]);
        assert!(std::ptr::eq(DropoutMask::NONE.applied(10, &values, &mut scratch), &values[..]));
    }

    #[test]
    fn no_dropout_changes_nothing() {
        assert!(DropoutMask::new(0.0, 3).is_none());
        let mut values = vec![1.5; 10];
        DropoutMask::NONE.apply(0, &mut values);
        assert_eq!(values, vec![1.5; 10]);
    }
}
