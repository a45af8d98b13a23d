//! What the page's views share: the page's state ([`App`]), the way to the training worker
//! ([`send`]), the page-wide error line ([`show_error`]), and [`changed`], by which a view says
//! what it changed so that the page (`page.rs`) can update the views that depend on it. Views
//! depend on this module and never on each other.

use std::cell::RefCell;
use std::rc::Rc;

use burn::tensor::Device;
use js_sys::Reflect;
use wasm_bindgen::prelude::*;
use web_sys::Worker;

use super::dom::{set_hidden, set_text};
use crate::compute::ComputePath;
use crate::inference::{AttentionView, Explanation};
use crate::model::{VisionTransformer, VitConfig};
use crate::data::classes::CLASS_NAMES;
use crate::data::image_folder::PictureCollection;
use crate::protocol::{DatasetSource, PreviewImage, WorkerInput, WorkerOutput};
use crate::runs::{Run, Trainers};
use crate::viz::captures::{CaptureLog, Probe};
use crate::training::MetricsHistory;
use crate::viz::resize::resize_square;
use crate::weights::{WeightFileInfo, from_safetensors};

/// What the page holds between events.
pub struct App {
    pub device: Device,
    pub compute: ComputePath,
    pub config: VitConfig,
    pub model: VisionTransformer,
    /// The image whose attention the worker reports during training: the sample photo, or a
    /// picture the person chose.
    pub probe: Rc<Probe>,
    /// The probe's attention at every capture of the current run.
    pub captures: CaptureLog,
    pub worker: Worker,
    /// The threads the worker was started with (1: the single-threaded module), to start another
    /// like it if it dies.
    pub worker_threads: usize,
    pub worker_ready: bool,
    /// When the worker last sent anything, and the longest a training step took so far, in
    /// milliseconds: how the page notices a worker that stopped answering.
    pub worker_heard_ms: f64,
    pub slowest_step_ms: f64,
    pub last_step_ms: f64,
    /// Training is paused: the worker is silent on purpose.
    pub paused: bool,
    /// The worker has answered the request to train: the run started, or waits for an
    /// evaluation to end. Until it answers, the page waits for it within a bound
    /// (`page::watch_worker`).
    pub run_answered: bool,
    pub dataset_ready: bool,
    pub training: bool,
    /// The current model's weight file (safetensors) and what it says, when it came from one
    /// (shipped, uploaded or trained here).
    pub weights: Option<Vec<u8>>,
    pub weights_info: Option<WeightFileInfo>,
    /// Where they came from, for people: "Pretrained weights", "Trained in this page".
    pub weights_origin: String,
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
    /// The training images/s measured here on the path the page runs on, when it was measured
    /// (what the time-budget recipe fits its epochs to).
    pub measured_speed: Option<f64>,
    /// Training and test images of the loaded dataset, where it came from, and its classes
    /// (CIFAR-10's, or the person's own).
    pub dataset_images: Option<(usize, usize)>,
    pub dataset_source: Option<DatasetSource>,
    pub dataset_classes: Vec<String>,
    /// The person's own pictures, as imported (kept in browser storage).
    pub collection: PictureCollection,
    /// Every training run in this browser, in the order they started; the one in progress; the
    /// ones drawn over the charts.
    pub runs: Vec<Run>,
    pub current_run: Option<u64>,
    /// The runs other tabs are training now (they hold their locks).
    pub runs_elsewhere: Vec<u64>,
    pub overlaid: Vec<u64>,
    /// The worker's messages that arrived while the page was starting (`None` once it has).
    pub early_messages: Option<Vec<(WorkerOutput, Option<Vec<u8>>)>>,
    /// Updates the views that depend on a [`Change`]; set by the page when it starts.
    pub on_change: fn(&SharedApp, Change),
}

pub type SharedApp = Rc<RefCell<App>>;

impl App {
    /// The current model's class names: its weight file's, or CIFAR-10's for fresh weights.
    pub fn model_class_names(&self) -> Vec<String> {
        match &self.weights_info {
            Some(info) => info.class_names.clone(),
            None => CLASS_NAMES.iter().map(|name| name.to_string()).collect(),
        }
    }

    /// Which runs are being trained, here and in other tabs.
    pub fn trainers(&self) -> Trainers {
        Trainers { here: self.current_run, elsewhere: self.runs_elsewhere.clone() }
    }

    /// Whether the model's classes are the loaded dataset's, so it can be tested on it.
    pub fn model_fits_dataset(&self) -> bool {
        self.model_class_names() == self.dataset_classes
    }
}

/// What a view changed in [`App`], for the views that show what depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// `picture` is a new one: show it and explain it.
    Picture,
    /// `model` (with `config`, `weights`, `weights_info` and `history`) is new: everything
    /// computed from the weights is redrawn.
    Weights,
    /// `history` grew: redraw the charts.
    History,
    /// `runs` changed, here or in another tab: redraw the table, the charts' overlays and the
    /// offer to resume.
    Runs,
}

/// Tells the page that `change` happened, so that it updates the views that depend on it.
pub fn changed(app: &SharedApp, change: Change) {
    let on_change = app.borrow().on_change;
    on_change(app, change);
}

/// Installs `bytes` (a safetensors file, checked in full first) as the page's model and tells
/// the views; a refused file changes nothing.
pub fn adopt_weights(app: &SharedApp, bytes: Vec<u8>, origin: &str) -> Result<(), String> {
    let (model, info) = from_safetensors(&bytes, &app.borrow().device).map_err(|error| error.to_string())?;
    {
        let mut app = app.borrow_mut();
        app.model = model;
        app.config = info.config.clone();
        app.weights = Some(bytes);
        app.history = serde_json::from_str(&info.metrics_json).unwrap_or_default();
        app.weights_info = Some(info);
        app.weights_origin = origin.to_string();
    }
    changed(app, Change::Weights);
    Ok(())
}

/// A picture the model can explain: its centred square at display resolution and the 32×32
/// input made from it.
#[derive(Debug, Clone)]
pub struct Picture {
    pub name: String,
    /// The centred square, `side × side` RGBA.
    pub square: Vec<u8>,
    pub side: usize,
    /// What the model sees: 32×32 RGBA.
    pub input: Vec<u8>,
}

impl Picture {
    /// A 32×32 image (RGBA) as a picture, enlarged pixel by pixel for display.
    pub fn from_small(rgba: &[u8], name: String) -> Self {
        let side = 256;
        let square = resize_square(rgba, 32, side).expect("a 32×32 image resamples");
        Self { name, square, side, input: rgba.to_vec() }
    }
}

/// The pretrained weights, shipped beside the page; see weights/README.md for how they were made.
pub const PRETRAINED: &str = "weights/vit-tiny.safetensors";

/// The prepared dataset's manifest; `?dataset=URL` points the page at another one.
pub fn dataset_manifest_url() -> String {
    super::dom::query_param("dataset").unwrap_or_else(|| "data/manifest.json".into())
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

/// The page-wide error line (and the console).
pub fn show_error(message: &str) {
    web_sys::console::error_1(&message.into());
    set_text("error", message);
    set_hidden("error", false);
}
