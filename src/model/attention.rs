use crate::matmul::{heads_matmul, linear};
use burn::module::Module;
use burn::nn::{Dropout, DropoutConfig, Linear, LinearConfig};
use burn::tensor::activation::softmax;
use burn::tensor::{Device, Tensor};

/// Multi-head self-attention with one fused QKV projection, written out as
/// softmax(QKᵀ/√d_k)·V so the attention weights can be returned for visualisation.
#[derive(Module, Debug)]
pub struct MultiHeadSelfAttention {
    pub qkv: Linear,
    pub projection: Linear,
    pub dropout: Dropout,
    pub heads: usize,
}

#[derive(Debug, Clone)]
pub struct MultiHeadSelfAttentionConfig {
    pub embed_dim: usize,
    pub heads: usize,
    pub dropout: f64,
}

impl MultiHeadSelfAttentionConfig {
    pub fn init(&self, device: &Device) -> MultiHeadSelfAttention {
        MultiHeadSelfAttention {
            qkv: LinearConfig::new(self.embed_dim, 3 * self.embed_dim).init(device),
            projection: LinearConfig::new(self.embed_dim, self.embed_dim).init(device),
            dropout: DropoutConfig::new(self.dropout).init(),
            heads: self.heads,
        }
    }
}

impl MultiHeadSelfAttention {
    /// Returns the attended tokens and the attention weights, whose rows sum to one.
    ///
    /// # Shapes
    /// - tokens: `[batch, tokens, embed_dim]`
    /// - output: `[batch, tokens, embed_dim]`
    /// - weights: `[batch, heads, tokens, tokens]`
    pub fn forward(&self, tokens: Tensor<3>) -> (Tensor<3>, Tensor<4>) {
        let [batch, length, dim] = tokens.dims();
        let head_dim = dim / self.heads;

        let qkv = linear(&self.qkv, tokens) // [batch, tokens, 3 * embed_dim]
            .reshape([batch, length, 3, self.heads, head_dim])
            .permute([2, 0, 3, 1, 4]); // [3, batch, heads, tokens, head_dim]
        let split = |index: usize| -> Tensor<4> {
            qkv.clone()
                .narrow(0, index, 1)
                .reshape([batch, self.heads, length, head_dim])
        };
        let (query, key, value) = (split(0), split(1), split(2));

        let scores = heads_matmul(query, key.swap_dims(2, 3)) / (head_dim as f64).sqrt(); // [batch, heads, tokens, tokens]
        let weights = softmax(scores, 3);
        let attended = heads_matmul(self.dropout.forward(weights.clone()), value) // [batch, heads, tokens, head_dim]
            .swap_dims(1, 2) // [batch, tokens, heads, head_dim]
            .reshape([batch, length, dim]);
        (linear(&self.projection, attended), weights)
    }
}
