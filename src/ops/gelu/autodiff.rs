//! The backward pass of [`ExactGelu`]: `∂x = ∂out · (Φ(x) + x·φ(x))`, from the saved input.

use super::ExactGelu;
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind, unary};
use burn::backend::autodiff::{Autodiff, NodeId};
use burn::backend::ops::ActivationOps;
use burn::backend::tensor::FloatTensor;

#[derive(Debug)]
struct ExactGeluBackward;

impl<B: ExactGelu> Backward<B, 1> for ExactGeluBackward {
    /// The input, which the derivative is evaluated at.
    type State = NodeId;

    fn backward(
        self,
        ops: Ops<Self::State, 1>,
        grads: &mut Gradients,
        checkpointer: &mut Checkpointer,
    ) {
        let x = checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(ops.state);
        unary::<B, _>(ops.parents, ops.node, grads, |grad| B::exact_gelu_backward(x, grad));
    }
}

impl<B: ExactGelu, C: CheckpointStrategy> ExactGelu for Autodiff<B, C> {
    fn exact_gelu(x: FloatTensor<Self>) -> FloatTensor<Self> {
        match ExactGeluBackward.prepare::<C>([x.node()]).compute_bound().stateful() {
            OpsKind::Tracked(mut prep) => {
                let state = prep.checkpoint(&x);
                prep.finish(state, B::exact_gelu(x.into_primitive()))
            }
            OpsKind::UnTracked(prep) => prep.finish(B::exact_gelu(x.into_primitive())),
        }
    }

    /// Only a gradient of a gradient comes here (training never takes one): burn's own
    /// differentiable formula.
    fn exact_gelu_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        <Self as ActivationOps<Self>>::gelu_backward(x, grad)
    }
}
