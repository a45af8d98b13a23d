//! The few DOM operations the page needs.

use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, Document, Element, HtmlCanvasElement, HtmlElement};

pub fn document() -> Document {
    web_sys::window().and_then(|window| window.document()).expect("a page has a document")
}

pub fn by_id(id: &str) -> Option<Element> {
    document().get_element_by_id(id)
}

/// The element with `id`, cast to `T`; the page's HTML guarantees it.
pub fn element<T: JsCast>(id: &str) -> T {
    by_id(id)
        .unwrap_or_else(|| panic!("index.html has an element #{id}"))
        .dyn_into::<T>()
        .unwrap_or_else(|_| panic!("#{id} has the expected element type"))
}

pub fn set_text(id: &str, text: &str) {
    element::<HtmlElement>(id).set_text_content(Some(text));
}

/// Shows or hides an element through the `hidden` attribute.
pub fn set_hidden(id: &str, hidden: bool) {
    element::<HtmlElement>(id).set_hidden(hidden);
}

pub fn query_param(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    web_sys::UrlSearchParams::new_with_str(&search).ok()?.get(name)
}

pub fn now_ms() -> f64 {
    web_sys::window().and_then(|window| window.performance()).map(|p| p.now()).unwrap_or(0.0)
}

/// Escapes text for inclusion in HTML.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The canvas's 2D context, if the browser gives one.
pub fn context_2d(canvas: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    canvas.get_context("2d").ok().flatten()?.dyn_into().ok()
}
