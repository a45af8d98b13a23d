//! Dropout, `x ⊙ m / (1−p)` with `m` drawn at random while training: on the CPU backend with
//! masks from [`DropoutMask`] (written on every core, where burn draws one number at a time on
//! one), on GPU backends burn's own.

use std::cell::Cell;

use crate::ops::cpu::dropout_mask::{DropoutMask, splitmix64};
use burn::nn::Dropout;
use burn::tensor::{Device, Distribution, Tensor, TensorData};

/// `dropout`'s forward pass: the identity outside training (a device without autodiff, or the
/// module's training flag cleared), as burn's `Dropout::forward` is.
///
/// # Shapes
/// - input: `[batch, …]`
pub fn dropout<const D: usize>(input: Tensor<D>, dropout: &Dropout) -> Tensor<D> {
    if !super::on_cpu(&input) {
        // burn's Dropout draws a mask even at p = 0, a launch per call for nothing.
        return if is_identity(dropout, &input.device()) { input } else { dropout.forward(input) };
    }
    let elements = input.shape().num_elements();
    let mask = draw_mask(dropout, &input.device(), elements / input.dims()[0].max(1));
    if mask.is_none() {
        return input;
    }
    let factors = TensorData::new(mask.factors(elements), input.shape());
    let factors = Tensor::<D>::from_data(factors, &input.device());
    input * factors
}

/// Whether `dropout` passes its input through unchanged on `device`: outside training (a device
/// without autodiff, or the module's training flag cleared), or with nothing to drop.
pub fn is_identity(dropout: &Dropout, device: &Device) -> bool {
    !dropout.training.is_enabled() || !device.is_autodiff() || dropout.prob == 0.0
}

/// A fresh mask for one use of `dropout` on `device` over a batch-major tensor of `per_image`
/// elements per image, or [`DropoutMask::NONE`] outside training. Inside
/// [`with_step_masks`] it is the step's next mask, read from the slice's first image on; else
/// its seed comes from the device's random numbers. Either way `device.seed(…)` fixes the masks
/// as it fixes burn's.
pub fn draw_mask(dropout: &Dropout, device: &Device, per_image: usize) -> DropoutMask {
    if is_identity(dropout, device) {
        return DropoutMask::NONE;
    }
    match STEP_MASKS.get() {
        Some((masks, drawn)) => {
            STEP_MASKS.set(Some((masks, drawn + 1)));
            let first = masks.first_image as u64 * per_image as u64;
            DropoutMask::new(dropout.prob, splitmix64(masks.seed, drawn)).from_element(first)
        }
        None => DropoutMask::new(dropout.prob, device_seed(device)),
    }
}

/// Where the dropout masks of one slice of a training step's batch come from: the step's seed
/// (one for every slice) and the slice's first image in the batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepMasks {
    pub seed: u64,
    pub first_image: usize,
}

thread_local! {
    /// The step's masks this thread's forward pass draws, and how many it has drawn.
    static STEP_MASKS: Cell<Option<(StepMasks, u64)>> = const { Cell::new(None) };
}

/// Runs `work`, one slice's forward pass, drawing its masks from `masks`: its n-th mask is the
/// whole batch's n-th, read from the slice's first image on, so a batch split into slices on any
/// number of threads is masked as the whole batch. What was set before is put back afterwards,
/// as rayon may run another slice inside `work` on this thread while `work` waits.
pub fn with_step_masks<R>(masks: StepMasks, work: impl FnOnce() -> R) -> R {
    struct Restore(Option<(StepMasks, u64)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            STEP_MASKS.set(self.0);
        }
    }
    let _restore = Restore(STEP_MASKS.replace(Some((masks, 0))));
    work()
}

/// 48 bits from `device`'s random numbers: a mask's seed, or a step's ([`StepMasks`]).
pub fn device_seed(device: &Device) -> u64 {
    let halves = Tensor::<1>::random([2], Distribution::Default, device).into_data();
    halves
        .iter::<f32>()
        .fold(0u64, |seed, half| (seed << 24) | (f64::from(half) * f64::from(1u32 << 24)) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::nn::DropoutConfig;
    use burn::tensor::Device;

    /// What dropout does, whatever the mask: every element is dropped or scaled by 1/(1−p), the
    /// gradient is the same factor, about p are dropped, and nothing changes outside training.
    #[test]
    fn drops_about_p_scales_the_rest_and_passes_the_same_factors_back() {
        let device = Device::flex().autodiff();
        let layer = DropoutConfig::new(0.25).init();
        let input = Tensor::<2>::ones([200, 100], &device).require_grad();
        let output = dropout(input.clone(), &layer);
        let gradient = output.clone().sum().backward();
        let values = output.into_data().try_to_vec::<f32>().unwrap();
        let dropped = values.iter().filter(|&&v| v == 0.0).count();
        assert!((4_700..=5_300).contains(&dropped), "{dropped} of 20,000 dropped");
        assert!(values.iter().all(|&v| v == 0.0 || (v - 1.0 / 0.75).abs() < 1e-6));
        let grads = input.grad(&gradient).unwrap().into_data().try_to_vec::<f32>().unwrap();
        assert_eq!(grads, values, "∂output/∂input is the mask's factor");

        let plain = Tensor::<2>::ones([20, 10], &Device::flex());
        assert_eq!(dropout(plain.clone(), &layer).into_data(), plain.into_data(), "no autodiff, no dropout");
    }
}
