//! Augmentation of one planar 32×32 RGB image, seeded, without allocating.
//!
//! Images stay `u8` here: the dataset is stored as bytes, one image is a 3 KB buffer that fits
//! on the stack, and normalising to `f32` happens once afterwards, in [`super::batch`], through a
//! lookup table. Interpolated values are rounded to the nearest byte, an error of at most
//! 0.5/255: below the source's own JPEG noise, and what torchvision's PIL transforms (the
//! reference's) do too, since they also work on 8-bit images before `ToTensor`.
//!
//! The heavy recipe folds crop, flip and rotation into one inverse mapping, so each output pixel
//! is interpolated once (less blur, one pass). Trigonometry comes from the platform's `libm`,
//! so across platforms a seed gives the same transform up to a rare ±1 in a rounded byte.

use serde::{Deserialize, Serialize};

use super::rng::Pcg32;
use super::{IMAGE_BYTES, IMAGE_PIXELS, IMAGE_SIDE};

/// Fill for pixels a rotation uncovers and for erased patches: CIFAR-10's mean colour, which
/// normalises to about 0 (as torchvision's `RandomErasing(value=0)` on normalised tensors).
pub const MEAN_COLOUR: [u8; 3] = [125, 123, 114];

/// Random resized crop: the crop's share of the image's area, and its aspect-ratio range.
pub const CROP_AREA: (f32, f32) = (0.6, 1.0);
pub const CROP_ASPECT: (f32, f32) = (3.0 / 4.0, 4.0 / 3.0);
/// Random crop with padding: the image shifted by up to this many pixels each way, what the
/// shift uncovers black, as torchvision's `RandomCrop(32, padding=4)` (fill 0) does.
pub const CROP_PADDING: usize = 4;
/// Rotation: uniform in ±this many degrees.
pub const ROTATION_DEGREES: f32 = 15.0;
/// Colour jitter: brightness, contrast and saturation factors drawn from 1 ± this.
pub const JITTER: f32 = 0.4;
/// Random erasing: how often, the patch's share of the area, and its aspect-ratio range.
pub const ERASE_PROBABILITY: f32 = 0.25;
pub const ERASE_AREA: (f32, f32) = (0.02, 0.25);
pub const ERASE_ASPECT: (f32, f32) = (0.3, 3.3);

/// Which augmentation training applies to each image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum AugmentRecipe {
    /// The image as stored (evaluation).
    None,
    /// Random horizontal flip, p = 0.5: the reference recipe.
    #[default]
    Flip,
    /// Random crop with 4 pixels of padding, then random horizontal flip: the usual CIFAR
    /// recipe of the ResNet and ViT literature.
    Crop,
    /// Random resized crop, flip, rotation ±15°, colour jitter and random erasing.
    Heavy,
}

/// Writes an augmented copy of `image` into `out`.
///
/// # Shapes
/// `image` and `out`: `[3, 32, 32]` planar u8.
pub fn augment(image: &[u8], out: &mut [u8], recipe: AugmentRecipe, rng: &mut Pcg32) {
    assert_eq!(image.len(), IMAGE_BYTES, "an image is 3 × 32 × 32 bytes");
    match recipe {
        AugmentRecipe::None => out.copy_from_slice(image),
        AugmentRecipe::Flip => {
            out.copy_from_slice(image);
            if rng.chance(0.5) {
                flip_horizontal(out);
            }
        }
        AugmentRecipe::Crop => {
            let span = 2 * CROP_PADDING + 1;
            let (dx, dy) = (rng.below(span) as isize, rng.below(span) as isize);
            shift(image, out, dx - CROP_PADDING as isize, dy - CROP_PADDING as isize);
            if rng.chance(0.5) {
                flip_horizontal(out);
            }
        }
        AugmentRecipe::Heavy => {
            let crop = CropBox::random(rng);
            let mirror = rng.chance(0.5);
            let degrees = rng.uniform(-ROTATION_DEGREES, ROTATION_DEGREES);
            resample(image, out, crop, degrees, mirror);
            let brightness = rng.uniform(1.0 - JITTER, 1.0 + JITTER);
            let contrast = rng.uniform(1.0 - JITTER, 1.0 + JITTER);
            let saturation = rng.uniform(1.0 - JITTER, 1.0 + JITTER);
            jitter_colour(out, brightness, contrast, saturation);
            if let Some(patch) = Rectangle::random_erasure(rng) {
                erase(out, patch, MEAN_COLOUR);
            }
        }
    }
}

/// Mirrors the image left to right, in place.
pub fn flip_horizontal(image: &mut [u8]) {
    for row in image.chunks_exact_mut(IMAGE_SIDE) {
        row.reverse();
    }
}

/// Moves the image `dx` pixels right and `dy` down; what moves in from outside is black. The
/// 32×32 window at offset (padding − dx, padding − dy) of the zero-padded image.
///
/// # Shapes
/// `image` and `out`: `[3, 32, 32]` planar u8.
pub fn shift(image: &[u8], out: &mut [u8], dx: isize, dy: isize) {
    assert!(image.len() == IMAGE_BYTES && out.len() == IMAGE_BYTES, "images are 3 × 32 × 32 bytes");
    let side = IMAGE_SIDE as isize;
    out.fill(0);
    let width = (side - dx.abs()).max(0) as usize;
    let (from_x, to_x) = if dx >= 0 { (0, dx as usize) } else { ((-dx) as usize, 0) };
    for channel in 0..3 {
        let plane = channel * IMAGE_PIXELS;
        for y in 0..side {
            let source_y = y - dy;
            if !(0..side).contains(&source_y) || width == 0 {
                continue;
            }
            let source = plane + source_y as usize * IMAGE_SIDE + from_x;
            let target = plane + y as usize * IMAGE_SIDE + to_x;
            out[target..target + width].copy_from_slice(&image[source..source + width]);
        }
    }
}

/// A crop of the source image, in pixels (sub-pixel positions allowed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CropBox {
    pub x: f32,
    pub y: f32,
    pub width: f32,
    pub height: f32,
}

impl CropBox {
    /// The whole image.
    pub const FULL: CropBox = CropBox { x: 0.0, y: 0.0, width: IMAGE_SIDE as f32, height: IMAGE_SIDE as f32 };

    /// torchvision's `RandomResizedCrop` draw: area and aspect ratio at random, ten tries to
    /// fit, else the whole image.
    pub fn random(rng: &mut Pcg32) -> CropBox {
        let side = IMAGE_SIDE as f32;
        for _ in 0..10 {
            let area = rng.uniform(CROP_AREA.0, CROP_AREA.1) * side * side;
            let aspect = rng.uniform(CROP_ASPECT.0.ln(), CROP_ASPECT.1.ln()).exp();
            let (width, height) = ((area * aspect).sqrt(), (area / aspect).sqrt());
            if width <= side && height <= side {
                let x = rng.uniform(0.0, side - width);
                let y = rng.uniform(0.0, side - height);
                return CropBox { x, y, width, height };
            }
        }
        CropBox::FULL
    }
}

/// Resizes `crop` of `image` to 32×32, mirrors it if asked, and rotates it `degrees`
/// counter-clockwise about the centre, interpolating bilinearly once; corners the rotation
/// uncovers take [`MEAN_COLOUR`].
///
/// # Shapes
/// `image` and `out`: `[3, 32, 32]` planar u8.
pub fn resample(image: &[u8], out: &mut [u8], crop: CropBox, degrees: f32, mirror: bool) {
    assert!(image.len() == IMAGE_BYTES && out.len() == IMAGE_BYTES, "images are 3 × 32 × 32 bytes");
    let side = IMAGE_SIDE as f32;
    let centre = side / 2.0;
    let (sin, cos) = degrees.to_radians().sin_cos();
    let (scale_x, scale_y) = (crop.width / side, crop.height / side);
    let last = (IMAGE_SIDE - 1) as i32;
    for y in 0..IMAGE_SIDE {
        for x in 0..IMAGE_SIDE {
            // Output pixel centre → (un-mirror) → (un-rotate) → source position in the crop.
            let mut dx = x as f32 + 0.5 - centre;
            let dy = y as f32 + 0.5 - centre;
            if mirror {
                dx = -dx;
            }
            let (rx, ry) = (dx * cos - dy * sin + centre, dx * sin + dy * cos + centre);
            // In index space, where pixel i's centre sits at i.
            let source_x = crop.x + rx * scale_x - 0.5;
            let source_y = crop.y + ry * scale_y - 0.5;
            let pixel = y * IMAGE_SIDE + x;
            if !(-0.5..=side - 0.5).contains(&source_x) || !(-0.5..=side - 0.5).contains(&source_y) {
                for (channel, &fill) in MEAN_COLOUR.iter().enumerate() {
                    out[channel * IMAGE_PIXELS + pixel] = fill;
                }
                continue;
            }
            let (left, top) = (source_x.floor(), source_y.floor());
            let (weight_x, weight_y) = (source_x - left, source_y - top);
            let (left, top) = (left as i32, top as i32);
            let x0 = left.clamp(0, last) as usize;
            let x1 = (left + 1).clamp(0, last) as usize;
            let y0 = top.clamp(0, last) as usize * IMAGE_SIDE;
            let y1 = (top + 1).clamp(0, last) as usize * IMAGE_SIDE;
            for channel in 0..3 {
                let plane = &image[channel * IMAGE_PIXELS..(channel + 1) * IMAGE_PIXELS];
                let upper = lerp(plane[y0 + x0], plane[y0 + x1], weight_x);
                let lower = lerp(plane[y1 + x0], plane[y1 + x1], weight_x);
                out[channel * IMAGE_PIXELS + pixel] = to_byte(upper + (lower - upper) * weight_y);
            }
        }
    }
}

/// torchvision's `ColorJitter` brightness, contrast and saturation (no hue: it needs HSV and
/// costs more than the rest together), applied in that order and clamped once at the end.
/// Factors of 1 leave the image unchanged.
pub fn jitter_colour(image: &mut [u8], brightness: f32, contrast: f32, saturation: f32) {
    let (red, rest) = image.split_at_mut(IMAGE_PIXELS);
    let (green, blue) = rest.split_at_mut(IMAGE_PIXELS);
    let grey = |r: f32, g: f32, b: f32| 0.299 * r + 0.587 * g + 0.114 * b;
    let mut grey_sum = 0.0;
    for pixel in 0..IMAGE_PIXELS {
        grey_sum += grey(red[pixel] as f32, green[pixel] as f32, blue[pixel] as f32);
    }
    let grey_mean = brightness * grey_sum / IMAGE_PIXELS as f32;
    for pixel in 0..IMAGE_PIXELS {
        let contrasted = |value: u8| (value as f32 * brightness - grey_mean) * contrast + grey_mean;
        let (r, g, b) = (contrasted(red[pixel]), contrasted(green[pixel]), contrasted(blue[pixel]));
        let grey = grey(r, g, b);
        red[pixel] = to_byte((r - grey) * saturation + grey);
        green[pixel] = to_byte((g - grey) * saturation + grey);
        blue[pixel] = to_byte((b - grey) * saturation + grey);
    }
}

/// A rectangle of whole pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rectangle {
    pub x: usize,
    pub y: usize,
    pub width: usize,
    pub height: usize,
}

impl Rectangle {
    /// torchvision's `RandomErasing` draw: with probability [`ERASE_PROBABILITY`], a patch of
    /// random area and aspect ratio at a random place (ten tries to fit), else `None`.
    pub fn random_erasure(rng: &mut Pcg32) -> Option<Rectangle> {
        if !rng.chance(ERASE_PROBABILITY) {
            return None;
        }
        let side = IMAGE_SIDE as f32;
        for _ in 0..10 {
            let area = rng.uniform(ERASE_AREA.0, ERASE_AREA.1) * side * side;
            let aspect = rng.uniform(ERASE_ASPECT.0.ln(), ERASE_ASPECT.1.ln()).exp();
            let height = ((area * aspect).sqrt() + 0.5) as usize;
            let width = ((area / aspect).sqrt() + 0.5) as usize;
            if (1..IMAGE_SIDE).contains(&height) && (1..IMAGE_SIDE).contains(&width) {
                let x = rng.below(IMAGE_SIDE - width + 1);
                let y = rng.below(IMAGE_SIDE - height + 1);
                return Some(Rectangle { x, y, width, height });
            }
        }
        None
    }
}

/// Paints `patch` with `fill` (one value per channel).
///
/// # Panics
/// If the patch reaches outside the image.
pub fn erase(image: &mut [u8], patch: Rectangle, fill: [u8; 3]) {
    assert!(patch.x + patch.width <= IMAGE_SIDE && patch.y + patch.height <= IMAGE_SIDE, "{patch:?} is outside the image");
    for (channel, &value) in fill.iter().enumerate() {
        for row in patch.y..patch.y + patch.height {
            let start = channel * IMAGE_PIXELS + row * IMAGE_SIDE + patch.x;
            image[start..start + patch.width].fill(value);
        }
    }
}

fn lerp(from: u8, to: u8, weight: f32) -> f32 {
    from as f32 + (to as f32 - from as f32) * weight
}

/// Rounds to the nearest byte, clamping to 0–255.
fn to_byte(value: f32) -> u8 {
    (value.clamp(0.0, 255.0) + 0.5) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An image whose every byte tells where it is: a diagonal ramp per channel.
    fn pattern() -> Vec<u8> {
        (0..IMAGE_BYTES).map(|index| ((index * 7 + index / 32 * 3) % 256) as u8).collect()
    }

    fn at(image: &[u8], channel: usize, x: usize, y: usize) -> u8 {
        image[channel * IMAGE_PIXELS + y * IMAGE_SIDE + x]
    }

    #[test]
    fn flip_mirrors_exactly_and_twice_is_identity() {
        let original = pattern();
        let mut image = original.clone();
        flip_horizontal(&mut image);
        for channel in 0..3 {
            for y in 0..IMAGE_SIDE {
                for x in 0..IMAGE_SIDE {
                    assert_eq!(at(&image, channel, x, y), at(&original, channel, IMAGE_SIDE - 1 - x, y));
                }
            }
        }
        flip_horizontal(&mut image);
        assert_eq!(image, original);
    }

    #[test]
    fn shift_moves_every_pixel_and_fills_black() {
        let original = pattern();
        let mut out = vec![7; IMAGE_BYTES];
        shift(&original, &mut out, 0, 0);
        assert_eq!(out, original);
        for (dx, dy) in [(3, -2), (-4, 4), (1, 0), (0, -1)] {
            shift(&original, &mut out, dx, dy);
            for channel in 0..3 {
                for y in 0..IMAGE_SIDE as isize {
                    for x in 0..IMAGE_SIDE as isize {
                        let (sx, sy) = (x - dx, y - dy);
                        let inside = (0..32).contains(&sx) && (0..32).contains(&sy);
                        let expected = if inside { at(&original, channel, sx as usize, sy as usize) } else { 0 };
                        assert_eq!(at(&out, channel, x as usize, y as usize), expected, "shift ({dx}, {dy}) at ({x}, {y})");
                    }
                }
            }
        }
    }

    #[test]
    fn crop_shifts_by_at_most_the_padding_and_covers_every_offset() {
        // A one-pixel image: where the pixel lands tells the shift (or its mirror).
        let mut dot = vec![0; IMAGE_BYTES];
        dot[16 * IMAGE_SIDE + 16] = 255;
        let mut out = vec![0; IMAGE_BYTES];
        let mut rng = Pcg32::new(3, 0);
        let mut rows = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            augment(&dot, &mut out, AugmentRecipe::Crop, &mut rng);
            let at = out[..IMAGE_PIXELS].iter().position(|&value| value == 255).expect("the dot stays inside");
            let (x, y) = (at % IMAGE_SIDE, at / IMAGE_SIDE);
            assert!((12..=20).contains(&y) && (11..=20).contains(&x), "({x}, {y})");
            rows.insert(y);
        }
        assert_eq!(rows.len(), 2 * CROP_PADDING + 1, "every vertical offset is drawn");
    }

    #[test]
    fn resample_without_a_transform_is_identity_and_mirror_is_a_flip() {
        let original = pattern();
        let mut out = vec![0; IMAGE_BYTES];
        resample(&original, &mut out, CropBox::FULL, 0.0, false);
        assert_eq!(out, original);
        resample(&original, &mut out, CropBox::FULL, 0.0, true);
        let mut flipped = original.clone();
        flip_horizontal(&mut flipped);
        assert_eq!(out, flipped);
    }

    #[test]
    fn rotation_by_90_degrees_turns_the_image_counter_clockwise() {
        let original = pattern();
        let mut out = vec![0; IMAGE_BYTES];
        resample(&original, &mut out, CropBox::FULL, 90.0, false);
        for channel in 0..3 {
            for y in 0..IMAGE_SIDE {
                for x in 0..IMAGE_SIDE {
                    // The top-right corner moves to the top-left.
                    assert_eq!(at(&out, channel, x, y), at(&original, channel, IMAGE_SIDE - 1 - y, x), "({x}, {y})");
                }
            }
        }
    }

    #[test]
    fn a_crop_is_stretched_over_the_whole_image() {
        // A horizontal ramp, 8 per column; bilinear interpolation reproduces it exactly. The left
        // half stretched to full width: output column x samples source column x/2 - 1/4.
        let ramp: Vec<u8> = (0..IMAGE_BYTES).map(|index| (index % IMAGE_SIDE * 8) as u8).collect();
        let mut out = vec![0; IMAGE_BYTES];
        let half = CropBox { x: 0.0, y: 0.0, width: 16.0, height: 32.0 };
        resample(&ramp, &mut out, half, 0.0, false);
        for y in 0..IMAGE_SIDE {
            assert_eq!(at(&out, 2, 0, y), 0, "clamped at the edge");
            for x in 1..IMAGE_SIDE {
                assert_eq!(at(&out, 2, x, y) as usize, 4 * x - 2, "({x}, {y})");
            }
        }
    }

    #[test]
    fn crop_and_rotation_keep_shape_and_range() {
        let original = pattern();
        let (low, high) = (*original.iter().min().unwrap(), *original.iter().max().unwrap());
        let mut rng = Pcg32::new(5, 0);
        let mut out = vec![0; IMAGE_BYTES];
        for _ in 0..50 {
            let crop = CropBox::random(&mut rng);
            assert!(crop.x >= 0.0 && crop.y >= 0.0 && crop.x + crop.width <= 32.0 && crop.y + crop.height <= 32.0, "{crop:?}");
            let degrees = rng.uniform(-15.0, 15.0);
            resample(&original, &mut out, crop, degrees, false);
            assert_eq!(out.len(), IMAGE_BYTES);
            for channel in 0..3 {
                let plane = &out[channel * IMAGE_PIXELS..(channel + 1) * IMAGE_PIXELS];
                let fill = MEAN_COLOUR[channel];
                assert!(plane.iter().all(|&value| (low..=high).contains(&value) || value == fill));
            }
        }
    }

    #[test]
    fn neutral_jitter_changes_nothing_and_brightness_brightens() {
        let original = pattern();
        let mut image = original.clone();
        jitter_colour(&mut image, 1.0, 1.0, 1.0);
        assert_eq!(image, original);
        let mut dark = vec![40; IMAGE_BYTES];
        jitter_colour(&mut dark, 1.5, 1.0, 1.0);
        assert!(dark.iter().all(|&value| value == 60));
    }

    #[test]
    fn erasing_fills_exactly_the_rectangle() {
        let original = pattern();
        let mut image = original.clone();
        let patch = Rectangle { x: 3, y: 5, width: 7, height: 4 };
        erase(&mut image, patch, [1, 2, 3]);
        for channel in 0..3 {
            for y in 0..IMAGE_SIDE {
                for x in 0..IMAGE_SIDE {
                    let inside = (3..10).contains(&x) && (5..9).contains(&y);
                    let expected = if inside { channel as u8 + 1 } else { at(&original, channel, x, y) };
                    assert_eq!(at(&image, channel, x, y), expected);
                }
            }
        }
        let mut rng = Pcg32::new(9, 0);
        let drawn: Vec<_> = (0..400).filter_map(|_| Rectangle::random_erasure(&mut rng)).collect();
        assert!((60..140).contains(&drawn.len()), "about a quarter erased, got {}", drawn.len());
        assert!(drawn.iter().all(|patch| patch.x + patch.width <= 32 && patch.y + patch.height <= 32));
    }

    #[test]
    fn same_seed_same_output() {
        let original = pattern();
        for recipe in [AugmentRecipe::Flip, AugmentRecipe::Heavy] {
            let run = |seed| {
                let mut rng = Pcg32::new(seed, 0);
                let mut outputs = vec![0; IMAGE_BYTES * 8];
                for out in outputs.chunks_exact_mut(IMAGE_BYTES) {
                    augment(&original, out, recipe, &mut rng);
                }
                outputs
            };
            assert_eq!(run(11), run(11), "{recipe:?}");
            assert_ne!(run(11), run(12), "{recipe:?}");
        }
        let mut out = vec![0; IMAGE_BYTES];
        augment(&original, &mut out, AugmentRecipe::None, &mut Pcg32::new(1, 0));
        assert_eq!(out, original);
    }
}
