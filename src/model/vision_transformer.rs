use crate::ops::token_assembly::class_and_positions;
use crate::ops::{dropout, linear};
use crate::ops::layer_norm::{self, first_token_layer_norm};
use burn::module::{Module, Param};
use burn::nn::{Dropout, DropoutConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::tensor::{Device, Distribution, Tensor};

use super::config::VitConfig;
use super::encoder::{TransformerEncoderBlock, TransformerEncoderBlockConfig};
use super::patch_embedding::{PatchEmbedding, PatchEmbeddingConfig};

/// The assembled ViT: patches, [CLS], positions, L encoder blocks, final norm, linear head.
#[derive(Module, Debug)]
pub struct VisionTransformer {
    pub patch_embedding: PatchEmbedding,
    /// Learnable [CLS] token, `[1, 1, embed_dim]`, zero at start as in the reference.
    pub class_token: Param<Tensor<3>>,
    /// Learnable 1-D positional embedding, `[1, tokens, embed_dim]`, N(0, 0.02²) at start.
    pub position_embedding: Param<Tensor<3>>,
    pub embedding_dropout: Dropout,
    pub blocks: Vec<TransformerEncoderBlock>,
    pub norm: LayerNorm,
    pub head: Linear,
}

/// Logits and, when asked for, every layer's attention weights.
#[derive(Debug, Clone)]
pub struct VitOutput {
    /// `[batch, classes]`
    pub logits: Tensor<2>,
    /// One `[batch, heads, tokens, tokens]` tensor per layer; empty unless requested.
    pub attention: Vec<Tensor<4>>,
}

impl VitConfig {
    /// Builds the model with fresh weights.
    ///
    /// # Panics
    /// If [`VitConfig::validate`] fails; check it first for configs from outside.
    pub fn init(&self, device: &Device) -> VisionTransformer {
        if let Err(problem) = self.validate() {
            panic!("invalid ViT config: {problem}");
        }
        let block = TransformerEncoderBlockConfig {
            embed_dim: self.embed_dim,
            heads: self.heads,
            mlp_dim: self.mlp_dim,
            dropout: self.dropout,
        };
        let patch = PatchEmbeddingConfig {
            channels: self.channels,
            patch_size: self.patch_size,
            embed_dim: self.embed_dim,
        };
        VisionTransformer {
            patch_embedding: patch.init(device),
            class_token: Param::from_tensor(Tensor::zeros([1, 1, self.embed_dim], device)),
            position_embedding: Param::from_tensor(Tensor::random(
                [1, self.tokens(), self.embed_dim],
                Distribution::Normal(0.0, 0.02),
                device,
            )),
            embedding_dropout: DropoutConfig::new(self.dropout).init(),
            blocks: (0..self.depth).map(|_| block.init(device)).collect(),
            norm: LayerNormConfig::new(self.embed_dim).with_epsilon(layer_norm::EPSILON).init(device),
            head: LinearConfig::new(self.embed_dim, self.classes).init(device),
        }
    }
}

impl VisionTransformer {
    /// Whether training drops anything out: every layer has the one probability
    /// [`VitConfig::dropout`] gave, so the embedding's tells for all.
    pub fn drops_out(&self) -> bool {
        self.embedding_dropout.prob > 0.0
    }

    /// Outputs of the head: the number of classes.
    pub fn classes(&self) -> usize {
        self.head.weight.val().dims()[1]
    }

    /// The same model with a new head of `classes` outputs, all zero, for fine-tuning on other
    /// classes: a zero head starts every class at the same score, as the ViT paper's fine-tuning
    /// does, so what it learns comes from the pictures alone.
    pub fn with_new_head(mut self, classes: usize) -> Self {
        let device = self.head.weight.val().device();
        let embed_dim = self.head.weight.val().dims()[0];
        self.head = Linear {
            weight: Param::from_tensor(Tensor::zeros([embed_dim, classes], &device)),
            bias: Some(Param::from_tensor(Tensor::zeros([classes], &device))),
        };
        self
    }

    /// Every parameter but the head's frozen: a linear probe. The backward pass then stops at
    /// the head, and the optimiser, which only moves parameters that have gradients, leaves the
    /// rest bit for bit as it was.
    pub fn with_only_head_trainable(self) -> Self {
        let head = self.head.clone();
        let mut frozen = self.no_grad();
        frozen.head = head;
        frozen
    }

    /// # Shapes
    /// - images: `[batch, channels, height, width]`, normalised per channel
    /// - output: `[batch, classes]`
    pub fn forward(&self, images: Tensor<4>) -> Tensor<2> {
        self.run(images, false).logits
    }

    /// Like [`forward`](Self::forward), and also returns every layer's attention weights.
    pub fn forward_with_attention(&self, images: Tensor<4>) -> VitOutput {
        self.run(images, true)
    }

    fn run(&self, images: Tensor<4>, keep_attention: bool) -> VitOutput {
        let patches = self.patch_embedding.forward(images); // [batch, patches, embed_dim]
        let batch = patches.dims()[0];
        // [batch, tokens, embed_dim]: [CLS] before each image's patches, plus the positions.
        let mut tokens = class_and_positions(patches, self.class_token.val(), self.position_embedding.val());
        tokens = dropout(tokens, &self.embedding_dropout);

        let mut attention = Vec::new();
        for block in &self.blocks {
            let (next, weights) = block.forward(tokens);
            tokens = next;
            if keep_attention {
                attention.push(weights);
            }
        }
        // The norm acts on each token alone, so only the class token is normalised.
        let class_output = first_token_layer_norm(&self.norm, tokens); // [batch, 1, embed_dim]
        // Through the page's dense operation, as every other layer: on a GPU one launch with its
        // bias, where burn's Linear takes a product and an addition.
        let logits = linear(&self.head, class_output).reshape([batch, self.classes()]);
        VitOutput { logits, attention }
    }
}
