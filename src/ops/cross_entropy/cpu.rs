//! [`FusedCrossEntropy`] on the CPU backend: the kernels' arithmetic on slices, so the backward
//! pass's wiring can be tested natively against burn's loss.

use burn::backend::flex::FlexTensor;
use burn::backend::tensor::{FloatTensor, IntTensor};
use burn::backend::{DType, Flex, TensorMetadata};

use super::FusedCrossEntropy;
use crate::ops::cpu::tensor as cpu_tensor;

/// The labels as indices, whatever integer type the backend keeps them in.
fn labels_of(labels: &FlexTensor) -> Vec<usize> {
    let labels = labels.to_contiguous();
    match labels.dtype() {
        DType::I64 => labels.as_slice::<i64>().expect("i64 labels").iter().map(|&label| label as usize).collect(),
        DType::I32 => labels.as_slice::<i32>().expect("i32 labels").iter().map(|&label| label as usize).collect(),
        other => panic!("labels of type {other:?}"),
    }
}

/// Each row's largest logit and log Σ exp.
fn log_total(row: &[f32]) -> (f32, f32) {
    let largest = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    (largest, largest + row.iter().map(|logit| (logit - largest).exp()).sum::<f32>().ln())
}

impl FusedCrossEntropy for Flex {
    fn fused_cross_entropy(
        logits: FloatTensor<Self>,
        labels: IntTensor<Self>,
        smoothing: f32,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        let classes = logits.shape()[1];
        let logits = cpu_tensor::contiguous(logits);
        let labels = labels_of(&labels);
        let (mut loss, mut correct) = (0.0f32, 0.0f32);
        for (row, &label) in cpu_tensor::values(&logits).chunks(classes).zip(&labels) {
            let (largest, log_total) = log_total(row);
            let mean = row.iter().sum::<f32>() / classes as f32 - log_total;
            loss -= (1.0 - smoothing) * (row[label] - log_total) + smoothing * mean;
            correct += f32::from(row.iter().position(|&logit| logit == largest) == Some(label));
        }
        let rows = labels.len() as f32;
        (cpu_tensor::from_values(vec![loss / rows], [1]), cpu_tensor::from_values(vec![correct], [1]))
    }

    fn fused_cross_entropy_backward(
        logits: FloatTensor<Self>,
        labels: IntTensor<Self>,
        grad: FloatTensor<Self>,
        smoothing: f32,
    ) -> FloatTensor<Self> {
        let shape = logits.shape();
        let classes = shape[1];
        let (logits, grad) = (cpu_tensor::contiguous(logits), cpu_tensor::contiguous(grad));
        let labels = labels_of(&labels);
        let scale = cpu_tensor::values(&grad)[0] / labels.len() as f32;
        let mut out = Vec::with_capacity(labels.len() * classes);
        for (row, &label) in cpu_tensor::values(&logits).chunks(classes).zip(&labels) {
            let (_, log_total) = log_total(row);
            for (class, &logit) in row.iter().enumerate() {
                let target = smoothing / classes as f32 + if class == label { 1.0 - smoothing } else { 0.0 };
                out.push(scale * ((logit - log_total).exp() - target));
            }
        }
        cpu_tensor::from_values(out, shape)
    }
}
