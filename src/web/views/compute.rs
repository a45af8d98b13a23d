//! The compute card: the browser's WebGPU adapter, the path the page runs on and why, and the
//! selector that reloads the page on another path.

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::HtmlSelectElement;

use crate::compute::{AdapterSummary, PathChoice, PathRequest};
use crate::web::dom::{element, set_hidden, set_text};

/// What the browser offers for WebGPU.
pub fn show_adapter(adapter: Option<&AdapterSummary>) {
    let text = match adapter {
        Some(adapter) if adapter.is_software() => format!("{} (software renderer)", adapter.label()),
        Some(adapter) => adapter.label(),
        None => "none: this browser offers no WebGPU".into(),
    };
    set_text("adapter", &text);
    set_hidden("no-webgpu", adapter.is_some());
}

/// The path the page runs on and why.
pub fn show_choice(choice: &PathChoice) {
    set_text("compute-path", choice.path.label());
    set_text("compute-reason", &choice.reason);
}

/// Reloads the page with `?compute=…` when the person picks another path, keeping the page's other
/// parameters (such as `?dataset=`).
pub fn wire(request: PathRequest) {
    let select: HtmlSelectElement = element("compute-select");
    select.set_value(match request {
        PathRequest::Auto => "auto",
        PathRequest::WebGpu => "webgpu",
        PathRequest::Cpu => "cpu",
    });
    let on_change = Closure::<dyn Fn()>::new(move || {
        let value = element::<HtmlSelectElement>("compute-select").value();
        if let Some(window) = web_sys::window() {
            let location = window.location();
            let search = location.search().unwrap_or_default();
            if let Ok(parameters) = web_sys::UrlSearchParams::new_with_str(&search) {
                parameters.set("compute", &value);
                let _ = location.set_search(&String::from(parameters.to_string()));
            }
        }
    });
    select.set_onchange(Some(on_change.as_ref().unchecked_ref()));
    on_change.forget(); // lives as long as the page
}
