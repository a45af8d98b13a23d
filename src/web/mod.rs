//! Browser glue: everything that touches the DOM, WebGPU or JavaScript. Kept thin; the logic it
//! calls lives in the pure modules and is tested natively.
#![cfg(target_family = "wasm")]

pub mod adapter;
mod dom;
mod page;

use wasm_bindgen::prelude::*;

/// Entry point wasm-bindgen calls when the module loads. Does nothing outside the app's page
/// (the browser tests load the same module into an empty document).
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
    if dom::by_id("vit-app").is_some() {
        wasm_bindgen_futures::spawn_local(page::run());
    }
}
