use serde::{Deserialize, Serialize};

use super::init::Initialisation;
use crate::data::augment::AugmentRecipe;
use crate::model::Preset;

/// Everything that decides a training run. `Default` is the reference recipe: tiny preset,
/// 10 epochs, batch 256, AdamW (lr 1e-3, weight decay 0.05), cosine annealing, flip, seed 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrainingRecipe {
    pub preset: Preset,
    pub epochs: usize,
    pub batch_size: usize,
    pub optimizer: OptimizerRecipe,
    pub augment: AugmentRecipe,
    pub seed: u64,
    /// Which parameters learn: all of them, or (fine-tuning as a linear probe) the head alone.
    pub trainable: Trainable,
    /// How a fresh model's weights start (a run from given weights keeps those).
    pub init: Initialisation,
}

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

/// Which parameters a run trains.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Trainable {
    /// Every parameter: training from scratch, or fine-tuning the whole model.
    #[default]
    Whole,
    /// The head alone, on a frozen model: a linear probe, fast, and it cannot forget what the
    /// model already knows.
    Head,
}

impl Trainable {
    pub fn name(self) -> &'static str {
        match self {
            Trainable::Whole => "whole",
            Trainable::Head => "head",
        }
    }
}

impl Default for TrainingRecipe {
    fn default() -> Self {
        Self {
            preset: Preset::Tiny,
            epochs: 10,
            batch_size: 256,
            optimizer: OptimizerRecipe::default(),
            augment: AugmentRecipe::Flip,
            seed: 0,
            trainable: Trainable::Whole,
            init: Initialisation::Default,
        }
    }
}

/// A recipe value a person can correct; the message names the field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct RecipeError {
    pub field: &'static str,
    pub problem: String,
}

impl TrainingRecipe {
    /// Refuses values that would crash or silently do nothing.
    pub fn validate(&self) -> Result<(), RecipeError> {
        let fail = |field, problem: &str| Err(RecipeError { field, problem: problem.into() });
        if self.epochs == 0 || self.epochs > 1000 {
            return fail("epochs", "must be between 1 and 1000");
        }
        if self.batch_size == 0 || self.batch_size > 4096 {
            return fail("batch size", "must be between 1 and 4096");
        }
        let optimizer = &self.optimizer;
        if !optimizer.learning_rate.is_finite() || optimizer.learning_rate <= 0.0 || optimizer.learning_rate > 1.0 {
            return fail("learning rate", "must be a number above 0 and at most 1");
        }
        if !optimizer.weight_decay.is_finite() || !(0.0..=1.0).contains(&optimizer.weight_decay) {
            return fail("weight decay", "must be a number from 0 to 1");
        }
        if !(0.0..1.0).contains(&optimizer.label_smoothing) {
            return fail("label smoothing", "must be at least 0 and below 1");
        }
        Ok(())
    }

    /// What fine-tuning on a person's few dozen pictures a class starts from: small batches (a
    /// few updates an epoch even for 50 pictures), 15 epochs, flips; the head alone learns fast at
    /// 3e-3, while the whole model moves at 1e-4 so as not to forget what CIFAR-10 taught it.
    pub fn fine_tune(trainable: Trainable) -> Self {
        let learning_rate = match trainable {
            Trainable::Head => 3e-3,
            Trainable::Whole => 1e-4,
        };
        Self {
            epochs: 15,
            batch_size: 16,
            optimizer: OptimizerRecipe { learning_rate, weight_decay: 0.05, warmup_steps: 0, label_smoothing: 0.0 },
            trainable,
            ..Self::default()
        }
    }

    pub fn steps_per_epoch(&self, train_images: usize) -> usize {
        train_images.div_ceil(self.batch_size.max(1))
    }

    pub fn total_steps(&self, train_images: usize) -> usize {
        self.epochs * self.steps_per_epoch(train_images)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_the_reference_recipe_and_valid() {
        let recipe = TrainingRecipe::default();
        assert_eq!((recipe.epochs, recipe.batch_size), (10, 256));
        assert_eq!(recipe.optimizer.learning_rate, 1e-3);
        assert_eq!(recipe.optimizer.weight_decay, 0.05);
        assert_eq!(recipe.total_steps(20_000), 790);
        assert!(recipe.validate().is_ok());
    }

    #[test]
    fn bad_values_are_refused_with_the_field_named() {
        let bad = |recipe: TrainingRecipe| recipe.validate().unwrap_err().field;
        assert_eq!(bad(TrainingRecipe { batch_size: 0, ..Default::default() }), "batch size");
        let with_lr = |learning_rate| TrainingRecipe {
            optimizer: OptimizerRecipe { learning_rate, ..Default::default() },
            ..Default::default()
        };
        assert_eq!(bad(with_lr(-1e-3)), "learning rate");
        assert_eq!(bad(with_lr(f64::NAN)), "learning rate");
        assert_eq!(bad(TrainingRecipe { epochs: 0, ..Default::default() }), "epochs");
    }

    #[test]
    fn partial_recipes_fill_in_the_reference_values() {
        let recipe: TrainingRecipe = serde_json::from_str(r#"{"epochs": 3}"#).unwrap();
        assert_eq!(recipe, TrainingRecipe { epochs: 3, ..Default::default() });
    }
}
