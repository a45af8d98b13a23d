//! Self-attention's core from burn's tensor operations, its products through the GPU's product
//! kernels ([`heads_matmul`]): what a GPU runs when attention weights are dropped out, and the
//! definition the fused operations are tested against.

use crate::ops::dense::heads_matmul;
use burn::nn::Dropout;
use burn::tensor::Tensor;
use burn::tensor::activation::softmax;

/// [`super::attention_core`] from burn's tensor operations.
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
