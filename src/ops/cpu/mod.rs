//! What the CPU implementations of the operations share: plain slices in and out of burn's
//! CPU tensors, dropout masks any thread can write, work spread over the cores, loops compiled for the widest vector unit, sums that
//! vectorise, a vectorisable exp, one strided matrix product (gemm natively, our own in wasm), and the native allocator setting.
//!
//! Nothing here knows about the model; it may use burn's CPU backend, gemm and rayon.

#[cfg(not(target_family = "wasm"))]
pub mod allocator;
pub mod dropout_mask;
pub mod exp;
pub mod lanes;
#[cfg(any(test, target_family = "wasm"))]
mod panel_product;
pub mod parallel;
pub mod product;
pub(crate) mod simd;
pub mod tensor;
