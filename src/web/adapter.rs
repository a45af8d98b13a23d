//! Finding the WebGPU adapter and initialising the burn device for the chosen path.

use burn::tensor::Device;
use wasm_bindgen::prelude::*;

use crate::compute::{AdapterSummary, ComputePath};

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

/// Creates the device for `path`. WebGPU must be initialised asynchronously, once, before any
/// tensor exists on it.
pub async fn init_device(path: ComputePath) -> Result<Device, String> {
    // Before cubecl's first kernel needs its registries; the browser tests come in here, not
    // through the module's start function.
    super::constructors::run_static_constructors();
    match path {
        ComputePath::Cpu => Ok(Device::flex()),
        ComputePath::WebGpu => Device::wgpu_options()
            .init_async()
            .await
            .map_err(|error| format!("WebGPU could not be initialised: {error}")),
    }
}
