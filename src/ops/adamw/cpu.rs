//! [`AdamWUpdate`] on the CPU backend: the kernel's arithmetic on slices, in the same order.

use burn::backend::Flex;
use burn::backend::TensorMetadata;
use burn::backend::tensor::FloatTensor;

use super::{AdamWStep, AdamWUpdate};
use crate::ops::cpu::tensor as cpu_tensor;

impl AdamWUpdate for Flex {
    fn adamw_update(
        param: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        moment_1: FloatTensor<Self>,
        moment_2: FloatTensor<Self>,
        step: AdamWStep,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        let shape = param.shape();
        let [param, grad, moment_1, moment_2] = [param, grad, moment_1, moment_2].map(cpu_tensor::contiguous);
        let (mut p, mut m, mut v) = (
            cpu_tensor::values(&param).to_vec(),
            cpu_tensor::values(&moment_1).to_vec(),
            cpu_tensor::values(&moment_2).to_vec(),
        );
        update(step, cpu_tensor::values(&grad), &mut p, &mut m, &mut v);
        (
            cpu_tensor::from_values(p, shape.clone()),
            cpu_tensor::from_values(m, shape.clone()),
            cpu_tensor::from_values(v, shape),
        )
    }
}

/// One AdamW step in place, element by element.
pub fn update(step: AdamWStep, grad: &[f32], param: &mut [f32], moment_1: &mut [f32], moment_2: &mut [f32]) {
    for (((&g, p), m), v) in grad.iter().zip(param).zip(moment_1).zip(moment_2) {
        *m = *m * step.beta_1 + g * (1.0 - step.beta_1);
        *v = *v * step.beta_2 + (g * g) * (1.0 - step.beta_2);
        let delta = (*m / step.correction_1) / ((*v / step.correction_2).sqrt() + step.epsilon);
        *p = *p * (1.0 - step.decay) - delta * step.learning_rate;
    }
}
