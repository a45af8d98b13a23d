//! Layer normalisation as one operation on the CPU backend.
//!
//! burn's autodiff differentiates `layer_norm` as the composition it is built from (mean,
//! subtract, square, mean, root, divide, scale, shift), so each of a step's nine
//! normalisations cost about twenty full passes over the activations, each single-threaded.
//! [`kernels`] normalises in one pass per row and differentiates in one more ([`autodiff`]),
//! over blocks of rows on separate cores.
//!
//! ([`super::FusedLayerNorm`]'s CPU implementation.)

pub mod kernels;

use super::FusedLayerNorm;
use crate::ops::cpu::tensor as cpu_tensor;
use burn::backend::flex::FlexTensor;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Flex, TensorMetadata};
use kernels::NormShape;

impl FusedLayerNorm for Flex {
    fn fused_layer_norm(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        epsilon: f64,
        every: usize,
    ) -> FloatTensor<Self> {
        let shape = norm_shape(&x, epsilon, every);
        let (x, gamma, beta) = (
            cpu_tensor::contiguous(x),
            cpu_tensor::contiguous(gamma),
            cpu_tensor::contiguous(beta),
        );
        let mut out = cpu_tensor::zeros(shape.rows * shape.width);
        let x = every_nth_row(cpu_tensor::values(&x), shape.width, every);
        kernels::forward(shape, &x, cpu_tensor::values(&gamma), cpu_tensor::values(&beta), &mut out);
        cpu_tensor::from_values(out, [shape.rows, shape.width])
    }

    fn fused_layer_norm_backward(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        epsilon: f64,
        every: usize,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        let shape = norm_shape(&x, epsilon, every);
        let (x, gamma, grad) = (
            cpu_tensor::contiguous(x),
            cpu_tensor::contiguous(gamma),
            cpu_tensor::contiguous(grad),
        );
        let mut grad_x = cpu_tensor::zeros(shape.rows * shape.width);
        let (mut grad_gamma, mut grad_beta) = (vec![0.0; shape.width], vec![0.0; shape.width]);
        kernels::backward(
            shape,
            &every_nth_row(cpu_tensor::values(&x), shape.width, every),
            cpu_tensor::values(&gamma),
            cpu_tensor::values(&grad),
            &mut grad_x,
            &mut grad_gamma,
            &mut grad_beta,
        );
        if every > 1 {
            // The rows between the normalised ones had no part in the output.
            let mut spread = cpu_tensor::zeros(shape.rows * every * shape.width);
            for (row, values) in grad_x.chunks(shape.width).enumerate() {
                let at = row * every * shape.width;
                spread[at..at + shape.width].copy_from_slice(values);
            }
            grad_x = spread;
        }
        (
            cpu_tensor::from_values(grad_x, [shape.rows * every, shape.width]),
            cpu_tensor::from_values(grad_gamma, [shape.width]),
            cpu_tensor::from_values(grad_beta, [shape.width]),
        )
    }
}

/// The shape of the rows normalised: every `every`-th of `x`'s.
fn norm_shape(x: &FlexTensor, epsilon: f64, every: usize) -> NormShape {
    let dims = x.shape();
    assert_eq!(dims.num_dims(), 2, "a layer norm's input is [rows, width]");
    assert!(every > 0 && dims[0].is_multiple_of(every), "{} rows in groups of {every}", dims[0]);
    NormShape { rows: dims[0] / every, width: dims[1], epsilon: epsilon as f32 }
}

/// Every `every`-th row of `values` (rows of `width`), borrowed where that is all of them.
fn every_nth_row(values: &[f32], width: usize, every: usize) -> std::borrow::Cow<'_, [f32]> {
    if every == 1 {
        return values.into();
    }
    values.chunks(width).step_by(every).flatten().copied().collect::<Vec<_>>().into()
}
