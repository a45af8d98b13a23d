//! The loss and accuracy charts, drawn from the metric history: per-epoch train and test values
//! and the smoothed running train loss per step, with the values under the pointer. The
//! geometry comes from `viz::chart`; this module only strokes it.

use std::cell::RefCell;

use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, HtmlElement, PointerEvent};

use crate::web::dom::{self, element, escape, hidpi_context};
use crate::web::plot;
use crate::training::{EpochMetrics, MetricsHistory};
use crate::viz::chart::{ChartLayout, Series, layout};
use crate::viz::scale::TickFormat;

const TRAIN: &str = "#2f6fde";
const TEST: &str = "#d9822b";
const RUNNING: &str = "#9bb7ea";

/// What a chart shows, kept to redraw it on hover and resize.
struct Chart {
    canvas: &'static str,
    legend: &'static str,
    format: TickFormat,
    series: Vec<Series>,
    extent: (f64, f64),
}

thread_local! {
    static CHARTS: RefCell<Vec<Chart>> = const { RefCell::new(Vec::new()) };
}

/// Steps per epoch for the x axis (in epochs): recorded, or estimated from the history.
fn steps_per_epoch(history: &MetricsHistory, recorded: usize) -> f64 {
    if recorded > 0 {
        return recorded as f64;
    }
    match (history.steps.last(), history.epochs.len()) {
        (Some(last), epochs) if epochs > 0 => (last.step as f64 / epochs as f64).max(1.0),
        _ => 1.0,
    }
}

/// A stored run drawn over the charts: its running loss and test figures in its colour.
pub struct Overlay<'a> {
    pub name: String,
    pub colour: &'static str,
    pub history: &'a MetricsHistory,
    pub steps_per_epoch: usize,
}

fn per_epoch(history: &MetricsHistory, value: fn(&EpochMetrics) -> f32) -> Vec<(f64, f64)> {
    history.epochs.iter().map(|epoch| (epoch.epoch as f64, value(epoch) as f64)).collect()
}

/// Redraws both charts for `history`, with `overlays` over them; `planned_epochs` fixes the x
/// axis so it does not rescale every epoch.
pub fn show(history: &MetricsHistory, planned_epochs: usize, recorded_steps_per_epoch: usize, overlays: &[Overlay]) {
    let per_step = steps_per_epoch(history, recorded_steps_per_epoch);
    let longest = overlays.iter().map(|overlay| overlay.history.epochs.len()).chain([planned_epochs, history.epochs.len(), 1]).max();
    let extent = (0.0, longest.unwrap_or(1) as f64);
    let mut loss_series = vec![
        Series {
            name: "running train loss".into(),
            colour: RUNNING,
            points: history.steps.iter().map(|point| (point.step as f64 / per_step, point.loss as f64)).collect(),
            dots: false,
        },
        Series { name: "train loss".into(), colour: TRAIN, points: per_epoch(history, |epoch| epoch.train_loss), dots: true },
        Series { name: "test loss".into(), colour: TEST, points: per_epoch(history, |epoch| epoch.test_loss), dots: true },
    ];
    let mut accuracy_series = vec![
        Series { name: "train accuracy".into(), colour: TRAIN, points: per_epoch(history, |epoch| epoch.train_accuracy), dots: true },
        Series { name: "test accuracy".into(), colour: TEST, points: per_epoch(history, |epoch| epoch.test_accuracy), dots: true },
    ];
    for overlay in overlays {
        let per_step = steps_per_epoch(overlay.history, overlay.steps_per_epoch);
        loss_series.push(Series {
            name: format!("{}: running loss", overlay.name),
            colour: overlay.colour,
            points: overlay.history.steps.iter().map(|point| (point.step as f64 / per_step, point.loss as f64)).collect(),
            dots: false,
        });
        loss_series.push(Series {
            name: format!("{}: test loss", overlay.name),
            colour: overlay.colour,
            points: per_epoch(overlay.history, |epoch| epoch.test_loss),
            dots: true,
        });
        accuracy_series.push(Series {
            name: format!("{}: test accuracy", overlay.name),
            colour: overlay.colour,
            points: per_epoch(overlay.history, |epoch| epoch.test_accuracy),
            dots: true,
        });
    }
    let loss = Chart { canvas: "loss-chart", legend: "loss-legend", format: TickFormat::Number, series: loss_series, extent };
    let accuracy = Chart { canvas: "accuracy-chart", legend: "accuracy-legend", format: TickFormat::Percent, series: accuracy_series, extent };
    for chart in [&loss, &accuracy] {
        draw(chart, None);
        show_legend(chart);
        let canvas = element::<HtmlElement>(chart.canvas);
        let _ = canvas.set_attribute("data-points", &chart.series.iter().map(|series| series.points.len()).sum::<usize>().to_string());
    }
    CHARTS.with(|charts| *charts.borrow_mut() = vec![loss, accuracy]);
}

fn show_legend(chart: &Chart) {
    let items: String = chart
        .series
        .iter()
        .map(|series| format!(r#"<span><i style="background:{}"></i>{}</span>"#, series.colour, escape(&series.name)))
        .collect();
    element::<HtmlElement>(chart.legend).set_inner_html(&items);
}

/// Draws a chart, with the values under the pointer when `pointer_x` is given.
fn draw(chart: &Chart, pointer_x: Option<f64>) {
    let canvas: HtmlCanvasElement = element(chart.canvas);
    let Some((context, width, height)) = hidpi_context(&canvas) else { return };
    let Some(layout) = layout(&chart.series, width, height, chart.extent, chart.format) else { return };
    context.clear_rect(0.0, 0.0, width, height);
    plot::draw_axes(&context, &layout, "epoch");
    for series in &chart.series {
        stroke_series(&context, &layout, series);
    }
    if chart.series.iter().all(|series| series.points.is_empty()) {
        context.set_fill_style_str("#5b6677");
        context.set_text_align("center");
        let _ = context.fill_text("no epochs yet", (layout.area.left + layout.area.right) / 2.0, (layout.area.top + layout.area.bottom) / 2.0);
    }
    if let Some(x) = pointer_x {
        draw_hover(&context, &layout, chart, x, width);
    }
}

fn stroke_series(context: &CanvasRenderingContext2d, layout: &ChartLayout, series: &Series) {
    context.set_stroke_style_str(series.colour);
    context.set_fill_style_str(series.colour);
    context.set_line_width(if series.dots { 2.0 } else { 1.5 });
    for run in layout.polylines(series) {
        context.begin_path();
        for (index, &(x, y)) in run.iter().enumerate() {
            if index == 0 { context.move_to(x, y) } else { context.line_to(x, y) }
        }
        context.stroke();
        if series.dots {
            for &(x, y) in &run {
                context.begin_path();
                let _ = context.arc(x, y, 3.0, 0.0, std::f64::consts::TAU);
                context.fill();
            }
        }
    }
}

/// A guide line at the pointer, a ring on each series' nearest point and a box with the values.
fn draw_hover(context: &CanvasRenderingContext2d, layout: &ChartLayout, chart: &Chart, x: f64, width: f64) {
    let Some(values) = layout.hover(&chart.series, x, 40.0) else { return };
    let area = layout.area;
    context.set_stroke_style_str("#9aa3b2");
    context.set_line_width(1.0);
    context.begin_path();
    context.move_to(x.round() + 0.5, area.top);
    context.line_to(x.round() + 0.5, area.bottom);
    context.stroke();
    let lines: Vec<String> = values
        .iter()
        .map(|value| format!("{}: {} (epoch {:.2})", value.series, value.label, value.x))
        .collect();
    for value in &values {
        context.set_stroke_style_str(value.colour);
        context.set_line_width(2.0);
        context.begin_path();
        let _ = context.arc(value.pixel.0, value.pixel.1, 5.0, 0.0, std::f64::consts::TAU);
        context.stroke();
    }
    context.set_font("12px system-ui, sans-serif");
    // About 6.5 px per character of 12 px system-ui; measureText would need another web-sys feature.
    let text_width = lines.iter().map(|line| 6.5 * line.chars().count() as f64).fold(0.0, f64::max);
    let (box_width, box_height) = (text_width + 24.0, 18.0 * lines.len() as f64 + 8.0);
    let left = if x + 12.0 + box_width > width { x - 12.0 - box_width } else { x + 12.0 };
    context.set_fill_style_str("rgba(255, 255, 255, 0.94)");
    context.set_stroke_style_str("#d9dee7");
    context.fill_rect(left, area.top, box_width, box_height);
    context.stroke_rect(left + 0.5, area.top + 0.5, box_width, box_height);
    context.set_text_align("left");
    context.set_text_baseline("middle");
    for (index, (line, value)) in lines.iter().zip(&values).enumerate() {
        let y = area.top + 13.0 + 18.0 * index as f64;
        context.set_fill_style_str(value.colour);
        context.fill_rect(left + 8.0, y - 4.0, 8.0, 8.0);
        context.set_fill_style_str("#1d2430");
        let _ = context.fill_text(line, left + 20.0, y);
    }
    let canvas = element::<HtmlElement>(chart.canvas);
    let _ = canvas.set_attribute("data-hover", &lines.join("; "));
}

fn redraw(canvas_id: &str, pointer_x: Option<f64>) {
    CHARTS.with(|charts| {
        for chart in charts.borrow().iter().filter(|chart| chart.canvas == canvas_id) {
            draw(chart, pointer_x);
        }
    });
}

/// Hover on both charts, and redraws at the new size when the window changes.
pub fn wire() {
    for id in ["loss-chart", "accuracy-chart"] {
        let canvas = element::<HtmlElement>(id);
        dom::listen(&canvas, "pointermove", move |event: PointerEvent| redraw(id, Some(event.offset_x() as f64)));
        dom::listen(&canvas, "pointerleave", move |_: PointerEvent| redraw(id, None));
    }
    if let Some(window) = web_sys::window() {
        dom::listen(&window, "resize", |_: web_sys::Event| {
            CHARTS.with(|charts| charts.borrow().iter().for_each(|chart| draw(chart, None)));
        });
    }
}
