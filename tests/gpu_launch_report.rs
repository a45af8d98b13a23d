//! The launch report's two views of a pass (`bench --sections launches,profile`): the launches
//! counted by kernel, and each launch timed with our kernels' constants. Its own test binary,
//! because cubecl's launch observer sees every launch of the process, and `tests/gpu_ops.rs`
//! runs its checks side by side. Built only `--features wgpu`; SwiftShader has timestamp queries.
#![cfg(all(feature = "wgpu", not(target_family = "wasm")))]

use std::collections::BTreeMap;

use burn::tensor::{Device, Distribution, Tensor};
use vit_web::model::{VitConfig, VitOutput};
use vit_web::ops::webgpu::record::{count, timing};

/// A forward pass of the tiny model with its attention, on two images.
fn forward(device: &Device) -> impl Fn() -> VitOutput {
    let model = VitConfig::tiny().init(device);
    let images = Tensor::<4>::random([2, 3, 32, 32], Distribution::Normal(0.0, 1.0), device);
    move || model.forward_with_attention(images.clone())
}

#[test]
fn every_launch_is_counted_and_timed_with_our_kernels_constants() {
    let device = Device::wgpu_options().init().expect("a wgpu adapter (VK_ICD_FILENAMES: SwiftShader's)");
    let pass = forward(&device);
    let _ = pass().logits.into_data(); // compiles the kernels

    let (_, counted) = count::launches(&pass);
    let (_, times) = timing::kernels(&pass, |output| {
        let _ = output.logits.clone().into_data();
    });

    let mut timed: BTreeMap<String, usize> = BTreeMap::new();
    for time in &times {
        *timed.entry(time.kernel.clone()).or_default() += 1;
    }
    assert_eq!(timed, counted, "the timer saw other launches than the counter");
    assert!(counted.contains_key("AttentionForward") && counted.contains_key("LayerNormForward"), "{counted:?}");

    for time in &times {
        let ms = time.ms.unwrap_or_else(|| panic!("{} has no time", time.kernel));
        assert!(ms.is_finite() && ms >= 0.0, "{}: {ms} ms", time.kernel);
    }
    assert!(times.iter().map(|time| time.ms.unwrap()).sum::<f64>() > 0.0);

    // Ours carry their constants, paired in order; burn's have none.
    let attention: Vec<_> = times.iter().filter(|time| time.kernel == "AttentionForward").collect();
    assert_eq!(attention.len(), 4, "one attention core a layer");
    for time in attention {
        let detail = time.detail.as_deref().expect("our kernel's constants");
        assert!(detail.contains("batch: 2") && detail.contains("tokens: 65") && detail.contains("heads: 4"), "{detail}");
    }
    for time in &times {
        match &time.detail {
            Some(detail) => assert!(detail.starts_with(&time.kernel), "{} paired with {detail}", time.kernel),
            // burn's kernels are named by type (`CopyKernel`, `KernelBinop<AddOp>`).
            None => assert!(time.kernel.contains("Kernel"), "{} without its constants", time.kernel),
        }
    }
}
