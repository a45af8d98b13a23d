//! Stroking a chart's geometry (`viz::chart`) on a canvas, for every view that draws one.

use web_sys::CanvasRenderingContext2d;

use crate::viz::chart::ChartLayout;

/// Grid lines with their labels, the x axis's labels and name, and both axis lines.
pub fn draw_axes(context: &CanvasRenderingContext2d, layout: &ChartLayout, x_name: &str) {
    let area = layout.area;
    context.set_font("11px system-ui, sans-serif");
    context.set_line_width(1.0);
    context.set_stroke_style_str("#e6e9ef");
    context.set_fill_style_str("#5b6677");
    context.set_text_align("right");
    context.set_text_baseline("middle");
    for tick in &layout.y_ticks {
        let y = tick.pixel.round() + 0.5; // on a pixel's centre: a crisp one-pixel line
        context.begin_path();
        context.move_to(area.left, y);
        context.line_to(area.right, y);
        context.stroke();
        let _ = context.fill_text(&tick.label, area.left - 6.0, y);
    }
    context.set_text_align("center");
    context.set_text_baseline("top");
    for tick in &layout.x_ticks {
        let _ = context.fill_text(&tick.label, tick.pixel, area.bottom + 6.0);
    }
    context.set_text_align("right");
    context.set_text_baseline("bottom");
    let _ = context.fill_text(x_name, area.right, area.bottom + 26.0);
    context.set_stroke_style_str("#9aa3b2");
    context.begin_path();
    context.move_to(area.left + 0.5, area.top);
    context.line_to(area.left + 0.5, area.bottom + 0.5);
    context.line_to(area.right, area.bottom + 0.5);
    context.stroke();
}

