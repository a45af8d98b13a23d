//! [`FusedCrossEntropy`] on a GPU: one workgroup computes the batch's loss and count
//! (`forward.wgsl`), one invocation per row its logits' gradient (`backward.wgsl`).

use burn::backend::tensor::{FloatTensor, IntTensor};
use burn::backend::{Cube, DType};
use burn_cubecl::kernel::into_contiguous;

use super::FusedCrossEntropy;
use crate::ops::webgpu::launch::{Grid, Serial, WgslKernel, bindable, dims, empty_like, launch};

/// A batch of logits, and the smoothing (as bits, so the kernel is hashable).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Logits {
    rows: usize,
    classes: usize,
    smoothing_bits: u32,
}

impl Logits {
    fn of(logits: &FloatTensor<Cube>, labels: &IntTensor<Cube>, smoothing: f32) -> Self {
        let dims = dims(logits);
        assert_eq!(dims.len(), 2, "logits are [rows, classes]");
        assert!(matches!(labels.dtype, DType::I32 | DType::U32), "the GPU loss reads 32-bit labels, not {:?}", labels.dtype);
        Self { rows: dims[0], classes: dims[1], smoothing_bits: smoothing.to_bits() }
    }

    fn constants(&self) -> Vec<(&'static str, String)> {
        vec![
            ("rows", self.rows.to_string()),
            ("classes", self.classes.to_string()),
            ("smoothing", format!("{:?}", f32::from_bits(self.smoothing_bits))),
        ]
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CrossEntropyForward(Logits);

impl WgslKernel for CrossEntropyForward {
    const TEMPLATE: &'static str = include_str!("forward.wgsl");
    fn constants(&self) -> Vec<(&'static str, String)> {
        self.0.constants()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CrossEntropyBackward(Logits);

impl WgslKernel for CrossEntropyBackward {
    const TEMPLATE: &'static str = include_str!("backward.wgsl");
    fn constants(&self) -> Vec<(&'static str, String)> {
        self.0.constants()
    }
}

impl FusedCrossEntropy for Cube {
    fn fused_cross_entropy(
        logits: FloatTensor<Self>,
        labels: IntTensor<Self>,
        smoothing: f32,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        let shape = Logits::of(&logits, &labels, smoothing);
        let (logits, labels) = (bindable(logits), bindable(into_contiguous(labels)));
        let [loss, correct] = [(); 2].map(|_| empty_like(&logits, &[1]));
        let serial = Serial { steps: shape.rows.div_ceil(64) as u64, batch_sum: shape.rows.div_ceil(64) as u64 };
        launch(CrossEntropyForward(shape), Grid::Linear(1), &[&logits, &labels, &loss, &correct], &[], serial);
        (loss, correct)
    }

    fn fused_cross_entropy_backward(
        logits: FloatTensor<Self>,
        labels: IntTensor<Self>,
        grad: FloatTensor<Self>,
        smoothing: f32,
    ) -> FloatTensor<Self> {
        let shape = Logits::of(&logits, &labels, smoothing);
        let (logits, labels, grad) = (bindable(logits), bindable(into_contiguous(labels)), bindable(grad));
        let grad_logits = empty_like(&logits, &[shape.rows, shape.classes]);
        let kernel = CrossEntropyBackward(shape);
        let grid = Grid::covering(&kernel, shape.rows as u64);
        let serial = Serial { steps: shape.classes as u64, batch_sum: 0 };
        launch(kernel, grid, &[&logits, &labels, &grad, &grad_logits], &[], serial);
        grad_logits
    }
}
