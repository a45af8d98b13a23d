//! Browser tests: run in headless Chromium by `scripts/test.sh` (wasm-bindgen-test-runner with
//! chromedriver). They exercise the real WebGPU path (SwiftShader on CI machines) and the wasm
//! CPU path. SwiftShader is a CPU emulating a GPU, so the work here is kept small.
//!
//! `scripts/test.sh` runs them in headless Firefox too, built with
//! `VIT_WEB_BROWSER_WITHOUT_WEBGPU=1` (build.rs turns it into `cfg(browser_without_webgpu)`): the
//! WebGPU tests are then ignored with the reason printed, never passed in silence, and a Chromium
//! build, where the variable is unset, still fails if WebGPU does not start.
//!
//! `benchmarks` (benchmarks.rs beside this file) times kernels and a step's parts; ignored unless
//! asked for.
#![cfg(target_family = "wasm")]

mod benchmarks;

use std::cell::RefCell;

use burn::tensor::{Device, Distribution, Int, Tensor, TensorData};
use vit_web::compute::ComputePath;
use vit_web::inference::images_tensor;
use vit_web::model::VitConfig;
use vit_web::model::parity::{deterministic_images, deterministic_weights};
use vit_web::ops::cpu::dropout_mask::DropoutMask;
use vit_web::ops::webgpu::limits::largest_binding;
use vit_web::training::{Initialisation, OptimizerRecipe, Trainer, fresh_model};
use vit_web::web::adapter::{adapter_summary, init_device};
use wasm_bindgen_test::*;

// In a dedicated worker, as the page will train: long synchronous work (the wasm CPU backend)
// then never stalls the page that the test runner polls through chromedriver.
wasm_bindgen_test_configure!(run_in_dedicated_worker);

const PARITY_LOGITS: &str = include_str!("../fixtures/parity_logits.json");
/// Same bar as the native fixture test, relative to max(1, |logit|): float32 sums in another
/// order stay far inside it.
const TOLERANCE: f32 = 1e-4;

thread_local! {
    static WEBGPU: RefCell<Option<Device>> = const { RefCell::new(None) };
}

/// The WebGPU device, initialised once per page as burn requires. Fails loudly, never falls back
/// to the CPU: these tests exist to prove the GPU path.
async fn webgpu() -> Device {
    if let Some(device) = WEBGPU.with(|cell| cell.borrow().clone()) {
        return device;
    }
    let device = init_device(ComputePath::WebGpu).await.expect("burn initialises WebGPU in headless Chromium");
    WEBGPU.with(|cell| *cell.borrow_mut() = Some(device.clone()));
    device
}

async fn read(tensor: Tensor<1>) -> Vec<f32> {
    tensor.into_data_async().await.expect("tensor readback").try_to_vec::<f32>().expect("f32 data")
}

#[wasm_bindgen_test]
#[cfg_attr(browser_without_webgpu, ignore = "this browser has no WebGPU: scripts/test.sh runs this test in Chromium")]
async fn a_webgpu_adapter_is_obtained() {
    let adapter = adapter_summary().await.expect("navigator.gpu gives an adapter (Chromium needs --enable-unsafe-webgpu)");
    web_sys::console::log_1(&format!("WebGPU adapter: {adapter:?}").into());
    let device = webgpu().await;
    assert!(!device.is_autodiff());
    let sum = Tensor::<1>::from_floats([1.0, 2.0, 3.5], &device).sum();
    assert_eq!(read(sum).await, [6.5]);
}

/// The limit a WebGPU training batch is checked against (`training::gpu_step_too_large`) is the
/// one the browser's adapter states: the smaller of its largest storage binding and its largest
/// buffer. The CPU path has none.
#[wasm_bindgen_test]
#[cfg_attr(browser_without_webgpu, ignore = "this browser has no WebGPU: scripts/test.sh runs this test in Chromium")]
async fn the_webgpu_devices_largest_binding_is_the_adapters_limit() {
    use wasm_bindgen::JsValue;
    let device = webgpu().await;
    let stated = js_sys::Function::new_no_args(
        "return navigator.gpu.requestAdapter({ powerPreference: 'high-performance' })
           .then((adapter) => Math.min(adapter.limits.maxStorageBufferBindingSize, adapter.limits.maxBufferSize))",
    );
    let stated = js_sys::Promise::from(stated.call0(&JsValue::NULL).expect("the adapter's limits"));
    let stated = wasm_bindgen_futures::JsFuture::from(stated).await.expect("an adapter").as_f64().expect("a number");
    assert_eq!(largest_binding(&device), Some(stated as u64));
    assert_eq!(largest_binding(&Device::flex()), None);
}

#[wasm_bindgen_test]
#[cfg_attr(browser_without_webgpu, ignore = "this browser has no WebGPU: scripts/test.sh runs this test in Chromium")]
async fn the_tiny_vit_returns_logits_and_attention_of_the_right_shapes_on_webgpu() {
    let device = webgpu().await;
    let config = VitConfig::tiny();
    let model = config.init(&device);
    let images = Tensor::<4>::random([2, 3, 32, 32], Distribution::Normal(0.0, 1.0), &device);
    let output = model.forward_with_attention(images);
    assert_eq!(output.logits.dims(), [2, 10]);
    assert_eq!(output.attention.len(), config.depth);
    for layer in output.attention {
        assert_eq!(layer.dims(), [2, 4, 65, 65]);
        let row_sums = read(layer.sum_dim(3).flatten(0, 3)).await;
        assert!(row_sums.iter().all(|sum| (sum - 1.0).abs() < 1e-4), "attention rows sum to one");
    }
}

async fn parity_logits(device: &Device) -> Vec<f32> {
    let config = VitConfig::tiny();
    let model = deterministic_weights(config.init(device));
    let logits = model.forward(images_tensor(deterministic_images(2), 2, &config, device));
    read(logits.flatten(0, 1)).await
}

fn assert_matches_native(logits: &[f32], path: &str) {
    let expected: Vec<f32> = serde_json::from_str(PARITY_LOGITS).expect("fixture is JSON");
    assert_close(logits, &expected, &format!("{path} logits against the native computation"));
}

/// Every value within [`TOLERANCE`] of the reference, relative to max(1, |reference|).
fn assert_close(ours: &[f32], reference: &[f32], what: &str) {
    assert_eq!(ours.len(), reference.len(), "{what}: lengths differ");
    for (index, (got, want)) in ours.iter().zip(reference).enumerate() {
        assert!((got - want).abs() <= TOLERANCE * want.abs().max(1.0), "{what}[{index}]: {got} against {want}");
    }
}

#[wasm_bindgen_test]
#[cfg_attr(browser_without_webgpu, ignore = "this browser has no WebGPU: scripts/test.sh runs this test in Chromium")]
async fn webgpu_logits_equal_the_native_cpu_computation() {
    let logits = parity_logits(&webgpu().await).await;
    assert_matches_native(&logits, "WebGPU");
}

#[wasm_bindgen_test]
async fn wasm_cpu_logits_equal_the_native_cpu_computation() {
    let logits = parity_logits(&Device::flex()).await;
    assert_matches_native(&logits, "wasm CPU");
}

/// Three AdamW steps of `config`'s model on one fixed batch must lower its loss.
async fn training_lowers_the_loss(device: Device, config: VitConfig) -> (f32, f32) {
    let device = device.autodiff();
    let batch = 8;
    let images = Tensor::<4>::random([batch, 3, 32, 32], Distribution::Normal(0.0, 1.0), &device);
    let labels = Tensor::<1, Int>::from_data(TensorData::new((0..batch as i64).collect::<Vec<_>>(), [batch]), &device);
    let mut trainer = Trainer::new(config.init(&device), OptimizerRecipe::default(), 100, &device);
    let first = read(trainer.step(images.clone(), labels.clone()).loss).await[0];
    trainer.step(images.clone(), labels.clone());
    let last = read(trainer.step(images, labels).loss).await[0];
    assert!(last < first, "loss went from {first} to {last}");
    (first, last)
}

#[wasm_bindgen_test]
#[cfg_attr(browser_without_webgpu, ignore = "this browser has no WebGPU: scripts/test.sh runs this test in Chromium")]
async fn training_steps_lower_the_loss_on_webgpu() {
    let (first, last) = training_lowers_the_loss(webgpu().await, VitConfig::tiny()).await;
    web_sys::console::log_1(&format!("WebGPU training loss {first} -> {last}").into());
}

#[wasm_bindgen_test]
async fn training_steps_lower_the_loss_on_the_wasm_cpu_backend() {
    training_lowers_the_loss(Device::flex(), VitConfig::tiny()).await;
}

/// The small preset trains with its dropout: burn's masks on WebGPU, the CPU path's own
/// (`ops::dropout`, inside the fused attention too) on the wasm CPU backend.
async fn the_small_preset_trains_with_dropout(device: Device, path: &str) {
    device.seed(1);
    let (first, last) = training_lowers_the_loss(device, VitConfig::small()).await;
    web_sys::console::log_1(&format!("{path} small preset loss {first} -> {last}").into());
}

#[wasm_bindgen_test]
#[cfg_attr(browser_without_webgpu, ignore = "this browser has no WebGPU: scripts/test.sh runs this test in Chromium")]
async fn the_small_preset_trains_with_dropout_on_webgpu() {
    the_small_preset_trains_with_dropout(webgpu().await, "WebGPU").await;
}

#[wasm_bindgen_test]
async fn the_small_preset_trains_with_dropout_on_the_wasm_cpu_backend() {
    the_small_preset_trains_with_dropout(Device::flex(), "wasm CPU").await;
}

/// The recipe's seed decides a fresh model's weights on either path, as the page's seed field
/// promises: burn draws them from the device's random numbers, seeded by `fresh_model`.
async fn a_seed_decides_a_fresh_models_weights(device: Device, path: &str) {
    let config = VitConfig::tiny();
    let weights = async |seed| {
        let model = fresh_model(&config, Initialisation::Default, seed, &device);
        read(model.blocks[0].attention.qkv.weight.val().flatten(0, 1)).await
    };
    let first = weights(5).await;
    assert!(first == weights(5).await, "{path}: seed 5 gave two different models");
    assert!(first != weights(6).await, "{path}: seeds 5 and 6 gave the same model");
}

#[wasm_bindgen_test]
#[cfg_attr(browser_without_webgpu, ignore = "this browser has no WebGPU: scripts/test.sh runs this test in Chromium")]
async fn a_seed_decides_a_fresh_models_weights_on_webgpu() {
    a_seed_decides_a_fresh_models_weights(webgpu().await, "WebGPU").await;
}

#[wasm_bindgen_test]
async fn a_seed_decides_a_fresh_models_weights_on_the_wasm_cpu_backend() {
    a_seed_decides_a_fresh_models_weights(Device::flex(), "wasm CPU").await;
}

/// A dropout mask is the same numbers in wasm32 (a 32-bit `usize`) as natively: the figures of
/// the native unit test `ops::cpu::dropout_mask::tests::a_known_mask`.
#[wasm_bindgen_test]
fn dropout_masks_are_the_native_ones() {
    let mask = DropoutMask::new(0.25, 12_345);
    let dropped: Vec<usize> = (0..10_000).filter(|&i| mask.factor(i) == 0.0).collect();
    assert_eq!((dropped.len(), &dropped[..8]), (2_501, &[0, 1, 2, 3, 6, 10, 20, 22][..]));
}

/// The wasm CPU path's own matrix product (`ops::cpu::panel_product`, in simd128) gives the
/// product's definition at every edge of its tiles: rows that are not whole tiles, columns that
/// are not whole panels, a sum deeper than one packed block, transposed operands, accumulation,
/// a scale, and an output wider than the product whose other columns stay as they were.
#[wasm_bindgen_test]
fn the_wasm_matrix_product_is_its_definition() {
    use vit_web::ops::cpu::product::Product;
    let values = |len: usize, seed: usize| -> Vec<f32> { (0..len).map(|i| ((i * 7919 + seed * 104_729) % 2001) as f32 / 1000.0 - 1.0).collect() };
    for (m, n, k) in [(1, 1, 1), (7, 13, 5), (65, 65, 32), (70, 20, 259), (130, 9, 512)] {
        for (transposed_lhs, transposed_rhs, accumulate) in [(false, false, false), (true, false, true), (false, true, true)] {
            let (lhs, rhs) = (values(m * k, 1), values(k * n, 2));
            let lhs_strides = if transposed_lhs { (1, m) } else { (k, 1) };
            let rhs_strides = if transposed_rhs { (1, k) } else { (n, 1) };
            let out_rs = n + 3;
            let mut ours = values(m * out_rs, 3);
            let start = ours.clone();
            unsafe {
                Product::new(m, n, k).run(ours.as_mut_ptr(), (out_rs, 1), accumulate, lhs.as_ptr(), lhs_strides, rhs.as_ptr(), rhs_strides, 0.5)
            };
            for row in 0..m {
                for column in 0..out_rs {
                    let at = row * out_rs + column;
                    let expected = if column >= n {
                        start[at]
                    } else {
                        let sum: f32 = (0..k).map(|i| lhs[row * lhs_strides.0 + i * lhs_strides.1] * rhs[i * rhs_strides.0 + column * rhs_strides.1]).sum();
                        0.5 * sum + if accumulate { start[at] } else { 0.0 }
                    };
                    let tolerance = 1e-5 * (k as f32).sqrt() * (1.0 + expected.abs());
                    assert!((ours[at] - expected).abs() <= tolerance, "{m}×{n}×{k} {lhs_strides:?} {rhs_strides:?} at ({row}, {column}): {} against {expected}", ours[at]);
                }
            }
        }
    }
}

/// A weight file written from WebGPU reads back and writes again bit for bit, and equals the
/// file the wasm CPU backend writes for the same weights.
#[wasm_bindgen_test]
#[cfg_attr(browser_without_webgpu, ignore = "this browser has no WebGPU: scripts/test.sh runs this test in Chromium")]
async fn weight_files_round_trip_bit_for_bit_on_webgpu() {
    use vit_web::weights::{WeightFileInfo, from_safetensors, to_safetensors_async};
    let device = webgpu().await;
    let config = VitConfig::tiny();
    let info = WeightFileInfo::new(config.clone(), Some(vit_web::model::Preset::Tiny));
    let written = to_safetensors_async(&deterministic_weights(config.init(&device)), &info).await.expect("WebGPU weights save");
    let (reloaded, _) = from_safetensors(&written, &device).expect("the file loads");
    let rewritten = to_safetensors_async(&reloaded, &info).await.expect("reloaded weights save");
    assert!(written == rewritten, "the round trip changed the file");
    let on_cpu = to_safetensors_async(&deterministic_weights(config.init(&Device::flex())), &info).await.expect("CPU weights save");
    assert!(written == on_cpu, "WebGPU and the wasm CPU backend write different files for the same weights");
}

async fn read3(tensor: Tensor<3>) -> Vec<f32> {
    read(tensor.flatten(0, 2)).await
}

/// The batched product (the kernel family the adapter picks) gives burn's matmul results on the
/// same device, values and both gradients, at the model's shapes and ragged edges.
#[wasm_bindgen_test]
#[cfg_attr(browser_without_webgpu, ignore = "this browser has no WebGPU: scripts/test.sh runs this test in Chromium")]
async fn blocked_matmul_agrees_with_burns_matmul_on_webgpu() {
    use vit_web::ops::dense::blocked_matmul;
    let device = webgpu().await.autodiff();
    let shapes = [[1, 520, 128, 384], [3, 7, 12, 20], [2, 65, 32, 65], [2, 65, 65, 32], [2, 1, 3, 1], [1, 5, 4, 6]];
    for [batch, m, k, n] in shapes {
        let random = |shape: [usize; 3]| Tensor::<3>::random(shape, Distribution::Normal(0.0, 1.0), &device);
        let (lhs, rhs, weights) = (random([batch, m, k]).require_grad(), random([batch, k, n]).require_grad(), random([batch, m, n]));
        let what = format!("[{batch}, {m}, {k}] · [{batch}, {k}, {n}]");

        let ours = blocked_matmul(lhs.clone(), rhs.clone());
        let grads = (ours.clone() * weights.clone()).sum().backward();
        let (ours_lhs, ours_rhs) = (lhs.grad(&grads).expect("∂lhs"), rhs.grad(&grads).expect("∂rhs"));
        let burns = lhs.clone().matmul(rhs.clone());
        let grads = (burns.clone() * weights).sum().backward();
        let (burns_lhs, burns_rhs) = (lhs.grad(&grads).expect("∂lhs"), rhs.grad(&grads).expect("∂rhs"));

        assert_close(&read3(ours.inner()).await, &read3(burns.inner()).await, &format!("{what} against burn's"));
        assert_close(&read3(ours_lhs).await, &read3(burns_lhs).await, &format!("∂lhs of {what} against burn's"));
        assert_close(&read3(ours_rhs).await, &read3(burns_rhs).await, &format!("∂rhs of {what} against burn's"));
    }
}

/// Each GPU operation against its definition on the CPU backend, in both kernel families: the
/// same checks `tests/gpu_ops.rs` runs natively (`vit_web::ops::webgpu::checks`).
mod gpu_operations {
    use super::webgpu;
    use vit_web::ops::webgpu::checks;
    use wasm_bindgen_test::*;

    fn check(result: checks::CheckResult) {
        if let Err(problem) = result {
            panic!("{problem}");
        }
    }

    #[wasm_bindgen_test]
    #[cfg_attr(browser_without_webgpu, ignore = "this browser has no WebGPU: scripts/test.sh runs this test in Chromium")]
    async fn batched_products_are_their_definition() {
        check(checks::batched_products(&webgpu().await).await);
    }

    #[wasm_bindgen_test]
    #[cfg_attr(browser_without_webgpu, ignore = "this browser has no WebGPU: scripts/test.sh runs this test in Chromium")]
    async fn dense_layers_and_their_gradients_are_burns() {
        check(checks::dense_layers(&webgpu().await).await);
    }

    #[wasm_bindgen_test]
    #[cfg_attr(browser_without_webgpu, ignore = "this browser has no WebGPU: scripts/test.sh runs this test in Chromium")]
    async fn layer_norms_and_their_gradients_are_burns() {
        check(checks::layer_norms(&webgpu().await).await);
    }

    #[wasm_bindgen_test]
    #[cfg_attr(browser_without_webgpu, ignore = "this browser has no WebGPU: scripts/test.sh runs this test in Chromium")]
    async fn dense_layers_with_gelu_are_burns() {
        check(checks::dense_gelu_layers(&webgpu().await).await);
    }

    #[wasm_bindgen_test]
    #[cfg_attr(browser_without_webgpu, ignore = "this browser has no WebGPU: scripts/test.sh runs this test in Chromium")]
    async fn mlp_blocks_and_their_gradients_are_burns() {
        check(checks::mlp_blocks(&webgpu().await).await);
    }

    #[wasm_bindgen_test]
    #[cfg_attr(browser_without_webgpu, ignore = "this browser has no WebGPU: scripts/test.sh runs this test in Chromium")]
    async fn gelu_and_its_gradient_are_burns() {
        check(checks::gelus(&webgpu().await).await);
    }

    #[wasm_bindgen_test]
    #[cfg_attr(browser_without_webgpu, ignore = "this browser has no WebGPU: scripts/test.sh runs this test in Chromium")]
    async fn the_attention_core_is_its_composition() {
        check(checks::attention_cores(&webgpu().await).await);
    }

    #[wasm_bindgen_test]
    #[cfg_attr(browser_without_webgpu, ignore = "this browser has no WebGPU: scripts/test.sh runs this test in Chromium")]
    async fn adamw_steps_are_burns() {
        check(checks::adamw_steps(&webgpu().await).await);
    }

    #[wasm_bindgen_test]
    #[cfg_attr(browser_without_webgpu, ignore = "this browser has no WebGPU: scripts/test.sh runs this test in Chromium")]
    async fn the_cross_entropy_and_its_gradient_are_burns() {
        check(checks::cross_entropies(&webgpu().await).await);
    }

    #[wasm_bindgen_test]
    #[cfg_attr(browser_without_webgpu, ignore = "this browser has no WebGPU: scripts/test.sh runs this test in Chromium")]
    async fn the_token_assembly_and_its_gradients_are_burns() {
        check(checks::token_assemblies(&webgpu().await).await);
    }
}
