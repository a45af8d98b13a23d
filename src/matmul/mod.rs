//! The model's dense layers, with a register-blocked matrix product on WebGPU.
//!
//! burn's stock WebGPU matmul reaches 0.44 GFLOP/s on SwiftShader (WebGPU on the CPU) inside
//! Chromium, where a kernel that computes 4×4 outputs per invocation from vec4 loads reaches
//! several times that (`blocked_4x4.wgsl`). The kernel is registered through burn's backend
//! extension API ([`BlockedMatmul`]) with its own backward pass ([`autodiff`]), so training uses
//! it too. On the CPU backend a dense layer is one fused operation instead ([`cpu`]).

mod autodiff;
pub mod cpu;
#[cfg(any(target_family = "wasm", feature = "wgpu"))]
mod wgsl;

use burn::backend::ops::FloatTensorOps;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, Dispatch, Flex, backend_extension};
use burn::nn::Linear;
use burn::tensor::Tensor;

/// A batched matrix product `lhs [batch, m, k] · rhs [batch, k, n] → [batch, m, n]`, run by the
/// register-blocked kernel where its shape allows and by burn's matmul otherwise.
#[backend_extension(Cube: cfg(any(target_family = "wasm", feature = "wgpu")), Flex, Autodiff)]
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

/// `lhs.matmul(rhs)` over `[batch, heads]`, through [`blocked_matmul`] on a GPU device.
///
/// # Shapes
/// - lhs: `[batch, heads, m, k]`, rhs: `[batch, heads, k, n]`
/// - output: `[batch, heads, m, n]`
pub fn heads_matmul(lhs: Tensor<4>, rhs: Tensor<4>) -> Tensor<4> {
    if !runs_on_gpu(&lhs) {
        return lhs.matmul(rhs);
    }
    let [batch, heads, m, k] = lhs.dims();
    let n = rhs.dims()[3];
    blocked_matmul(lhs.reshape([batch * heads, m, k]), rhs.reshape([batch * heads, k, n]))
        .reshape([batch, heads, m, n])
}

/// `layer.forward(input)`: the product through [`blocked_matmul`] on a GPU device, through
/// [`cpu::dense_linear`] on the CPU.
///
/// # Shapes
/// - input: `[batch, tokens, d_input]`
/// - output: `[batch, tokens, d_output]`
pub fn linear(layer: &Linear, input: Tensor<3>) -> Tensor<3> {
    if runs_on_gpu(&input) { blocked_linear(layer, input) } else { cpu::dense_linear(layer, input) }
}

/// What [`linear`] does on a GPU: the tokens of every image as the rows of one product.
fn blocked_linear(layer: &Linear, input: Tensor<3>) -> Tensor<3> {
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

fn runs_on_gpu<const D: usize>(tensor: &Tensor<D>) -> bool {
    !crate::cpu_tensor::is_on_cpu(tensor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::{Device, Distribution};

    fn random(shape: [usize; 3], device: &Device) -> Tensor<3> {
        Tensor::random(shape, Distribution::Normal(0.0, 1.0), device).require_grad()
    }

    /// Values and both gradients match burn's matmul, so the custom backward is wired right.
    #[test]
    fn gradients_match_burns_matmul() {
        let device = Device::flex().autodiff();
        let (lhs, rhs) = (random([2, 5, 8], &device), random([2, 8, 12], &device));
        let weights = Tensor::<3>::random([2, 5, 12], Distribution::Normal(0.0, 1.0), &device);

        let ours = blocked_matmul(lhs.clone(), rhs.clone());
        let grads = (ours.clone() * weights.clone()).sum().backward();
        let (ours_lhs, ours_rhs) = (lhs.grad(&grads).unwrap(), rhs.grad(&grads).unwrap());

        let burns = lhs.clone().matmul(rhs.clone());
        let grads = (burns.clone() * weights).sum().backward();
        let (burns_lhs, burns_rhs) = (lhs.grad(&grads).unwrap(), rhs.grad(&grads).unwrap());

        ours.into_data().assert_approx_eq::<f32>(&burns.into_data(), Default::default());
        ours_lhs.into_data().assert_approx_eq::<f32>(&burns_lhs.into_data(), Default::default());
        ours_rhs.into_data().assert_approx_eq::<f32>(&burns_rhs.into_data(), Default::default());
    }

    #[test]
    fn blocked_linear_matches_burns_linear() {
        let device = Device::flex();
        let layer = burn::nn::LinearConfig::new(8, 12).init(&device);
        let input = Tensor::<3>::random([2, 5, 8], Distribution::Normal(0.0, 1.0), &device);
        blocked_linear(&layer, input.clone())
            .into_data()
            .assert_approx_eq::<f32>(&layer.forward(input).into_data(), Default::default());
    }
}
