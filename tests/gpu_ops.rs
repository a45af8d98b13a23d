//! The GPU operations against their definitions (`vit_web::ops::webgpu::checks`), natively on
//! wgpu: `scripts/test.sh` runs them on SwiftShader (`VK_ICD_FILENAMES` names Chromium's), the
//! same software renderer the browser tests run WebGPU on, and they run on a machine's GPU as
//! they are. Built only `--features wgpu`; the browser runs the same checks (tests/browser/main.rs).
#![cfg(all(feature = "wgpu", not(target_family = "wasm")))]

use std::sync::OnceLock;

use burn::tensor::Device;
use vit_web::ops::webgpu::checks;

/// One wgpu device for every test of the process (burn starts one runtime per device).
fn device() -> &'static Device {
    static DEVICE: OnceLock<Device> = OnceLock::new();
    DEVICE.get_or_init(|| {
        Device::wgpu_options().init().expect(
            "a wgpu adapter: install Vulkan's loader (libvulkan1) and point VK_ICD_FILENAMES at a driver, \
             e.g. /usr/lib/chromium/vk_swiftshader_icd.json",
        )
    })
}

fn check(result: checks::CheckResult) {
    if let Err(problem) = result {
        panic!("{problem}");
    }
}

#[test]
fn batched_products_are_their_definition() {
    check(pollster::block_on(checks::batched_products(device())));
}

#[test]
fn dense_layers_and_their_gradients_are_burns() {
    check(pollster::block_on(checks::dense_layers(device())));
}

#[test]
fn layer_norms_and_their_gradients_are_burns() {
    check(pollster::block_on(checks::layer_norms(device())));
}

#[test]
fn dense_layers_with_gelu_are_burns() {
    check(pollster::block_on(checks::dense_gelu_layers(device())));
}

#[test]
fn mlp_blocks_and_their_gradients_are_burns() {
    check(pollster::block_on(checks::mlp_blocks(device())));
}

#[test]
fn gelu_and_its_gradient_are_burns() {
    check(pollster::block_on(checks::gelus(device())));
}

#[test]
fn the_attention_core_is_its_composition() {
    check(pollster::block_on(checks::attention_cores(device())));
}

#[test]
fn adamw_steps_are_burns() {
    check(pollster::block_on(checks::adamw_steps(device())));
}

#[test]
fn the_cross_entropy_and_its_gradient_are_burns() {
    check(pollster::block_on(checks::cross_entropies(device())));
}

#[test]
fn the_token_assembly_and_its_gradients_are_burns() {
    check(pollster::block_on(checks::token_assemblies(device())));
}

/// Three training steps of the tiny model on the fixed batch, on the GPU in each kernel family
/// and on the CPU backend, give the same losses and the same weights: every operation of a step
/// (the patch embedding as a product, the fused loss, AdamW) wired as the CPU path has it.
#[test]
fn training_steps_on_the_gpu_are_the_cpus() {
    use vit_web::ops::webgpu::{KernelFamily, set_kernel_family};
    use vit_web::training::{fixed_batch, fixed_trainer};

    let train = |device: &Device| {
        let device = device.clone().autodiff();
        let mut trainer = fixed_trainer(10, &device);
        let (images, labels) = fixed_batch(16, &device);
        let losses: Vec<f32> =
            (0..3).map(|_| trainer.step(images.clone(), labels.clone()).loss.into_scalar::<f32>()).collect();
        let model = trainer.into_model();
        let weights = [model.patch_embedding.projection.weight.val().into_data(), model.head.weight.val().into_data()];
        (losses, weights)
    };
    let (cpu_losses, cpu_weights) = train(&Device::flex());
    for family in [KernelFamily::Software, KernelFamily::Hardware] {
        set_kernel_family(Some(family));
        let (losses, weights) = train(device());
        set_kernel_family(None);
        for (step, (gpu, cpu)) in losses.iter().zip(&cpu_losses).enumerate() {
            assert!((gpu - cpu).abs() <= 1e-4 * cpu.abs().max(1.0), "{family:?}: step {step}'s loss {gpu}, the CPU's {cpu}");
        }
        for (gpu, cpu) in weights.iter().zip(&cpu_weights) {
            gpu.assert_approx_eq::<f32>(cpu, burn::tensor::Tolerance::absolute(1e-4));
        }
    }
}

/// The page's explanation of a picture (the picture and its mirror image as one batch) on the
/// GPU, in each kernel family, is the CPU backend's: the same probabilities and attention.
#[test]
fn explaining_a_picture_on_the_gpu_is_the_cpus() {
    use burn::module::Module;
    use vit_web::inference::explain;
    use vit_web::model::VitConfig;
    use vit_web::ops::webgpu::{KernelFamily, set_kernel_family};

    let cpu = Device::flex();
    cpu.seed(11);
    let config = VitConfig::tiny();
    let model = config.init(&cpu);
    let rgba: Vec<u8> = (0..32 * 32 * 4).map(|index| (index * 53 % 241) as u8).collect();
    let expected = pollster::block_on(explain(&model, &config, &rgba, &cpu)).unwrap();
    let on_gpu = model.to_device(device());
    for family in [KernelFamily::Software, KernelFamily::Hardware] {
        set_kernel_family(Some(family));
        let explanation = pollster::block_on(explain(&on_gpu, &config, &rgba, device())).unwrap();
        set_kernel_family(None);
        let pairs = explanation.attention.iter().flatten().zip(expected.attention.iter().flatten());
        let most = pairs.chain(explanation.probabilities.iter().zip(&expected.probabilities)).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        assert!(most < 1e-4, "{family:?}: the GPU's explanation differs from the CPU's by {most}");
        assert_eq!(explanation.attention.len(), expected.attention.len());
    }
}

/// The largest buffer a training step binds on WebGPU, measured from the launches of a real step
/// in each kernel family, is `training::gpu_step_largest_binding`'s: the QKV projection's output,
/// here bound by its weight's gradient. burn's own kernels (the residual sums, a copy) bind
/// smaller ones. The device's stated limit, which the page checks a batch against, holds it.
#[test]
fn a_training_steps_largest_buffer_is_the_qkv_projections_output() {
    use vit_web::model::VitConfig;
    use vit_web::ops::webgpu::limits::largest_binding;
    use vit_web::ops::webgpu::record::{start_recording, stop_recording, take_records};
    use vit_web::ops::webgpu::{KernelFamily, set_kernel_family};
    use vit_web::training::{fixed_batch, fixed_trainer, gpu_step_largest_binding};

    let device = device().clone().autodiff();
    for family in [KernelFamily::Software, KernelFamily::Hardware] {
        set_kernel_family(Some(family));
        for batch in [16, 32] {
            let mut trainer = fixed_trainer(10, &device);
            let (images, labels) = fixed_batch(batch, &device);
            start_recording();
            let _ = trainer.step(images, labels).loss.into_scalar::<f32>();
            let records = take_records();
            stop_recording();
            let largest = records.iter().max_by_key(|record| record.largest_binding).expect("launches");
            let limit = largest_binding(&device).expect("a GPU device states its largest binding");
            assert!(largest.largest_binding <= limit, "the step bound {} bytes, past the device's {limit}", largest.largest_binding);
            assert_eq!(
                largest.largest_binding,
                gpu_step_largest_binding(&VitConfig::tiny(), batch),
                "{family:?}, batch {batch}: the largest buffer is {}'s ({})",
                largest.kernel,
                largest.detail,
            );
        }
        set_kernel_family(None);
    }
}
