//! GELU on `f32` slices, written so that the compiler vectorises each loop: no calls, no
//! branches, only arithmetic, comparisons and bit casts.
//!
//! erf is the rational minimax approximation used by Eigen and XLA for `float`
//! (`x·P(x²)/Q(x²)` on x clamped to ±4, within a few ulp of the true value); exp is Cody–Waite
//! range reduction ([`exp_nonpositive`]). Natively the loops run in AVX-512 or AVX2 where the CPU
//! has them ([`widest_simd!`]).

use crate::ops::cpu::exp::exp_nonpositive;
use crate::ops::cpu::simd::widest_simd;
use core::f32::consts::FRAC_1_SQRT_2;

/// `1/√(2π)`, φ(0).
const FRAC_1_SQRT_2PI: f32 = 0.398_942_3;

/// erf(x) for any finite x.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = -2.726_142_3e-10_f32;
    p = p * x2 + 2.770_681_4e-8;
    p = p * x2 - 2.101_024e-6;
    p = p * x2 - 5.692_506_4e-5;
    p = p * x2 - 7.349_906_3e-4;
    p = p * x2 - 2.954_6e-3;
    p = p * x2 - 1.609_603_3e-2;
    let mut q = -1.456_607_2e-5_f32;
    q = q * x2 - 2.133_740_6e-4;
    q = q * x2 - 1.682_827e-3;
    q = q * x2 - 7.373_329e-3;
    q = q * x2 - 1.426_473_9e-2;
    x * p / q
}

widest_simd! {
    /// `out[i] = x·Φ(x)` for `x = input[i]`.
    pub fn gelu(input: &[f32], out: &mut [f32]) {
        for (out, &x) in out.iter_mut().zip(input) {
            *out = 0.5 * x * (1.0 + erf(x * FRAC_1_SQRT_2));
        }
    }
}

widest_simd! {
    /// `out[i] = grad[i] · (Φ(x) + x·φ(x))` for `x = input[i]`.
    pub fn gelu_backward(input: &[f32], grad: &[f32], out: &mut [f32]) {
        for ((out, &x), &g) in out.iter_mut().zip(input).zip(grad) {
            let cdf = 0.5 * (1.0 + erf(x * FRAC_1_SQRT_2));
            let pdf = FRAC_1_SQRT_2PI * exp_nonpositive(-0.5 * x * x);
            *out = g * (cdf + x * pdf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> impl Iterator<Item = f32> {
        (-20_000..=20_000).map(|i| i as f32 * 6e-4)
    }

    #[test]
    fn erf_is_within_a_few_ulp_of_libm() {
        for x in grid() {
            let (ours, exact) = (erf(x), libm::erff(x));
            assert!(
                (ours - exact).abs() <= 4.0 * f32::EPSILON * exact.abs().max(0.1),
                "erf({x}): {ours} vs {exact}"
            );
        }
        assert!((erf(f32::MAX) - 1.0).abs() <= f32::EPSILON && (erf(-1e30) + 1.0).abs() <= f32::EPSILON);
    }

    #[test]
    fn gelu_and_its_derivative_match_the_libm_formulas() {
        let input: Vec<f32> = grid().collect();
        let (mut out, mut slope) = (vec![0.0; input.len()], vec![0.0; input.len()]);
        gelu(&input, &mut out);
        gelu_backward(&input, &vec![1.0; input.len()], &mut slope);
        for ((&x, &y), &dy) in input.iter().zip(&out).zip(&slope) {
            let cdf = 0.5 * (1.0 + libm::erff(x * FRAC_1_SQRT_2));
            let expected_slope = cdf + x * FRAC_1_SQRT_2PI * (-0.5 * x * x).exp();
            assert!(
                (y - x * cdf).abs() <= 1e-6 * x.abs().max(1.0),
                "gelu({x}): {y} vs {}",
                x * cdf
            );
            assert!((dy - expected_slope).abs() <= 1e-6, "gelu'({x}): {dy} vs {expected_slope}");
        }
    }
}
