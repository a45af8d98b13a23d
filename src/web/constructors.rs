//! Runs the module's static constructors once, at start-up.
//!
//! cubecl registers its IR dialects through `inventory`, whose constructors wasm-ld gathers into
//! `__wasm_call_ctors`. When nothing in the module calls that function, wasm-ld takes the module
//! for a run-once "command" and puts a call to it at the top of every exported function. JavaScript
//! calls those exports constantly (each allocation for a string, each WebGPU object handed to
//! Rust), so every kernel launch re-ran thousands of constructors: about 4 ms of CPU per launch,
//! most of a WebGPU training step. Calling it ourselves turns the wrappers off.

use std::sync::atomic::{AtomicBool, Ordering};

unsafe extern "C" {
    fn __wasm_call_ctors();
}

static DONE: AtomicBool = AtomicBool::new(false);

/// Runs the constructors the first time it is called; later calls do nothing.
pub fn run_static_constructors() {
    if !DONE.swap(true, Ordering::Relaxed) {
        // SAFETY: the linker-made function only runs constructors, and the flag above makes it
        // run once per instance, as the linker expects.
        unsafe { __wasm_call_ctors() }
    }
}
