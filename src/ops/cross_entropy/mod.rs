//! The training loss, mean cross-entropy with optional label smoothing, and how many of the
//! batch were classified right, as one operation, [`FusedCrossEntropy`], with its own backward
//! pass ([`autodiff`]). On a GPU one launch each way ([`webgpu`]) where burn's loss, its
//! backward and the count take about thirty; on the CPU backend the same arithmetic on slices
//! ([`cpu`]), for the tests (the CPU path keeps burn's loss).

mod autodiff;
pub mod cpu;
#[cfg(gpu)]
pub mod webgpu;

use burn::backend::tensor::{FloatTensor, IntTensor};
use burn::backend::{Backend, Dispatch, backend_extension};
use burn::tensor::{Int, Tensor};

/// The loss and the count as a backend operation.
#[backend_extension(Cube: cfg(gpu), Flex, Autodiff)]
pub trait FusedCrossEntropy: Backend {
    /// `(loss [1], correct [1])` of `logits [rows, classes]` against `labels [rows]`: the mean
    /// over the rows of `−Σ_c target_c·log softmax_c`, targets `(1 − smoothing)·onehot +
    /// smoothing/classes`, and how many rows' largest logit is their label's (no gradient).
    fn fused_cross_entropy(
        logits: FloatTensor<Self>,
        labels: IntTensor<Self>,
        smoothing: f32,
    ) -> (FloatTensor<Self>, FloatTensor<Self>);
    /// `∂logits = grad·(softmax − target)/rows` from the loss's gradient `grad [1]`.
    fn fused_cross_entropy_backward(
        logits: FloatTensor<Self>,
        labels: IntTensor<Self>,
        grad: FloatTensor<Self>,
        smoothing: f32,
    ) -> FloatTensor<Self>;
}

/// `(mean loss [1], correct [1])` through [`FusedCrossEntropy`].
///
/// # Shapes
/// - logits: `[batch, classes]`; labels: `[batch]`
pub fn cross_entropy(logits: Tensor<2>, labels: Tensor<1, Int>, smoothing: f32) -> (Tensor<1>, Tensor<1>) {
    let (loss, correct) =
        <Dispatch as FusedCrossEntropy>::fused_cross_entropy(logits.into_dispatch(), labels.into_dispatch(), smoothing);
    (Tensor::from_dispatch(loss), Tensor::from_dispatch(correct))
}
