//! A training run saved after an epoch, to resume after a reload or a crashed tab, or to use its
//! weights: the recipe, progress and metric history, the weights as a safetensors file (so they
//! load like any weight file), and, where burn can read it, the trainer's full state (model
//! record with parameter ids, AdamW's moments, step).
//!
//! Layout: `VITCKPT1`, the header's length (u64, little-endian), the header as JSON, then the
//! weight file, the model record and the optimizer record, back to back, with their lengths in
//! the header. Every length is checked against the bytes there are before anything is read.

use serde::{Deserialize, Serialize};

use super::metrics::{MetricsHistory, SmoothedLoss};
use super::recipe::TrainingRecipe;
use super::step::TrainerState;

const MAGIC: &[u8; 8] = b"VITCKPT1";
/// A header is a recipe and a metric history: far below this.
const MAX_HEADER: u64 = 64 << 20;

#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    pub recipe: TrainingRecipe,
    /// Epochs finished; the run continues with the next one.
    pub epochs_done: usize,
    /// Optimisation steps taken, for the learning-rate schedule.
    pub step: usize,
    pub history: MetricsHistory,
    pub smoothed: SmoothedLoss,
    /// The weights after `epochs_done` epochs, as a weight file (see `crate::weights`).
    pub weights: Vec<u8>,
    /// The trainer's exact state; `None` where it could not be read (WebGPU in the browser), in
    /// which case a resumed run restarts AdamW's moments from zero.
    pub trainer: Option<TrainerState>,
}

#[derive(Serialize, Deserialize)]
struct Header {
    recipe: TrainingRecipe,
    epochs_done: usize,
    step: usize,
    history: MetricsHistory,
    smoothed: SmoothedLoss,
    weights_bytes: u64,
    model_bytes: u64,
    optimizer_bytes: u64,
}

/// Why bytes are not a checkpoint this version can resume.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointError {
    #[error("not a training checkpoint (it does not start with {MAGIC:?})")]
    NotACheckpoint,
    #[error("the checkpoint is truncated or damaged: {0}")]
    Damaged(String),
}

impl Checkpoint {
    pub fn encode(&self) -> Vec<u8> {
        let (model, optimizer) = match &self.trainer {
            Some(state) => (state.model.as_slice(), state.optimizer.as_slice()),
            None => (&[][..], &[][..]),
        };
        let header = Header {
            recipe: self.recipe.clone(),
            epochs_done: self.epochs_done,
            step: self.step,
            history: self.history.clone(),
            smoothed: self.smoothed,
            weights_bytes: self.weights.len() as u64,
            model_bytes: model.len() as u64,
            optimizer_bytes: optimizer.len() as u64,
        };
        let header = serde_json::to_vec(&header).expect("a checkpoint header serialises");
        let mut bytes = Vec::with_capacity(16 + header.len() + self.weights.len() + model.len() + optimizer.len());
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&(header.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&header);
        bytes.extend_from_slice(&self.weights);
        bytes.extend_from_slice(model);
        bytes.extend_from_slice(optimizer);
        bytes
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, CheckpointError> {
        if bytes.len() < 16 || &bytes[..8] != MAGIC {
            return Err(CheckpointError::NotACheckpoint);
        }
        let header_length = u64::from_le_bytes(bytes[8..16].try_into().expect("eight bytes"));
        let rest = &bytes[16..];
        if header_length > MAX_HEADER || header_length > rest.len() as u64 {
            return Err(CheckpointError::Damaged(format!("a header of {header_length} bytes in {} bytes", bytes.len())));
        }
        let (header, body) = rest.split_at(header_length as usize);
        let header: Header =
            serde_json::from_slice(header).map_err(|error| CheckpointError::Damaged(format!("unreadable header: {error}")))?;
        header.recipe.validate().map_err(|error| CheckpointError::Damaged(format!("its recipe is invalid: {error}")))?;
        let expected = [header.weights_bytes, header.model_bytes, header.optimizer_bytes]
            .iter()
            .try_fold(0u64, |sum, &length| sum.checked_add(length));
        if expected != Some(body.len() as u64) {
            return Err(CheckpointError::Damaged(format!(
                "the header promises {} + {} + {} bytes, {} follow",
                header.weights_bytes,
                header.model_bytes,
                header.optimizer_bytes,
                body.len()
            )));
        }
        if header.epochs_done > header.recipe.epochs {
            return Err(CheckpointError::Damaged(format!(
                "{} epochs done of a {}-epoch recipe",
                header.epochs_done, header.recipe.epochs
            )));
        }
        let (weights, body) = body.split_at(header.weights_bytes as usize);
        let (model, optimizer) = body.split_at(header.model_bytes as usize);
        let trainer = (!model.is_empty()).then(|| TrainerState { step: header.step, model: model.to_vec(), optimizer: optimizer.to_vec() });
        Ok(Self {
            recipe: header.recipe,
            epochs_done: header.epochs_done,
            step: header.step,
            history: header.history,
            smoothed: header.smoothed,
            weights: weights.to_vec(),
            trainer,
        })
    }

    /// Whether the run it saved had finished all its epochs.
    pub fn is_finished(&self) -> bool {
        self.epochs_done >= self.recipe.epochs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkpoint(trainer: Option<TrainerState>) -> Checkpoint {
        Checkpoint {
            recipe: TrainingRecipe::default(),
            epochs_done: 3,
            step: 237,
            history: MetricsHistory::default(),
            smoothed: SmoothedLoss::default(),
            weights: vec![1, 2, 3, 4, 5],
            trainer,
        }
    }

    #[test]
    fn checkpoints_round_trip_with_and_without_trainer_state() {
        for trainer in [None, Some(TrainerState { step: 237, model: vec![9; 7], optimizer: vec![8; 11] })] {
            let original = checkpoint(trainer);
            assert_eq!(Checkpoint::decode(&original.encode()).unwrap(), original);
        }
    }

    #[test]
    fn damaged_checkpoints_are_refused() {
        let bytes = checkpoint(Some(TrainerState { step: 237, model: vec![9; 7], optimizer: vec![8; 11] })).encode();
        assert_eq!(Checkpoint::decode(b"not a checkpoint at all"), Err(CheckpointError::NotACheckpoint));
        assert!(matches!(Checkpoint::decode(&bytes[..bytes.len() - 1]), Err(CheckpointError::Damaged(_))));
        let mut huge_header = bytes.clone();
        huge_header[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(Checkpoint::decode(&huge_header), Err(CheckpointError::Damaged(_))));
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(matches!(Checkpoint::decode(&extra), Err(CheckpointError::Damaged(_))));
    }
}
