//! Times a few training steps on each compute path, each in a worker of its own, so that the
//! page runs where it trains faster ([`Measurement`]), within [`TOTAL_BUDGET_MS`]. A result is
//! kept per device in `localStorage`, so only the first visit (or "Measure again") waits for it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::MessageEvent;

use super::dom;
use super::workers;
use crate::compute::{ComputePath, Measurement, PathSpeed};
use crate::protocol::{WorkerInput, WorkerOutput};

/// Images per measured step: the time-budget recipe's batch, so that the epochs it fits to the
/// measurement are fitted to its own speed (the page trains at 183 img/s at batch 32 and 205 at
/// 64 here: a step has a cost that does not grow with the batch). Small enough for a few steps
/// within the budget on a CPU, large enough for a GPU to show its width.
const BATCH: usize = 64;
/// Steps per path at most; the fastest after the first counts. The CPU path here took 0.53,
/// 0.37, 0.44, 0.43, 0.32, 0.34, 0.35, 0.30 and 0.30 s: it warms up over its first steps (four
/// steps at batch 32, the median of the last three, read 137 img/s).
const STEPS: usize = 8;
/// The CPU path's measurement ends this long after the start, and WebGPU's at the total.
const CPU_BUDGET_MS: f64 = 2_500.0;
pub const TOTAL_BUDGET_MS: f64 = 5_000.0;
const STORAGE_KEY: &str = "vit-web.measurements";

/// The measurement kept under `key`, or a new one, then kept.
pub async fn measured_here(key: &str, cpu_threads: usize) -> (Measurement, bool) {
    if let Some(measurement) = stored().remove(key) {
        return (measurement, false);
    }
    let measurement = measure(cpu_threads).await;
    let mut all = stored();
    all.insert(key.to_string(), measurement.clone());
    if let (Some(storage), Ok(json)) = (local_storage(), serde_json::to_string(&all)) {
        let _ = storage.set_item(STORAGE_KEY, &json); // a full or blocked storage only costs a re-measure
    }
    (measurement, true)
}

/// Forgets every kept measurement, so the next start-up measures again.
pub fn forget() {
    if let Some(storage) = local_storage() {
        let _ = storage.remove_item(STORAGE_KEY);
    }
}

fn local_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

fn stored() -> BTreeMap<String, Measurement> {
    local_storage()
        .and_then(|storage| storage.get_item(STORAGE_KEY).ok().flatten())
        .and_then(|json| serde_json::from_str(&json).ok())
        .unwrap_or_default()
}

async fn measure(cpu_threads: usize) -> Measurement {
    let started = dom::now_ms();
    let cpu = time_path(ComputePath::Cpu, cpu_threads, started + CPU_BUDGET_MS).await;
    let webgpu = time_path(ComputePath::WebGpu, 1, started + TOTAL_BUDGET_MS).await;
    Measurement {
        cpu: PathSpeed::from_steps(BATCH, &cpu.step_seconds, cpu.waited_seconds),
        webgpu: PathSpeed::from_steps(BATCH, &webgpu.step_seconds, webgpu.waited_seconds),
        cpu_threads: cpu.threads.unwrap_or(1),
    }
}

/// What one measuring worker reported.
#[derive(Default)]
struct Timing {
    threads: Option<usize>,
    step_seconds: Vec<f64>,
    done: bool,
    waited_seconds: f64,
}

/// Starts a worker for `path`, collects its step times until it has all or `deadline_ms`
/// passes, then ends it (mid-step if need be).
async fn time_path(path: ComputePath, threads: usize, deadline_ms: f64) -> Timing {
    let started = dom::now_ms();
    let timing = Rc::new(RefCell::new(Timing::default()));
    let Ok(worker) = workers::start(threads) else { return Timing { done: true, ..Timing::default() } };
    let (handler_timing, handler_worker) = (timing.clone(), worker.clone());
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |event: MessageEvent| {
        let mut timing = handler_timing.borrow_mut();
        match serde_wasm_bindgen::from_value::<WorkerOutput>(event.data()) {
            Ok(WorkerOutput::WorkerReady { threads, .. }) => {
                timing.threads = Some(threads);
                let input = WorkerInput::Measure { compute: path, batch: BATCH, steps: STEPS };
                let message = serde_wasm_bindgen::to_value(&input).expect("worker messages serialise");
                timing.done |= handler_worker.post_message(&message).is_err();
            }
            Ok(WorkerOutput::MeasuredStep { seconds, .. }) => {
                timing.step_seconds.push(seconds);
                timing.done |= timing.step_seconds.len() == STEPS;
            }
            Ok(WorkerOutput::MeasureFailed { message }) => {
                web_sys::console::warn_1(&format!("measuring {} failed: {message}", path.label()).into());
                timing.done = true;
            }
            _ => {}
        }
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    while !timing.borrow().done && dom::now_ms() < deadline_ms {
        dom::sleep_ms(20).await;
    }
    worker.terminate();
    worker.set_onmessage(None);
    drop(on_message);
    let mut timing = timing.take();
    timing.waited_seconds = (dom::now_ms() - started) / 1000.0;
    timing
}
