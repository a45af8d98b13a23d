//! The recipes offered by name, in the page and as `train --recipe`, each with what it reached
//! here. The figures come from `scripts/recipes.sh` (native, seeds 0 and 1) and the page's
//! benchmark; `docs/recipes.md` has every variant's per-epoch table.

use serde::{Deserialize, Serialize};

use super::recipe::TrainingRecipe;
use super::step::OptimizerRecipe;
use crate::data::augment::AugmentRecipe;

/// A recipe with a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NamedRecipe {
    /// The PyTorch notebook's: batch 256, AdamW lr 1e-3, cosine, flip, 10 epochs.
    Reference,
    /// The best test accuracy found for 10 epochs of the same model and images.
    BestInTenEpochs,
    /// The best recipe found for 10 minutes of training in the page on a 2-core machine; its
    /// epochs are refitted to the speed measured in each browser (see [`epochs_within`]).
    TenMinutes,
}

/// The time budget of [`NamedRecipe::TenMinutes`], in seconds.
pub const TEN_MINUTES: f64 = 600.0;

/// How much faster than training a test pass goes through the same images: forward only,
/// where a training step adds a backward pass of about twice the forward's work, and AdamW.
pub const EVALUATION_SPEEDUP: f64 = 3.0;

impl NamedRecipe {
    pub const ALL: [NamedRecipe; 3] = [NamedRecipe::Reference, NamedRecipe::BestInTenEpochs, NamedRecipe::TenMinutes];

    /// The name in URLs, in the page's form and on the command line.
    pub fn key(self) -> &'static str {
        match self {
            NamedRecipe::Reference => "reference",
            NamedRecipe::BestInTenEpochs => "best-10-epochs",
            NamedRecipe::TenMinutes => "10-minutes",
        }
    }

    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|named| named.key() == key)
    }

    /// What the page's menu shows.
    pub fn label(self) -> &'static str {
        match self {
            NamedRecipe::Reference => "Reference (the notebook's)",
            NamedRecipe::BestInTenEpochs => "Best in 10 epochs",
            NamedRecipe::TenMinutes => "10 minutes in this browser",
        }
    }

    /// The recipe itself (for [`NamedRecipe::TenMinutes`], with the epochs that fit the budget
    /// on the machine it was chosen on).
    pub fn recipe(self) -> TrainingRecipe {
        match self {
            NamedRecipe::Reference => TrainingRecipe::default(),
            NamedRecipe::BestInTenEpochs => TrainingRecipe {
                batch_size: 128,
                optimizer: OptimizerRecipe {
                    learning_rate: 1.5e-3,
                    weight_decay: 0.05,
                    warmup_steps: 100,
                    label_smoothing: 0.1,
                },
                augment: AugmentRecipe::Flip,
                ..TrainingRecipe::default()
            },
            NamedRecipe::TenMinutes => TrainingRecipe { epochs: 5, ..NamedRecipe::BestInTenEpochs.recipe() },
        }
    }

    /// What it is and what it reached here, one sentence each.
    pub fn about(self) -> &'static str {
        match self {
            NamedRecipe::Reference => {
                "The PyTorch notebook's recipe: batch 256, AdamW at 1e-3, cosine decay, random flips, 10 epochs. \
                 Here: 59.2 % test accuracy (PyTorch 58.7 %)."
            }
            NamedRecipe::BestInTenEpochs => {
                "Smaller batches for more updates, a higher peak learning rate after a warm-up, and label smoothing. \
                 Here: 61.2 % after 10 epochs."
            }
            NamedRecipe::TenMinutes => {
                "The 10-epoch recipe's settings with as many epochs as this browser trains in 10 minutes, \
                 the learning rate decaying to zero as the time runs out."
            }
        }
    }
}

/// Whole epochs (at least one) of training on `train_images`, each followed by a test pass
/// over `test_images`, that fit `budget_seconds` at a training speed of `images_per_second`.
pub fn epochs_within(budget_seconds: f64, images_per_second: f64, train_images: usize, test_images: usize) -> usize {
    let epoch_seconds = (train_images as f64 + test_images as f64 / EVALUATION_SPEEDUP) / images_per_second.max(1e-9);
    ((budget_seconds / epoch_seconds).floor() as usize).clamp(1, 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_recipe_is_valid_and_found_by_its_key() {
        for named in NamedRecipe::ALL {
            assert!(named.recipe().validate().is_ok(), "{named:?}");
            assert_eq!(NamedRecipe::from_key(named.key()), Some(named));
        }
        assert_eq!(NamedRecipe::from_key("best"), None);
        assert_eq!(NamedRecipe::Reference.recipe(), TrainingRecipe::default());
    }

    #[test]
    fn the_time_budget_recipe_differs_from_the_best_only_in_its_epochs() {
        let (best, budget) = (NamedRecipe::BestInTenEpochs.recipe(), NamedRecipe::TenMinutes.recipe());
        assert_eq!(TrainingRecipe { epochs: best.epochs, ..budget }, best);
    }

    #[test]
    fn epochs_fit_the_budget_with_the_test_passes() {
        // 20,000 training and 10,000 test images at 200 img/s: 100 s + 16.7 s an epoch.
        assert_eq!(epochs_within(600.0, 200.0, 20_000, 10_000), 5);
        assert_eq!(epochs_within(600.0, 240.0, 20_000, 10_000), 6);
        assert_eq!(epochs_within(600.0, 1.0, 20_000, 10_000), 1, "at least one epoch");
        assert_eq!(epochs_within(600.0, 0.0, 20_000, 10_000), 1);
    }
}
