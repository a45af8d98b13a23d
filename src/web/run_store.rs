//! The runs table in browser storage, shared by the page's tabs (`crate::runs`). A tab changes it
//! only by a [`Change`] applied under the storage lock to the table as stored then, and says so
//! to the other tabs, which read it again; it holds a run's lock while it trains that run. A tab
//! also reads the table again when a run's lock comes free, since its tab may have gone away.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::rc::Rc;

use wasm_bindgen_futures::spawn_local;

use crate::compute::ComputePath;
use crate::runs::{
    Change, LEGACY_CHECKPOINT, Run, RunStatus, apply, checkpoint_file, from_json, lock_name, locked_run, next_id, put, to_json, weights_file,
};
use crate::training::Checkpoint;
use crate::web::app::{SharedApp, changed};
use crate::web::dom::{set_hidden, set_text};
use crate::web::{storage, tabs};

/// The runs' file in browser storage.
const RUNS_FILE: &str = "runs.json";
/// The session storage key that keeps, across this tab's reloads, the run it trained last.
const OWN_RUN_KEY: &str = "vit-web-run";

thread_local! {
    /// The runs whose lock this tab waits on, to read the table again when it comes free.
    static WATCHED: RefCell<HashSet<u64>> = RefCell::new(HashSet::new());
    /// The last version of the table numbered ([`next_version`]), and the latest shown.
    static VERSIONS: (Cell<u64>, Cell<u64>) = const { (Cell::new(0), Cell::new(0)) };
}

pub fn show_problem(message: &str) {
    set_text("runs-error", message);
    set_hidden("runs-error", message.is_empty());
}

/// Reads the stored runs, gives a checkpoint kept before each run had its own to the run it
/// belongs to, and from then on follows the other tabs' changes.
pub async fn load(app: SharedApp) {
    refresh(&app).await;
    adopt_legacy_checkpoint(&app).await;
    tabs::on_announced(move |name| {
        if name == RUNS_FILE {
            let app = app.clone();
            spawn_local(async move { refresh(&app).await });
        }
    });
}

/// Reads the table and which runs other tabs train, and shows them. Nothing this tab trains is
/// replaced by what storage holds: its in-memory record is the newer.
pub async fn refresh(app: &SharedApp) {
    // Read under the file's lock, so that the read is ordered with every tab's writes.
    let read = Rc::new(RefCell::new(None));
    let into = read.clone();
    let result = storage::update_file(RUNS_FILE, move |bytes| {
        *into.borrow_mut() = Some((next_version(), bytes));
        None
    })
    .await;
    if let Err(message) = result {
        show_problem(&format!("Runs cannot be kept in this browser ({message}); this visit's are listed until you leave."));
        return;
    }
    let Some((version, bytes)) = read.take() else { return };
    let stored = match bytes.map(|bytes| from_json(&String::from_utf8_lossy(&bytes))) {
        Some(Ok(runs)) => runs,
        // Kept as it is, so that nothing is lost to a bug: the next change replaces it.
        Some(Err(message)) => {
            show_problem(&format!("{message}; new runs are recorded from here"));
            Vec::new()
        }
        None => Vec::new(),
    };
    settle(app, version, stored).await;
}

/// Numbers the table's states in the order this tab read or wrote them, inside the file's lock.
fn next_version() -> u64 {
    VERSIONS.with(|versions| {
        versions.0.set(versions.0.get() + 1);
        versions.0.get()
    })
}

/// Shows `stored`, the table as read or written at `version`, with this tab's own record in it,
/// and which of its runs other tabs train now. A state older than one shown already is dropped.
async fn settle(app: &SharedApp, version: u64, stored: Vec<Run>) {
    let held: Vec<u64> = tabs::held_locks().await.iter().filter_map(|name| locked_run(name)).collect();
    if VERSIONS.with(|versions| versions.1.replace(version.max(versions.1.get())) > version) {
        return;
    }
    let elsewhere = {
        let mut app = app.borrow_mut();
        let elsewhere: Vec<u64> = held.into_iter().filter(|&id| Some(id) != app.current_run).collect();
        app.runs = with_mine(stored, mine(&app.runs, app.current_run));
        let known: Vec<u64> = app.runs.iter().map(|run| run.id).collect();
        app.overlaid.retain(|id| known.contains(id));
        app.runs_elsewhere = elsewhere.clone();
        elsewhere
    };
    for id in elsewhere {
        watch(app, id);
    }
    changed(app, crate::web::app::Change::Runs);
}

/// Reads the table again once run `id`'s tab releases it or goes away.
fn watch(app: &SharedApp, id: u64) {
    if !WATCHED.with(|watched| watched.borrow_mut().insert(id)) {
        return;
    }
    let app = app.clone();
    tabs::when_free(&lock_name(id), move || {
        WATCHED.with(|watched| watched.borrow_mut().remove(&id));
        spawn_local(async move { refresh(&app).await });
    });
}

/// This tab's record of the run it trains.
pub fn mine(runs: &[Run], current: Option<u64>) -> Option<Run> {
    runs.iter().find(|run| Some(run.id) == current).cloned()
}

fn with_mine(mut stored: Vec<Run>, mine: Option<Run>) -> Vec<Run> {
    if let Some(run) = mine {
        put(&mut stored, run);
    }
    stored
}

/// Applies `change` to the stored table under the storage lock, removes the files it leaves
/// without a run, and tells the other tabs. Where storage fails, this visit still shows it.
pub fn commit(app: &SharedApp, change: Change) {
    let app = app.clone();
    spawn_local(async move { store(&app, change).await });
}

/// [`commit`], done once it returns.
pub async fn store(app: &SharedApp, change: Change) {
    let training = app.borrow().trainers().all();
    let outcome = Rc::new(RefCell::new(None));
    let written = outcome.clone();
    let local = change.clone();
    let result = storage::update_file(RUNS_FILE, move |bytes| {
        let mut runs = bytes.and_then(|bytes| from_json(&String::from_utf8_lossy(&bytes)).ok()).unwrap_or_default();
        let dropped = apply(&mut runs, change, &training);
        let text = to_json(&runs);
        *written.borrow_mut() = Some((next_version(), runs, dropped));
        Some(text.into_bytes())
    })
    .await;
    let stored = match result {
        Ok(()) => {
            tabs::announce(RUNS_FILE);
            show_problem("");
            outcome.take()
        }
        Err(message) => {
            show_problem(&format!("The runs table was not saved: {message}"));
            None
        }
    };
    let (version, runs) = match stored {
        Some((version, runs, dropped)) => {
            for id in dropped.weights {
                let _ = storage::remove_file(&weights_file(id)).await;
            }
            for id in dropped.checkpoints {
                let _ = storage::remove_file(&checkpoint_file(id)).await;
            }
            (version, runs)
        }
        None => {
            let mut runs = app.borrow().runs.clone();
            apply(&mut runs, local, &[]);
            (next_version(), runs)
        }
    };
    settle(app, version, runs).await;
}

/// A new run's id (`runs::next_id`), salted at random so that two tabs never draw the same.
pub fn new_id(runs: &[Run]) -> u64 {
    next_id(runs, js_sys::Date::now(), (js_sys::Math::random() * 1000.0) as u64)
}

/// Takes run `id` for this tab: holds its lock, unless another tab holds it, and remembers it as
/// this tab's run across reloads. Whether this tab now trains it.
pub async fn claim(app: &SharedApp, id: u64) -> bool {
    if !tabs::hold_lock(&lock_name(id)).await {
        return false;
    }
    app.borrow_mut().current_run = Some(id);
    if let Some(session) = web_sys::window().and_then(|window| window.session_storage().ok().flatten()) {
        let _ = session.set_item(OWN_RUN_KEY, &id.to_string());
    }
    true
}

/// Ends this tab's hold on run `id`, which it trained.
pub fn release(app: &SharedApp, id: u64) {
    let mut app = app.borrow_mut();
    if app.current_run == Some(id) {
        app.current_run = None;
    }
    tabs::release_lock(&lock_name(id));
}

/// The run this tab trained last, even before a reload.
pub fn own_run() -> Option<u64> {
    web_sys::window()?.session_storage().ok().flatten()?.get_item(OWN_RUN_KEY).ok().flatten()?.parse().ok()
}

/// Gives the one checkpoint an earlier version of the page kept to the run it belongs to: the
/// latest one of its recipe without a checkpoint that no tab trains, or else a run made from it.
async fn adopt_legacy_checkpoint(app: &SharedApp) {
    let Ok(Some(bytes)) = storage::read_file(LEGACY_CHECKPOINT).await else { return };
    // One that cannot be read stays where it is, as the person's: nothing here can use it.
    let Ok(checkpoint) = Checkpoint::decode(&bytes) else { return };
    let run = {
        let app = app.borrow();
        let training = app.trainers().all();
        let owner = app.runs.iter().rev().find(|run| {
            run.recipe == checkpoint.recipe && run.checkpoint_epoch.is_none() && run.history.epochs.len() >= checkpoint.epochs_done && !training.contains(&run.id)
        });
        let mut run = owner.cloned().unwrap_or_else(|| {
            let compute = if checkpoint.trainer.is_some() { ComputePath::Cpu } else { ComputePath::WebGpu };
            let id = new_id(&app.runs);
            Run { history: checkpoint.history.clone(), status: RunStatus::Stopped, ..Run::new(id, js_sys::Date::now(), checkpoint.recipe.clone(), compute, "an earlier version of this page".into(), 1) }
        });
        run.checkpoint_epoch = Some(checkpoint.epochs_done);
        if run.status == RunStatus::Running {
            run.status = RunStatus::Interrupted;
        }
        run
    };
    if storage::write_file(&checkpoint_file(run.id), &bytes).await.is_ok() {
        let _ = storage::remove_file(LEGACY_CHECKPOINT).await;
        commit(app, Change::Put(run));
    }
}
