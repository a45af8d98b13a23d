//! The forward kernels that make up most of a training step, alone at the tiny preset's shapes
//! (65 tokens, width 128, 4 heads, MLP 256): what `bench` times natively and
//! `tests/browser_kernels.rs` times in the browser, so the two can be set side by side.
//! The `blocked_` products go through [`crate::matmul::blocked_matmul`], the model's path on a
//! GPU; on the CPU backend they are burn's matmul again.

use crate::matmul::blocked_matmul;
use burn::tensor::activation::{gelu, softmax};
use burn::tensor::module::layer_norm;
use burn::tensor::{Device, Distribution, Tensor};

/// One kernel at the model's shapes, on inputs made once.
pub struct StepKernel {
    pub name: &'static str,
    /// Floating-point operations of one run (matrix products only; 0 for the rest).
    pub flops: f64,
    pub run: Box<dyn Fn() -> Tensor<4>>,
}

/// The kernels of one forward pass at `batch` images, on random inputs on `device`.
pub fn step_kernels(batch: usize, device: &Device) -> Vec<StepKernel> {
    let (tokens, width, heads) = (65, 128, 4);
    let rows = batch * tokens;
    let random = |shape: [usize; 4]| Tensor::<4>::random(shape, Distribution::Normal(0.0, 1.0), device);
    let activations = random([1, 1, rows, width]);
    let qkv_weight = random([1, 1, width, 3 * width]);
    let mlp_weight = random([1, 1, width, 2 * width]);
    let queries = random([batch, heads, tokens, width / heads]);
    let scores = random([batch, heads, tokens, tokens]);
    let hidden = random([1, batch, tokens, 2 * width]);
    let qkv_output = random([1, 1, rows, 3 * width]);
    let qkv_bias = random([1, 1, 1, 3 * width]);
    let (gamma, beta) = (Tensor::<1>::ones([width], device), Tensor::<1>::zeros([width], device));
    let matmul_flops = |m: usize, k: usize, n: usize, count: usize| (2 * m * k * n * count) as f64;
    let (a, b) = (activations.clone(), activations.clone());
    let (blocked_a, blocked_b) = (activations.clone(), activations.clone());
    let (blocked_qkv, blocked_mlp) = (qkv_weight.clone(), mlp_weight.clone());
    let blocked_queries = queries.clone().reshape([batch * heads, tokens, width / heads]);
    let blocked_keys = queries.clone().swap_dims(2, 3).reshape([batch * heads, width / heads, tokens]);
    let blocked_scores = scores.clone().reshape([batch * heads, tokens, tokens]);
    let blocked = |lhs: &Tensor<4>, rhs: &Tensor<4>| -> Tensor<4> {
        blocked_matmul(lhs.clone().squeeze_dim(0), rhs.clone().squeeze_dim(0)).unsqueeze()
    };
    vec![
        StepKernel {
            name: "matmul_qkv",
            flops: matmul_flops(rows, width, 3 * width, 1),
            run: Box::new(move || a.clone().matmul(qkv_weight.clone())),
        },
        StepKernel {
            name: "matmul_mlp",
            flops: matmul_flops(rows, width, 2 * width, 1),
            run: Box::new(move || b.clone().matmul(mlp_weight.clone())),
        },
        StepKernel {
            name: "blocked_matmul_qkv",
            flops: matmul_flops(rows, width, 3 * width, 1),
            run: Box::new(move || blocked(&blocked_a, &blocked_qkv)),
        },
        StepKernel {
            name: "blocked_matmul_mlp",
            flops: matmul_flops(rows, width, 2 * width, 1),
            run: Box::new(move || blocked(&blocked_b, &blocked_mlp)),
        },
        StepKernel {
            name: "matmul_attention_scores",
            flops: matmul_flops(tokens, width / heads, tokens, batch * heads),
            run: Box::new(move || queries.clone().matmul(queries.clone().swap_dims(2, 3))),
        },
        StepKernel {
            name: "blocked_matmul_attention_scores",
            flops: matmul_flops(tokens, width / heads, tokens, batch * heads),
            run: Box::new({
                let (queries, keys) = (blocked_queries.clone(), blocked_keys);
                move || blocked_matmul(queries.clone(), keys.clone()).unsqueeze()
            }),
        },
        StepKernel {
            name: "blocked_matmul_attention_values",
            flops: matmul_flops(tokens, tokens, width / heads, batch * heads),
            run: Box::new({
                let (weights, values) = (blocked_scores, blocked_queries);
                move || blocked_matmul(weights.clone(), values.clone()).unsqueeze()
            }),
        },
        StepKernel { name: "softmax", flops: 0.0, run: Box::new(move || softmax(scores.clone(), 3)) },
        StepKernel {
            name: "gelu",
            flops: 0.0,
            run: Box::new({
                let hidden = hidden.clone();
                move || gelu(hidden.clone())
            }),
        },
        StepKernel {
            name: "gelu_vectorised",
            flops: 0.0,
            run: Box::new(move || crate::gelu::gelu(hidden.clone())),
        },
        StepKernel {
            name: "add_bias",
            flops: 0.0,
            run: Box::new({
                let (output, bias) = (qkv_output.clone(), qkv_bias.clone());
                move || output.clone() + bias.clone()
            }),
        },
        StepKernel {
            name: "add_same_shape",
            flops: 0.0,
            run: Box::new({
                let output = qkv_output.clone();
                move || output.clone() + output.clone()
            }),
        },
        StepKernel {
            name: "transpose_copy",
            flops: 0.0,
            run: Box::new({
                let output = qkv_output.clone();
                move || output.clone().swap_dims(2, 3).reshape([1, 3 * width, rows, 1])
            }),
        },
        StepKernel {
            name: "sum_rows",
            flops: 0.0,
            run: Box::new(move || qkv_output.clone().sum_dim(2)),
        },
        StepKernel {
            name: "layer_norm",
            flops: 0.0,
            run: Box::new(move || layer_norm(activations.clone(), gamma.clone(), Some(beta.clone()), 1e-6)),
        },
    ]
}
