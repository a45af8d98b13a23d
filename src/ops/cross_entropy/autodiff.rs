//! The backward pass of [`FusedCrossEntropy`]: `∂logits` from the loss's gradient, with the
//! labels kept.

use super::FusedCrossEntropy;
use burn::backend::AutodiffBackend;
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind, unary};
use burn::backend::autodiff::{Autodiff, NodeId};
use burn::backend::tensor::{FloatTensor, IntTensor};

#[derive(Debug)]
struct FusedCrossEntropyBackward {
    smoothing: f32,
}

impl<B: FusedCrossEntropy> Backward<B, 1> for FusedCrossEntropyBackward {
    /// The logits and the labels.
    type State = (NodeId, B::IntTensorPrimitive);

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, checkpointer: &mut Checkpointer) {
        let (logits, labels) = ops.state;
        let logits = checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(logits);
        unary::<B, _>(ops.parents, ops.node, grads, |grad| {
            B::fused_cross_entropy_backward(logits, labels, grad, self.smoothing)
        });
    }
}

impl<B: FusedCrossEntropy, C: CheckpointStrategy> FusedCrossEntropy for Autodiff<B, C> {
    fn fused_cross_entropy(
        logits: FloatTensor<Self>,
        labels: IntTensor<Self>,
        smoothing: f32,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        let backward = FusedCrossEntropyBackward { smoothing };
        match backward.prepare::<C>([logits.node()]).compute_bound().stateful() {
            OpsKind::Tracked(mut prep) => {
                let state = (prep.checkpoint(&logits), labels.clone());
                let (loss, correct) = B::fused_cross_entropy(logits.into_primitive(), labels, smoothing);
                (prep.finish(state, loss), Self::from_inner(correct))
            }
            OpsKind::UnTracked(prep) => {
                let (loss, correct) = B::fused_cross_entropy(logits.into_primitive(), labels, smoothing);
                (prep.finish(loss), Self::from_inner(correct))
            }
        }
    }

    /// Only a gradient of a gradient comes here, which training never takes.
    fn fused_cross_entropy_backward(
        _logits: FloatTensor<Self>,
        _labels: IntTensor<Self>,
        _grad: FloatTensor<Self>,
        _smoothing: f32,
    ) -> FloatTensor<Self> {
        unimplemented!("the fused cross-entropy has no second derivative")
    }
}
