//! The attention-distance card: the ViT paper's Figure 7 (right) for the current weights. For
//! each layer, one dot per head at its mean attention distance (`viz::distance`) over the test
//! images of the predictions grid, redrawn whenever the weights change (after every epoch, and
//! for loaded weights).

use std::cell::Cell;

use wasm_bindgen_futures::spawn_local;
use web_sys::HtmlCanvasElement;

use crate::inference::attention_distances;
use crate::viz::chart::{Series, Tick, layout_within};
use crate::viz::distance::{farthest, mean_attention_distance};
use crate::viz::scale::TickFormat;
use crate::web::app::SharedApp;
use crate::web::dom::{element, escape, hidpi_context, set_text};
use crate::web::plot;

/// One colour per head (the small preset has 8).
const HEAD_COLOURS: [&str; 8] = ["#2f6fde", "#d9822b", "#2a9d5b", "#c23b5a", "#7b5cc4", "#1f9bb0", "#b58a00", "#5b6677"];

thread_local! {
    /// Counts requests, so that a slow computation never draws over a later model's.
    static GENERATION: Cell<u64> = const { Cell::new(0) };
}

/// Computes and draws the figure for the current model, once the test images are loaded.
pub fn show_current(app: &SharedApp) {
    let generation = GENERATION.get() + 1;
    GENERATION.set(generation);
    let (model, config, device, images) = {
        let app = app.borrow();
        let images: Vec<Vec<u8>> = app.test_preview.iter().map(|image| image.pixels.clone()).collect();
        (app.model.clone(), app.config.clone(), app.device.clone(), images)
    };
    if images.is_empty() {
        set_text("distance-note", "Waiting for the test images…");
        return;
    }
    spawn_local(async move {
        let borrowed: Vec<&[u8]> = images.iter().map(Vec::as_slice).collect();
        let result = attention_distances(&model, &config, &borrowed, &device).await;
        if GENERATION.get() != generation {
            return;
        }
        match result {
            Ok(distances) => draw(&distances, config.tokens(), config.patch_size, images.len()),
            Err(message) => set_text("distance-note", &format!("The attention distance could not be computed: {message}")),
        }
    });
}

fn draw(distances: &[Vec<f32>], tokens: usize, patch_size: usize, images: usize) {
    let canvas: HtmlCanvasElement = element("distance-canvas");
    let heads = distances.first().map_or(0, Vec::len);
    let series: Vec<Series> = (0..heads)
        .map(|head| Series {
            name: format!("head {}", head + 1),
            colour: HEAD_COLOURS[head % HEAD_COLOURS.len()],
            points: distances.iter().enumerate().map(|(layer, row)| ((layer + 1) as f64, row[head] as f64)).collect(),
            dots: true,
        })
        .collect();
    let farthest = farthest(tokens, patch_size);
    let uniform = mean_attention_distance(&vec![1.0; tokens * tokens], 1, 1, tokens, patch_size)[0];
    let values: Vec<String> =
        distances.iter().map(|row| format!("[{}]", row.iter().map(|value| format!("{value:.2}")).collect::<Vec<_>>().join(","))).collect();
    let _ = canvas.set_attribute("data-distances", &format!("[{}]", values.join(",")));
    let _ = canvas.set_attribute("data-farthest", &format!("{farthest:.2}"));
    let legend: String =
        series.iter().map(|series| format!(r#"<span><i style="background:{}"></i>{}</span>"#, series.colour, escape(&series.name))).collect();
    element::<web_sys::HtmlElement>("distance-legend").set_inner_html(&legend);
    let all = distances.iter().flatten().copied();
    let (low, high) = all.fold((f32::INFINITY, 0.0f32), |(low, high), value| (low.min(value), high.max(value)));
    set_text(
        "distance-note",
        &format!(
            "Over the {images} test images of the grid: heads reach from {low:.1} to {high:.1} px. Uniform attention would give \
             {uniform:.1} px (the dashed line); corner to corner is {farthest:.1} px."
        ),
    );

    let Some((context, width, height)) = hidpi_context(&canvas) else { return };
    let extent = (0.5, distances.len() as f64 + 0.5);
    let Some(mut layout) = layout_within(&series, width, height, extent, (0.0, farthest as f64), TickFormat::Number) else { return };
    // One tick per layer: layers are whole numbers.
    layout.x_ticks = (1..=distances.len()).map(|layer| Tick { pixel: layout.x.map(layer as f64), label: layer.to_string() }).collect();
    context.clear_rect(0.0, 0.0, width, height);
    plot::draw_axes(&context, &layout, "layer");
    context.set_stroke_style_str("#9aa3b2");
    context.set_line_width(1.0);
    let _ = context.set_line_dash(&js_sys::Array::of2(&4.0.into(), &4.0.into()));
    let y = layout.y.map(uniform as f64).round() + 0.5;
    context.begin_path();
    context.move_to(layout.area.left, y);
    context.line_to(layout.area.right, y);
    context.stroke();
    let _ = context.set_line_dash(&js_sys::Array::new());
    // Heads side by side around their layer, so equal values stay visible.
    let spread = 6.0;
    for (head, series) in series.iter().enumerate() {
        let offset = (head as f64 - (heads as f64 - 1.0) / 2.0) * spread;
        context.set_fill_style_str(series.colour);
        for &(layer, distance) in &series.points {
            context.begin_path();
            let _ = context.arc(layout.x.map(layer) + offset, layout.y.map(distance), 4.0, 0.0, std::f64::consts::TAU);
            context.fill();
        }
    }
    context.set_fill_style_str("#5b6677");
    context.set_text_align("left");
    let _ = context.fill_text("px", 4.0, layout.area.top + 4.0);
}
