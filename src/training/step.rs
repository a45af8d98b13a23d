//! One optimisation step of the ViT and the learning-rate schedule. On WebGPU nothing here reads
//! a tensor back: callers decide when to pay for a readback (on wasm it must be
//! `into_data_async`). On the CPU backend, where a readback is a copy, a step of a model with
//! dropout reads its masks' seed.

use std::cell::RefCell;

use burn::module::Module;
use burn::nn::loss::{CrossEntropyLoss, CrossEntropyLossConfig};
use burn::optim::{
    AdamW, AdamWConfig, AdamWState, AdaptiveMomentumState, GradientsAccumulator, GradientsParams, LearningRate, ModuleOptimizer, Optimizer, OptimizerRecord,
    RecordState, StateSink, StateSource,
};
use burn::store::{ModuleRecord, RecordError};
use burn::tensor::{Bytes, Device, Int, Tensor};

use crate::inference::{Prediction, class_scores};
use crate::ops::adamw::{AdamWStep, adamw_update};
use crate::ops::cross_entropy::cross_entropy;
use crate::ops::dropout::{StepMasks, device_seed, with_step_masks};
use super::recipe::{OptimizerRecipe, Trainable};
use crate::model::VisionTransformer;

/// Learning rate at `step` (0-based) of `total`: linear warm-up, then cosine annealing to zero,
/// the same factor as the reference's `LambdaLR`.
pub fn cosine_lr(step: usize, total: usize, base: f64, warmup: usize) -> f64 {
    let warm = ((step + 1) as f64 / warmup.max(1) as f64).min(1.0);
    let progress = step as f64 / total.max(1) as f64;
    base * warm * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos())
}

/// What one step produced, still on the device.
pub struct StepOutput {
    /// Mean loss over the batch, `[1]`.
    pub loss: Tensor<1>,
    /// How many of the batch were classified right, `[1]` (a count, in a float).
    pub correct: Tensor<1>,
}

/// Owns the model and AdamW's state while training.
pub struct Trainer {
    model: Option<VisionTransformer>,
    optimizer: ModuleOptimizer,
    loss: CrossEntropyLoss,
    recipe: OptimizerRecipe,
    total_steps: usize,
    step: usize,
}

thread_local! {
    /// Where restored AdamW state is put; see [`RestorableAdamW`].
    static RESTORE_DEVICE: RefCell<Option<Device>> = const { RefCell::new(None) };
}

/// AdamW, with its restored state placed on the training device, and on a GPU one launch per
/// parameter tensor ([`adamw_update`]) where burn's runs about fifteen. burn's `load_record`
/// builds optimizer state on the default device, which in the browser build is WebGPU: on the
/// wasm CPU path that would start WebGPU synchronously (impossible in a browser) and then need a
/// synchronous GPU readback at the next step. The state and its file layout are AdamW's own, so a
/// checkpoint moves between the paths.
#[derive(Clone)]
struct RestorableAdamW {
    adamw: AdamW,
    weight_decay: f32,
}

/// AdamW's moment decays (burn's and PyTorch's defaults) and ε (PyTorch's default, for parity
/// with the reference).
const BETAS: [f32; 2] = [0.9, 0.999];
const EPSILON: f32 = 1e-8;

#[derive(Clone)]
struct RestorableState<const D: usize>(AdamWState<D>);

impl<const D: usize> RecordState for RestorableState<D> {
    fn state_flatten(&self, prefix: &str, out: &mut StateSink) {
        self.0.state_flatten(prefix, out);
    }

    fn state_unflatten(prefix: &str, src: &mut StateSource, device: &Device) -> Option<Self> {
        let device = RESTORE_DEVICE.with(|restore| restore.borrow().clone()).unwrap_or_else(|| device.clone());
        AdamWState::state_unflatten(prefix, src, &device).map(Self)
    }
}

impl Optimizer for RestorableAdamW {
    type State<const D: usize> = RestorableState<D>;

    fn step<const D: usize>(
        &self,
        lr: LearningRate,
        tensor: Tensor<D>,
        grad: Tensor<D>,
        state: Option<Self::State<D>>,
    ) -> (Tensor<D>, Option<Self::State<D>>) {
        if crate::ops::on_cpu(&tensor) {
            let (tensor, state) = self.adamw.step(lr, tensor, grad, state.map(|state| state.0));
            return (tensor, state.map(RestorableState));
        }
        let (time, moment_1, moment_2) = match state {
            Some(RestorableState(AdamWState { momentum })) => (momentum.time, momentum.moment_1, momentum.moment_2),
            None => (0, grad.zeros_like(), grad.zeros_like()),
        };
        let step = AdamWStep::new(lr, self.weight_decay, BETAS, EPSILON, time + 1);
        let (tensor, moment_1, moment_2) = adamw_update(tensor, grad, moment_1, moment_2, step);
        let momentum = AdaptiveMomentumState { time: time + 1, moment_1, moment_2, max_moment_2: None };
        (tensor, Some(RestorableState(AdamWState { momentum })))
    }

    fn to_device<const D: usize>(state: Self::State<D>, device: &Device) -> Self::State<D> {
        RestorableState(AdamW::to_device(state.0, device))
    }
}

fn adamw(recipe: &OptimizerRecipe) -> ModuleOptimizer {
    let weight_decay = recipe.weight_decay as f32;
    let config = AdamWConfig::new()
        .with_beta_1(BETAS[0])
        .with_beta_2(BETAS[1])
        .with_weight_decay(weight_decay)
        .with_epsilon(EPSILON);
    ModuleOptimizer::from(RestorableAdamW { adamw: config.build(), weight_decay })
}

/// A trainer's whole state in bytes: burn's records of the model (parameter ids included, which
/// key the optimizer's state) and of AdamW's moments, plus the step count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrainerState {
    pub step: usize,
    pub model: Vec<u8>,
    pub optimizer: Vec<u8>,
}

impl Trainer {
    /// `model` must live on an autodiff device (`device.autodiff()`).
    pub fn new(model: VisionTransformer, recipe: OptimizerRecipe, total_steps: usize, device: &Device) -> Self {
        Self::with_trainable(model, recipe, Trainable::Whole, total_steps, device)
    }

    /// [`Trainer::new`], training only what `trainable` says.
    pub fn with_trainable(
        model: VisionTransformer,
        recipe: OptimizerRecipe,
        trainable: Trainable,
        total_steps: usize,
        device: &Device,
    ) -> Self {
        let model = match trainable {
            Trainable::Whole => model,
            Trainable::Head => model.with_only_head_trainable(),
        };
        let optimizer = adamw(&recipe);
        let smoothing = (recipe.label_smoothing > 0.0).then_some(recipe.label_smoothing);
        let loss = CrossEntropyLossConfig::new().with_smoothing(smoothing).init(device);
        Self { model: Some(model), optimizer, loss, recipe, total_steps, step: 0 }
    }

    pub fn model(&self) -> &VisionTransformer {
        self.model.as_ref().expect("the model is only taken out during a step")
    }

    pub fn into_model(mut self) -> VisionTransformer {
        self.model.take().expect("the model is only taken out during a step")
    }

    /// Steps taken so far.
    pub fn steps_done(&self) -> usize {
        self.step
    }

    /// The model and optimizer state, to continue later exactly where this left off. burn reads
    /// records synchronously, so in the browser this works on the CPU path, not on WebGPU.
    pub fn state(&self) -> Result<TrainerState, RecordError> {
        Ok(TrainerState {
            step: self.step,
            model: self.model().clone().into_record().into_bytes()?.to_vec(),
            optimizer: self.optimizer.to_record().into_bytes()?.to_vec(),
        })
    }

    /// A trainer that continues from `state`: the same parameters (and parameter ids), AdamW
    /// moments and step, so the next step is the one the saved trainer would have taken.
    /// `device` must be an autodiff device.
    pub fn restore(
        state: &TrainerState,
        config: &crate::model::VitConfig,
        recipe: OptimizerRecipe,
        trainable: Trainable,
        total_steps: usize,
        device: &Device,
    ) -> Result<Self, RecordError> {
        let record = ModuleRecord::from_bytes(Bytes::from_bytes_vec(state.model.clone()))?;
        let model = config.init(device).try_load_record(record)?;
        let optimizer_record = OptimizerRecord::from_bytes(Bytes::from_bytes_vec(state.optimizer.clone()))?;
        RESTORE_DEVICE.with(|restore| *restore.borrow_mut() = Some(device.clone().inner()));
        let optimizer = adamw(&recipe).load_record(optimizer_record);
        RESTORE_DEVICE.with(|restore| *restore.borrow_mut() = None);
        let mut trainer = Self::with_trainable(model, recipe, trainable, total_steps, device);
        trainer.optimizer = optimizer;
        trainer.step = state.step;
        Ok(trainer)
    }

    /// Continues the learning-rate schedule from `step` (a run resumed without optimizer state).
    pub fn set_steps_done(&mut self, step: usize) {
        self.step = step;
    }

    pub fn learning_rate(&self) -> f64 {
        cosine_lr(self.step, self.total_steps, self.recipe.learning_rate, self.recipe.warmup_steps)
    }

    /// Forward, backward and one AdamW update on a batch. On the CPU backend the batch is split
    /// into one slice per thread ([`batch_slices`]).
    ///
    /// # Shapes
    /// - images: `[batch, channels, height, width]`
    /// - labels: `[batch]`
    pub fn step(&mut self, images: Tensor<4>, labels: Tensor<1, Int>) -> StepOutput {
        let slices = batch_slices(&images);
        self.step_in_slices(images, labels, slices)
    }

    /// [`Trainer::step`] with the batch split into `slices` on the CPU backend (ignored on a GPU):
    /// the same step whatever `slices` is, up to the order floating-point sums are taken in.
    pub fn step_in_slices(&mut self, images: Tensor<4>, labels: Tensor<1, Int>, slices: usize) -> StepOutput {
        let learning_rate = self.learning_rate();
        let model = self.model.take().expect("the model is only taken out during a step");
        let (gradients, output) = if crate::ops::on_cpu(&images) {
            self.gradients_in_slices(&model, images, labels, slices)
        } else {
            self.gradients(&model, images, labels, 1.0)
        };
        self.model = Some(self.optimizer.step(learning_rate, model, gradients));
        self.step += 1;
        output
    }

    /// The gradients of `weight` × the batch's mean loss, and the step's output.
    fn gradients(&self, model: &VisionTransformer, images: Tensor<4>, labels: Tensor<1, Int>, weight: f32) -> (GradientsParams, StepOutput) {
        let logits = model.forward(images); // [batch, classes]
        let (loss, correct) = if crate::ops::on_cpu(&logits) {
            let loss = self.loss.forward(logits.clone(), labels.clone());
            (loss, logits.argmax(1).squeeze_dim::<1>(1).equal(labels).float().sum())
        } else {
            // One launch for the loss and the count, one for the loss's gradient.
            cross_entropy(logits, labels, self.recipe.label_smoothing)
        };
        // The whole batch (every WebGPU step) needs no weighting: no extra kernel or graph node.
        let loss = if weight == 1.0 { loss } else { loss * weight };
        let gradients = GradientsParams::from_grads(loss.backward(), model);
        (gradients, StepOutput { loss: loss.detach(), correct })
    }

    /// [`Trainer::gradients`] of the whole batch, computed as `slices` slices of it in parallel
    /// and summed. Each slice goes through its own copy of the parameters (`fork`: the same
    /// values and ids, another autodiff leaf), so that each builds its own graph and the slices'
    /// backward passes do not take turns with one graph's lock; its dropout masks are the whole
    /// batch's ([`with_step_masks`]).
    fn gradients_in_slices(&self, model: &VisionTransformer, images: Tensor<4>, labels: Tensor<1, Int>, slices: usize) -> (GradientsParams, StepOutput) {
        let device = images.device();
        // Without dropout no mask is drawn, so the step needs no seed (nor its readback).
        let seed = if model.drops_out() { device_seed(&device) } else { 0 };
        if slices <= 1 {
            let masks = StepMasks { seed, first_image: 0 };
            return with_step_masks(masks, || self.gradients(model, images, labels, 1.0));
        }
        let batch = images.dims()[0];
        let image_slices = images.chunk(slices, 0);
        let firsts: Vec<usize> =
            image_slices.iter().scan(0, |first, slice| Some(std::mem::replace(first, *first + slice.dims()[0]))).collect();
        let work = image_slices.into_iter().zip(labels.chunk(slices, 0)).zip(firsts);
        let results = crate::ops::cpu::parallel::map(work, |((images, labels), first_image)| {
            let weight = images.dims()[0] as f32 / batch as f32;
            let replica = model.clone().fork(&device);
            with_step_masks(StepMasks { seed, first_image }, || self.gradients(&replica, images, labels, weight))
        });
        let mut sum = GradientsAccumulator::<VisionTransformer>::new();
        let (mut losses, mut corrects) = (Vec::with_capacity(slices), Vec::with_capacity(slices));
        for (gradients, output) in results {
            sum.accumulate(model, gradients);
            losses.push(output.loss);
            corrects.push(output.correct);
        }
        let output = StepOutput { loss: Tensor::cat(losses, 0).sum(), correct: Tensor::cat(corrects, 0).sum() };
        (sum.grads(), output)
    }
}

/// How many slices a training batch is split into on the CPU backend, each computed on a thread
/// of its own: one per thread while each slice keeps at least [`MIN_SLICE`] images. A step of
/// slices in parallel forks and joins once, where each operation over the whole batch would
/// fork and join the threads again, and its bookkeeping (burn's autodiff, the operations burn
/// runs on one thread) runs on every thread too.
fn batch_slices(images: &Tensor<4>) -> usize {
    crate::ops::cpu::parallel::threads().min(images.dims()[0] / MIN_SLICE).max(1)
}

/// The fewest images a slice of a batch has: fewer would leave each operation too little to
/// fill the vector units.
const MIN_SLICE: usize = 8;

/// What evaluating a batch produced, still on the device.
pub struct EvaluationOutput {
    /// Mean loss over the batch, `[1]`.
    pub loss: Tensor<1>,
    /// How many of the batch were classified right, `[1]` (a count, in a float).
    pub correct: Tensor<1>,
    /// The predicted class of each image, `[batch]`: for the confusion matrix.
    pub predictions: Tensor<1, Int>,
}

/// Loss, correct count and predictions of a batch without gradients, for evaluation.
pub fn evaluate_batch(model: &VisionTransformer, images: Tensor<4>, labels: Tensor<1, Int>, prediction: Prediction) -> EvaluationOutput {
    let model = model.valid();
    let logits = class_scores(&model, images, prediction);
    let predictions = logits.clone().argmax(1).squeeze_dim::<1>(1);
    let (loss, correct) = if crate::ops::on_cpu(&logits) {
        let loss = CrossEntropyLossConfig::new().init(&logits.device()).forward(logits, labels.clone());
        (loss, predictions.clone().equal(labels).float().sum())
    } else {
        cross_entropy(logits, labels, 0.0)
    };
    EvaluationOutput { loss, correct, predictions }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_schedule_starts_at_base_and_ends_near_zero() {
        assert_eq!(cosine_lr(0, 100, 1e-3, 0), 1e-3);
        assert!((cosine_lr(50, 100, 1e-3, 0) - 0.5e-3).abs() < 1e-12);
        assert!(cosine_lr(99, 100, 1e-3, 0) < 1e-6);
        // Warm-up ramps linearly first.
        assert!((cosine_lr(0, 100, 1e-3, 10) - 1e-4).abs() < 1e-6);
    }
}
