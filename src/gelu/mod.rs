//! GELU (`x·Φ(x)`, the exact form PyTorch's `nn.GELU()` computes) with an erf that vectorises.
//!
//! burn's CPU backend evaluates GELU's erf with scalar `libm::erff`, one call per element, and
//! its backward with `erff` and `expf`: natively the forward alone took four times the largest
//! matrix product of a step. [`values`] computes the same function from a rational erf and a
//! polynomial exp, plain arithmetic that the compiler turns into SIMD (AVX-512 or AVX2 natively
//! through `widest_simd!`, simd128 in wasm), split over the cores natively. Registered as a backend extension with its own backward
//! pass; on GPU backends it is burn's kernel.

mod autodiff;
pub mod values;

use crate::{cpu_tensor, parallel};
use burn::backend::ops::ActivationOps;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, DType, Dispatch, Flex, TensorMetadata, backend_extension};
use burn::tensor::Tensor;

/// GELU and its derivative as backend operations.
#[backend_extension(Cube: cfg(any(target_family = "wasm", feature = "wgpu")), Flex, Autodiff)]
pub trait ExactGelu: Backend {
    /// `x·Φ(x)`.
    fn exact_gelu(x: FloatTensor<Self>) -> FloatTensor<Self>;
    /// `grad · (Φ(x) + x·φ(x))`: the gradient through [`ExactGelu::exact_gelu`] at `x`.
    fn exact_gelu_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self>;
}

impl ExactGelu for Flex {
    fn exact_gelu(x: FloatTensor<Self>) -> FloatTensor<Self> {
        if x.dtype() != DType::F32 {
            return Self::gelu(x);
        }
        let x = cpu_tensor::contiguous(x);
        let input = cpu_tensor::values(&x);
        let mut out = vec![0.0; input.len()];
        let block = parallel::block_len(input.len());
        parallel::for_each(input.chunks(block).zip(out.chunks_mut(block)), |(input, out)| {
            values::gelu(input, out)
        });
        cpu_tensor::from_values(out, x.shape())
    }

    fn exact_gelu_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        if x.dtype() != DType::F32 || grad.dtype() != DType::F32 || x.shape() != grad.shape() {
            return Self::gelu_backward(x, grad);
        }
        let (x, grad) = (cpu_tensor::contiguous(x), cpu_tensor::contiguous(grad));
        let (input, grad) = (cpu_tensor::values(&x), cpu_tensor::values(&grad));
        let mut out = vec![0.0; input.len()];
        let block = parallel::block_len(input.len());
        let blocks = input.chunks(block).zip(grad.chunks(block)).zip(out.chunks_mut(block));
        parallel::for_each(blocks, |((input, grad), out)| values::gelu_backward(input, grad, out));
        cpu_tensor::from_values(out, x.shape())
    }
}

#[cfg(any(target_family = "wasm", feature = "wgpu"))]
impl ExactGelu for burn::backend::Cube {
    fn exact_gelu(x: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::gelu(x)
    }

    fn exact_gelu_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::gelu_backward(x, grad)
    }
}

/// GELU through [`ExactGelu`].
pub fn gelu<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    Tensor::from_dispatch(<Dispatch as ExactGelu>::exact_gelu(x.into_dispatch()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::{Device, Distribution};

    /// Values and gradient match burn's GELU (libm's erf), so the extension and its backward
    /// are wired right.
    #[test]
    fn gelu_and_its_gradient_match_burns() {
        let device = Device::flex().autodiff();
        let x = Tensor::<3>::random([2, 65, 40], Distribution::Normal(0.0, 3.0), &device)
            .require_grad();
        let weights = Tensor::<3>::random([2, 65, 40], Distribution::Normal(0.0, 1.0), &device);

        let ours = gelu(x.clone());
        let ours_grad = x.grad(&(ours.clone() * weights.clone()).sum().backward()).unwrap();
        let burns = burn::tensor::activation::gelu(x.clone());
        let burns_grad = x.grad(&(burns.clone() * weights).sum().backward()).unwrap();

        let tolerance = burn::tensor::Tolerance::absolute(2e-6);
        ours.into_data().assert_approx_eq::<f32>(&burns.into_data(), tolerance);
        ours_grad.into_data().assert_approx_eq::<f32>(&burns_grad.into_data(), tolerance);
    }
}
