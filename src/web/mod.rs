//! Browser glue: everything that touches the DOM, WebGPU or JavaScript. Kept thin; the logic it
//! calls lives in the pure modules and is tested natively.
//!
//! The page (main thread): [`page`] starts it and wires the [`views`], one per card, which share
//! [`app`]'s state. The worker: [`worker`] owns the dataset and training, with [`storage`] for
//! downloads and the Cache API. Both use [`adapter`] (the WebGPU adapter and burn's device),
//! [`dom`] and [`constructors`]; the page's pictures are decoded by [`pictures`]; what its tabs share
//! (the lock on a run being trained, word of a stored file changed) is [`tabs`].
#![cfg(target_family = "wasm")]

pub mod adapter;
mod app;
mod camera;
pub(crate) mod constructors;
mod dom;
mod in_turn;
mod measure;
mod overlay;
mod page;
mod pictures;
mod plot;
mod run_store;
mod storage;
mod tabs;
mod views;
pub mod worker;
mod workers;

/// The threaded module's pool of web workers, started by `www/worker.js` before any Rust code
/// touches rayon (the first rayon call would fix a one-thread pool).
#[cfg(threaded)]
pub use wasm_bindgen_rayon::init_thread_pool;

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
        // A broken invariant must not leave the page silently waiting: say so on the page too.
        std::panic::set_hook(Box::new(|info| {
            console_error_panic_hook::hook(info);
            let cause = info.payload_as_str().unwrap_or("a panic");
            app::show_error(&format!(
                "Something in the page broke ({cause}); reload the page. Your runs, checkpoints and the dataset are kept in this browser."
            ));
        }));
        wasm_bindgen_futures::spawn_local(page::run());
    }
}
