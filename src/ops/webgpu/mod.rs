//! What the WebGPU kernels of every operation share.
//!
//! Each operation's GPU kernels are plain WGSL in its own `webgpu/` folder, beside its CPU twin;
//! they are launched through burn-cubecl's source-kernel template ([`launch`]), with the shape
//! baked in as constants and the few values that change from launch to launch (a learning rate)
//! in a small uniform. What is here:
//!
//! - [`launch`]: a WGSL template with its constants, launched on tensors' buffers;
//! - [`family`]: which kernels fit the adapter, a software renderer (SwiftShader, llvmpipe:
//!   a CPU, where invocations and barriers are dear) or a GPU (where parallelism is everything);
//! - [`limits`]: the largest buffer the device binds, which caps a WebGPU training batch;
//! - [`partials`]: the second pass of every reduction over the batch's rows;
//! - [`checks`]: each operation against its definition, for the native and the browser tests;
//! - [`record`]: what each of our launches did (workgroups, the longest serial loop), for the
//!   launch report (`bench --sections launches`).

#[cfg(gpu)]
pub mod checks;
pub mod family;
#[cfg(gpu)]
pub mod launch;
#[cfg(gpu)]
pub mod limits;
#[cfg(gpu)]
pub mod partials;
pub mod record;

pub use family::{KernelFamily, kernel_family, set_kernel_family};
