//! Colours for heatmaps: viridis, and a heat map blended over a photo.
//!
//! Viridis (van der Walt and Smith, matplotlib 1.5) is perceptually uniform and its lightness
//! rises monotonically, so a brighter patch always means more attention, also in greyscale and
//! for colour-blind readers; a rainbow map would invent edges that are not in the data.

/// Viridis at t = 0, 1/32, …, 1: the 256-entry `_viridis_data` table of matplotlib's
/// `lib/matplotlib/_cm_listed.py` (CC0, by Stéfan van der Walt and Nathaniel Smith), interpolated
/// linearly at `t × 255`. Linear interpolation between these 33 points stays within 1.7/255 of
/// the full table in every channel.
const VIRIDIS: [[f32; 3]; 33] = [
    [0.267004, 0.004874, 0.329415],
    [0.276987, 0.050151, 0.375542],
    [0.282302, 0.094624, 0.417024],
    [0.282902, 0.135449, 0.453035],
    [0.278919, 0.174879, 0.482972],
    [0.270788, 0.213324, 0.506643],
    [0.259266, 0.250672, 0.524378],
    [0.245374, 0.286704, 0.536971],
    [0.230223, 0.321297, 0.545488],
    [0.214836, 0.354470, 0.551027],
    [0.199995, 0.386377, 0.554533],
    [0.186132, 0.417256, 0.556682],
    [0.173302, 0.447386, 0.557850],
    [0.161265, 0.477036, 0.558125],
    [0.149668, 0.506440, 0.557329],
    [0.138415, 0.535767, 0.555090],
    [0.128148, 0.565107, 0.550893],
    [0.120875, 0.594465, 0.544158],
    [0.120325, 0.623765, 0.534308],
    [0.130961, 0.652859, 0.520817],
    [0.155378, 0.681539, 0.503240],
    [0.192974, 0.709556, 0.481231],
    [0.241467, 0.736626, 0.454543],
    [0.298636, 0.762445, 0.423019],
    [0.362859, 0.786695, 0.386589],
    [0.432985, 0.809056, 0.345271],
    [0.508094, 0.829231, 0.299221],
    [0.587266, 0.846982, 0.248871],
    [0.669358, 0.862217, 0.195444],
    [0.752867, 0.875089, 0.142650],
    [0.835913, 0.886110, 0.102462],
    [0.916550, 0.896130, 0.100822],
    [0.993248, 0.906157, 0.143936],
];

/// Viridis as 0–1 floats; `t` clamped to [0, 1], NaN treated as 0.
fn viridis_rgb(t: f32) -> [f32; 3] {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let position = t * (VIRIDIS.len() - 1) as f32;
    let index = (position as usize).min(VIRIDIS.len() - 2);
    let weight = position - index as f32;
    let (low, high) = (VIRIDIS[index], VIRIDIS[index + 1]);
    [0, 1, 2].map(|channel| low[channel] + weight * (high[channel] - low[channel]))
}

/// The viridis colour of `t` ∈ [0, 1] (dark purple at 0, yellow at 1). Values outside are
/// clamped, NaN counts as 0.
pub fn viridis(t: f32) -> [u8; 3] {
    viridis_rgb(t).map(|value| (255.0 * value).round() as u8)
}

/// Stretches values linearly onto [0, 1] (smallest → 0, largest → 1) so the colour map's whole
/// range shows the differences. All-equal values become 0 rather than 0/0; NaN values are
/// ignored for the bounds and stay NaN (drawn as 0).
pub fn normalize_min_max(values: &[f32]) -> Vec<f32> {
    let (min, max) = values
        .iter()
        .filter(|value| value.is_finite())
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(min, max), &value| {
            (min.min(value), max.max(value))
        });
    let span = max - min;
    values
        .iter()
        .map(|&value| {
            if span > 0.0 {
                ((value - min) / span).clamp(0.0, 1.0)
            } else if value.is_nan() {
                value
            } else {
                0.0
            }
        })
        .collect()
}

/// Opaque RGBA pixels for a grid of values in [0, 1] (an attention or similarity map), ready
/// for a canvas's `ImageData`.
///
/// # Shapes
/// - values: `[pixels]`, row-major
/// - output: `[pixels × 4]` bytes, RGBA
pub fn heatmap_rgba(values: &[f32]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|&value| {
            let [red, green, blue] = viridis(value);
            [red, green, blue, 255]
        })
        .collect()
}

/// A colour bar for the heat maps' legends: `steps` opaque pixels running from 0 (left) to 1.
///
/// # Shapes
/// - output: `[steps × 4]` bytes, RGBA, one row
pub fn colour_bar_rgba(steps: usize) -> Vec<u8> {
    let last = steps.saturating_sub(1).max(1) as f32;
    let ramp: Vec<f32> = (0..steps).map(|index| index as f32 / last).collect();
    heatmap_rgba(&ramp)
}

/// A heat map drawn over a photo: each pixel becomes `(1 − alpha) · photo + alpha · viridis(heat)`,
/// keeping the photo's own alpha. `alpha` is clamped to [0, 1] (NaN counts as 0); the heat is
/// expected already upsampled to the photo's size (see [`super::resize::upsample_bilinear`]).
///
/// # Shapes
/// - image_rgba: `[pixels × 4]` bytes, RGBA
/// - heat: `[pixels]`, values in [0, 1], same pixel order
/// - output: `[pixels × 4]` bytes, RGBA
///
/// # Panics
/// If `image_rgba` does not hold four bytes for every heat value.
pub fn heat_overlay(image_rgba: &[u8], heat: &[f32], alpha: f32) -> Vec<u8> {
    assert_eq!(image_rgba.len(), 4 * heat.len(), "expected one heat value per RGBA pixel");
    let alpha = if alpha.is_nan() { 0.0 } else { alpha.clamp(0.0, 1.0) };
    let mut blended = Vec::with_capacity(image_rgba.len());
    for (pixel, &value) in image_rgba.chunks_exact(4).zip(heat) {
        let colour = viridis(value);
        for (&photo, &heat) in pixel[..3].iter().zip(&colour) {
            let mixed = (1.0 - alpha) * photo as f32 + alpha * heat as f32;
            blended.push(mixed.round().clamp(0.0, 255.0) as u8);
        }
        blended.push(pixel[3]);
    }
    blended
}

/// An attention map over the patch grid drawn on a square image: the map upsampled bilinearly to
/// the image's side ([`super::resize::upsample_bilinear`]) and blended over it
/// ([`heat_overlay`]).
///
/// # Shapes
/// - image_rgba: `[side, side, 4]` bytes
/// - map: `[grid, grid]`, values in [0, 1]
/// - output: `[side, side, 4]` bytes
///
/// # Panics
/// If the image is not `side × side` RGBA or the map not `grid × grid`.
pub fn attention_overlay(image_rgba: &[u8], side: usize, map: &[f32], grid: usize, alpha: f32) -> Vec<u8> {
    let heat = super::resize::upsample_bilinear(map, grid, grid, side, side);
    heat_overlay(image_rgba, &heat, alpha)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rec. 709 luma of gamma-encoded RGB: a cheap proxy for perceived lightness.
    fn luma([red, green, blue]: [f32; 3]) -> f32 {
        0.2126 * red + 0.7152 * green + 0.0722 * blue
    }

    #[test]
    fn endpoints_are_viridis_purple_and_yellow() {
        // matplotlib's viridis(0.0) is #440154 and viridis(1.0) is #fde725.
        assert_eq!(viridis(0.0), [0x44, 0x01, 0x54]);
        assert_eq!(viridis(1.0), [0xfd, 0xe7, 0x25]);
        // Its middle entry (index 128 of 256, t ≈ 0.5) is #21918c.
        assert_eq!(viridis(128.0 / 255.0), [0x21, 0x91, 0x8c]);
    }

    #[test]
    fn values_outside_the_unit_interval_are_clamped() {
        assert_eq!(viridis(-3.0), viridis(0.0));
        assert_eq!(viridis(7.5), viridis(1.0));
        assert_eq!(viridis(f32::NAN), viridis(0.0));
        assert_eq!(viridis(f32::INFINITY), viridis(1.0));
    }

    #[test]
    fn luminance_rises_monotonically() {
        let lumas: Vec<f32> =
            (0..=1000).map(|step| luma(viridis_rgb(step as f32 / 1000.0))).collect();
        assert!(
            lumas.windows(2).all(|pair| pair[1] > pair[0]),
            "viridis must get lighter as t grows"
        );
        assert!(lumas[1000] > 5.0 * lumas[0]);
    }

    #[test]
    fn overlay_blends_one_pixel() {
        // viridis(0) = (68, 1, 84); with alpha ¼: 0.75·100 + 0.25·68 = 92,
        // 0.75·50 + 0.25·1 = 37.75 → 38, 0.75·200 + 0.25·84 = 171; alpha byte kept.
        assert_eq!(heat_overlay(&[100, 50, 200, 201], &[0.0], 0.25), [92, 38, 171, 201]);
        // alpha 0 leaves the photo, alpha 1 (or more) shows only the colour map.
        assert_eq!(heat_overlay(&[100, 50, 200, 255], &[1.0], 0.0), [100, 50, 200, 255]);
        assert_eq!(heat_overlay(&[100, 50, 200, 255], &[1.0], 2.0), [253, 231, 37, 255]);
    }

    #[test]
    #[should_panic(expected = "one heat value per RGBA pixel")]
    fn overlay_refuses_mismatched_sizes() {
        heat_overlay(&[0; 8], &[0.5], 0.5);
    }

    #[test]
    fn heatmap_pixels_are_opaque_viridis() {
        assert_eq!(heatmap_rgba(&[0.0, 1.0]), [0x44, 0x01, 0x54, 255, 0xfd, 0xe7, 0x25, 255]);
    }

    #[test]
    fn colour_bar_runs_from_purple_to_yellow() {
        let bar = colour_bar_rgba(256);
        assert_eq!(bar.len(), 256 * 4);
        assert_eq!(bar[..3], viridis(0.0));
        assert_eq!(bar[255 * 4..255 * 4 + 3], viridis(1.0));
        assert_eq!(colour_bar_rgba(1)[..3], viridis(0.0));
    }

    #[test]
    fn min_max_normalisation() {
        assert_eq!(normalize_min_max(&[2.0, 4.0, 3.0]), [0.0, 1.0, 0.5]);
        assert_eq!(normalize_min_max(&[5.0, 5.0]), [0.0, 0.0]);
        let with_nan = normalize_min_max(&[1.0, f32::NAN, 3.0]);
        assert_eq!((with_nan[0], with_nan[2]), (0.0, 1.0));
        assert!(with_nan[1].is_nan());
    }
}
