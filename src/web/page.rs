//! The page's start-up flow: pick the compute path, build the model, classify the sample image.

use burn::module::Module;
use burn::tensor::Device;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, HtmlImageElement, HtmlSelectElement};

use super::adapter::{adapter_summary, init_device};
use super::dom::{self, element, escape, set_hidden, set_text};
use crate::classes::CLASS_NAMES;
use crate::compute::{ComputePath, PathRequest, choose_path};
use crate::inference::{images_tensor, predict, ranked};
use crate::display::group_thousands;
use crate::model::{Preset, VisionTransformer, VitConfig};
use crate::preprocess::normalize_rgba;

const SAMPLE_IMAGE: &str = "samples/chelsea.png";

pub async fn run() {
    if let Err(message) = start_up().await {
        show_error(&message);
    }
}

async fn start_up() -> Result<(), String> {
    let request = PathRequest::parse(dom::query_param("compute").as_deref());
    wire_compute_switch(request);

    let adapter = adapter_summary().await;
    let adapter_text = match &adapter {
        Some(adapter) if adapter.is_software() => format!("{} (software renderer)", adapter.label()),
        Some(adapter) => adapter.label(),
        None => "none: this browser offers no WebGPU".into(),
    };
    set_text("adapter", &adapter_text);
    set_hidden("no-webgpu", adapter.is_some());

    let mut choice = choose_path(request, adapter.as_ref());
    let device = match init_device(choice.path).await {
        Ok(device) => device,
        Err(problem) => {
            choice.path = ComputePath::Cpu;
            choice.reason = format!("{problem}. Running on the CPU (wasm) instead.");
            init_device(ComputePath::Cpu).await?
        }
    };
    set_text("compute-path", path_name(choice.path));
    set_text("compute-reason", &choice.reason);

    let preset = Preset::Tiny;
    let config = preset.config();
    let model = config.init(&device);
    set_text(
        "model-summary",
        &format!(
            "{} preset · {} parameters · {} layers, D={}, {} heads, MLP {}, {}×{} patches of {}×{} px",
            preset.name(),
            group_thousands(model.num_params()),
            config.depth,
            config.embed_dim,
            config.heads,
            config.mlp_dim,
            config.grid_size(),
            config.grid_size(),
            config.patch_size,
            config.patch_size,
        ),
    );

    let pixels = load_sample(SAMPLE_IMAGE, config.image_size as u32).await?;
    classify(&model, &config, &device, pixels).await?;
    dom::document()
        .body()
        .expect("the page has a body")
        .set_attribute("data-ready", "true")
        .map_err(|_| "could not mark the page ready".to_string())?;
    Ok(())
}

fn path_name(path: ComputePath) -> &'static str {
    match path {
        ComputePath::WebGpu => "WebGPU",
        ComputePath::Cpu => "CPU (wasm)",
    }
}

/// Reloads the page with `?compute=…` when the person picks another path.
fn wire_compute_switch(request: PathRequest) {
    let select: HtmlSelectElement = element("compute-select");
    select.set_value(match request {
        PathRequest::Auto => "auto",
        PathRequest::WebGpu => "webgpu",
        PathRequest::Cpu => "cpu",
    });
    let on_change = Closure::<dyn Fn()>::new(move || {
        let value = element::<HtmlSelectElement>("compute-select").value();
        if let Some(window) = web_sys::window() {
            let _ = window.location().set_search(&format!("compute={value}"));
        }
    });
    select.set_onchange(Some(on_change.as_ref().unchecked_ref()));
    on_change.forget(); // lives as long as the page
}

/// Loads an image, centre-crops it to a square and draws it at `size`×`size` on the input
/// canvas; returns its RGBA bytes.
async fn load_sample(url: &str, size: u32) -> Result<Vec<u8>, String> {
    let image = HtmlImageElement::new().map_err(|_| "could not create an image")?;
    image.set_src(url);
    JsFuture::from(image.decode())
        .await
        .map_err(|_| format!("the sample image {url} could not be loaded"))?;
    element::<HtmlImageElement>("sample-image").set_src(url);

    let canvas: HtmlCanvasElement = element("input-canvas");
    canvas.set_width(size);
    canvas.set_height(size);
    let context = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|context| context.dyn_into::<CanvasRenderingContext2d>().ok())
        .ok_or("this browser gives no 2D canvas")?;
    let (width, height) = (image.natural_width() as f64, image.natural_height() as f64);
    let side = width.min(height);
    context
        .draw_image_with_html_image_element_and_sw_and_sh_and_dx_and_dy_and_dw_and_dh(
            &image,
            (width - side) / 2.0,
            (height - side) / 2.0,
            side,
            side,
            0.0,
            0.0,
            size as f64,
            size as f64,
        )
        .map_err(|_| "could not draw the sample image")?;
    let data = context
        .get_image_data(0.0, 0.0, size as f64, size as f64)
        .map_err(|_| "could not read the sample image's pixels")?;
    Ok(data.data().0)
}

async fn classify(model: &VisionTransformer, config: &VitConfig, device: &Device, rgba: Vec<u8>) -> Result<(), String> {
    let pixels = rgba.len() / 4;
    let started = dom::now_ms();
    let images = images_tensor(normalize_rgba(&rgba, pixels), 1, config, device);
    let (probabilities, _) = predict(model, images);
    let probabilities = probabilities
        .into_data_async()
        .await
        .map_err(|error| format!("reading the prediction failed: {error:?}"))?
        .try_to_vec::<f32>()
        .map_err(|error| format!("the prediction has an unexpected type: {error:?}"))?;
    let elapsed = dom::now_ms() - started;

    let rows: String = ranked(&probabilities, &CLASS_NAMES)
        .iter()
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
    element::<web_sys::HtmlElement>("probabilities").set_inner_html(&rows);
    set_text("inference-time", &format!("{elapsed:.0} ms, first run (includes kernel compilation)"));
    Ok(())
}

fn show_error(message: &str) {
    web_sys::console::error_1(&message.into());
    set_text("error", message);
    set_hidden("error", false);
}
