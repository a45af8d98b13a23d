//! The training card's probe panel: the probe image with its attention rollout, each layer's
//! mean attention, and what the model says, at every capture of the run. A slider scrubs back
//! through the captures (step and epoch shown) and a play button animates them; while the
//! slider is at its end it follows the run. The person can watch any picture the photo card
//! shows (a test image from the grid, their own photo) instead of the sample.

use std::cell::Cell;
use std::rc::Rc;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{HtmlButtonElement, HtmlElement, HtmlInputElement};

use crate::display::bytes;
use crate::inference::{Explanation, ranked};
use crate::protocol::WorkerInput;
use crate::viz::captures::{Capture, Probe};
use crate::web::app::{SharedApp, send};
use crate::web::dom::{self, element, set_text};
use crate::web::overlay::{THUMBNAIL, draw_map, resized};

/// Side the probe's 32×32 image is enlarged to (whole pixels: 6× each).
const PROBE_SIDE: usize = 192;
/// Milliseconds between two captures when playing.
const PLAY_EVERY_MS: i32 = 120;

thread_local! {
    /// The interval that plays the captures, while it runs.
    static PLAYING: Cell<Option<i32>> = const { Cell::new(None) };
}

fn slider() -> HtmlInputElement {
    element("probe-slider")
}

/// Forgets the last run's captures: a new run starts.
pub fn clear(app: &SharedApp) {
    stop_playing();
    app.borrow_mut().captures.clear();
    let slider = slider();
    slider.set_max("0");
    slider.set_value_as_number(0.0);
    slider.set_disabled(true);
    element::<HtmlButtonElement>("probe-play").set_disabled(true);
    set_text("probe-position", "");
}

/// Keeps a capture of the run and shows it if the slider follows the run.
pub fn capture(app: &SharedApp, step: usize, epoch: usize, explanation: &Explanation) {
    let following = {
        let slider = slider();
        slider.value_as_number() >= slider.max().parse::<f64>().unwrap_or(0.0)
    };
    let count = {
        let mut app = app.borrow_mut();
        let capture = Capture::of(step, epoch, app.probe.clone(), explanation);
        app.captures.push(capture);
        app.captures.len()
    };
    let slider = slider();
    slider.set_max(&(count - 1).to_string());
    slider.set_disabled(count < 2);
    element::<HtmlButtonElement>("probe-play").set_disabled(count < 2);
    if following && PLAYING.get().is_none() {
        slider.set_value_as_number((count - 1) as f64);
        draw(app, count - 1);
    } else {
        show_position(app, slider.value_as_number() as usize);
    }
}

fn show_position(app: &SharedApp, index: usize) {
    let app = app.borrow();
    let Some(capture) = app.captures.get(index) else { return };
    let latest = app.captures.len();
    set_text(
        "probe-position",
        &format!(
            "capture {} of {latest} · step {} · epoch {}{} · {} · {} kept",
            index + 1,
            capture.step,
            capture.epoch,
            if index + 1 == latest { " (latest)" } else { "" },
            capture.probe.name,
            bytes(app.captures.bytes() as u64)
        ),
    );
}

/// Draws capture `index` of the run.
fn draw(app: &SharedApp, index: usize) {
    show_position(app, index);
    let app = app.borrow();
    let Some(capture) = app.captures.get(index) else { return };
    let large = resized(&capture.probe.image, 32, PROBE_SIDE);
    draw_map(&element("probe-canvas"), &large, PROBE_SIDE, &capture.rollout, capture.grid);
    let small = resized(&capture.probe.image, 32, THUMBNAIL);
    let container = element::<HtmlElement>("probe-layers");
    let layers = capture.layers.len();
    if container.child_element_count() as usize != layers {
        let figures: String = (0..layers)
            .map(|layer| {
                format!(r#"<figure><canvas width="{THUMBNAIL}" height="{THUMBNAIL}"></canvas><figcaption>layer {}</figcaption></figure>"#, layer + 1)
            })
            .collect();
        container.set_inner_html(&figures);
    }
    let canvases = container.query_selector_all("canvas").expect("a valid selector");
    for (layer, map) in capture.layers.iter().enumerate() {
        if let Some(canvas) = canvases.item(layer as u32) {
            draw_map(canvas.unchecked_ref(), &small, THUMBNAIL, map, capture.grid);
        }
    }
    let names = app.model_class_names();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let best = &ranked(&capture.probabilities, &names)[0];
    set_text("probe-text", &format!("step {}: “{}” at {:.0}%", capture.step, best.name, 100.0 * best.probability));
    let canvas = element::<HtmlElement>("probe-canvas");
    let _ = canvas.set_attribute("data-step", &capture.step.to_string());
    let _ = canvas.set_attribute("data-probe", &capture.probe.name);
}

fn stop_playing() {
    if let (Some(interval), Some(window)) = (PLAYING.take(), web_sys::window()) {
        window.clear_interval_with_handle(interval);
    }
    element::<HtmlButtonElement>("probe-play").set_text_content(Some("▶ Play"));
}

fn play(app: &SharedApp) {
    let at = slider();
    if at.value_as_number() >= at.max().parse::<f64>().unwrap_or(0.0) {
        at.set_value_as_number(0.0);
    }
    let app = app.clone();
    let tick = Closure::<dyn Fn()>::new(move || {
        let slider = slider();
        let next = slider.value_as_number() + 1.0;
        let last = slider.max().parse::<f64>().unwrap_or(0.0);
        if next > last {
            stop_playing();
            return;
        }
        slider.set_value_as_number(next);
        draw(&app, next as usize);
        if next >= last {
            stop_playing(); // at the latest capture: from here the slider follows the run again
        }
    });
    let Some(window) = web_sys::window() else { return };
    if let Ok(interval) = window.set_interval_with_callback_and_timeout_and_arguments_0(tick.as_ref().unchecked_ref(), PLAY_EVERY_MS) {
        PLAYING.set(Some(interval));
        element::<HtmlButtonElement>("probe-play").set_text_content(Some("⏸ Pause"));
    }
    tick.forget(); // one small closure per press of play
}

pub fn wire(app: &SharedApp) {
    let slider_app = app.clone();
    dom::listen(&slider(), "input", move |_: web_sys::Event| {
        stop_playing();
        draw(&slider_app, slider().value_as_number() as usize);
    });
    let play_app = app.clone();
    dom::listen(&element::<HtmlElement>("probe-play"), "click", move |_: web_sys::Event| {
        if PLAYING.get().is_some() { stop_playing() } else { play(&play_app) }
    });
    let use_app = app.clone();
    dom::listen(&element::<HtmlElement>("probe-use"), "click", move |_: web_sys::Event| {
        let Some(picture) = use_app.borrow().picture.clone() else { return };
        let training = {
            let mut app = use_app.borrow_mut();
            app.probe = Rc::new(Probe { name: picture.name.clone(), image: picture.input.clone() });
            app.training
        };
        set_text("probe-name", &picture.name);
        if training {
            send(&use_app, &WorkerInput::SetProbe { probe: picture.input.clone() }, None);
        }
    });
}
