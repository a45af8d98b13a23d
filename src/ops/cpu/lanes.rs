//! Sums over `f32` slices in sixteen independent lanes, which the compiler turns into SIMD.
//!
//! A plain `iter().sum()` must add in order (float addition is not associative), so it stays one
//! scalar add per element; the row reductions of the fused softmax and layer norm ran at that
//! speed. Sixteen partial sums cover one AVX-512 register or four simd128 ones.

const LANES: usize = 16;

/// `Σ f(a[i], b[i])`, accumulated in [`LANES`] partial sums.
#[inline(always)]
fn lane_sum(a: &[f32], b: &[f32], f: impl Fn(f32, f32) -> f32) -> f32 {
    assert_eq!(a.len(), b.len(), "operand lengths");
    let mut partial = [0.0f32; LANES];
    let (a_chunks, b_chunks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (a_rest, b_rest) = (a_chunks.remainder(), b_chunks.remainder());
    for (a, b) in a_chunks.zip(b_chunks) {
        for lane in 0..LANES {
            partial[lane] += f(a[lane], b[lane]);
        }
    }
    let mut total = 0.0;
    for (&a, &b) in a_rest.iter().zip(b_rest) {
        total += f(a, b);
    }
    for lane in partial {
        total += lane;
    }
    total
}

/// `Σ values`.
#[inline(always)]
pub fn sum(values: &[f32]) -> f32 {
    lane_sum(values, values, |x, _| x)
}

/// `Σ a[i]·b[i]`.
#[inline(always)]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    lane_sum(a, b, |a, b| a * b)
}

/// `Σ (values[i] − center)²`.
#[inline(always)]
pub fn squared_deviation(values: &[f32], center: f32) -> f32 {
    lane_sum(values, values, |x, _| (x - center) * (x - center))
}

/// The largest value (−∞ for none).
#[inline(always)]
pub fn max(values: &[f32]) -> f32 {
    let mut partial = [f32::NEG_INFINITY; LANES];
    let chunks = values.chunks_exact(LANES);
    let mut max = f32::NEG_INFINITY;
    for &x in chunks.remainder() {
        max = max.max(x);
    }
    for chunk in chunks {
        for lane in 0..LANES {
            partial[lane] = partial[lane].max(chunk[lane]);
        }
    }
    for lane in partial {
        max = max.max(lane);
    }
    max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_match_the_plain_ones_for_every_remainder() {
        for len in [0, 1, 15, 16, 17, 65, 128] {
            let a: Vec<f32> = (0..len).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..len).map(|i| (i as f32 * 0.11).cos()).collect();
            let close = |x: f32, y: f32| (x - y).abs() <= 1e-5 * (1.0 + y.abs());
            assert!(close(sum(&a), a.iter().sum()), "sum of {len}");
            assert!(close(dot(&a, &b), a.iter().zip(&b).map(|(a, b)| a * b).sum()), "dot of {len}");
            let deviation: f32 = a.iter().map(|x| (x - 0.3) * (x - 0.3)).sum();
            assert!(close(squared_deviation(&a, 0.3), deviation), "deviation of {len}");
            assert_eq!(max(&a), a.iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x)), "max of {len}");
        }
    }
}
