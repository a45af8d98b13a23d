//! GELU, `x·Φ(x)`: the exact form PyTorch's `nn.GELU()` computes, so PyTorch's weights work
//! unchanged.
//!
//! A backend extension with its own backward pass ([`autodiff`]): on the CPU backend a
//! vectorised erf ([`cpu`]), on a GPU one kernel each way with the same erf ([`webgpu`]).

mod autodiff;
pub mod cpu;
#[cfg(gpu)]
pub(crate) mod webgpu;

use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, Dispatch, backend_extension};
use burn::tensor::Tensor;

/// GELU and its derivative as backend operations.
#[backend_extension(Cube: cfg(gpu), Flex, Autodiff)]
pub trait ExactGelu: Backend {
    /// `x·Φ(x)`.
    fn exact_gelu(x: FloatTensor<Self>) -> FloatTensor<Self>;
    /// `grad · (Φ(x) + x·φ(x))`: the gradient through [`ExactGelu::exact_gelu`] at `x`.
    fn exact_gelu_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self>;
}

/// GELU through [`ExactGelu`].
pub fn gelu<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    Tensor::from_dispatch(<Dispatch as ExactGelu>::exact_gelu(x.into_dispatch()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::assert_matches_burns;
    use burn::tensor::{Device, Distribution, Tolerance};

    /// Values and gradient match burn's GELU (libm's erf), so the extension and its backward
    /// are wired right.
    #[test]
    fn gelu_and_its_gradient_match_burns() {
        let device = Device::flex().autodiff();
        let x = Tensor::<3>::random([2, 65, 40], Distribution::Normal(0.0, 3.0), &device)
            .require_grad();
        assert_matches_burns(
            gelu(x.clone()),
            burn::tensor::activation::gelu(x.clone()),
            |grads| vec![x.grad(grads).unwrap().into_data()],
            Tolerance::absolute(2e-6),
        );
    }
}
