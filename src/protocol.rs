//! The typed messages between the page and its training worker. Both sides are this crate, so
//! they share one definition; binary payloads (an archive `File`, weight bytes) travel beside the
//! message as transferable JavaScript objects rather than inside it.

use serde::{Deserialize, Serialize};

use crate::compute::ComputePath;
use crate::inference::Explanation;
use crate::training::{EpochMetrics, MetricsHistory, TestEvaluation, TrainingRecipe};

/// Page → worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum WorkerInput {
    /// Load the prepared dataset served beside the page (from the browser's cache when the
    /// manifest's hash matches what is cached).
    LoadPreparedDataset { manifest_url: String },
    /// Decode the official CIFAR-10 archive; the `File` travels beside the message.
    LoadArchive { name: String },
    /// Start training; weights to continue from may travel beside the message. `probe` is a
    /// 32×32 RGBA image whose attention the worker reports as training goes.
    Train { recipe: TrainingRecipe, compute: ComputePath, probe: Vec<u8> },
    /// Evaluate the weights travelling beside the message on the whole test set.
    Evaluate { compute: ComputePath },
    Pause,
    Resume,
    Stop,
}

/// Where the dataset came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DatasetSource {
    Network,
    Cache,
    Archive,
}

/// A training image to show: planar RGB bytes, `[3, 32, 32]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreviewImage {
    pub label: u8,
    pub pixels: Vec<u8>,
}

/// The stages a dataset load goes through, for the progress bar's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoadStage {
    Download,
    Read,
    Decode,
    Store,
}

/// Worker → page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum WorkerOutput {
    /// The worker's module is loaded and it listens; the page sends nothing before this.
    WorkerReady,
    DatasetProgress { stage: LoadStage, done: u64, total: Option<u64> },
    DatasetReady {
        source: DatasetSource,
        train_images: usize,
        test_images: usize,
        seconds: f64,
        /// A warning that did not stop the load (e.g. the cache could not be written).
        warning: Option<String>,
        preview: Vec<PreviewImage>,
        /// The test images the predictions grid shows, in test-set order from the first.
        test_preview: Vec<PreviewImage>,
        /// Every test image's class, for the confusion matrix.
        test_labels: Vec<u8>,
    },
    DatasetFailed { message: String },
    TrainingStarted { compute: ComputePath, device: String, total_steps: usize, batches_per_epoch: usize },
    Step {
        step: usize,
        total_steps: usize,
        epoch: usize,
        batch_in_epoch: usize,
        batches_per_epoch: usize,
        smoothed_loss: Option<f32>,
        learning_rate: f64,
        images_per_second: f64,
        elapsed_seconds: f64,
    },
    /// The probe image's prediction and attention with the weights of `step`.
    Probe { step: usize, explanation: Explanation },
    /// After each epoch; the model's safetensors bytes travel beside the message.
    Epoch { metrics: EpochMetrics, history: MetricsHistory, evaluation: TestEvaluation },
    /// The answer to [`WorkerInput::Evaluate`].
    Evaluated { evaluation: TestEvaluation },
    EvaluationFailed { message: String },
    Paused,
    Resumed,
    Finished { stopped_early: bool },
    TrainingFailed { message: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_carry_a_kind_tag_and_round_trip() {
        let input = WorkerInput::Train { recipe: TrainingRecipe::default(), compute: ComputePath::Cpu, probe: vec![0; 4] };
        let json = serde_json::to_value(&input).unwrap();
        assert_eq!(json["kind"], "Train");
        assert_eq!(serde_json::from_value::<WorkerInput>(json).unwrap(), input);

        let output = WorkerOutput::DatasetProgress { stage: LoadStage::Download, done: 10, total: Some(20) };
        let json = serde_json::to_string(&output).unwrap();
        assert_eq!(json, r#"{"kind":"DatasetProgress","stage":"download","done":10,"total":20}"#);
    }
}
