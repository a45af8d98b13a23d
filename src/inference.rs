//! Turning model outputs into what a person reads: class probabilities, ranked.

use burn::tensor::activation::softmax;
use burn::tensor::{Device, Tensor, TensorData};

use crate::model::{VisionTransformer, VitConfig, VitOutput};

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

/// Runs one batch and returns logits plus attention; reading them back is the caller's
/// (synchronous natively, `into_data_async` in the browser).
pub fn predict(model: &VisionTransformer, images: Tensor<4>) -> (Tensor<2>, VitOutput) {
    let output = model.forward_with_attention(images);
    (softmax(output.logits.clone(), 1), output)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranking_sorts_by_probability_and_keeps_labels() {
        let ranked = ranked(&[0.1, 0.7, 0.2], &["a", "b", "c"]);
        let order: Vec<_> = ranked.iter().map(|class| (class.label, class.name.as_str())).collect();
        assert_eq!(order, [(1, "b"), (2, "c"), (0, "a")]);
    }
}
