//! The Vision Transformer: configuration, layers and the assembled model.

mod attention;
mod config;
mod encoder;
mod patch_embedding;
mod vision_transformer;

pub use attention::{MultiHeadSelfAttention, MultiHeadSelfAttentionConfig};
pub use config::{Preset, VitConfig};
pub use encoder::{TransformerEncoderBlock, TransformerEncoderBlockConfig};
pub use patch_embedding::{PatchEmbedding, PatchEmbeddingConfig};
pub use vision_transformer::{VisionTransformer, VitOutput};
