//! The training card: the recipe form, start/pause/resume/stop, and the live figures.

use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{HtmlButtonElement, HtmlElement, HtmlProgressElement, HtmlSelectElement};

use crate::compute::ComputePath;
use std::cell::Cell;

use crate::data::cifar::TEST_IMAGES;
use crate::data::subset::SubsetRule;
use crate::display::{bytes, duration, group_thousands, training_title};
use crate::model::Preset;
use crate::protocol::{DatasetSource, WorkerInput, WorkerOutput};
use crate::runs::{self, Change as RunChange, Run, RunStatus, Seen};
use crate::training::{EpochMetrics, MetricsHistory, NamedRecipe, RecipeForm, StepPoint, TEN_MINUTES, TrainingRecipe, epochs_within};
use crate::web::app::{App, Change, SharedApp, changed, send, show_error};
use crate::web::dom::{self, element, escape, set_hidden, set_text};
use crate::web::run_store;

/// The page's title when it is not training.
const PAGE_TITLE: &str = "ViT in your browser";
/// The training status while an accepted run waits for the worker's evaluation of the loaded
/// weights (minutes on a slow adapter), which the test set card counts.
const WAITING_FOR_EVALUATION: &str = "waiting for the test set's evaluation of the current weights to end…";

/// How far the run is, for the title and the note on coming back to a hidden tab.
#[derive(Debug, Clone, Copy, Default)]
struct Progress {
    step: usize,
    total_steps: usize,
    epoch: usize,
    epochs: usize,
}

thread_local! {
    static PROGRESS: Cell<Progress> = const { Cell::new(Progress { step: 0, total_steps: 0, epoch: 0, epochs: 0 }) };
    /// Where the run was and when (ms), when the tab was hidden during training.
    static HIDDEN_AT: Cell<Option<(Progress, f64)>> = const { Cell::new(None) };
}

fn show_progress_in_title(paused: bool) {
    let progress = PROGRESS.get();
    dom::document().set_title(&training_title(progress.step, progress.total_steps, progress.epoch, progress.epochs, paused));
}

/// Training goes on in the worker while the tab is hidden; coming back, the page says how much
/// ran meanwhile.
fn watch_visibility(app: &SharedApp) {
    let app = app.clone();
    dom::listen(&dom::document(), "visibilitychange", move |_: web_sys::Event| {
        if dom::document().hidden() {
            if app.borrow().training {
                HIDDEN_AT.set(Some((PROGRESS.get(), dom::now_ms())));
            }
            return;
        }
        let Some((before, since)) = HIDDEN_AT.take() else { return };
        let now = PROGRESS.get();
        let steps = now.step.saturating_sub(before.step);
        if steps == 0 {
            return;
        }
        let epochs = if now.epoch == before.epoch { format!("in epoch {}", now.epoch) } else { format!("from epoch {} to {}", before.epoch, now.epoch) };
        set_text(
            "background-note",
            &format!(
                "While this tab was in the background ({}), training ran {}, {epochs}.",
                duration((dom::now_ms() - since) / 1000.0),
                crate::display::count(steps, "step")
            ),
        );
        let _ = element::<HtmlElement>("background-note").set_attribute("data-steps", &steps.to_string());
        set_hidden("background-note", false);
    });
}

fn form_field(name: &str) -> Option<web_sys::Element> {
    dom::document().query_selector(&format!("#recipe-form [name={name}]")).ok().flatten()
}

/// The form's current text, field by field.
fn read_form() -> RecipeForm {
    let mut form = RecipeForm::default();
    for name in RecipeForm::FIELDS {
        let value = form_field(name).and_then(|field| Reflect::get(&field, &"value".into()).ok()).and_then(|value| value.as_string());
        form.set(name, &value.unwrap_or_default());
    }
    form
}

/// Writes `form` into the form's fields; the seed too when `with_seed` (it is otherwise the
/// person's, kept across named recipes).
fn fill_form(form: &RecipeForm, with_seed: bool) {
    for name in RecipeForm::FIELDS.into_iter().filter(|&name| with_seed || name != "seed") {
        if let (Some(field), Some(value)) = (form_field(name), form.field(name)) {
            let _ = Reflect::set(&field, &"value".into(), &value.as_str().into());
        }
    }
}

const CUSTOM: &str = "custom";

/// The recipe menu: a named recipe fills the form; editing a field makes the recipe "Custom".
fn wire_recipe_menu(app: &SharedApp) {
    let menu: HtmlSelectElement = element("recipe-named");
    let mut options: String =
        NamedRecipe::ALL.iter().map(|named| format!("<option value=\"{}\">{}</option>", named.key(), named.label())).collect();
    options.push_str(&format!("<option value=\"{CUSTOM}\">Custom</option>"));
    menu.set_inner_html(&options);
    let chosen = dom::query_param("recipe").and_then(|key| NamedRecipe::from_key(&key)).unwrap_or(NamedRecipe::Reference);
    menu.set_value(chosen.key());
    choose_recipe(app, chosen);
    apply_link();
    let handler_app = app.clone();
    dom::listen(&menu, "change", move |_: web_sys::Event| {
        let menu: HtmlSelectElement = element("recipe-named");
        match NamedRecipe::from_key(&menu.value()) {
            Some(named) => choose_recipe(&handler_app, named),
            None => set_text("recipe-about", OWN_VALUES),
        }
        write_link();
    });
    dom::listen(&element::<HtmlElement>("recipe-form"), "input", |event: web_sys::Event| {
        let seed = event.target().and_then(|target| Reflect::get(&target, &"name".into()).ok()).and_then(|name| name.as_string());
        if seed.as_deref() != Some("seed") {
            element::<HtmlSelectElement>("recipe-named").set_value(CUSTOM);
            set_text("recipe-about", OWN_VALUES);
        }
        write_link();
    });
    dom::listen(&element::<HtmlElement>("recipe-link"), "click", |_: web_sys::Event| {
        wasm_bindgen_futures::spawn_local(copy_link());
    });
}

const OWN_VALUES: &str = "Your own values: change any field below.";

/// Fills the form with the recipe fields the page's link names (`?lr=3e-3&batch=128`), on top
/// of the named recipe; the form's message says what in the link is not a usable value.
fn apply_link() {
    let pairs = dom::query_pairs();
    let value = |name: &str| pairs.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str());
    let mut unusable = crate::compute::unusable_link_values(value("compute"), value("threads"));
    if let Some(key) = value("recipe").filter(|key| NamedRecipe::from_key(key).is_none()) {
        unusable.push(format!("recipe: '{key}' is not one of the named recipes, so the form shows the reference"));
    }
    let named = read_form();
    let (linked, any) = named.clone().with_query(pairs.iter().map(|(name, value)| (name.as_str(), value.as_str())));
    show_link_problems(&unusable, None);
    if !any {
        return;
    }
    fill_form(&linked, true);
    let same = RecipeForm { seed: named.seed.clone(), ..linked.clone() } == named;
    if !same {
        element::<HtmlSelectElement>("recipe-named").set_value(CUSTOM);
        set_text("recipe-about", "The recipe from the link you opened: change any field below.");
    }
    show_link_problems(&unusable, linked.parse().err().map(|error| error.to_string()));
}

/// The form's "In the link: …" message: every value in the page's link it could not use.
fn show_link_problems(unusable: &[String], recipe_error: Option<String>) {
    let problems: Vec<String> = recipe_error.into_iter().chain(unusable.iter().cloned()).collect();
    if !problems.is_empty() {
        set_text("recipe-error", &format!("In the link: {}", problems.join("; ")));
        set_hidden("recipe-error", false);
    }
}

/// Keeps the address bar's query on the form's recipe, so that the address is a link to it: a
/// named recipe by its name (and a seed other than 0), a custom one by every field. The page's
/// other parameters (`compute`, `dataset`, `threads`) stay.
fn write_link() {
    let form = read_form();
    let fields: Vec<(&str, Option<String>)> = match NamedRecipe::from_key(&element::<HtmlSelectElement>("recipe-named").value()) {
        Some(named) => {
            let mut fields: Vec<(&str, Option<String>)> = RecipeForm::FIELDS.iter().map(|&name| (name, None)).collect();
            fields.push(("recipe", Some(named.key().to_string())));
            if form.seed.trim() != "0" {
                fields.push(("seed", Some(form.seed.clone())));
            }
            fields
        }
        None => form.query().into_iter().map(|(name, value)| (name, Some(value))).chain([("recipe", None)]).collect(),
    };
    dom::replace_query(&fields);
}

async fn copy_link() {
    write_link();
    let Some(window) = web_sys::window() else { return };
    let Ok(href) = window.location().href() else { return };
    let copied = wasm_bindgen_futures::JsFuture::from(window.navigator().clipboard().write_text(&href)).await;
    let link: web_sys::HtmlInputElement = element("recipe-link-text");
    link.set_value(&href);
    match copied {
        Ok(_) => {
            set_text("recipe-link-status", "Link copied: it opens this page with this recipe.");
            link.set_hidden(true);
        }
        Err(_) => {
            set_text("recipe-link-status", "The browser did not let the page copy; copy the link from here:");
            link.set_hidden(false);
            link.select();
        }
    }
    set_hidden("recipe-link-status", false);
}

/// Refits the time-budget recipe's epochs to a dataset that has just loaded, if it is chosen.
pub fn dataset_changed(app: &SharedApp) {
    if NamedRecipe::from_key(&element::<HtmlSelectElement>("recipe-named").value()) == Some(NamedRecipe::TenMinutes) {
        choose_recipe(app, NamedRecipe::TenMinutes);
    }
}

/// Fills the form with `named` and says what it is; the time-budget recipe gets the epochs that
/// fit its budget at the speed measured here.
fn choose_recipe(app: &SharedApp, named: NamedRecipe) {
    let mut recipe = named.recipe();
    let mut about = named.about().to_string();
    if named == NamedRecipe::TenMinutes {
        let app = app.borrow();
        // Before the dataset has loaded: the prepared dataset's sizes.
        let (train_images, test_images) = app.dataset_images.unwrap_or((SubsetRule::REFERENCE.len(), TEST_IMAGES));
        about.push(' ');
        match app.measured_speed {
            Some(speed) => {
                recipe.epochs = epochs_within(TEN_MINUTES, speed, train_images, test_images);
                about.push_str(&format!(
                    "Measured here: {speed:.0} images/s, so {} epoch{} fit.",
                    recipe.epochs,
                    if recipe.epochs == 1 { "" } else { "s" }
                ));
            }
            None => about.push_str(&format!(
                "This browser's speed was not measured (the compute path was chosen by hand), so it takes the {} epochs \
                 that fit on a 2-core virtual machine's CPU path.",
                recipe.epochs
            )),
        }
    }
    fill_form(&RecipeForm::of(&recipe), false);
    set_text("recipe-about", &about);
}

/// Chooses `named` in the recipe menu, as if the person had.
pub fn use_named(app: &SharedApp, named: NamedRecipe) {
    element::<HtmlSelectElement>("recipe-named").set_value(named.key());
    choose_recipe(app, named);
    write_link();
}

/// Fills the form with `recipe` (keeping the person's seed) as a custom recipe, saying `about`:
/// how the fine-tuning card proposes its recipe.
pub fn use_recipe(recipe: &TrainingRecipe, about: &str) {
    fill_form(&RecipeForm::of(recipe), false);
    element::<HtmlSelectElement>("recipe-named").set_value(CUSTOM);
    set_text("recipe-about", about);
    write_link();
}

fn clear_epoch_table() {
    if let Some(body) = element::<HtmlElement>("epoch-table").query_selector("tbody").ok().flatten() {
        body.set_inner_html("");
    }
}

fn button(id: &str) -> HtmlButtonElement {
    element(id)
}

fn on_click(id: &str, app: &SharedApp, action: impl Fn(&SharedApp) + 'static) {
    let app = app.clone();
    let handler = Closure::<dyn Fn()>::new(move || action(&app));
    button(id).set_onclick(Some(handler.as_ref().unchecked_ref()));
    handler.forget(); // lives as long as the page
}

pub fn wire(app: &SharedApp) {
    wire_recipe_menu(app);
    watch_visibility(app);
    on_click("train-start", app, start);
    on_click("checkpoint-resume", app, |app| offered(app, resume));
    on_click("checkpoint-use", app, |app| offered(app, use_checkpoint));
    on_click("checkpoint-discard", app, |app| {
        offered(app, |app, id| {
            set_hidden("checkpoint-offer", true);
            run_store::commit(app, RunChange::DropCheckpoint(id));
        })
    });
    let others = app.clone();
    dom::listen(&element::<HtmlElement>("checkpoint-others"), "click", move |event: web_sys::MouseEvent| {
        let Some(target) = event.target().and_then(|target| target.dyn_into::<web_sys::Element>().ok()) else { return };
        let id = target.closest("li").ok().flatten().and_then(|item| item.get_attribute("data-run")).and_then(|id| id.parse().ok());
        match (target.get_attribute("data-action").as_deref(), id) {
            (Some("resume"), Some(id)) => resume(&others, id),
            (Some("use"), Some(id)) => use_checkpoint(&others, id),
            _ => {}
        }
    });
    on_click("train-pause", app, |app| send(app, &WorkerInput::Pause, None));
    on_click("train-resume", app, |app| send(app, &WorkerInput::Resume, None));
    on_click("train-stop", app, |app| {
        set_text("train-status", "stopping after this step…");
        send(app, &WorkerInput::Stop, None);
    });
    refresh_buttons(app);
}

fn start(app: &SharedApp) {
    let recipe = match read_form().parse() {
        Ok(recipe) => recipe,
        Err(error) => {
            set_text("recipe-error", &error.to_string());
            set_hidden("recipe-error", false);
            return;
        }
    };
    set_hidden("recipe-error", true);
    clear_epoch_table();
    let (compute, probe, base) = {
        let mut app = app.borrow_mut();
        begin_waiting_for_run(&mut app);
        app.planned_epochs = recipe.epochs;
        app.history = MetricsHistory::default();
        // On a person's own pictures the run fine-tunes the current model (the worker gives it a
        // new head when its classes are not these); on CIFAR-10 it trains from scratch.
        let base = (app.dataset_source == Some(DatasetSource::Collection)).then(|| app.weights.clone()).flatten();
        (app.compute, app.probe.image.clone(), base)
    };
    set_text("train-status", "starting…");
    refresh_buttons(app);
    let id = run_store::new_id(&app.borrow().runs);
    let app = app.clone();
    wasm_bindgen_futures::spawn_local(async move {
        // A new id: no other tab holds it.
        run_store::claim(&app, id).await;
        let base = base.map(|bytes| ("bytes", Uint8Array::from(bytes.as_slice()).into()));
        send(&app, &WorkerInput::Train { run_id: id, recipe, compute, probe }, base);
    });
}

/// Calls `action` with the run the offer's buttons are for.
fn offered(app: &SharedApp, action: fn(&SharedApp, u64)) {
    if let Some(id) = element::<HtmlElement>("checkpoint-offer").get_attribute("data-run").and_then(|id| id.parse().ok()) {
        action(app, id);
    }
}

/// Continues run `id` from its checkpoint in this tab, unless another tab has taken it.
fn resume(app: &SharedApp, id: u64) {
    let app = app.clone();
    wasm_bindgen_futures::spawn_local(async move {
        if !run_store::claim(&app, id).await {
            set_text("checkpoint-error", "That run is being trained in another tab now; it can be resumed here once that tab stops or closes.");
            set_hidden("checkpoint-error", false);
            return;
        }
        let (compute, probe) = {
            let mut app = app.borrow_mut();
            begin_waiting_for_run(&mut app);
            (app.compute, app.probe.image.clone())
        };
        set_hidden("checkpoint-offer", true);
        set_hidden("checkpoint-error", true);
        clear_epoch_table();
        set_text("train-status", "resuming…");
        refresh_buttons(&app);
        send(&app, &WorkerInput::ResumeTraining { run_id: id, compute, probe }, None);
    });
}

fn use_checkpoint(app: &SharedApp, id: u64) {
    set_hidden("checkpoint-offer", true);
    send(app, &WorkerInput::UseCheckpoint { run_id: id }, None);
}

/// Marks a run as asked for: training, and waiting for the worker to say it started, from now.
fn begin_waiting_for_run(app: &mut App) {
    app.training = true;
    app.run_answered = false;
    app.worker_heard_ms = dom::now_ms();
}

/// Enables exactly the buttons that make sense now.
pub fn refresh_buttons(app: &SharedApp) {
    let app = app.borrow();
    let paused = element::<HtmlElement>("train-status").text_content().unwrap_or_default() == "paused";
    button("train-start").set_disabled(app.training || !app.dataset_ready);
    button("train-pause").set_disabled(!app.training || paused);
    button("train-resume").set_disabled(!app.training || !paused);
    button("train-stop").set_disabled(!app.training);
    button("checkpoint-resume").set_disabled(app.training || !app.dataset_ready);
    if let Ok(resumes) = dom::document().query_selector_all("#checkpoint-others [data-action=resume]") {
        for index in 0..resumes.length() {
            if let Some(resume) = resumes.item(index).and_then(|node| node.dyn_into::<HtmlButtonElement>().ok()) {
                resume.set_disabled(app.training || !app.dataset_ready);
            }
        }
    }
}

/// Training continues with the loaded model's preset unless the person picks another.
pub fn follow_preset(preset: Preset) {
    if let Some(select) = dom::document().query_selector("#recipe-form [name=preset]").ok().flatten() {
        let _ = Reflect::set(&select, &"value".into(), &preset.name().into());
    }
}

/// Says, under the buttons, that training runs on the CPU.
pub fn show_compute(path: ComputePath) {
    if path == ComputePath::Cpu {
        set_text("train-note", "Training runs on the CPU (WebAssembly) here, which is slower than a GPU.");
    }
}

/// One offered run in words, and whether it can be resumed here.
fn describe_offer(run: &Run, number: usize, label: &str, seen: &Seen, short: bool) -> (String, bool) {
    let saved = run.checkpoint_epoch.unwrap_or(0);
    let epochs = run.recipe.epochs;
    if *seen == Seen::InAnotherTab {
        let epoch = (run.history.epochs.len() + 1).min(epochs);
        let text = match short {
            true => format!("Run {number} ({label}): training in another tab (epoch {epoch} of {epochs})"),
            false => format!(
                "Run {number} ({label}) is training in another tab (epoch {epoch} of {epochs}). Its weights after epoch {saved} can be \
                 used here; once that tab stops or closes, it can be resumed here."
            ),
        };
        return (text, false);
    }
    let state = match seen {
        Seen::Ended(RunStatus::Finished) => "finished",
        Seen::Ended(RunStatus::Failed { .. }) => "failed",
        _ => "stopped",
    };
    let resumable = saved < epochs;
    if short {
        return (format!("Run {number} ({label}): {state} after epoch {saved} of {epochs}"), resumable);
    }
    let accuracy = run
        .history
        .epochs
        .get(saved.wrapping_sub(1))
        .map(|epoch| format!(", test accuracy {:.1}%", 100.0 * epoch.test_accuracy))
        .unwrap_or_default();
    // On WebGPU burn cannot read the optimizer's state back, so the checkpoint has none.
    let exact = if run.compute == ComputePath::Cpu { "" } else { " (it ran on WebGPU, so the optimizer's moments restart)" };
    let action = if resumable { format!("Resume it{exact}, or use its weights.") } else { "Use its weights.".to_string() };
    (format!("Run {number} ({label}) {state} after epoch {saved} of {epochs} ({} preset{accuracy}). {action}", run.recipe.preset.name()), resumable)
}

/// Offers the runs whose checkpoints this browser keeps (`runs::offers`): this tab's own first,
/// with the buttons under it, then the others, each with its own. Runs other tabs train are
/// listed as such, with no way to resume them.
pub fn show_offer(app: &SharedApp) {
    let own = run_store::own_run();
    let app_ref = app.borrow();
    let trainers = app_ref.trainers();
    let labels = runs::labels(&app_ref.runs);
    let offered: Vec<(usize, &Run)> = runs::offers(&app_ref.runs, own, &trainers)
        .into_iter()
        .filter_map(|run| app_ref.runs.iter().position(|stored| stored.id == run.id).map(|index| (index, run)))
        .collect();
    let Some(&(index, first)) = offered.first().filter(|_| !app_ref.training) else {
        set_hidden("checkpoint-offer", true);
        return;
    };
    let seen = first.seen(&trainers);
    let (text, resumable) = describe_offer(first, index + 1, &labels[index], &seen, false);
    let offer = element::<HtmlElement>("checkpoint-offer");
    let _ = offer.set_attribute("data-run", &first.id.to_string());
    set_text("checkpoint-text", &text);
    button("checkpoint-resume").set_hidden(!resumable);
    button("checkpoint-discard").set_hidden(seen == Seen::InAnotherTab);
    let others: String = offered[1..]
        .iter()
        .map(|&(index, run)| {
            let seen = run.seen(&trainers);
            let (text, resumable) = describe_offer(run, index + 1, &labels[index], &seen, true);
            let resume = if resumable { r#" <button type="button" data-action="resume">Resume</button>"#.to_string() } else { String::new() };
            format!(
                r#"<li data-run="{}" data-state="{}">{}{resume} <button type="button" class="quiet" data-action="use">Use its weights</button></li>"#,
                run.id,
                if seen == Seen::InAnotherTab { "elsewhere" } else { seen.label() },
                escape(&text)
            )
        })
        .collect();
    element::<HtmlElement>("checkpoint-others").set_inner_html(&others);
    drop(app_ref);
    set_hidden("checkpoint-offer", false);
    refresh_buttons(app);
}

fn set_progress(id: &str, value: f64, max: f64) {
    let progress: HtmlProgressElement = element(id);
    progress.set_max(max.max(1.0));
    progress.set_value(value);
}

pub fn on_output(app: &SharedApp, output: WorkerOutput) {
    match output {
        WorkerOutput::TrainingStarted { compute, total_steps, batches_per_epoch, recipe, history, .. } => {
            for metrics in &history.epochs {
                show_epoch(metrics, None, None);
            }
            set_text("train-status", &format!("training on {}", compute.label()));
            {
                let mut app = app.borrow_mut();
                app.steps_per_epoch = batches_per_epoch;
                app.planned_epochs = recipe.epochs;
                app.history = history;
            }
            changed(app, Change::History);
            set_progress("step-progress", 0.0, total_steps as f64);
            set_progress("epoch-progress", 0.0, batches_per_epoch as f64);
            set_hidden("background-note", true);
            let epochs_done = app.borrow().history.epochs.len();
            PROGRESS.set(Progress { step: epochs_done * batches_per_epoch, total_steps, epoch: epochs_done + 1, epochs: recipe.epochs });
            show_progress_in_title(false);
        }
        WorkerOutput::Step {
            step,
            total_steps,
            epoch,
            batch_in_epoch,
            batches_per_epoch,
            smoothed_loss,
            learning_rate,
            images_per_second,
            elapsed_seconds,
        } => {
            PROGRESS.set(Progress { step, total_steps, epoch, epochs: PROGRESS.get().epochs });
            show_progress_in_title(false);
            set_progress("step-progress", step as f64, total_steps as f64);
            set_text("step-text", &format!("{step} of {total_steps}"));
            set_progress("epoch-progress", batch_in_epoch as f64, batches_per_epoch as f64);
            set_text("epoch-text", &format!("epoch {epoch}, batch {batch_in_epoch} of {batches_per_epoch}"));
            set_text("train-speed", &format!("{images_per_second:.1} images/s · learning rate {learning_rate:.2e}"));
            let _ = element::<HtmlElement>("train-speed").set_attribute("data-images-per-second", &format!("{images_per_second:.3}"));
            let remaining = elapsed_seconds / step as f64 * (total_steps - step) as f64;
            set_text("train-time", &format!("{} elapsed · about {} left", duration(elapsed_seconds), duration(remaining)));
            if let Some(loss) = smoothed_loss {
                // The last step whose loss was read back: every step up to it has run, where on
                // WebGPU the others are reported once queued. The benchmark times spans to it.
                let _ = element::<HtmlElement>("step-text").set_attribute("data-read-step", &step.to_string());
                set_text("train-loss", &format!("{loss:.4}"));
                app.borrow_mut().history.steps.push(StepPoint { step, loss });
                changed(app, Change::History);
            }
        }
        WorkerOutput::TrainingWaits => set_text("train-status", WAITING_FOR_EVALUATION),
        WorkerOutput::Evaluating { done, total } => {
            set_text("epoch-text", &format!("evaluating the test set: {} of {} images", group_thousands(done), group_thousands(total)));
        }
        WorkerOutput::CheckpointSaved { epoch, bytes: size } => {
            set_hidden("checkpoint-error", true);
            set_text("checkpoint-status", &format!("Saved in this browser after epoch {epoch} ({}): a reload or a crash loses nothing.", bytes(size)));
        }
        WorkerOutput::CheckpointFailed { message } => {
            set_text("checkpoint-error", &message);
            set_hidden("checkpoint-error", false);
        }
        WorkerOutput::Paused => {
            show_progress_in_title(true);
            set_text("train-status", "paused");
            refresh_buttons(app);
        }
        WorkerOutput::Resumed => {
            show_progress_in_title(false);
            set_text("train-status", "training");
            refresh_buttons(app);
        }
        WorkerOutput::Finished { stopped_early } => {
            app.borrow_mut().training = false;
            dom::document().set_title(&if stopped_early { PAGE_TITLE.to_string() } else { format!("✓ trained · {PAGE_TITLE}") });
            set_text("train-status", if stopped_early { "stopped; the last finished epoch's weights are kept" } else { "finished" });
            refresh_buttons(app);
        }
        WorkerOutput::TrainingFailed { message } => {
            app.borrow_mut().training = false;
            dom::document().set_title(&format!("✗ failed · {PAGE_TITLE}"));
            set_text("train-status", "failed");
            show_error(&message);
            refresh_buttons(app);
        }
        _ => {}
    }
}

/// One row of the epoch table; `heap_bytes` is the worker's wasm memory after the epoch (unknown
/// for epochs restored from a checkpoint), `gpu_bytes` what the WebGPU memory pools hold (none on
/// the CPU path).
pub fn show_epoch(metrics: &EpochMetrics, heap_bytes: Option<u64>, gpu_bytes: Option<u64>) {
    let [heap, gpu] = [heap_bytes, gpu_bytes].map(|value| value.map(bytes).unwrap_or_else(|| "–".into()));
    let cells: String = metrics.cells().iter().chain([&heap, &gpu]).map(|cell| format!("<td>{cell}</td>")).collect();
    let row = format!(
        r#"<tr data-heap-bytes="{}" data-gpu-bytes="{}">{cells}</tr>"#,
        heap_bytes.unwrap_or(0),
        gpu_bytes.unwrap_or(0)
    );
    if let Some(body) = element::<HtmlElement>("epoch-table").query_selector("tbody").ok().flatten() {
        let _ = body.insert_adjacent_html("beforeend", &row); // numbers only: nothing to escape
    }
}
