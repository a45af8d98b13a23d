//! Layer normalisation over the last side of a `[rows, width]` buffer, and its gradients, on
//! `f32` slices: one pass per row forward, and one backward pass that also sums the scale and
//! shift gradients (per block of rows, so blocks run on separate cores).

use crate::ops::cpu::simd::widest_simd;
use crate::ops::cpu::{lanes, parallel};

/// The sizes of one call: `rows` vectors of `width` values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NormShape {
    pub rows: usize,
    pub width: usize,
    pub epsilon: f32,
}

impl NormShape {
    /// Whole rows per block: one block per core.
    fn block(&self) -> usize {
        parallel::block_len(self.rows) * self.width
    }
}

/// A row's mean and `1/√(variance + ε)` (the biased variance, as PyTorch and burn use).
#[inline(always)]
fn statistics(row: &[f32], epsilon: f32) -> (f32, f32) {
    let width = row.len() as f32;
    let mean = lanes::sum(row) / width;
    let variance = lanes::squared_deviation(row, mean) / width;
    (mean, 1.0 / (variance + epsilon).sqrt())
}

/// `out = (x − mean)/√(variance + ε) · gamma + beta`, row by row.
///
/// # Shapes
/// - x, out: `[rows, width]`; gamma, beta: `[width]`
pub fn forward(shape: NormShape, x: &[f32], gamma: &[f32], beta: &[f32], out: &mut [f32]) {
    let NormShape { rows, width, epsilon } = shape;
    assert_eq!((x.len(), out.len()), (rows * width, rows * width), "x and out lengths");
    assert_eq!((gamma.len(), beta.len()), (width, width), "gamma and beta lengths");
    let blocks = x.chunks(shape.block()).zip(out.chunks_mut(shape.block()));
    parallel::for_each(blocks, |(x, out)| normalise_rows(x, gamma, beta, epsilon, out));
}

widest_simd! {
    /// [`forward`] on whole rows of `x` (each as long as `gamma`).
    fn normalise_rows(x: &[f32], gamma: &[f32], beta: &[f32], epsilon: f32, out: &mut [f32]) {
        let width = gamma.len();
        for (x, out) in x.chunks(width).zip(out.chunks_mut(width)) {
            let (mean, inverse_deviation) = statistics(x, epsilon);
            for (((out, x), gamma), beta) in out.iter_mut().zip(x).zip(gamma).zip(beta) {
                *out = (x - mean) * inverse_deviation * gamma + beta;
            }
        }
    }
}

/// The gradients of [`forward`] from `∂out`: with `x̂` the normalised row and `g = ∂out·gamma`,
/// `∂x = (g − mean(g) − x̂·mean(g·x̂))/√(variance + ε)`, `∂gamma = Σ_rows ∂out·x̂`,
/// `∂beta = Σ_rows ∂out`.
///
/// # Shapes
/// - x, grad, grad_x: `[rows, width]`; gamma, grad_gamma, grad_beta: `[width]`
pub fn backward(
    shape: NormShape,
    x: &[f32],
    gamma: &[f32],
    grad: &[f32],
    grad_x: &mut [f32],
    grad_gamma: &mut [f32],
    grad_beta: &mut [f32],
) {
    let NormShape { rows, width, epsilon } = shape;
    assert_eq!(
        (x.len(), grad.len(), grad_x.len()),
        (rows * width, rows * width, rows * width),
        "row lengths"
    );
    assert_eq!(
        (gamma.len(), grad_gamma.len(), grad_beta.len()),
        (width, width, width),
        "width lengths"
    );
    let block = shape.block();
    let blocks = x.chunks(block).zip(grad.chunks(block)).zip(grad_x.chunks_mut(block));
    let partial_sums = parallel::map(blocks, |((x, grad), grad_x)| {
        let (mut gamma_sum, mut beta_sum) = (vec![0.0f32; width], vec![0.0f32; width]);
        differentiate_rows(x, gamma, grad, epsilon, grad_x, &mut gamma_sum, &mut beta_sum);
        (gamma_sum, beta_sum)
    });
    grad_gamma.fill(0.0);
    grad_beta.fill(0.0);
    for (gamma_sum, beta_sum) in partial_sums {
        grad_gamma.iter_mut().zip(gamma_sum).for_each(|(out, sum)| *out += sum);
        grad_beta.iter_mut().zip(beta_sum).for_each(|(out, sum)| *out += sum);
    }
}

widest_simd! {
    /// [`backward`] on whole rows, adding this block's `∂gamma` and `∂beta` to the sums given.
    fn differentiate_rows(
        x: &[f32],
        gamma: &[f32],
        grad: &[f32],
        epsilon: f32,
        grad_x: &mut [f32],
        gamma_sum: &mut [f32],
        beta_sum: &mut [f32],
    ) {
        let width = gamma.len();
        // This row normalised, and ∂out·gamma.
        let (mut normalised, mut scaled) = (vec![0.0f32; width], vec![0.0f32; width]);
        let rows = x.chunks(width).zip(grad.chunks(width)).zip(grad_x.chunks_mut(width));
        for ((x, grad), grad_x) in rows {
            let (mean, inverse_deviation) = statistics(x, epsilon);
            for ((n, x), (s, (grad, gamma))) in
                normalised.iter_mut().zip(x).zip(scaled.iter_mut().zip(grad.iter().zip(gamma)))
            {
                *n = (x - mean) * inverse_deviation;
                *s = grad * gamma;
            }
            let g_mean = lanes::sum(&scaled) / width as f32;
            let g_dot_mean = lanes::dot(&scaled, &normalised) / width as f32;
            for ((grad_x, s), n) in grad_x.iter_mut().zip(&scaled).zip(&normalised) {
                *grad_x = (s - g_mean - n * g_dot_mean) * inverse_deviation;
            }
            for (((gamma_sum, beta_sum), grad), n) in
                gamma_sum.iter_mut().zip(beta_sum.iter_mut()).zip(grad).zip(&normalised)
            {
                *gamma_sum += grad * n;
                *beta_sum += grad;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::random_values;

    const SHAPE: NormShape = NormShape { rows: 6, width: 5, epsilon: 1e-5 };

    fn loss(x: &[f32], gamma: &[f32], beta: &[f32], upstream: &[f32]) -> f64 {
        let mut out = vec![0.0; x.len()];
        forward(SHAPE, x, gamma, beta, &mut out);
        out.iter().zip(upstream).map(|(o, u)| *o as f64 * *u as f64).sum()
    }

    #[test]
    fn rows_come_out_with_zero_mean_and_unit_variance() {
        let x = random_values(SHAPE.rows * SHAPE.width, 1, 2.0);
        let mut out = vec![0.0; x.len()];
        forward(SHAPE, &x, &[1.0; 5], &[0.0; 5], &mut out);
        for row in out.chunks(SHAPE.width) {
            let mean = row.iter().sum::<f32>() / 5.0;
            let variance = row.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / 5.0;
            assert!(
                mean.abs() < 1e-6 && (variance - 1.0).abs() < 1e-4,
                "mean {mean}, variance {variance}"
            );
        }
    }

    /// Every gradient element matches a central difference of `Σ out · upstream`.
    #[test]
    fn backward_matches_finite_differences() {
        let (x, gamma, beta, upstream) = (random_values(30, 2, 2.0), random_values(5, 3, 2.0), random_values(5, 4, 2.0), random_values(30, 5, 2.0));
        let (mut grad_x, mut grad_gamma, mut grad_beta) =
            (vec![0.0; 30], vec![0.0; 5], vec![0.0; 5]);
        backward(SHAPE, &x, &gamma, &upstream, &mut grad_x, &mut grad_gamma, &mut grad_beta);

        let step = 1e-3;
        let numeric = |values: &[f32], i: usize, loss_of: &dyn Fn(&[f32]) -> f64| {
            let (mut plus, mut minus) = (values.to_vec(), values.to_vec());
            plus[i] += step;
            minus[i] -= step;
            (loss_of(&plus) - loss_of(&minus)) / (2.0 * step as f64)
        };
        for (i, &analytic) in grad_x.iter().enumerate() {
            let expected = numeric(&x, i, &|x| loss(x, &gamma, &beta, &upstream));
            assert!((analytic as f64 - expected).abs() < 2e-3, "∂x[{i}]: {analytic} vs {expected}");
        }
        for i in 0..5 {
            let expected = numeric(&gamma, i, &|gamma| loss(&x, gamma, &beta, &upstream));
            assert!((grad_gamma[i] as f64 - expected).abs() < 2e-3, "∂gamma[{i}]");
            let expected = numeric(&beta, i, &|beta| loss(&x, &gamma, beta, &upstream));
            assert!((grad_beta[i] as f64 - expected).abs() < 2e-3, "∂beta[{i}]");
        }
    }
}
