//! What the device's limits allow, read from the device burn made.

use burn::backend::DispatchDevice;
use burn::tensor::Device;

/// The largest buffer `device` binds, in bytes: `maxStorageBufferBindingSize`, or `maxBufferSize`
/// where that is smaller, as the device was created with (cubecl asks for the adapter's limits
/// and allocates nothing larger). `None` off the GPU.
///
/// WebGPU guarantees only 128 MiB, and a training step's largest buffer grows with the batch
/// (`training::gpu_step_too_large`). Read from the device rather than asked of the adapter again,
/// so it is the limit the step runs under.
pub fn largest_binding(device: &Device) -> Option<u64> {
    match device.as_dispatch().clone().inner() {
        DispatchDevice::Cube(cube) => Some(cube.client().properties().memory.max_page_size),
        _ => None,
    }
}
