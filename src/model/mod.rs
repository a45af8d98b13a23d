//! The Vision Transformer: configuration, layers and the assembled model. Its layers call the
//! four operations in [`crate::ops`] (dense, attention core, layer norm, GELU), which pick a CPU or
//! WebGPU implementation by device; nothing here knows which.

mod attention;
mod config;
mod encoder;
pub mod parity;
mod patch_embedding;
mod vision_transformer;

pub use attention::{MultiHeadSelfAttention, MultiHeadSelfAttentionConfig};
pub use config::{Preset, VitConfig};
pub use encoder::{TransformerEncoderBlock, TransformerEncoderBlockConfig};
pub use patch_embedding::{PatchEmbedding, PatchEmbeddingConfig};
pub use vision_transformer::{VisionTransformer, VitOutput};
