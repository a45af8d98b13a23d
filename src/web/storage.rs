//! Network and browser storage: fetch with progress, the Cache API that keeps the decoded
//! dataset between visits, and files in the origin-private file system (the worker's checkpoint,
//! the page's runs). Works in a worker and in a page.

use js_sys::{Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Cache, CacheStorage, ReadableStreamDefaultReader, RequestCache, RequestInit, Response};

const CACHE_NAME: &str = "vit-web-dataset";

/// The global scope's `fetch`, `caches`, whichever global this is (window or worker).
fn global_call(name: &str, argument: &JsValue, second: Option<&JsValue>) -> Result<JsValue, JsValue> {
    let global = js_sys::global();
    let function: js_sys::Function = Reflect::get(&global, &name.into())?.dyn_into()?;
    match second {
        Some(second) => function.call2(&global, argument, second),
        None => function.call1(&global, argument),
    }
}

#[wasm_bindgen(module = "/www/files.js")]
extern "C" {
    #[wasm_bindgen(js_name = writeFile, catch)]
    async fn write_file_js(name: &str, bytes: &Uint8Array) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = readFile, catch)]
    async fn read_file_js(name: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = removeFile, catch)]
    async fn remove_file_js(name: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = updateFile, catch)]
    async fn update_file_js(name: &str, update: &js_sys::Function) -> Result<JsValue, JsValue>;
}

/// Writes the file `name` of the origin-private file system whole (a failed write leaves the
/// previous one), from the page or a worker.
pub async fn write_file(name: &str, bytes: &[u8]) -> Result<(), String> {
    write_file_js(name, &Uint8Array::from(bytes)).await.map(|_| ()).map_err(describe)
}

/// The file `name`'s bytes; `None` when there is none.
pub async fn read_file(name: &str) -> Result<Option<Vec<u8>>, String> {
    let bytes = read_file_js(name).await.map_err(describe)?;
    Ok((!bytes.is_null() && !bytes.is_undefined()).then(|| Uint8Array::new(&bytes).to_vec()))
}

/// Replaces the file `name` by what `update` makes of its bytes (`None`: there is none), with no
/// other tab's update in between; `update` returning `None` leaves the file as it is.
pub async fn update_file(name: &str, update: impl FnOnce(Option<Vec<u8>>) -> Option<Vec<u8>> + 'static) -> Result<(), String> {
    let update = Closure::once(move |bytes: JsValue| -> JsValue {
        let bytes = (!bytes.is_null() && !bytes.is_undefined()).then(|| Uint8Array::new(&bytes).to_vec());
        update(bytes).map_or(JsValue::NULL, |bytes| Uint8Array::from(bytes.as_slice()).into())
    });
    update_file_js(name, update.as_ref().unchecked_ref()).await.map(|_| ()).map_err(describe)
}

pub async fn remove_file(name: &str) -> Result<(), String> {
    remove_file_js(name).await.map(|_| ()).map_err(describe)
}

/// A browser error in words; a full storage quota, the error a person can act on, is named as such.
pub fn describe(error: JsValue) -> String {
    let name = crate::web::dom::error_field(&error, "name");
    match name.as_str() {
        "QuotaExceededError" => "the browser's storage quota for this page is full; free space or download the weights".into(),
        "NotSupportedError" => "this browser cannot keep files for the page".into(),
        _ => error
            .dyn_ref::<js_sys::Error>()
            .map(|error| String::from(error.message()))
            .or_else(|| error.as_string())
            .unwrap_or_else(|| format!("{error:?}")),
    }
}

async fn fetch(url: &str, no_store: bool) -> Result<Response, String> {
    let init = RequestInit::new();
    if no_store {
        init.set_cache(RequestCache::NoStore);
    }
    let promise: Promise = global_call("fetch", &url.into(), Some(&init)).map_err(describe)?.unchecked_into();
    let response: Response = JsFuture::from(promise).await.map_err(|error| format!("network error: {}", describe(error)))?.unchecked_into();
    if !response.ok() {
        return Err(format!("{url} answered HTTP {}", response.status()));
    }
    Ok(response)
}

/// A small text file, always from the server (the manifest that says what is current).
pub async fn fetch_text_uncached(url: &str) -> Result<String, String> {
    let response = fetch(url, true).await?;
    let text = JsFuture::from(response.text().map_err(describe)?).await.map_err(describe)?;
    text.as_string().ok_or_else(|| format!("{url} is not text"))
}

/// Reads a stream to its end, reporting the bytes read so far.
async fn read_stream(reader: ReadableStreamDefaultReader, capacity: usize, mut progress: impl FnMut(u64)) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::with_capacity(capacity);
    loop {
        let chunk = JsFuture::from(reader.read()).await.map_err(describe)?;
        if Reflect::get(&chunk, &"done".into()).map_err(describe)?.as_bool().unwrap_or(true) {
            return Ok(bytes);
        }
        let value: Uint8Array = Reflect::get(&chunk, &"value".into()).map_err(describe)?.unchecked_into();
        let start = bytes.len();
        bytes.resize(start + value.length() as usize, 0);
        value.copy_to(&mut bytes[start..]);
        progress(bytes.len() as u64);
    }
}

/// Downloads `url` with progress (`done`, `total` when known).
pub async fn download(url: &str, expected: Option<u64>, mut progress: impl FnMut(u64, Option<u64>)) -> Result<Vec<u8>, String> {
    let response = fetch(url, false).await?;
    let total = response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|length| length.parse().ok())
        .or(expected);
    let body = response.body().ok_or_else(|| format!("{url} has no body"))?;
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    read_stream(reader, total.unwrap_or(0) as usize, |done| progress(done, total)).await
}

/// Reads a dropped or picked file with progress.
pub async fn read_blob(blob: &web_sys::Blob, progress: impl FnMut(u64)) -> Result<Vec<u8>, String> {
    let reader: ReadableStreamDefaultReader = blob.stream().get_reader().unchecked_into();
    read_stream(reader, blob.size() as usize, progress).await
}

async fn open_cache() -> Result<Cache, String> {
    let caches: CacheStorage = Reflect::get(&js_sys::global(), &"caches".into())
        .map_err(describe)?
        .dyn_into()
        .map_err(|_| "this browser has no Cache API (or the page is not served over http(s))".to_string())?;
    let cache = JsFuture::from(caches.open(CACHE_NAME)).await.map_err(describe)?;
    Ok(cache.unchecked_into())
}

/// The URL-shaped key the Cache API needs.
fn cache_url(key: &str) -> String {
    format!("/vit-web-cache/{key}")
}

/// The bytes stored under `key`, if any.
pub async fn cached(key: &str) -> Option<Vec<u8>> {
    let cache = open_cache().await.ok()?;
    let found = JsFuture::from(cache.match_with_str(&cache_url(key))).await.ok()?;
    let response: Response = found.dyn_into().ok()?;
    let buffer = JsFuture::from(response.array_buffer().ok()?).await.ok()?;
    Some(Uint8Array::new(&buffer).to_vec())
}

/// Stores `bytes` under `key` and removes other entries whose key starts with `evict_prefix`
/// (older datasets), so storage holds one copy. A full quota comes back as an error to report.
pub async fn store(key: &str, bytes: &[u8], evict_prefix: &str) -> Result<(), String> {
    let cache = open_cache().await?;
    let keys = JsFuture::from(cache.keys()).await.map_err(describe)?;
    for request in js_sys::Array::from(&keys).iter() {
        let url: String = Reflect::get(&request, &"url".into()).ok().and_then(|url| url.as_string()).unwrap_or_default();
        let stale = url.contains(&cache_url(evict_prefix)) && !url.ends_with(&cache_url(key));
        if stale {
            let _ = JsFuture::from(cache.delete_with_request(request.unchecked_ref())).await;
        }
    }
    let body = Uint8Array::from(bytes);
    let response = Response::new_with_opt_buffer_source(Some(&Object::from(body))).map_err(describe)?;
    JsFuture::from(cache.put_with_str(&cache_url(key), &response)).await.map_err(describe)?;
    Ok(())
}
