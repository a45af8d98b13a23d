//! [`AdamWUpdate`] on a GPU: `adamw.wgsl`, one launch per parameter tensor, the step's numbers in
//! a uniform so that a tensor's pipeline serves every step.

use burn::backend::Cube;
use burn::backend::tensor::FloatTensor;

use super::{AdamWStep, AdamWUpdate};
use crate::ops::webgpu::launch::{Grid, Serial, WgslKernel, bindable, dims, empty_like, launch};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct AdamW {
    len: usize,
}

impl WgslKernel for AdamW {
    const TEMPLATE: &'static str = include_str!("adamw.wgsl");
    fn constants(&self) -> Vec<(&'static str, String)> {
        vec![("len", self.len.to_string())]
    }
}

impl AdamWUpdate for Cube {
    fn adamw_update(
        param: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        moment_1: FloatTensor<Self>,
        moment_2: FloatTensor<Self>,
        step: AdamWStep,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        let shape = dims(&param);
        let len = shape.iter().product::<usize>();
        let [param, grad, moment_1, moment_2] = [param, grad, moment_1, moment_2].map(bindable);
        let outputs = [(); 3].map(|_| empty_like(&param, &shape));
        let buffers = [&param, &grad, &moment_1, &moment_2, &outputs[0], &outputs[1], &outputs[2]];
        let kernel = AdamW { len };
        let grid = Grid::covering(&kernel, len as u64);
        launch(kernel, grid, &buffers, &step.uniform(), Serial::default());
        let [param, moment_1, moment_2] = outputs;
        (param, moment_1, moment_2)
    }
}
