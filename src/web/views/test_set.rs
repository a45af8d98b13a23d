//! How the current weights do on the test set: a grid of test images with their predicted and
//! true classes, per-class accuracy and the confusion matrix. Redrawn after every epoch and
//! whenever other weights are loaded.

use js_sys::Uint8Array;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlCanvasElement, HtmlElement, MouseEvent};

use crate::data::preprocess::planar_to_rgba;
use crate::display::group_thousands;
use crate::protocol::{PreviewImage, WorkerInput};
use crate::training::TestEvaluation;
use crate::viz::confusion::ConfusionMatrix;
use crate::web::app::{Change, Picture, SharedApp, changed, send};
use crate::web::dom::{self, element, escape, hidpi_context, put_rgba, set_text};

/// Asks the worker to evaluate the current weights on the test set, when it has both. During
/// training each epoch's message brings its own evaluation.
pub fn request_evaluation(app: &SharedApp) {
    let (weights, compute) = {
        let app = app.borrow();
        if !app.dataset_ready || app.training {
            return;
        }
        let Some(weights) = app.weights.clone() else { return };
        if !app.model_fits_dataset() {
            let classes = app.model_class_names().join(", ");
            set_text("evaluation-summary", &format!("The current model knows other classes ({classes}) than the loaded pictures: it is not tested on them."));
            return;
        }
        (weights, app.compute)
    };
    set_text("evaluation-summary", "Evaluating the current weights on the test set…");
    send(app, &WorkerInput::Evaluate { compute }, Some(("bytes", Uint8Array::from(weights.as_slice()).into())));
}

/// How far the worker's evaluation of the current weights has gone (on the CPU path a test set
/// takes seconds, on a slow GPU minutes).
pub fn show_progress(done: usize, total: usize) {
    set_text(
        "evaluation-summary",
        &format!("Evaluating the current weights on the test set: {} of {} images…", group_thousands(done), group_thousands(total)),
    );
}

/// What the worker's evaluation of the current weights says, once the test labels are here.
pub fn show_evaluation(app: &SharedApp, evaluation: &TestEvaluation, source: &str) {
    let app = app.borrow();
    if evaluation.predictions.len() == app.test_labels.len() {
        show(evaluation, &app.test_labels, &app.test_preview, source, &app.dataset_classes);
    }
}

/// The evaluation could not be made.
pub fn show_failed(message: &str) {
    set_text("evaluation-summary", &format!("The test set was not evaluated: {message}"));
}

/// Draws the grid, the per-class accuracy and the matrix for `evaluation`.
fn show(evaluation: &TestEvaluation, labels: &[u8], grid: &[PreviewImage], source: &str, names: &[String]) {
    let matrix = ConfusionMatrix::new(labels, &evaluation.predictions, names.len());
    set_text(
        "evaluation-summary",
        &format!(
            "{source}: {:.1}% of {} test images right, test loss {:.4}.",
            100.0 * evaluation.accuracy,
            group_thousands(matrix.total() as usize),
            evaluation.loss
        ),
    );
    let summary = element::<HtmlElement>("evaluation-summary");
    let _ = summary.set_attribute("data-accuracy", &evaluation.accuracy.to_string());
    show_grid(grid, &evaluation.predictions, names);
    show_class_accuracy(&matrix, names);
    draw_matrix(&matrix, names);
}

fn show_grid(images: &[PreviewImage], predictions: &[u8], names: &[String]) {
    let cells: String = images
        .iter()
        .zip(predictions)
        .enumerate()
        .map(|(index, (image, &predicted))| {
            let right = image.label == predicted;
            let name = |label: u8| names.get(label as usize).map_or("?", String::as_str);
            let (truth, guess) = (name(image.label), name(predicted));
            let caption = if right {
                format!(r#"<span class="mark">✓</span> {}"#, escape(guess))
            } else {
                format!(r#"<span class="mark">✗</span> {} <span class="truth">(is {})</span>"#, escape(guess), escape(truth))
            };
            format!(
                r#"<figure class="{}" data-index="{index}" title="Show its attention"><canvas width="32" height="32"></canvas><figcaption>{caption}</figcaption></figure>"#,
                if right { "right" } else { "wrong" }
            )
        })
        .collect();
    let container = element::<HtmlElement>("predictions-grid");
    container.set_inner_html(&cells);
    let canvases = container.query_selector_all("canvas").expect("a valid selector");
    for (index, image) in images.iter().enumerate() {
        if let Some(canvas) = canvases.item(index as u32) {
            let _ = put_rgba(canvas.unchecked_ref(), &planar_to_rgba(&image.pixels), 32, 32);
        }
    }
}

fn show_class_accuracy(matrix: &ConfusionMatrix, names: &[String]) {
    let rows: String = matrix
        .per_class_accuracy()
        .iter()
        .zip(names)
        .map(|(&accuracy, name)| {
            let percent = if accuracy.is_finite() { 100.0 * accuracy } else { 0.0 };
            let name = escape(name);
            format!(
                r#"<li data-class="{name}"><span class="name">{name}</span><span class="bar"><span style="width:{percent:.1}%"></span></span><span class="value">{percent:.1}%</span></li>"#
            )
        })
        .collect();
    element::<HtmlElement>("class-accuracy").set_inner_html(&rows);
}

/// The classes × classes matrix: rows are true classes, columns predictions, cells shaded by the share of
/// the row and labelled with the count.
fn draw_matrix(matrix: &ConfusionMatrix, names: &[String]) {
    let canvas: HtmlCanvasElement = element("confusion-canvas");
    let Some((context, width, height)) = hidpi_context(&canvas) else { return };
    let classes = matrix.classes as f64;
    let (left, top) = (78.0, 64.0);
    let cell = ((width - left - 4.0) / classes).min((height - top - 4.0) / classes).max(8.0);
    context.clear_rect(0.0, 0.0, width, height);
    context.set_font("11px system-ui, sans-serif");
    let shares = matrix.row_normalised();
    for label in 0..matrix.classes {
        for predicted in 0..matrix.classes {
            let share = shares[label * matrix.classes + predicted] as f64;
            let (x, y) = (left + predicted as f64 * cell, top + label as f64 * cell);
            let colour = if label == predicted { "47, 111, 222" } else { "214, 69, 65" };
            context.set_fill_style_str(&format!("rgba({colour}, {:.3})", 0.06 + 0.94 * share));
            context.fill_rect(x + 0.5, y + 0.5, cell - 1.0, cell - 1.0);
            let count = matrix.count(label, predicted);
            if count > 0 && cell >= 22.0 {
                context.set_fill_style_str(if share > 0.5 { "#ffffff" } else { "#1d2430" });
                context.set_text_align("center");
                context.set_text_baseline("middle");
                let _ = context.fill_text(&count.to_string(), x + cell / 2.0, y + cell / 2.0);
            }
        }
    }
    context.set_fill_style_str("#5b6677");
    for (index, name) in names.iter().enumerate() {
        let middle = index as f64 * cell + cell / 2.0;
        context.set_text_align("right");
        context.set_text_baseline("middle");
        let _ = context.fill_text(name, left - 6.0, top + middle);
        context.save();
        let _ = context.translate(left + middle, top - 6.0);
        let _ = context.rotate(-std::f64::consts::FRAC_PI_4);
        context.set_text_align("left");
        let _ = context.fill_text(name, 0.0, 0.0);
        context.restore();
    }
    context.set_text_align("left");
    context.set_text_baseline("alphabetic");
    let _ = context.fill_text("true ↓  predicted →", 2.0, 12.0);
}

/// A click on a grid image makes it the picture whose attention is shown.
pub fn wire(app: &SharedApp) {
    let click_app = app.clone();
    dom::listen(&element::<HtmlElement>("predictions-grid"), "click", move |event: MouseEvent| {
        let Some(figure) = event
            .target()
            .and_then(|target| target.dyn_into::<Element>().ok())
            .and_then(|target| target.closest("figure[data-index]").ok().flatten())
        else {
            return;
        };
        let Some(index) = figure.get_attribute("data-index").and_then(|index| index.parse::<usize>().ok()) else { return };
        let (image, class) = {
            let app = click_app.borrow();
            let image = app.test_preview.get(index).cloned();
            let class = image.as_ref().and_then(|image| app.dataset_classes.get(image.label as usize).cloned()).unwrap_or_default();
            (image, class)
        };
        if let Some(image) = image {
            let name = format!("test image {} ({class})", index + 1);
            click_app.borrow_mut().picture = Some(Picture::from_small(&planar_to_rgba(&image.pixels), name));
            changed(&click_app, Change::Picture);
            if let Some(card) = dom::by_id("photo-card") {
                card.scroll_into_view();
            }
        }
    });
}
