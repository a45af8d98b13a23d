//! The runs card: every training run in this browser (`crate::runs`), recorded from the worker's
//! messages and kept in browser storage with the latest runs' weights, shared by the page's tabs
//! (`run_store`). A table lists them, labelled by what changed from the run before, and shows
//! the runs other tabs train as they go; a run can be overlaid on the charts, its weights loaded,
//! its metrics downloaded as JSON, or deleted; the table downloads as CSV.

use sha2::{Digest, Sha256};
use wasm_bindgen::JsCast;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::spawn_local;
use web_sys::{Element, HtmlElement, HtmlInputElement};

use crate::display::{duration, group_thousands};
use crate::protocol::WorkerOutput;
use crate::runs::{Change, KEPT_WEIGHTS, Run, RunStatus, Seen, labels, lock_name, to_csv, weights_file};
use crate::training::StepPoint;
use crate::web::app::{Change as AppChange, SharedApp, adopt_weights, changed};
use crate::web::dom::{self, element, escape, set_text};
use crate::web::run_store::{self, commit, show_problem};
use crate::web::{storage, tabs};

/// Follows the worker's messages into the record of the run this tab trains, which
/// `run_store::claim` named before the run was asked for.
pub fn record(app: &SharedApp, output: &WorkerOutput, weights: Option<&[u8]>) {
    match output {
        WorkerOutput::TrainingStarted { compute, device, batches_per_epoch, recipe, history, .. } => {
            let run = {
                let mut app = app.borrow_mut();
                let now = js_sys::Date::now();
                let Some(id) = app.current_run else { return };
                let threads = app.worker_threads;
                let mut run = run_store::mine(&app.runs, Some(id)).unwrap_or_else(|| Run::new(id, now, recipe.clone(), *compute, device.clone(), threads));
                // A resumed run goes on in its own record, wherever it runs now.
                (run.compute, run.device, run.threads, run.batches_per_epoch) = (*compute, device.clone(), threads, *batches_per_epoch);
                run.resumed |= !history.epochs.is_empty();
                run.history = history.clone();
                run.status = RunStatus::Running;
                crate::runs::put(&mut app.runs, run.clone());
                run
            };
            commit(app, Change::Put(run));
        }
        WorkerOutput::Step { step, smoothed_loss, elapsed_seconds, .. } => {
            let mut app = app.borrow_mut();
            let id = app.current_run;
            if let Some(run) = current(&mut app.runs, id) {
                if let Some(loss) = smoothed_loss {
                    run.history.steps.push(StepPoint { step: *step, loss: *loss });
                }
                run.seconds = *elapsed_seconds;
            }
        }
        WorkerOutput::Epoch { metrics, .. } => {
            let run = {
                let mut app = app.borrow_mut();
                let id = app.current_run;
                let Some(run) = current(&mut app.runs, id) else { return };
                run.history.epochs.push(metrics.clone());
                if let Some(bytes) = weights {
                    run.weights_sha256 = Some(format!("{:x}", Sha256::digest(bytes)));
                }
                run.clone()
            };
            let id = run.id;
            commit(app, Change::Put(run));
            if let Some(bytes) = weights {
                keep_weights(app, id, bytes.to_vec());
            }
        }
        WorkerOutput::CheckpointSaved { epoch, .. } => {
            let run = {
                let mut app = app.borrow_mut();
                let id = app.current_run;
                let Some(run) = current(&mut app.runs, id) else { return };
                run.checkpoint_epoch = Some(*epoch);
                run.clone()
            };
            commit(app, Change::Put(run));
        }
        WorkerOutput::Finished { stopped_early } => end(app, if *stopped_early { RunStatus::Stopped } else { RunStatus::Finished }),
        WorkerOutput::TrainingFailed { message } => end(app, RunStatus::Failed { message: message.clone() }),
        _ => {}
    }
}

fn current(runs: &mut [Run], id: Option<u64>) -> Option<&mut Run> {
    runs.iter_mut().find(|run| Some(run.id) == id)
}

/// Records how the run ended, then lets other tabs resume it: not before, or a tab that reads the
/// table as the lock frees would find the run still "running" with no tab training it.
fn end(app: &SharedApp, status: RunStatus) {
    let (id, run) = {
        let mut app = app.borrow_mut();
        let id = app.current_run;
        let run = current(&mut app.runs, id).map(|run| {
            run.status = status;
            run.clone()
        });
        (id, run)
    };
    let Some(id) = id else { return };
    let app = app.clone();
    spawn_local(async move {
        if let Some(run) = run {
            run_store::store(&app, Change::Put(run)).await;
        }
        run_store::release(&app, id);
        changed(&app, AppChange::Runs); // its weights can be loaded now
    });
}

/// Writes run `id`'s latest weights, then records that storage keeps them: on the stored record
/// as it is by then (the run may have ended meanwhile), and on this tab's own.
fn keep_weights(app: &SharedApp, id: u64, bytes: Vec<u8>) {
    let app = app.clone();
    spawn_local(async move {
        if let Err(message) = storage::write_file(&weights_file(id), &bytes).await {
            show_problem(&format!("The run's weights were not kept: {message}"));
            return;
        }
        if let Some(run) = current(&mut app.borrow_mut().runs, Some(id)) {
            run.weights_kept = true;
        }
        commit(&app, Change::WeightsKept(id));
    });
}

/// Redraws the table, newest run first.
pub fn show(app: &SharedApp) {
    let app_ref = app.borrow();
    let labels = labels(&app_ref.runs);
    let trainers = app_ref.trainers();
    let rows: String = app_ref
        .runs
        .iter()
        .enumerate()
        .rev()
        .map(|(index, run)| {
            // The time of day for today's runs, the date too for older ones.
            let date = js_sys::Date::new(&run.started_ms.into());
            let today = js_sys::Date::new_0().to_date_string() == date.to_date_string();
            let options = js_sys::Object::new();
            for (key, value) in [("hour", "2-digit"), ("minute", "2-digit")].into_iter().chain((!today).then_some([("day", "numeric"), ("month", "short")]).into_iter().flatten()) {
                let _ = js_sys::Reflect::set(&options, &key.into(), &value.into());
            }
            // The browser's own locale, not `navigator.language` passed back: WebKitGTK started
            // with LANG=C reports "C", which Intl rejects with a RangeError.
            let format = js_sys::Intl::DateTimeFormat::new(&js_sys::Array::new(), &options).format();
            let started = format.call1(&JsValue::UNDEFINED, &date).ok().and_then(|text| text.as_string()).unwrap_or_default();
            let accuracy = run.test_accuracy().map(|accuracy| format!("{:.1}%", 100.0 * accuracy)).unwrap_or_else(|| "–".into());
            let speed = run.images_per_second().map(|speed| format!("{speed:.0}")).unwrap_or_else(|| "–".into());
            let seen = run.seen(&trainers);
            let status = match &seen {
                Seen::Ended(RunStatus::Failed { message }) => format!(r#"<span title="{}">failed</span>"#, escape(message)),
                seen => seen.label().to_string(),
            };
            let state = match &seen {
                Seen::InAnotherTab => "elsewhere",
                seen => seen.label(),
            };
            let overlaid = if app_ref.overlaid.contains(&run.id) { " checked" } else { "" };
            let load = if run.weights_kept {
                format!(r#"<button type="button" data-action="load"{}>Load</button>"#, if app_ref.current_run.is_some() { " disabled" } else { "" })
            } else {
                String::new()
            };
            let delete = if matches!(seen, Seen::Here | Seen::InAnotherTab) { "" } else { r#"<button type="button" class="quiet" data-action="delete">Delete</button>"# };
            format!(
                r#"<tr data-run="{id}" data-status="{state}" data-label="{label}"><td><input type="checkbox" data-action="overlay" aria-label="Show run {number} on the charts"{overlaid}><i class="swatch" style="background:{colour}"></i></td><td>{number}</td><td>{started}</td><td class="label">{label}</td><td>{status}</td><td>{done}/{epochs}</td><td data-accuracy="{raw}">{accuracy}</td><td>{time}</td><td>{speed}</td><td>{path}</td><td class="actions">{load}<button type="button" class="quiet" data-action="json">JSON</button>{delete}</td></tr>"#,
                id = run.id,
                state = state,
                number = index + 1,
                colour = crate::runs::colour(index),
                started = escape(&started),
                label = escape(&labels[index]),
                done = run.history.epochs.len(),
                epochs = run.recipe.epochs,
                raw = run.test_accuracy().map(|accuracy| accuracy.to_string()).unwrap_or_default(),
                time = duration(run.seconds),
                path = escape(&run.short_path()),
            )
        })
        .collect();
    element::<HtmlElement>("runs-body").set_inner_html(&rows);
    let count = app_ref.runs.len();
    let kept = app_ref.runs.iter().filter(|run| run.weights_kept).count();
    set_text(
        "runs-summary",
        &match count {
            0 => "No runs yet: each training run is listed here, kept in this browser.".to_string(),
            _ => format!(
                "{} run{} in this browser, {kept} with {} weights (the latest {KEPT_WEIGHTS} runs keep theirs). Tick runs to draw \
                 their curves on the charts above.",
                group_thousands(count),
                if count == 1 { "" } else { "s" },
                if kept == 1 { "its" } else { "their" }
            ),
        },
    );
    if let Some(button) = dom::by_id("runs-csv").and_then(|button| button.dyn_into::<web_sys::HtmlButtonElement>().ok()) {
        button.set_disabled(count == 0);
    }
}

/// Wires the table's and the card's buttons.
pub fn wire(app: &SharedApp) {
    let table_app = app.clone();
    dom::listen(&element::<HtmlElement>("runs-body"), "click", move |event: web_sys::MouseEvent| {
        let Some(target) = event.target().and_then(|target| target.dyn_into::<Element>().ok()) else { return };
        let Some(action) = target.get_attribute("data-action") else { return };
        let Some(id) = target.closest("tr").ok().flatten().and_then(|row| row.get_attribute("data-run")).and_then(|id| id.parse::<u64>().ok())
        else {
            return;
        };
        act(&table_app, &action, id, &target);
    });
    let csv_app = app.clone();
    dom::listen(&element::<HtmlElement>("runs-csv"), "click", move |_: web_sys::Event| {
        let csv = to_csv(&csv_app.borrow().runs);
        if let Err(message) = dom::save_file(csv.as_bytes(), "vit-runs.csv", "text/csv") {
            show_problem(&message);
        }
    });
}

fn act(app: &SharedApp, action: &str, id: u64, target: &Element) {
    match action {
        "overlay" => {
            let ticked = target.unchecked_ref::<HtmlInputElement>().checked();
            {
                let mut app = app.borrow_mut();
                app.overlaid.retain(|&run| run != id);
                if ticked {
                    app.overlaid.push(id);
                }
            }
            changed(app, AppChange::History);
        }
        "json" => {
            let run = app.borrow().runs.iter().find(|run| run.id == id).map(Run::to_store);
            if let Some(run) = run
                && let Err(message) = dom::save_file(run.to_json().as_bytes(), &format!("vit-run-{id}.json"), "application/json")
            {
                show_problem(&message);
            }
        }
        "delete" => {
            let app = app.clone();
            spawn_local(async move {
                // Not a run another tab has just started to train: this tab's table may be older.
                if tabs::held_locks().await.contains(&lock_name(id)) {
                    show_problem("That run is being trained in another tab; stop it there first.");
                    return;
                }
                app.borrow_mut().overlaid.retain(|&run| run != id);
                commit(&app, Change::Delete(id));
            });
        }
        "load" => {
            let app = app.clone();
            spawn_local(async move {
                let number = app.borrow().runs.iter().position(|run| run.id == id).map_or(0, |index| index + 1);
                let loaded = match storage::read_file(&weights_file(id)).await {
                    Ok(Some(bytes)) => adopt_weights(&app, bytes, &format!("From run {number}")),
                    Ok(None) => Err("browser storage no longer holds them".into()),
                    Err(message) => Err(message),
                };
                if let Err(message) = loaded {
                    show_problem(&format!("Run {number}'s weights could not be loaded: {message}"));
                }
            });
        }
        _ => {}
    }
}
