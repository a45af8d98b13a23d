//! The compute card: the browser's WebGPU adapter, the path the page runs on and why, and the
//! selectors that reload the page on another path or with another number of threads.

use web_sys::HtmlSelectElement;

use crate::compute::{
    AdapterSummary, ComputePath, MAX_THREADS, PathChoice, PathRequest, ThreadPlan, ThreadSupport, lost_device, plan_threads,
    thread_choices,
};
use crate::web::dom::{self, element, set_hidden, set_text};
use crate::web::measure;

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

/// Said while the two paths are being measured.
pub fn show_measuring() {
    set_text("compute-path", "measuring…");
    set_text(
        "compute-reason",
        "Timing a few training steps on WebGPU and on the CPU, to run on the faster (only on a first visit, at most 5 s).",
    );
}

/// The path the page runs on and why; `measured` says whether the choice comes from a
/// measurement made now (`Some(true)`) or kept from an earlier visit (`Some(false)`).
pub fn show_choice(choice: &PathChoice, measured: Option<bool>) {
    set_text("compute-path", choice.path.label());
    set_text("compute-reason", &choice.reason);
    let reason = element::<web_sys::HtmlElement>("compute-reason");
    match measured {
        Some(fresh) => {
            let _ = reason.set_attribute("data-measured", if fresh { "now" } else { "kept" });
        }
        None => {
            let _ = reason.remove_attribute("data-measured");
        }
    }
    set_hidden("compute-remeasure", measured.is_none());
}

/// After the worker's WebGPU device was lost: the card no longer claims a working WebGPU path,
/// and says what to do, in the words the rest of the page uses.
pub fn show_lost(cause: &str) {
    set_text("compute-path", "WebGPU (lost)");
    set_text("compute-reason", &format!("WebGPU stopped working: {}", lost_device(cause)));
    let _ = element::<web_sys::HtmlElement>("compute-reason").remove_attribute("data-measured");
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
        // The selector offered counts that cannot run here.
        set_hidden("threads-choice", true);
    }
}

/// Reloads the page with `?compute=…` when the person picks another path, keeping the page's other
/// parameters (such as `?dataset=`); "Measure again" forgets the kept measurement and reloads.
pub fn wire(request: PathRequest) {
    dom::listen(&element::<web_sys::HtmlElement>("compute-remeasure"), "click", |_: web_sys::Event| {
        measure::forget();
        if let Some(window) = web_sys::window() {
            let _ = window.location().reload();
        }
    });
    let select: HtmlSelectElement = element("compute-select");
    select.set_value(match request {
        PathRequest::Auto => "auto",
        PathRequest::WebGpu => "webgpu",
        PathRequest::Cpu => "cpu",
    });
    dom::listen(&select, "change", |_: web_sys::Event| {
        reload_with("compute", Some(&element::<HtmlSelectElement>("compute-select").value()));
    });
}

/// The threads selector, where the page can run more than one thread: one per core (no
/// `?threads=`), or a count, for people who want a core free. Picking one reloads the page, as
/// the path selector does.
pub fn wire_threads(requested: Option<usize>, support: ThreadSupport) {
    let choices = thread_choices(requested, support);
    set_hidden("threads-choice", choices.is_empty());
    if choices.is_empty() {
        return;
    }
    let select: HtmlSelectElement = element("threads-select");
    // What the page runs on without `?threads=`, as the plan says.
    let per_core = plan_threads(None, support).threads;
    let options = std::iter::once((String::new(), format!("One per core ({per_core})")))
        .chain(choices.iter().map(|threads| (threads.to_string(), threads.to_string())));
    for (value, text) in options {
        if let Ok(option) = web_sys::HtmlOptionElement::new_with_text_and_value(&text, &value) {
            let _ = select.add_with_html_option_element(&option);
        }
    }
    select.set_value(&requested.map(|threads| threads.min(MAX_THREADS).to_string()).unwrap_or_default());
    dom::listen(&select, "change", |_: web_sys::Event| {
        let value = element::<HtmlSelectElement>("threads-select").value();
        reload_with("threads", Some(value.as_str()).filter(|value| !value.is_empty()));
    });
}

/// Reloads the page with the query parameter `name` set to `value` (removed for `None`), keeping
/// the others (such as `?dataset=`).
fn reload_with(name: &str, value: Option<&str>) {
    let Some(window) = web_sys::window() else { return };
    let location = window.location();
    let search = location.search().unwrap_or_default();
    if let Ok(parameters) = web_sys::UrlSearchParams::new_with_str(&search) {
        match value {
            Some(value) => parameters.set(name, value),
            None => parameters.delete(name),
        }
        let _ = location.set_search(&String::from(parameters.to_string()));
    }
}
