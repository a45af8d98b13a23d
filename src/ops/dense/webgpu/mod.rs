//! A register-blocked matrix product for WebGPU, behind the dense layers and attention's
//! products on a GPU.
//!
//! burn's stock WebGPU matmul is slow on SwiftShader (WebGPU on the CPU) inside Chromium, where
//! a kernel that computes 4×4 outputs per invocation from vec4 loads (`blocked_4x4.wgsl`) is
//! several times faster (docs/performance.md). The kernel is registered through burn's backend
//! extension API ([`BlockedMatmul`]) with its own backward pass ([`autodiff`]), so training uses
//! it too.

mod autodiff;
#[cfg(gpu)]
mod wgsl;

use burn::backend::ops::FloatTensorOps;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, Dispatch, Flex, backend_extension};
use burn::nn::Linear;
use burn::tensor::Tensor;

/// A batched matrix product `lhs [batch, m, k] · rhs [batch, k, n] → [batch, m, n]`, run by the
/// register-blocked kernel where its shape allows and by burn's matmul otherwise.
#[backend_extension(Cube: cfg(gpu), Flex, Autodiff)]
pub trait BlockedMatmul: Backend {
    fn blocked_matmul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self>;
}

/// The CPU backend has no use for the kernel; it is here so the backward pass can be tested
/// natively against burn's own matmul.
impl BlockedMatmul for Flex {
    fn blocked_matmul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::float_matmul(lhs, rhs)
    }
}

/// `lhs [batch, m, k] · rhs [batch, k, n]` through [`BlockedMatmul`].
pub fn blocked_matmul(lhs: Tensor<3>, rhs: Tensor<3>) -> Tensor<3> {
    Tensor::from_dispatch(<Dispatch as BlockedMatmul>::blocked_matmul(
        lhs.into_dispatch(),
        rhs.into_dispatch(),
    ))
}

/// `layer.forward(input)` through [`blocked_matmul`], the tokens of every image as the rows of
/// one product.
///
/// # Shapes
/// - input: `[batch, tokens, d_input]`
/// - output: `[batch, tokens, d_output]`
pub fn blocked_linear(layer: &Linear, input: Tensor<3>) -> Tensor<3> {
    let [batch, tokens, d_input] = input.dims();
    let weight = layer.weight.val(); // [d_input, d_output]
    let d_output = weight.dims()[1];
    let output =
        blocked_matmul(input.reshape([1, batch * tokens, d_input]), weight.unsqueeze::<3>())
            .reshape([batch, tokens, d_output]);
    match &layer.bias {
        Some(bias) => output + bias.val().unsqueeze::<3>(),
        None => output,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::assert_matches_burns;
    use burn::tensor::{Device, Distribution, Tolerance};

    /// Values and both gradients match burn's matmul, so the custom backward is wired right.
    #[test]
    fn gradients_match_burns_matmul() {
        let device = Device::flex().autodiff();
        let random = |shape: [usize; 3]| {
            Tensor::<3>::random(shape, Distribution::Normal(0.0, 1.0), &device).require_grad()
        };
        let (lhs, rhs) = (random([2, 5, 8]), random([2, 8, 12]));
        assert_matches_burns(
            blocked_matmul(lhs.clone(), rhs.clone()),
            lhs.clone().matmul(rhs.clone()),
            |grads| vec![lhs.grad(grads).unwrap().into_data(), rhs.grad(grads).unwrap().into_data()],
            Tolerance::default(),
        );
    }

    #[test]
    fn blocked_linear_matches_burns_linear() {
        let device = Device::flex();
        let layer = burn::nn::LinearConfig::new(8, 12).init(&device);
        let input = Tensor::<3>::random([2, 5, 8], Distribution::Normal(0.0, 1.0), &device);
        blocked_linear(&layer, input.clone())
            .into_data()
            .assert_approx_eq::<f32>(&layer.forward(input).into_data(), Tolerance::default());
    }
}
