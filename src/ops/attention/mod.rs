//! Self-attention's core, `softmax(Q·Kᵀ/√d)·V` per head from the QKV projection's output,
//! returning the softmax weights for the attention maps.
//!
//! One operation, [`FusedAttention`], with its own backward pass ([`autodiff`]): on the CPU
//! backend one strided pass per head ([`cpu`]), attention dropout included; on a GPU one
//! invocation per query token forward and two kernels backward ([`webgpu`]). A GPU run that
//! drops attention weights out (the `small` preset's training) takes burn's operations
//! ([`composed`]), which the fused operations are also tested against.

mod autodiff;
pub mod composed;
pub mod cpu;
#[cfg(gpu)]
pub mod webgpu;

pub use composed::composed_attention_core;

use crate::ops::cpu::dropout_mask::DropoutMask;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, Dispatch, backend_extension};
use burn::nn::Dropout;
use burn::tensor::Tensor;

/// The attention core as a backend operation.
#[backend_extension(Cube: cfg(gpu), Flex, Autodiff)]
pub trait FusedAttention: Backend {
    /// `qkv [batch, tokens, 3·dim]` → `(attended [batch, tokens, dim], weights [batch, heads,
    /// tokens, tokens])`, `mask` applied to the weights before they weigh the values. The
    /// weights (returned without the mask) carry no gradient.
    fn fused_attention(
        qkv: FloatTensor<Self>,
        heads: usize,
        mask: DropoutMask,
    ) -> (FloatTensor<Self>, FloatTensor<Self>);
    /// `∂qkv` from `∂attended`, the saved `qkv`, the forward pass's `weights` and its `mask`.
    fn fused_attention_backward(
        qkv: FloatTensor<Self>,
        weights: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        heads: usize,
        mask: DropoutMask,
    ) -> FloatTensor<Self>;
}

/// `(softmax(Q·Kᵀ/√d) ⊙ mask)·V` per head through [`FusedAttention`], with the softmax weights.
///
/// # Shapes
/// - qkv: `[batch, tokens, 3·heads·head_dim]`
/// - output: `([batch, tokens, heads·head_dim], [batch, heads, tokens, tokens])`
pub fn fused_attention(qkv: Tensor<3>, heads: usize, mask: DropoutMask) -> (Tensor<3>, Tensor<4>) {
    let (attended, weights) =
        <Dispatch as FusedAttention>::fused_attention(qkv.into_dispatch(), heads, mask);
    (Tensor::from_dispatch(attended), Tensor::from_dispatch(weights))
}


/// `softmax(Q·Kᵀ/√d)·V` per head from the QKV projection's output, with the softmax weights.
///
/// # Shapes
/// - qkv: `[batch, tokens, 3·heads·head_dim]` (query, key, value of each head side by side)
/// - output: `([batch, tokens, heads·head_dim], [batch, heads, tokens, tokens])`
///
/// `dropout` acts on the weights before they weigh the values (the weights returned are the
/// ones before it).
pub fn attention_core(qkv: Tensor<3>, heads: usize, dropout: &Dropout) -> (Tensor<3>, Tensor<4>) {
    let [_, tokens, _] = qkv.dims();
    if super::on_cpu(&qkv) {
        let mask = super::dropout::draw_mask(dropout, &qkv.device(), heads * tokens * tokens);
        return fused_attention(qkv, heads, mask);
    }
    // On a GPU the fused kernels take a head per workgroup and drop nothing out.
    #[cfg(gpu)]
    {
        let drops_out = dropout.training.is_enabled() && qkv.device().is_autodiff() && dropout.prob > 0.0;
        if !drops_out && webgpu::fits(tokens, heads, qkv.dims()[2] / (3 * heads)) {
            return fused_attention(qkv, heads, DropoutMask::NONE);
        }
    }
    composed_attention_core(qkv, heads, dropout)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::assert_matches_burns;
    use crate::ops::cpu::dropout_mask::DropoutMask;
    use burn::tensor::{Device, Distribution, TensorData, Tolerance};

    /// Values, weights and the gradient through the fused operation match burn's composition.
    #[test]
    fn fused_attention_matches_the_composed_one() {
        let device = Device::flex().autodiff();
        let qkv = Tensor::<3>::random([3, 7, 3 * 2 * 4], Distribution::Normal(0.0, 1.0), &device)
            .require_grad();
        let no_dropout = burn::nn::DropoutConfig::new(0.0).init();
        let (ours, ours_weights) = attention_core(qkv.clone(), 2, &no_dropout);
        let (burns, burns_weights) = composed_attention_core(qkv.clone(), 2, &no_dropout);

        let tolerance = Tolerance::absolute(1e-5);
        ours_weights.into_data().assert_approx_eq::<f32>(&burns_weights.into_data(), tolerance);
        assert_matches_burns(ours, burns, |grads| vec![qkv.grad(grads).unwrap().into_data()], tolerance);
    }

    /// With attention dropout, the fused operation weighs the values by the masked weights and
    /// passes the same mask back: it matches burn's composition with that mask's factors.
    #[test]
    fn fused_attention_with_dropout_matches_the_composition_with_its_mask() {
        let device = Device::flex().autodiff();
        let ([batch, tokens, heads, head_dim], prob) = ([3, 7, 2, 4], 0.3);
        let qkv = Tensor::<3>::random([batch, tokens, 3 * heads * head_dim], Distribution::Normal(0.0, 1.0), &device)
            .require_grad();
        let mask = DropoutMask::new(prob, 9);
        let (ours, ours_weights) = fused_attention(qkv.clone(), heads, mask);

        let parts = qkv.clone().reshape([batch, tokens, 3, heads, head_dim]).permute([2, 0, 3, 1, 4]);
        let part = |index: usize| parts.clone().narrow(0, index, 1).reshape([batch, heads, tokens, head_dim]);
        let scores = part(0).matmul(part(1).swap_dims(2, 3)) / (head_dim as f64).sqrt();
        let weights = burn::tensor::activation::softmax(scores, 3);
        let factors = mask.factors(batch * heads * tokens * tokens);
        assert!(factors.contains(&0.0), "the mask drops something");
        let factors = Tensor::<4>::from_data(TensorData::new(factors, [batch, heads, tokens, tokens]), &device);
        let burns = (weights.clone() * factors).matmul(part(2)).swap_dims(1, 2).reshape([batch, tokens, heads * head_dim]);

        let tolerance = Tolerance::absolute(1e-5);
        ours_weights.into_data().assert_approx_eq::<f32>(&weights.into_data(), tolerance);
        assert_matches_burns(ours, burns, |grads| vec![qkv.grad(grads).unwrap().into_data()], tolerance);
    }
}
