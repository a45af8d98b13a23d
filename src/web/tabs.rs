//! What the page's tabs share (`www/tabs.js`): the lock a tab holds while it trains a run, and
//! the channel on which a tab says which stored file it changed.

use js_sys::Array;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/www/tabs.js")]
extern "C" {
    #[wasm_bindgen(js_name = holdLock, catch)]
    async fn hold_lock_js(name: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = releaseLock)]
    pub fn release_lock(name: &str);
    #[wasm_bindgen(js_name = heldLocks, catch)]
    async fn held_locks_js() -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = whenFree)]
    fn when_free_js(name: &str, callback: &js_sys::Function);
    /// Tells the other tabs that the stored file `name` changed.
    #[wasm_bindgen(js_name = announce)]
    pub fn announce(name: &str);
    #[wasm_bindgen(js_name = onAnnounced)]
    fn on_announced_js(callback: &js_sys::Function);
}

/// Takes the lock `name` if no tab holds it, until [`release_lock`] or the tab goes away; whether
/// this tab now holds it. An engine without the Web Locks API always says yes.
pub async fn hold_lock(name: &str) -> bool {
    hold_lock_js(name).await.map(|held| held.as_bool() == Some(true)).unwrap_or(true)
}

/// The names of the locks any tab of the page holds now (this one's too).
pub async fn held_locks() -> Vec<String> {
    held_locks_js().await.map(|names| Array::from(&names).iter().filter_map(|name| name.as_string()).collect()).unwrap_or_default()
}

/// Calls `callback` once the lock `name` is free.
pub fn when_free(name: &str, callback: impl FnOnce() + 'static) {
    when_free_js(name, Closure::once_into_js(callback).unchecked_ref());
}

/// Calls `callback` with the name of each stored file another tab says it changed.
pub fn on_announced(callback: impl Fn(String) + 'static) {
    let callback = Closure::<dyn Fn(String)>::new(callback);
    on_announced_js(callback.as_ref().unchecked_ref());
    callback.forget(); // lives as long as the page
}
