//! The dataset card: load progress, the archive drop zone and the preview grid.

use wasm_bindgen::prelude::*;
use wasm_bindgen::{Clamped, JsCast};
use web_sys::{DragEvent, HtmlCanvasElement, HtmlElement, HtmlInputElement, ImageData};

use crate::data::preprocess::planar_to_rgba;
use crate::display::{bytes, duration, group_thousands};
use crate::protocol::{DatasetSource, LoadStage, PreviewImage, WorkerInput};
use crate::web::app::{SharedApp, send};
use crate::web::dom::{self, element, set_hidden, set_text};

/// Pixels per preview image (CIFAR-10's 32×32, drawn at 2×).
const PREVIEW_SCALE: u32 = 2;
const LABEL_HEIGHT: u32 = 14;

pub fn loading_started() {
    set_text("data-status", "Loading the prepared dataset…");
    set_hidden("data-progress", false);
}

pub fn show_progress(stage: LoadStage, done: u64, total: Option<u64>) {
    let progress: web_sys::HtmlProgressElement = element("data-progress");
    set_hidden("data-progress", false);
    let verb = match stage {
        LoadStage::Download => "Downloading",
        LoadStage::Read => "Reading",
        LoadStage::Decode => "Decoding",
        LoadStage::Store => "Keeping a copy in browser storage",
    };
    let text = match (stage, total) {
        (LoadStage::Store, _) => format!("{verb}…"),
        (_, Some(total)) if total > 0 => {
            let fraction = done as f64 / total as f64;
            progress.set_value(fraction);
            let amounts = if stage == LoadStage::Decode && total < 1_000_000 {
                format!("{} of {} images", group_thousands(done as usize), group_thousands(total as usize))
            } else {
                format!("{} of {}", bytes(done), bytes(total))
            };
            format!("{verb}: {amounts} ({:.0}%)", 100.0 * fraction)
        }
        _ => {
            let _ = progress.remove_attribute("value"); // indeterminate
            format!("{verb}: {}", bytes(done))
        }
    };
    set_text("data-status", &text);
}

pub fn show_ready(
    source: DatasetSource,
    train: usize,
    test: usize,
    seconds: f64,
    warning: Option<&str>,
    preview: &[PreviewImage],
    class_names: &[String],
) {
    set_hidden("data-progress", true);
    let status = match source {
        DatasetSource::Collection => format!(
            "Ready: your own pictures, {} classes: {} to train on and {} held out to test on.",
            class_names.len(),
            group_thousands(train),
            group_thousands(test)
        ),
        _ => {
            let from = match source {
                DatasetSource::Network => "downloaded and decoded",
                DatasetSource::Cache => "loaded from browser storage",
                _ => "decoded from your archive",
            };
            format!(
                "Ready: {} training and {} test images, {from} in {}.",
                group_thousands(train),
                group_thousands(test),
                duration(seconds)
            )
        }
    };
    set_text("data-status", &status);
    let status_element: HtmlElement = element("data-status");
    let _ = status_element.set_attribute("data-source", source_name(source));
    let _ = status_element.set_attribute("data-seconds", &format!("{seconds:.3}"));
    let _ = status_element.set_attribute("data-ready-text", &status);
    match warning {
        Some(warning) => {
            set_text("data-warning", warning);
            set_hidden("data-warning", false);
        }
        None => set_hidden("data-warning", true),
    }
    draw_preview(preview, class_names);
}

fn source_name(source: DatasetSource) -> &'static str {
    match source {
        DatasetSource::Network => "network",
        DatasetSource::Cache => "cache",
        DatasetSource::Archive => "archive",
        DatasetSource::Collection => "collection",
    }
}

/// A failed load leaves the dataset loaded before (the worker keeps it) and says so.
pub fn show_failed(message: &str) {
    set_hidden("data-progress", true);
    set_text("data-warning", message);
    set_hidden("data-warning", false);
    let status: HtmlElement = element("data-status");
    match status.get_attribute("data-ready-text") {
        Some(ready) => set_text("data-status", &ready),
        None => set_text("data-status", "No dataset loaded. Training needs one; inference works without it."),
    }
}

/// One column per class, its name above, `PREVIEW_PER_CLASS` images below.
fn draw_preview(preview: &[PreviewImage], class_names: &[String]) {
    let canvas: HtmlCanvasElement = element("preview-canvas");
    let cell = 32 * PREVIEW_SCALE + 4;
    let classes = class_names.len() as u32;
    let rows = (0..classes).map(|label| preview.iter().filter(|image| image.label as u32 == label).count()).max().unwrap_or(0) as u32;
    let ratio = web_sys::window().map(|window| window.device_pixel_ratio()).unwrap_or(1.0).max(1.0);
    let (width, height) = (classes.max(1) * cell, LABEL_HEIGHT + rows * cell);
    canvas.set_width((width as f64 * ratio) as u32);
    canvas.set_height((height as f64 * ratio) as u32);
    let style = canvas.unchecked_ref::<HtmlElement>().style();
    let _ = style.set_property("width", &format!("{width}px"));
    let _ = style.set_property("height", &format!("{height}px"));
    let Some(context) = dom::context_2d(&canvas) else { return };
    let _ = context.scale(ratio, ratio);
    context.set_image_smoothing_enabled(false);
    context.set_font("11px system-ui, sans-serif");
    context.set_fill_style_str("#5b6677");
    let scratch = web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.create_element("canvas").ok())
        .and_then(|element| element.dyn_into::<HtmlCanvasElement>().ok());
    let Some(scratch) = scratch else { return };
    scratch.set_width(32);
    scratch.set_height(32);
    let Some(scratch_context) = dom::context_2d(&scratch) else { return };
    let mut row_of = vec![0u32; class_names.len()];
    for (label, name) in class_names.iter().enumerate() {
        let _ = context.fill_text_with_max_width(name, (label as u32 * cell) as f64, 11.0, (cell - 4) as f64);
    }
    for image in preview {
        let label = image.label as usize;
        if label >= row_of.len() {
            continue;
        }
        let rgba = planar_to_rgba(&image.pixels);
        let Ok(data) = ImageData::new_with_u8_clamped_array_and_sh(Clamped(&rgba), 32, 32) else { continue };
        let _ = scratch_context.put_image_data(&data, 0.0, 0.0);
        let (x, y) = (label as u32 * cell, LABEL_HEIGHT + row_of[label] * cell);
        row_of[label] += 1;
        let size = (32 * PREVIEW_SCALE) as f64;
        let _ = context.draw_image_with_html_canvas_element_and_dw_and_dh(&scratch, x as f64, y as f64, size, size);
    }
}

/// The file input and the drop zone both send the archive to the worker.
pub fn wire(app: &SharedApp) {
    let input: HtmlInputElement = element("archive-input");
    let input_app = app.clone();
    let on_change = Closure::<dyn Fn()>::new(move || {
        let input: HtmlInputElement = element("archive-input");
        if let Some(file) = input.files().and_then(|files| files.get(0)) {
            load_archive(&input_app, file);
        }
    });
    input.set_onchange(Some(on_change.as_ref().unchecked_ref()));
    on_change.forget();

    let zone: HtmlElement = element("archive-drop");
    let on_drag_over = Closure::<dyn Fn(DragEvent)>::new(|event: DragEvent| event.prevent_default());
    let drop_app = app.clone();
    let on_drop = Closure::<dyn Fn(DragEvent)>::new(move |event: DragEvent| {
        event.prevent_default();
        if let Some(file) = event.data_transfer().and_then(|transfer| transfer.files()).and_then(|files| files.get(0)) {
            load_archive(&drop_app, file);
        }
    });
    zone.set_ondragover(Some(on_drag_over.as_ref().unchecked_ref()));
    zone.set_ondrop(Some(on_drop.as_ref().unchecked_ref()));
    on_drag_over.forget(); // these live as long as the page
    on_drop.forget();
}

fn load_archive(app: &SharedApp, file: web_sys::File) {
    if app.borrow().training {
        set_text("data-warning", "Stop training before loading another dataset.");
        set_hidden("data-warning", false);
        return;
    }
    set_text("data-status", &format!("Reading {}…", file.name()));
    set_hidden("data-progress", false);
    send(app, &WorkerInput::LoadArchive { name: file.name() }, Some(("file", file.into())));
}
