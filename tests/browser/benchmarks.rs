//! Benchmarks, not tests (ignored unless asked for), on WebGPU inside the browser:
//! `webgpu_kernel_times` times the tiny ViT's main kernels at the shapes `bench --backend wgpu`
//! measures natively, so the two can be set side by side. Each kernel runs four times; the first
//! includes compiling it, and each run waits for a one-element readback of its output (also timed
//! alone, with a launch's cost). `webgpu_step_parts` splits a batch-64 training step into its
//! forward pass (and parts of it), backward pass and optimiser.
//!
//! ```text
//! cargo test --release --target wasm32-unknown-unknown --test browser -- --include-ignored --nocapture webgpu_kernel_times
//! cargo test --release --target wasm32-unknown-unknown --test browser -- --include-ignored --nocapture webgpu_step_parts
//! ```
//!
//! A module of the `browser` test binary rather than a binary of its own: each wasm test binary
//! is linked with the release profile's LTO, which took this one 6.6 minutes of every test run
//! that only built it.

use burn::tensor::Tensor;
use vit_web::ops::step_kernels::{StepKernel, step_kernels};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

use super::webgpu;

fn now_ms() -> f64 {
    let scope: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    scope.performance().expect("workers have performance").now()
}

async fn wait_for(tensor: Tensor<4>) {
    tensor.slice([0..1, 0..1, 0..1, 0..1]).into_data_async().await.expect("readback");
}

/// The first run's time and the median of the next three, in milliseconds.
async fn time_runs(run: impl Fn() -> Tensor<4>) -> (f64, f64) {
    let mut times = Vec::new();
    for _ in 0..4 {
        let started = now_ms();
        wait_for(run()).await;
        times.push(now_ms() - started);
    }
    let mut later = times[1..].to_vec();
    later.sort_by(f64::total_cmp);
    (times[0], later[later.len() / 2])
}

#[wasm_bindgen_test]
#[ignore = "a benchmark: run with --include-ignored --nocapture"]
async fn webgpu_kernel_times() {
    let device = webgpu().await;
    let print = |line: String| web_sys::console::log_1(&line.into());
    // What a launch and a readback cost alone: kernels with nothing to do, already compiled.
    let mut counter = Tensor::<4>::zeros([1, 1, 1, 1], &device) + 1.0;
    wait_for(counter.clone()).await;
    let started = now_ms();
    for _ in 0..100 {
        counter = counter + 1.0;
    }
    wait_for(counter.clone()).await;
    let launch = (now_ms() - started) / 100.0;
    let (_, readback) = time_runs(|| counter.clone()).await;
    print(format!("{{\"bench\":\"browser_kernel\",\"launch_ms\":{launch:.3},\"readback_ms\":{readback:.2}}}"));
    for batch in [8usize, 64] {
        for StepKernel { name, flops, run } in step_kernels(batch, &device) {
            let (first, ms) = time_runs(run).await;
            let rate = if flops > 0.0 { format!(",\"gflop_per_second\":{:.2}", flops / ms / 1e6) } else { String::new() };
            print(format!(
                "{{\"bench\":\"browser_kernel\",\"batch\":{batch},\"kernel\":\"{name}\",\"first_ms\":{first:.1},\"ms\":{ms:.1}{rate}}}"
            ));
        }
    }
}

/// Where a WebGPU training step's time goes, at batch 64: the forward pass and its parts, the
/// backward pass, and the optimiser (the rest of a full step).
#[wasm_bindgen_test]
#[ignore = "a benchmark: run with --include-ignored --nocapture"]
async fn webgpu_step_parts() {
    use burn::tensor::{Distribution, Int, TensorData};
    use vit_web::model::VitConfig;
    use vit_web::training::{OptimizerRecipe, Trainer};
    let device = webgpu().await;
    let print = |line: String| web_sys::console::log_1(&line.into());
    let batch = 64;
    let part = |name: &str, first: f64, ms: f64| {
        format!("{{\"bench\":\"browser_step_part\",\"batch\":{batch},\"part\":\"{name}\",\"first_ms\":{first:.0},\"ms\":{ms:.0}}}")
    };
    let config = VitConfig::tiny();
    let images = Tensor::<4>::random([batch, 3, 32, 32], Distribution::Normal(0.0, 1.0), &device);
    let model = config.init(&device);
    let tokens = Tensor::<3>::random([batch, 65, 128], Distribution::Normal(0.0, 1.0), &device);

    let (first, ms) = time_runs(|| model.patch_embedding.forward(images.clone()).unsqueeze()).await;
    print(part("forward_patch_embedding", first, ms));
    let (first, ms) = time_runs(|| model.blocks[0].forward(tokens.clone()).0.unsqueeze()).await;
    print(part("forward_one_block", first, ms));
    let block = &model.blocks[0];
    let (first, ms) = time_runs(|| block.attention.forward(tokens.clone()).0.unsqueeze()).await;
    print(part("forward_attention", first, ms));
    let (first, ms) = time_runs(|| block.attention_norm.forward(tokens.clone()).unsqueeze()).await;
    print(part("forward_layer_norm", first, ms));
    let (first, ms) = time_runs(|| vit_web::ops::linear(&block.mlp_in, tokens.clone()).unsqueeze()).await;
    print(part("forward_linear_128_256", first, ms));
    let (first, ms) = time_runs(|| model.forward(images.clone()).unsqueeze()).await;
    print(part("forward", first, ms));

    let autodiff = device.clone().autodiff();
    let block = config.init(&autodiff).blocks.remove(0);
    let block_tokens = Tensor::<3>::from_inner(tokens.clone());
    let (first, ms) = time_runs(|| {
        let tokens = block_tokens.clone().require_grad();
        let grads = block.forward(tokens.clone()).0.sum().backward();
        tokens.grad(&grads).expect("∂tokens").unsqueeze()
    })
    .await;
    print(part("forward_backward_one_block", first, ms));

    let model = config.init(&autodiff);
    let images_ad = Tensor::<4>::from_inner(images.clone());
    let (first, ms) = time_runs(|| {
        let grads = model.forward(images_ad.clone()).sum().backward();
        model.head.weight.grad(&grads).expect("∂head").unsqueeze()
    })
    .await;
    print(part("forward_backward", first, ms));

    let labels = Tensor::<1, Int>::from_data(TensorData::new((0..batch as i64).map(|i| i % 10).collect::<Vec<_>>(), [batch]), &autodiff);
    let trainer = std::cell::RefCell::new(Trainer::new(config.init(&autodiff), OptimizerRecipe::default(), 100, &autodiff));
    let (first, ms) = time_runs(|| {
        let output = trainer.borrow_mut().step(images_ad.clone(), labels.clone());
        output.loss.unsqueeze()
    })
    .await;
    print(part("training_step", first, ms));
}
