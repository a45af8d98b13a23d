//! An attention map drawn over its picture on a canvas: what the photo card's explanation and
//! the training card's probe both draw.

use web_sys::HtmlCanvasElement;

use super::dom::put_rgba;
use crate::inference::{AttentionView, Explanation};
use crate::viz::colormap::attention_overlay;
use crate::viz::resize::resize_square;

/// How strongly the heat colours cover the picture: enough to read the map, not enough to hide
/// what it points at.
const OVERLAY_ALPHA: f32 = 0.55;
/// Side of the per-view thumbnails, in pixels.
pub const THUMBNAIL: usize = 96;

/// A square RGBA image of side `side` resampled to `to`.
pub fn resized(rgba: &[u8], side: usize, to: usize) -> Vec<u8> {
    resize_square(rgba, side, to).expect("a square image resamples")
}

/// Draws `view` of `explanation` over `image` (`side × side` RGBA) on `canvas`.
pub fn draw_overlay(canvas: &HtmlCanvasElement, image: &[u8], side: usize, explanation: &Explanation, view: AttentionView) {
    draw_map(canvas, image, side, &explanation.map(view), explanation.grid());
}

/// Draws a map over the `grid × grid` patches (values in [0, 1]) over `image` on `canvas`.
pub fn draw_map(canvas: &HtmlCanvasElement, image: &[u8], side: usize, map: &[f32], grid: usize) {
    let blended = attention_overlay(image, side, map, grid, OVERLAY_ALPHA);
    if let Err(problem) = put_rgba(canvas, &blended, side as u32, side as u32) {
        web_sys::console::warn_1(&problem.into());
    }
}
