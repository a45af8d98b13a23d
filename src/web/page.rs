//! Starts the page and wires its views: picks the compute path, builds the model, classifies the
//! sample photo, starts the worker, routes the worker's messages to the views, and updates the
//! views that depend on each [`Change`].

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::MessageEvent;

use super::adapter::{adapter_summary, init_device, remember_pool_failure, thread_support};
use super::app::{App, Change, SharedApp, adopt_weights, dataset_manifest_url, send, show_error};
use super::{dom, measure, run_store, workers};
use super::views::{
    self, charts, collection, compute, dataset, distance, explanation, model, photo, positions, probe, site, test_set, training, weights,
};
use crate::compute::{
    ComputePath, PathRequest, SpeedBound, WORKER_START_LIMIT_SECONDS, choose_path, measurement_key, parse_threads, plan_threads, pool_timeout_note,
    run_not_started_message, stall_limit_seconds, stalled_worker_message, worker_not_started_message,
};
use crate::inference::AttentionView;
use crate::model::Preset;
use crate::protocol::{DatasetSource, WorkerInput, WorkerOutput};
use crate::runs;
use crate::viz::captures::Probe;
use crate::training::{MetricsHistory, NamedRecipe, Trainable, TrainingRecipe};

const SAMPLE_IMAGE: &str = "samples/horse.webp";
/// What the recipe form says when it proposes fine-tuning on a person's pictures.
const FINE_TUNE_ABOUT: &str = "Fine-tuning on your pictures: the head alone (a linear probe, fast) at 3e-3, batch 16, 15 epochs. \
     For the whole model choose “the whole model” below and a learning rate near 1e-4, so it keeps what CIFAR-10 taught it.";

pub async fn run() {
    site::start().await;
    if let Err(message) = start_up().await {
        show_error(&message);
    }
}

async fn start_up() -> Result<(), String> {
    let request = PathRequest::parse(dom::query_param("compute").as_deref());
    compute::wire(request);

    let adapter = adapter_summary().await;
    compute::show_adapter(adapter.as_ref());
    let support = thread_support();
    let requested_threads = parse_threads(dom::query_param("threads").as_deref());
    compute::wire_threads(requested_threads, support);
    let threads = plan_threads(requested_threads, support);
    // Automatic: the faster path as measured on this device (once; then from storage).
    let measured = match (&adapter, request) {
        (Some(adapter), PathRequest::Auto) => {
            compute::show_measuring();
            Some(measure::measured_here(&measurement_key(adapter, &support, threads.threads), threads.threads).await)
        }
        _ => None,
    };
    let mut choice = choose_path(request, adapter.as_ref(), measured.as_ref().map(|(measurement, _)| measurement));
    let device = match init_device(choice.path).await {
        Ok(device) => device,
        Err(problem) => {
            choice.path = ComputePath::Cpu;
            choice.reason = format!("{problem}. Running on the CPU (wasm) instead.");
            init_device(ComputePath::Cpu).await?
        }
    };
    compute::show_choice(&choice, measured.as_ref().map(|&(_, fresh)| fresh));
    training::show_compute(choice.path);
    compute::show_threads(choice.path, &threads);
    // The worker's module follows the path: WebGPU lives only in the single-threaded module.
    let worker_threads = if choice.path == ComputePath::Cpu { threads.threads } else { 1 };
    let measured_speed = measured.as_ref().map(|(measurement, _)| measurement.speed(choice.path)).and_then(|speed| {
        (speed.bound != SpeedBound::Below).then_some(speed.images_per_second)
    });

    let config = Preset::Tiny.config();
    let sample = photo::load_sample(SAMPLE_IMAGE).await?;
    let app = Rc::new(RefCell::new(App {
        model: config.init(&device),
        device,
        compute: choice.path,
        config,
        probe: Rc::new(Probe { name: "the sample photo".into(), image: sample.input.clone() }),
        captures: Default::default(),
        worker: workers::start(worker_threads)?,
        worker_threads,
        worker_ready: false,
        worker_heard_ms: dom::now_ms(),
        paused: false,
        run_answered: false,
        slowest_step_ms: 0.0,
        last_step_ms: 0.0,
        dataset_ready: false,
        training: false,
        weights: None,
        weights_info: None,
        weights_origin: String::new(),
        runs: Vec::new(),
        current_run: None,
        runs_elsewhere: Vec::new(),
        overlaid: Vec::new(),
        early_messages: Some(Vec::new()),
        picture: Some(sample),
        picture_generation: 0,
        explanation: None,
        view: AttentionView::Rollout,
        test_preview: Vec::new(),
        test_labels: Vec::new(),
        history: MetricsHistory::default(),
        planned_epochs: 10,
        steps_per_epoch: 0,
        measured_speed,
        dataset_images: None,
        dataset_source: None,
        dataset_classes: Vec::new(),
        collection: Default::default(),
        on_change,
    }));
    model::show(&app);
    photo::show_input(&app);
    charts::wire();
    explanation::wire(&app);
    // Listening from the start: a message the worker sends before the page listens is lost.
    listen_to_worker(&app);
    weights::load_pretrained(&app).await; // explains the sample with whatever weights it ends with
    watch_worker(&app);
    dataset::wire(&app);
    training::wire(&app);
    weights::wire(&app);
    photo::wire(&app);
    test_set::wire(&app);
    probe::wire(&app);
    collection::wire(&app);
    views::runs::wire(&app);
    wasm_bindgen_futures::spawn_local(run_store::load(app.clone()));
    wasm_bindgen_futures::spawn_local(collection::load(app.clone()));
    let early = app.borrow_mut().early_messages.take().unwrap_or_default();
    for (output, bytes) in early {
        on_worker_output(&app, output, bytes);
    }
    dom::document()
        .body()
        .expect("the page has a body")
        .set_attribute("data-ready", "true")
        .map_err(|_| "could not mark the page ready".to_string())?;
    Ok(())
}

/// Updates the views that show what `change` changed.
fn on_change(app: &SharedApp, change: Change) {
    match change {
        Change::Picture => {
            photo::show_input(app);
            explanation::explain_picture(app);
        }
        Change::Weights => {
            model::show(app);
            weights::show_current(app);
            if let Some(preset) = app.borrow().weights_info.as_ref().and_then(|info| info.preset) {
                training::follow_preset(preset);
            }
            on_change(app, Change::History);
            explanation::explain_picture(app);
            positions::show_current(app);
            distance::show_current(app);
            test_set::request_evaluation(app);
        }
        Change::Runs => {
            views::runs::show(app);
            training::show_offer(app);
            on_change(app, Change::History);
        }
        Change::History => {
            let app = app.borrow();
            let labels = runs::labels(&app.runs);
            let overlays: Vec<charts::Overlay> = app
                .runs
                .iter()
                .enumerate()
                .filter(|(_, run)| app.overlaid.contains(&run.id))
                .map(|(index, run)| charts::Overlay {
                    name: format!("run {} ({})", index + 1, labels[index]),
                    colour: runs::colour(index),
                    history: &run.history,
                    steps_per_epoch: run.batches_per_epoch,
                })
                .collect();
            charts::show(&app.history, app.planned_epochs, app.steps_per_epoch, &overlays);
        }
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
            Ok(output) => {
                // While the page starts, messages wait for its views.
                let early = handler_app.borrow_mut().early_messages.as_mut().map(|waiting| waiting.push((output.clone(), bytes.clone())));
                if early.is_none() {
                    on_worker_output(&handler_app, output, bytes);
                }
            }
            Err(error) => show_error(&format!("unreadable message from the worker: {error}")),
        }
    });
    let error_app = app.clone();
    let on_error = Closure::<dyn Fn(web_sys::Event)>::new(move |event: web_sys::Event| {
        let reason = Reflect::get(&event, &"message".into()).ok().and_then(|message| message.as_string()).unwrap_or_default();
        if error_app.borrow().worker_ready {
            replace_worker(&error_app, &format!("Training stopped: the worker crashed ({reason}). The page's weights are kept, and the last saved epoch is offered to continue from."));
        } else {
            show_error(&format!("the training worker failed to start ({reason}); reload the page"));
        }
    });
    let app = app.borrow();
    app.worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    app.worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    on_message.forget(); // both live as long as the page
    on_error.forget();
}

/// Checks every second that the training worker still answers: that a new one says it is ready,
/// that a run asked for starts, and that a pool's run goes on. One that stopped is replaced, and
/// the person is told; nothing waits forever in silence.
fn watch_worker(app: &SharedApp) {
    let app = app.clone();
    let gave_up_on_start = Cell::new(false);
    let check = Closure::<dyn Fn()>::new(move || {
        let (ready, training, answered, paused, threads, compute, heard, slowest) = {
            let app = app.borrow();
            (app.worker_ready, app.training, app.run_answered, app.paused, app.worker_threads, app.compute, app.worker_heard_ms, app.slowest_step_ms)
        };
        let silent_seconds = (dom::now_ms() - heard) / 1000.0;
        if !ready {
            if silent_seconds <= WORKER_START_LIMIT_SECONDS || gave_up_on_start.get() {
                return;
            }
            if threads > 1 {
                // The threaded module hangs rather than fails in some engines: one thread, said so.
                remember_pool_failure();
                compute::show_worker_threads(compute, 1, Some(&pool_timeout_note(silent_seconds)));
                app.borrow_mut().worker_threads = 1;
                restart_worker(&app);
            } else {
                gave_up_on_start.set(true);
                show_error(&worker_not_started_message(silent_seconds));
            }
            return;
        }
        // Any worker may leave a request to train unanswered; once it has answered, only a pool
        // can leave the run waiting silently (a one-thread worker that crashes raises an error
        // event), so a one-thread worker's evaluation ahead of the run may take its minutes.
        let waiting = training && !paused && (!answered || threads > 1);
        if waiting && silent_seconds > stall_limit_seconds(compute, slowest / 1000.0) {
            let message = if answered { stalled_worker_message(silent_seconds) } else { run_not_started_message(silent_seconds) };
            replace_worker(&app, &message);
        }
    });
    if let Some(window) = web_sys::window() {
        let _ = window.set_interval_with_callback_and_timeout_and_arguments_0(check.as_ref().unchecked_ref(), 1_000);
    }
    check.forget(); // lives as long as the page
}

/// Ends a worker that died or stopped answering and starts another like it, which loads the
/// dataset again (from browser storage) and offers the last checkpoint.
fn replace_worker(app: &SharedApp, message: &str) {
    // As if the worker had said so: the training card and the runs table both learn of it.
    on_worker_output(app, WorkerOutput::TrainingFailed { message: message.to_string() }, None);
    restart_worker(app);
}

/// Ends the current worker and starts another on `app.worker_threads`.
fn restart_worker(app: &SharedApp) {
    let threads = {
        let mut app = app.borrow_mut();
        app.worker.terminate();
        app.worker_ready = false;
        app.dataset_ready = false;
        app.worker_threads
    };
    match workers::start(threads) {
        Ok(worker) => {
            {
                let mut app = app.borrow_mut();
                app.worker = worker;
                app.worker_heard_ms = dom::now_ms();
            }
            listen_to_worker(app);
        }
        Err(problem) => show_error(&format!("{problem}; reload the page")),
    }
}

fn on_worker_output(app: &SharedApp, output: WorkerOutput, bytes: Option<Vec<u8>>) {
    views::runs::record(app, &output, bytes.as_deref());
    {
        let now = dom::now_ms();
        let mut app = app.borrow_mut();
        app.worker_heard_ms = now;
        match output {
            WorkerOutput::TrainingStarted { .. } => {
                (app.slowest_step_ms, app.last_step_ms, app.paused, app.run_answered) = (0.0, now, false, true)
            }
            WorkerOutput::TrainingWaits => app.run_answered = true,
            WorkerOutput::Step { step, .. } => {
                if step > 1 {
                    app.slowest_step_ms = app.slowest_step_ms.max(now - app.last_step_ms);
                }
                app.last_step_ms = now;
            }
            WorkerOutput::Paused => app.paused = true,
            WorkerOutput::Resumed => app.paused = false,
            _ => {}
        }
    }
    match output {
        WorkerOutput::WorkerReady { threads, note } => {
            app.borrow_mut().worker_ready = true;
            if note.is_some() {
                remember_pool_failure();
            }
            compute::show_worker_threads(app.borrow().compute, threads, note.as_deref());
            dataset::loading_started();
            send(app, &WorkerInput::LoadPreparedDataset { manifest_url: dataset_manifest_url() }, None);
        }
        WorkerOutput::DatasetProgress { stage, done, total } => dataset::show_progress(stage, done, total),
        WorkerOutput::DatasetReady { source, train_images, test_images, seconds, warning, preview, test_preview, test_labels, class_names } => {
            let was_own = app.borrow().dataset_source == Some(DatasetSource::Collection);
            {
                let mut app = app.borrow_mut();
                app.dataset_ready = true;
                app.dataset_images = Some((train_images, test_images));
                app.dataset_source = Some(source);
                app.test_preview = test_preview;
                app.test_labels = test_labels;
                app.dataset_classes = class_names.clone();
            }
            dataset::show_ready(source, train_images, test_images, seconds, warning.as_deref(), &preview, &class_names);
            collection::dataset_changed(app, source);
            match source {
                DatasetSource::Collection => training::use_recipe(&TrainingRecipe::fine_tune(Trainable::Head), FINE_TUNE_ABOUT),
                _ if was_own => training::use_named(app, NamedRecipe::Reference),
                _ => {}
            }
            training::dataset_changed(app);
            training::refresh_buttons(app);
            test_set::request_evaluation(app);
            distance::show_current(app);
        }
        WorkerOutput::DatasetFailed { message } => {
            dataset::show_failed(&message);
            training::refresh_buttons(app);
        }
        WorkerOutput::Epoch { metrics, evaluation, heap_bytes, gpu_bytes } => {
            training::show_epoch(&metrics, Some(heap_bytes), gpu_bytes);
            if let Some(bytes) = bytes
                && let Err(message) = adopt_weights(app, bytes, "Trained in this page")
            {
                show_error(&format!("the trained weights could not be loaded: {message}"));
            }
            test_set::show_evaluation(app, &evaluation, &format!("After epoch {}", metrics.epoch));
        }
        WorkerOutput::CheckpointWeights => match bytes.map(|bytes| adopt_weights(app, bytes, "From the saved checkpoint")) {
            Some(Ok(())) => {}
            Some(Err(message)) => show_error(&format!("the checkpoint's weights could not be loaded: {message}")),
            None => show_error("the worker sent no weights"),
        },
        WorkerOutput::WeightsEvaluating { done, total } => test_set::show_progress(done, total),
        WorkerOutput::Evaluated { evaluation } => test_set::show_evaluation(app, &evaluation, "Current weights"),
        WorkerOutput::EvaluationFailed { message } => test_set::show_failed(&message),
        WorkerOutput::DeviceLost { cause } => compute::show_lost(&cause),
        WorkerOutput::Probe { step, epoch, explanation } => probe::capture(app, step, epoch, &explanation),
        WorkerOutput::TrainingStarted { .. } => {
            probe::clear(app);
            training::on_output(app, output);
        }
        other => training::on_output(app, other),
    }
}
