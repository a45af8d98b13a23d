//! Turning model outputs into what a person reads: class probabilities, ranked, and the
//! attention behind them.

use burn::tensor::activation::softmax;
use burn::tensor::{Device, Tensor, TensorData, Transaction};
use serde::{Deserialize, Serialize};

use crate::compute::read_failure;
use crate::model::{VisionTransformer, VitConfig};
use crate::data::preprocess::{normalize_planar, normalize_rgba};
use crate::viz::distance::mean_attention_distance;
use crate::viz::rollout::{attention_rollout, cls_attention, cls_to_patches};

/// One class and the model's probability for it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ClassProbability {
    pub label: usize,
    pub name: String,
    pub probability: f32,
}

/// Builds the `[batch, channels, size, size]` input tensor from normalised planar floats.
pub fn images_tensor(planar: Vec<f32>, batch: usize, config: &VitConfig, device: &Device) -> Tensor<4> {
    let shape = [batch, config.channels, config.image_size, config.image_size];
    Tensor::from_data(TensorData::new(planar, shape), device)
}

/// How a model's class scores for an image are made at evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Prediction {
    /// One forward pass of the image as it is.
    #[default]
    Plain,
    /// The probabilities of the image and of its mirror image, averaged: one more forward pass,
    /// and training's flips make both equally likely inputs.
    MirrorAveraged,
}

/// The scores `prediction` gives `images` (`[batch, channels, height, width]`), `[batch, classes]`:
/// logits for [`Prediction::Plain`], log-probabilities for [`Prediction::MirrorAveraged`]; a
/// softmax or a cross-entropy reads both alike.
pub fn class_scores(model: &VisionTransformer, images: Tensor<4>, prediction: Prediction) -> Tensor<2> {
    match prediction {
        Prediction::Plain => model.forward(images),
        Prediction::MirrorAveraged => {
            let mirrored = images.clone().flip([3]);
            let probabilities = softmax(model.forward(images), 1) + softmax(model.forward(mirrored), 1);
            (probabilities * 0.5).log()
        }
    }
}

/// Pairs probabilities with class names, most likely first.
pub fn ranked(probabilities: &[f32], names: &[&str]) -> Vec<ClassProbability> {
    let mut ranked: Vec<ClassProbability> = probabilities
        .iter()
        .zip(names)
        .enumerate()
        .map(|(label, (&probability, name))| ClassProbability {
            label,
            name: name.to_string(),
            probability,
        })
        .collect();
    ranked.sort_by(|a, b| b.probability.total_cmp(&a.probability));
    ranked
}

/// Which attention map to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AttentionView {
    /// Attention rollout over all layers: the summary.
    Rollout,
    /// One layer's [CLS]→patch attention (0-based), one head or (`None`) their mean.
    Layer { layer: usize, head: Option<usize> },
}

/// One image's prediction and every layer's attention, read back from the device: what the
/// page draws, and what the worker sends for its probe image during training.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    pub probabilities: Vec<f32>,
    /// One `[heads, tokens, tokens]` array per layer, first layer first.
    #[serde(with = "crate::protocol::float_layers")]
    pub attention: Vec<Vec<f32>>,
    pub heads: usize,
    pub tokens: usize,
}

impl Explanation {
    /// The chosen map over the patch grid, row-major, stretched to [0, 1] for a colour map.
    ///
    /// # Panics
    /// If `view` names a layer or head the model does not have.
    pub fn map(&self, view: AttentionView) -> Vec<f32> {
        match view {
            AttentionView::Rollout => cls_to_patches(&attention_rollout(&self.attention, self.tokens), self.tokens),
            AttentionView::Layer { layer, head } => cls_attention(&self.attention[layer], self.tokens, head),
        }
    }

    /// Side of the square patch grid (8 for 64 patches).
    pub fn grid(&self) -> usize {
        ((self.tokens - 1) as f64).sqrt().round() as usize
    }
}

/// Classifies one `size × size` RGBA image and reads back its probabilities and attention, with
/// one asynchronous readback per tensor (the browser cannot block on the GPU).
pub async fn explain(model: &VisionTransformer, config: &VitConfig, rgba: &[u8], device: &Device) -> Result<Explanation, String> {
    let pixels = config.image_size * config.image_size;
    if rgba.len() != 4 * pixels {
        return Err(format!("expected a {0}×{0} RGBA image, got {1} bytes", config.image_size, rgba.len()));
    }
    // The picture and its mirror image as one batch of two, their probabilities averaged as
    // Prediction::MirrorAveraged does: +1.5 to 2 points of test accuracy (docs/recipes.md). One
    // pass of two images costs a GPU about what one pass of one does, where two passes cost
    // twice the launches. The attention shown is the picture's own. The mirror image is made
    // here and uploaded with the picture: on the device it would be a flip and a concatenation.
    let picture = normalize_rgba(rgba, pixels);
    let mirror = picture.chunks_exact(config.image_size).flat_map(|row| row.iter().rev()).copied();
    let both: Vec<f32> = picture.iter().copied().chain(mirror).collect();
    let output = model.forward_with_attention(images_tensor(both, 2, config, device));
    // One readback for everything: on WebGPU each is a round trip to the GPU. The logits come
    // back, not the probabilities, whose softmax and mean would be six launches for 20 values;
    // both images' attention comes back, and the mirror's half of each layer is dropped here:
    // cutting it out on the device would cost a launch per layer.
    let parts = std::iter::once(output.logits.reshape([-1])).chain(output.attention.into_iter().map(|layer| layer.reshape([-1])));
    let values = read_floats(parts).await?;
    let (logits, layers) = values.split_at(2 * config.classes);
    let one_image = config.heads * config.tokens() * config.tokens();
    let attention = layers.chunks_exact(2 * one_image).map(|both| both[..one_image].to_vec()).collect();
    Ok(Explanation { probabilities: mean_softmax(logits, config.classes), attention, heads: config.heads, tokens: config.tokens() })
}

/// The mean over rows of `logits` (`[rows, classes]`, row-major) of each row's softmax.
fn mean_softmax(logits: &[f32], classes: usize) -> Vec<f32> {
    let rows = logits.len() / classes;
    let mut mean = vec![0.0; classes];
    for row in logits.chunks_exact(classes) {
        let largest = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let exps: Vec<f32> = row.iter().map(|logit| (logit - largest).exp()).collect();
        let sum: f32 = exps.iter().sum();
        for (mean, exp) in mean.iter_mut().zip(exps) {
            *mean += exp / sum / rows as f32;
        }
    }
    mean
}

/// The mean attention distance (`viz::distance`) of every layer's heads, `[layer][head]` in
/// pixels, over `images`: planar RGB bytes (`[3, size, size]` each, as the dataset keeps them).
pub async fn attention_distances(model: &VisionTransformer, config: &VitConfig, images: &[&[u8]], device: &Device) -> Result<Vec<Vec<f32>>, String> {
    let pixels = 3 * config.image_size * config.image_size;
    if images.is_empty() || images.iter().any(|image| image.len() != pixels) {
        return Err(format!("expected one or more {0}×{0} planar RGB images", config.image_size));
    }
    let planar: Vec<f32> = images.iter().flat_map(|image| normalize_planar(image)).collect();
    let output = model.forward_with_attention(images_tensor(planar, images.len(), config, device));
    let layers = output.attention.len();
    let values = read_floats(output.attention.into_iter().map(|layer| layer.reshape([-1]))).await?;
    let tokens = config.tokens();
    Ok(values
        .chunks_exact(values.len() / layers.max(1))
        .map(|layer| mean_attention_distance(layer, images.len(), config.heads, tokens, config.patch_size))
        .collect())
}

/// The values of `parts`, one after another, read back in one transaction: one round trip to a
/// GPU, and no concatenation on the device (a launch per part).
pub async fn read_floats(parts: impl IntoIterator<Item = Tensor<1>>) -> Result<Vec<f32>, String> {
    let transaction = parts.into_iter().fold(Transaction::default(), Transaction::register);
    let mut values = Vec::new();
    for data in transaction.execute_async().await.map_err(|error| read_failure("reading from the device", &error))? {
        values.extend(data.convert::<f32>().try_to_vec::<f32>().map_err(|error| format!("unexpected tensor type: {error:?}"))?);
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirror_averaging_scores_an_image_and_its_mirror_alike() {
        use burn::tensor::Distribution;
        let device = Device::flex();
        device.seed(5);
        let model = VitConfig::tiny().init(&device);
        let images = Tensor::<4>::random([2, 3, 32, 32], Distribution::Normal(0.0, 1.0), &device);
        let probabilities = |images: Tensor<4>, prediction| {
            softmax(class_scores(&model, images, prediction), 1).into_data().try_to_vec::<f32>().unwrap()
        };
        let averaged = probabilities(images.clone(), Prediction::MirrorAveraged);
        let of_mirror = probabilities(images.clone().flip([3]), Prediction::MirrorAveraged);
        let plain = probabilities(images.clone(), Prediction::Plain);
        let mirror_plain = probabilities(images.flip([3]), Prediction::Plain);
        for (index, value) in averaged.iter().enumerate() {
            assert!((value - of_mirror[index]).abs() < 1e-6, "class {index}");
            assert!((value - (plain[index] + mirror_plain[index]) / 2.0).abs() < 1e-6, "the mean of both passes");
        }
        assert!(plain.iter().zip(&mirror_plain).any(|(a, b)| (a - b).abs() > 1e-4), "an untrained model tells them apart");
    }

    #[test]
    fn mean_softmax_averages_each_rows_probabilities_and_survives_far_apart_logits() {
        let mean = mean_softmax(&[0.0, 0.0, 2.0_f32.ln(), 1000.0, -1000.0, 1000.0], 3);
        let expected = [0.5 * 0.25 + 0.5 * 0.5, 0.5 * 0.25, 0.5 * 0.5 + 0.5 * 0.5];
        for (got, want) in mean.iter().zip(expected) {
            assert!((got - want).abs() < 1e-6, "{mean:?}");
        }
    }

    #[test]
    fn ranking_sorts_by_probability_and_keeps_labels() {
        let ranked = ranked(&[0.1, 0.7, 0.2], &["a", "b", "c"]);
        let order: Vec<_> = ranked.iter().map(|class| (class.label, class.name.as_str())).collect();
        assert_eq!(order, [(1, "b"), (2, "c"), (0, "a")]);
    }
}
