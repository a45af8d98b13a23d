//! The model's operations, each with a CPU and a WebGPU implementation side by side.
//!
//! | operation | CPU backend (flex, native and wasm) | WebGPU (and native wgpu) |
//! |---|---|---|
//! | [`dense`] `x·W + b` | one fused product, a `gemm` per thread ([`dense::cpu`]) | the register-blocked WGSL product ([`dense::webgpu`]) |
//! | [`attention`] `softmax(QKᵀ/√d)·V` | one strided pass per head ([`attention::cpu`]) | burn's operations with the blocked product ([`attention::webgpu`]) |
//! | [`layer_norm`] | one pass per row each way ([`layer_norm::cpu`]) | burn's `LayerNorm` |
//! | [`gelu`] exact `x·Φ(x)` | a vectorised erf ([`gelu::cpu`]) | burn's kernel ([`gelu::webgpu`]) |
//! | [`dropout`] (the `small` preset's) | masks written on every core ([`cpu::dropout_mask`]), inside the fused attention too | burn's `Dropout` |
//!
//! Each operation's `mod.rs` holds the one function the model calls; it picks the
//! implementation by the tensor's device, so the model has one code path. The CPU parts are
//! burn backend extensions (`Flex` + `Autodiff`) with hand-written backward passes and their
//! arithmetic on plain `f32` slices in a `kernels.rs`; the helpers they share live in [`cpu`].
//!
//! What lives here may use burn, gemm and the helpers in this folder, nothing else of the crate:
//! the model depends on the operations, never the other way round.

pub mod attention;
pub mod cpu;
pub mod dense;
pub mod dropout;
pub mod gelu;
pub mod layer_norm;
pub mod step_kernels;
#[cfg(test)]
mod testing;

pub use attention::attention_core;
pub use dense::{heads_matmul, linear};
pub use dropout::dropout;
pub use gelu::gelu;
pub use layer_norm::layer_norm;

use burn::backend::DispatchDevice;
use burn::tensor::Tensor;

/// Whether `tensor` lives on burn's CPU backend, where the fused CPU operations apply.
pub fn on_cpu<const D: usize>(tensor: &Tensor<D>) -> bool {
    matches!(tensor.device().as_dispatch().clone().inner(), DispatchDevice::Flex(_))
}
