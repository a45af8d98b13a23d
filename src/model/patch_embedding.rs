use crate::ops::dense::dense;
use crate::ops::on_cpu;
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
    /// On a GPU the convolution is written as what it is, one dense product of the flattened
    /// patches with the kernel (burn's direct convolution took 1.6 ms of an H200's step at batch
    /// 1024, and its backward pass several launches more); on the CPU burn's convolution.
    ///
    /// # Shapes
    /// - images: `[batch, channels, height, width]`
    /// - output: `[batch, patches, embed_dim]`, patches in row-major order of the grid
    pub fn forward(&self, images: Tensor<4>) -> Tensor<3> {
        if !on_cpu(&images)
            && let Some(bias) = &self.projection.bias
        {
            return self.as_product(images, bias.val());
        }
        let grid = self.projection.forward(images); // [batch, embed_dim, grid, grid]
        grid.flatten::<3>(2, 3) // [batch, embed_dim, patches]
            .swap_dims(1, 2) // [batch, patches, embed_dim]
    }

    fn as_product(&self, images: Tensor<4>, bias: Tensor<1>) -> Tensor<3> {
        let [batch, channels, height, width] = images.dims();
        let [embed_dim, _, patch, _] = self.projection.weight.val().dims();
        let (rows, columns) = (height / patch, width / patch);
        let patches = images
            .reshape([batch, channels, rows, patch, columns, patch])
            .permute([0, 2, 4, 1, 3, 5]) // [batch, row, column, channel, y, x]
            .reshape([batch * rows * columns, channels * patch * patch]);
        let kernel = self.projection.weight.val().reshape([embed_dim, channels * patch * patch]).transpose(); // [channels·patch², embed_dim]
        dense(patches, kernel, bias).reshape([batch, rows * columns, embed_dim])
    }
}
