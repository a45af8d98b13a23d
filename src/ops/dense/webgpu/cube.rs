//! [`DenseLinear`] and [`BlockedMatmul`] on burn's cubecl backend, through [`product`].

use burn::backend::Cube;
use burn::backend::ops::FloatTensorOps;
use burn::backend::tensor::FloatTensor;
use burn::backend::Slice;

use super::BlockedMatmul;
use super::product::{Epilogue, ProductShape, product, product_keeping_pre};
use crate::ops::dense::DenseLinear;
use crate::ops::webgpu::launch::{dims, is_f32, reshaped, row};

impl DenseLinear for Cube {
    fn dense_linear(x: FloatTensor<Self>, weight: FloatTensor<Self>, bias: FloatTensor<Self>) -> FloatTensor<Self> {
        let ([rows, inputs], outputs) = (dims2(&x), dims2(&weight)[1]);
        let out = product(x, weight, ProductShape::plain(1, rows, inputs, outputs), Epilogue::bias(bias));
        reshaped(out, &[rows, outputs])
    }

    fn dense_linear_gelu(x: FloatTensor<Self>, weight: FloatTensor<Self>, bias: FloatTensor<Self>) -> FloatTensor<Self> {
        let ([rows, inputs], outputs) = (dims2(&x), dims2(&weight)[1]);
        let epilogue = Epilogue { gelu: true, ..Epilogue::bias(bias) };
        reshaped(product(x, weight, ProductShape::plain(1, rows, inputs, outputs), epilogue), &[rows, outputs])
    }

    fn dense_linear_residual(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        residual: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        let ([rows, inputs], outputs) = (dims2(&x), dims2(&weight)[1]);
        let epilogue = Epilogue { residual: Some(residual), ..Epilogue::bias(bias) };
        let out = product(x, weight, ProductShape::plain(1, rows, inputs, outputs), epilogue);
        reshaped(out, &[rows, outputs])
    }

    fn dense_linear_gelu_keeping(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        let ([rows, inputs], outputs) = (dims2(&x), dims2(&weight)[1]);
        let epilogue = Epilogue { gelu: true, ..Epilogue::bias(bias) };
        let (out, pre) = product_keeping_pre(x, weight, ProductShape::plain(1, rows, inputs, outputs), epilogue);
        (reshaped(pre, &[rows, outputs]), reshaped(out, &[rows, outputs]))
    }

    fn dense_input_gradient_gelu(grad: FloatTensor<Self>, weight: FloatTensor<Self>, pre: FloatTensor<Self>) -> FloatTensor<Self> {
        let ([rows, outputs], inputs) = (dims2(&grad), dims2(&weight)[0]);
        let shape = ProductShape { b_transposed: true, ..ProductShape::plain(1, rows, outputs, inputs) };
        let epilogue = Epilogue { slope_at: Some(pre), ..Epilogue::none() };
        reshaped(product(grad, weight, shape, epilogue), &[rows, inputs])
    }

    fn dense_input_gradient(grad: FloatTensor<Self>, weight: FloatTensor<Self>) -> FloatTensor<Self> {
        let ([rows, outputs], inputs) = (dims2(&grad), dims2(&weight)[0]);
        let shape = ProductShape { b_transposed: true, ..ProductShape::plain(1, rows, outputs, inputs) };
        reshaped(product(grad, weight, shape, Epilogue::none()), &[rows, inputs])
    }

    fn dense_weight_gradient(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        let ([rows, inputs], outputs) = (dims2(&x), dims2(&grad)[1]);
        let shape = ProductShape { a_transposed: true, ..ProductShape::plain(1, inputs, rows, outputs) };
        reshaped(product(x, grad, shape, Epilogue::none()), &[inputs, outputs])
    }

    fn dense_bias_gradient(grad: FloatTensor<Self>) -> FloatTensor<Self> {
        // Only reached for a layer whose weight is frozen and bias is not, which the model never
        // has: the sum through the product with the row of ones, its weight part unused.
        let rows = dims2(&grad)[0];
        let ones = Self::float_ones([rows, 4].into(), &grad.device, burn::backend::FloatDType::F32);
        Self::dense_parameter_gradients(ones, grad).1
    }

    fn dense_parameter_gradients(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> (FloatTensor<Self>, FloatTensor<Self>) {
        let ([rows, inputs], outputs) = (dims2(&x), dims2(&grad)[1]);
        let shape = ProductShape { a_transposed: true, ones_row: true, ..ProductShape::plain(1, inputs, rows, outputs) };
        let both = reshaped(product(x, grad, shape, Epilogue::none()), &[inputs + 1, outputs]); // [∂W; ∂b]
        let weight = Self::float_slice(both.clone(), &[Slice::from(0..inputs), Slice::from(0..outputs)]);
        (weight, row(&both, inputs, outputs))
    }
}

impl BlockedMatmul for Cube {
    fn blocked_matmul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        let ([batch, m, k], [rhs_batch, rhs_k, n]) = (dims3(&lhs), dims3(&rhs));
        assert_eq!((batch, k), (rhs_batch, rhs_k), "blocked_matmul: [b, m, k] · [b, k, n]");
        if !is_f32(&lhs) || !is_f32(&rhs) || batch * m * k * n == 0 {
            return Self::float_matmul(lhs, rhs);
        }
        product(lhs, rhs, ProductShape::plain(batch, m, k, n), Epilogue::none())
    }
}

fn dims2(tensor: &FloatTensor<Cube>) -> [usize; 2] {
    let dims = dims(tensor);
    assert_eq!(dims.len(), 2, "a dense layer's operands are [rows, columns]");
    [dims[0], dims[1]]
}

fn dims3(tensor: &FloatTensor<Cube>) -> [usize; 3] {
    let dims = dims(tensor);
    assert_eq!(dims.len(), 3, "blocked_matmul takes rank-3 tensors");
    [dims[0], dims[1], dims[2]]
}
