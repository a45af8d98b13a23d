//! Layer normalisation as one operation on the CPU backend.
//!
//! burn's autodiff differentiates `layer_norm` as the composition it is built from (mean,
//! subtract, square, mean, root, divide, scale, shift), so each of a step's nine
//! normalisations cost about twenty full passes over the activations, each single-threaded.
//! [`kernels`] normalises in one pass per row and differentiates in one more ([`autodiff`]),
//! over blocks of rows on separate cores.

mod autodiff;
pub mod kernels;

use crate::ops::cpu::tensor as cpu_tensor;
use burn::backend::flex::FlexTensor;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, Dispatch, Flex, TensorMetadata, backend_extension};
use burn::tensor::Tensor;
use kernels::NormShape;

/// Layer normalisation with a scale and a shift as a backend operation (CPU backend only).
#[backend_extension(Flex, Autodiff)]
pub trait FusedLayerNorm: Backend {
    /// `x [rows, width]` normalised per row, times `gamma [width]`, plus `beta [width]`.
    fn fused_layer_norm(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        epsilon: f64,
    ) -> FloatTensor<Self>;
    /// `(∂x, ∂gamma, ∂beta)` from `∂out`.
    fn fused_layer_norm_backward(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        epsilon: f64,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>);
}

impl FusedLayerNorm for Flex {
    fn fused_layer_norm(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        epsilon: f64,
    ) -> FloatTensor<Self> {
        let shape = norm_shape(&x, epsilon);
        let (x, gamma, beta) = (
            cpu_tensor::contiguous(x),
            cpu_tensor::contiguous(gamma),
            cpu_tensor::contiguous(beta),
        );
        let mut out = cpu_tensor::zeros(shape.rows * shape.width);
        kernels::forward(
            shape,
            cpu_tensor::values(&x),
            cpu_tensor::values(&gamma),
            cpu_tensor::values(&beta),
            &mut out,
        );
        cpu_tensor::from_values(out, [shape.rows, shape.width])
    }

    fn fused_layer_norm_backward(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        epsilon: f64,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        let shape = norm_shape(&x, epsilon);
        let (x, gamma, grad) = (
            cpu_tensor::contiguous(x),
            cpu_tensor::contiguous(gamma),
            cpu_tensor::contiguous(grad),
        );
        let mut grad_x = cpu_tensor::zeros(shape.rows * shape.width);
        let (mut grad_gamma, mut grad_beta) = (vec![0.0; shape.width], vec![0.0; shape.width]);
        kernels::backward(
            shape,
            cpu_tensor::values(&x),
            cpu_tensor::values(&gamma),
            cpu_tensor::values(&grad),
            &mut grad_x,
            &mut grad_gamma,
            &mut grad_beta,
        );
        (
            cpu_tensor::from_values(grad_x, [shape.rows, shape.width]),
            cpu_tensor::from_values(grad_gamma, [shape.width]),
            cpu_tensor::from_values(grad_beta, [shape.width]),
        )
    }
}

fn norm_shape(x: &FlexTensor, epsilon: f64) -> NormShape {
    let dims = x.shape();
    assert_eq!(dims.num_dims(), 2, "a layer norm's input is [rows, width]");
    NormShape { rows: dims[0], width: dims[1], epsilon: epsilon as f32 }
}

/// `x` normalised per row, times `gamma`, plus `beta`, through [`FusedLayerNorm`].
///
/// # Shapes
/// - x, output: `[batch, tokens, width]`; gamma, beta: `[width]`
pub fn fused_layer_norm(x: Tensor<3>, gamma: Tensor<1>, beta: Tensor<1>, epsilon: f64) -> Tensor<3> {
    let [batch, tokens, width] = x.dims();
    let rows = x.reshape([batch * tokens, width]).into_dispatch();
    let out = <Dispatch as FusedLayerNorm>::fused_layer_norm(rows, gamma.into_dispatch(), beta.into_dispatch(), epsilon);
    Tensor::<2>::from_dispatch(out).reshape([batch, tokens, width])
}
