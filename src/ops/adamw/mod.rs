//! One AdamW step of a parameter tensor as one operation, [`AdamWUpdate`]: burn's AdamW runs
//! about fifteen elementwise operations per parameter tensor, each a launch on a GPU (about 840
//! a step of the tiny model, half of all); here one kernel per tensor ([`webgpu`]). The CPU
//! twin ([`cpu`]) is the same arithmetic on slices. The training loop's optimiser
//! (`training::step`) uses it on a GPU and keeps burn's AdamW, whose state it shares, elsewhere.

pub mod cpu;
#[cfg(gpu)]
pub mod webgpu;

use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, Dispatch, backend_extension};
use burn::tensor::Tensor;

/// The numbers of one AdamW step, the same for every parameter tensor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdamWStep {
    pub learning_rate: f32,
    /// `learning_rate · weight_decay`.
    pub decay: f32,
    pub beta_1: f32,
    pub beta_2: f32,
    pub epsilon: f32,
    /// `1 − β₁ᵗ` at this step `t` (counted from 1).
    pub correction_1: f32,
    /// `1 − β₂ᵗ`.
    pub correction_2: f32,
}

impl AdamWStep {
    /// The step numbered `time` (from 1) with these settings, as burn's AdamW computes them.
    pub fn new(learning_rate: f64, weight_decay: f32, [beta_1, beta_2]: [f32; 2], epsilon: f32, time: usize) -> Self {
        let time = time as i32;
        Self {
            learning_rate: learning_rate as f32,
            decay: (learning_rate * weight_decay as f64) as f32,
            beta_1,
            beta_2,
            epsilon,
            correction_1: 1.0 - beta_1.powi(time),
            correction_2: 1.0 - beta_2.powi(time),
        }
    }

    /// The step as the kernel's uniform: eight `f32` bit patterns.
    pub fn uniform(&self) -> [u32; 8] {
        [
            self.learning_rate,
            self.decay,
            self.beta_1,
            self.beta_2,
            self.epsilon,
            self.correction_1,
            self.correction_2,
            0.0,
        ]
        .map(f32::to_bits)
    }
}

/// One AdamW step as a backend operation, on tensors without autodiff (the optimiser's).
#[backend_extension(Cube: cfg(gpu), Flex)]
pub trait AdamWUpdate: Backend {
    /// `(param, moment_1, moment_2)` after one step with `grad` (moments zero before the first).
    fn adamw_update(
        param: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        moment_1: FloatTensor<Self>,
        moment_2: FloatTensor<Self>,
        step: AdamWStep,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>);
}

/// [`AdamWUpdate`] on tensors of any rank: `(param, moment_1, moment_2)` after the step.
pub fn adamw_update<const D: usize>(
    param: Tensor<D>,
    grad: Tensor<D>,
    moment_1: Tensor<D>,
    moment_2: Tensor<D>,
    step: AdamWStep,
) -> (Tensor<D>, Tensor<D>, Tensor<D>) {
    let (param, moment_1, moment_2) = <Dispatch as AdamWUpdate>::adamw_update(
        param.into_dispatch(),
        grad.into_dispatch(),
        moment_1.into_dispatch(),
        moment_2.into_dispatch(),
        step,
    );
    (Tensor::from_dispatch(param), Tensor::from_dispatch(moment_1), Tensor::from_dispatch(moment_2))
}
