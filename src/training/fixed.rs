//! A fixed model and batch, the same on every backend and in both wasm modules: hash-defined
//! weights and images ([`crate::model::parity`]) and labels `i mod 10`. The page times training
//! steps on them to choose its compute path, and the browser tests hold the threaded module's
//! losses on them to the single-threaded module's.

use burn::tensor::{Device, Int, Tensor, TensorData};

use super::recipe::OptimizerRecipe;
use super::step::Trainer;
use crate::model::VitConfig;
use crate::model::parity::{deterministic_images, deterministic_weights};

/// The tiny preset with hash-defined weights, training with the reference optimiser over
/// `total_steps` (which only sets the cosine schedule). `device` must track gradients.
pub fn fixed_trainer(total_steps: usize, device: &Device) -> Trainer {
    let model = deterministic_weights(VitConfig::tiny().init(device));
    Trainer::new(model, OptimizerRecipe::default(), total_steps, device)
}

/// `batch` hash-defined images and their labels.
///
/// # Shapes
/// - images: `[batch, 3, 32, 32]`, labels: `[batch]`
pub fn fixed_batch(batch: usize, device: &Device) -> (Tensor<4>, Tensor<1, Int>) {
    let images = Tensor::from_data(TensorData::new(deterministic_images(batch), [batch, 3, 32, 32]), device);
    let labels: Vec<i64> = (0..batch as i64).map(|index| index % 10).collect();
    (images, Tensor::from_data(TensorData::new(labels, [batch]), device))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn losses(steps: usize) -> Vec<f32> {
        let device = Device::flex().autodiff();
        let mut trainer = fixed_trainer(steps, &device);
        let (images, labels) = fixed_batch(8, &device);
        (0..steps).map(|_| trainer.step(images.clone(), labels.clone()).loss.into_scalar::<f32>()).collect()
    }

    #[test]
    fn the_fixed_batch_trains_the_same_way_every_time() {
        let (first, second) = (losses(4), losses(4));
        assert_eq!(first, second);
        assert!(first.iter().all(|loss| loss.is_finite()));
        assert!(first[3] < first[0], "the loss falls on a batch it sees again: {first:?}");
    }
}
