//! From pixels to the model's input: CIFAR-10's per-channel normalisation.

/// Per-channel mean of CIFAR-10's training images (R, G, B), on the 0–1 scale.
pub const CIFAR10_MEAN: [f32; 3] = [0.4914, 0.4822, 0.4465];
/// Per-channel standard deviation of CIFAR-10's training images.
pub const CIFAR10_STD: [f32; 3] = [0.2470, 0.2435, 0.2616];

/// Turns interleaved RGBA bytes (a canvas's `ImageData`) into normalised planar RGB floats,
/// `[3, height, width]` row by row, ignoring alpha.
///
/// # Panics
/// If `rgba` is not `4 × pixels` bytes long.
pub fn normalize_rgba(rgba: &[u8], pixels: usize) -> Vec<f32> {
    assert_eq!(rgba.len(), 4 * pixels, "expected {pixels} RGBA pixels");
    let mut planar = vec![0.0; 3 * pixels];
    for (index, pixel) in rgba.chunks_exact(4).enumerate() {
        for channel in 0..3 {
            planar[channel * pixels + index] = normalize(pixel[channel], channel);
        }
    }
    planar
}

/// Normalises planar RGB bytes (CIFAR-10's record layout) to floats of the same layout.
pub fn normalize_planar(rgb: &[u8]) -> Vec<f32> {
    let pixels = rgb.len() / 3;
    rgb.iter()
        .enumerate()
        .map(|(index, &value)| normalize(value, index / pixels))
        .collect()
}

fn normalize(value: u8, channel: usize) -> f32 {
    (value as f32 / 255.0 - CIFAR10_MEAN[channel]) / CIFAR10_STD[channel]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rgba_becomes_planar_and_normalised() {
        // Two pixels: pure red, then mid grey; alpha must be ignored.
        let rgba = [255, 0, 0, 7, 128, 128, 128, 255];
        let planar = normalize_rgba(&rgba, 2);
        let expected_red = (1.0 - CIFAR10_MEAN[0]) / CIFAR10_STD[0];
        assert!((planar[0] - expected_red).abs() < 1e-6);
        assert!((planar[2] - (0.0 - CIFAR10_MEAN[1]) / CIFAR10_STD[1]).abs() < 1e-6);
        assert!((planar[5] - (128.0 / 255.0 - CIFAR10_MEAN[2]) / CIFAR10_STD[2]).abs() < 1e-6);
        assert_eq!(planar, normalize_planar(&[255, 128, 0, 128, 0, 128]));
    }
}
