//! A dense layer as one operation on the CPU backend: `x·W + b` over all the batch's tokens in
//! one product, with a backward pass of three products.
//!
//! burn's `Linear` on a `[batch, tokens, inputs]` input runs one small product per image
//! against the broadcast weight, a separate pass to add the bias, and allocates each output
//! zeroed and then copied to realign it. Here each of the forward and backward products is one
//! `gemm` call per thread's block of rows on flat row-major buffers, and the bias is the forward
//! product's starting value.

pub mod kernels;

use super::DenseLinear;
use crate::ops::gelu::ExactGelu;
use crate::ops::cpu::tensor as cpu_tensor;
use burn::backend::flex::FlexTensor;
use burn::backend::tensor::FloatTensor;
use burn::backend::ops::FloatTensorOps;
use burn::backend::{Flex, TensorMetadata};
use kernels::DenseShape;

impl DenseLinear for Flex {
    fn dense_linear(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        let shape = dense_shape(&x, weight.shape()[1]);
        let (x, weight, bias) = (
            cpu_tensor::contiguous(x),
            cpu_tensor::contiguous(weight),
            cpu_tensor::contiguous(bias),
        );
        let out = kernels::forward(
            shape,
            cpu_tensor::values(&x),
            cpu_tensor::values(&weight),
            cpu_tensor::values(&bias),
        );
        cpu_tensor::from_values(out, [shape.rows, shape.outputs])
    }

    /// The product, then the residual added: what the trait asks. The model does not reach it,
    /// since [`super::linear_residual`] keeps the sum a separate operation on the CPU.
    fn dense_linear_residual(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        residual: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        Self::float_add(Self::dense_linear(x, weight, bias), residual)
    }

    /// The product, then GELU: on the CPU there is no launch to save.
    fn dense_linear_gelu(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        Self::exact_gelu(Self::dense_linear(x, weight, bias))
    }

    /// The product, then GELU, both kept.
    fn dense_linear_gelu_keeping(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        let pre = Self::dense_linear(x, weight, bias);
        (pre.clone(), Self::exact_gelu(pre))
    }

    fn dense_input_gradient_gelu(
        grad: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        pre: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        Self::exact_gelu_backward(pre, Self::dense_input_gradient(grad, weight))
    }

    fn dense_input_gradient(
        grad: FloatTensor<Self>,
        weight: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        let [inputs, outputs] = [weight.shape()[0], weight.shape()[1]];
        let shape = DenseShape { rows: grad.shape()[0], inputs, outputs };
        let (grad, weight) = (cpu_tensor::contiguous(grad), cpu_tensor::contiguous(weight));
        let mut out = cpu_tensor::zeros(shape.rows * inputs);
        kernels::input_gradient(
            shape,
            cpu_tensor::values(&grad),
            cpu_tensor::values(&weight),
            &mut out,
        );
        cpu_tensor::from_values(out, [shape.rows, inputs])
    }

    fn dense_weight_gradient(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        let shape = dense_shape(&x, grad.shape()[1]);
        let (x, grad) = (cpu_tensor::contiguous(x), cpu_tensor::contiguous(grad));
        let mut out = vec![0.0; shape.inputs * shape.outputs];
        kernels::weight_gradient(
            shape,
            cpu_tensor::values(&x),
            cpu_tensor::values(&grad),
            &mut out,
        );
        cpu_tensor::from_values(out, [shape.inputs, shape.outputs])
    }

    fn dense_bias_gradient(grad: FloatTensor<Self>) -> FloatTensor<Self> {
        let shape = DenseShape { rows: grad.shape()[0], inputs: 0, outputs: grad.shape()[1] };
        let grad = cpu_tensor::contiguous(grad);
        let mut out = vec![0.0; shape.outputs];
        kernels::bias_gradient(shape, cpu_tensor::values(&grad), &mut out);
        cpu_tensor::from_values(out, [shape.outputs])
    }

    fn dense_parameter_gradients(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> (FloatTensor<Self>, FloatTensor<Self>) {
        (Self::dense_weight_gradient(x, grad.clone()), Self::dense_bias_gradient(grad))
    }
}

fn dense_shape(x: &FlexTensor, outputs: usize) -> DenseShape {
    let dims = x.shape();
    assert_eq!(dims.num_dims(), 2, "a dense layer's input is [rows, inputs]");
    DenseShape { rows: dims[0], inputs: dims[1], outputs }
}

#[cfg(test)]
mod tests {
    use crate::ops::dense::dense_linear;
    use crate::ops::testing::assert_matches_burns;
    use burn::nn::LinearConfig;
    use burn::tensor::{Device, Distribution, Tensor, Tolerance};

    /// Output and all three gradients match burn's `Linear`.
    #[test]
    fn dense_linear_matches_burns_linear() {
        let device = Device::flex().autodiff();
        let layer = LinearConfig::new(8, 12).init(&device);
        let input =
            Tensor::<3>::random([2, 5, 8], Distribution::Normal(0.0, 1.0), &device).require_grad();
        let bias = layer.bias.as_ref().unwrap();
        assert_matches_burns(
            dense_linear(&layer, input.clone()),
            layer.forward(input.clone()),
            |grads| {
                vec![
                    input.grad(grads).unwrap().into_data(),
                    layer.weight.grad(grads).unwrap().into_data(),
                    bias.grad(grads).unwrap().into_data(),
                ]
            },
            Tolerance::absolute(1e-5),
        );
    }
}
