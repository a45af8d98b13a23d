//! Layer normalisation as one operation, [`FusedLayerNorm`], with its own backward pass
//! ([`autodiff`]): one pass per row each way on the CPU backend ([`cpu`]); on a GPU one
//! invocation per row each way, the scale's and shift's gradients summed over the batch's rows
//! in two passes ([`webgpu`]). burn's `LayerNorm` differentiates the composition it is built
//! from, about twenty passes (and launches) per normalisation.

mod autodiff;
pub mod cpu;
#[cfg(gpu)]
pub mod webgpu;

use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, Dispatch, backend_extension};
use burn::nn::LayerNorm;
use burn::tensor::Tensor;

/// Layer normalisation with a scale and a shift as a backend operation.
#[backend_extension(Cube: cfg(gpu), Flex, Autodiff)]
pub trait FusedLayerNorm: Backend {
    /// Every `every`-th row of `x [rows · every, width]` (from the first; `every` = 1: each
    /// row) normalised, times `gamma [width]`, plus `beta [width]`: `[rows, width]`.
    fn fused_layer_norm(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        epsilon: f64,
        every: usize,
    ) -> FloatTensor<Self>;
    /// `(∂x, ∂gamma, ∂beta)` from `∂out [rows, width]`, `∂x` zero on the rows not normalised.
    fn fused_layer_norm_backward(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        epsilon: f64,
        every: usize,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>);
}

/// The ε every layer norm of the model is built with: burn's and PyTorch's default.
/// (burn's `LayerNorm` keeps its ε private, so the fused path is told it here.)
pub const EPSILON: f64 = 1e-5;

/// `norm.forward(x)` through [`FusedLayerNorm`]. `norm` must have been built with [`EPSILON`] and
/// a shift (`beta`); one without a shift, and on a GPU a width the kernels' vec4 loads do not fit,
/// takes burn's path.
///
/// # Shapes
/// - x, output: `[batch, tokens, width]`
pub fn layer_norm(norm: &LayerNorm, x: Tensor<3>) -> Tensor<3> {
    let [batch, tokens, width] = x.dims();
    match fused_parameters(norm, &x) {
        Some((gamma, beta)) => every_nth_row_normalised(x, gamma, beta, 1).reshape([batch, tokens, width]),
        None => norm.forward(x),
    }
}

/// `norm` applied to each image's first token alone ([CLS]): the same as
/// `layer_norm(norm, x.narrow(1, 0, 1))`, with the rows read where they lie. A narrow would copy
/// them out first, and its backward pass fill a gradient of zeros and assign theirs into it (on
/// a GPU three launches; here the normalisation's backward writes the zeros).
///
/// # Shapes
/// - x: `[batch, tokens, width]`
/// - output: `[batch, 1, width]`
pub fn first_token_layer_norm(norm: &LayerNorm, x: Tensor<3>) -> Tensor<3> {
    let [batch, tokens, width] = x.dims();
    match fused_parameters(norm, &x) {
        Some((gamma, beta)) => every_nth_row_normalised(x, gamma, beta, tokens).reshape([batch, 1, width]),
        None => norm.forward(x.narrow(1, 0, 1)),
    }
}

/// `norm`'s scale and shift where [`FusedLayerNorm`] takes `x`: a norm with a shift, on the CPU
/// or at a width the GPU kernels fit.
fn fused_parameters(norm: &LayerNorm, x: &Tensor<3>) -> Option<(Tensor<1>, Tensor<1>)> {
    let beta = norm.beta.as_ref()?;
    (super::on_cpu(x) || fits_gpu(x.dims()[2])).then(|| (norm.gamma.val(), beta.val()))
}

/// Whether the GPU kernels take rows of `width` (vec4 loads, a workgroup of column quads).
fn fits_gpu(width: usize) -> bool {
    width.is_multiple_of(4) && width <= 1024
}

/// Every `every`-th row of `x`'s `batch · tokens` rows normalised with [`EPSILON`], times
/// `gamma`, plus `beta`, through [`FusedLayerNorm`].
///
/// # Shapes
/// - x: `[batch, tokens, width]`; gamma, beta: `[width]`
/// - output: `[batch · tokens / every, width]`
fn every_nth_row_normalised(x: Tensor<3>, gamma: Tensor<1>, beta: Tensor<1>, every: usize) -> Tensor<2> {
    let [batch, tokens, width] = x.dims();
    let rows = x.reshape([batch * tokens, width]).into_dispatch();
    let out = <Dispatch as FusedLayerNorm>::fused_layer_norm(rows, gamma.into_dispatch(), beta.into_dispatch(), EPSILON, every);
    Tensor::<2>::from_dispatch(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::assert_matches_burns;
    use burn::module::Param;
    use burn::nn::LayerNormConfig;
    use burn::tensor::{Device, Distribution, Tolerance};

    /// `ours` against `burns` on `x` of `shape` through a norm of width 6 whose scale and shift
    /// are away from the initial ones and zeros (so a swapped gamma and beta would show): the
    /// output, and the input's, the scale's and the shift's gradients.
    fn assert_norm_matches_burns(
        shape: [usize; 3],
        ours: impl Fn(&LayerNorm, Tensor<3>) -> Tensor<3>,
        burns: impl Fn(&LayerNorm, Tensor<3>) -> Tensor<3>,
    ) {
        let device = Device::flex().autodiff();
        let mut norm = LayerNormConfig::new(shape[2]).with_epsilon(EPSILON).init(&device);
        let random = || Tensor::<1>::random([shape[2]], Distribution::Normal(0.0, 1.0), &device);
        norm.gamma = Param::from_tensor(random());
        norm.beta = Some(Param::from_tensor(random()));
        let x = Tensor::<3>::random(shape, Distribution::Normal(1.0, 2.0), &device).require_grad();
        let beta = norm.beta.as_ref().unwrap();
        assert_matches_burns(
            ours(&norm, x.clone()),
            burns(&norm, x.clone()),
            |grads| {
                vec![
                    x.grad(grads).unwrap().into_data(),
                    norm.gamma.grad(grads).unwrap().into_data(),
                    beta.grad(grads).unwrap().into_data(),
                ]
            },
            Tolerance::absolute(1e-5),
        );
    }

    /// Output and the three gradients match burn's `LayerNorm`.
    #[test]
    fn fused_layer_norm_matches_burns() {
        assert_norm_matches_burns([2, 4, 6], layer_norm, |norm, x| norm.forward(x));
    }

    /// Each image's first token normalised alone is the narrow then the norm: the output, the
    /// input's gradient (zero off the first tokens) and the scale's and shift's.
    #[test]
    fn first_token_layer_norm_is_the_narrowed_norm() {
        assert_norm_matches_burns([3, 5, 6], first_token_layer_norm, |norm, x| norm.forward(x.narrow(1, 0, 1)));
    }
}
