use std::sync::Arc;

use burn::module::Module;
use burn::tensor::{Device, ExecutionError, Tensor, TensorData, Transaction};

use super::checkpoint::Checkpoint;
use super::metrics::{EpochMetrics, MetricsHistory, SmoothedLoss, StepPoint, TestEvaluation};
use super::recipe::{RecipeError, TrainingRecipe};
use super::step::{Trainer, evaluate_batch};
use crate::data::augment::AugmentRecipe;
use crate::data::batch::{Batch, EpochShuffler, assemble_batch_into, batch_tensors};
use crate::data::rng::Pcg32;
use crate::data::ImageSet;
use crate::inference::Prediction;
use crate::model::{VisionTransformer, VitConfig};
use crate::ops::cpu::dropout_mask::splitmix64;
use crate::weights::{WeightFileInfo, from_safetensors, inspect_safetensors, to_safetensors_async};

/// Images per evaluation batch: large enough to amortise dispatch, small enough that one
/// layer's attention, `[500, heads, 65, 65]` floats, stays far below WebGPU's 128 MiB binding limit.
const EVALUATION_BATCH: usize = 500;

/// The epoch loop, one call per step, so the caller decides when to yield, pause or stop.
/// All reads from the device are `into_data_async` and happen only every `log_every` steps and at
/// the end of an epoch; natively the caller blocks on the futures, in the browser it awaits them.
pub struct TrainingSession {
    recipe: TrainingRecipe,
    trainer: Trainer,
    /// Shared, not copied: the browser's worker keeps the dataset across runs.
    train: Arc<ImageSet>,
    test: Arc<ImageSet>,
    shuffler: EpochShuffler,
    /// Reseeded at each epoch's start, for its dropout masks.
    device: Device,
    order: Vec<usize>,
    /// 0-based epoch in progress.
    epoch: usize,
    batch_in_epoch: usize,
    augment_rng: Pcg32,
    batch: Batch,
    loss_sum: Option<Tensor<1>>,
    correct_sum: Option<Tensor<1>>,
    images_seen: usize,
    log_every: usize,
    /// What [`TrainingSession::weight_info`] says the run trained on (JSON; empty: unsaid).
    data_json: String,
    /// The head's class names (empty: CIFAR-10's, or numbered) and the model fine-tuned from
    /// (JSON; empty: trained from scratch), for the weight files.
    class_names: Vec<String>,
    base_json: String,
    smoothed: SmoothedLoss,
    history: MetricsHistory,
    /// The model as it was after the last epoch whose losses were finite.
    last_good: VisionTransformer,
    /// The last epoch's test-set evaluation, predictions included.
    last_evaluation: Option<TestEvaluation>,
}

/// What a step did; `loss` is read (and so costs a device round trip) only on logging steps.
#[derive(Debug, Clone, PartialEq)]
pub struct StepReport {
    /// 1-based over the whole run.
    pub step: usize,
    pub total_steps: usize,
    /// 1-based.
    pub epoch: usize,
    pub batch_in_epoch: usize,
    pub batches_per_epoch: usize,
    pub images: usize,
    pub learning_rate: f64,
    /// The smoothed running loss, on logging steps.
    pub smoothed_loss: Option<f32>,
}

/// Why training cannot go on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrainingError {
    #[error("the loss became {value} at epoch {epoch}: training stopped, the weights of the last good epoch are kept")]
    NotFinite { epoch: usize, value: f32 },
    #[error("reading from the device failed: {0}")]
    Readback(String),
    /// burn reported the device poisoned (a driver reset, a crashed GPU process): nothing more
    /// can run on it. Holds the innermost cause, in the browser's or driver's words.
    #[error("{}", crate::compute::device_loss_message(.0))]
    DeviceLost(String),
    #[error("the checkpoint cannot be resumed: {0}")]
    Checkpoint(String),
}

impl TrainingSession {
    /// `model` (fresh, or loaded weights to continue from) must live on an autodiff device.
    pub fn new(
        recipe: TrainingRecipe,
        model: VisionTransformer,
        train: impl Into<Arc<ImageSet>>,
        test: impl Into<Arc<ImageSet>>,
        device: &Device,
    ) -> Result<Self, RecipeError> {
        let (train, test) = (train.into(), test.into());
        recipe.validate()?;
        if train.is_empty() {
            return Err(RecipeError { field: "training set", problem: "holds no images".into() });
        }
        let total_steps = recipe.total_steps(train.len());
        let shuffler = EpochShuffler::new(train.len(), recipe.batch_size, recipe.seed);
        let last_good = model.valid();
        let mut session = Self {
            trainer: Trainer::with_trainable(model, recipe.optimizer.clone(), recipe.trainable, total_steps, device),
            order: Vec::new(),
            epoch: 0,
            batch_in_epoch: 0,
            augment_rng: Pcg32::new(recipe.seed, 0),
            batch: Batch::default(),
            loss_sum: None,
            correct_sum: None,
            images_seen: 0,
            log_every: 10,
            data_json: String::new(),
            class_names: Vec::new(),
            base_json: String::new(),
            smoothed: SmoothedLoss::default(),
            history: MetricsHistory::default(),
            last_good,
            last_evaluation: None,
            recipe,
            train,
            test,
            shuffler,
            device: device.clone(),
        };
        session.start_epoch();
        Ok(session)
    }

    /// Continues a checkpointed run with the next epoch: the same batches, learning rate and, when
    /// the checkpoint holds the trainer's state, the same AdamW moments, so the next step's loss
    /// is the one the saved run would have had. `device` must be an autodiff device.
    pub fn resume(
        checkpoint: &Checkpoint,
        train: impl Into<Arc<ImageSet>>,
        test: impl Into<Arc<ImageSet>>,
        device: &Device,
    ) -> Result<Self, TrainingError> {
        let train: Arc<ImageSet> = train.into();
        let recipe = checkpoint.recipe.clone();
        let total_steps = recipe.total_steps(train.len());
        let problem = |error: String| TrainingError::Checkpoint(error);
        // The weights' own config: a fine-tuned model's head is not its preset's.
        let info = inspect_safetensors(&checkpoint.weights).map_err(|error| problem(error.to_string()))?;
        let config = info.config.clone();
        let trainer = match &checkpoint.trainer {
            Some(state) => Trainer::restore(state, &config, recipe.optimizer.clone(), recipe.trainable, total_steps, device)
                .map_err(|error| problem(format!("{error:?}")))?,
            None => {
                let (model, _) = from_safetensors(&checkpoint.weights, device).map_err(|error| problem(error.to_string()))?;
                if (VitConfig { classes: config.classes, ..recipe.preset.config() }) != config {
                    return Err(problem("its weights are of another architecture than its recipe".into()));
                }
                let mut trainer = Trainer::with_trainable(model, recipe.optimizer.clone(), recipe.trainable, total_steps, device);
                trainer.set_steps_done(checkpoint.step);
                trainer
            }
        };
        let mut session =
            Self::new(recipe, trainer.model().clone(), train, test, device).map_err(|error| problem(error.to_string()))?;
        session.trainer = trainer;
        session.class_names = info.class_names;
        session.base_json = info.base_json;
        session.data_json = info.data_json;
        session.epoch = checkpoint.epochs_done;
        session.history = checkpoint.history.clone();
        session.smoothed = checkpoint.smoothed;
        session.last_good = session.trainer.model().valid();
        session.start_epoch();
        Ok(session)
    }

    /// The run so far, after [`finish_epoch`](Self::finish_epoch): the last good weights as a
    /// weight file and, if `with_trainer_state`, the trainer's full state. That state is read
    /// synchronously, so in the browser pass `false` on WebGPU.
    pub async fn checkpoint(&self, with_trainer_state: bool) -> Result<Checkpoint, TrainingError> {
        let weights = to_safetensors_async(&self.last_good, &self.weight_info())
            .await
            .map_err(|error| TrainingError::Readback(error.to_string()))?;
        let trainer = match with_trainer_state {
            true => Some(self.trainer.state().map_err(|error| TrainingError::Readback(format!("{error:?}")))?),
            false => None,
        };
        Ok(Checkpoint {
            recipe: self.recipe.clone(),
            epochs_done: self.epoch,
            step: self.trainer.steps_done(),
            history: self.history.clone(),
            smoothed: self.smoothed,
            weights,
            trainer,
        })
    }

    /// What a weight file of this run's weights says about them.
    pub fn weight_info(&self) -> WeightFileInfo {
        WeightFileInfo {
            recipe_json: serde_json::to_string(&self.recipe).expect("recipes serialise"),
            epoch: self.history.epochs.last().map_or(0, |epoch| epoch.epoch),
            metrics_json: serde_json::to_string(&self.history).expect("metrics serialise"),
            data_json: self.data_json.clone(),
            base_json: self.base_json.clone(),
            ..self.model_info()
        }
    }

    /// The model's config and class names: its preset's, with the head it has.
    fn model_info(&self) -> WeightFileInfo {
        let config = VitConfig { classes: self.last_good.classes(), ..self.recipe.preset.config() };
        let mut info = WeightFileInfo::new(config, Some(self.recipe.preset));
        if self.class_names.len() == info.config.classes {
            info.class_names = self.class_names.clone();
        }
        info
    }

    /// Names the head's classes in the weight files (a fine-tuning run's own classes).
    pub fn with_class_names(mut self, class_names: Vec<String>) -> Self {
        self.class_names = class_names;
        self
    }

    /// Says in the weight files which model this run fine-tunes (JSON).
    pub fn with_base_description(mut self, base_json: String) -> Self {
        self.base_json = base_json;
        self
    }

    /// Says in the weight files what the run trains and tests on (JSON).
    pub fn with_data_description(mut self, data_json: String) -> Self {
        self.data_json = data_json;
        self
    }

    /// Read the running loss every `steps` steps (default 10).
    pub fn with_log_every(mut self, steps: usize) -> Self {
        self.log_every = steps.max(1);
        self
    }

    /// Each epoch's order, augmentation and dropout masks depend only on (seed, epoch), so a
    /// resumed run sees the same batches and masks as one that went straight through.
    fn start_epoch(&mut self) {
        self.device.seed(splitmix64(self.recipe.seed, self.epoch as u64));
        self.order = self.shuffler.order(self.epoch as u64);
        self.augment_rng = Pcg32::new(self.recipe.seed, 1 + self.epoch as u64);
        self.batch_in_epoch = 0;
        self.loss_sum = None;
        self.correct_sum = None;
        self.images_seen = 0;
    }

    pub fn recipe(&self) -> &TrainingRecipe {
        &self.recipe
    }

    pub fn history(&self) -> &MetricsHistory {
        &self.history
    }

    /// The model being trained (on the autodiff device).
    pub fn model(&self) -> &VisionTransformer {
        self.trainer.model()
    }

    /// The weights after the last epoch that ended with finite losses.
    pub fn last_good_model(&self) -> &VisionTransformer {
        &self.last_good
    }

    /// The test set's evaluation after the last finished epoch.
    pub fn last_evaluation(&self) -> Option<&TestEvaluation> {
        self.last_evaluation.as_ref()
    }

    pub fn test_images(&self) -> usize {
        self.test.len()
    }

    pub fn batches_per_epoch(&self) -> usize {
        self.shuffler.batches_per_epoch()
    }

    pub fn total_steps(&self) -> usize {
        self.recipe.total_steps(self.train.len())
    }

    /// 0-based index of the epoch in progress; equals `recipe.epochs` when done.
    pub fn epoch(&self) -> usize {
        self.epoch
    }

    pub fn epoch_finished(&self) -> bool {
        self.batch_in_epoch >= self.batches_per_epoch()
    }

    pub fn is_done(&self) -> bool {
        self.epoch >= self.recipe.epochs
    }

    /// One optimisation step on the next batch of the epoch.
    ///
    /// # Panics
    /// If the epoch is finished (call [`finish_epoch`](Self::finish_epoch) first).
    pub async fn step(&mut self) -> Result<StepReport, TrainingError> {
        assert!(!self.epoch_finished(), "finish_epoch must run before the next epoch's steps");
        let indices = self
            .shuffler
            .batches(&self.order)
            .nth(self.batch_in_epoch)
            .expect("a batch remains in this epoch");
        let device = self.trainer.model().class_token.val().device();
        assemble_batch_into(&self.train, indices, self.recipe.augment, &mut self.augment_rng, &mut self.batch);
        let images = self.batch.len();
        let (inputs, labels) = batch_tensors(std::mem::take(&mut self.batch), &device);

        let learning_rate = self.trainer.learning_rate();
        let output = self.trainer.step(inputs, labels);
        self.batch_in_epoch += 1;
        self.images_seen += images;
        self.loss_sum = Some(match self.loss_sum.take() {
            Some(sum) => sum + output.loss.clone(),
            None => output.loss.clone(),
        });
        self.correct_sum = Some(match self.correct_sum.take() {
            Some(sum) => sum + output.correct,
            None => output.correct,
        });

        let step = self.trainer.steps_done();
        let smoothed_loss = if step.is_multiple_of(self.log_every) || self.epoch_finished() {
            let loss = read_scalar(output.loss).await?;
            if !loss.is_finite() {
                return Err(TrainingError::NotFinite { epoch: self.epoch + 1, value: loss });
            }
            let smoothed = self.smoothed.update(loss);
            self.history.steps.push(StepPoint { step, loss: smoothed });
            Some(smoothed)
        } else {
            None
        };
        Ok(StepReport {
            step,
            total_steps: self.total_steps(),
            epoch: self.epoch + 1,
            batch_in_epoch: self.batch_in_epoch,
            batches_per_epoch: self.batches_per_epoch(),
            images,
            learning_rate,
            smoothed_loss,
        })
    }

    /// Reads the epoch's train figures, evaluates the whole test set and starts the next epoch.
    /// `train_seconds` is the wall time the caller measured for this epoch's steps.
    pub async fn finish_epoch(&mut self, train_seconds: f64) -> Result<EpochMetrics, TrainingError> {
        self.finish_epoch_with_progress(train_seconds, |_, _| {}).await
    }

    /// [`finish_epoch`](Self::finish_epoch), calling `progress(images evaluated, test images)`
    /// after each batch of the test set.
    pub async fn finish_epoch_with_progress(
        &mut self,
        train_seconds: f64,
        progress: impl FnMut(usize, usize),
    ) -> Result<EpochMetrics, TrainingError> {
        let batches = self.batch_in_epoch.max(1) as f32;
        // Both sums in one round trip; the count is kept in a float (exact below 2²⁴, far more
        // than an epoch's images).
        let (train_loss, train_correct) = match (self.loss_sum.take(), self.correct_sum.take()) {
            (Some(loss), Some(correct)) => {
                let data = Transaction::default().register(loss).register(correct).execute_async().await?;
                (scalar(&data[0])? / batches, scalar(&data[1])?.round() as i64)
            }
            _ => (f32::NAN, 0),
        };
        let epoch = self.epoch + 1;
        if !train_loss.is_finite() {
            return Err(TrainingError::NotFinite { epoch, value: train_loss });
        }
        let model = self.trainer.model().valid();
        let evaluation = evaluate_with_progress(&model, &self.test, progress).await?;
        let (test_loss, test_accuracy) = (evaluation.loss, evaluation.accuracy);
        self.last_evaluation = Some(evaluation);
        if !test_loss.is_finite() {
            return Err(TrainingError::NotFinite { epoch, value: test_loss });
        }
        self.last_good = model;
        let metrics = EpochMetrics {
            epoch,
            train_loss,
            train_accuracy: train_correct as f32 / self.images_seen.max(1) as f32,
            test_loss,
            test_accuracy,
            train_seconds,
            images_per_second: self.images_seen as f64 / train_seconds.max(1e-9),
        };
        self.history.epochs.push(metrics.clone());
        self.epoch += 1;
        self.start_epoch();
        Ok(metrics)
    }
}

/// Mean loss, accuracy and every prediction over `set`, in batches, without gradients or
/// augmentation; a few transactions read them back ([`BATCHES_PER_READBACK`]).
pub async fn evaluate(model: &VisionTransformer, set: &ImageSet) -> Result<TestEvaluation, TrainingError> {
    evaluate_with_progress(model, set, |_, _| {}).await
}

/// [`evaluate`], calling `progress(images evaluated, images)` each time results come back.
pub async fn evaluate_with_progress(
    model: &VisionTransformer,
    set: &ImageSet,
    progress: impl FnMut(usize, usize),
) -> Result<TestEvaluation, TrainingError> {
    evaluate_predicting(model, set, Prediction::Plain, progress).await
}

/// How many evaluation batches are queued before their results come back in one transaction. A
/// GPU runs queued work without waiting, so counting images queued would reach the end long
/// before the work does; counting images read back is honest, and 2,000 images a round trip
/// keeps the test set's round trips to five.
const BATCHES_PER_READBACK: usize = 4;

/// [`evaluate_with_progress`] with the class scores `prediction` makes.
pub async fn evaluate_predicting(
    model: &VisionTransformer,
    set: &ImageSet,
    prediction: Prediction,
    mut progress: impl FnMut(usize, usize),
) -> Result<TestEvaluation, TrainingError> {
    let device = model.class_token.val().device();
    let indices: Vec<usize> = (0..set.len()).collect();
    let mut rng = Pcg32::new(0, 0); // unused by AugmentRecipe::None
    // Each batch's mean loss, correct count and predictions stay on the device until their
    // group's transaction: the sums are the host's, where on the device each would be a launch a
    // batch.
    let (mut loss_sum, mut correct, mut predictions) = (0.0f64, 0.0f64, Vec::with_capacity(set.len()));
    for group in indices.chunks(EVALUATION_BATCH * BATCHES_PER_READBACK) {
        let (mut batch_sizes, mut transaction) = (Vec::new(), Transaction::default());
        for chunk in group.chunks(EVALUATION_BATCH) {
            let batch = crate::data::batch::assemble_batch(set, chunk, AugmentRecipe::None, &mut rng);
            let (images, labels) = batch_tensors(batch, &device);
            let output = evaluate_batch(model, images, labels, prediction);
            transaction = transaction.register(output.loss).register(output.correct).register(output.predictions);
            batch_sizes.push(chunk.len());
        }
        let data = transaction.execute_async().await?;
        for (size, [loss, count, classes]) in batch_sizes.into_iter().zip(data.as_chunks::<3>().0) {
            loss_sum += f64::from(scalar(loss)?) * size as f64;
            correct += f64::from(scalar(count)?);
            let classes = classes.clone().convert::<i64>().try_to_vec::<i64>().map_err(readback_error)?;
            predictions.extend(classes.into_iter().map(|class| class as u8));
        }
        progress(predictions.len(), set.len());
    }
    if predictions.is_empty() {
        return Ok(TestEvaluation { loss: f32::NAN, accuracy: 0.0, predictions: Vec::new() });
    }
    let count = set.len() as f64;
    Ok(TestEvaluation { loss: (loss_sum / count) as f32, accuracy: (correct.round() / count) as f32, predictions })
}

fn scalar(data: &TensorData) -> Result<f32, TrainingError> {
    let values = data.clone().convert::<f32>().try_to_vec::<f32>().map_err(readback_error)?;
    values.first().copied().ok_or_else(|| TrainingError::Readback("an empty scalar".into()))
}

fn readback_error(error: impl std::fmt::Debug) -> TrainingError {
    TrainingError::Readback(format!("{error:?}"))
}

impl From<ExecutionError> for TrainingError {
    fn from(error: ExecutionError) -> Self {
        match error {
            ExecutionError::DevicePoisoned { reason } => TrainingError::DeviceLost(crate::compute::innermost_cause(&reason).to_string()),
            other => TrainingError::Readback(other.to_string()),
        }
    }
}

async fn read_scalar(tensor: Tensor<1>) -> Result<f32, TrainingError> {
    scalar(&tensor.into_data_async().await?)
}
