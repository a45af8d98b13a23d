//! Dense layers (`x·W + b`) and the attention's per-head products.
//!
//! A dense layer is one backend operation, [`DenseLinear`], over every token of the batch as the
//! rows of one product, with its own backward pass ([`autodiff`]): on the CPU backend a `gemm`
//! per thread's block of rows ([`cpu`]), on a GPU the WGSL products of [`webgpu`], whose
//! weight and bias gradients come out of one product split over the batch's rows.

mod autodiff;
pub mod cpu;
pub mod webgpu;

pub use webgpu::blocked_matmul;

use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, Dispatch, backend_extension};
use burn::module::Param;
use burn::nn::{Dropout, Linear};
use burn::tensor::Tensor;

/// A dense layer with a bias as a backend operation.
#[backend_extension(Cube: cfg(gpu), Flex, Autodiff)]
pub trait DenseLinear: Backend {
    /// `x [rows, inputs] · weight [inputs, outputs] + bias [outputs]`.
    fn dense_linear(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> FloatTensor<Self>;
    /// `x · weight + bias + residual [rows, outputs]`: a residual connection added as the product
    /// is written, where a backend can (on a GPU a launch fewer than adding it after).
    fn dense_linear_residual(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        residual: FloatTensor<Self>,
    ) -> FloatTensor<Self>;
    /// `gelu(x · weight + bias)`, for inference: GELU applied as the product is written, where
    /// a backend can (on a GPU a launch fewer than after it). A pass that takes gradients gets
    /// the two operations, since GELU's backward pass needs the values before it.
    fn dense_linear_gelu(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> FloatTensor<Self>;
    /// `(x·weight + bias, gelu(x·weight + bias))`: an MLP's first layer in training, keeping
    /// GELU's input for the backward pass (on a GPU one launch writing both).
    fn dense_linear_gelu_keeping(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> (FloatTensor<Self>, FloatTensor<Self>);
    /// `residual + gelu(x·w_in + b_in)·w_out + b_out`, an encoder block's MLP without dropout, as
    /// one operation: on a GPU two launches forward and, backward, the gradient through GELU
    /// applied by the product that makes it ([`DenseLinear::dense_input_gradient_gelu`]). Without
    /// gradients it is the two layers in turn; the autodiff backend overrides it.
    fn dense_mlp_residual(
        x: FloatTensor<Self>,
        w_in: FloatTensor<Self>,
        b_in: FloatTensor<Self>,
        w_out: FloatTensor<Self>,
        b_out: FloatTensor<Self>,
        residual: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        Self::dense_linear_residual(Self::dense_linear_gelu(x, w_in, b_in), w_out, b_out, residual)
    }
    /// `(∂out·Wᵀ) ⊙ gelu'(pre)`: the gradient through a dense layer and the GELU before it.
    fn dense_input_gradient_gelu(
        grad: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        pre: FloatTensor<Self>,
    ) -> FloatTensor<Self>;
    /// `∂out·Wᵀ`.
    fn dense_input_gradient(
        grad: FloatTensor<Self>,
        weight: FloatTensor<Self>,
    ) -> FloatTensor<Self>;
    /// `xᵀ·∂out`.
    fn dense_weight_gradient(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self>;
    /// `Σ_rows ∂out`.
    fn dense_bias_gradient(grad: FloatTensor<Self>) -> FloatTensor<Self>;
    /// `(xᵀ·∂out, Σ_rows ∂out)`: both sums over the rows at once where a backend can.
    fn dense_parameter_gradients(
        x: FloatTensor<Self>,
        grad: FloatTensor<Self>,
    ) -> (FloatTensor<Self>, FloatTensor<Self>);
}

/// `layer.forward(input)` through [`DenseLinear`], the tokens of every image as rows of one
/// product. A layer without a bias takes burn's path.
///
/// # Shapes
/// - input: `[batch, tokens, inputs]`
/// - output: `[batch, tokens, outputs]`
pub fn linear(layer: &Linear, input: Tensor<3>) -> Tensor<3> {
    dense_linear(layer, input)
}

/// `gelu(layer.forward(input))`, an MLP's first layer, through [`DenseLinear::dense_linear_gelu`].
/// A layer without a bias takes burn's product and the page's GELU.
///
/// # Shapes
/// - input: `[batch, tokens, inputs]`
/// - output: `[batch, tokens, outputs]`
pub fn linear_gelu(layer: &Linear, input: Tensor<3>) -> Tensor<3> {
    let Some(bias) = &layer.bias else { return super::gelu(layer.forward(input)) };
    let [batch, tokens, inputs] = input.dims();
    let weight = layer.weight.val();
    let outputs = weight.dims()[1];
    let out = <Dispatch as DenseLinear>::dense_linear_gelu(
        input.reshape([batch * tokens, inputs]).into_dispatch(),
        weight.into_dispatch(),
        bias.val().into_dispatch(),
    );
    Tensor::<2>::from_dispatch(out).reshape([batch, tokens, outputs])
}

/// `residual + dropout(mlp_out(dropout(gelu(mlp_in(input)))))`, an encoder block's MLP branch. On
/// a GPU, where no dropout is drawn and both layers have biases, one [`DenseLinear`] operation:
/// two products forward (GELU, and then the residual, added as they write) and, backward, GELU's
/// gradient applied by the product that makes it, two launches fewer than three operations. On
/// the CPU there is no launch to save, and the operations stay the ones they were.
///
/// # Shapes
/// - input: `[batch, tokens, inputs]`; residual: `[batch, tokens, outputs]`
/// - output: `[batch, tokens, outputs]`
pub fn mlp_residual(mlp_in: &Linear, mlp_out: &Linear, input: Tensor<3>, residual: Tensor<3>, dropout: &Dropout) -> Tensor<3> {
    let biases = match (&mlp_in.bias, &mlp_out.bias) {
        (Some(b_in), Some(b_out)) if !super::on_cpu(&input) && super::dropout::is_identity(dropout, &input.device()) => (b_in, b_out),
        _ => return linear_residual(mlp_out, super::dropout(linear_gelu(mlp_in, input), dropout), residual, dropout),
    };
    mlp_residual_operation(mlp_in, mlp_out, biases, input, residual)
}

/// [`mlp_residual`]'s operation on any backend (the CPU backend's too, to test its backward
/// pass natively).
fn mlp_residual_operation(mlp_in: &Linear, mlp_out: &Linear, (b_in, b_out): (&Param<Tensor<1>>, &Param<Tensor<1>>), input: Tensor<3>, residual: Tensor<3>) -> Tensor<3> {
    let [batch, tokens, inputs] = input.dims();
    let outputs = mlp_out.weight.dims()[1];
    let out = <Dispatch as DenseLinear>::dense_mlp_residual(
        input.reshape([batch * tokens, inputs]).into_dispatch(),
        mlp_in.weight.val().into_dispatch(),
        b_in.val().into_dispatch(),
        mlp_out.weight.val().into_dispatch(),
        b_out.val().into_dispatch(),
        residual.reshape([batch * tokens, outputs]).into_dispatch(),
    );
    Tensor::<2>::from_dispatch(out).reshape([batch, tokens, outputs])
}

/// `residual + dropout(layer.forward(input))`, the end of an encoder block's branch. On a GPU,
/// where the dropout is the identity (inference, or no dropout) and the layer has a bias, one
/// [`DenseLinear`] operation that adds the residual as it writes the product: a launch fewer. On
/// the CPU backend there is no launch to save, and the sum stays the operation it was.
///
/// # Shapes
/// - input: `[batch, tokens, inputs]`; residual: `[batch, tokens, outputs]`
/// - output: `[batch, tokens, outputs]`
pub fn linear_residual(layer: &Linear, input: Tensor<3>, residual: Tensor<3>, dropout: &Dropout) -> Tensor<3> {
    let bias = match &layer.bias {
        Some(bias) if !super::on_cpu(&input) && super::dropout::is_identity(dropout, &input.device()) => bias,
        _ => return residual + super::dropout(dense_linear(layer, input), dropout),
    };
    let [batch, tokens, inputs] = input.dims();
    let weight = layer.weight.val();
    let outputs = weight.dims()[1];
    let out = <Dispatch as DenseLinear>::dense_linear_residual(
        input.reshape([batch * tokens, inputs]).into_dispatch(),
        weight.into_dispatch(),
        bias.val().into_dispatch(),
        residual.reshape([batch * tokens, outputs]).into_dispatch(),
    );
    Tensor::<2>::from_dispatch(out).reshape([batch, tokens, outputs])
}

/// `x · weight + bias` through [`DenseLinear`], for a weight that is no `Linear`'s (the patch
/// embedding's, on a GPU).
///
/// # Shapes
/// - x: `[rows, inputs]`; weight: `[inputs, outputs]`; bias: `[outputs]`
/// - output: `[rows, outputs]`
pub fn dense(x: Tensor<2>, weight: Tensor<2>, bias: Tensor<1>) -> Tensor<2> {
    Tensor::from_dispatch(<Dispatch as DenseLinear>::dense_linear(
        x.into_dispatch(),
        weight.into_dispatch(),
        bias.into_dispatch(),
    ))
}

/// [`linear`]'s operation, on either backend.
pub fn dense_linear(layer: &Linear, input: Tensor<3>) -> Tensor<3> {
    let Some(bias) = &layer.bias else { return layer.forward(input) };
    let [batch, tokens, inputs] = input.dims();
    let weight = layer.weight.val();
    let outputs = weight.dims()[1];
    let rows = input.reshape([batch * tokens, inputs]);
    let out = <Dispatch as DenseLinear>::dense_linear(
        rows.into_dispatch(),
        weight.into_dispatch(),
        bias.val().into_dispatch(),
    );
    Tensor::<2>::from_dispatch(out).reshape([batch, tokens, outputs])
}

/// `lhs.matmul(rhs)` over `[batch, heads]`: burn's matmul on the CPU, [`blocked_matmul`] on a
/// GPU.
///
/// # Shapes
/// - lhs: `[batch, heads, m, k]`, rhs: `[batch, heads, k, n]`
/// - output: `[batch, heads, m, n]`
pub fn heads_matmul(lhs: Tensor<4>, rhs: Tensor<4>) -> Tensor<4> {
    if super::on_cpu(&lhs) {
        return lhs.matmul(rhs);
    }
    let [batch, heads, m, k] = lhs.dims();
    let n = rhs.dims()[3];
    blocked_matmul(lhs.reshape([batch * heads, m, k]), rhs.reshape([batch * heads, k, n]))
        .reshape([batch, heads, m, n])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::assert_matches_burns;
    use burn::nn::LinearConfig;
    use burn::tensor::{Device, Distribution, Tolerance};

    /// The MLP as one operation, here on the CPU backend (where the model keeps three), against
    /// burn's `Linear`s and GELU: the output and all six gradients, so its backward pass is wired
    /// right wherever it runs.
    #[test]
    fn the_mlp_operation_and_its_gradients_match_burns() {
        let device = Device::flex().autodiff();
        device.seed(3);
        let (mlp_in, mlp_out) = (LinearConfig::new(12, 20).init(&device), LinearConfig::new(20, 12).init(&device));
        let random = |shape: [usize; 3]| Tensor::<3>::random(shape, Distribution::Normal(0.0, 1.0), &device).require_grad();
        let (x, residual) = (random([2, 5, 12]), random([2, 5, 12]));
        let biases = (mlp_in.bias.as_ref().unwrap(), mlp_out.bias.as_ref().unwrap());
        assert_matches_burns(
            mlp_residual_operation(&mlp_in, &mlp_out, biases, x.clone(), residual.clone()),
            residual.clone() + mlp_out.forward(burn::tensor::activation::gelu(mlp_in.forward(x.clone()))),
            |grads| {
                let bias = |layer: &Linear| layer.bias.as_ref().unwrap().grad(grads).unwrap().into_data();
                vec![
                    x.grad(grads).unwrap().into_data(),
                    residual.grad(grads).unwrap().into_data(),
                    mlp_in.weight.grad(grads).unwrap().into_data(),
                    bias(&mlp_in),
                    mlp_out.weight.grad(grads).unwrap().into_data(),
                    bias(&mlp_out),
                ]
            },
            Tolerance::absolute(1e-5),
        );
    }
}
