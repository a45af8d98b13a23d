use serde::{Deserialize, Serialize};

/// One epoch's figures, as the reference notebook reports them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpochMetrics {
    /// 1-based.
    pub epoch: usize,
    /// Mean over the epoch's batches (augmented images, as the reference).
    pub train_loss: f32,
    pub train_accuracy: f32,
    /// Over the whole test set, no augmentation, no gradients.
    pub test_loss: f32,
    pub test_accuracy: f32,
    /// Wall time of the epoch's training steps (evaluation excluded).
    pub train_seconds: f64,
    pub images_per_second: f64,
}

impl EpochMetrics {
    /// The figures as the trainer's log and the page's epoch table write them: epoch, train loss,
    /// train accuracy, test loss, test accuracy, images per second.
    pub fn cells(&self) -> [String; 6] {
        [
            self.epoch.to_string(),
            format!("{:.4}", self.train_loss),
            format!("{:.1}%", 100.0 * self.train_accuracy),
            format!("{:.4}", self.test_loss),
            format!("{:.1}%", 100.0 * self.test_accuracy),
            format!("{:.1}", self.images_per_second),
        ]
    }
}

/// A model's figures over a whole test set, with each image's predicted class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestEvaluation {
    pub loss: f32,
    pub accuracy: f32,
    /// The predicted class of every test image, in the set's order.
    #[serde(with = "serde_bytes")]
    pub predictions: Vec<u8>,
}

/// The smoothed running train loss at a step (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepPoint {
    pub step: usize,
    pub loss: f32,
}

/// Everything the charts draw; saved with checkpoints so curves survive a reload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MetricsHistory {
    pub epochs: Vec<EpochMetrics>,
    pub steps: Vec<StepPoint>,
}

/// Exponential moving average (α = 0.1) of the train loss with bias correction, so the first
/// points are not dragged towards zero.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SmoothedLoss {
    count: u32,
    average: f32,
}

impl SmoothedLoss {
    const ALPHA: f32 = 0.1;

    /// Takes one raw loss and returns the smoothed value.
    pub fn update(&mut self, loss: f32) -> f32 {
        self.count += 1;
        self.average = (1.0 - Self::ALPHA) * self.average + Self::ALPHA * loss;
        self.average / (1.0 - (1.0 - Self::ALPHA).powi(self.count as i32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_epoch_is_written_with_fixed_precision() {
        let metrics = EpochMetrics {
            epoch: 3,
            train_loss: 1.50216,
            train_accuracy: 0.4531,
            test_loss: 1.4567,
            test_accuracy: 0.45749,
            train_seconds: 10.0,
            images_per_second: 95.36,
        };
        assert_eq!(metrics.cells(), ["3", "1.5022", "45.3%", "1.4567", "45.7%", "95.4"]);
    }

    #[test]
    fn smoothing_starts_at_the_first_value_and_follows_a_constant() {
        let mut smoothed = SmoothedLoss::default();
        assert!((smoothed.update(2.0) - 2.0).abs() < 1e-6);
        assert!((1..50).all(|_| (smoothed.update(2.0) - 2.0).abs() < 1e-5));
        // A jump moves the average a tenth of the way, not all of it.
        let after_jump = smoothed.update(3.0);
        assert!(after_jump > 2.05 && after_jump < 2.15, "{after_jump}");
    }
}
