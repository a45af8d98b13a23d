//! [`TokenAssembly`] on the CPU backend: the kernels' arithmetic on slices, so the backward
//! pass's wiring can be tested natively against burn's composition.

use burn::backend::tensor::FloatTensor;
use burn::backend::{Flex, TensorMetadata};

use super::TokenAssembly;
use crate::ops::cpu::tensor as cpu_tensor;

impl TokenAssembly for Flex {
    fn assemble_tokens(
        patches: FloatTensor<Self>,
        class_token: FloatTensor<Self>,
        positions: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        let (batch, width, tokens) = (patches.shape()[0], patches.shape()[2], positions.shape()[0]);
        let (patches, class_token, positions) =
            (cpu_tensor::contiguous(patches), cpu_tensor::contiguous(class_token), cpu_tensor::contiguous(positions));
        let (patches, class_token, positions) =
            (cpu_tensor::values(&patches), cpu_tensor::values(&class_token), cpu_tensor::values(&positions));
        let mut out = Vec::with_capacity(batch * tokens * width);
        for image in patches.chunks_exact((tokens - 1) * width) {
            let rows = class_token.iter().chain(image);
            out.extend(rows.zip(positions.iter()).map(|(value, position)| value + position));
        }
        cpu_tensor::from_values(out, [batch, tokens, width])
    }

    fn assemble_tokens_backward(grad: FloatTensor<Self>) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        let (batch, tokens, width) = (grad.shape()[0], grad.shape()[1], grad.shape()[2]);
        let grad = cpu_tensor::contiguous(grad);
        let mut positions = cpu_tensor::zeros(tokens * width);
        let mut patches = Vec::with_capacity(batch * (tokens - 1) * width);
        for image in cpu_tensor::values(&grad).chunks_exact(tokens * width) {
            positions.iter_mut().zip(image).for_each(|(sum, value)| *sum += value);
            patches.extend_from_slice(&image[width..]);
        }
        let class_token = positions[..width].to_vec();
        (
            cpu_tensor::from_values(patches, [batch, tokens - 1, width]),
            cpu_tensor::from_values(class_token, [width]),
            cpu_tensor::from_values(positions, [tokens, width]),
        )
    }
}
