use crate::ops::layer_norm::{self, layer_norm};
use crate::ops::dense::mlp_residual;
use burn::module::Module;
use burn::nn::{Dropout, DropoutConfig, Gelu, LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::tensor::{Device, Tensor};

use super::attention::{MultiHeadSelfAttention, MultiHeadSelfAttentionConfig};

/// One pre-LayerNorm encoder block: `x + MSA(LN(x))`, then `x + MLP(LN(x))`.
#[derive(Module, Debug)]
pub struct TransformerEncoderBlock {
    pub attention_norm: LayerNorm,
    pub attention: MultiHeadSelfAttention,
    pub mlp_norm: LayerNorm,
    pub mlp_in: Linear,
    /// Names the activation; applied with `mlp_in` by [`mlp_residual`] (the same function,
    /// vectorised on the CPU). Kept so that saved checkpoints keep their record layout.
    pub activation: Gelu,
    pub mlp_out: Linear,
    pub dropout: Dropout,
}

#[derive(Debug, Clone)]
pub struct TransformerEncoderBlockConfig {
    pub embed_dim: usize,
    pub heads: usize,
    pub mlp_dim: usize,
    pub dropout: f64,
}

impl TransformerEncoderBlockConfig {
    pub fn init(&self, device: &Device) -> TransformerEncoderBlock {
        let attention = MultiHeadSelfAttentionConfig {
            embed_dim: self.embed_dim,
            heads: self.heads,
            dropout: self.dropout,
        };
        TransformerEncoderBlock {
            attention_norm: LayerNormConfig::new(self.embed_dim).with_epsilon(layer_norm::EPSILON).init(device),
            attention: attention.init(device),
            mlp_norm: LayerNormConfig::new(self.embed_dim).with_epsilon(layer_norm::EPSILON).init(device),
            mlp_in: LinearConfig::new(self.embed_dim, self.mlp_dim).init(device),
            activation: Gelu::new(),
            mlp_out: LinearConfig::new(self.mlp_dim, self.embed_dim).init(device),
            dropout: DropoutConfig::new(self.dropout).init(),
        }
    }
}

impl TransformerEncoderBlock {
    /// # Shapes
    /// - tokens: `[batch, tokens, embed_dim]`
    /// - output: `[batch, tokens, embed_dim]`
    /// - attention: `[batch, heads, tokens, tokens]`
    pub fn forward(&self, tokens: Tensor<3>) -> (Tensor<3>, Tensor<4>) {
        let normed = layer_norm(&self.attention_norm, tokens.clone());
        let (tokens, attention) = self.attention.forward_onto(normed, tokens, &self.dropout);

        let normed = layer_norm(&self.mlp_norm, tokens.clone());
        let tokens = mlp_residual(&self.mlp_in, &self.mlp_out, normed, tokens, &self.dropout);
        (tokens, attention)
    }
}
