//! Native checks of the model on burn's CPU backend: shapes, sizes, attention, learning.
// Native only: in a browser (`wasm-pack test`) the suite is tests/browser/main.rs.
#![cfg(not(target_family = "wasm"))]

use burn::module::Module;
use burn::tensor::{Device, Distribution, Int, Tensor, TensorData};
use vit_web::model::{Preset, VitConfig};
use vit_web::training::{OptimizerRecipe, Trainer};

fn device() -> Device {
    let device = Device::flex();
    device.seed(7);
    device
}

#[test]
fn every_shape_of_the_data_flow() {
    let device = device();
    let config = VitConfig::tiny();
    let model = config.init(&device);
    let images = Tensor::<4>::random([2, 3, 32, 32], Distribution::Default, &device);

    let patches = model.patch_embedding.forward(images.clone());
    assert_eq!(patches.dims(), [2, 64, 128]);

    let (tokens, attention) = model.blocks[0].forward(Tensor::zeros([2, 65, 128], &device));
    assert_eq!(tokens.dims(), [2, 65, 128]);
    assert_eq!(attention.dims(), [2, 4, 65, 65]);

    let output = model.forward_with_attention(images.clone());
    assert_eq!(output.logits.dims(), [2, 10]);
    assert_eq!(output.attention.len(), 4);
    for layer in &output.attention {
        assert_eq!(layer.dims(), [2, 4, 65, 65]);
    }
    assert!(model.forward(images).dims() == [2, 10]);
}

#[test]
fn parameter_counts_of_both_presets() {
    let device = device();
    assert_eq!(VitConfig::tiny().parameter_count(), 546_186);
    assert_eq!(VitConfig::tiny().init(&device).num_params(), 546_186);
    let small = VitConfig::small();
    assert_eq!(small.init(&device).num_params(), small.parameter_count());
    assert_eq!(small.parameter_count(), 3_195_146);
}

/// The tiny preset (the reference) drops nothing out, so its CPU steps draw no mask seed.
#[test]
fn only_a_preset_with_dropout_drops_out() {
    let device = device();
    assert!(!VitConfig::tiny().init(&device).drops_out());
    assert!(VitConfig::small().init(&device).drops_out());
    assert!(VitConfig::tiny().with_dropout(0.2).init(&device).drops_out());
}

#[test]
fn presets_parse_and_bad_configs_are_refused() {
    assert_eq!("tiny".parse::<Preset>().unwrap().config(), VitConfig::tiny());
    assert!("huge".parse::<Preset>().is_err());
    assert!(VitConfig { heads: 3, ..VitConfig::tiny() }.validate().is_err());
    assert!(VitConfig { patch_size: 5, ..VitConfig::tiny() }.validate().is_err());
    assert!(VitConfig { depth: 0, ..VitConfig::tiny() }.validate().is_err());
}

#[test]
fn attention_rows_sum_to_one() {
    let device = device();
    let model = VitConfig::tiny().init(&device);
    let images = Tensor::<4>::random([3, 3, 32, 32], Distribution::Normal(0.0, 1.0), &device);
    for layer in model.forward_with_attention(images).attention {
        let sums = layer.clone().sum_dim(3).into_data().try_to_vec::<f32>().unwrap();
        assert!(sums.iter().all(|sum| (sum - 1.0).abs() < 1e-5), "row sums {sums:?}");
        let weights = layer.into_data().try_to_vec::<f32>().unwrap();
        assert!(weights.iter().all(|w| (0.0..=1.0).contains(w)));
    }
}

/// 64 fixed images with fixed labels: noise the model can only learn by memorising.
fn fixed_batch(device: &Device) -> (Tensor<4>, Tensor<1, Int>) {
    let images = Tensor::<4>::random([64, 3, 32, 32], Distribution::Normal(0.0, 1.0), device);
    let labels: Vec<i64> = (0..64).map(|i| (i * 7 % 10) as i64).collect();
    (images, Tensor::from_data(TensorData::new(labels, [64]), device))
}

#[test]
fn one_adamw_step_lowers_the_loss() {
    let device = device().autodiff();
    let (images, labels) = fixed_batch(&device);
    // Adam's first update moves every weight by about the learning rate whatever the gradient's
    // size; a small rate keeps that step inside the region where the gradient's direction holds.
    let recipe = OptimizerRecipe { learning_rate: 1e-4, ..OptimizerRecipe::default() };
    let mut trainer = Trainer::new(VitConfig::tiny().init(&device), recipe, 100, &device);

    let before = trainer.step(images.clone(), labels.clone()).loss.into_scalar::<f32>();
    let after = trainer.step(images, labels).loss.into_scalar::<f32>();
    assert!(after < before, "loss went from {before} to {after}");
}

#[test]
fn a_fixed_batch_of_64_is_overfit() {
    let device = device().autodiff();
    let (images, labels) = fixed_batch(&device);
    let max_steps = 120;
    let mut trainer = Trainer::new(VitConfig::tiny().init(&device), OptimizerRecipe::default(), 10_000, &device);

    let mut accuracy = 0.0;
    for step in 0..max_steps {
        let output = trainer.step(images.clone(), labels.clone());
        if step % 10 == 9 {
            accuracy = output.correct.into_scalar::<i64>() as f32 / 64.0;
            if accuracy > 0.9 {
                return;
            }
        }
    }
    panic!("training accuracy only reached {accuracy} after {max_steps} steps");
}

#[test]
fn explaining_one_image_gives_probabilities_and_every_map() {
    use burn::tensor::activation::softmax;
    use vit_web::data::preprocess::normalize_rgba;
    use vit_web::inference::{AttentionView, explain, images_tensor};
    let device = device();
    let config = VitConfig::tiny();
    let model = config.init(&device);
    let rgba: Vec<u8> = (0..32 * 32 * 4).map(|index| (index * 37 % 251) as u8).collect();
    let explanation = pollster::block_on(explain(&model, &config, &rgba, &device)).unwrap();

    assert_eq!(explanation.probabilities.len(), 10);
    assert!((explanation.probabilities.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    assert_eq!(explanation.attention.len(), 4);
    assert!(explanation.attention.iter().all(|layer| layer.len() == 4 * 65 * 65));
    assert_eq!(explanation.grid(), 8);
    let views = [
        AttentionView::Rollout,
        AttentionView::Layer { layer: 0, head: None },
        AttentionView::Layer { layer: 3, head: Some(2) },
    ];
    for view in views {
        let map = explanation.map(view);
        assert_eq!(map.len(), 64, "{view:?}");
        assert!(map.iter().all(|value| (0.0..=1.0).contains(value)), "{view:?} is stretched to [0, 1]");
        assert!(map.iter().any(|&value| value > 0.99), "{view:?} reaches 1");
    }
    // A wrongly sized image is refused, not reshaped.
    assert!(pollster::block_on(explain(&model, &config, &rgba[4..], &device)).is_err());

    // The probabilities are averaged over the picture and its mirror image.
    let mirrored: Vec<u8> = rgba.chunks_exact(32 * 4).flat_map(|row| row.chunks_exact(4).rev().flatten().copied().collect::<Vec<u8>>()).collect();
    let of_mirror = pollster::block_on(explain(&model, &config, &mirrored, &device)).unwrap();
    for (ours, theirs) in explanation.probabilities.iter().zip(&of_mirror.probabilities) {
        assert!((ours - theirs).abs() < 1e-5, "{ours} against {theirs}");
    }
    assert_ne!(explanation.attention, of_mirror.attention, "the attention is the picture's own");

    // The one pass of both images is the two passes of each: the mean of their probabilities,
    // and the picture's own attention.
    let input = |rgba: &[u8]| images_tensor(normalize_rgba(rgba, 32 * 32), 1, &config, &device);
    let own = model.forward_with_attention(input(&rgba));
    let softmax_of = |logits| softmax(logits, 1).into_data().try_to_vec::<f32>().unwrap();
    let (plain, of_mirror) = (softmax_of(own.logits), softmax_of(model.forward(input(&mirrored))));
    for (class, ours) in explanation.probabilities.iter().enumerate() {
        let mean = (plain[class] + of_mirror[class]) / 2.0;
        assert!((ours - mean).abs() < 1e-5, "class {class}: {ours} against {mean}");
    }
    for (layer, (ours, alone)) in explanation.attention.iter().zip(own.attention).enumerate() {
        let alone = alone.into_data().try_to_vec::<f32>().unwrap();
        let most = ours.iter().zip(&alone).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        assert!(most < 1e-5, "layer {layer}'s attention differs by {most}");
    }
}

#[test]
fn attention_distance_of_a_fresh_model_is_that_of_uniform_attention() {
    use vit_web::inference::attention_distances;
    use vit_web::viz::distance::{farthest, mean_attention_distance};
    let device = device();
    let config = VitConfig::tiny();
    let model = config.init(&device);
    let images: Vec<Vec<u8>> = (0..3).map(|seed| (0..3 * 32 * 32).map(|index| ((index * 37 + seed * 101) % 251) as u8).collect()).collect();
    let borrowed: Vec<&[u8]> = images.iter().map(Vec::as_slice).collect();
    let distances = pollster::block_on(attention_distances(&model, &config, &borrowed, &device)).unwrap();
    assert_eq!(distances.len(), 4, "one row per layer");
    assert!(distances.iter().all(|heads| heads.len() == 4), "one value per head");
    // Untrained queries and keys are nearly orthogonal, so attention is nearly uniform: every
    // head's distance is close to uniform attention's over the 8×8 grid of 4-pixel patches.
    let tokens = config.tokens();
    let uniform = mean_attention_distance(&vec![1.0; tokens * tokens], 1, 1, tokens, 4)[0];
    assert!(uniform > 10.0 && uniform < farthest(tokens, 4), "{uniform}");
    for (layer, heads) in distances.iter().enumerate() {
        for &distance in heads {
            assert!((distance - uniform).abs() < 0.05 * uniform, "layer {layer}: {distance} against {uniform}");
        }
    }
    assert!(pollster::block_on(attention_distances(&model, &config, &[&images[0][1..]], &device)).is_err(), "a wrongly sized image is refused");
}
