//! The training form's text fields to a [`TrainingRecipe`], with a message naming the field for
//! anything that is not a usable value (the page shows it instead of starting).

use super::recipe::{RecipeError, TrainingRecipe};
use super::step::OptimizerRecipe;
use crate::data::augment::AugmentRecipe;

/// The form's fields as the person typed them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecipeForm {
    pub preset: String,
    pub epochs: String,
    pub batch_size: String,
    pub learning_rate: String,
    pub weight_decay: String,
    pub warmup_steps: String,
    pub label_smoothing: String,
    pub augment: String,
    pub seed: String,
}

fn number<T: std::str::FromStr>(field: &'static str, text: &str, what: &str) -> Result<T, RecipeError> {
    text.trim().parse().map_err(|_| RecipeError {
        field,
        problem: if text.trim().is_empty() { format!("is empty; enter {what}") } else { format!("'{}' is not {what}", text.trim()) },
    })
}

impl RecipeForm {
    /// The fields that [`RecipeForm::parse`] reads back as `recipe`.
    pub fn of(recipe: &TrainingRecipe) -> Self {
        let optimizer = &recipe.optimizer;
        RecipeForm {
            preset: recipe.preset.name().into(),
            epochs: recipe.epochs.to_string(),
            batch_size: recipe.batch_size.to_string(),
            learning_rate: optimizer.learning_rate.to_string(),
            weight_decay: optimizer.weight_decay.to_string(),
            warmup_steps: optimizer.warmup_steps.to_string(),
            label_smoothing: optimizer.label_smoothing.to_string(),
            augment: format!("{:?}", recipe.augment),
            seed: recipe.seed.to_string(),
        }
    }

    pub fn parse(&self) -> Result<TrainingRecipe, RecipeError> {
        let recipe = TrainingRecipe {
            preset: self.preset.parse().map_err(|problem| RecipeError { field: "preset", problem })?,
            epochs: number("epochs", &self.epochs, "a whole number")?,
            batch_size: number("batch size", &self.batch_size, "a whole number")?,
            optimizer: OptimizerRecipe {
                learning_rate: number("learning rate", &self.learning_rate, "a number such as 0.001")?,
                weight_decay: number("weight decay", &self.weight_decay, "a number such as 0.05")?,
                warmup_steps: number("warm-up steps", &self.warmup_steps, "a whole number")?,
                label_smoothing: number("label smoothing", &self.label_smoothing, "a number such as 0.1")?,
            },
            augment: match self.augment.as_str() {
                "None" => AugmentRecipe::None,
                "Flip" => AugmentRecipe::Flip,
                "Crop" => AugmentRecipe::Crop,
                "Heavy" => AugmentRecipe::Heavy,
                other => return Err(RecipeError { field: "augmentation", problem: format!("unknown recipe '{other}'") }),
            },
            seed: number("seed", &self.seed, "a whole number")?,
        };
        recipe.validate()?;
        Ok(recipe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference() -> RecipeForm {
        RecipeForm {
            preset: "tiny".into(),
            epochs: "10".into(),
            batch_size: "256".into(),
            learning_rate: "0.001".into(),
            weight_decay: "0.05".into(),
            warmup_steps: "0".into(),
            label_smoothing: "0".into(),
            augment: "Flip".into(),
            seed: "0".into(),
        }
    }

    #[test]
    fn the_default_form_is_the_reference_recipe() {
        assert_eq!(reference().parse().unwrap(), TrainingRecipe::default());
    }

    #[test]
    fn every_named_recipe_survives_the_form() {
        assert_eq!(RecipeForm::of(&TrainingRecipe::default()), reference());
        for named in crate::training::NamedRecipe::ALL {
            let recipe = TrainingRecipe { seed: 7, augment: AugmentRecipe::Crop, ..named.recipe() };
            assert_eq!(RecipeForm::of(&recipe).parse().unwrap(), recipe, "{named:?}");
        }
    }

    #[test]
    fn bad_values_get_messages_not_crashes() {
        let message = |form: RecipeForm| form.parse().unwrap_err().to_string();
        assert_eq!(message(RecipeForm { batch_size: "0".into(), ..reference() }), "batch size: must be between 1 and 4096");
        assert_eq!(
            message(RecipeForm { learning_rate: "-0.001".into(), ..reference() }),
            "learning rate: must be a number above 0 and at most 1"
        );
        assert_eq!(
            message(RecipeForm { learning_rate: "fast".into(), ..reference() }),
            "learning rate: 'fast' is not a number such as 0.001"
        );
        assert_eq!(message(RecipeForm { epochs: " ".into(), ..reference() }), "epochs: is empty; enter a whole number");
        assert_eq!(message(RecipeForm { batch_size: "-5".into(), ..reference() }), "batch size: '-5' is not a whole number");
    }
}
