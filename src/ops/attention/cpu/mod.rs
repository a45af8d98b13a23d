//! Self-attention's core as one operation on the CPU backend, read straight from the QKV
//! projection's output.
//!
//! Composed from burn's tensor operations, the core spent most of a CPU training step on memory
//! traffic rather than arithmetic: copying the query, key and value out of the projection,
//! a softmax of five passes with a backward pass each, 1,024 small batched products per block
//! at batch 256, and a slice-and-assign of a zeroed buffer for each of the three gradients.
//! [`kernels`] does it in one pass per head over strided views, with a hand-written backward
//! ([`super::autodiff`]), attention dropout included.

pub mod kernels;

use super::FusedAttention;
use crate::ops::cpu::dropout_mask::DropoutMask;
use crate::ops::cpu::tensor as cpu_tensor;
use burn::backend::flex::FlexTensor;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Flex, TensorMetadata};
use kernels::AttentionShape;

impl FusedAttention for Flex {
    fn fused_attention(
        qkv: FloatTensor<Self>,
        heads: usize,
        mask: DropoutMask,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        let shape = attention_shape(&qkv, heads);
        let qkv = cpu_tensor::contiguous(qkv);
        let mut attended = cpu_tensor::zeros(shape.attended_len());
        let mut weights = cpu_tensor::zeros(shape.weights_len());
        kernels::forward(shape, &mask, cpu_tensor::values(&qkv), &mut attended, &mut weights);
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
        mask: DropoutMask,
    ) -> FloatTensor<Self> {
        let shape = attention_shape(&qkv, heads);
        let (qkv, weights, grad) = (
            cpu_tensor::contiguous(qkv),
            cpu_tensor::contiguous(weights),
            cpu_tensor::contiguous(grad),
        );
        let mut grad_qkv = cpu_tensor::zeros(shape.qkv_len());
        kernels::backward(
            shape,
            &mask,
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
