//! Argument groups shared by the native commands. Defaults come from the library's own
//! (`TrainingRecipe::default()` is the reference recipe), so `--help` shows what a run without
//! flags does.

use std::path::PathBuf;

use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};

use crate::compute::NativeBackend;
use crate::data::augment::AugmentRecipe;
use crate::data::subset::SubsetRule;
use crate::model::Preset;
use crate::training::{Initialisation, NamedRecipe, Trainable, TrainingRecipe};

/// CIFAR-10's binary archive.
#[derive(Debug, Clone, Args)]
pub struct ArchiveArg {
    /// CIFAR-10's binary archive, cifar-10-binary.tar.gz as published
    #[arg(long, env = "CIFAR10_ARCHIVE", value_name = "PATH")]
    pub archive: Option<PathBuf>,
}

/// The compute backend of `train` and `bench`.
#[derive(Debug, Clone, Args)]
pub struct BackendArg {
    /// burn's CPU backend, or the machine's GPU through wgpu (a build with `--features wgpu`)
    #[arg(long, value_enum, default_value_t = NativeBackend::Flex)]
    pub backend: NativeBackend,
}

/// A training recipe: a named one, with any of its values changed by the flags below (`train`
/// takes the batch size on its own, `bench` a list of them).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Recipe")]
pub struct RecipeArgs {
    /// The recipe to start from; the flags below change single values of it [reference; for
    /// --image-folder, the fine-tuning recipe]
    #[arg(long, value_enum)]
    pub recipe: Option<NamedRecipe>,
    /// Model size [the recipe's: tiny]
    #[arg(long, value_enum)]
    pub preset: Option<Preset>,
    /// Epochs; the cosine learning-rate schedule spans all of them [the recipe's]
    #[arg(long)]
    pub epochs: Option<usize>,
    /// AdamW's peak learning rate [the recipe's]
    #[arg(long = "lr", value_name = "RATE", allow_negative_numbers = true)]
    pub learning_rate: Option<f64>,
    /// AdamW's decoupled weight decay [the recipe's]
    #[arg(long, value_name = "FACTOR", allow_negative_numbers = true)]
    pub weight_decay: Option<f64>,
    /// Steps of linear warm-up before the cosine decay [the recipe's]
    #[arg(long, value_name = "STEPS")]
    pub warmup: Option<usize>,
    /// Label smoothing of the cross-entropy loss [the recipe's]
    #[arg(long, value_name = "FRACTION", allow_negative_numbers = true)]
    pub label_smoothing: Option<f32>,
    /// Training-time augmentation [the recipe's]
    #[arg(long, value_enum)]
    pub augment: Option<AugmentRecipe>,
    /// How a fresh model's weights start [the recipe's]
    #[arg(long, value_enum)]
    pub init: Option<Initialisation>,
    /// Seeds the weights, the subset, the order and the augmentation
    #[arg(long, default_value_t = TrainingRecipe::default().seed)]
    pub seed: u64,
}

impl RecipeArgs {
    /// The named recipe with the flags' values (and `batch_size`, where given), or a message that
    /// names the flag and the value it refuses.
    pub fn recipe(&self, batch_size: Option<usize>) -> Result<TrainingRecipe, String> {
        self.recipe_from(TrainingRecipe::default(), batch_size)
    }

    /// [`recipe`](Self::recipe), starting from `base` unless a recipe is named.
    pub fn recipe_from(&self, base: TrainingRecipe, batch_size: Option<usize>) -> Result<TrainingRecipe, String> {
        let mut recipe = self.recipe.map_or(base, NamedRecipe::recipe);
        let optimizer = &mut recipe.optimizer;
        optimizer.learning_rate = self.learning_rate.unwrap_or(optimizer.learning_rate);
        optimizer.weight_decay = self.weight_decay.unwrap_or(optimizer.weight_decay);
        optimizer.warmup_steps = self.warmup.unwrap_or(optimizer.warmup_steps);
        optimizer.label_smoothing = self.label_smoothing.unwrap_or(optimizer.label_smoothing);
        recipe.preset = self.preset.unwrap_or(recipe.preset);
        recipe.epochs = self.epochs.unwrap_or(recipe.epochs);
        recipe.batch_size = batch_size.unwrap_or(recipe.batch_size);
        recipe.augment = self.augment.unwrap_or(recipe.augment);
        recipe.init = self.init.unwrap_or(recipe.init);
        recipe.seed = self.seed;
        recipe.validate().map_err(|error| {
            let optimizer = &recipe.optimizer;
            let (flag, value) = match error.field {
                "epochs" => ("--epochs", recipe.epochs.to_string()),
                "batch size" => ("--batch", recipe.batch_size.to_string()),
                "learning rate" => ("--lr", optimizer.learning_rate.to_string()),
                "weight decay" => ("--weight-decay", optimizer.weight_decay.to_string()),
                "label smoothing" => ("--label-smoothing", optimizer.label_smoothing.to_string()),
                other => (other, String::new()),
            };
            format!("invalid value '{value}' for '{flag}': {}", error.problem)
        })?;
        Ok(recipe)
    }
}

/// Which training images a run takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SubsetArg {
    /// The first N records of the training batches, as the reference does
    First,
    /// N/10 of each class, drawn with the seed
    Balanced,
}

impl SubsetArg {
    pub fn rule(self, images: usize, seed: u64) -> SubsetRule {
        match self {
            SubsetArg::First => SubsetRule::First(images),
            SubsetArg::Balanced => SubsetRule::Balanced { per_class: images / 10, seed },
        }
    }
}

impl ValueEnum for Preset {
    fn value_variants<'a>() -> &'a [Self] {
        &Preset::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self {
            Preset::Tiny => "ViT-Tiny, the reference: 546,186 parameters",
            Preset::Small => "D=256, 6 layers, 8 heads, dropout 0.1: 3,195,146 parameters",
        };
        Some(PossibleValue::new(self.name()).help(help))
    }
}

impl ValueEnum for AugmentRecipe {
    fn value_variants<'a>() -> &'a [Self] {
        &[AugmentRecipe::Flip, AugmentRecipe::Crop, AugmentRecipe::Heavy, AugmentRecipe::None]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            AugmentRecipe::None => PossibleValue::new("none").help("the images as stored"),
            AugmentRecipe::Flip => PossibleValue::new("flip").help("random horizontal flip, the reference's"),
            AugmentRecipe::Crop => PossibleValue::new("crop").help("random crop with 4 pixels of padding, and flip"),
            AugmentRecipe::Heavy => {
                PossibleValue::new("heavy").help("random resized crop, flip, rotation, colour jitter, erasing")
            }
        })
    }
}

impl ValueEnum for Trainable {
    fn value_variants<'a>() -> &'a [Self] {
        &[Trainable::Head, Trainable::Whole]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            Trainable::Head => PossibleValue::new(self.name()).help("the new head alone, on the frozen model: a linear probe, fast"),
            Trainable::Whole => PossibleValue::new(self.name()).help("every weight, from the base model's"),
        })
    }
}

impl ValueEnum for Initialisation {
    fn value_variants<'a>() -> &'a [Self] {
        &Initialisation::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            Initialisation::Default => PossibleValue::new(self.name()).help("burn's (PyTorch's distributions), the reference's"),
            Initialisation::Mimetic => {
                PossibleValue::new(self.name()).help("attention started as trained ViTs' looks (Trockman & Kolter, 2023)")
            }
            Initialisation::SineCosine => {
                PossibleValue::new(self.name()).help("positions started as 2-D sines and cosines of row and column (MAE's)")
            }
            Initialisation::MimeticSineCosine => PossibleValue::new(self.name()).help("both of the above"),
        })
    }
}

impl ValueEnum for NamedRecipe {
    fn value_variants<'a>() -> &'a [Self] {
        &NamedRecipe::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.key()).help(self.label()))
    }
}

impl ValueEnum for NativeBackend {
    fn value_variants<'a>() -> &'a [Self] {
        &[NativeBackend::Flex, NativeBackend::Wgpu]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            NativeBackend::Flex => PossibleValue::new(self.name()).alias("cpu").help("burn's CPU backend"),
            NativeBackend::Wgpu => PossibleValue::new(self.name()).help("Vulkan, Metal or DX12"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Command {
        #[command(flatten)]
        recipe: RecipeArgs,
    }

    fn parse(arguments: &[&str]) -> Result<Command, clap::Error> {
        Command::try_parse_from(std::iter::once("command").chain(arguments.iter().copied()))
    }

    #[test]
    fn no_flags_give_the_reference_recipe() {
        let command = parse(&[]).unwrap();
        assert_eq!(command.recipe.recipe(None).unwrap(), TrainingRecipe::default());
    }

    #[test]
    fn a_named_recipe_takes_single_values_from_flags() {
        let command = parse(&["--recipe", "best-10-epochs", "--epochs", "30", "--seed", "1"]).unwrap();
        let best = NamedRecipe::BestInTenEpochs.recipe();
        assert_eq!(command.recipe.recipe(None).unwrap(), TrainingRecipe { epochs: 30, seed: 1, ..best.clone() });
        assert_eq!(command.recipe.recipe(Some(64)).unwrap().batch_size, 64);
    }

    #[test]
    fn flags_set_their_fields() {
        let command = parse(&["--lr", "1.5e-3", "--warmup", "100", "--label-smoothing", "0.1", "--augment", "heavy"]).unwrap();
        let recipe = command.recipe.recipe(Some(128)).unwrap();
        assert_eq!((recipe.batch_size, recipe.optimizer.learning_rate, recipe.optimizer.warmup_steps), (128, 1.5e-3, 100));
        assert_eq!((recipe.optimizer.label_smoothing, recipe.augment), (0.1, AugmentRecipe::Heavy));
    }

    #[test]
    fn bad_values_are_named() {
        let unparsable = parse(&["--epochs", "ten"]).err().unwrap().to_string();
        assert!(unparsable.contains("'ten'") && unparsable.contains("--epochs"), "{unparsable}");
        let unknown = parse(&["--augment", "mixup"]).err().unwrap().to_string();
        assert!(unknown.contains("'mixup'") && unknown.contains("flip"), "{unknown}");
        let out_of_range = parse(&["--lr", "-1"]).unwrap().recipe.recipe(None).unwrap_err();
        assert_eq!(out_of_range, "invalid value '-1' for '--lr': must be a number above 0 and at most 1");
    }
}
