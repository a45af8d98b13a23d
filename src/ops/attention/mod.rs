//! Self-attention's core, `softmax(Q·Kᵀ/√d)·V` per head from the QKV projection's output,
//! returning the softmax weights for the attention maps.
//!
//! On the CPU backend it is one fused operation ([`cpu`]); on GPU backends burn's operations with
//! the blocked product ([`webgpu`]).

pub mod cpu;
pub mod webgpu;

pub use webgpu::composed_attention_core;

use burn::nn::Dropout;
use burn::tensor::Tensor;

/// `softmax(Q·Kᵀ/√d)·V` per head from the QKV projection's output, with the softmax weights.
///
/// # Shapes
/// - qkv: `[batch, tokens, 3·heads·head_dim]` (query, key, value of each head side by side)
/// - output: `([batch, tokens, heads·head_dim], [batch, heads, tokens, tokens])`
///
/// `dropout` acts on the weights before they weigh the values; the fused operation has none, so
/// a model with attention dropout takes burn's operations on the CPU too.
pub fn attention_core(qkv: Tensor<3>, heads: usize, dropout: &Dropout) -> (Tensor<3>, Tensor<4>) {
    if super::on_cpu(&qkv) && dropout.prob == 0.0 {
        return cpu::fused_attention(qkv, heads);
    }
    composed_attention_core(qkv, heads, dropout)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::assert_matches_burns;
    use burn::tensor::{Device, Distribution, Tolerance};

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
}
