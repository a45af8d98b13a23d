//! The training form's text fields to a [`TrainingRecipe`], with a message naming the field for
//! anything that is not a usable value (the page shows it instead of starting), and the same
//! fields in a link's query (`?lr=3e-3&batch=128`), so that a link opens the page with a recipe.

use super::init::Initialisation;
use super::recipe::{OptimizerRecipe, RecipeError, Trainable, TrainingRecipe};
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
    /// What learns: `whole` or `head` ([`Trainable::name`]).
    pub trainable: String,
    /// How the weights start: `default` or `mimetic` ([`Initialisation::name`]).
    pub init: String,
}

/// The augmentation recipes as the form's menu spells them.
const AUGMENTS: [&str; 4] = ["None", "Flip", "Crop", "Heavy"];

fn number<T: std::str::FromStr>(field: &'static str, text: &str, what: &str) -> Result<T, RecipeError> {
    text.trim().parse().map_err(|_| RecipeError {
        field,
        problem: if text.trim().is_empty() { format!("is empty; enter {what}") } else { format!("'{}' is not {what}", text.trim()) },
    })
}

impl RecipeForm {
    /// The fields' names: the form's inputs and a link's query keys alike.
    pub const FIELDS: [&str; 11] = ["preset", "epochs", "batch", "lr", "wd", "warmup", "smoothing", "augment", "init", "seed", "train"];

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
            trainable: recipe.trainable.name().into(),
            init: recipe.init.name().into(),
        }
    }

    /// The field called `name` (one of [`RecipeForm::FIELDS`]).
    pub fn field(&self, name: &str) -> Option<&String> {
        Some(match name {
            "preset" => &self.preset,
            "epochs" => &self.epochs,
            "batch" => &self.batch_size,
            "lr" => &self.learning_rate,
            "wd" => &self.weight_decay,
            "warmup" => &self.warmup_steps,
            "smoothing" => &self.label_smoothing,
            "augment" => &self.augment,
            "seed" => &self.seed,
            "train" => &self.trainable,
            "init" => &self.init,
            _ => return None,
        })
    }

    fn field_mut(&mut self, name: &str) -> Option<&mut String> {
        Some(match name {
            "preset" => &mut self.preset,
            "epochs" => &mut self.epochs,
            "batch" => &mut self.batch_size,
            "lr" => &mut self.learning_rate,
            "wd" => &mut self.weight_decay,
            "warmup" => &mut self.warmup_steps,
            "smoothing" => &mut self.label_smoothing,
            "augment" => &mut self.augment,
            "seed" => &mut self.seed,
            "train" => &mut self.trainable,
            "init" => &mut self.init,
            _ => return None,
        })
    }

    /// Sets the field called `name` to `value`, as typed: [`RecipeForm::parse`] judges it. An
    /// augmentation in any letter case takes the menu's spelling. False for a name no field has.
    pub fn set(&mut self, name: &str, value: &str) -> bool {
        let value = match name {
            "augment" => AUGMENTS.iter().find(|known| known.eq_ignore_ascii_case(value.trim())).map_or(value, |known| known),
            _ => value,
        };
        match self.field_mut(name) {
            Some(field) => {
                *field = value.to_string();
                true
            }
            None => false,
        }
    }

    /// The fields a link's query gives, on top of `self`, and whether it gave any.
    pub fn with_query<'a>(mut self, pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> (Self, bool) {
        let mut any = false;
        for (name, value) in pairs {
            any |= self.set(name, value);
        }
        (self, any)
    }

    /// Every field as a link's query pairs, in [`RecipeForm::FIELDS`]' order (augmentation in lower case).
    pub fn query(&self) -> Vec<(&'static str, String)> {
        Self::FIELDS
            .iter()
            .map(|&name| {
                let value = self.field(name).expect("every listed field exists");
                (name, if name == "augment" { value.to_lowercase() } else { value.clone() })
            })
            .collect()
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
            trainable: match self.trainable.trim() {
                "whole" | "" => Trainable::Whole,
                "head" => Trainable::Head,
                other => return Err(RecipeError { field: "train", problem: format!("'{other}' is neither 'whole' nor 'head'") }),
            },
            init: Initialisation::from_name(&self.init).ok_or_else(|| RecipeError {
                field: "initialisation",
                problem: format!("'{}' is not 'default', 'mimetic', 'sincos' or 'mimetic-sincos'", self.init.trim()),
            })?,
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
            trainable: "whole".into(),
            init: "default".into(),
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
            let recipe = TrainingRecipe { seed: 7, augment: AugmentRecipe::Crop, init: Initialisation::Mimetic, ..named.recipe() };
            assert_eq!(RecipeForm::of(&recipe).parse().unwrap(), recipe, "{named:?}");
        }
        for trainable in [Trainable::Head, Trainable::Whole] {
            let recipe = TrainingRecipe::fine_tune(trainable);
            assert_eq!(RecipeForm::of(&recipe).parse().unwrap(), recipe, "{trainable:?}");
        }
    }

    #[test]
    fn a_query_round_trips_and_sets_only_what_it_names() {
        let best = RecipeForm::of(&crate::training::NamedRecipe::BestInTenEpochs.recipe());
        let query = best.query();
        assert_eq!(query.iter().map(|(name, _)| *name).collect::<Vec<_>>(), RecipeForm::FIELDS);
        assert!(query.contains(&("augment", "flip".into())));
        let pairs: Vec<(&str, &str)> = query.iter().map(|(name, value)| (*name, value.as_str())).collect();
        assert_eq!(reference().with_query(pairs), (best, true));

        let (form, any) = reference().with_query([("lr", "3e-3"), ("batch", "128"), ("augment", "HEAVY"), ("compute", "cpu")]);
        assert!(any);
        assert_eq!(form, RecipeForm { learning_rate: "3e-3".into(), batch_size: "128".into(), augment: "Heavy".into(), ..reference() });
        assert_eq!(reference().with_query([("compute", "cpu"), ("dataset", "x")]), (reference(), false), "other keys are not the form's");
    }

    #[test]
    fn a_bad_value_in_a_link_gets_the_forms_message() {
        let message = |pairs: &[(&str, &str)]| reference().with_query(pairs.iter().copied()).0.parse().unwrap_err().to_string();
        assert_eq!(message(&[("lr", "fast")]), "learning rate: 'fast' is not a number such as 0.001");
        assert_eq!(message(&[("augment", "wild")]), "augmentation: unknown recipe 'wild'");
        assert_eq!(message(&[("batch", "99999")]), "batch size: must be between 1 and 4096");
        assert_eq!(message(&[("train", "tail")]), "train: 'tail' is neither 'whole' nor 'head'");
        assert_eq!(message(&[("init", "xavier")]), "initialisation: 'xavier' is not 'default', 'mimetic', 'sincos' or 'mimetic-sincos'");
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
