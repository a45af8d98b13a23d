//! Multi-head self-attention on `f32` slices, read straight from the fused QKV projection.
//!
//! The QKV output `[batch, tokens, 3·dim]` holds, for each token, the query, key and value of
//! every head side by side (`column = part·dim + head·head_dim + j`). Each head's products run on
//! strided views of it through the `gemm` crate (the one burn's CPU backend uses), so no query,
//! key or value is ever copied out, the backward pass writes the three gradients back into one
//! `[batch, tokens, 3·dim]` buffer, and the attended values land already in the `[batch,
//! tokens, dim]` order the output projection reads. Images are spread over the CPU's cores.
//!
//! Attention dropout acts on the softmax weights before they weigh the values; its mask is
//! recomputed in the backward pass from its seed ([`DropoutMask`]), so the saved weights stay
//! the undropped ones the attention maps show.

use crate::ops::cpu::dropout_mask::DropoutMask;
use crate::ops::cpu::exp::exp_nonpositive;
use crate::ops::cpu::product::Product;
use crate::ops::cpu::simd::widest_simd;
use crate::ops::cpu::{lanes, parallel};

/// The sizes of one attention call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttentionShape {
    pub batch: usize,
    pub tokens: usize,
    pub heads: usize,
    pub head_dim: usize,
}

impl AttentionShape {
    pub fn dim(&self) -> usize {
        self.heads * self.head_dim
    }

    pub fn qkv_len(&self) -> usize {
        self.batch * self.tokens * 3 * self.dim()
    }

    pub fn attended_len(&self) -> usize {
        self.batch * self.tokens * self.dim()
    }

    pub fn weights_len(&self) -> usize {
        self.batch * self.heads * self.tokens * self.tokens
    }

    /// `1/√head_dim`, applied to the scores before the softmax.
    fn scale(&self) -> f32 {
        1.0 / (self.head_dim as f32).sqrt()
    }
}

/// `attended = (softmax(Q·Kᵀ/√d) ⊙ mask)·V` for every image and head, and the softmax weights
/// (without the mask, whose element `i` is that of `weights[i]`).
///
/// # Shapes
/// - qkv: `[batch, tokens, 3·dim]`
/// - attended: `[batch, tokens, dim]`
/// - weights: `[batch, heads, tokens, tokens]`
pub fn forward(
    shape: AttentionShape,
    mask: &DropoutMask,
    qkv: &[f32],
    attended: &mut [f32],
    weights: &mut [f32],
) {
    assert_eq!(qkv.len(), shape.qkv_len(), "qkv length");
    assert_eq!(attended.len(), shape.attended_len(), "attended length");
    assert_eq!(weights.len(), shape.weights_len(), "weights length");
    let AttentionShape { tokens, heads, head_dim, .. } = shape;
    let dim = shape.dim();
    let (row, square) = (3 * dim, tokens * tokens);
    let scores = Product::new(tokens, tokens, head_dim);
    let values = Product::new(tokens, head_dim, tokens);

    let images = qkv
        .chunks(tokens * row)
        .zip(attended.chunks_mut(tokens * dim))
        .zip(weights.chunks_mut(heads * square))
        .enumerate();
    parallel::for_each(images, |(image, ((qkv, attended), weights))| {
        let mut dropped = Vec::new();
        for head in 0..heads {
            let query = qkv[head * head_dim..].as_ptr();
            let key = qkv[dim + head * head_dim..].as_ptr();
            let value = qkv[2 * dim + head * head_dim..].as_ptr();
            let probabilities = &mut weights[head * square..(head + 1) * square];
            // SAFETY: every view stays inside its image's slice: the last row of a head's
            // query, key or value starts at (tokens-1)·row + part·dim + head·head_dim and runs
            // head_dim elements, and the output views are disjoint from the inputs.
            unsafe {
                scores.run(
                    probabilities.as_mut_ptr(),
                    (tokens, 1),
                    false,
                    query,
                    (row, 1),
                    key,
                    (1, row),
                    shape.scale(),
                );
            }
            softmax_rows(probabilities, tokens);
            let weighing = mask.applied((image * heads + head) * square, probabilities, &mut dropped);
            unsafe {
                values.run(
                    attended[head * head_dim..].as_mut_ptr(),
                    (dim, 1),
                    false,
                    weighing.as_ptr(),
                    (tokens, 1),
                    value,
                    (row, 1),
                    1.0,
                );
            }
        }
    });
}

/// The gradient of [`forward`]'s `attended` with respect to `qkv`, from the saved `qkv`, softmax
/// `weights` and the forward pass's `mask` `M`:
/// `∂V = (P⊙M)ᵀ·∂O`, `∂P = (∂O·Vᵀ) ⊙ M`, `∂S = P ⊙ (∂P − rowsum(∂P ⊙ P)) / √d`, `∂Q = ∂S·K`,
/// `∂K = ∂Sᵀ·Q`.
///
/// # Shapes
/// - qkv, grad_qkv: `[batch, tokens, 3·dim]`
/// - weights: `[batch, heads, tokens, tokens]`
/// - grad_attended: `[batch, tokens, dim]`
pub fn backward(
    shape: AttentionShape,
    mask: &DropoutMask,
    qkv: &[f32],
    weights: &[f32],
    grad_attended: &[f32],
    grad_qkv: &mut [f32],
) {
    assert_eq!(qkv.len(), shape.qkv_len(), "qkv length");
    assert_eq!(grad_qkv.len(), shape.qkv_len(), "grad_qkv length");
    assert_eq!(grad_attended.len(), shape.attended_len(), "grad_attended length");
    assert_eq!(weights.len(), shape.weights_len(), "weights length");
    let AttentionShape { tokens, heads, head_dim, .. } = shape;
    let dim = shape.dim();
    let (row, square) = (3 * dim, tokens * tokens);
    let to_values = Product::new(tokens, head_dim, tokens);
    let to_probabilities = Product::new(tokens, tokens, head_dim);

    let images = qkv
        .chunks(tokens * row)
        .zip(weights.chunks(heads * square))
        .zip(grad_attended.chunks(tokens * dim))
        .zip(grad_qkv.chunks_mut(tokens * row))
        .enumerate();
    parallel::for_each(images, |(image, (((qkv, weights), grad_attended), grad_qkv))| {
        let mut grad_scores = vec![0.0f32; square];
        let mut dropped = Vec::new();
        for head in 0..heads {
            let offset = |part: usize| part * dim + head * head_dim;
            let (query, key, value) =
                (qkv[offset(0)..].as_ptr(), qkv[offset(1)..].as_ptr(), qkv[offset(2)..].as_ptr());
            let probabilities = &weights[head * square..(head + 1) * square];
            let mask_start = (image * heads + head) * square;
            let weighing = mask.applied(mask_start, probabilities, &mut dropped);
            let grad_out = grad_attended[head * head_dim..].as_ptr();
            // SAFETY: as in `forward`; each head writes its own columns of grad_qkv and its
            // scratch `grad_scores`, never an input.
            unsafe {
                // ∂V = (P⊙M)ᵀ·∂O
                to_values.run(
                    grad_qkv[offset(2)..].as_mut_ptr(),
                    (row, 1),
                    false,
                    weighing.as_ptr(),
                    (1, tokens),
                    grad_out,
                    (dim, 1),
                    1.0,
                );
                // ∂(P⊙M) = ∂O·Vᵀ
                to_probabilities.run(
                    grad_scores.as_mut_ptr(),
                    (tokens, 1),
                    false,
                    grad_out,
                    (dim, 1),
                    value,
                    (1, row),
                    1.0,
                );
            }
            mask.apply(mask_start, &mut grad_scores); // ∂P
            softmax_backward_rows(&mut grad_scores, probabilities, tokens, shape.scale());
            unsafe {
                // ∂Q = ∂S·K
                to_values.run(
                    grad_qkv[offset(0)..].as_mut_ptr(),
                    (row, 1),
                    false,
                    grad_scores.as_ptr(),
                    (tokens, 1),
                    key,
                    (row, 1),
                    1.0,
                );
                // ∂K = ∂Sᵀ·Q
                to_values.run(
                    grad_qkv[offset(1)..].as_mut_ptr(),
                    (row, 1),
                    false,
                    grad_scores.as_ptr(),
                    (1, tokens),
                    query,
                    (row, 1),
                    1.0,
                );
            }
        }
    });
}

widest_simd! {
    /// The softmax of each `tokens`-long row of `scores`, in place.
    fn softmax_rows(scores: &mut [f32], tokens: usize) {
        for row in scores.chunks_mut(tokens) {
            softmax_in_place(row);
        }
    }
}

widest_simd! {
    /// Each row of `∂S = scale · P ⊙ (∂P − Σ ∂P⊙P)`, in place over `∂P`.
    fn softmax_backward_rows(grad: &mut [f32], probabilities: &[f32], tokens: usize, scale: f32) {
        for (grad, p) in grad.chunks_mut(tokens).zip(probabilities.chunks(tokens)) {
            let dot = lanes::dot(grad, p);
            for (g, &p) in grad.iter_mut().zip(p) {
                *g = scale * p * (*g - dot);
            }
        }
    }
}

/// One row's softmax, in place.
#[inline(always)]
fn softmax_in_place(row: &mut [f32]) {
    let max = lanes::max(row);
    for x in row.iter_mut() {
        *x = exp_nonpositive(*x - max);
    }
    let inverse = 1.0 / lanes::sum(row);
    for x in row.iter_mut() {
        *x *= inverse;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::random_values;

    const SHAPE: AttentionShape = AttentionShape { batch: 3, tokens: 5, heads: 2, head_dim: 4 };

    /// The textbook formula, one image and head at a time, in f64, the weights that weigh the
    /// values scaled by `mask`.
    fn reference(shape: AttentionShape, mask: &DropoutMask, qkv: &[f32]) -> (Vec<f64>, Vec<f64>) {
        let AttentionShape { batch, tokens, heads, head_dim } = shape;
        let dim = shape.dim();
        let at = |b: usize, t: usize, part: usize, h: usize, j: usize| {
            qkv[(b * tokens + t) * 3 * dim + part * dim + h * head_dim + j] as f64
        };
        let (mut attended, mut weights) =
            (vec![0.0; shape.attended_len()], vec![0.0; shape.weights_len()]);
        for b in 0..batch {
            for h in 0..heads {
                for t in 0..tokens {
                    let scores: Vec<f64> = (0..tokens)
                        .map(|s| {
                            (0..head_dim)
                                .map(|j| at(b, t, 0, h, j) * at(b, s, 1, h, j))
                                .sum::<f64>()
                                / (head_dim as f64).sqrt()
                        })
                        .collect();
                    let max = scores.iter().cloned().fold(f64::MIN, f64::max);
                    let total: f64 = scores.iter().map(|s| (s - max).exp()).sum();
                    for (s, &score) in scores.iter().enumerate() {
                        let p = (score - max).exp() / total;
                        let index = ((b * heads + h) * tokens + t) * tokens + s;
                        weights[index] = p;
                        let weight = p * mask.factor(index) as f64;
                        for j in 0..head_dim {
                            attended[(b * tokens + t) * dim + h * head_dim + j] +=
                                weight * at(b, s, 2, h, j);
                        }
                    }
                }
            }
        }
        (attended, weights)
    }

    fn assert_close(ours: &[f32], expected: &[f64], tolerance: f64, what: &str) {
        for (i, (&a, &e)) in ours.iter().zip(expected).enumerate() {
            assert!((a as f64 - e).abs() <= tolerance, "{what}[{i}]: {a} vs {e}");
        }
    }

    fn run_forward(mask: &DropoutMask, qkv: &[f32]) -> (Vec<f32>, Vec<f32>) {
        let (mut attended, mut weights) =
            (vec![0.0; SHAPE.attended_len()], vec![0.0; SHAPE.weights_len()]);
        forward(SHAPE, mask, qkv, &mut attended, &mut weights);
        (attended, weights)
    }

    /// Without dropout, and with a mask that drops a third of the weights.
    fn masks() -> [DropoutMask; 2] {
        [DropoutMask::NONE, DropoutMask::new(1.0 / 3.0, 5)]
    }

    #[test]
    fn forward_matches_the_textbook_formula() {
        let qkv = random_values(SHAPE.qkv_len(), 1, 1.0);
        for mask in masks() {
            let (attended, weights) = run_forward(&mask, &qkv);
            let (expected_attended, expected_weights) = reference(SHAPE, &mask, &qkv);
            assert_close(&attended, &expected_attended, 1e-5, "attended");
            assert_close(&weights, &expected_weights, 1e-6, "weights");
        }
    }

    /// Each analytic gradient element matches a central difference of `Σ attended · upstream`.
    #[test]
    fn backward_matches_finite_differences() {
        for mask in masks() {
            backward_matches_finite_differences_with(&mask);
        }
    }

    fn backward_matches_finite_differences_with(mask: &DropoutMask) {
        let qkv = random_values(SHAPE.qkv_len(), 2, 1.0);
        let upstream = random_values(SHAPE.attended_len(), 3, 1.0);
        let (_, weights) = run_forward(mask, &qkv);
        let mut grad = vec![f32::NAN; SHAPE.qkv_len()];
        backward(SHAPE, mask, &qkv, &weights, &upstream, &mut grad);

        let loss = |qkv: &[f32]| -> f64 {
            let (attended, _) = reference(SHAPE, mask, qkv);
            attended.iter().zip(&upstream).map(|(a, &u)| a * u as f64).sum()
        };
        let step = 1e-3;
        for i in 0..qkv.len() {
            let (mut plus, mut minus) = (qkv.clone(), qkv.clone());
            plus[i] += step;
            minus[i] -= step;
            let numeric = (loss(&plus) - loss(&minus)) / (2.0 * step as f64);
            assert!(
                (grad[i] as f64 - numeric).abs() <= 1e-3,
                "∂qkv[{i}]: {} vs {numeric}",
                grad[i]
            );
        }
    }

    /// Scores far apart neither overflow nor turn into NaN (the exp is held above e^-87).
    #[test]
    fn softmax_of_far_apart_scores_stays_finite() {
        let mut row = [1e4, 0.0, -1e4, 1e4];
        softmax_in_place(&mut row);
        assert_eq!([row[0], row[3]], [0.5, 0.5]);
        assert!(row[1] < 1e-37 && row[2] < 1e-37 && row.iter().all(|p| *p >= 0.0));
    }
}
