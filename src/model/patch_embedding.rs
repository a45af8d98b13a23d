use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::tensor::{Device, Tensor};

/// Cuts the image into P×P patches and projects each to D dimensions, as one Conv2d whose
/// kernel and stride are both P (the same as a Linear on flattened patches, but one kernel).
#[derive(Module, Debug)]
pub struct PatchEmbedding {
    pub projection: Conv2d,
}

#[derive(Debug, Clone)]
pub struct PatchEmbeddingConfig {
    pub channels: usize,
    pub patch_size: usize,
    pub embed_dim: usize,
}

impl PatchEmbeddingConfig {
    pub fn init(&self, device: &Device) -> PatchEmbedding {
        let kernel = [self.patch_size, self.patch_size];
        let projection = Conv2dConfig::new([self.channels, self.embed_dim], kernel)
            .with_stride(kernel)
            .init(device);
        PatchEmbedding { projection }
    }
}

impl PatchEmbedding {
    /// # Shapes
    /// - images: `[batch, channels, height, width]`
    /// - output: `[batch, patches, embed_dim]`, patches in row-major order of the grid
    pub fn forward(&self, images: Tensor<4>) -> Tensor<3> {
        let grid = self.projection.forward(images); // [batch, embed_dim, grid, grid]
        grid.flatten::<3>(2, 3) // [batch, embed_dim, patches]
            .swap_dims(1, 2) // [batch, patches, embed_dim]
    }
}
