//! The recipes offered by name, in the page and as `train --recipe`, each with what it reached
//! here: native runs of `scripts/recipes.sh` and, for the time budget, `BENCH_SECTIONS=minutes
//! node tests/e2e/bench.mjs`; `docs/recipes.md` has every variant's per-epoch table.

use serde::{Deserialize, Serialize};

use super::init::Initialisation;
use super::recipe::TrainingRecipe;
use super::recipe::OptimizerRecipe;
use crate::data::augment::AugmentRecipe;

/// A recipe with a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NamedRecipe {
    /// The PyTorch notebook's: batch 256, AdamW lr 1e-3, cosine, flip, 10 epochs.
    Reference,
    /// The best test accuracy found for 10 epochs of the same model and images.
    BestInTenEpochs,
    /// The best 10-epoch recipe, three times as long and with random crops: for a person who can
    /// leave the tab training for an hour.
    BestInThirtyEpochs,
    /// The best recipe found for 10 minutes of training in the page on a 2-core machine; its
    /// epochs are refitted to the speed measured in each browser (see [`epochs_within`]), whose
    /// measurement runs at this recipe's batch.
    TenMinutes,
}

/// The time budget of [`NamedRecipe::TenMinutes`], in seconds.
pub const TEN_MINUTES: f64 = 600.0;

/// How much faster than training an epoch's end goes through the test images: a forward pass
/// only (a training step adds a backward pass of about twice its work, and AdamW), plus the
/// epoch's checkpoint and the weights sent to the page. In the page here (CPU path, 2 threads,
/// measured at 219 img/s) an epoch took 112.5 s, of which 91 s is training: 10,000 test images
/// in 21 s, 2.1×.
pub const EVALUATION_SPEEDUP: f64 = 2.0;

impl NamedRecipe {
    pub const ALL: [NamedRecipe; 4] =
        [NamedRecipe::Reference, NamedRecipe::BestInTenEpochs, NamedRecipe::BestInThirtyEpochs, NamedRecipe::TenMinutes];

    /// The name in URLs, in the page's form and on the command line.
    pub fn key(self) -> &'static str {
        match self {
            NamedRecipe::Reference => "reference",
            NamedRecipe::BestInTenEpochs => "best-10-epochs",
            NamedRecipe::BestInThirtyEpochs => "best-30-epochs",
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
            NamedRecipe::BestInThirtyEpochs => "Best in 30 epochs (about an hour)",
            NamedRecipe::TenMinutes => "10 minutes in this browser",
        }
    }

    /// The recipe itself (for [`NamedRecipe::TenMinutes`], with the epochs that fit the budget
    /// on the machine it was chosen on).
    pub fn recipe(self) -> TrainingRecipe {
        match self {
            NamedRecipe::Reference => TrainingRecipe::default(),
            NamedRecipe::BestInTenEpochs => TrainingRecipe {
                batch_size: 32,
                optimizer: OptimizerRecipe {
                    learning_rate: 7e-4,
                    weight_decay: 0.1,
                    warmup_steps: 400,
                    label_smoothing: 0.1,
                },
                augment: AugmentRecipe::Flip,
                init: Initialisation::MimeticSineCosine,
                ..TrainingRecipe::default()
            },
            NamedRecipe::BestInThirtyEpochs => {
                TrainingRecipe { epochs: 30, augment: AugmentRecipe::Crop, ..NamedRecipe::BestInTenEpochs.recipe() }
            }
            NamedRecipe::TenMinutes => TrainingRecipe {
                epochs: 5,
                batch_size: 64,
                optimizer: OptimizerRecipe {
                    learning_rate: 1e-3,
                    weight_decay: 0.05,
                    warmup_steps: 200,
                    label_smoothing: 0.1,
                },
                augment: AugmentRecipe::Flip,
                init: Initialisation::MimeticSineCosine,
                ..TrainingRecipe::default()
            },
        }
    }

    /// What it is and what it reached here, one sentence each.
    pub fn about(self) -> &'static str {
        match self {
            NamedRecipe::Reference => {
                "The PyTorch notebook's: batch 256 (79 updates an epoch), AdamW at 1e-3, cosine decay, random flips, \
                 10 epochs. Here: 59.2 % test accuracy (PyTorch: 58.7 %)."
            }
            NamedRecipe::BestInTenEpochs => {
                "Attention started as trained ViTs' looks (mimetic initialisation) and positions as 2-D sines and \
                 cosines, then batch 32 (625 updates an epoch), AdamW at 7e-4 after 400 warm-up steps, weight decay 0.1, \
                 label smoothing 0.1, random flips, 10 epochs: the best of 17 tried here, 65.4 and 65.0 % test accuracy \
                 with two seeds. In a browser batch 32 trains about 10 % slower per image than 64."
            }
            NamedRecipe::BestInThirtyEpochs => {
                "The best 10-epoch recipe run for 30 epochs, with random crops (4 pixels of padding) as well as flips, \
                 which keep it from memorising the 20,000 images: 72.1 % test accuracy natively (72.8 % averaged with the \
                 mirror image), against 66.3 % for 30 epochs with flips alone. About an hour in a browser training at \
                 200 images/s. Run for 100 epochs it reaches 74.65 %: the weights the page opens with."
            }
            NamedRecipe::TenMinutes => {
                "Started as the best 10-epoch recipe is (mimetic attention, sine-cosine positions), then batch 64, \
                 AdamW at 1e-3 after 200 warm-up steps, label smoothing 0.1, random flips, and as many epochs as this \
                 browser trains in 10 minutes, the learning rate reaching zero as they end. On a 2-core virtual \
                 machine's CPU path training at 86 images/s: 2 epochs in 8.5 minutes, 55.6 % test accuracy (5 epochs \
                 reach 61.4 % natively)."
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
    fn the_named_recipes_differ_and_the_best_ones_take_more_steps_than_the_reference() {
        let recipes = NamedRecipe::ALL.map(NamedRecipe::recipe);
        for (index, recipe) in recipes.iter().enumerate() {
            assert!(recipes[..index].iter().all(|other| other != recipe), "{:?} repeats another", NamedRecipe::ALL[index]);
        }
        let steps = |recipe: &TrainingRecipe| recipe.steps_per_epoch(20_000);
        assert!(recipes[1..].iter().all(|recipe| steps(recipe) > steps(&recipes[0])));
    }

    #[test]
    fn epochs_fit_the_budget_with_the_test_passes() {
        // 20,000 training and 10,000 test images at 200 img/s: 100 s + 25 s an epoch.
        assert_eq!(epochs_within(600.0, 200.0, 20_000, 10_000), 4);
        assert_eq!(epochs_within(600.0, 219.0, 20_000, 10_000), 5, "a Zen 5 machine's page, 9.4 minutes");
        assert_eq!(epochs_within(600.0, 86.0, 20_000, 10_000), 2, "an Intel Xeon machine's page, 8.5 minutes");
        assert_eq!(epochs_within(600.0, 250.0, 20_000, 10_000), 6);
        assert_eq!(epochs_within(600.0, 1.0, 20_000, 10_000), 1, "at least one epoch");
        assert_eq!(epochs_within(600.0, 0.0, 20_000, 10_000), 1);
    }
}
