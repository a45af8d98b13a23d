use crate::ops::dense::linear_residual;
use crate::ops::{attention_core, linear};
use burn::module::Module;
use burn::nn::{Dropout, DropoutConfig, Linear, LinearConfig};
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
        let (attended, weights) = self.heads_output(tokens);
        (linear(&self.projection, attended), weights)
    }

    /// `residual + dropout(forward(tokens))` and the attention weights: an encoder block's
    /// branch with its residual connection, added by the projection as it writes its product.
    pub fn forward_onto(&self, tokens: Tensor<3>, residual: Tensor<3>, dropout: &Dropout) -> (Tensor<3>, Tensor<4>) {
        let (attended, weights) = self.heads_output(tokens);
        (linear_residual(&self.projection, attended, residual, dropout), weights)
    }

    /// The heads' outputs side by side, before the projection, and the attention weights.
    fn heads_output(&self, tokens: Tensor<3>) -> (Tensor<3>, Tensor<4>) {
        let qkv = linear(&self.qkv, tokens); // [batch, tokens, 3 * embed_dim]
        attention_core(qkv, self.heads, &self.dropout)
    }
}
