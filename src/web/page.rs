//! The page's start-up flow and its state: pick the compute path, build the model, classify the
//! sample image, then hand the dataset and training to the worker.

use std::cell::RefCell;
use std::rc::Rc;

use burn::module::Module;
use burn::tensor::Device;
use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;
use web_sys::{HtmlSelectElement, MessageEvent, Worker};

use super::adapter::{adapter_summary, init_device};
use super::attention_view::{self, Picture};
use super::dom::{self, element, escape, set_hidden, set_text};
use super::{chart_view, dataset_view, photo_view, position_view, predictions_view, training_view, weights_view};
use crate::data::classes::CLASS_NAMES;
use crate::compute::{ComputePath, PathRequest, choose_path};
use crate::display::group_thousands;
use crate::inference::{AttentionView, Explanation, explain, ranked};
use crate::model::{Preset, VisionTransformer, VitConfig};
use crate::protocol::{PreviewImage, WorkerInput, WorkerOutput};
use crate::training::{MetricsHistory, TestEvaluation};
use crate::weights::WeightFileInfo;

const SAMPLE_IMAGE: &str = "samples/chelsea.png";
/// The prepared dataset's manifest; `?dataset=URL` points the page at another one.
const DATASET_MANIFEST: &str = "data/manifest.json";
/// Classes listed for a picture.
const TOP_CLASSES: usize = 5;

/// What the page holds between events.
pub struct App {
    pub device: Device,
    pub compute: ComputePath,
    pub config: VitConfig,
    pub model: VisionTransformer,
    /// The sample photo as the model sees it (32×32 RGBA): the probe whose attention the worker
    /// reports during training.
    pub probe: Vec<u8>,
    pub worker: Worker,
    pub worker_ready: bool,
    pub dataset_ready: bool,
    pub training: bool,
    /// The current model's weight file (safetensors) and what it says, when it came from one
    /// (shipped, uploaded or trained here).
    pub weights: Option<Vec<u8>>,
    pub weights_info: Option<WeightFileInfo>,
    /// The picture being explained, and its latest explanation.
    pub picture: Option<Picture>,
    /// Counts pictures asked for, so a slow decode never replaces a later choice.
    pub picture_generation: u64,
    pub explanation: Option<Explanation>,
    pub view: AttentionView,
    /// The test images of the predictions grid and every test label, from the worker.
    pub test_preview: Vec<PreviewImage>,
    pub test_labels: Vec<u8>,
    /// What the charts draw: the current weights' training history.
    pub history: MetricsHistory,
    pub planned_epochs: usize,
    pub steps_per_epoch: usize,
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

    let sample = photo_view::load_sample(SAMPLE_IMAGE).await?;
    let worker = start_worker()?;
    let app = Rc::new(RefCell::new(App {
        device,
        compute: choice.path,
        config,
        model,
        probe: sample.input.clone(),
        worker,
        worker_ready: false,
        dataset_ready: false,
        training: false,
        weights: None,
        weights_info: None,
        picture: None,
        picture_generation: 0,
        explanation: None,
        view: AttentionView::Rollout,
        test_preview: Vec::new(),
        test_labels: Vec::new(),
        history: MetricsHistory::default(),
        planned_epochs: 10,
        steps_per_epoch: 0,
    }));
    chart_view::wire();
    chart_view::show(&MetricsHistory::default(), 10, 0);
    attention_view::wire(&app);
    weights_view::load_pretrained(&app).await;
    photo_view::adopt(&app, sample);
    listen_to_worker(&app);
    dataset_view::wire(&app);
    training_view::wire(&app);
    weights_view::wire(&app);
    photo_view::wire(&app);
    predictions_view::wire(&app);
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

/// Reloads the page with `?compute=…` when the person picks another path, keeping the page's other
/// parameters (such as `?dataset=`).
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
            let location = window.location();
            let search = location.search().unwrap_or_default();
            if let Ok(parameters) = web_sys::UrlSearchParams::new_with_str(&search) {
                parameters.set("compute", &value);
                let _ = location.set_search(&String::from(parameters.to_string()));
            }
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
        WorkerOutput::DatasetReady { source, train_images, test_images, seconds, warning, preview, test_preview, test_labels } => {
            {
                let mut app = app.borrow_mut();
                app.dataset_ready = true;
                app.test_preview = test_preview;
                app.test_labels = test_labels;
            }
            dataset_view::show_ready(source, train_images, test_images, seconds, warning.as_deref(), &preview);
            training_view::refresh_buttons(app);
            request_evaluation(app);
        }
        WorkerOutput::DatasetFailed { message } => {
            dataset_view::show_failed(&message);
            training_view::refresh_buttons(app);
        }
        WorkerOutput::Epoch { metrics, evaluation, heap_bytes, gpu_bytes } => {
            training_view::show_epoch(&metrics, Some(heap_bytes), gpu_bytes);
            if let Some(bytes) = bytes {
                match weights_view::adopt(app, bytes, "Trained in this page") {
                    Ok(_) => weights_changed(app),
                    Err(message) => show_error(&format!("the trained weights could not be loaded: {message}")),
                }
            }
            show_evaluation(app, &evaluation, &format!("After epoch {}", metrics.epoch));
        }
        WorkerOutput::CheckpointWeights => match bytes.map(|bytes| weights_view::adopt(app, bytes, "From the saved checkpoint")) {
            Some(Ok(_)) => weights_changed(app),
            Some(Err(message)) => show_error(&format!("the checkpoint's weights could not be loaded: {message}")),
            None => show_error("the worker sent no weights"),
        },
        WorkerOutput::Evaluated { evaluation } => show_evaluation(app, &evaluation, "Current weights"),
        WorkerOutput::EvaluationFailed { message } => set_text("evaluation-summary", &format!("The test set was not evaluated: {message}")),
        WorkerOutput::Probe { step, explanation } => {
            let probe = app.borrow().probe.clone();
            attention_view::show_probe(step, &probe, &explanation);
        }
        other => training_view::on_output(app, other),
    }
}

fn show_evaluation(app: &SharedApp, evaluation: &TestEvaluation, source: &str) {
    let app = app.borrow();
    if evaluation.predictions.len() == app.test_labels.len() {
        predictions_view::show(evaluation, &app.test_labels, &app.test_preview, source);
    }
}

/// Asks the worker to evaluate the current weights on the test set, when it has both. During
/// training each epoch's message brings its own evaluation.
pub fn request_evaluation(app: &SharedApp) {
    let (weights, compute) = {
        let app = app.borrow();
        if !app.dataset_ready || app.training {
            return;
        }
        let Some(weights) = app.weights.clone() else { return };
        (weights, app.compute)
    };
    set_text("evaluation-summary", "Evaluating the current weights on the test set…");
    send(app, &WorkerInput::Evaluate { compute }, Some(("bytes", Uint8Array::from(weights.as_slice()).into())));
}

/// Everything that depends on the weights, after they changed: the picture's prediction and
/// attention, the positional-embedding figure and the test-set evaluation.
pub fn weights_changed(app: &SharedApp) {
    explain_picture(app);
    let model = app.borrow().model.clone();
    spawn_local(async move {
        if let Err(message) = position_view::show(&model).await {
            show_error(&message);
        }
    });
    request_evaluation(app);
}

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
                show_probabilities(&explanation.probabilities);
                set_text("inference-time", &format!("Prediction and attention took {elapsed:.0} ms."));
                let _ = element::<web_sys::HtmlElement>("inference-time").set_attribute("data-ms", &format!("{elapsed:.2}"));
                let view = app.borrow().view;
                attention_view::show(&picture, &explanation, view);
                app.borrow_mut().explanation = Some(explanation);
            }
            Err(message) => show_error(&message),
        }
    });
}

fn show_probabilities(probabilities: &[f32]) {
    let rows: String = ranked(probabilities, &CLASS_NAMES)
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
    element::<web_sys::HtmlElement>("probabilities").set_inner_html(&rows);
}

pub fn show_error(message: &str) {
    web_sys::console::error_1(&message.into());
    set_text("error", message);
    set_hidden("error", false);
}
