//! Self-attention's core, `softmax(Q·Kᵀ/√d)·V` from the QKV projection, as one operation on
//! the CPU backend.
//!
//! Composed from burn's tensor operations, the core spent most of a CPU training step on memory
//! traffic rather than arithmetic: copying the query, key and value out of the projection,
//! a softmax of five passes with a backward pass each, 1,024 small batched products per block
//! at batch 256, and a slice-and-assign of a zeroed buffer for each of the three gradients.
//! [`kernels`] does it in one pass per head over strided views, with a hand-written backward;
//! [`attention_core`] uses it on the CPU and burn's operations (with the WebGPU matrix product)
//! elsewhere.

mod autodiff;
pub mod kernels;

use crate::cpu_tensor;
use crate::matmul::heads_matmul;
use burn::backend::flex::FlexTensor;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, Dispatch, Flex, TensorMetadata, backend_extension};
use burn::nn::Dropout;
use burn::tensor::Tensor;
use burn::tensor::activation::softmax;
use kernels::AttentionShape;

/// The attention core as a backend operation (CPU backend only).
#[backend_extension(Flex, Autodiff)]
pub trait FusedAttention: Backend {
    /// `qkv [batch, tokens, 3·dim]` → `(attended [batch, tokens, dim], weights [batch, heads,
    /// tokens, tokens])`. The weights carry no gradient.
    fn fused_attention(
        qkv: FloatTensor<Self>,
        heads: usize,
    ) -> (FloatTensor<Self>, FloatTensor<Self>);
    /// `∂qkv` from `∂attended`, the saved `qkv` and the forward pass's `weights`.
    fn fused_attention_backward(
        qkv: FloatTensor<Self>,
        weights: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        heads: usize,
    ) -> FloatTensor<Self>;
}

impl FusedAttention for Flex {
    fn fused_attention(
        qkv: FloatTensor<Self>,
        heads: usize,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        let shape = attention_shape(&qkv, heads);
        let qkv = cpu_tensor::contiguous(qkv);
        let mut attended = vec![0.0; shape.attended_len()];
        let mut weights = vec![0.0; shape.weights_len()];
        kernels::forward(shape, cpu_tensor::values(&qkv), &mut attended, &mut weights);
        let AttentionShape { batch, tokens, heads, .. } = shape;
        (
            cpu_tensor::from_values(attended, [batch, tokens, shape.dim()]),
            cpu_tensor::from_values(weights, [batch, heads, tokens, tokens]),
        )
    }

    fn fused_attention_backward(
        qkv: FloatTensor<Self>,
        weights: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        heads: usize,
    ) -> FloatTensor<Self> {
        let shape = attention_shape(&qkv, heads);
        let (qkv, weights, grad) = (
            cpu_tensor::contiguous(qkv),
            cpu_tensor::contiguous(weights),
            cpu_tensor::contiguous(grad),
        );
        let mut grad_qkv = vec![0.0; shape.qkv_len()];
        kernels::backward(
            shape,
            cpu_tensor::values(&qkv),
            cpu_tensor::values(&weights),
            cpu_tensor::values(&grad),
            &mut grad_qkv,
        );
        cpu_tensor::from_values(grad_qkv, [shape.batch, shape.tokens, 3 * shape.dim()])
    }
}

fn attention_shape(qkv: &FlexTensor, heads: usize) -> AttentionShape {
    let dims = qkv.shape();
    assert_eq!(dims.num_dims(), 3, "qkv is [batch, tokens, 3·dim]");
    assert_eq!(dims[2] % (3 * heads), 0, "qkv's last side is 3·heads·head_dim");
    AttentionShape { batch: dims[0], tokens: dims[1], heads, head_dim: dims[2] / (3 * heads) }
}

/// `softmax(Q·Kᵀ/√d)·V` per head from the QKV projection's output, with the softmax weights.
///
/// # Shapes
/// - qkv: `[batch, tokens, 3·heads·head_dim]` (query, key, value of each head side by side)
/// - output: `([batch, tokens, heads·head_dim], [batch, heads, tokens, tokens])`
///
/// `dropout` acts on the weights before they weigh the values; the fused operation has none, so
/// a model with attention dropout takes burn's operations on the CPU too.
pub fn attention_core(qkv: Tensor<3>, heads: usize, dropout: &Dropout) -> (Tensor<3>, Tensor<4>) {
    let on_cpu = cpu_tensor::is_on_cpu(&qkv);
    if on_cpu && dropout.prob == 0.0 {
        let (attended, weights) =
            <Dispatch as FusedAttention>::fused_attention(qkv.into_dispatch(), heads);
        return (Tensor::from_dispatch(attended), Tensor::from_dispatch(weights));
    }
    composed_attention_core(qkv, heads, dropout)
}

/// [`attention_core`] from burn's tensor operations: what GPU backends run, and what the fused
/// operation is tested against.
pub fn composed_attention_core(
    qkv: Tensor<3>,
    heads: usize,
    dropout: &Dropout,
) -> (Tensor<3>, Tensor<4>) {
    let [batch, length, width] = qkv.dims();
    let (dim, head_dim) = (width / 3, width / (3 * heads));
    let qkv = qkv.reshape([batch, length, 3, heads, head_dim]).permute([2, 0, 3, 1, 4]); // [3, batch, heads, tokens, head_dim]
    let split = |index: usize| -> Tensor<4> {
        qkv.clone().narrow(0, index, 1).reshape([batch, heads, length, head_dim])
    };
    let (query, key, value) = (split(0), split(1), split(2));

    let scores = heads_matmul(query, key.swap_dims(2, 3)) / (head_dim as f64).sqrt(); // [batch, heads, tokens, tokens]
    let weights = softmax(scores, 3);
    let attended = heads_matmul(dropout.forward(weights.clone()), value) // [batch, heads, tokens, head_dim]
        .swap_dims(1, 2) // [batch, tokens, heads, head_dim]
        .reshape([batch, length, dim]);
    (attended, weights)
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::{Device, Distribution};

    /// Values, weights and the gradient through the fused operation match burn's composition.
    #[test]
    fn fused_attention_matches_the_composed_one() {
        let device = Device::flex().autodiff();
        let qkv = Tensor::<3>::random([3, 7, 3 * 2 * 4], Distribution::Normal(0.0, 1.0), &device)
            .require_grad();
        let upstream = Tensor::<3>::random([3, 7, 8], Distribution::Normal(0.0, 1.0), &device);

        let no_dropout = burn::nn::DropoutConfig::new(0.0).init();
        let (ours, ours_weights) = attention_core(qkv.clone(), 2, &no_dropout);
        let ours_grad = qkv.grad(&(ours.clone() * upstream.clone()).sum().backward()).unwrap();
        let (burns, burns_weights) = composed_attention_core(qkv.clone(), 2, &no_dropout);
        let burns_grad = qkv.grad(&(burns.clone() * upstream).sum().backward()).unwrap();

        let tolerance = burn::tensor::Tolerance::absolute(1e-5);
        ours.into_data().assert_approx_eq::<f32>(&burns.into_data(), tolerance);
        ours_weights.into_data().assert_approx_eq::<f32>(&burns_weights.into_data(), tolerance);
        ours_grad.into_data().assert_approx_eq::<f32>(&burns_grad.into_data(), tolerance);
    }
}
