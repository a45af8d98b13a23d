//! One optimisation step of the ViT and the learning-rate schedule. Nothing here reads a tensor
//! back: callers decide when to pay for a readback (on wasm it must be `into_data_async`).

use burn::module::Module;
use burn::nn::loss::{CrossEntropyLoss, CrossEntropyLossConfig};
use burn::optim::{AdamWConfig, GradientsParams, ModuleOptimizer};
use burn::tensor::{Device, Int, Tensor};
use serde::{Deserialize, Serialize};

use crate::model::VisionTransformer;

/// The optimiser's recipe. Defaults are the reference: AdamW, lr 1e-3, weight decay 0.05,
/// cosine annealing over all steps, no warm-up, no label smoothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptimizerRecipe {
    pub learning_rate: f64,
    pub weight_decay: f64,
    pub warmup_steps: usize,
    pub label_smoothing: f32,
}

impl Default for OptimizerRecipe {
    fn default() -> Self {
        Self { learning_rate: 1e-3, weight_decay: 0.05, warmup_steps: 0, label_smoothing: 0.0 }
    }
}

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
    /// How many of the batch were classified right, `[1]`.
    pub correct: Tensor<1, Int>,
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

impl Trainer {
    /// `model` must live on an autodiff device (`device.autodiff()`).
    pub fn new(model: VisionTransformer, recipe: OptimizerRecipe, total_steps: usize, device: &Device) -> Self {
        let optimizer = AdamWConfig::new()
            .with_weight_decay(recipe.weight_decay as f32)
            .with_epsilon(1e-8) // PyTorch's default, for parity with the reference
            .init();
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

    pub fn learning_rate(&self) -> f64 {
        cosine_lr(self.step, self.total_steps, self.recipe.learning_rate, self.recipe.warmup_steps)
    }

    /// Forward, backward and one AdamW update on a batch.
    ///
    /// # Shapes
    /// - images: `[batch, channels, height, width]`
    /// - labels: `[batch]`
    pub fn step(&mut self, images: Tensor<4>, labels: Tensor<1, Int>) -> StepOutput {
        let learning_rate = self.learning_rate();
        let model = self.model.take().expect("the model is only taken out during a step");
        let logits = model.forward(images); // [batch, classes]
        let loss = self.loss.forward(logits.clone(), labels.clone());
        let correct = logits.argmax(1).squeeze_dim::<1>(1).equal(labels).int().sum();

        let gradients = GradientsParams::from_grads(loss.backward(), &model);
        self.model = Some(self.optimizer.step(learning_rate, model, gradients));
        self.step += 1;
        StepOutput { loss: loss.detach(), correct }
    }
}

/// What evaluating a batch produced, still on the device.
pub struct EvaluationOutput {
    /// Mean loss over the batch, `[1]`.
    pub loss: Tensor<1>,
    /// How many of the batch were classified right, `[1]`.
    pub correct: Tensor<1, Int>,
    /// The predicted class of each image, `[batch]`: for the confusion matrix.
    pub predictions: Tensor<1, Int>,
}

/// Loss, correct count and predictions of a batch without gradients, for evaluation.
pub fn evaluate_batch(model: &VisionTransformer, images: Tensor<4>, labels: Tensor<1, Int>) -> EvaluationOutput {
    let model = model.valid();
    let logits = model.forward(images);
    let loss = CrossEntropyLossConfig::new().init(&logits.device()).forward(logits.clone(), labels.clone());
    let predictions = logits.argmax(1).squeeze_dim::<1>(1);
    let correct = predictions.clone().equal(labels).int().sum();
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
