//! Dropout, `x ⊙ m / (1−p)` with `m` drawn at random while training: on the CPU backend with
//! masks from [`DropoutMask`] (written on every core, where burn draws one number at a time on
//! one), on GPU backends burn's own.

use crate::ops::cpu::dropout_mask::DropoutMask;
use burn::nn::Dropout;
use burn::tensor::{Device, Distribution, Tensor, TensorData};

/// `dropout`'s forward pass: the identity outside training (a device without autodiff, or the
/// module's training flag cleared), as burn's `Dropout::forward` is.
pub fn dropout<const D: usize>(input: Tensor<D>, dropout: &Dropout) -> Tensor<D> {
    if !super::on_cpu(&input) {
        return dropout.forward(input);
    }
    let mask = draw_mask(dropout, &input.device());
    if mask.is_none() {
        return input;
    }
    let factors = TensorData::new(mask.factors(input.shape().num_elements()), input.shape());
    let factors = Tensor::<D>::from_data(factors, &input.device());
    input * factors
}

/// A fresh mask for one use of `dropout` on `device`, or [`DropoutMask::NONE`] outside
/// training. Its seed comes from the device's random numbers, so `device.seed(…)` fixes the
/// masks as it fixes burn's.
pub fn draw_mask(dropout: &Dropout, device: &Device) -> DropoutMask {
    if !dropout.training.is_enabled() || !device.is_autodiff() || dropout.prob == 0.0 {
        return DropoutMask::NONE;
    }
    let halves = Tensor::<1>::random([2], Distribution::Default, device).into_data();
    let seed = halves
        .iter::<f32>()
        .fold(0u64, |seed, half| (seed << 24) | (f64::from(half) * f64::from(1u32 << 24)) as u64);
    DropoutMask::new(dropout.prob, seed)
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
