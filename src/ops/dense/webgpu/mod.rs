//! The dense layers' products on a GPU ([`product`]), and a batched matrix product for the
//! attention composed from burn's operations (which the `small` preset's attention dropout takes).
//!
//! burn's stock WebGPU matmul is slow on SwiftShader (WebGPU on the CPU) inside Chromium, and
//! serial where a weight's gradient sums over every token of the batch; [`product`] launches a
//! kernel of the family that fits the adapter (tiles in workgroup memory on a GPU, 4×4 register
//! blocks on a software renderer) and splits such sums across the GPU.

mod autodiff;
#[cfg(gpu)]
mod cube;
#[cfg(gpu)]
pub mod product;

use burn::backend::ops::FloatTensorOps;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, Dispatch, Flex, backend_extension};
use burn::tensor::Tensor;

/// A batched matrix product `lhs [batch, m, k] · rhs [batch, k, n] → [batch, m, n]`, run by
/// [`product`] on a GPU.
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
}
