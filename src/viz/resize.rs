//! From a photo to the model's 32×32 input, and from an 8×8 attention grid back up to the
//! photo's size.
//!
//! Downsampling averages each output pixel's exact footprint in the source (an area, or box,
//! filter): a 4000-pixel-wide photo shrunk 125× by picking one pixel in 125 would alias fine
//! texture into noise, while the average keeps what a 32×32 camera would have seen. The filter
//! is separable and streams the source row by row, so a 50-megapixel photo costs one pass over
//! its pixels, and memory for the filter weights (about one float per source row and column)
//! and two output-wide rows, never a copy of the image.

/// A photo that cannot become a model input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResizeError {
    #[error("the image is empty ({width}×{height} pixels): choose another picture")]
    Empty { width: usize, height: usize },
    #[error("a {width}×{height} RGBA image needs {expected} bytes, but {actual} were given")]
    WrongLength { width: usize, height: usize, expected: usize, actual: usize },
}

/// A rectangle of pixels inside an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub x: usize,
    pub y: usize,
    pub width: usize,
    pub height: usize,
}

/// The largest centred square of a `width × height` image: what a square model input can show
/// of a photo in any aspect ratio. An odd leftover pixel goes to the right or bottom.
pub fn center_square(width: usize, height: usize) -> Region {
    let side = width.min(height);
    Region { x: (width - side) / 2, y: (height - side) / 2, width: side, height: side }
}

fn check(rgba: &[u8], width: usize, height: usize) -> Result<(), ResizeError> {
    if width == 0 || height == 0 {
        return Err(ResizeError::Empty { width, height });
    }
    let expected = 4 * width * height;
    if rgba.len() != expected {
        return Err(ResizeError::WrongLength { width, height, expected, actual: rgba.len() });
    }
    Ok(())
}

/// Copies the centred square of an RGBA image ([`center_square`]), returning it and its side.
///
/// # Shapes
/// - rgba: `[height, width, 4]` bytes
/// - output: `[side, side, 4]` bytes, side = min(width, height)
pub fn center_crop(
    rgba: &[u8],
    width: usize,
    height: usize,
) -> Result<(Vec<u8>, usize), ResizeError> {
    check(rgba, width, height)?;
    let square = center_square(width, height);
    let mut cropped = Vec::with_capacity(4 * square.width * square.height);
    for y in square.y..square.y + square.height {
        let start = 4 * (y * width + square.x);
        cropped.extend_from_slice(&rgba[start..start + 4 * square.width]);
    }
    Ok((cropped, square.width))
}

/// A photo as the model sees it: its centred square averaged down to `side × side` RGBA
/// ([`resample_area`]), ready for [`crate::data::preprocess::normalize_rgba`].
///
/// # Shapes
/// - rgba: `[height, width, 4]` bytes
/// - output: `[side, side, 4]` bytes
pub fn photo_to_input(
    rgba: &[u8],
    width: usize,
    height: usize,
    side: usize,
) -> Result<Vec<u8>, ResizeError> {
    resample_area(rgba, width, height, center_square(width, height), side, side)
}

/// A whole `side × side` RGBA image resampled to `to × to` ([`resample_area`]): shrinking a
/// photo's square, or enlarging a 32×32 image pixel by pixel for display.
///
/// # Shapes
/// - rgba: `[side, side, 4]` bytes
/// - output: `[to, to, 4]` bytes
pub fn resize_square(rgba: &[u8], side: usize, to: usize) -> Result<Vec<u8>, ResizeError> {
    resample_area(rgba, side, side, Region { x: 0, y: 0, width: side, height: side }, to, to)
}

/// Resamples `region` of an RGBA image to `out_width × out_height` with an area filter: every
/// output pixel is the average of the source area it covers, partly covered source pixels
/// weighted by the covered fraction. Exact for whole-number ratios (2×2 blocks become one
/// pixel); also correct, if blurrier than bilinear, when enlarging.
///
/// All four channels are averaged independently (alpha is not premultiplied: the model ignores
/// alpha, as [`crate::data::preprocess::normalize_rgba`] does).
///
/// # Shapes
/// - rgba: `[height, width, 4]` bytes
/// - output: `[out_height, out_width, 4]` bytes
///
/// # Panics
/// If `region` does not lie inside the image.
pub fn resample_area(
    rgba: &[u8],
    width: usize,
    height: usize,
    region: Region,
    out_width: usize,
    out_height: usize,
) -> Result<Vec<u8>, ResizeError> {
    check(rgba, width, height)?;
    assert!(
        region.x + region.width <= width && region.y + region.height <= height,
        "region {region:?} is outside the {width}×{height} image"
    );
    if region.width == 0 || region.height == 0 {
        return Err(ResizeError::Empty { width: region.width, height: region.height });
    }
    let columns = footprints(region.width, out_width);
    let rows = footprints(region.height, out_height);

    let mut output = Vec::with_capacity(4 * out_width * out_height);
    let mut filtered = vec![0.0f32; 4 * out_width]; // one source row, resampled horizontally
    let mut filtered_row = None;
    let mut accumulated = vec![0.0f32; 4 * out_width];
    for row in &rows {
        accumulated.fill(0.0);
        for (offset, &row_weight) in row.weights.iter().enumerate() {
            let y = region.y + row.first + offset;
            // Neighbouring output rows share at most their boundary source row: filter it once.
            if filtered_row != Some(y) {
                let start = 4 * (y * width + region.x);
                filter_row(&rgba[start..start + 4 * region.width], &columns, &mut filtered);
                filtered_row = Some(y);
            }
            for (sum, &value) in accumulated.iter_mut().zip(&filtered) {
                *sum += row_weight * value;
            }
        }
        output.extend(accumulated.iter().map(|&value| value.round().clamp(0.0, 255.0) as u8));
    }
    Ok(output)
}

/// The source pixels one output pixel covers along an axis, from `first` on, and the fraction
/// of the footprint each one fills (summing to 1).
struct Footprint {
    first: usize,
    weights: Vec<f32>,
}

/// Footprints of `output` pixels spread over `source` pixels. Measured in units of
/// 1 / output source pixels, output pixel `i` spans `[i·source, (i+1)·source)` and source pixel
/// `j` spans `[j·output, (j+1)·output)`, so every overlap is a whole number and the weights are
/// exact ratios.
fn footprints(source: usize, output: usize) -> Vec<Footprint> {
    let (source, output_units) = (source as u64, output as u64);
    (0..output_units)
        .map(|index| {
            let (start, end) = (index * source, (index + 1) * source);
            let (first, last) = (start / output_units, (end - 1) / output_units);
            let weights = (first..=last)
                .map(|pixel| {
                    let overlap =
                        end.min((pixel + 1) * output_units) - start.max(pixel * output_units);
                    overlap as f32 / source as f32
                })
                .collect();
            Footprint { first: first as usize, weights }
        })
        .collect()
}

/// Resamples one row of RGBA bytes horizontally into `filtered` (4 floats per output pixel).
fn filter_row(row: &[u8], columns: &[Footprint], filtered: &mut [f32]) {
    for (column, out) in columns.iter().zip(filtered.chunks_exact_mut(4)) {
        let mut sums = [0.0f32; 4];
        let pixels = row[4 * column.first..].chunks_exact(4);
        for (pixel, &weight) in pixels.zip(&column.weights) {
            for (sum, &byte) in sums.iter_mut().zip(pixel) {
                *sum += weight * byte as f32;
            }
        }
        out.copy_from_slice(&sums);
    }
}

/// Bilinear upsampling of a small grid (an 8×8 attention map) to `width × height`, for a smooth
/// overlay instead of blocks. Grid values sit at the centres of their cells, as PyTorch's
/// `interpolate(mode="bilinear", align_corners=False)`: output pixel `x` samples grid position
/// `(x + 0.5) · grid_width / width − 0.5`, clamped to the grid, so the outer half-cells are flat.
///
/// # Shapes
/// - grid: `[grid_height, grid_width]`, row-major
/// - output: `[height, width]`, row-major
///
/// # Panics
/// If the grid is empty or not `grid_width × grid_height` long.
pub fn upsample_bilinear(
    grid: &[f32],
    grid_width: usize,
    grid_height: usize,
    width: usize,
    height: usize,
) -> Vec<f32> {
    assert!(grid_width > 0 && grid_height > 0, "the grid is empty");
    assert_eq!(grid.len(), grid_width * grid_height, "expected a {grid_width}×{grid_height} grid");
    let columns = bilinear_samples(grid_width, width);
    let rows = bilinear_samples(grid_height, height);
    let mut output = Vec::with_capacity(width * height);
    for &(top, bottom, down) in &rows {
        let (top_row, bottom_row) = (&grid[top * grid_width..], &grid[bottom * grid_width..]);
        for &(left, right, across) in &columns {
            let upper = top_row[left] + across * (top_row[right] - top_row[left]);
            let lower = bottom_row[left] + across * (bottom_row[right] - bottom_row[left]);
            output.push(upper + down * (lower - upper));
        }
    }
    output
}

/// For each of `output` samples along an axis: the two grid cells it lies between and how far
/// it is from the first towards the second.
fn bilinear_samples(cells: usize, output: usize) -> Vec<(usize, usize, f32)> {
    (0..output)
        .map(|index| {
            // Multiply before dividing, in f64, so that whole-cell positions come out exact.
            let position = (index as f64 + 0.5) * cells as f64 / output as f64 - 0.5;
            let position = position.clamp(0.0, (cells - 1) as f64);
            let first = position.floor() as usize;
            (first, (first + 1).min(cells - 1), (position - first as f64) as f32)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An RGBA image whose pixel (x, y) is grey `value(x, y)`, opaque.
    fn grey(width: usize, height: usize, value: impl Fn(usize, usize) -> u8) -> Vec<u8> {
        (0..height)
            .flat_map(|y| (0..width).map(move |x| (x, y)))
            .flat_map(|(x, y)| {
                let v = value(x, y);
                [v, v, v, 255]
            })
            .collect()
    }

    /// The red channel of an RGBA image.
    fn reds(rgba: &[u8]) -> Vec<u8> {
        rgba.chunks_exact(4).map(|pixel| pixel[0]).collect()
    }

    #[test]
    fn a_square_shrinks_by_block_averages_and_enlarges_pixel_by_pixel() {
        let image = grey(4, 4, |x, y| (40 * x + 10 * y) as u8);
        // Each output pixel is the mean of a 2×2 block: (0+40+10+50)/4 = 25, and so on.
        assert_eq!(reds(&resize_square(&image, 4, 2).unwrap()), [25, 105, 45, 125]);
        let enlarged = resize_square(&grey(2, 2, |x, y| (100 * x + 10 * y) as u8), 2, 4).unwrap();
        assert_eq!(reds(&enlarged), [0, 0, 100, 100, 0, 0, 100, 100, 10, 10, 110, 110, 10, 10, 110, 110]);
    }

    #[test]
    fn a_wide_image_crops_to_its_centre() {
        // 4×2, pixel (x, y) has red 10·y + x: the centre square is columns 1 and 2.
        let image = grey(4, 2, |x, y| (10 * y + x) as u8);
        let (square, side) = center_crop(&image, 4, 2).unwrap();
        assert_eq!(side, 2);
        assert_eq!(reds(&square), [1, 2, 11, 12]);
        assert_eq!(center_square(4, 2), Region { x: 1, y: 0, width: 2, height: 2 });
        assert_eq!(center_square(3, 6), Region { x: 0, y: 1, width: 3, height: 3 });
        assert_eq!(center_square(5, 2), Region { x: 1, y: 0, width: 2, height: 2 });
    }

    #[test]
    fn blocks_of_two_downsample_exactly() {
        // A 64×64 checkerboard of 2×2 blocks: every output pixel covers one whole block.
        let board = grey(64, 64, |x, y| if (x / 2 + y / 2) % 2 == 0 { 255 } else { 0 });
        let small = photo_to_input(&board, 64, 64, 32).unwrap();
        assert_eq!(small, grey(32, 32, |x, y| if (x + y) % 2 == 0 { 255 } else { 0 }));
    }

    #[test]
    fn a_fine_checkerboard_averages_instead_of_aliasing() {
        // Single-pixel squares: nearest-neighbour would return all 0 or all 255; the average of
        // each 2×2 footprint is 127.5, rounded to 128.
        let board = grey(64, 64, |x, y| if (x + y) % 2 == 0 { 255 } else { 0 });
        let small = photo_to_input(&board, 64, 64, 32).unwrap();
        assert_eq!(small, grey(32, 32, |_, _| 128));
    }

    #[test]
    fn a_uniform_image_stays_uniform() {
        for (width, height) in [(100, 37), (33, 33), (32, 32), (20, 45), (1, 1)] {
            let image: Vec<u8> = [17, 130, 250, 255].repeat(width * height);
            let small = photo_to_input(&image, width, height, 32).unwrap();
            assert_eq!(small, [17, 130, 250, 255].repeat(32 * 32), "{width}×{height}");
        }
    }

    #[test]
    fn a_single_bright_pixel_is_averaged_over_its_footprint() {
        // 64 → 32: pixel (10, 21) is a quarter of output (5, 10): 255 / 4 = 63.75 → 64.
        let image = grey(64, 64, |x, y| if (x, y) == (10, 21) { 255 } else { 0 });
        let small = reds(&photo_to_input(&image, 64, 64, 32).unwrap());
        assert_eq!(small[10 * 32 + 5], 64);
        assert_eq!(small.iter().map(|&v| v as u32).sum::<u32>(), 64);
        // 48 → 32 (ratio 1.5): output (0, 0) covers [0, 1.5)², so pixel (0, 0) fills
        // (1/1.5)² = 4/9 of it: 255 · 4/9 = 113.3 → 113. Output (1, 0) covers [1.5, 3) and
        // does not reach pixel 0.
        let image = grey(48, 48, |x, y| if (x, y) == (0, 0) { 255 } else { 0 });
        let small = reds(&photo_to_input(&image, 48, 48, 32).unwrap());
        assert_eq!((small[0], small[1], small[32]), (113, 0, 0));
        // Pixel (1, 1) straddles outputs 0 and 1 on both axes: (0.5/1.5)² = 1/9 each,
        // 255 / 9 = 28.3 → 28.
        let image = grey(48, 48, |x, y| if (x, y) == (1, 1) { 255 } else { 0 });
        let small = reds(&photo_to_input(&image, 48, 48, 32).unwrap());
        assert_eq!((small[0], small[1], small[32], small[33], small[2]), (28, 28, 28, 28, 0));
    }

    #[test]
    fn a_landscape_photo_keeps_its_centre() {
        // 96×64: the centre square is columns 16–79, all green; the side bands are red and blue.
        let mut photo = Vec::new();
        for _ in 0..64 {
            for x in 0..96 {
                photo.extend_from_slice(match x {
                    0..16 => &[255, 0, 0, 255],
                    16..80 => &[0, 255, 0, 255],
                    _ => &[0, 0, 255, 255],
                });
            }
        }
        assert_eq!(photo_to_input(&photo, 96, 64, 32).unwrap(), [0, 255, 0, 255].repeat(32 * 32));
    }

    #[test]
    fn footprints_weigh_partial_pixels() {
        let weights: Vec<(usize, Vec<f32>)> = footprints(3, 2)
            .into_iter()
            .map(|footprint| (footprint.first, footprint.weights))
            .collect();
        // Two outputs over three pixels: [0, 1.5) and [1.5, 3).
        assert_eq!(weights, [(0, vec![2.0 / 3.0, 1.0 / 3.0]), (1, vec![1.0 / 3.0, 2.0 / 3.0])]);
    }

    #[test]
    fn bad_photos_are_refused() {
        assert_eq!(photo_to_input(&[], 0, 5, 32), Err(ResizeError::Empty { width: 0, height: 5 }));
        assert_eq!(
            photo_to_input(&[0; 12], 2, 2, 32),
            Err(ResizeError::WrongLength { width: 2, height: 2, expected: 16, actual: 12 })
        );
    }

    #[test]
    fn upsampling_a_constant_grid_is_constant() {
        let grid = [0.375; 64];
        assert!(upsample_bilinear(&grid, 8, 8, 37, 29).iter().all(|&value| value == 0.375));
    }

    #[test]
    fn upsampling_matches_pytorch_without_aligned_corners() {
        // F.interpolate([[0, 1], [2, 3]], size=4, mode="bilinear", align_corners=False):
        // columns sample grid x = -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped to 1).
        let up = upsample_bilinear(&[0.0, 1.0, 2.0, 3.0], 2, 2, 4, 4);
        #[rustfmt::skip]
        let expected = [
            0.0, 0.25, 0.75, 1.0,
            0.5, 0.75, 1.25, 1.5,
            1.5, 1.75, 2.25, 2.5,
            2.0, 2.25, 2.75, 3.0,
        ];
        assert_eq!(up, expected);
    }

    #[test]
    fn upsampled_corners_and_centre() {
        // 8×8 → 64×64: the corners keep the corner cells' values (the outer half-cells are flat);
        // the centre pixels (31, 31) and (32, 32) sit at grid 3.4375 and 3.5625, ±1/16 of a cell
        // around the middle of cells 3 and 4.
        let grid: Vec<f32> = (0..64).map(|index| index as f32).collect(); // value = 8·row + column
        let up = upsample_bilinear(&grid, 8, 8, 64, 64);
        assert_eq!((up[0], up[63], up[63 * 64], up[64 * 64 - 1]), (0.0, 7.0, 56.0, 63.0));
        assert_eq!(up[31 * 64 + 31], 9.0 * 3.4375);
        assert_eq!(up[32 * 64 + 32], 9.0 * 3.5625);
        // 3×3 → 9×9: the centre pixel (4, 4) lands exactly on the centre cell.
        let up = upsample_bilinear(&[0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0], 3, 3, 9, 9);
        assert_eq!(up[4 * 9 + 4], 1.0);
        assert_eq!(up.iter().cloned().fold(f32::MIN, f32::max), 1.0);
    }
}
