//! GELU on GPU backends: burn's own kernel, which is not where a WebGPU step's time goes.

use super::ExactGelu;
use burn::backend::ops::ActivationOps;
use burn::backend::tensor::FloatTensor;

impl ExactGelu for burn::backend::Cube {
    fn exact_gelu(x: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::gelu(x)
    }

    fn exact_gelu_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::gelu_backward(x, grad)
    }
}
