//! What the operations' tests share: each fused or custom operation is checked against the burn
//! composition it replaces in the same way, values and every gradient.

use burn::tensor::{Distribution, Gradients, Tensor, TensorData, Tolerance};

/// `len` values uniform in [-spread, spread), the same for the same `seed`, for the kernels'
/// slice tests.
pub fn random_values(len: usize, seed: u64, spread: f32) -> Vec<f32> {
    let mut rng = crate::data::rng::Pcg32::new(seed, 0);
    (0..len).map(|_| rng.uniform(-spread, spread)).collect()
}

/// Asserts that `ours` and `burns`, one function computed two ways from the same tracked inputs,
/// agree within `tolerance` in value and in every gradient that `gradients` reads (the inputs'
/// and parameters' gradients, in the same order for both). Both outputs are weighed by one random
/// upstream gradient, so every output element counts in every gradient.
pub fn assert_matches_burns<const D: usize>(
    ours: Tensor<D>,
    burns: Tensor<D>,
    gradients: impl Fn(&Gradients) -> Vec<TensorData>,
    tolerance: Tolerance<f32>,
) {
    let upstream = Tensor::<D>::random(ours.shape(), Distribution::Normal(0.0, 1.0), &ours.device());
    let ours_gradients = gradients(&(ours.clone() * upstream.clone()).sum().backward());
    let burns_gradients = gradients(&(burns.clone() * upstream).sum().backward());
    ours.into_data().assert_approx_eq::<f32>(&burns.into_data(), tolerance);
    assert_eq!(ours_gradients.len(), burns_gradients.len(), "the same gradients read from both");
    for (ours, burns) in ours_gradients.into_iter().zip(burns_gradients) {
        ours.assert_approx_eq::<f32>(&burns, tolerance);
    }
}
