//! The training card's probe panel: the probe image with its attention rollout, each layer's
//! mean attention, and what the model currently says, redrawn as the worker reports attention
//! forming.

use wasm_bindgen::JsCast;
use web_sys::HtmlElement;

use crate::data::classes::CLASS_NAMES;
use crate::inference::{AttentionView, Explanation, ranked};
use crate::web::dom::{element, set_text};
use crate::web::overlay::{THUMBNAIL, draw_overlay, resized};

/// Side the probe's 32×32 image is enlarged to (whole pixels: 6× each).
const PROBE_SIDE: usize = 192;

/// Draws the probe at `step`.
pub fn show(step: usize, probe: &[u8], explanation: &Explanation) {
    let large = resized(probe, 32, PROBE_SIDE);
    draw_overlay(&element("probe-canvas"), &large, PROBE_SIDE, explanation, AttentionView::Rollout);
    let small = resized(probe, 32, THUMBNAIL);
    let container = element::<HtmlElement>("probe-layers");
    let layers = explanation.attention.len();
    if container.child_element_count() as usize != layers {
        let figures: String = (0..layers)
            .map(|layer| {
                format!(r#"<figure><canvas width="{THUMBNAIL}" height="{THUMBNAIL}"></canvas><figcaption>layer {}</figcaption></figure>"#, layer + 1)
            })
            .collect();
        container.set_inner_html(&figures);
    }
    let canvases = container.query_selector_all("canvas").expect("a valid selector");
    for layer in 0..layers {
        if let Some(canvas) = canvases.item(layer as u32) {
            draw_overlay(canvas.unchecked_ref(), &small, THUMBNAIL, explanation, AttentionView::Layer { layer, head: None });
        }
    }
    let best = &ranked(&explanation.probabilities, &CLASS_NAMES)[0];
    set_text("probe-text", &format!("step {step}: “{}” at {:.0}%", best.name, 100.0 * best.probability));
    let _ = element::<HtmlElement>("probe-canvas").set_attribute("data-step", &step.to_string());
}
