//! A Vision Transformer (Dosovitskiy et al., 2020) scaled to 32×32 images, built on burn so the
//! same code trains natively and in the browser (WebGPU or burn's CPU backend compiled to wasm).
//!
//! The layers, from the model down: [`model`] calls the four operations in [`ops`], each with a
//! CPU and a WebGPU implementation. [`data`] brings CIFAR-10 to batches, [`training`] runs the
//! epoch loop the native `train` command and the page's worker share, [`inference`] explains one
//! picture, [`weights`] reads and writes safetensors files, [`viz`] turns numbers into pixels,
//! [`runs`] is the page's record of its training runs.
//! All of that is plain Rust tested natively; everything that touches the DOM, WebGPU or
//! JavaScript lives in [`web`], compiled for wasm32 only.
//!
//! The unit tests are native. `wasm-pack test` builds every target's tests for wasm32, and there
//! the unit-test target was this whole crate compiled and LTO-linked again, for no test: 8.4
//! minutes of the browser layer's build, so it is empty there.
#![cfg(not(all(test, target_family = "wasm")))]

#[cfg(not(target_family = "wasm"))]
pub mod cli;
pub mod compute;
pub mod data;
pub mod display;
pub mod inference;
pub mod model;
pub mod ops;
pub mod protocol;
pub mod runs;
pub mod training;
pub mod viz;
pub mod weights;

#[cfg(target_family = "wasm")]
pub mod web;
