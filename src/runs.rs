//! The page's record of its training runs: each run's recipe, where it ran, its metrics and how
//! it ended, kept in browser storage so that runs can be compared, labelled by what changed from
//! the run before, overlaid on the charts and exported (the table as CSV, a run as JSON).
//!
//! Several tabs share the stored table. Each changes it by a [`Change`] applied to the table as
//! stored at that moment ([`apply`]), never by writing back its own copy, so that two tabs that
//! finish, stop or delete runs at once keep every run. A run is trained by one tab at a time,
//! the one holding its lock; a run stored as running whose lock nobody holds was cut off.

use serde::{Deserialize, Serialize};

use crate::compute::ComputePath;
use crate::training::{MetricsHistory, NamedRecipe, StepPoint, TrainingRecipe};

/// The running-loss points a stored run keeps at most: the charts' width in pixels is about
/// this, and 20 runs of 6,000 steps would otherwise fill megabytes.
pub const KEPT_STEPS: usize = 500;
/// How many of the latest runs keep their final weights in browser storage (2.2 MB each for
/// the tiny preset, 13 MB for the small one).
pub const KEPT_WEIGHTS: usize = 3;
/// How many runs the table keeps; the oldest go first.
pub const KEPT_RUNS: usize = 100;
/// How many of the latest runs keep a checkpoint to resume from (6.6 MB each for the tiny preset,
/// 40 MB for the small one: weights and the optimizer's moments).
pub const KEPT_CHECKPOINTS: usize = 3;
/// Where the page kept its one checkpoint before each run had its own.
pub const LEGACY_CHECKPOINT: &str = "training-checkpoint.vitckpt";

/// The colours of runs overlaid on the charts, by their place in the table (the charts' own
/// blue and orange are the current weights').
pub const RUN_COLOURS: [&str; 8] = ["#7b5cc4", "#2a9d5b", "#c23b5a", "#1f9bb0", "#b58a00", "#e377c2", "#8c564b", "#5b6677"];

/// The colour of the run at `index` in start order.
pub fn colour(index: usize) -> &'static str {
    RUN_COLOURS[index % RUN_COLOURS.len()]
}

/// The file in browser storage that keeps run `id`'s weights.
pub fn weights_file(id: u64) -> String {
    format!("run-{id}.safetensors")
}

/// The file in browser storage that keeps run `id`'s checkpoint (the worker writes it).
pub fn checkpoint_file(id: u64) -> String {
    format!("checkpoint-{id}.vitckpt")
}

/// The name of the lock a tab holds while it trains run `id` (the Web Locks API).
pub fn lock_name(id: u64) -> String {
    format!("vit-web-run-{id}")
}

/// The run id a lock name belongs to.
pub fn locked_run(lock: &str) -> Option<u64> {
    lock.strip_prefix("vit-web-run-")?.parse().ok()
}

/// A new run's id: its start time in milliseconds times a thousand plus `salt` (below 1,000, drawn
/// at random, so that two tabs starting runs in one millisecond differ), or one more than the
/// latest run this tab knows of when the clock says otherwise. Ids of runs stored before the salt
/// are their start times in milliseconds, and smaller.
pub fn next_id(runs: &[Run], now_ms: f64, salt: u64) -> u64 {
    let latest = runs.iter().map(|run| run.id).max().unwrap_or(0);
    ((now_ms.max(0.0) as u64) * 1000 + salt % 1000).max(latest + 1)
}

/// How a run ended, or that it has not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Finished,
    /// The person stopped it.
    Stopped,
    Failed { message: String },
    /// The page went away while it ran (a reload, a closed or crashed tab).
    Interrupted,
}

impl RunStatus {
    pub fn label(&self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Stopped => "stopped",
            RunStatus::Failed { .. } => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

/// Which runs are being trained now, as one tab knows it: its own, and those whose lock another
/// tab holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trainers {
    pub here: Option<u64>,
    pub elsewhere: Vec<u64>,
}

impl Trainers {
    /// Every run being trained, in this tab or another.
    pub fn all(&self) -> Vec<u64> {
        self.here.into_iter().chain(self.elsewhere.iter().copied()).collect()
    }
}

/// A run's status as one tab shows it.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// This tab trains it.
    Here,
    InAnotherTab,
    Ended(RunStatus),
}

impl Seen {
    /// The word the table shows, and its `data-status`.
    pub fn label(&self) -> &'static str {
        match self {
            Seen::Here => "running",
            Seen::InAnotherTab => "training in another tab",
            Seen::Ended(status) => status.label(),
        }
    }
}

/// One training run as the page saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Unique among the stored runs; also the order they started in.
    pub id: u64,
    /// When it started, in milliseconds since 1970 (JavaScript's `Date.now()`).
    pub started_ms: f64,
    pub recipe: TrainingRecipe,
    pub compute: ComputePath,
    /// The adapter or CPU it ran on, as the worker named it, and the CPU path's threads.
    pub device: String,
    pub threads: usize,
    /// Optimiser steps per epoch, for the charts' x axis in epochs.
    pub batches_per_epoch: usize,
    /// Continued from a checkpoint of an earlier visit: its first epochs ran before.
    pub resumed: bool,
    /// Per-epoch metrics and the running loss (thinned to [`KEPT_STEPS`] points).
    pub history: MetricsHistory,
    pub status: RunStatus,
    /// Wall time of the training steps so far, as the worker measures it.
    pub seconds: f64,
    /// SHA-256 of the last weight file it produced, and whether browser storage still holds it.
    pub weights_sha256: Option<String>,
    pub weights_kept: bool,
    /// The epoch after which its checkpoint ([`checkpoint_file`]) was saved, while browser
    /// storage holds one.
    #[serde(default)]
    pub checkpoint_epoch: Option<usize>,
}

impl Run {
    pub fn new(id: u64, started_ms: f64, recipe: TrainingRecipe, compute: ComputePath, device: String, threads: usize) -> Self {
        Self {
            id,
            started_ms,
            recipe,
            compute,
            device,
            threads,
            batches_per_epoch: 0,
            resumed: false,
            history: MetricsHistory::default(),
            status: RunStatus::Running,
            seconds: 0.0,
            weights_sha256: None,
            weights_kept: false,
            checkpoint_epoch: None,
        }
    }

    /// Where the run stands, as a tab that knows who trains which run sees it.
    pub fn seen(&self, trainers: &Trainers) -> Seen {
        match &self.status {
            RunStatus::Running if trainers.here == Some(self.id) => Seen::Here,
            RunStatus::Running if trainers.elsewhere.contains(&self.id) => Seen::InAnotherTab,
            // Its tab went away without saying so: a reload, a closed or crashed tab.
            RunStatus::Running => Seen::Ended(RunStatus::Interrupted),
            status => Seen::Ended(status.clone()),
        }
    }

    /// The last epoch's test accuracy.
    pub fn test_accuracy(&self) -> Option<f32> {
        self.history.epochs.last().map(|epoch| epoch.test_accuracy)
    }

    /// Training images per second over the epochs that finished.
    pub fn images_per_second(&self) -> Option<f64> {
        let (images, seconds) = self.history.epochs.iter().fold((0.0, 0.0), |(images, seconds), epoch| {
            (images + epoch.images_per_second * epoch.train_seconds, seconds + epoch.train_seconds)
        });
        (seconds > 0.0).then(|| images / seconds)
    }

    /// The compute path as the table shows it: "WebGPU" or "CPU (wasm), 2 threads".
    pub fn path(&self) -> String {
        match self.compute {
            ComputePath::Cpu => format!("{}, {} thread{}", self.compute.label(), self.threads, if self.threads == 1 { "" } else { "s" }),
            ComputePath::WebGpu => self.compute.label().to_string(),
        }
    }

    /// The compute path in few words, for the table: "WebGPU" or "CPU, 2 threads".
    pub fn short_path(&self) -> String {
        match self.compute {
            ComputePath::Cpu => format!("CPU, {} thread{}", self.threads, if self.threads == 1 { "" } else { "s" }),
            ComputePath::WebGpu => "WebGPU".into(),
        }
    }

    /// The run as storage keeps it: at most [`KEPT_STEPS`] running-loss points.
    pub fn to_store(&self) -> Run {
        Run { history: MetricsHistory { epochs: self.history.epochs.clone(), steps: thinned(&self.history.steps, KEPT_STEPS) }, ..self.clone() }
    }

    /// The run as a JSON document (what "download its metrics" gives).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a run serialises")
    }
}

/// About `count` points of `steps`, evenly spaced, always with the first and the last.
pub fn thinned(steps: &[StepPoint], count: usize) -> Vec<StepPoint> {
    if steps.len() <= count || count < 2 {
        return steps.to_vec();
    }
    let last = steps.len() - 1;
    let mut kept: Vec<StepPoint> = (0..count).map(|index| steps[index * last / (count - 1)]).collect();
    kept.dedup_by_key(|point| point.step);
    kept
}

/// A number as a person writes it in a recipe: 0.001 → "1e-3", 0.0015 → "1.5e-3", 0.05 → "0.05".
fn short(value: f64) -> String {
    if value != 0.0 && value.abs() < 0.01 { format!("{value:e}") } else { format!("{value}") }
}

/// Each recipe value a person reads, by the name the table's labels use.
fn values(recipe: &TrainingRecipe) -> [(&'static str, String); 11] {
    let optimizer = &recipe.optimizer;
    [
        ("preset", recipe.preset.name().to_string()),
        ("epochs", recipe.epochs.to_string()),
        ("batch", recipe.batch_size.to_string()),
        ("lr", short(optimizer.learning_rate)),
        ("wd", short(optimizer.weight_decay)),
        ("warm-up", optimizer.warmup_steps.to_string()),
        // Through f32's own formatting: 0.1 stays "0.1", not 0.10000000149.
        ("smoothing", short(optimizer.label_smoothing.to_string().parse().expect("a float's text parses"))),
        ("augment", format!("{:?}", recipe.augment).to_lowercase()),
        ("init", recipe.init.name().to_string()),
        ("seed", recipe.seed.to_string()),
        ("train", recipe.trainable.name().to_string()),
    ]
}

/// What `run` changed from `previous` ("lr 1e-3 → 3e-3, batch 256 → 128"); for a first run, its
/// named recipe's name or "first run".
pub fn label(previous: Option<&Run>, run: &Run) -> String {
    let mut changes: Vec<String> = Vec::new();
    if run.resumed {
        changes.push("resumed".into());
    }
    let Some(previous) = previous else {
        let named = NamedRecipe::ALL.iter().find(|named| TrainingRecipe { seed: run.recipe.seed, ..named.recipe() } == run.recipe);
        changes.push(named.map_or("first run".to_string(), |named| named.label().to_string()));
        return changes.join(", ");
    };
    for ((name, before), (_, after)) in values(&previous.recipe).into_iter().zip(values(&run.recipe)) {
        if before != after {
            changes.push(format!("{name} {before} → {after}"));
        }
    }
    if previous.path() != run.path() {
        changes.push(format!("{} → {}", previous.path(), run.path()));
    }
    if changes.is_empty() { "same recipe".into() } else { changes.join(", ") }
}

/// Every run's label, each against the run before it (the runs in the order they started).
pub fn labels(runs: &[Run]) -> Vec<String> {
    runs.iter().enumerate().map(|(index, run)| label(index.checked_sub(1).map(|previous| &runs[previous]), run)).collect()
}

/// The runs table as CSV, one row per run in the order they started.
pub fn to_csv(runs: &[Run]) -> String {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let header = [
        "run", "started_ms", "label", "status", "preset", "epochs", "batch", "lr", "wd", "warmup", "smoothing", "augment", "init",
        "seed", "path", "device", "epochs_done", "test_accuracy", "seconds", "images_per_second", "weights_sha256",
    ];
    writer.write_record(header).expect("writing to memory");
    for (run, label) in runs.iter().zip(labels(runs)) {
        let recipe = &run.recipe;
        let optimizer = &recipe.optimizer;
        writer
            .write_record([
                run.id.to_string(),
                format!("{:.0}", run.started_ms),
                label,
                run.status.label().to_string(),
                recipe.preset.name().to_string(),
                recipe.epochs.to_string(),
                recipe.batch_size.to_string(),
                optimizer.learning_rate.to_string(),
                optimizer.weight_decay.to_string(),
                optimizer.warmup_steps.to_string(),
                optimizer.label_smoothing.to_string(),
                format!("{:?}", recipe.augment).to_lowercase(),
                recipe.init.name().to_string(),
                recipe.seed.to_string(),
                run.path(),
                run.device.clone(),
                run.history.epochs.len().to_string(),
                run.test_accuracy().map(|accuracy| format!("{accuracy:.4}")).unwrap_or_default(),
                format!("{:.1}", run.seconds),
                run.images_per_second().map(|speed| format!("{speed:.1}")).unwrap_or_default(),
                run.weights_sha256.clone().unwrap_or_default(),
            ])
            .expect("writing to memory");
    }
    String::from_utf8(writer.into_inner().expect("writing to memory")).expect("CSV of strings is UTF-8")
}

/// The stored runs, read back. A run stored as running may be training in another tab, or may
/// have been cut off: [`Run::seen`] tells which.
pub fn from_json(text: &str) -> Result<Vec<Run>, String> {
    serde_json::from_str(text).map_err(|error| format!("the stored runs are unreadable ({error})"))
}

/// The runs as storage keeps them.
pub fn to_json(runs: &[Run]) -> String {
    serde_json::to_string(&runs.iter().map(Run::to_store).collect::<Vec<_>>()).expect("runs serialise")
}

/// One tab's change to the stored runs. Not boxed: a change lives for one write and one
/// message, so its size does not matter.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)]
pub enum Change {
    /// Adds a run, or replaces the record of one with its id: only the tab training a run
    /// writes its record.
    Put(Run),
    Delete(u64),
    /// Forgets run `id`'s checkpoint (the person discarded it).
    DropCheckpoint(u64),
    /// Browser storage now holds run `id`'s latest weights: said once they are written, which
    /// may be after the run's last record.
    WeightsKept(u64),
}

/// Replaces the run with `run`'s id, or adds it in start order.
pub fn put(runs: &mut Vec<Run>, run: Run) {
    match runs.iter_mut().find(|stored| stored.id == run.id) {
        Some(stored) => *stored = run,
        None => {
            let at = runs.partition_point(|stored| stored.id < run.id);
            runs.insert(at, run);
        }
    }
}

/// The files a change leaves without a run to keep them: the weights and checkpoints of the runs
/// it deleted or forgot, and of runs no longer among the latest few that keep theirs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dropped {
    pub weights: Vec<u64>,
    pub checkpoints: Vec<u64>,
}

/// Applies `change` to the runs as stored now, in start order. Runs being trained (`training`:
/// in any tab) keep their files whatever their age, since their tab writes them again after its
/// next epoch.
pub fn apply(runs: &mut Vec<Run>, change: Change, training: &[u64]) -> Dropped {
    let mut dropped = Dropped::default();
    let forget = |run: &Run, dropped: &mut Dropped| {
        if run.weights_kept {
            dropped.weights.push(run.id);
        }
        if run.checkpoint_epoch.is_some() {
            dropped.checkpoints.push(run.id);
        }
    };
    match change {
        Change::Put(run) => put(runs, run),
        Change::Delete(id) => {
            if let Some(at) = runs.iter().position(|run| run.id == id) {
                forget(&runs.remove(at), &mut dropped);
            }
        }
        Change::WeightsKept(id) => {
            if let Some(run) = runs.iter_mut().find(|run| run.id == id) {
                run.weights_kept = true;
            }
        }
        Change::DropCheckpoint(id) => {
            if runs.iter_mut().find(|run| run.id == id).and_then(|run| run.checkpoint_epoch.take()).is_some() {
                dropped.checkpoints.push(id);
            }
        }
    }
    let excess = runs.len().saturating_sub(KEPT_RUNS);
    for run in runs.drain(..excess) {
        forget(&run, &mut dropped);
    }
    let idle = |run: &&mut Run| !training.contains(&run.id);
    for run in runs.iter_mut().rev().filter(|run| run.weights_kept).skip(KEPT_WEIGHTS).filter(idle) {
        run.weights_kept = false;
        dropped.weights.push(run.id);
    }
    for run in runs.iter_mut().rev().filter(|run| run.checkpoint_epoch.is_some()).skip(KEPT_CHECKPOINTS).filter(idle) {
        run.checkpoint_epoch = None;
        dropped.checkpoints.push(run.id);
    }
    dropped
}

/// The runs a tab offers to resume or take weights from, as it opens or when they change: those
/// with a checkpoint, this tab's own latest run first (`own`, which a reload keeps), then newest
/// first. The run this tab trains now is not among them.
pub fn offers<'a>(runs: &'a [Run], own: Option<u64>, trainers: &Trainers) -> Vec<&'a Run> {
    let mut offered: Vec<&Run> =
        runs.iter().rev().filter(|run| run.checkpoint_epoch.is_some() && trainers.here != Some(run.id)).collect();
    if let Some(at) = offered.iter().position(|run| Some(run.id) == own) {
        let mine = offered.remove(at);
        offered.insert(0, mine);
    }
    offered
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::training::EpochMetrics;

    fn run(id: u64, recipe: TrainingRecipe) -> Run {
        Run::new(id, 1.7e12 + id as f64, recipe, ComputePath::Cpu, "CPU".into(), 2)
    }

    fn epoch(epoch: usize, accuracy: f32, seconds: f64, speed: f64) -> EpochMetrics {
        EpochMetrics {
            epoch,
            train_loss: 1.0,
            train_accuracy: 0.5,
            test_loss: 1.2,
            test_accuracy: accuracy,
            train_seconds: seconds,
            images_per_second: speed,
        }
    }

    #[test]
    fn labels_say_what_changed_from_the_run_before() {
        let reference = run(1, TrainingRecipe::default());
        let mut faster = run(2, TrainingRecipe { batch_size: 128, ..TrainingRecipe::default() });
        faster.recipe.optimizer.learning_rate = 3e-3;
        let again = run(3, faster.recipe.clone());
        let mut elsewhere = run(4, TrainingRecipe { augment: crate::data::augment::AugmentRecipe::Crop, ..faster.recipe.clone() });
        elsewhere.compute = ComputePath::WebGpu;
        elsewhere.recipe.optimizer.label_smoothing = 0.1;
        let labels = labels(&[reference, faster, again, elsewhere]);
        assert_eq!(labels[0], "Reference (the notebook's)");
        assert_eq!(labels[1], "batch 256 → 128, lr 1e-3 → 3e-3");
        assert_eq!(labels[2], "same recipe");
        assert_eq!(labels[3], "smoothing 0 → 0.1, augment flip → crop, CPU (wasm), 2 threads → WebGPU");
        let mut odd = run(5, TrainingRecipe { epochs: 3, ..TrainingRecipe::default() });
        assert_eq!(label(None, &odd), "first run");
        odd.resumed = true;
        assert_eq!(label(None, &odd), "resumed, first run");
    }

    #[test]
    fn figures_come_from_the_finished_epochs() {
        let mut record = run(1, TrainingRecipe::default());
        assert_eq!((record.test_accuracy(), record.images_per_second()), (None, None));
        record.history.epochs = vec![epoch(1, 0.4, 10.0, 100.0), epoch(2, 0.5, 30.0, 200.0)];
        assert_eq!(record.test_accuracy(), Some(0.5));
        assert_eq!(record.images_per_second(), Some(175.0), "images over seconds, not a mean of speeds");
        assert_eq!(record.path(), "CPU (wasm), 2 threads");
        assert_eq!(Run { threads: 1, ..record.clone() }.short_path(), "CPU, 1 thread");
    }

    #[test]
    fn the_running_loss_is_thinned_to_a_bound_and_keeps_its_ends() {
        let mut record = run(1, TrainingRecipe::default());
        record.history.steps = (1..=6250).map(|step| StepPoint { step, loss: 1.0 / step as f32 }).collect();
        let stored = record.to_store();
        let steps = &stored.history.steps;
        assert!(steps.len() <= KEPT_STEPS && steps.len() > KEPT_STEPS - 10, "{}", steps.len());
        assert_eq!((steps[0].step, steps[steps.len() - 1].step), (1, 6250));
        assert!(steps.windows(2).all(|pair| pair[0].step < pair[1].step));
        assert_eq!(stored.history.epochs, record.history.epochs);
        let few = [StepPoint { step: 1, loss: 1.0 }, StepPoint { step: 2, loss: 0.5 }];
        assert_eq!(thinned(&few, 10), few);
        let many: Vec<StepPoint> = (1..=1000).map(|step| StepPoint { step, loss: 0.0 }).collect();
        let kept = thinned(&many, 11);
        assert_eq!(kept.iter().map(|point| point.step).collect::<Vec<_>>(), [1, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
    }

    #[test]
    fn the_table_exports_as_csv_with_quoted_text() {
        let mut first = run(1, TrainingRecipe::default());
        first.history.epochs = vec![epoch(1, 0.4567, 10.0, 100.0)];
        first.status = RunStatus::Failed { message: "diverged".into() };
        first.device = "SwiftShader, \"Vulkan\"".into();
        let second = run(2, TrainingRecipe { batch_size: 64, ..TrainingRecipe::default() });
        let csv = to_csv(&[first, second]);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("run,started_ms,label,status,preset,epochs,batch,lr"));
        assert!(lines[1].contains(",failed,tiny,10,256,0.001,0.05,0,0,flip,default,0,"), "{}", lines[1]);
        assert!(lines[1].contains(r#""SwiftShader, ""Vulkan""""#), "quotes are doubled inside quotes: {}", lines[1]);
        assert!(lines[1].contains(",1,0.4567,0.0,100.0,"), "{}", lines[1]);
        assert!(lines[2].contains(",batch 256 → 64,running,"), "{}", lines[2]);
    }

    #[test]
    fn stored_runs_round_trip_and_a_running_run_is_seen_by_who_trains_it() {
        let mut finished = run(1, TrainingRecipe::default());
        finished.status = RunStatus::Finished;
        let running = run(2, TrainingRecipe::default());
        let runs = from_json(&to_json(&[finished.clone(), running.clone()])).unwrap();
        assert_eq!(runs, [finished, running]);
        assert!(from_json("{not json").unwrap_err().starts_with("the stored runs are unreadable"));
        let old: serde_json::Value = serde_json::from_str(&runs[0].to_json()).unwrap();
        assert_eq!((&old["status"]["state"], &old["recipe"]["batch_size"]), (&"finished".into(), &256.into()));
        let mut before_checkpoints = old.clone();
        before_checkpoints.as_object_mut().unwrap().remove("checkpoint_epoch");
        let read: Run = serde_json::from_value(before_checkpoints).unwrap();
        assert_eq!(read.checkpoint_epoch, None, "runs stored before each had a checkpoint still read");

        let trainers = |here, elsewhere: &[u64]| Trainers { here, elsewhere: elsewhere.to_vec() };
        assert_eq!(runs[1].seen(&trainers(Some(2), &[])), Seen::Here);
        assert_eq!(runs[1].seen(&trainers(None, &[2])), Seen::InAnotherTab);
        assert_eq!(runs[1].seen(&trainers(None, &[3])), Seen::Ended(RunStatus::Interrupted), "its tab went away");
        assert_eq!(runs[0].seen(&trainers(None, &[1])), Seen::Ended(RunStatus::Finished));
        assert_eq!(Seen::InAnotherTab.label(), "training in another tab");
        assert_eq!(trainers(Some(2), &[5, 7]).all(), [2, 5, 7]);
        assert_eq!((lock_name(42), locked_run("vit-web-run-42"), locked_run("other")), ("vit-web-run-42".into(), Some(42), None));
    }

    #[test]
    fn ids_follow_the_clock_never_repeat_and_differ_between_tabs() {
        let runs = vec![run(1_700_000_000_000_123, TrainingRecipe::default())];
        assert_eq!(next_id(&runs, 1_700_000_000_500.0, 7), 1_700_000_000_500_007);
        assert_eq!(next_id(&runs, 1_700_000_000_500.0, 1_007), 1_700_000_000_500_007, "the salt stays below a millisecond");
        assert_eq!(next_id(&runs, 1_600_000_000_000.0, 7), 1_700_000_000_000_124, "a clock set back");
        assert_eq!(next_id(&[], 5.0, 1), 5_001);
        assert_ne!(next_id(&[], 5.0, 1), next_id(&[], 5.0, 2), "two tabs in one millisecond");
        assert_eq!((weights_file(42), checkpoint_file(42)), ("run-42.safetensors".into(), "checkpoint-42.vitckpt".into()));
    }

    /// Runs 1..=count, each with weights and a checkpoint, finished.
    fn kept_runs(count: u64) -> Vec<Run> {
        (1..=count)
            .map(|id| Run { weights_kept: true, checkpoint_epoch: Some(1), status: RunStatus::Finished, ..run(id, TrainingRecipe::default()) })
            .collect()
    }

    #[test]
    fn a_change_applies_to_the_table_as_stored_so_no_tab_loses_another_tabs_run() {
        // Tab A knows runs 1 and 2; tab B added run 3 since. A's run 2 finishing keeps run 3.
        let mut stored = kept_runs(1);
        apply(&mut stored, Change::Put(run(2, TrainingRecipe::default())), &[2]);
        apply(&mut stored, Change::Put(run(3, TrainingRecipe { batch_size: 32, ..TrainingRecipe::default() })), &[2, 3]);
        let finished = Run { status: RunStatus::Finished, ..stored[1].clone() };
        apply(&mut stored, Change::Put(finished), &[3]);
        assert_eq!(stored.iter().map(|run| (run.id, run.status.label())).collect::<Vec<_>>(), [(1, "finished"), (2, "finished"), (3, "running")]);
        // A delete in one tab and a finish in another, in either order, keep everything else.
        for delete_first in [true, false] {
            let mut table = stored.clone();
            let changes = [Change::Delete(1), Change::Put(Run { status: RunStatus::Stopped, ..stored[2].clone() })];
            let order: Vec<Change> = if delete_first { changes.to_vec() } else { changes.into_iter().rev().collect() };
            let dropped: Vec<Dropped> = order.into_iter().map(|change| apply(&mut table, change, &[])).collect();
            assert_eq!(table.iter().map(|run| (run.id, run.status.label())).collect::<Vec<_>>(), [(2, "finished"), (3, "stopped")]);
            assert!(dropped.contains(&Dropped { weights: vec![1], checkpoints: vec![1] }), "the deleted run's files go with it");
        }
        // A run added out of order (a slow tab) lands in start order.
        let mut table = kept_runs(2);
        apply(&mut table, Change::Put(run(5, TrainingRecipe::default())), &[]);
        apply(&mut table, Change::Put(run(4, TrainingRecipe::default())), &[]);
        assert_eq!(table.iter().map(|run| run.id).collect::<Vec<_>>(), [1, 2, 4, 5]);
        assert_eq!(apply(&mut table, Change::Delete(99), &[]), Dropped::default());
        assert_eq!(apply(&mut table, Change::DropCheckpoint(2), &[]), Dropped { weights: vec![], checkpoints: vec![2] });
        // Weights written after the run's last record (its end) are marked kept on the stored record.
        let mut ended = vec![Run { status: RunStatus::Finished, ..run(7, TrainingRecipe::default()) }];
        apply(&mut ended, Change::WeightsKept(7), &[]);
        assert_eq!((ended[0].weights_kept, ended[0].status.label()), (true, "finished"));
        assert_eq!((table[1].checkpoint_epoch, table[1].weights_kept), (None, true), "a discarded checkpoint leaves the weights");
    }

    #[test]
    fn only_the_latest_runs_keep_weights_and_checkpoints_unless_a_tab_trains_them() {
        let mut table = kept_runs(5);
        table[3].weights_kept = false;
        // Weights: runs 5, 3 and 2 are the latest three with them; run 1's go. Checkpoints: 5, 4, 3 keep theirs.
        let latest = table[4].clone();
        let dropped = apply(&mut table, Change::Put(latest), &[]);
        assert_eq!(dropped, Dropped { weights: vec![1], checkpoints: vec![2, 1] });
        assert_eq!(table.iter().map(|run| (run.weights_kept, run.checkpoint_epoch.is_some())).collect::<Vec<_>>(), [
            (false, false),
            (true, false),
            (true, true),
            (false, true),
            (true, true)
        ]);
        // A run being trained in some tab keeps its files, however old.
        let mut table = kept_runs(5);
        let latest = table[4].clone();
        let dropped = apply(&mut table, Change::Put(latest), &[1]);
        assert_eq!(dropped, Dropped { weights: vec![2], checkpoints: vec![2] });
        // The table keeps the latest KEPT_RUNS runs, and forgets the files of those it drops.
        let mut table = kept_runs(KEPT_RUNS as u64);
        let dropped = apply(&mut table, Change::Put(run(KEPT_RUNS as u64 + 1, TrainingRecipe::default())), &[]);
        assert_eq!((table.len(), table[0].id), (KEPT_RUNS, 2));
        assert_eq!((dropped.weights[0], dropped.checkpoints[0]), (1, 1));
    }

    #[test]
    fn the_offer_lists_runs_with_checkpoints_this_tabs_own_first() {
        let table = kept_runs(4);
        let ids = |offered: Vec<&Run>| offered.iter().map(|run| run.id).collect::<Vec<_>>();
        assert_eq!(ids(offers(&table, None, &Trainers::default())), [4, 3, 2, 1]);
        assert_eq!(ids(offers(&table, Some(2), &Trainers::default())), [2, 4, 3, 1], "a reloaded tab offers its own run first");
        assert_eq!(ids(offers(&table, Some(9), &Trainers { here: Some(4), elsewhere: vec![3] })), [3, 2, 1], "not the run this tab trains");
        let without = [Run { checkpoint_epoch: None, ..table[0].clone() }];
        assert!(offers(&without, None, &Trainers::default()).is_empty());
    }
}
