//! The few DOM operations the page needs.

use wasm_bindgen::{Clamped, JsCast};
use web_sys::{CanvasRenderingContext2d, Document, Element, HtmlCanvasElement, HtmlElement, ImageData};

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

/// Every `name=value` pair of the page's query, in order.
pub fn query_pairs() -> Vec<(String, String)> {
    let Some(search) = web_sys::window().and_then(|window| window.location().search().ok()) else { return Vec::new() };
    let Ok(params) = web_sys::UrlSearchParams::new_with_str(&search) else { return Vec::new() };
    js_sys::try_iter(&params)
        .ok()
        .flatten()
        .into_iter()
        .flatten()
        .filter_map(|pair| {
            let pair: js_sys::Array = pair.ok()?.dyn_into().ok()?;
            Some((pair.get(0).as_string()?, pair.get(1).as_string()?))
        })
        .collect()
}

/// Sets (`Some`) or removes (`None`) query parameters in the address bar without reloading or
/// adding a history entry.
pub fn replace_query(changes: &[(&str, Option<String>)]) {
    let Some(window) = web_sys::window() else { return };
    let Ok(url) = window.location().href().and_then(|href| web_sys::Url::new(&href)) else { return };
    let params = url.search_params();
    for (name, value) in changes {
        match value {
            Some(value) => params.set(name, value),
            None => params.delete(name),
        }
    }
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url.href()));
    }
}

/// Hands `bytes` to the browser as a download called `name`.
pub fn save_file(bytes: &[u8], name: &str, mime: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options).map_err(|_| "could not make the file")?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|_| "could not make the file")?;
    let anchor: web_sys::HtmlAnchorElement = document().create_element("a").map_err(|_| "no document")?.unchecked_into();
    anchor.set_href(&url);
    anchor.set_download(name);
    anchor.click();
    // Firefox and WebKit start the download after the click returns and drop it if its URL is
    // gone by then, so the URL is released a minute later rather than at once.
    let revoke = wasm_bindgen::closure::Closure::once_into_js(move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    });
    if let Some(window) = web_sys::window() {
        let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(revoke.unchecked_ref(), 60_000);
    }
    Ok(())
}

/// Resolves after `milliseconds`, letting the page's events run meanwhile.
pub async fn sleep_ms(milliseconds: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(window) = web_sys::window() {
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, milliseconds);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// A string property of a thrown JavaScript value (`"message"`, `"name"`), or "" where it has none.
pub fn error_field(error: &wasm_bindgen::JsValue, field: &str) -> String {
    js_sys::Reflect::get(error, &field.into()).ok().and_then(|value| value.as_string()).unwrap_or_default()
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

/// Draws the heat maps' colour bar (purple for low, yellow for high) on the canvas `id`.
pub fn draw_colour_bar(id: &str) {
    const STEPS: u32 = 256;
    let _ = put_rgba(&element(id), &crate::viz::colormap::colour_bar_rgba(STEPS as usize), STEPS, 1);
}

/// Draws RGBA pixels onto a canvas at their own size, resizing the canvas to fit.
pub fn put_rgba(canvas: &HtmlCanvasElement, rgba: &[u8], width: u32, height: u32) -> Result<(), String> {
    canvas.set_width(width);
    canvas.set_height(height);
    let context = context_2d(canvas).ok_or("this browser gives no 2D canvas")?;
    let data = ImageData::new_with_u8_clamped_array_and_sh(Clamped(rgba), width, height)
        .map_err(|_| format!("{width}×{height} pixels do not make an image"))?;
    context.put_image_data(&data, 0.0, 0.0).map_err(|_| "could not draw on the canvas".to_string())
}

/// A canvas sized to its CSS box times the device pixel ratio, so lines and text are crisp on
/// any screen, with the context scaled so drawing code works in CSS pixels. Returns the context
/// and the CSS size.
pub fn hidpi_context(canvas: &HtmlCanvasElement) -> Option<(CanvasRenderingContext2d, f64, f64)> {
    let ratio = web_sys::window().map(|window| window.device_pixel_ratio()).unwrap_or(1.0).max(1.0);
    let (width, height) = (canvas.client_width() as f64, canvas.client_height() as f64);
    if width <= 0.0 || height <= 0.0 {
        return None; // hidden: drawn when shown
    }
    canvas.set_width((width * ratio).round() as u32);
    canvas.set_height((height * ratio).round() as u32);
    let context = context_2d(canvas)?;
    context.set_transform(ratio, 0.0, 0.0, ratio, 0.0, 0.0).ok()?;
    Some((context, width, height))
}

/// Runs `handler` whenever `element` gets `event`, for the page's lifetime.
pub fn listen<E: JsCast + 'static>(target: &web_sys::EventTarget, event: &str, handler: impl Fn(E) + 'static) {
    let closure = wasm_bindgen::closure::Closure::<dyn Fn(web_sys::Event)>::new(move |event: web_sys::Event| {
        handler(event.unchecked_into())
    });
    let _ = target.add_event_listener_with_callback(event, closure.as_ref().unchecked_ref());
    closure.forget(); // lives as long as the page
}
