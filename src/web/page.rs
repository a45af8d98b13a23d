//! The page's start-up flow and its state: pick the compute path, build the model, classify the
//! sample image, then hand the dataset and training to the worker.

use std::cell::RefCell;
use std::rc::Rc;

use burn::module::Module;
use burn::tensor::Device;
use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, spawn_local};
use web_sys::{HtmlCanvasElement, HtmlImageElement, HtmlSelectElement, MessageEvent, Worker};

use super::adapter::{adapter_summary, init_device};
use super::dom::{self, element, escape, set_hidden, set_text};
use super::{dataset_view, training_view, weights_view};
use crate::classes::CLASS_NAMES;
use crate::compute::{ComputePath, PathRequest, choose_path};
use crate::display::group_thousands;
use crate::inference::{images_tensor, predict, ranked};
use crate::model::{Preset, VisionTransformer, VitConfig};
use crate::preprocess::normalize_rgba;
use crate::protocol::{WorkerInput, WorkerOutput};
use crate::weights::WeightFileInfo;

const SAMPLE_IMAGE: &str = "samples/chelsea.png";
/// The prepared dataset's manifest; `?dataset=URL` points the page at another one.
const DATASET_MANIFEST: &str = "data/manifest.json";

/// What the page holds between events.
pub struct App {
    pub device: Device,
    pub compute: ComputePath,
    pub config: VitConfig,
    pub model: VisionTransformer,
    /// The sample image as the model sees it, RGBA 32×32.
    pub sample_rgba: Vec<u8>,
    pub worker: Worker,
    pub worker_ready: bool,
    pub dataset_ready: bool,
    pub training: bool,
    /// The current model's weight file (safetensors) and what it says, when it came from one
    /// (shipped, uploaded or trained here).
    pub weights: Option<Vec<u8>>,
    pub weights_info: Option<WeightFileInfo>,
}

pub type SharedApp = Rc<RefCell<App>>;

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
    if choice.path == ComputePath::Cpu {
        set_text("train-note", "Training runs on the CPU (WebAssembly) here, which is slower than a GPU.");
    }

    let preset = Preset::Tiny;
    let config = preset.config();
    let model = config.init(&device);
    show_model_summary(preset.name(), &config, model.num_params());

    let sample_rgba = load_sample(SAMPLE_IMAGE, config.image_size as u32).await?;
    let worker = start_worker()?;
    let app = Rc::new(RefCell::new(App {
        device,
        compute: choice.path,
        config,
        model,
        sample_rgba,
        worker,
        worker_ready: false,
        dataset_ready: false,
        training: false,
        weights: None,
        weights_info: None,
    }));
    weights_view::load_pretrained(&app).await;
    {
        let app = app.borrow();
        classify(&app.model, &app.config, &app.device, &app.sample_rgba, "first run, includes kernel compilation").await?;
    }
    listen_to_worker(&app);
    dataset_view::wire(&app);
    training_view::wire(&app);
    weights_view::wire(&app);
    dom::document()
        .body()
        .expect("the page has a body")
        .set_attribute("data-ready", "true")
        .map_err(|_| "could not mark the page ready".to_string())?;
    Ok(())
}

pub fn show_model_summary(preset: &str, config: &VitConfig, parameters: usize) {
    set_text(
        "model-summary",
        &format!(
            "{preset} preset · {} parameters · {} layers, D={}, {} heads, MLP {}, {}×{} patches of {}×{} px",
            group_thousands(parameters),
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

fn start_worker() -> Result<Worker, String> {
    let options = web_sys::WorkerOptions::new();
    options.set_type(web_sys::WorkerType::Module);
    Worker::new_with_options("worker.js", &options).map_err(|_| "this browser cannot start the training worker".to_string())
}

/// Sends a message to the worker, with an optional transferable payload beside it.
pub fn send(app: &SharedApp, input: &WorkerInput, payload: Option<(&str, JsValue)>) {
    let message = serde_wasm_bindgen::to_value(input).expect("worker messages serialise");
    if let Some((key, value)) = payload {
        let _ = Reflect::set(&message, &key.into(), &value);
    }
    if app.borrow().worker.post_message(&message).is_err() {
        show_error("the training worker stopped answering; reload the page");
    }
}

fn listen_to_worker(app: &SharedApp) {
    let handler_app = app.clone();
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |event: MessageEvent| {
        let data = event.data();
        let bytes = Reflect::get(&data, &"bytes".into())
            .ok()
            .filter(|value| !value.is_undefined())
            .map(|value| Uint8Array::new(&value).to_vec());
        match serde_wasm_bindgen::from_value::<WorkerOutput>(data) {
            Ok(output) => on_worker_output(&handler_app, output, bytes),
            Err(error) => show_error(&format!("unreadable message from the worker: {error}")),
        }
    });
    let on_error = Closure::<dyn Fn(web_sys::Event)>::new(|_| {
        show_error("the training worker failed to start or crashed; reload the page");
    });
    let app = app.borrow();
    app.worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    app.worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    on_message.forget(); // both live as long as the page
    on_error.forget();
}

fn on_worker_output(app: &SharedApp, output: WorkerOutput, bytes: Option<Vec<u8>>) {
    match output {
        WorkerOutput::WorkerReady => {
            app.borrow_mut().worker_ready = true;
            dataset_view::loading_started();
            let manifest_url = dom::query_param("dataset").unwrap_or_else(|| DATASET_MANIFEST.into());
            send(app, &WorkerInput::LoadPreparedDataset { manifest_url }, None);
        }
        WorkerOutput::DatasetProgress { stage, done, total } => dataset_view::show_progress(stage, done, total),
        WorkerOutput::DatasetReady { source, train_images, test_images, seconds, warning, preview } => {
            app.borrow_mut().dataset_ready = true;
            dataset_view::show_ready(source, train_images, test_images, seconds, warning.as_deref(), &preview);
            training_view::refresh_buttons(app);
        }
        WorkerOutput::DatasetFailed { message } => {
            dataset_view::show_failed(&message);
            training_view::refresh_buttons(app);
        }
        WorkerOutput::Epoch { metrics, history } => {
            training_view::show_epoch(&metrics, &history);
            if let Some(bytes) = bytes {
                match weights_view::adopt(app, bytes, "Trained in this page") {
                    Ok(_) => reclassify(app),
                    Err(message) => show_error(&format!("the trained weights could not be loaded: {message}")),
                }
            }
        }
        other => training_view::on_output(app, other),
    }
}

/// Classifies the sample image again with the page's current model.
pub fn reclassify(app: &SharedApp) {
    let (model, config, device, sample) = {
        let app = app.borrow();
        (app.model.clone(), app.config.clone(), app.device.clone(), app.sample_rgba.clone())
    };
    spawn_local(async move {
        if let Err(message) = classify(&model, &config, &device, &sample, "with the current weights").await {
            show_error(&message);
        }
    });
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
    let context = dom::context_2d(&canvas).ok_or("this browser gives no 2D canvas")?;
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

async fn classify(model: &VisionTransformer, config: &VitConfig, device: &Device, rgba: &[u8], when: &str) -> Result<(), String> {
    let pixels = rgba.len() / 4;
    let started = dom::now_ms();
    let images = images_tensor(normalize_rgba(rgba, pixels), 1, config, device);
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
    set_text("inference-time", &format!("{elapsed:.0} ms ({when})"));
    Ok(())
}

pub fn show_error(message: &str) {
    web_sys::console::error_1(&message.into());
    set_text("error", message);
    set_hidden("error", false);
}
