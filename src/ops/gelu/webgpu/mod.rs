//! GELU on a GPU: one kernel each way (`gelu.wgsl`, four values per invocation), with the CPU
//! path's erf, so both paths compute one function. burn's own GELU backward is a composition of
//! several launches. The dense products apply the same function as their epilogue
//! ([`functions`]).

use burn::backend::Cube;
use burn::backend::tensor::FloatTensor;
use burn::backend::ops::ActivationOps;

use super::ExactGelu;
use crate::ops::webgpu::launch::{Grid, Serial, WgslKernel, bindable, dims, empty_like, is_f32, launch};

/// `erf` and `gelu` in WGSL on `value` (`f32` or `vec4<f32>`), for a kernel to include.
pub(crate) fn functions(value: &str) -> String {
    format!("alias Value = {value};\n{}", include_str!("functions.wgsl"))
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Gelu {
    len: usize,
    backward: bool,
}

impl Gelu {
    /// Whether the kernel reads vec4s: four values per invocation.
    fn vec4(&self) -> bool {
        self.len.is_multiple_of(4)
    }
}

impl WgslKernel for Gelu {
    const TEMPLATE: &'static str = include_str!("gelu.wgsl");
    fn workgroup(&self) -> [u32; 3] {
        [256, 1, 1]
    }

    fn constants(&self) -> Vec<(&'static str, String)> {
        let (bindings, store) = if self.backward {
            (
                "@group(0) @binding(1) var<storage, read_write> grad: array<Value>;\n\
                 @group(0) @binding(2) var<storage, read_write> out: array<Value>;",
                "let pdf = 0.39894228 * exp(-0.5 * v * v);\n    out[index] = grad[index] * (cdf + v * pdf);",
            )
        } else {
            ("@group(0) @binding(1) var<storage, read_write> out: array<Value>;", "out[index] = v * cdf;")
        };
        let (len, value) = if self.vec4() { (self.len / 4, "vec4<f32>") } else { (self.len, "f32") };
        vec![
            ("len", len.to_string()),
            ("functions", functions(value)),
            ("backward", self.backward.to_string()),
            ("bindings", bindings.into()),
            ("store", store.into()),
        ]
    }
}

fn run(inputs: &[FloatTensor<Cube>], backward: bool) -> FloatTensor<Cube> {
    let shape = dims(&inputs[0]);
    let len = shape.iter().product::<usize>();
    let inputs: Vec<_> = inputs.iter().cloned().map(bindable).collect();
    let out = empty_like(&inputs[0], &shape);
    let mut buffers: Vec<_> = inputs.iter().collect();
    buffers.push(&out);
    let kernel = Gelu { len, backward };
    let grid = Grid::covering(&kernel, if kernel.vec4() { len / 4 } else { len } as u64);
    launch(kernel, grid, &buffers, &[], Serial::default());
    out
}

impl ExactGelu for Cube {
    fn exact_gelu(x: FloatTensor<Self>) -> FloatTensor<Self> {
        if !is_f32(&x) || dims(&x).contains(&0) {
            return Self::gelu(x);
        }
        run(&[x], false)
    }

    fn exact_gelu_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        if !is_f32(&x) || !is_f32(&grad) || dims(&x) != dims(&grad) || dims(&x).contains(&0) {
            return Self::gelu_backward(x, grad);
        }
        run(&[x, grad], true)
    }
}
