//! What the browser offers to compute on — its WebGPU adapter, and whether the CPU path may have
//! threads — and the burn device for the chosen path.

use burn::tensor::Device;
use js_sys::{Object, Reflect};
use wasm_bindgen::prelude::*;

use crate::compute::{AdapterSummary, ComputePath, ThreadSupport};
#[cfg(gpu)]
use crate::ops::webgpu::KernelFamily;

#[wasm_bindgen(module = "/www/gpu.js")]
extern "C" {
    #[wasm_bindgen(js_name = webgpuAdapterInfo)]
    async fn webgpu_adapter_info() -> JsValue;
}

/// The browser's WebGPU adapter, or `None` where WebGPU is missing or blocked.
pub async fn adapter_summary() -> Option<AdapterSummary> {
    let info = webgpu_adapter_info().await;
    if info.is_null() || info.is_undefined() {
        return None;
    }
    serde_wasm_bindgen::from_value(info).ok()
}

/// Whether this page may run WebAssembly threads: cross-origin isolated, with shared memory.
pub fn thread_support() -> ThreadSupport {
    let global = js_sys::global();
    let isolated = Reflect::get(&global, &"crossOriginIsolated".into()).is_ok_and(|value| value.is_truthy());
    let descriptor = Object::new();
    for (key, value) in [("initial", JsValue::from(1)), ("maximum", JsValue::from(1)), ("shared", JsValue::TRUE)] {
        let _ = Reflect::set(&descriptor, &key.into(), &value);
    }
    let shared_memory = js_sys::WebAssembly::Memory::new(&descriptor).is_ok_and(|memory| {
        Reflect::get(&memory.buffer(), &"constructor".into())
            .is_ok_and(|constructor| Reflect::get(&constructor, &"name".into()).ok().and_then(|name| name.as_string()).as_deref() == Some("SharedArrayBuffer"))
    });
    let cores = web_sys::window().map(|window| window.navigator().hardware_concurrency() as usize).unwrap_or(1);
    let pool_failed = pool_failure_browser().is_some_and(|browser| Some(browser) == user_agent());
    ThreadSupport { isolated, shared_memory, cores, pool_failed }
}

/// Where the page keeps the user agent of a browser whose threaded module did not start, so that
/// a later visit neither offers nor downloads it; a browser update tries again.
const POOL_FAILED_KEY: &str = "vit-web-threads-failed";

fn user_agent() -> Option<String> {
    web_sys::window()?.navigator().user_agent().ok()
}

fn pool_failure_browser() -> Option<String> {
    web_sys::window()?.local_storage().ok().flatten()?.get_item(POOL_FAILED_KEY).ok().flatten()
}

/// Notes that the threaded module did not start in this browser.
pub fn remember_pool_failure() {
    if let (Some(storage), Some(agent)) = (web_sys::window().and_then(|window| window.local_storage().ok().flatten()), user_agent()) {
        let _ = storage.set_item(POOL_FAILED_KEY, &agent);
    }
}

/// Creates the device for `path`, and on WebGPU chooses this thread's GPU kernels for the adapter.
/// WebGPU must be initialised asynchronously, once, before any tensor exists on it.
pub async fn init_device(path: ComputePath) -> Result<Device, String> {
    // Before cubecl's first kernel needs its registries; the browser tests come in here, not
    // through the module's start function.
    super::constructors::run_static_constructors();
    match path {
        ComputePath::Cpu => Ok(Device::flex()),
        #[cfg(gpu)]
        ComputePath::WebGpu => {
            let device = Device::wgpu_options()
                .init_async()
                .await
                .map_err(|error| format!("WebGPU could not be initialised: {error}"))?;
            // Inside a browser cubecl cannot tell a software renderer from a GPU; the adapter's
            // own description can, and picks the kernels that run fastest on it.
            let software = adapter_summary().await.is_some_and(|adapter| adapter.is_software());
            let family = if software { KernelFamily::Software } else { KernelFamily::Hardware };
            crate::ops::webgpu::set_kernel_family(Some(family));
            Ok(device)
        }
        #[cfg(not(gpu))]
        ComputePath::WebGpu => Err("the threaded CPU module has no WebGPU".into()),
    }
}
