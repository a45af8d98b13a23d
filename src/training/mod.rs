//! Training, shared by the native `train` command and the browser's worker: the recipe, one
//! optimisation step, the epoch loop and the metrics it records.

mod checkpoint;
mod fixed;
mod form;
mod init;
mod memory;
mod metrics;
mod named;
mod recipe;
mod session;
mod step;

pub use checkpoint::{Checkpoint, CheckpointError};
pub use fixed::{fixed_batch, fixed_trainer};
pub use form::RecipeForm;
pub use init::{Initialisation, fresh_model};
pub use memory::{cpu_step_too_large, gpu_step_largest_binding, gpu_step_too_large};
pub use metrics::{EpochMetrics, MetricsHistory, SmoothedLoss, StepPoint, TestEvaluation};
pub use named::{EVALUATION_SPEEDUP, NamedRecipe, TEN_MINUTES, epochs_within};
pub use recipe::{OptimizerRecipe, RecipeError, Trainable, TrainingRecipe};
pub use session::{StepReport, TrainingError, TrainingSession, evaluate, evaluate_predicting, evaluate_with_progress};
pub use step::{EvaluationOutput, StepOutput, Trainer, TrainerState, cosine_lr, evaluate_batch};
