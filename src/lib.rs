//! A Vision Transformer (Dosovitskiy et al., 2020) scaled to 32×32 images, built on burn so the
//! same code trains natively and in the browser (WebGPU or burn's CPU backend compiled to wasm).
//!
//! Pure logic lives in the plain modules and is tested natively; everything that touches the
//! DOM, WebGPU or JavaScript lives in [`web`], compiled for wasm32 only.

pub mod classes;
pub mod compute;
pub mod cpu_tensor;
pub mod data;
pub mod display;
pub mod fused_attention;
pub mod gelu;
pub mod model;
#[cfg(not(target_family = "wasm"))]
pub mod native_memory;
pub mod parallel;
pub mod parity;
pub mod inference;
pub mod lanes;
pub mod layer_norm;
pub mod matmul;
pub mod preprocess;
pub mod protocol;
mod simd;
pub mod step_kernels;
pub mod training;
pub mod viz;
pub mod weights;

#[cfg(target_family = "wasm")]
pub mod web;
