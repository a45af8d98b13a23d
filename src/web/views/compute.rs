//! The compute card: the browser's WebGPU adapter, the path the page runs on and why, and the
//! selector that reloads the page on another path.

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::HtmlSelectElement;

use crate::compute::{AdapterSummary, ComputePath, PathChoice, PathRequest, ThreadPlan};
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

/// The CPU path's threads as planned, before the worker has started.
pub fn show_threads(path: ComputePath, plan: &ThreadPlan) {
    match path {
        ComputePath::Cpu => set_text("compute-threads", &plan.reason),
        ComputePath::WebGpu => set_text("compute-threads", "– (the WebGPU path)"),
    }
}

/// What the training worker started with: its CPU pool's size (`data-threads`), and why it has
/// fewer threads than planned if it does.
pub fn show_worker_threads(path: ComputePath, threads: usize, note: Option<&str>) {
    let element = element::<web_sys::HtmlElement>("compute-threads");
    let _ = element.set_attribute("data-threads", &threads.to_string());
    if let (ComputePath::Cpu, Some(note)) = (path, note) {
        set_text("compute-threads", &format!("{threads} thread: {note}."));
    }
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
