//! The training worker: owns the dataset and the training session, so downloads, decoding and
//! training never block the page. Started by `www/worker.js`; talks to the page only through
//! [`WorkerInput`] and [`WorkerOutput`].

use std::cell::RefCell;
use std::sync::Arc;

use burn::module::Module;
use burn::tensor::Device;
use js_sys::{Array, Promise, Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, spawn_local};
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use super::adapter::init_device;
use super::storage;
use crate::compute::{ComputePath, device_loss_message, lost_device};
use crate::data::classes::CLASS_NAMES;
use crate::data::image_folder::{PictureCollection, split_held_out};
use crate::data::{IMAGE_BYTES, ImageSet};
use crate::data::asset::decode_asset_with_progress;
use crate::data::cifar::decode_archive_from_reader;
use crate::data::decoded::{decode_decoded, encode_decoded};
use crate::data::manifest::{DatasetManifest, sha256_hex};
use crate::data::subset::SubsetRule;
use crate::inference::explain;
use crate::protocol::{DatasetSource, LoadStage, PreviewImage, WorkerInput, WorkerOutput};
use crate::model::VitConfig;
use crate::runs::checkpoint_file;
use crate::training::{
    Checkpoint, Trainable, TrainingError, TrainingRecipe, TrainingSession, cpu_step_too_large, evaluate_with_progress, fixed_batch, fixed_trainer,
    fresh_model,
};
use crate::weights::{from_safetensors, inspect_safetensors};

/// Run `run_id`'s checkpoint in browser storage. One saved before each run had its own
/// ([`LEGACY_CHECKPOINT`]) is given by the page to the run it belongs to.
async fn stored_checkpoint(run_id: u64) -> Result<Checkpoint, String> {
    let bytes = storage::read_file(&checkpoint_file(run_id)).await?.ok_or("the run's checkpoint is no longer in this browser's storage")?;
    Checkpoint::decode(&bytes).map_err(|error| format!("the saved checkpoint cannot be used ({error})"))
}

/// How a training run begins.
enum Start {
    Fresh { recipe: TrainingRecipe, weights: Option<Vec<u8>> },
    FromCheckpoint,
}

/// The run a training session is, and how it begins.
struct RunStart {
    run_id: u64,
    start: Start,
}

/// Preview images sent to the page: four of each class.
const PREVIEW_PER_CLASS: usize = 4;
/// Test images in the page's predictions grid.
const TEST_PREVIEW: usize = 24;
/// Steps between two reports of the probe image's attention: often enough to watch attention
/// form, rare enough to cost nothing (one forward pass of one image).
const PROBE_EVERY: usize = 10;

#[derive(Default)]
struct State {
    /// Training and test images, shared with each run rather than copied (92 MB).
    dataset: Option<(Arc<ImageSet>, Arc<ImageSet>)>,
    /// The dataset's class names: CIFAR-10's, or the person's.
    class_names: Vec<String>,
    /// What a fine-tuning run's weight files say it trained on.
    data_json: String,
    loading: bool,
    training: bool,
    evaluating: bool,
    paused: bool,
    stop: bool,
    /// The image whose attention a run reports (32×32 RGBA); the page may change it mid-run.
    probe: Vec<u8>,
    /// burn initialises WebGPU once per context; later runs reuse it.
    webgpu: Option<Device>,
    /// That initialisation is under way.
    webgpu_starting: bool,
    /// Why the WebGPU device was lost, once it was; burn cannot initialise another in this worker.
    webgpu_lost: Option<String>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn post(output: &WorkerOutput, payload: Option<Uint8Array>) {
    let message = serde_wasm_bindgen::to_value(output).expect("worker messages serialise");
    let result = match payload {
        Some(bytes) => {
            let _ = Reflect::set(&message, &"bytes".into(), &bytes);
            scope().post_message_with_transfer(&message, &Array::of1(&bytes.buffer()))
        }
        None => scope().post_message(&message),
    };
    if result.is_err() {
        web_sys::console::error_1(&"the worker could not post a message".into());
    }
}

/// What burn's GPU memory pools have reserved on `device`; none for the CPU backend.
fn gpu_bytes(device: &Device) -> Option<u64> {
    device.memory_pool_usage().map(|usage| usage.bytes_reserved)
}

/// The size of this worker's wasm memory: what the heap has grown to.
fn heap_bytes() -> u64 {
    wasm_bindgen::memory().unchecked_into::<js_sys::WebAssembly::Memory>().buffer().unchecked_into::<js_sys::ArrayBuffer>().byte_length() as u64
}

fn now_seconds() -> f64 {
    js_sys::Date::now() / 1000.0
}

/// Lets queued messages (pause, stop) run between training steps.
async fn yield_to_events(milliseconds: i32) {
    let promise = Promise::new(&mut |resolve, _| {
        let _ = scope().set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, milliseconds);
    });
    let _ = JsFuture::from(promise).await;
}

/// Called by `www/worker.js` once the module is initialised (and, in the threaded module, its
/// pool started); `pool_error` names the error that kept the threaded module from starting, when
/// this one runs in its place.
#[wasm_bindgen]
pub fn worker_start(pool_error: Option<String>) {
    let note = pool_error.as_deref().map(crate::compute::pool_failure_note);
    console_error_panic_hook::set_once();
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(|event: MessageEvent| {
        let data = event.data();
        match serde_wasm_bindgen::from_value::<WorkerInput>(data.clone()) {
            Ok(input) => handle(input, &data),
            Err(error) => web_sys::console::error_1(&format!("unknown message to the worker: {error}").into()),
        }
    });
    scope().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget(); // lives as long as the worker
    post(&WorkerOutput::WorkerReady { threads: crate::ops::cpu::parallel::threads(), note }, None);
}

fn handle(input: WorkerInput, data: &JsValue) {
    let (busy, may_train) = STATE.with(|state| {
        let state = state.borrow();
        // A run or a dataset asked for while the loaded weights are being evaluated waits for that
        // to end (on WebGPU over a software adapter it takes minutes) rather than being refused.
        (state.loading || state.training || state.evaluating, !state.loading && !state.training)
    });
    match input {
        WorkerInput::LoadPreparedDataset { manifest_url } if may_train => spawn_local(load_dataset(async move {
            load_prepared(&manifest_url).await
        })),
        WorkerInput::LoadArchive { name } if may_train => {
            let file: web_sys::Blob = Reflect::get(data, &"file".into()).map(JsCast::unchecked_into).expect("LoadArchive carries a file");
            spawn_local(load_dataset(async move { load_archive(file, name).await }));
        }
        WorkerInput::LoadCollection { class_names, held_out, seed, labels, pixels } if may_train => {
            spawn_local(load_dataset(async move { load_collection(class_names, held_out, seed, labels, pixels) }));
        }
        WorkerInput::LoadPreparedDataset { .. } | WorkerInput::LoadArchive { .. } | WorkerInput::LoadCollection { .. } => post(
            &WorkerOutput::DatasetFailed { message: "wait until the current load or training run ends".into() },
            None,
        ),
        WorkerInput::Train { run_id, recipe, compute, probe } if may_train => {
            spawn_local(train(RunStart { run_id, start: Start::Fresh { recipe, weights: weights_beside(data) } }, compute, probe));
        }
        WorkerInput::ResumeTraining { run_id, compute, probe } if may_train => {
            spawn_local(train(RunStart { run_id, start: Start::FromCheckpoint }, compute, probe))
        }
        WorkerInput::UseCheckpoint { run_id } => spawn_local(async move {
            match stored_checkpoint(run_id).await {
                Ok(checkpoint) => post(&WorkerOutput::CheckpointWeights, Some(Uint8Array::from(checkpoint.weights.as_slice()))),
                Err(message) => post(&WorkerOutput::CheckpointFailed { message }, None),
            }
        }),
        WorkerInput::Evaluate { compute } if !busy => match weights_beside(data) {
            Some(weights) => spawn_local(evaluate_weights(weights, compute)),
            None => post(&WorkerOutput::EvaluationFailed { message: "no weights came with the request".into() }, None),
        },
        WorkerInput::Evaluate { .. } => post(
            &WorkerOutput::EvaluationFailed { message: "the worker is busy; the test set is evaluated after each epoch".into() },
            None,
        ),
        WorkerInput::Train { .. } | WorkerInput::ResumeTraining { .. } => post(
            &WorkerOutput::TrainingFailed { message: "a dataset load or training run is already under way".into() },
            None,
        ),
        WorkerInput::SetProbe { probe } => STATE.with(|state| state.borrow_mut().probe = probe),
        WorkerInput::Pause => {
            STATE.with(|state| state.borrow_mut().paused = true);
            post(&WorkerOutput::Paused, None);
        }
        WorkerInput::Resume => {
            STATE.with(|state| state.borrow_mut().paused = false);
            post(&WorkerOutput::Resumed, None);
        }
        WorkerInput::Measure { compute, batch, steps } if !busy => spawn_local(measure(compute, batch, steps)),
        WorkerInput::Measure { .. } => post(&WorkerOutput::MeasureFailed { message: "the worker is busy".into() }, None),
        WorkerInput::Stop => STATE.with(|state| {
            let mut state = state.borrow_mut();
            state.stop = true;
            state.paused = false;
        }),
    }
}

/// Weight bytes sent beside a message, if any.
fn weights_beside(data: &JsValue) -> Option<Vec<u8>> {
    let bytes = Reflect::get(data, &"bytes".into()).ok().filter(|value| !value.is_undefined())?;
    Some(Uint8Array::new(&bytes).to_vec())
}

/// The whole test set's figures and predictions for a weight file.
async fn evaluate_weights(weights: Vec<u8>, compute: ComputePath) {
    STATE.with(|state| state.borrow_mut().evaluating = true);
    let result = async {
        let dataset = STATE.with(|state| state.borrow().dataset.clone()).ok_or("load the dataset first")?;
        let device = device_for(compute).await?;
        let (model, info) = from_safetensors(&weights, &device).map_err(|error| error.to_string())?;
        if info.class_names != STATE.with(|state| state.borrow().class_names.clone()) {
            return Err("these weights are for other classes than the loaded pictures".to_string());
        }
        let progress = |done, total| post(&WorkerOutput::WeightsEvaluating { done, total }, None);
        evaluate_with_progress(&model, &dataset.1, progress).await.map_err(|error| match note_device_loss(error) {
            TrainingError::DeviceLost(cause) => lost_device(&cause),
            other => other.to_string(),
        })
    }
    .await;
    STATE.with(|state| state.borrow_mut().evaluating = false);
    match result {
        Ok(evaluation) => post(&WorkerOutput::Evaluated { evaluation }, None),
        Err(message) => post(&WorkerOutput::EvaluationFailed { message }, None),
    }
}

/// Runs a loader, keeps the dataset it returns and tells the page. A failure leaves the
/// previous dataset in place.
async fn load_dataset(loader: impl std::future::Future<Output = Result<Loaded, String>>) {
    STATE.with(|state| state.borrow_mut().loading = true);
    // The test set being evaluated is the one about to be replaced: wait for that to end.
    while STATE.with(|state| state.borrow().evaluating) {
        yield_to_events(50).await;
    }
    let started = now_seconds();
    let result = loader.await;
    STATE.with(|state| state.borrow_mut().loading = false);
    match result {
        Ok(Loaded { train, test, source, warning, class_names, data_json }) => {
            let output = WorkerOutput::DatasetReady {
                source,
                train_images: train.len(),
                test_images: test.len(),
                seconds: now_seconds() - started,
                warning,
                preview: preview(&train, class_names.len()),
                test_preview: (0..TEST_PREVIEW.min(test.len()))
                    .map(|index| PreviewImage { label: test.label(index), pixels: test.image(index).to_vec() })
                    .collect(),
                test_labels: (0..test.len()).map(|index| test.label(index)).collect(),
                class_names: class_names.clone(),
            };
            STATE.with(|state| {
                let mut state = state.borrow_mut();
                state.dataset = Some((Arc::new(train), Arc::new(test)));
                state.class_names = class_names;
                state.data_json = data_json;
            });
            post(&output, None);
        }
        Err(message) => post(&WorkerOutput::DatasetFailed { message }, None),
    }
}

fn preview(set: &ImageSet, classes: usize) -> Vec<PreviewImage> {
    let mut taken = vec![0usize; classes];
    let mut images = Vec::new();
    for index in 0..set.len() {
        let label = set.label(index);
        if taken[label as usize] < PREVIEW_PER_CLASS {
            taken[label as usize] += 1;
            images.push(PreviewImage { label, pixels: set.image(index).to_vec() });
        }
    }
    images.sort_by_key(|image| image.label);
    images
}

fn progress(stage: LoadStage, done: u64, total: Option<u64>) {
    post(&WorkerOutput::DatasetProgress { stage, done, total }, None);
}

/// A dataset the worker can train on.
struct Loaded {
    train: ImageSet,
    test: ImageSet,
    source: DatasetSource,
    /// A problem that did not stop the load.
    warning: Option<String>,
    class_names: Vec<String>,
    /// What weight files trained on it say about it (empty for CIFAR-10, whose runs say nothing).
    data_json: String,
}

impl Loaded {
    fn cifar(train: ImageSet, test: ImageSet, source: DatasetSource, warning: Option<String>) -> Self {
        let class_names = CLASS_NAMES.iter().map(|name| name.to_string()).collect();
        Self { train, test, source, warning, class_names, data_json: String::new() }
    }
}

/// A person's pictures, checked and split per class.
fn load_collection(class_names: Vec<String>, held_out: f64, seed: u64, labels: Vec<u8>, pixels: Vec<u8>) -> Result<Loaded, String> {
    if pixels.len() != labels.len() * IMAGE_BYTES || labels.iter().any(|&label| label as usize >= class_names.len()) {
        return Err("the pictures sent to the worker are damaged".into());
    }
    let collection = PictureCollection { class_names, images: ImageSet { pixels, labels }, skipped: Vec::new() };
    collection.check().map_err(|error| error.to_string())?;
    let (train, test) = split_held_out(&collection.images, held_out, seed).map_err(|error| error.to_string())?;
    let data_json = serde_json::json!({ "pictures": "your own", "held_out": held_out, "train": train.len(), "test": test.len() }).to_string();
    Ok(Loaded { train, test, source: DatasetSource::Collection, warning: None, class_names: collection.class_names, data_json })
}

/// The prepared asset: from the cache when its hash matches the manifest, else downloaded,
/// verified, decoded and cached.
async fn load_prepared(manifest_url: &str) -> Result<Loaded, String> {
    let manifest_text = storage::fetch_text_uncached(manifest_url)
        .await
        .map_err(|problem| format!("the prepared dataset is not available ({problem}); drop CIFAR-10's archive on the page instead"))?;
    let manifest: DatasetManifest =
        serde_json::from_str(&manifest_text).map_err(|error| format!("{manifest_url} is not a dataset manifest: {error}"))?;
    let cache_key = format!("decoded-{}", manifest.sha256);

    if let Some(bytes) = storage::cached(&cache_key).await {
        progress(LoadStage::Read, bytes.len() as u64, Some(bytes.len() as u64));
        if let Ok((train, test)) = decode_decoded(&bytes) {
            return Ok(Loaded::cifar(train, test, DatasetSource::Cache, None));
        }
    }

    let asset_url = resolve(manifest_url, &manifest.file);
    let bytes = storage::download(&asset_url, Some(manifest.bytes), |done, total| progress(LoadStage::Download, done, total))
        .await
        .map_err(|problem| format!("downloading the dataset failed: {problem}"))?;
    if sha256_hex(&bytes) != manifest.sha256 {
        return Err(format!("{}: the download does not match the manifest's SHA-256; reload to try again", manifest.file));
    }
    let (train, test) = decode_asset_with_progress(&bytes, &manifest.file, |done, total| {
        progress(LoadStage::Decode, done as u64, Some(total as u64))
    })
    .map_err(|error| error.to_string())?;
    drop(bytes);

    progress(LoadStage::Store, 0, None);
    let warning = storage::store(&cache_key, &encode_decoded(&train, &test), "decoded-")
        .await
        .err()
        .map(|problem| format!("the dataset could not be kept for next time ({problem}); it will be downloaded again after a reload"));
    Ok(Loaded::cifar(train, test, DatasetSource::Network, warning))
}

/// CIFAR-10's official archive, dropped on the page: the first 20,000 training records and the
/// whole test set, as the prepared asset holds them.
async fn load_archive(file: web_sys::Blob, name: String) -> Result<Loaded, String> {
    let total = file.size() as u64;
    let bytes = storage::read_blob(&file, |done| progress(LoadStage::Read, done, Some(total)))
        .await
        .map_err(|problem| format!("{name} could not be read: {problem}"))?;
    let mut last_reported = 0u64;
    let dataset = decode_archive_from_reader(&bytes[..], &name, Some(total), |archive_progress| {
        if archive_progress.bytes_read >= last_reported + (1 << 22) {
            last_reported = archive_progress.bytes_read;
            progress(LoadStage::Decode, archive_progress.bytes_read, Some(total));
        }
    })
    .map_err(|error| error.to_string())?;
    let train = SubsetRule::REFERENCE.apply(&dataset.train).map_err(|error| error.to_string())?;
    Ok(Loaded::cifar(train, dataset.test, DatasetSource::Archive, None))
}

/// `file` relative to the folder of `manifest_url`.
fn resolve(manifest_url: &str, file: &str) -> String {
    match manifest_url.rfind('/') {
        Some(slash) => format!("{}{file}", &manifest_url[..=slash]),
        None => file.to_string(),
    }
}

/// Remembers a lost device's cause, as no later WebGPU work can succeed in this worker (burn
/// cannot initialise a second WebGPU runtime), and tells the page the first time; passes the
/// error on.
fn note_device_loss(error: TrainingError) -> TrainingError {
    if let TrainingError::DeviceLost(cause) = &error {
        let first = STATE.with(|state| {
            let lost = &mut state.borrow_mut().webgpu_lost;
            let first = lost.is_none();
            lost.get_or_insert_with(|| cause.clone());
            first
        });
        if first {
            post(&WorkerOutput::DeviceLost { cause: cause.clone() }, None);
        }
    }
    error
}

async fn device_for(compute: ComputePath) -> Result<Device, String> {
    if compute == ComputePath::WebGpu {
        // A run asked for while an evaluation's device is still being made waits for that one:
        // burn registers one WebGPU device per worker, and a second attempt fails.
        loop {
            if let Some(cause) = STATE.with(|state| state.borrow().webgpu_lost.clone()) {
                return Err(lost_device(&cause));
            }
            if let Some(device) = STATE.with(|state| state.borrow().webgpu.clone()) {
                return Ok(device);
            }
            if !STATE.with(|state| state.borrow().webgpu_starting) {
                break;
            }
            yield_to_events(50).await;
        }
        STATE.with(|state| state.borrow_mut().webgpu_starting = true);
        let device = init_device(ComputePath::WebGpu).await;
        STATE.with(|state| {
            let mut state = state.borrow_mut();
            state.webgpu_starting = false;
            state.webgpu = device.as_ref().ok().cloned();
        });
        return device;
    }
    init_device(compute).await
}

/// Times training steps of the fixed model on the fixed batch, posting each as it ends.
async fn measure(compute: ComputePath, batch: usize, steps: usize) {
    let device = match device_for(compute).await {
        Ok(device) => device.autodiff(),
        Err(message) => return post(&WorkerOutput::MeasureFailed { message }, None),
    };
    let mut trainer = fixed_trainer(steps, &device);
    let (images, labels) = fixed_batch(batch, &device);
    for step in 0..steps {
        let started = js_sys::Date::now();
        let loss = trainer.step(images.clone(), labels.clone()).loss.into_scalar_async::<f32>().await;
        match loss {
            Ok(loss) => post(&WorkerOutput::MeasuredStep { step, seconds: (js_sys::Date::now() - started) / 1000.0, loss }, None),
            Err(error) => return post(&WorkerOutput::MeasureFailed { message: format!("{error:?}") }, None),
        }
        yield_to_events(0).await;
    }
}

async fn train(start: RunStart, compute: ComputePath, probe: Vec<u8>) {
    STATE.with(|state| {
        let mut state = state.borrow_mut();
        state.probe = probe;
        state.training = true;
        state.stop = false;
        state.paused = false;
    });
    let result = run_training(start, compute).await;
    STATE.with(|state| state.borrow_mut().training = false);
    match result {
        Ok(stopped_early) => post(&WorkerOutput::Finished { stopped_early }, None),
        Err(message) => {
            // After a device loss every failure on WebGPU comes from it; say so in one way.
            let lost = STATE.with(|state| state.borrow().webgpu_lost.clone()).filter(|_| compute == ComputePath::WebGpu);
            let message = lost.map(|cause| device_loss_message(&cause)).unwrap_or(message);
            // A diverged run or a lost device: the page offers to continue from the last saved epoch.
            post(&WorkerOutput::TrainingFailed { message }, None);
        }
    }
}

/// How a run begins once what it needs is read: a resumed run's recipe is in its checkpoint.
enum Begin {
    Fresh { recipe: TrainingRecipe, weights: Option<Vec<u8>> },
    Resumed(Checkpoint),
}

impl Begin {
    async fn read(run_id: u64, start: Start) -> Result<Self, String> {
        Ok(match start {
            Start::Fresh { recipe, weights } => Self::Fresh { recipe, weights },
            Start::FromCheckpoint => Self::Resumed(stored_checkpoint(run_id).await?),
        })
    }

    fn recipe(&self) -> &TrainingRecipe {
        match self {
            Self::Fresh { recipe, .. } => recipe,
            Self::Resumed(checkpoint) => &checkpoint.recipe,
        }
    }
}

/// Why a run cannot begin at all, found before it waits for anything or builds a model: a recipe,
/// classes or a batch it could not train with.
fn refusal(begin: &Begin, class_names: &[String], compute: ComputePath, device: &Device, train_images: usize, stored_images: usize) -> Option<String> {
    let recipe = begin.recipe();
    match begin {
        Begin::Fresh { .. } => {
            if let Err(error) = recipe.validate() {
                return Some(error.to_string());
            }
        }
        Begin::Resumed(checkpoint) => match inspect_safetensors(&checkpoint.weights) {
            Err(error) => return Some(error.to_string()),
            Ok(info) if info.class_names != class_names => {
                return Some(format!(
                    "the saved run learned other classes ({}) than the loaded pictures': load those pictures first",
                    info.class_names.join(", ")
                ));
            }
            Ok(_) => {}
        },
    }
    // A frozen encoder keeps no activations for a backward pass; the whole model keeps them all.
    if compute == ComputePath::Cpu && recipe.trainable == Trainable::Whole {
        return cpu_step_too_large(recipe.preset, recipe.batch_size, crate::ops::cpu::parallel::threads(), train_images, stored_images);
    }
    // Frozen or not, the forward pass binds the QKV projection's output, the step's largest buffer.
    #[cfg(gpu)]
    if compute == ComputePath::WebGpu {
        return crate::ops::webgpu::limits::largest_binding(device)
            .and_then(|limit| crate::training::gpu_step_too_large(recipe.preset, recipe.batch_size, train_images, limit));
    }
    #[cfg(not(gpu))]
    let _ = device; // the CPU path's threaded module has no WebGPU to ask
    None
}

/// The epoch loop; returns whether the person stopped it early. After every epoch the run is
/// checkpointed to browser storage.
async fn run_training(RunStart { run_id, start }: RunStart, compute: ComputePath) -> Result<bool, String> {
    let (train, test) = STATE
        .with(|state| state.borrow().dataset.clone())
        .ok_or("load the dataset before training")?;
    let (class_names, data_json) = STATE.with(|state| {
        let state = state.borrow();
        (state.class_names.clone(), state.data_json.clone())
    });
    let (train_images, stored_images) = (train.len(), train.len() + test.len());
    let device = device_for(compute).await?.autodiff();
    let begin = Begin::read(run_id, start).await?;
    // Refused at once, not after the wait below: on a slow adapter that wait is minutes.
    if let Some(message) = refusal(&begin, &class_names, compute, &device, train_images, stored_images) {
        return Err(message);
    }
    // The loaded weights' evaluation on the test set, if one is under way, ends first.
    if STATE.with(|state| state.borrow().evaluating) {
        post(&WorkerOutput::TrainingWaits, None);
        while STATE.with(|state| state.borrow().evaluating) {
            yield_to_events(100).await;
        }
    }
    let mut session = match begin {
        Begin::Fresh { recipe, weights } => {
            // As the native trainer does: a new head's weights follow from the seed.
            device.seed(recipe.seed);
            let config = VitConfig { classes: class_names.len(), ..recipe.preset.config() };
            let (model, base_json) = match weights {
                Some(bytes) => {
                    let (model, info) = from_safetensors(&bytes, &device).map_err(|error| error.to_string())?;
                    if (VitConfig { classes: config.classes, ..info.config.clone() }) != config {
                        return Err("the weights to start from are of another preset than the recipe".into());
                    }
                    if info.class_names == class_names {
                        (model, info.base_json)
                    } else {
                        // Other classes: fine-tune them, with a new head for these.
                        let base = serde_json::json!({ "sha256": sha256_hex(&bytes), "class_names": info.class_names, "epoch": info.epoch });
                        (model.with_new_head(class_names.len()), base.to_string())
                    }
                }
                None if recipe.trainable == Trainable::Head => {
                    return Err("training the head alone needs a trained model to start from".into());
                }
                None => (fresh_model(&config, recipe.init, recipe.seed, &device), String::new()),
            };
            TrainingSession::new(recipe, model, train, test, &device)
                .map_err(|error| error.to_string())?
                .with_class_names(class_names)
                .with_data_description(data_json)
                .with_base_description(base_json)
        }
        Begin::Resumed(checkpoint) => TrainingSession::resume(&checkpoint, train, test, &device).map_err(|error| error.to_string())?,
    }
    .with_log_every(5);
    let recipe = session.recipe().clone();
    post(
        &WorkerOutput::TrainingStarted {
            compute,
            device: format!("{device:?}"),
            total_steps: session.total_steps(),
            batches_per_epoch: session.batches_per_epoch(),
            recipe: recipe.clone(),
            history: session.history().clone(),
        },
        None,
    );
    // Paused while it waited to start: the page takes a run that starts for a running one.
    if STATE.with(|state| state.borrow().paused) {
        post(&WorkerOutput::Paused, None);
    }

    let started = now_seconds();
    let mut train_seconds = 0.0;
    let mut images_done = 0usize;
    while !session.is_done() {
        let epoch_started = now_seconds();
        let mut paused_seconds = 0.0;
        while !session.epoch_finished() {
            if STATE.with(|state| state.borrow().stop) {
                return Ok(true);
            }
            if STATE.with(|state| state.borrow().paused) {
                let pause_started = now_seconds();
                yield_to_events(100).await;
                paused_seconds += now_seconds() - pause_started;
                continue;
            }
            let report = session.step().await.map_err(|error| note_device_loss(error).to_string())?;
            images_done += report.images;
            if report.step == 1 || report.step % PROBE_EVERY == 0 {
                let model = session.model().valid();
                let probe = STATE.with(|state| state.borrow().probe.clone());
                let config = VitConfig { classes: model.classes(), ..recipe.preset.config() };
                let explanation = explain(&model, &config, &probe, &model.class_token.val().device()).await?;
                post(&WorkerOutput::Probe { step: report.step, epoch: report.epoch, explanation }, None);
            }
            let elapsed = train_seconds + (now_seconds() - epoch_started - paused_seconds);
            post(
                &WorkerOutput::Step {
                    step: report.step,
                    total_steps: report.total_steps,
                    epoch: report.epoch,
                    batch_in_epoch: report.batch_in_epoch,
                    batches_per_epoch: report.batches_per_epoch,
                    smoothed_loss: report.smoothed_loss,
                    learning_rate: report.learning_rate,
                    images_per_second: images_done as f64 / elapsed.max(1e-9),
                    elapsed_seconds: now_seconds() - started,
                },
                None,
            );
            yield_to_events(0).await;
        }
        let epoch_seconds = now_seconds() - epoch_started - paused_seconds;
        train_seconds += epoch_seconds;
        let evaluating = |done, total| post(&WorkerOutput::Evaluating { done, total }, None);
        let metrics = session
            .finish_epoch_with_progress(epoch_seconds, evaluating)
            .await
            .map_err(|error| note_device_loss(error).to_string())?;
        // burn reads the optimizer's state synchronously: possible on the CPU, not on WebGPU.
        let checkpoint = session.checkpoint(compute == ComputePath::Cpu).await.map_err(|error| note_device_loss(error).to_string())?;
        let evaluation = session.last_evaluation().cloned().expect("an epoch just finished");
        post(
            &WorkerOutput::Epoch { metrics: metrics.clone(), evaluation, heap_bytes: heap_bytes(), gpu_bytes: gpu_bytes(&device) },
            Some(Uint8Array::from(checkpoint.weights.as_slice())),
        );
        let bytes = checkpoint.encode();
        match storage::write_file(&checkpoint_file(run_id), &bytes).await {
            Ok(_) => post(&WorkerOutput::CheckpointSaved { epoch: metrics.epoch, bytes: bytes.len() as u64 }, None),
            Err(error) => post(
                &WorkerOutput::CheckpointFailed { message: format!("the checkpoint after epoch {} was not saved: {error}", metrics.epoch) },
                None,
            ),
        }
    }
    Ok(false)
}
