//! Layer normalisation as one operation on the CPU backend.
//!
//! burn's autodiff differentiates `layer_norm` as the composition it is built from (mean,
//! subtract, square, mean, root, divide, scale, shift), so each of a step's nine
//! normalisations cost about twenty full passes over the activations, each single-threaded.
//! [`kernels`] normalises in one pass per row and differentiates in one more, over blocks of
//! rows on separate cores. GPU backends keep burn's `LayerNorm`.

mod autodiff;
pub mod kernels;

use crate::cpu_tensor;
use burn::backend::flex::FlexTensor;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, Dispatch, Flex, TensorMetadata, backend_extension};
use burn::nn::LayerNorm;
use burn::tensor::Tensor;
use kernels::NormShape;

/// The ε every layer norm of the model is built with: burn's and PyTorch's default.
/// (burn's `LayerNorm` keeps its ε private, so the fused path is told it here.)
pub const EPSILON: f64 = 1e-5;

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
        let mut out = vec![0.0; shape.rows * shape.width];
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
        let mut grad_x = vec![0.0; shape.rows * shape.width];
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

/// `norm.forward(x)`, through [`FusedLayerNorm`] on the CPU backend. `norm` must have been built
/// with [`EPSILON`] and a shift (`beta`); one without a shift takes burn's path.
///
/// # Shapes
/// - x, output: `[batch, tokens, width]`
pub fn layer_norm(norm: &LayerNorm, x: Tensor<3>) -> Tensor<3> {
    let on_cpu = cpu_tensor::is_on_cpu(&x);
    let Some(beta) = norm.beta.as_ref().filter(|_| on_cpu) else { return norm.forward(x) };
    let [batch, tokens, width] = x.dims();
    let rows = x.reshape([batch * tokens, width]).into_dispatch();
    let out = <Dispatch as FusedLayerNorm>::fused_layer_norm(
        rows,
        norm.gamma.val().into_dispatch(),
        beta.val().into_dispatch(),
        EPSILON,
    );
    Tensor::<2>::from_dispatch(out).reshape([batch, tokens, width])
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::module::Param;
    use burn::nn::LayerNormConfig;
    use burn::tensor::{Device, Distribution};

    /// Output and the three gradients match burn's `LayerNorm`.
    #[test]
    fn fused_layer_norm_matches_burns() {
        let device = Device::flex().autodiff();
        let mut norm = LayerNormConfig::new(6).with_epsilon(EPSILON).init(&device);
        // Away from the initial ones and zeros, so a swapped gamma and beta would show.
        let random = || Tensor::<1>::random([6], Distribution::Normal(0.0, 1.0), &device);
        norm.gamma = Param::from_tensor(random());
        norm.beta = Some(Param::from_tensor(random()));
        let x =
            Tensor::<3>::random([2, 4, 6], Distribution::Normal(1.0, 2.0), &device).require_grad();
        let upstream = Tensor::<3>::random([2, 4, 6], Distribution::Normal(0.0, 1.0), &device);

        let ours = layer_norm(&norm, x.clone());
        let ours_grads = (ours.clone() * upstream.clone()).sum().backward();
        let burns = norm.forward(x.clone());
        let burns_grads = (burns.clone() * upstream).sum().backward();

        let tolerance = burn::tensor::Tolerance::absolute(1e-5);
        let beta = norm.beta.as_ref().unwrap();
        ours.into_data().assert_approx_eq::<f32>(&burns.into_data(), tolerance);
        for (ours, burns) in [
            (x.grad(&ours_grads).unwrap().into_data(), x.grad(&burns_grads).unwrap().into_data()),
            (
                norm.gamma.grad(&ours_grads).unwrap().into_data(),
                norm.gamma.grad(&burns_grads).unwrap().into_data(),
            ),
            (
                beta.grad(&ours_grads).unwrap().into_data(),
                beta.grad(&burns_grads).unwrap().into_data(),
            ),
        ] {
            ours.assert_approx_eq::<f32>(&burns, tolerance);
        }
    }
}
