//! [`TokenAssembly`] on a GPU: `forward.wgsl`, one launch writing every token; `backward.wgsl`,
//! one launch copying the patches' gradient out and summing the positions' over ranges of
//! [`RANGE`] images, then, over more than one range, the second pass of every sum over the batch
//! ([`sum_partials`]). The class token's gradient is the positions' first row, a view.

use burn::backend::Cube;
use burn::backend::tensor::FloatTensor;

use super::{TokenAssembly, fits_gpu};
use crate::ops::webgpu::launch::{Grid, Serial, WgslKernel, bindable, dims, empty_like, launch, reshaped, row};
use crate::ops::webgpu::partials::sum_partials;

/// Images one invocation of the backward pass sums in turn: at batch 1024, 32 ranges of the
/// 2,080 vec4s of an image's tokens, 66,560 invocations, where one range would leave most of a
/// GPU idle.
const RANGE: usize = 32;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct AssembleTokens {
    batch: usize,
    tokens: usize,
    width: usize,
}

impl WgslKernel for AssembleTokens {
    const TEMPLATE: &'static str = include_str!("forward.wgsl");
    fn constants(&self) -> Vec<(&'static str, String)> {
        vec![
            ("tokens", self.tokens.to_string()),
            ("width4", (self.width / 4).to_string()),
            ("len", (self.batch * self.tokens * self.width / 4).to_string()),
        ]
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SplitTokenGradient {
    batch: usize,
    tokens: usize,
    width: usize,
}

impl SplitTokenGradient {
    fn ranges(&self) -> usize {
        self.batch.div_ceil(RANGE)
    }
}

impl WgslKernel for SplitTokenGradient {
    const TEMPLATE: &'static str = include_str!("backward.wgsl");
    fn constants(&self) -> Vec<(&'static str, String)> {
        let row4 = self.tokens * self.width / 4;
        vec![
            ("batch", self.batch.to_string()),
            ("range", RANGE.to_string()),
            ("row4", row4.to_string()),
            ("width4", (self.width / 4).to_string()),
            ("len", (self.ranges() * row4).to_string()),
        ]
    }
}

impl TokenAssembly for Cube {
    fn assemble_tokens(
        patches: FloatTensor<Self>,
        class_token: FloatTensor<Self>,
        positions: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        let (shape, tokens) = (dims(&patches), dims(&positions)[0]);
        let (batch, width) = (shape[0], shape[2]);
        assert!(fits_gpu(width) && shape[1] + 1 == tokens, "the GPU token assembly takes these shapes (see super::class_and_positions)");
        let [patches, class_token, positions] = [patches, class_token, positions].map(bindable);
        let out = empty_like(&patches, &[batch, tokens, width]);
        let kernel = AssembleTokens { batch, tokens, width };
        let grid = Grid::covering(&kernel, (batch * tokens * width / 4) as u64);
        launch(kernel, grid, &[&patches, &class_token, &positions, &out], &[], Serial::default());
        out
    }

    fn assemble_tokens_backward(grad: FloatTensor<Self>) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        let shape = dims(&grad);
        let (batch, tokens, width) = (shape[0], shape[1], shape[2]);
        let grad = bindable(grad);
        let kernel = SplitTokenGradient { batch, tokens, width };
        let ranges = kernel.ranges();
        let patches = empty_like(&grad, &[batch, tokens - 1, width]);
        let sums = empty_like(&grad, &[ranges, tokens * width]);
        let steps = RANGE.min(batch) as u64;
        let grid = Grid::covering(&kernel, (ranges * tokens * width / 4) as u64);
        launch(kernel, grid, &[&grad, &patches, &sums], &[], Serial { steps, batch_sum: steps });
        let positions = match ranges {
            1 => reshaped(sums, &[tokens, width]),
            _ => reshaped(sum_partials(&sums, 1, ranges, tokens * width), &[tokens, width]),
        };
        let class_token = row(&positions, 0, width);
        (patches, class_token, positions)
    }
}
