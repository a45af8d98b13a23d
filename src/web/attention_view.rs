//! Where the model looked: the chosen picture with its attention overlaid (rollout or one layer,
//! one head or their mean), a thumbnail per view to pick from, and the colour legend. Also the
//! training card's probe panel, which redraws as the worker reports attention forming.

use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlCanvasElement, HtmlElement, HtmlSelectElement, MouseEvent};

use super::dom::{self, element, escape, put_rgba, set_text};
use super::page::SharedApp;
use crate::data::classes::CLASS_NAMES;
use crate::inference::{AttentionView, Explanation, ranked};
use crate::viz::colormap::{attention_overlay, heatmap_rgba};
use crate::viz::resize::resize_square;

/// How strongly the heat colours cover the picture: enough to read the map, not enough to hide
/// what it points at.
const OVERLAY_ALPHA: f32 = 0.55;
/// Side of the per-view thumbnails, in pixels.
const THUMBNAIL: usize = 96;
/// Side the probe's 32×32 image is enlarged to (whole pixels: 6× each).
const PROBE_SIDE: usize = 192;

/// A picture the model can explain: its centred square at display resolution and the 32×32
/// input made from it.
#[derive(Debug, Clone)]
pub struct Picture {
    pub name: String,
    /// The centred square, `side × side` RGBA.
    pub square: Vec<u8>,
    pub side: usize,
    /// What the model sees: 32×32 RGBA.
    pub input: Vec<u8>,
}

fn resized(rgba: &[u8], side: usize, to: usize) -> Vec<u8> {
    resize_square(rgba, side, to).expect("a square image resamples")
}

fn draw_overlay(canvas: &HtmlCanvasElement, image: &[u8], side: usize, explanation: &Explanation, view: AttentionView) {
    let map = explanation.map(view);
    let blended = attention_overlay(image, side, &map, explanation.grid(), OVERLAY_ALPHA);
    if let Err(problem) = put_rgba(canvas, &blended, side as u32, side as u32) {
        web_sys::console::warn_1(&problem.into());
    }
}

fn view_name(view: AttentionView) -> String {
    match view {
        AttentionView::Rollout => "rollout".into(),
        AttentionView::Layer { layer, .. } => format!("layer-{}", layer + 1),
    }
}

fn view_label(view: AttentionView) -> String {
    match view {
        AttentionView::Rollout => "Rollout (all layers)".into(),
        AttentionView::Layer { layer, head: None } => format!("Layer {}, mean of heads", layer + 1),
        AttentionView::Layer { layer, head: Some(head) } => format!("Layer {}, head {}", layer + 1, head + 1),
    }
}

/// The views a model offers: rollout first, then each layer with the chosen head.
fn views(explanation: &Explanation, head: Option<usize>) -> Vec<AttentionView> {
    std::iter::once(AttentionView::Rollout)
        .chain((0..explanation.attention.len()).map(|layer| AttentionView::Layer { layer, head }))
        .collect()
}

/// The head picked in the selector (`None`: mean), kept within the model's heads.
fn chosen_head(heads: usize) -> Option<usize> {
    let select: HtmlSelectElement = element("head-select");
    if select.length() as usize != heads + 1 {
        let options: String = std::iter::once(r#"<option value="mean">mean of heads</option>"#.to_string())
            .chain((0..heads).map(|head| format!(r#"<option value="{head}">head {}</option>"#, head + 1)))
            .collect();
        select.set_inner_html(&options);
    }
    select.value().parse().ok().filter(|&head| head < heads)
}

/// Draws everything about the current picture's explanation.
pub fn show(picture: &Picture, explanation: &Explanation, selected: AttentionView) {
    let head = chosen_head(explanation.heads);
    let selected = match selected {
        AttentionView::Layer { layer, .. } if layer < explanation.attention.len() => AttentionView::Layer { layer, head },
        _ => AttentionView::Rollout,
    };
    draw_overlay(&element("attention-canvas"), &picture.square, picture.side, explanation, selected);
    let main = element::<HtmlElement>("attention-canvas");
    let _ = main.set_attribute("data-view", &view_name(selected));
    set_text("attention-caption", &format!("{} over {}", view_label(selected), picture.name));

    let small = resized(&picture.square, picture.side, THUMBNAIL);
    let container = element::<HtmlElement>("attention-views");
    let all = views(explanation, head);
    if container.child_element_count() as usize != all.len() {
        let buttons: String = all
            .iter()
            .map(|&view| {
                let label = match view {
                    AttentionView::Rollout => "Rollout".to_string(),
                    AttentionView::Layer { layer, .. } => format!("Layer {}", layer + 1),
                };
                format!(
                    r#"<button type="button" class="view" data-view="{}"><canvas width="{THUMBNAIL}" height="{THUMBNAIL}"></canvas><span>{}</span></button>"#,
                    view_name(view),
                    escape(&label)
                )
            })
            .collect();
        container.set_inner_html(&buttons);
    }
    let buttons = container.query_selector_all("button").expect("a valid selector");
    for (index, &view) in all.iter().enumerate() {
        let Some(button) = buttons.item(index as u32).and_then(|node| node.dyn_into::<Element>().ok()) else { continue };
        let _ = button.set_attribute("aria-pressed", if view_name(view) == view_name(selected) { "true" } else { "false" });
        if let Some(canvas) = button.query_selector("canvas").ok().flatten() {
            draw_overlay(canvas.unchecked_ref(), &small, THUMBNAIL, explanation, view);
        }
    }
}

/// Which view a click on the thumbnails picked, if any.
fn clicked_view(event: &MouseEvent) -> Option<AttentionView> {
    let target: Element = event.target()?.dyn_into().ok()?;
    let name = target.closest("button[data-view]").ok()??.get_attribute("data-view")?;
    match name.strip_prefix("layer-") {
        Some(layer) => Some(AttentionView::Layer { layer: layer.parse::<usize>().ok()?.checked_sub(1)?, head: None }),
        None => Some(AttentionView::Rollout),
    }
}

pub fn wire(app: &SharedApp) {
    let click_app = app.clone();
    dom::listen(&element::<HtmlElement>("attention-views"), "click", move |event: MouseEvent| {
        if let Some(view) = clicked_view(&event) {
            click_app.borrow_mut().view = view;
            redraw(&click_app);
        }
    });
    let head_app = app.clone();
    dom::listen(&element::<HtmlElement>("head-select"), "change", move |_: web_sys::Event| redraw(&head_app));
    draw_legend();
}

/// Redraws the current picture's explanation, if there is one.
pub fn redraw(app: &SharedApp) {
    let app = app.borrow();
    if let (Some(picture), Some(explanation)) = (&app.picture, &app.explanation) {
        show(picture, explanation, app.view);
    }
}

/// The colour scale under the picture: low attention to high.
fn draw_legend() {
    let ramp: Vec<f32> = (0..256).map(|index| index as f32 / 255.0).collect();
    let rgba = heatmap_rgba(&ramp);
    let _ = put_rgba(&element("attention-legend"), &rgba, 256, 1);
}

/// The probe panel in the training card: the probe image with its rollout, each layer's mean
/// attention, and what the model currently says.
pub fn show_probe(step: usize, probe: &[u8], explanation: &Explanation) {
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
