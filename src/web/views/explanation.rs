//! The photo card's answer: the current picture's five most likely classes, and where the model
//! looked: the picture with its attention overlaid (rollout or one layer, one head or their
//! mean), a thumbnail per view to pick from, and the colour legend.

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::spawn_local;
use web_sys::{Element, HtmlElement, HtmlSelectElement, MouseEvent};

use crate::inference::{AttentionView, Explanation, explain, ranked};
use crate::web::app::{Picture, SharedApp, show_error};
use crate::web::dom::{self, element, escape, set_text};
use crate::web::overlay::{THUMBNAIL, draw_overlay, resized};

/// Classes listed for a picture.
const TOP_CLASSES: usize = 5;

/// Classifies the current picture with the current model and draws the answer and attention.
pub fn explain_picture(app: &SharedApp) {
    let (model, config, device, picture) = {
        let app = app.borrow();
        let Some(picture) = app.picture.clone() else { return };
        (app.model.clone(), app.config.clone(), app.device.clone(), picture)
    };
    let app = app.clone();
    spawn_local(async move {
        let started = dom::now_ms();
        match explain(&model, &config, &picture.input, &device).await {
            Ok(explanation) => {
                let elapsed = dom::now_ms() - started;
                let names = app.borrow().model_class_names();
                show_probabilities(&explanation.probabilities, &names);
                set_text("inference-time", &format!("Prediction and attention took {elapsed:.0} ms."));
                let _ = element::<HtmlElement>("inference-time").set_attribute("data-ms", &format!("{elapsed:.2}"));
                let view = app.borrow().view;
                show(&picture, &explanation, view);
                app.borrow_mut().explanation = Some(explanation);
            }
            Err(message) => show_error(&message),
        }
    });
}

fn show_probabilities(probabilities: &[f32], names: &[String]) {
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let rows: String = ranked(probabilities, &names)
        .iter()
        .take(TOP_CLASSES)
        .map(|class| {
            format!(
                r#"<li data-class="{name}" data-probability="{p}"><span class="name">{name}</span><span class="bar"><span style="width:{width:.1}%"></span></span><span class="value">{percent:.1}%</span></li>"#,
                name = escape(&class.name),
                p = class.probability,
                width = 100.0 * class.probability,
                percent = 100.0 * class.probability,
            )
        })
        .collect();
    element::<HtmlElement>("probabilities").set_inner_html(&rows);
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
fn show(picture: &Picture, explanation: &Explanation, selected: AttentionView) {
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
    dom::draw_colour_bar("attention-legend");
}

/// Redraws the current picture's explanation, if there is one.
fn redraw(app: &SharedApp) {
    let app = app.borrow();
    if let (Some(picture), Some(explanation)) = (&app.picture, &app.explanation) {
        show(picture, explanation, app.view);
    }
}

