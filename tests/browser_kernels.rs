//! A benchmark, not a test (ignored unless asked for): the time of the tiny ViT's main kernels on
//! WebGPU inside the browser, at the shapes `bench --backend wgpu` measures natively, so the two
//! can be set side by side. Each kernel runs four times; the first includes compiling it, and each
//! run waits for a one-element readback of its output (also timed alone, with a launch's cost).
//!
//! ```text
//! cargo test --target wasm32-unknown-unknown --test browser_kernels -- --include-ignored --nocapture
//! ```
#![cfg(target_family = "wasm")]

use burn::tensor::Tensor;
use vit_web::compute::ComputePath;
use vit_web::step_kernels::{StepKernel, step_kernels};
use vit_web::web::adapter::init_device;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

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
    let device = init_device(ComputePath::WebGpu).await.expect("WebGPU");
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
