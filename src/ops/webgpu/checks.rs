//! Each GPU operation against its definition: the same inputs through burn's composition on
//! burn's CPU backend, values and every gradient, in both kernel families. One body serves the
//! native tests on SwiftShader (`tests/gpu_ops.rs`, built `--features wgpu`) and the browser's
//! (`tests/browser/main.rs`, in `wasm-pack test`), so reads are asynchronous.

use burn::module::Param;
use burn::nn::Linear;
use burn::tensor::{Device, Tensor, TensorData};

use super::{KernelFamily, set_kernel_family};
use crate::ops::dense::webgpu::product::{Tile, set_product_tile};
use crate::ops::cpu::dropout_mask::splitmix64;

/// What a check found wrong.
pub type CheckResult = Result<(), String>;

/// Runs `check` in each kernel family, then leaves the choice to the adapter again.
pub async fn in_both_families<F, Fut>(check: F) -> CheckResult
where
    F: Fn(KernelFamily) -> Fut,
    Fut: Future<Output = CheckResult>,
{
    for family in [KernelFamily::Software, KernelFamily::Hardware] {
        set_kernel_family(Some(family));
        let result = check(family).await;
        set_kernel_family(None);
        result.map_err(|problem| format!("{family:?} kernels: {problem}"))?;
    }
    Ok(())
}

/// [`in_both_families`], then the GPU family again with every tiled product taking the wide tile,
/// which the checks' shapes, a few rows each, would not choose by size.
pub async fn in_every_product_kernel<F, Fut>(check: F) -> CheckResult
where
    F: Fn(KernelFamily) -> Fut,
    Fut: Future<Output = CheckResult>,
{
    in_both_families(&check).await?;
    set_kernel_family(Some(KernelFamily::Hardware));
    set_product_tile(Some(Tile::Wide));
    let result = check(KernelFamily::Hardware).await;
    set_product_tile(None);
    set_kernel_family(None);
    result.map_err(|problem| format!("Hardware kernels, wide tile: {problem}"))
}

/// `len` values uniform in [-1, 1), the same for the same `seed`.
pub fn values(len: usize, seed: u64) -> Vec<f32> {
    (0..len as u64).map(|index| (splitmix64(seed, index) >> 40) as f32 / (1u64 << 23) as f32 - 1.0).collect()
}

/// A tensor of [`values`] on `device`.
pub fn tensor<const D: usize>(shape: [usize; D], seed: u64, device: &Device) -> Tensor<D> {
    Tensor::from_data(TensorData::new(values(shape.iter().product(), seed), shape), device)
}

/// The values of `tensor`, read back.
pub async fn read<const D: usize>(tensor: Tensor<D>) -> Vec<f32> {
    tensor.into_data_async().await.expect("a readback").try_to_vec::<f32>().expect("f32 values")
}

/// `ours` against `expected`, each value within `tolerance` of it, relative to the largest
/// expected magnitude (sums over thousands of rows are compared by their scale).
pub fn compare(what: &str, ours: &[f32], expected: &[f32], tolerance: f32) -> CheckResult {
    if ours.len() != expected.len() {
        return Err(format!("{what}: {} values, expected {}", ours.len(), expected.len()));
    }
    let scale = expected.iter().fold(1.0f32, |most, value| most.max(value.abs()));
    for (index, (&ours, &expected)) in ours.iter().zip(expected).enumerate() {
        if !ours.is_finite() || (ours - expected).abs() > tolerance * scale {
            return Err(format!("{what}[{index}]: {ours}, expected {expected} (scale {scale})"));
        }
    }
    Ok(())
}

/// Reads `ours` and compares it with `expected`.
pub async fn compare_tensors<const D: usize>(what: &str, ours: Tensor<D>, expected: Tensor<D>, tolerance: f32) -> CheckResult {
    if ours.dims() != expected.dims() {
        return Err(format!("{what}: shape {:?}, expected {:?}", ours.dims(), expected.dims()));
    }
    compare(what, &read(ours).await, &read(expected).await, tolerance)
}

/// A dense layer of `inputs → outputs` with weights from `seed`, on `device`.
fn layer(inputs: usize, outputs: usize, seed: u64, device: &Device) -> Linear {
    Linear {
        weight: Param::from_tensor(tensor([inputs, outputs], seed, device)),
        bias: Some(Param::from_tensor(tensor([outputs], seed + 1, device))),
    }
}

/// The batched product against burn's matmul on the CPU, over shapes that take each kernel and
/// layout: multiples of 4 (the software kernel's vec4 loads) and not (the tiled kernel there too),
/// each operand also a transposed view, which the product reads in place.
pub async fn batched_products(device: &Device) -> CheckResult {
    let cpu = Device::flex();
    // `[batch, rows, columns]` from `seed`, or the transpose of `[batch, columns, rows]`: a view.
    let operand = |[batch, rows, columns]: [usize; 3], seed: u64, view: bool, device: &Device| {
        if view { tensor([batch, columns, rows], seed, device).swap_dims(1, 2) } else { tensor([batch, rows, columns], seed, device) }
    };
    in_every_product_kernel(|_| async {
        for [batch, m, k, n] in [[1, 5, 8, 12], [3, 65, 32, 65], [8, 65, 65, 32], [2, 130, 6, 10], [1, 1, 4, 4], [2, 8, 12, 16]] {
            for (a_view, b_view) in [(false, false), (true, false), (false, true), (true, true)] {
                let seed = (batch * 1000 + m * 100 + k * 10 + n) as u64;
                let a = |device: &Device| operand([batch, m, k], seed, a_view, device);
                let b = |device: &Device| operand([batch, k, n], seed + 1, b_view, device);
                let ours = crate::ops::dense::blocked_matmul(a(device), b(device));
                let expected = a(&cpu).matmul(b(&cpu));
                let views = match (a_view, b_view) {
                    (false, false) => "",
                    (true, false) => ", A a transposed view",
                    (false, true) => ", B a transposed view",
                    (true, true) => ", both transposed views",
                };
                compare_tensors(&format!("[{batch}, {m}, {k}]·[{batch}, {k}, {n}]{views}"), ours, expected, 1e-5).await?;
            }
        }
        Ok(())
    })
    .await
}

/// The dense layer's output and its three gradients against burn's `Linear` on the CPU: over a
/// few rows, over more rows than one invocation may sum (split over the batch), and at a shape
/// the software kernel's vec4 loads do not fit; each also with a residual added as the product is
/// written, against `residual + Linear`, the residual's gradient too.
pub async fn dense_layers(device: &Device) -> CheckResult {
    let (gpu, cpu) = (device.clone().autodiff(), Device::flex().autodiff());
    let no_dropout = burn::nn::DropoutConfig::new(0.0).init();
    in_every_product_kernel(|_| {
        let (gpu, cpu, no_dropout) = (gpu.clone(), cpu.clone(), no_dropout.clone());
        async move {
            let shapes = [[2, 65, 128, 384], [70, 65, 32, 24], [3, 7, 6, 10]];
            // Each shape plain, and with a residual added as the product is written.
            for ([batch, tokens, inputs, outputs], with_residual) in shapes.into_iter().flat_map(|shape| [(shape, false), (shape, true)]) {
                let what = format!("dense [{batch}, {tokens}, {inputs}] → {outputs}{}", if with_residual { " + residual" } else { "" });
                let seed = (batch * tokens + inputs * outputs) as u64;
                let run = |device: &Device, ours: bool| {
                    let layer = layer(inputs, outputs, seed, device);
                    let x = tensor([batch, tokens, inputs], seed + 2, device).require_grad();
                    let residual = tensor([batch, tokens, outputs], seed + 4, device).require_grad();
                    let out = match (ours, with_residual) {
                        (true, false) => crate::ops::linear(&layer, x.clone()),
                        (true, true) => crate::ops::dense::linear_residual(&layer, x.clone(), residual.clone(), &no_dropout),
                        (false, false) => layer.forward(x.clone()),
                        (false, true) => residual.clone() + layer.forward(x.clone()),
                    };
                    let upstream = tensor([batch, tokens, outputs], seed + 3, device);
                    let grads = (out.clone() * upstream).sum().backward();
                    let bias = layer.bias.as_ref().expect("a bias");
                    let d_residual = if with_residual { residual.grad(&grads).expect("∂residual") } else { residual.detach() };
                    (
                        out.detach(),
                        x.grad(&grads).expect("∂x"),
                        layer.weight.grad(&grads).expect("∂W"),
                        bias.grad(&grads).expect("∂b"),
                        d_residual,
                    )
                };
                let (out, dx, dw, db, dr) = run(&gpu, true);
                let (out_cpu, dx_cpu, dw_cpu, db_cpu, dr_cpu) = run(&cpu, false);
                compare_tensors(&format!("{what}: output"), out, out_cpu, 1e-5).await?;
                compare_tensors(&format!("{what}: ∂x"), dx, dx_cpu, 1e-5).await?;
                compare_tensors(&format!("{what}: ∂W"), dw, dw_cpu, 1e-5).await?;
                compare_tensors(&format!("{what}: ∂b"), db, db_cpu, 1e-5).await?;
                compare_tensors(&format!("{what}: ∂residual"), dr, dr_cpu, 1e-5).await?;
            }
            Ok(())
        }
    })
    .await
}

/// An MLP's first layer, `gelu(x·W + b)`, against burn's `Linear` and GELU on the CPU: for
/// inference, GELU applied by the product as it writes (in both kernel families, at the shapes
/// [`dense_layers`] takes), and in training the two operations, gradients too.
pub async fn dense_gelu_layers(device: &Device) -> CheckResult {
    let cpu = Device::flex().autodiff();
    in_every_product_kernel(|_| {
        let cpu = cpu.clone();
        async move {
            for [batch, tokens, inputs, outputs] in [[2, 65, 128, 256], [70, 65, 32, 24], [3, 7, 6, 10]] {
                let what = format!("dense [{batch}, {tokens}, {inputs}] → {outputs}, GELU");
                let seed = (batch * tokens + inputs * outputs) as u64;
                let run = |device: &Device, ours: bool| {
                    let layer = layer(inputs, outputs, seed, device);
                    let x = (tensor([batch, tokens, inputs], seed + 2, device) * 3.0).require_grad();
                    let out = if ours { crate::ops::dense::linear_gelu(&layer, x.clone()) } else { burn::tensor::activation::gelu(layer.forward(x.clone())) };
                    let grads = (out.clone() * tensor([batch, tokens, outputs], seed + 3, device)).sum().backward();
                    (out.detach(), x.grad(&grads).expect("∂x"), layer.weight.grad(&grads).expect("∂W"))
                };
                let inference = crate::ops::dense::linear_gelu(&layer(inputs, outputs, seed, device), tensor([batch, tokens, inputs], seed + 2, device) * 3.0);
                let (out, dx, dw) = run(&device.clone().autodiff(), true);
                let (out_cpu, dx_cpu, dw_cpu) = run(&cpu, false);
                compare_tensors(&format!("{what}: inference"), inference, out_cpu.clone(), 1e-5).await?;
                compare_tensors(&format!("{what}: output"), out, out_cpu, 1e-5).await?;
                compare_tensors(&format!("{what}: ∂x"), dx, dx_cpu, 1e-5).await?;
                compare_tensors(&format!("{what}: ∂W"), dw, dw_cpu, 1e-5).await?;
            }
            Ok(())
        }
    })
    .await
}

/// An encoder block's MLP branch as one operation, `residual + gelu(x·W₁ + b₁)·W₂ + b₂`, against
/// burn's `Linear`s and GELU on the CPU: the output and all six gradients in training (GELU's
/// input kept by the first product, its slope applied by the product that makes `∂z`), and the
/// output in inference; in both kernel families, at the model's shape and at one the software
/// kernel's vec4 loads do not fit.
pub async fn mlp_blocks(device: &Device) -> CheckResult {
    let (gpu, cpu) = (device.clone().autodiff(), Device::flex().autodiff());
    let no_dropout = burn::nn::DropoutConfig::new(0.0).init();
    in_every_product_kernel(|_| {
        let (gpu, cpu, no_dropout) = (gpu.clone(), cpu.clone(), no_dropout.clone());
        async move {
            for [batch, tokens, dim, hidden] in [[2, 65, 128, 256], [3, 7, 6, 10]] {
                let what = format!("MLP [{batch}, {tokens}, {dim}] → {hidden} → {dim}");
                let seed = (batch * tokens + dim * hidden) as u64;
                let run = |device: &Device, ours: bool| {
                    let (mlp_in, mlp_out) = (layer(dim, hidden, seed, device), layer(hidden, dim, seed + 10, device));
                    let x = (tensor([batch, tokens, dim], seed + 2, device) * 2.0).require_grad();
                    let residual = tensor([batch, tokens, dim], seed + 4, device).require_grad();
                    let out = if ours {
                        crate::ops::dense::mlp_residual(&mlp_in, &mlp_out, x.clone(), residual.clone(), &no_dropout)
                    } else {
                        residual.clone() + mlp_out.forward(burn::tensor::activation::gelu(mlp_in.forward(x.clone())))
                    };
                    let grads = (out.clone() * tensor([batch, tokens, dim], seed + 3, device)).sum().backward();
                    let bias = |layer: &Linear| layer.bias.as_ref().expect("a bias").grad(&grads).expect("∂b");
                    let gradients: [(&str, Tensor<1>); 6] = [
                        ("∂x", x.grad(&grads).expect("∂x").reshape([-1])),
                        ("∂residual", residual.grad(&grads).expect("∂residual").reshape([-1])),
                        ("∂W₁", mlp_in.weight.grad(&grads).expect("∂W₁").reshape([-1])),
                        ("∂b₁", bias(&mlp_in)),
                        ("∂W₂", mlp_out.weight.grad(&grads).expect("∂W₂").reshape([-1])),
                        ("∂b₂", bias(&mlp_out)),
                    ];
                    (out.detach(), gradients)
                };
                let (inference_in, inference_out) = (layer(dim, hidden, seed, device), layer(hidden, dim, seed + 10, device));
                let inference = crate::ops::dense::mlp_residual(
                    &inference_in,
                    &inference_out,
                    tensor([batch, tokens, dim], seed + 2, device) * 2.0,
                    tensor([batch, tokens, dim], seed + 4, device),
                    &no_dropout,
                );
                let ((out, gradients), (out_cpu, gradients_cpu)) = (run(&gpu, true), run(&cpu, false));
                compare_tensors(&format!("{what}: inference"), inference, out_cpu.clone(), 1e-5).await?;
                compare_tensors(&format!("{what}: output"), out, out_cpu, 1e-5).await?;
                for ((name, ours), (_, expected)) in gradients.into_iter().zip(gradients_cpu) {
                    compare_tensors(&format!("{what}: {name}"), ours, expected, 1e-5).await?;
                }
            }
            Ok(())
        }
    })
    .await
}

/// The layer norm's output and its three gradients against burn's `LayerNorm` on the CPU, over a
/// few rows and over more than one invocation may sum (the scale's and shift's gradients split);
/// and the same of each image's first token alone against burn's narrow, then the norm.
pub async fn layer_norms(device: &Device) -> CheckResult {
    use burn::nn::LayerNormConfig;
    let (gpu, cpu) = (device.clone().autodiff(), Device::flex().autodiff());
    in_both_families(|_| {
        let (gpu, cpu) = (gpu.clone(), cpu.clone());
        async move {
            // Rows enough for the scale's and shift's sums to be split, and for their partial
            // sums to take a workgroup each (more than 32 ranges of 256 rows).
            let shapes = [[2, 65, 128], [70, 65, 16], [140, 65, 8]];
            for ([batch, tokens, width], first_token) in shapes.into_iter().flat_map(|shape| [(shape, false), (shape, true)]) {
                let what = format!("layer norm [{batch}, {tokens}, {width}]{}", if first_token { ", first tokens" } else { "" });
                let seed = (batch * tokens * width) as u64;
                let run = |device: &Device, ours: bool| {
                    let mut norm = LayerNormConfig::new(width).with_epsilon(crate::ops::layer_norm::EPSILON).init(device);
                    norm.gamma = Param::from_tensor(tensor([width], seed, device));
                    norm.beta = Some(Param::from_tensor(tensor([width], seed + 1, device)));
                    let x = (tensor([batch, tokens, width], seed + 2, device) * 3.0 + 0.5).require_grad();
                    let out = match (ours, first_token) {
                        (true, false) => crate::ops::layer_norm(&norm, x.clone()),
                        (false, false) => norm.forward(x.clone()),
                        (true, true) => crate::ops::layer_norm::first_token_layer_norm(&norm, x.clone()),
                        (false, true) => norm.forward(x.clone().narrow(1, 0, 1)),
                    };
                    let out_rows = if first_token { 1 } else { tokens };
                    let grads = (out.clone() * tensor([batch, out_rows, width], seed + 3, device)).sum().backward();
                    let beta = norm.beta.as_ref().expect("a shift");
                    let gradients = [norm.gamma.grad(&grads).expect("∂gamma"), beta.grad(&grads).expect("∂beta")];
                    (out.detach(), x.grad(&grads).expect("∂x"), gradients)
                };
                let (out, dx, [dgamma, dbeta]) = run(&gpu, true);
                let (out_cpu, dx_cpu, [dgamma_cpu, dbeta_cpu]) = run(&cpu, false);
                compare_tensors(&format!("{what}: output"), out, out_cpu, 1e-5).await?;
                compare_tensors(&format!("{what}: ∂x"), dx, dx_cpu, 1e-5).await?;
                compare_tensors(&format!("{what}: ∂gamma"), dgamma, dgamma_cpu, 1e-5).await?;
                compare_tensors(&format!("{what}: ∂beta"), dbeta, dbeta_cpu, 1e-5).await?;
            }
            Ok(())
        }
    })
    .await
}

/// GELU and its gradient against burn's (libm's erf) on the CPU, four values per invocation
/// and, at a length no multiple of 4, one.
pub async fn gelus(device: &Device) -> CheckResult {
    let (gpu, cpu) = (device.clone().autodiff(), Device::flex().autodiff());
    for shape in [[3, 65, 40], [3, 5, 7]] {
        let run = |device: &Device, ours: bool| {
            let x = (tensor(shape, 5, device) * 6.0).require_grad();
            let out = if ours { crate::ops::gelu(x.clone()) } else { burn::tensor::activation::gelu(x.clone()) };
            let grads = (out.clone() * tensor(shape, 6, device)).sum().backward();
            (out.detach(), x.grad(&grads).expect("∂x"))
        };
        let ((out, dx), (out_cpu, dx_cpu)) = (run(&gpu, true), run(&cpu, false));
        compare_tensors(&format!("gelu {shape:?}"), out, out_cpu, 2e-6).await?;
        compare_tensors(&format!("gelu {shape:?}: ∂x"), dx, dx_cpu, 2e-6).await?;
    }
    Ok(())
}

/// The attention core's output, softmax weights and gradient against burn's composition on the
/// CPU (heads of 32 values as in the model, and of 4).
pub async fn attention_cores(device: &Device) -> CheckResult {
    let (gpu, cpu) = (device.clone().autodiff(), Device::flex().autodiff());
    let no_dropout = burn::nn::DropoutConfig::new(0.0).init();
    for [batch, tokens, heads, head_dim] in [[2, 65, 4, 32], [3, 7, 2, 4]] {
        let what = format!("attention [{batch}, {tokens}], {heads} heads of {head_dim}");
        let width = 3 * heads * head_dim;
        let run = |device: &Device, ours: bool| {
            let qkv = (tensor([batch, tokens, width], width as u64, device) * 2.0).require_grad();
            let (out, weights) = if ours {
                crate::ops::attention_core(qkv.clone(), heads, &no_dropout)
            } else {
                crate::ops::attention::composed_attention_core(qkv.clone(), heads, &no_dropout)
            };
            let upstream = tensor([batch, tokens, heads * head_dim], 9, device);
            let grads = (out.clone() * upstream).sum().backward();
            (out.detach(), weights.detach(), qkv.grad(&grads).expect("∂qkv"))
        };
        let ((out, weights, dqkv), (out_cpu, weights_cpu, dqkv_cpu)) = (run(&gpu, true), run(&cpu, false));
        compare_tensors(&format!("{what}: output"), out, out_cpu, 1e-5).await?;
        compare_tensors(&format!("{what}: weights"), weights, weights_cpu, 1e-5).await?;
        compare_tensors(&format!("{what}: ∂qkv"), dqkv, dqkv_cpu, 1e-5).await?;
    }
    Ok(())
}

/// Three AdamW steps of the fused kernel against burn's AdamW on the CPU, through the training
/// loop's optimiser (`training::Trainer` uses it on a GPU).
pub async fn adamw_steps(device: &Device) -> CheckResult {
    use super::super::adamw::{AdamWStep, adamw_update};
    use burn::optim::{AdamWConfig, Optimizer};
    let cpu = Device::flex();
    let adamw = AdamWConfig::new().with_weight_decay(0.05).with_epsilon(1e-8).build();
    let (mut param, mut moment_1, mut moment_2) =
        (tensor([130, 7], 1, device), Tensor::<2>::zeros([130, 7], device), Tensor::<2>::zeros([130, 7], device));
    let (mut param_cpu, mut state) = (tensor([130, 7], 1, &cpu), None);
    for time in 1..=3 {
        let learning_rate = 1e-3 * time as f64;
        let grad_values = values(130 * 7, 10 + time as u64);
        let grad = Tensor::<2>::from_data(TensorData::new(grad_values.clone(), [130, 7]), device);
        let step = AdamWStep::new(learning_rate, 0.05, [0.9, 0.999], 1e-8, time);
        (param, moment_1, moment_2) = adamw_update(param, grad, moment_1, moment_2, step);
        let grad_cpu = Tensor::<2>::from_data(TensorData::new(grad_values, [130, 7]), &cpu);
        let (next, next_state) = adamw.step(learning_rate, param_cpu, grad_cpu, state);
        (param_cpu, state) = (next, next_state);
        compare_tensors(&format!("AdamW step {time}: parameters"), param.clone(), param_cpu.clone(), 1e-6).await?;
    }
    let momentum = state.expect("AdamW keeps state").momentum;
    compare_tensors("AdamW: first moment", moment_1, momentum.moment_1, 1e-6).await?;
    compare_tensors("AdamW: second moment", moment_2, momentum.moment_2, 1e-6).await
}

/// The fused cross-entropy's loss, count and gradient against burn's loss on the CPU, with and
/// without label smoothing, over more rows than one invocation takes.
pub async fn cross_entropies(device: &Device) -> CheckResult {
    use burn::nn::loss::CrossEntropyLossConfig;
    use burn::tensor::Int;
    let (gpu, cpu) = (device.clone().autodiff(), Device::flex().autodiff());
    for (rows, classes, smoothing) in [(200, 10, 0.0), (7, 3, 0.1)] {
        let what = format!("cross-entropy of {rows} × {classes}, smoothing {smoothing}");
        let labels: Vec<i64> = (0..rows as u64).map(|row| (splitmix64(99, row) % classes as u64) as i64).collect();
        let run = |device: &Device, ours: bool| {
            let logits = (tensor([rows, classes], 3, device) * 4.0).require_grad();
            let labels = Tensor::<1, Int>::from_data(TensorData::new(labels.clone(), [rows]), device);
            let (loss, correct) = if ours {
                crate::ops::cross_entropy::cross_entropy(logits.clone(), labels, smoothing)
            } else {
                let smoothing = (smoothing > 0.0).then_some(smoothing);
                let loss = CrossEntropyLossConfig::new().with_smoothing(smoothing).init(device).forward(logits.clone(), labels.clone());
                (loss, logits.clone().argmax(1).squeeze_dim::<1>(1).equal(labels).float().sum())
            };
            let grads = (loss.clone() * 3.0).backward();
            (loss.detach(), correct, logits.grad(&grads).expect("∂logits"))
        };
        let ((loss, correct, dlogits), (loss_cpu, correct_cpu, dlogits_cpu)) = (run(&gpu, true), run(&cpu, false));
        compare_tensors(&format!("{what}: loss"), loss, loss_cpu, 1e-5).await?;
        compare_tensors(&format!("{what}: correct"), correct, correct_cpu, 0.0).await?;
        compare_tensors(&format!("{what}: ∂logits"), dlogits, dlogits_cpu, 1e-5).await?;
    }
    Ok(())
}

/// The token assembly's output and its three gradients against burn's composition on the CPU:
/// the model's shape in one range of images, and batches of several ranges, the last one short
/// (the positions' gradient summed in two passes).
pub async fn token_assemblies(device: &Device) -> CheckResult {
    use crate::ops::token_assembly::{assemble_tokens, composed_assemble_tokens};
    let (gpu, cpu) = (device.clone().autodiff(), Device::flex().autodiff());
    for [batch, patches, width] in [[2, 64, 128], [70, 16, 8], [33, 3, 4]] {
        let what = format!("tokens of [{batch}, {patches}, {width}]");
        let run = |device: &Device, ours: bool| {
            let patches_in = tensor([batch, patches, width], 21, device).require_grad();
            let class_token = tensor([1, 1, width], 22, device).require_grad();
            let positions = tensor([1, patches + 1, width], 23, device).require_grad();
            let compose = if ours { assemble_tokens } else { composed_assemble_tokens };
            let out = compose(patches_in.clone(), class_token.clone(), positions.clone());
            let grads = (out.clone() * tensor([batch, patches + 1, width], 24, device)).sum().backward();
            let gradient = |tensor: &Tensor<3>| tensor.grad(&grads).expect("a gradient");
            (out.detach(), [gradient(&patches_in), gradient(&class_token), gradient(&positions)])
        };
        let ((out, [dpatches, dclass, dpositions]), (out_cpu, [dpatches_cpu, dclass_cpu, dpositions_cpu])) =
            (run(&gpu, true), run(&cpu, false));
        compare_tensors(&format!("{what}: tokens"), out, out_cpu, 1e-6).await?;
        compare_tensors(&format!("{what}: ∂patches"), dpatches, dpatches_cpu, 1e-6).await?;
        compare_tensors(&format!("{what}: ∂class token"), dclass, dclass_cpu, 1e-5).await?;
        compare_tensors(&format!("{what}: ∂positions"), dpositions, dpositions_cpu, 1e-5).await?;
    }
    Ok(())
}
