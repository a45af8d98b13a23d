//! The forward kernels that make up most of a training step, alone at the tiny preset's shapes
//! (65 tokens, width 128, 4 heads, MLP 256): what `bench` times natively and
//! `tests/browser/benchmarks.rs` times in the browser, so the two can be set side by side.
//! The `blocked_` products go through [`crate::ops::dense::blocked_matmul`], the model's path on a
//! GPU; on the CPU backend they are burn's matmul again. The `model_` kernels are what the model
//! itself calls (the fused CPU operations on the CPU backend, burn's and the blocked product on a
//! GPU), beside the burn operations they replace.

use crate::ops::dense::blocked_matmul;
use crate::ops::layer_norm::EPSILON;
use crate::ops::{attention_core, linear};
use burn::nn::{DropoutConfig, LayerNormConfig, LinearConfig};
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

fn kernel(name: &'static str, flops: f64, run: impl Fn() -> Tensor<4> + 'static) -> StepKernel {
    StepKernel { name, flops, run: Box::new(run) }
}

/// The kernels of one forward pass at `batch` images, on random inputs on `device`.
pub fn step_kernels(batch: usize, device: &Device) -> Vec<StepKernel> {
    let (tokens, width, heads) = (65, 128, 4);
    let (rows, head_dim) = (batch * tokens, width / heads);
    let random = |shape: [usize; 4]| Tensor::<4>::random(shape, Distribution::Normal(0.0, 1.0), device);
    let activations = random([1, 1, rows, width]);
    let qkv_weight = random([1, 1, width, 3 * width]);
    let mlp_weight = random([1, 1, width, 2 * width]);
    let queries = random([batch, heads, tokens, head_dim]);
    let scores = random([batch, heads, tokens, tokens]);
    let hidden = random([1, batch, tokens, 2 * width]);
    let qkv_output = random([1, 1, rows, 3 * width]);
    let qkv_bias = random([1, 1, 1, 3 * width]);
    let (gamma, beta) = (Tensor::<1>::ones([width], device), Tensor::<1>::zeros([width], device));
    let matmul_flops = |m: usize, k: usize, n: usize, count: usize| (2 * m * k * n * count) as f64;
    // The same products through the model's GPU path, on [batch, m, k] operands.
    let blocked = |lhs: Tensor<3>, rhs: Tensor<3>| move || blocked_matmul(lhs.clone(), rhs.clone()).unsqueeze();
    let per_head = |tensor: &Tensor<4>, [m, n]: [usize; 2]| tensor.clone().reshape([batch * heads, m, n]);
    let (queries_per_head, scores_per_head) =
        (per_head(&queries, [tokens, head_dim]), per_head(&scores, [tokens, tokens]));
    let keys_per_head = per_head(&queries.clone().swap_dims(2, 3), [head_dim, tokens]);
    let (qkv_flops, mlp_flops) = (matmul_flops(rows, width, 3 * width, 1), matmul_flops(rows, width, 2 * width, 1));
    let attention_flops = matmul_flops(tokens, head_dim, tokens, batch * heads);
    let token_rows = activations.clone().reshape([batch, tokens, width]);
    let qkv_rows = qkv_output.clone().reshape([batch, tokens, 3 * width]);
    let qkv_layer = LinearConfig::new(width, 3 * width).init(device);
    let norm = LayerNormConfig::new(width).with_epsilon(EPSILON).init(device);

    vec![
        kernel("matmul_qkv", qkv_flops, {
            let (lhs, rhs) = (activations.clone(), qkv_weight.clone());
            move || lhs.clone().matmul(rhs.clone())
        }),
        kernel("matmul_mlp", mlp_flops, {
            let (lhs, rhs) = (activations.clone(), mlp_weight.clone());
            move || lhs.clone().matmul(rhs.clone())
        }),
        kernel("blocked_matmul_qkv", qkv_flops, blocked(activations.clone().squeeze_dim(0), qkv_weight.squeeze_dim(0))),
        kernel("blocked_matmul_mlp", mlp_flops, blocked(activations.clone().squeeze_dim(0), mlp_weight.squeeze_dim(0))),
        kernel("matmul_attention_scores", attention_flops, {
            let queries = queries.clone();
            move || queries.clone().matmul(queries.clone().swap_dims(2, 3))
        }),
        kernel("blocked_matmul_attention_scores", attention_flops, blocked(queries_per_head.clone(), keys_per_head)),
        kernel("blocked_matmul_attention_values", attention_flops, blocked(scores_per_head, queries_per_head)),
        kernel("softmax", 0.0, move || softmax(scores.clone(), 3)),
        kernel("gelu", 0.0, {
            let hidden = hidden.clone();
            move || gelu(hidden.clone())
        }),
        kernel("gelu_vectorised", 0.0, move || crate::ops::gelu(hidden.clone())),
        kernel("add_bias", 0.0, {
            let output = qkv_output.clone();
            move || output.clone() + qkv_bias.clone()
        }),
        kernel("add_same_shape", 0.0, {
            let output = qkv_output.clone();
            move || output.clone() + output.clone()
        }),
        kernel("transpose_copy", 0.0, {
            let output = qkv_output.clone();
            move || output.clone().swap_dims(2, 3).reshape([1, 3 * width, rows, 1])
        }),
        kernel("sum_rows", 0.0, move || qkv_output.clone().sum_dim(2)),
        kernel("layer_norm", 0.0, move || layer_norm(activations.clone(), gamma.clone(), Some(beta.clone()), 1e-6)),
        kernel("model_linear_qkv", qkv_flops, {
            let tokens = token_rows.clone();
            move || linear(&qkv_layer, tokens.clone()).unsqueeze()
        }),
        kernel("model_attention_core", 2.0 * attention_flops, move || {
            attention_core(qkv_rows.clone(), heads, &DropoutConfig::new(0.0).init()).0.unsqueeze()
        }),
        kernel("model_layer_norm", 0.0, move || crate::ops::layer_norm(&norm, token_rows.clone()).unsqueeze()),
    ]
}
