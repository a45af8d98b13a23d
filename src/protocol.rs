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
    /// Train and test on a person's own pictures from now on: planar 32×32 images labelled by
    /// index into `class_names`, split per class with `held_out` of each kept to test on.
    LoadCollection {
        class_names: Vec<String>,
        held_out: f64,
        seed: u64,
        #[serde(with = "serde_bytes")]
        labels: Vec<u8>,
        #[serde(with = "serde_bytes")]
        pixels: Vec<u8>,
    },
    /// Start training; weights to continue from may travel beside the message (when their
    /// classes are not the dataset's, they are fine-tuned with a new head). `probe` is a 32×32
    /// RGBA image whose attention the worker reports as training goes.
    Train {
        /// The page's id of the run, which names its checkpoint (`runs::checkpoint_file`).
        run_id: u64,
        recipe: TrainingRecipe,
        compute: ComputePath,
        #[serde(with = "serde_bytes")]
        probe: Vec<u8>,
    },
    /// Evaluate the weights travelling beside the message on the whole test set.
    Evaluate { compute: ComputePath },
    /// Report the attention of this 32×32 RGBA image from now on, in place of the run's probe.
    SetProbe {
        #[serde(with = "serde_bytes")]
        probe: Vec<u8>,
    },
    /// Continue run `run_id` from its checkpoint.
    ResumeTraining {
        run_id: u64,
        compute: ComputePath,
        #[serde(with = "serde_bytes")]
        probe: Vec<u8>,
    },
    /// Send the weights of run `run_id`'s checkpoint to the page.
    UseCheckpoint { run_id: u64 },
    Pause,
    Resume,
    Stop,
    /// Time `steps` training steps of the fixed model on the fixed batch of `batch` images
    /// (`training::fixed_trainer`), answered step by step with [`WorkerOutput::MeasuredStep`]:
    /// how the page compares its compute paths.
    Measure { compute: ComputePath, batch: usize, steps: usize },
}

/// Where the dataset came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DatasetSource {
    Network,
    Cache,
    Archive,
    /// The person's own pictures.
    Collection,
}

/// A training image to show: planar RGB bytes, `[3, 32, 32]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreviewImage {
    pub label: u8,
    #[serde(with = "serde_bytes")]
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
    /// `threads` is its CPU pool's size (1 for the single-threaded module); `note` says why it
    /// has fewer than the page asked for, when it does.
    WorkerReady { threads: usize, note: Option<String> },
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
        #[serde(with = "serde_bytes")]
        test_labels: Vec<u8>,
        /// Label `i` is `class_names[i]`.
        class_names: Vec<String>,
    },
    DatasetFailed { message: String },
    /// The run asked for is accepted and waits for the loaded weights' evaluation on the test set
    /// to end (minutes on a slow adapter); `TrainingStarted` follows.
    TrainingWaits,
    /// `history` is the run's so far: empty for a new run, the checkpoint's for a resumed one.
    TrainingStarted {
        compute: ComputePath,
        device: String,
        total_steps: usize,
        batches_per_epoch: usize,
        recipe: TrainingRecipe,
        history: MetricsHistory,
    },
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
    /// After an epoch's steps, the results of `done` of the `total` test images are back.
    Evaluating { done: usize, total: usize },
    /// The probe image's prediction and attention with the weights of `step` (in `epoch`).
    Probe { step: usize, epoch: usize, explanation: Explanation },
    /// After each epoch; the model's safetensors bytes (the metric history in their metadata)
    /// travel beside the message. `heap_bytes` is the worker's wasm memory and `gpu_bytes` what
    /// burn's WebGPU memory pools hold (none on the CPU path), to see that both stay flat from
    /// epoch to epoch.
    Epoch { metrics: EpochMetrics, evaluation: TestEvaluation, heap_bytes: u64, gpu_bytes: Option<u64> },
    /// A checkpoint was written after `epoch`.
    CheckpointSaved { epoch: usize, bytes: u64 },
    /// Writing or reading a checkpoint failed; training itself goes on.
    CheckpointFailed { message: String },
    /// The checkpoint's weight file travels beside the message.
    CheckpointWeights,
    /// [`WorkerInput::Evaluate`] has the results of `done` of the `total` test images back
    /// (a report each 2,000). The first one also says that the worker's device exists.
    WeightsEvaluating { done: usize, total: usize },
    /// The answer to [`WorkerInput::Evaluate`].
    Evaluated { evaluation: TestEvaluation },
    EvaluationFailed { message: String },
    Paused,
    Resumed,
    Finished { stopped_early: bool },
    TrainingFailed { message: String },
    /// The worker's WebGPU device was lost (`cause`, in the browser's words): no later WebGPU
    /// work can run in this page. Sent once, before the failure it caused.
    DeviceLost { cause: String },
    /// One step of a [`WorkerInput::Measure`]: its time (the loss read back) and its loss.
    MeasuredStep { step: usize, seconds: f64, loss: f32 },
    MeasureFailed { message: String },
}

/// Float arrays as their little-endian bytes. serde-wasm-bindgen turns a `Vec<f32>` into a JS
/// array built one number at a time, which takes seconds for an attention map; bytes cross as one
/// `Uint8Array` copy.
pub mod float_layers {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_bytes::ByteBuf;

    pub fn serialize<S: Serializer>(layers: &[Vec<f32>], serializer: S) -> Result<S::Ok, S::Error> {
        let bytes: Vec<ByteBuf> = layers
            .iter()
            .map(|layer| ByteBuf::from(layer.iter().flat_map(|value| value.to_le_bytes()).collect::<Vec<u8>>()))
            .collect();
        bytes.serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Vec<f32>>, D::Error> {
        let bytes = Vec::<ByteBuf>::deserialize(deserializer)?;
        bytes
            .into_iter()
            .map(|layer| {
                if layer.len() % 4 != 0 {
                    return Err(serde::de::Error::custom("a float array's byte length is not a multiple of 4"));
                }
                Ok(layer.chunks_exact(4).map(|bytes| f32::from_le_bytes(bytes.try_into().expect("four bytes"))).collect())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_carry_a_kind_tag_and_round_trip() {
        let input = WorkerInput::Train { run_id: 7, recipe: TrainingRecipe::default(), compute: ComputePath::Cpu, probe: vec![0; 4] };
        let json = serde_json::to_value(&input).unwrap();
        assert_eq!(json["kind"], "Train");
        assert_eq!(serde_json::from_value::<WorkerInput>(json).unwrap(), input);

        let explanation = Explanation { probabilities: vec![0.25; 4], attention: vec![vec![0.5, -1.25], vec![3.0, 1e-7]], heads: 1, tokens: 1 };
        let output = WorkerOutput::Probe { step: 3, epoch: 1, explanation };
        let json = serde_json::to_value(&output).unwrap();
        assert_eq!(serde_json::from_value::<WorkerOutput>(json).unwrap(), output, "floats survive as bytes");

        let output = WorkerOutput::DatasetProgress { stage: LoadStage::Download, done: 10, total: Some(20) };
        let json = serde_json::to_string(&output).unwrap();
        assert_eq!(json, r#"{"kind":"DatasetProgress","stage":"download","done":10,"total":20}"#);
    }
}
