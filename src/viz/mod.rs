//! The maths behind the page's pictures, kept free of the DOM so it is tested natively: chart
//! axes, heatmap colours, attention rollout, photo resizing and position-embedding similarity.
//!
//! ```text
//!  photo RGBA ──resize::photo_to_input──▶ 32×32 RGBA ──preprocess──▶ model
//!  attention [heads, 65, 65] × L ──rollout──▶ 8×8 ──resize::upsample_bilinear──▶ W×H
//!        ──colormap::heat_overlay──▶ RGBA over the photo
//!  position embedding [65, D] ──similarity──▶ 64 maps of 8×8 ──colormap──▶ RGBA
//!  loss / accuracy history ──chart (scale)──▶ axes, ticks, lines and hover values in pixels
//!  test labels + predictions ──confusion──▶ 10×10 matrix, per-class accuracy
//!  attention [images, heads, 65, 65] × L ──distance──▶ mean attention distance per layer and head
//!  the probe's attention at each capture ──captures──▶ its maps through a run, within a bound
//! ```

pub mod captures;
pub mod chart;
pub mod colormap;
pub mod confusion;
pub mod distance;
pub mod resize;
pub mod rollout;
pub mod scale;
pub mod similarity;
