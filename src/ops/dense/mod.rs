//! Dense layers (`x·W + b`) and the attention's per-head products.
//!
//! On the CPU backend a dense layer is one fused operation ([`cpu`]): each product over every
//! token of the batch, one `gemm` call per thread's block of rows, the bias as the forward
//! product's starting value. On
//! WebGPU both go through the register-blocked WGSL product ([`webgpu`]), several times faster on
//! a software adapter than burn's stock matmul.

pub mod cpu;
pub mod webgpu;

pub use webgpu::blocked_matmul;

use burn::nn::Linear;
use burn::tensor::Tensor;

/// `layer.forward(input)`: through [`cpu::dense_linear`] on the CPU, through
/// [`webgpu::blocked_linear`] on a GPU.
///
/// # Shapes
/// - input: `[batch, tokens, d_input]`
/// - output: `[batch, tokens, d_output]`
pub fn linear(layer: &Linear, input: Tensor<3>) -> Tensor<3> {
    if super::on_cpu(&input) { cpu::dense_linear(layer, input) } else { webgpu::blocked_linear(layer, input) }
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
