//! e^y written so that the compiler vectorises it: Cody–Waite range reduction to
//! `[-ln2/2, ln2/2]`, a degree-6 polynomial and an exponent built from bits; no calls, no
//! branches. The softmax and GELU's derivative only need y ≤ 0.

use core::f32::consts::LOG2_E;

/// e^y for y ≤ 0 (what φ needs); below -87 it stays at e^-87 ≈ 1.6e-38, still a normal float.
#[inline(always)]
pub fn exp_nonpositive(y: f32) -> f32 {
    let y = y.max(-87.0);
    // n = round(y / ln 2) by the 1.5·2²³ trick (vectorises without SSE4.1's round).
    const ROUNDER: f32 = 12_582_912.0;
    let n = (y * LOG2_E + ROUNDER) - ROUNDER;
    // r = y - n·ln 2, in two parts so r keeps its low bits.
    let r = (y - n * 0.693_359_4) + n * 2.121_944_4e-4;
    let mut p = 1.987_569_1e-4_f32;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5;
    p = p * r * r + r + 1.0;
    p * f32::from_bits(((n as i32 + 127) as u32) << 23)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_within_a_few_ulp_of_std() {
        for y in (0..=100_000).map(|i| -(i as f32) * 8.7e-4) {
            let (ours, exact) = (exp_nonpositive(y), y.exp());
            assert!(
                (ours - exact).abs() <= 4.0 * f32::EPSILON * exact,
                "exp({y}): {ours} vs {exact}"
            );
        }
        assert!(exp_nonpositive(-200.0) < 2e-38, "held at e^-87");
    }
}
