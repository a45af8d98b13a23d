//! The site itself: its service worker (`www/sw.js`, through `www/site.js`), which keeps the
//! page working offline and cross-origin isolated; the footer says which, and a waiting new
//! deployment is offered with a button that switches to it.

use js_sys::Function;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::web::dom::{element, error_field, set_hidden, set_text};

#[wasm_bindgen(module = "/www/site.js")]
extern "C" {
    #[wasm_bindgen(js_name = startServiceWorker, catch)]
    async fn start_service_worker(on_update: &Function, on_ready: &Function) -> Result<(), JsValue>;
}

/// Registers the service worker; on a host that sends no isolation headers this reloads the
/// page once, and never returns.
pub async fn start() {
    let on_update = Closure::<dyn Fn(Function)>::new(|activate: Function| {
        set_hidden("update-offer", false);
        let button = element::<web_sys::HtmlElement>("update-reload");
        let on_click = Closure::<dyn Fn()>::new(move || {
            let _ = activate.call0(&JsValue::NULL);
        });
        button.set_onclick(Some(on_click.as_ref().unchecked_ref()));
        on_click.forget(); // lives as long as the page
    });
    let on_ready = Closure::<dyn Fn(String)>::new(|status: String| {
        let text = match status.as_str() {
            "offline" => "Kept in this browser: the page works offline.".to_string(),
            "isolation" => "A development build: nothing is kept for offline use.".to_string(),
            reason => format!("Not kept for offline use: {reason}."),
        };
        set_text("offline-status", &text);
        let _ = element::<web_sys::HtmlElement>("offline-status").set_attribute("data-status", &status);
    });
    if let Err(error) = start_service_worker(on_update.as_ref().unchecked_ref(), on_ready.as_ref().unchecked_ref()).await {
        // The page works without one, online and on one thread; say why it is not kept.
        let reason = error_field(&error, "message");
        set_text("offline-status", &format!("Not kept for offline use: the service worker failed ({reason})."));
    }
    on_update.forget(); // both are called for as long as the page lives
    on_ready.forget();
}
