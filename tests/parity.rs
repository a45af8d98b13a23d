//! Pins the logits of formula-defined weights and inputs. The browser tests compare WebGPU and
//! the wasm CPU backend with the same file, so all three paths are held to one answer.
//! Regenerate after an intended model change with `UPDATE_FIXTURES=1 cargo test --test parity`.
// Native only: in a browser (`wasm-pack test`) the suite is tests/browser/main.rs.
#![cfg(not(target_family = "wasm"))]

use burn::tensor::Device;
use vit_web::inference::images_tensor;
use vit_web::model::VitConfig;
use vit_web::model::parity::{deterministic_images, deterministic_weights};

// Relative to the package root, where cargo runs its tests: `env!("CARGO_MANIFEST_DIR")` would bake
// in the path of whichever clone first built this binary into the shared target directory.
const FIXTURE: &str = "tests/fixtures/parity_logits.json";
/// Tolerance relative to max(1, |logit|): the CPU backends agree far closer; this is the bar the
/// GPU, which sums in another order, must meet too.
const TOLERANCE: f32 = 1e-4;

#[test]
fn logits_of_deterministic_weights_match_the_fixture() {
    let device = Device::flex();
    let config = VitConfig::tiny();
    let model = deterministic_weights(config.init(&device));
    let logits = model
        .forward(images_tensor(deterministic_images(2), 2, &config, &device))
        .into_data()
        .try_to_vec::<f32>()
        .unwrap();

    if std::env::var_os("UPDATE_FIXTURES").is_some() {
        std::fs::write(FIXTURE, serde_json::to_string_pretty(&logits).unwrap()).unwrap();
    }
    let expected: Vec<f32> = serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    assert_eq!(logits.len(), expected.len());
    for (index, (got, want)) in logits.iter().zip(&expected).enumerate() {
        assert!((got - want).abs() <= TOLERANCE * want.abs().max(1.0), "logit {index}: {got} vs fixture {want}");
    }
    // The logits must depend on the image, or the browser comparison would prove little.
    let (first, second) = expected.split_at(10);
    let difference = first.iter().zip(second).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
    assert!(difference > 0.1, "the two images get nearly the same logits: {expected:?}");
}
