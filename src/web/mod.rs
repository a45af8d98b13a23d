//! Browser glue: everything that touches the DOM, WebGPU or JavaScript. Kept thin; the logic it
//! calls lives in the pure modules and is tested natively.
#![cfg(target_family = "wasm")]

pub mod adapter;
mod attention_view;
mod chart_view;
pub(crate) mod constructors;
mod dataset_view;
mod dom;
mod page;
mod photo_view;
mod position_view;
mod predictions_view;
mod storage;
mod training_view;
mod weights_view;
pub mod worker;

use wasm_bindgen::prelude::*;

/// Entry point wasm-bindgen calls when the module loads. Starts the page only on the app's page:
/// the training worker and the browser tests load the same module where there is no such page.
#[wasm_bindgen(start)]
pub fn start() {
    constructors::run_static_constructors();
    console_error_panic_hook::set_once();
    let on_app_page = web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.get_element_by_id("vit-app"))
        .is_some();
    if on_app_page {
        wasm_bindgen_futures::spawn_local(page::run());
    }
}
