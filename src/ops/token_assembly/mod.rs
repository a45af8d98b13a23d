//! The encoder's input from the patch embeddings: the [CLS] token in front of each image's
//! patches, and the learnable positions added to every token, as one operation,
//! [`TokenAssembly`], with its own backward pass ([`autodiff`]). On a GPU one launch forward and
//! one or two backward ([`webgpu`]), where burn's expand, concatenation and broadcast addition
//! took four forward and two sums over the batch backward (its slices there are views). On the
//! CPU backend the same arithmetic on slices ([`cpu`]), for the tests (the CPU path keeps burn's
//! composition).

mod autodiff;
pub mod cpu;
#[cfg(gpu)]
pub mod webgpu;

use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, Dispatch, backend_extension};
use burn::tensor::Tensor;

/// The tokens' assembly as a backend operation.
#[backend_extension(Cube: cfg(gpu), Flex, Autodiff)]
pub trait TokenAssembly: Backend {
    /// `tokens [batch, 1 + patches, width]`: `class_token [width]`, then the image's rows of
    /// `patches [batch, patches, width]`, each plus its row of `positions [1 + patches, width]`.
    fn assemble_tokens(
        patches: FloatTensor<Self>,
        class_token: FloatTensor<Self>,
        positions: FloatTensor<Self>,
    ) -> FloatTensor<Self>;
    /// `(∂patches, ∂class_token, ∂positions)` from `∂tokens`: the patches' rows of it, and its
    /// sums over the batch (the class token's is the first position's).
    fn assemble_tokens_backward(grad: FloatTensor<Self>) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>);
}

/// `[class_token; patches] + positions` for each image, through [`TokenAssembly`].
///
/// # Shapes
/// - patches: `[batch, patches, width]`; class_token: `[1, 1, width]`; positions: `[1, 1 + patches, width]`
/// - output: `[batch, 1 + patches, width]`
pub fn assemble_tokens(patches: Tensor<3>, class_token: Tensor<3>, positions: Tensor<3>) -> Tensor<3> {
    let [_, tokens, width] = positions.dims();
    let tokens = <Dispatch as TokenAssembly>::assemble_tokens(
        patches.into_dispatch(),
        class_token.reshape([width]).into_dispatch(),
        positions.reshape([tokens, width]).into_dispatch(),
    );
    Tensor::from_dispatch(tokens)
}

/// What the model calls: [`assemble_tokens`] on a GPU, where its kernels take the width; burn's
/// composition on the CPU backend, which keeps it.
pub fn class_and_positions(patches: Tensor<3>, class_token: Tensor<3>, positions: Tensor<3>) -> Tensor<3> {
    if !super::on_cpu(&patches) && fits_gpu(patches.dims()[2]) {
        assemble_tokens(patches, class_token, positions)
    } else {
        composed_assemble_tokens(patches, class_token, positions)
    }
}

/// Whether the GPU kernels take rows of `width`: vec4 loads.
fn fits_gpu(width: usize) -> bool {
    width.is_multiple_of(4)
}

/// The composition [`assemble_tokens`] replaces, on burn's operations: the definition the tests
/// check it against.
pub fn composed_assemble_tokens(patches: Tensor<3>, class_token: Tensor<3>, positions: Tensor<3>) -> Tensor<3> {
    let [batch, _, width] = patches.dims();
    Tensor::cat(vec![class_token.expand([batch, 1, width]), patches], 1) + positions
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::assert_matches_burns;
    use burn::tensor::{Device, Distribution, Tolerance};

    /// Values and the three gradients match burn's composition, so the extension and its
    /// backward pass are wired right.
    #[test]
    fn tokens_and_their_gradients_match_burns() {
        let device = Device::flex().autodiff();
        let random = |shape: [usize; 3]| Tensor::<3>::random(shape, Distribution::Normal(0.0, 1.0), &device).require_grad();
        let (patches, class_token, positions) = (random([3, 16, 12]), random([1, 1, 12]), random([1, 17, 12]));
        assert_matches_burns(
            assemble_tokens(patches.clone(), class_token.clone(), positions.clone()),
            composed_assemble_tokens(patches.clone(), class_token.clone(), positions.clone()),
            |grads| {
                [&patches, &class_token, &positions].map(|tensor| tensor.grad(grads).expect("a gradient").into_data()).to_vec()
            },
            Tolerance::absolute(1e-6),
        );
    }
}
