//! Whether a training step fits in the memory a browser gives the CPU path. The step keeps every
//! layer's activations for its backward pass, in the worker's WebAssembly memory, which cannot
//! grow past 4 GiB. A batch that needs more makes a thread of the pool trap, and the page learns
//! of it only when the worker falls silent; this says so before the run starts, with the largest
//! batch that fits.

use crate::data::IMAGE_BYTES;
use crate::model::Preset;

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
}
