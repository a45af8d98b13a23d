//! The model's operations, each with a CPU and a WebGPU implementation side by side.
//!
//! | operation | CPU backend (flex, native and wasm) | WebGPU (and native wgpu) |
//! |---|---|---|
//! | [`dense`] `x·W + b` | one fused product, a `gemm` per thread ([`dense::cpu`]) | tiled or register-blocked WGSL products, weight and bias gradients split over the batch ([`dense::webgpu`]) |
//! | [`attention`] `softmax(QKᵀ/√d)·V` | one strided pass per head ([`attention::cpu`]) | a workgroup per head, one launch each way ([`attention::webgpu`]) |
//! | [`layer_norm`], and of each image's [CLS] alone (rows read where they lie) | one pass per row each way ([`layer_norm::cpu`]) | an invocation per row, scale and shift gradients split over the batch ([`layer_norm::webgpu`]) |
//! | [`gelu`] exact `x·Φ(x)` | a vectorised erf ([`gelu::cpu`]) | the same erf in WGSL ([`gelu::webgpu`]) |
//! | [`dropout`] (the `small` preset's) | masks written on every core ([`cpu::dropout_mask`]), inside the fused attention too | burn's `Dropout` |
//! | [`cross_entropy`] the loss and the count of right answers | (burn's loss; the same arithmetic on slices for tests) | one launch each way ([`cross_entropy::webgpu`]) |
//! | [`token_assembly`] [CLS] before the patches, plus the positions | (burn's composition; the same arithmetic on slices for tests) | one launch forward, one or two backward ([`token_assembly::webgpu`]) |
//! | [`adamw`] one AdamW step of a parameter | (burn's AdamW; the same arithmetic on slices for tests) | one launch per parameter tensor ([`adamw::webgpu`]) |
//!
//! Each operation's `mod.rs` holds its backend extension trait and the function the model (or
//! the training loop) calls; the CPU parts are burn backend extensions (`Flex` + `Autodiff`) with
//! hand-written backward passes and their arithmetic on plain `f32` slices in a `kernels.rs`; the
//! GPU parts are WGSL kernels beside them. What each side shares lives in [`cpu`] and [`webgpu`]
//! (launching, the kernel families, the second pass of sums over the batch, the checks against
//! each operation's definition).
//!
//! What lives here may use burn, gemm and the helpers in this folder, nothing else of the crate:
//! the model depends on the operations, never the other way round.

pub mod adamw;
pub mod attention;
pub mod cpu;
pub mod cross_entropy;
pub mod dense;
pub mod dropout;
pub mod gelu;
pub mod layer_norm;
pub mod step_kernels;
pub mod token_assembly;
pub mod webgpu;
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
