//! Whether a training step fits in what a browser gives it, said before the run starts, with
//! the largest batch that fits.
//!
//! - The CPU path: the step keeps every layer's activations for its backward pass, in the
//!   worker's WebAssembly memory, which cannot grow past 4 GiB. A batch that needs more makes a
//!   thread of the pool trap, and the page learns of it only when the worker falls silent.
//! - WebGPU: a device binds no buffer larger than its `maxStorageBufferBindingSize` (128 MiB
//!   where a browser gives only WebGPU's guaranteed minimum, 1 GiB in Chromium on SwiftShader).
//!   A step that would bind one cannot run. The worker does not ask [`gpu_step_too_large`] yet:
//!   it needs the adapter's limit from `www/gpu.js` and a page test that lowers it.

use crate::data::IMAGE_BYTES;
use crate::model::{Preset, VitConfig};

/// All the memory a wasm32 module can address, the page's and its threads' alike.
const WASM_MEMORY_BYTES: u64 = 4 << 30;

/// The peak memory of one training step of the whole model on the CPU backend: a part that does
/// not grow with the batch, and a part per image. Measured natively as the peak resident size
/// of `bench --preset P --sections train --batches B --steps 1 --untimed 1` (`/usr/bin/time -f
/// %M`, 2 threads, 2026-12-07) at two batches: tiny 554 MB at 256 and 2,161 MB at 1024, small
/// 1,057 MB at 128 and 3,989 MB at 512. The page's wasm heap takes no more than that: in a page on
/// two threads the small model trains at batch 539, the largest this lets through, and at 2,048
/// its threads ran out of memory.
fn step_bytes(preset: Preset) -> (u64, u64) {
    match preset {
        Preset::Tiny => (18_600_000, 2_092_000),
        Preset::Small => (79_400_000, 7_637_000),
    }
}

/// The threads of the measurement in [`step_bytes`]. Each thread computes its slice of the batch
/// into a gradient of its own, so each thread more holds one more.
const MEASURED_THREADS: usize = 2;

/// Why training the whole `preset` model at `batch` on the CPU path, on `threads` threads, would
/// not fit in a browser's WebAssembly memory, with `stored_images` images loaded (of which
/// `train_images` are trained on: a batch larger than that is that many images); `None` when it
/// fits.
pub fn cpu_step_too_large(preset: Preset, batch: usize, threads: usize, train_images: usize, stored_images: usize) -> Option<String> {
    let (fixed, per_image) = step_bytes(preset);
    let gradient = 4 * preset.config().parameter_count() as u64;
    let images = batch.min(train_images.max(1)) as u64;
    let held = fixed
        + gradient * threads.saturating_sub(MEASURED_THREADS) as u64
        + (IMAGE_BYTES * stored_images) as u64; // the loaded images, which the worker holds too
    let needed = held + per_image * images;
    if needed <= WASM_MEMORY_BYTES {
        return None;
    }
    let largest = WASM_MEMORY_BYTES.saturating_sub(held) / per_image;
    let advice = if largest == 0 { "no batch fits".to_string() } else { format!("batch {largest} or less fits") };
    Some(format!(
        "Batch {batch} of the {} model needs about {:.1} GB of memory for one training step on the CPU path, and a \
         browser gives a page at most {:.1} GB: {advice}, or train on WebGPU.",
        preset.name(),
        needed as f64 / 1e9,
        WASM_MEMORY_BYTES as f64 / 1e9,
    ))
}

/// The largest buffer one training step of `config` at `batch` binds on WebGPU, in bytes: its
/// largest activation. That is the QKV projection's output and its gradient (`3D` floats a
/// token); the attention weights (`heads × tokens` a token) and the MLP's hidden layer
/// (`mlp_dim`) are smaller in both presets. The products' partial sums stop growing with the
/// batch (at most about 70 MB, the wide tile's 342 ranges of the QKV weight's gradient), under
/// WebGPU's guaranteed 128 MiB. `tests/gpu_ops.rs` checks this against the buffers the launches
/// of a real step bind.
pub fn gpu_step_largest_binding(config: &VitConfig, batch: usize) -> u64 {
    let per_token = (3 * config.embed_dim).max(config.mlp_dim).max(config.heads * config.tokens());
    4 * (batch * config.tokens() * per_token) as u64
}

/// Why training `preset` at `batch` (at most `train_images` images a step) would bind a buffer
/// larger than `largest_binding` bytes, the device's limit; `None` when it fits or the limit is
/// unknown (0).
pub fn gpu_step_too_large(preset: Preset, batch: usize, train_images: usize, largest_binding: u64) -> Option<String> {
    let config = preset.config();
    let images = batch.min(train_images.max(1));
    let needed = gpu_step_largest_binding(&config, images);
    if largest_binding == 0 || needed <= largest_binding {
        return None;
    }
    let largest = largest_binding / gpu_step_largest_binding(&config, 1);
    let advice = if largest == 0 { "no batch fits".to_string() } else { format!("batch {largest} or less fits") };
    Some(format!(
        "Batch {batch} of the {} model needs a {:.0} MB buffer for one training step on WebGPU, and this browser's \
         WebGPU takes buffers of at most {:.0} MB: {advice}, or train on the CPU path.",
        preset.name(),
        needed as f64 / 1e6,
        largest_binding as f64 / 1e6,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CIFAR: usize = 20_000;
    const STORED: usize = 30_000;

    #[test]
    fn the_batches_the_page_trains_fit() {
        for batch in [16, 64, 256, 1024] {
            assert_eq!(cpu_step_too_large(Preset::Tiny, batch, 2, CIFAR, STORED), None, "tiny, batch {batch}");
        }
        // What was seen in the page: the small model trains at batch 512.
        assert_eq!(cpu_step_too_large(Preset::Small, 512, 2, CIFAR, STORED), None);
    }

    #[test]
    fn a_batch_past_the_wasm_memory_is_refused_with_the_largest_that_fits() {
        // What was seen in the page: the small model at batch 2,048 ran its threads out of memory.
        let message = cpu_step_too_large(Preset::Small, 2048, 2, CIFAR, STORED).expect("refused");
        assert_eq!(
            message,
            "Batch 2048 of the small model needs about 15.8 GB of memory for one training step on the CPU path, and a \
             browser gives a page at most 4.3 GB: batch 539 or less fits, or train on WebGPU."
        );
        let largest = 539;
        assert_eq!(cpu_step_too_large(Preset::Small, largest, 2, CIFAR, STORED), None);
        assert!(cpu_step_too_large(Preset::Small, largest + 1, 2, CIFAR, STORED).is_some());
        assert!(cpu_step_too_large(Preset::Tiny, 4096, 2, CIFAR, STORED).expect("refused").contains("batch 2000 or less fits"));
    }

    #[test]
    fn each_thread_past_the_measured_two_holds_a_gradient_more() {
        // The small model's gradient is 12.8 MB: thirty threads more are 384 MB, fifty images.
        let message = cpu_step_too_large(Preset::Small, 2048, 32, CIFAR, STORED).expect("refused");
        assert!(message.contains("about 16.2 GB") && message.contains("batch 489 or less fits"), "{message}");
        assert_eq!(cpu_step_too_large(Preset::Small, 2048, 1, CIFAR, STORED), cpu_step_too_large(Preset::Small, 2048, 2, CIFAR, STORED));
    }

    #[test]
    fn a_batch_larger_than_the_training_set_counts_as_the_set() {
        // 300 pictures of a person's own classes: every step is at most 300 images.
        assert_eq!(cpu_step_too_large(Preset::Small, 4096, 2, 300, 400), None);
        assert!(cpu_step_too_large(Preset::Small, 4096, 2, 1000, 1200).is_some());
    }

    /// WebGPU's guaranteed `maxStorageBufferBindingSize`, and Chromium's on SwiftShader.
    const WEBGPU_MINIMUM: u64 = 128 << 20;
    const SWIFTSHADER: u64 = 1 << 30;

    #[test]
    fn the_largest_webgpu_buffer_is_the_qkv_projection() {
        // 65 tokens × 384 floats an image in the tiny model, 65 × 768 in the small.
        assert_eq!(gpu_step_largest_binding(&Preset::Tiny.config(), 256), 256 * 65 * 384 * 4);
        assert_eq!(gpu_step_largest_binding(&Preset::Small.config(), 1), 65 * 768 * 4);
    }

    #[test]
    fn a_batch_past_the_webgpu_binding_limit_is_refused_with_the_largest_that_fits() {
        assert_eq!(gpu_step_too_large(Preset::Tiny, 1024, CIFAR, WEBGPU_MINIMUM), None);
        let message = gpu_step_too_large(Preset::Tiny, 2048, CIFAR, WEBGPU_MINIMUM).expect("refused");
        assert_eq!(
            message,
            "Batch 2048 of the tiny model needs a 204 MB buffer for one training step on WebGPU, and this browser's \
             WebGPU takes buffers of at most 134 MB: batch 1344 or less fits, or train on the CPU path."
        );
        assert_eq!(gpu_step_too_large(Preset::Tiny, 1344, CIFAR, WEBGPU_MINIMUM), None);
        assert!(gpu_step_too_large(Preset::Small, 673, CIFAR, WEBGPU_MINIMUM).is_some());
        // Every batch the page's form allows fits Chromium's SwiftShader.
        assert_eq!(gpu_step_too_large(Preset::Small, 4096, CIFAR, SWIFTSHADER), None);
    }

    #[test]
    fn an_unknown_binding_limit_or_a_small_training_set_is_not_refused() {
        assert_eq!(gpu_step_too_large(Preset::Small, 4096, CIFAR, 0), None);
        assert_eq!(gpu_step_too_large(Preset::Tiny, 4096, 300, WEBGPU_MINIMUM), None);
    }
}
