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

/// Normalises one planar RGB image (`[3, pixels]` bytes) into `out`, with a 256-entry table per
/// channel instead of a division per byte: the batch builder's hot loop. Same values as
/// [`normalize_planar`], bit for bit.
///
/// # Panics
/// If `out` is not as long as `rgb`, or `rgb` is not three equal planes.
pub fn normalize_planar_into(rgb: &[u8], out: &mut [f32]) {
    assert_eq!(rgb.len(), out.len(), "one float per byte");
    assert_eq!(rgb.len() % 3, 0, "three planes");
    let pixels = rgb.len() / 3;
    for (channel, table) in NORMALIZED.iter().enumerate() {
        let span = channel * pixels..(channel + 1) * pixels;
        for (value, &byte) in out[span.clone()].iter_mut().zip(&rgb[span]) {
            *value = table[byte as usize];
        }
    }
}

/// `normalize(byte, channel)` for every byte, computed at compile time.
const NORMALIZED: [[f32; 256]; 3] = {
    let mut table = [[0.0; 256]; 3];
    let mut channel = 0;
    while channel < 3 {
        let mut value = 0;
        while value < 256 {
            table[channel][value] = normalize(value as u8, channel);
            value += 1;
        }
        channel += 1;
    }
    table
};

const fn normalize(value: u8, channel: usize) -> f32 {
    (value as f32 / 255.0 - CIFAR10_MEAN[channel]) / CIFAR10_STD[channel]
}

/// Planar RGB bytes `[3, height, width]` (CIFAR-10's layout) to interleaved opaque RGBA for a
/// canvas's `ImageData`.
pub fn planar_to_rgba(planar: &[u8]) -> Vec<u8> {
    let pixels = planar.len() / 3;
    let mut rgba = Vec::with_capacity(4 * pixels);
    for index in 0..pixels {
        rgba.extend_from_slice(&[planar[index], planar[pixels + index], planar[2 * pixels + index], 255]);
    }
    rgba
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

    #[test]
    fn the_table_matches_the_formula_bit_for_bit() {
        let rgb: Vec<u8> = (0..=255).chain(0..=255).chain(0..=255).collect();
        let mut out = vec![0.0; rgb.len()];
        normalize_planar_into(&rgb, &mut out);
        assert_eq!(out, normalize_planar(&rgb));
    }

    #[test]
    fn planar_becomes_interleaved_rgba() {
        assert_eq!(planar_to_rgba(&[1, 2, 3, 4, 5, 6]), [1, 3, 5, 255, 2, 4, 6, 255]);
    }
}
