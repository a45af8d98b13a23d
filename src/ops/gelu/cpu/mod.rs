//! GELU on the CPU backend with an erf that vectorises.
//!
//! burn's CPU backend evaluates GELU's erf with scalar `libm::erff`, one call per element, and
//! its backward with `erff` and `expf`: natively the forward alone took four times the largest
//! matrix product of a step. [`values`] computes the same function from a rational erf and a
//! polynomial exp, plain arithmetic that the compiler turns into SIMD (AVX-512 or AVX2 natively
//! through `widest_simd!`, simd128 in wasm), split over the cores natively.

pub mod values;

use super::ExactGelu;
use crate::ops::cpu::{parallel, tensor as cpu_tensor};
use burn::backend::ops::ActivationOps;
use burn::backend::tensor::FloatTensor;
use burn::backend::{DType, Flex, TensorMetadata};

impl ExactGelu for Flex {
    fn exact_gelu(x: FloatTensor<Self>) -> FloatTensor<Self> {
        if x.dtype() != DType::F32 {
            return Self::gelu(x);
        }
        let x = cpu_tensor::contiguous(x);
        let input = cpu_tensor::values(&x);
        let mut out = cpu_tensor::zeros(input.len());
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
        let mut out = cpu_tensor::zeros(input.len());
        let block = parallel::block_len(input.len());
        let blocks = input.chunks(block).zip(grad.chunks(block)).zip(out.chunks_mut(block));
        parallel::for_each(blocks, |((input, grad), out)| values::gelu_backward(input, grad, out));
        cpu_tensor::from_values(out, x.shape())
    }
}
