//! Layer normalisation: one fused operation on the CPU backend ([`cpu`]), burn's `LayerNorm` on
//! GPU backends (its kernels are not where a WebGPU step's time goes).

pub mod cpu;

use burn::nn::LayerNorm;
use burn::tensor::Tensor;

/// The ε every layer norm of the model is built with: burn's and PyTorch's default.
/// (burn's `LayerNorm` keeps its ε private, so the fused path is told it here.)
pub const EPSILON: f64 = 1e-5;

/// `norm.forward(x)`, through [`cpu::fused_layer_norm`] on the CPU backend. `norm` must have
/// been built with [`EPSILON`] and a shift (`beta`); one without a shift takes burn's path.
///
/// # Shapes
/// - x, output: `[batch, tokens, width]`
pub fn layer_norm(norm: &LayerNorm, x: Tensor<3>) -> Tensor<3> {
    match &norm.beta {
        Some(beta) if super::on_cpu(&x) => cpu::fused_layer_norm(x, norm.gamma.val(), beta.val(), EPSILON),
        _ => norm.forward(x),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::assert_matches_burns;
    use burn::module::Param;
    use burn::nn::LayerNormConfig;
    use burn::tensor::{Device, Distribution, Tolerance};

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
        let beta = norm.beta.as_ref().unwrap();
        assert_matches_burns(
            layer_norm(&norm, x.clone()),
            norm.forward(x.clone()),
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
}
