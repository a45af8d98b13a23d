//! The backward pass of [`BlockedMatmul`]: for `out = lhs · rhs`, `∂lhs = ∂out · rhsᵀ` and
//! `∂rhs = lhsᵀ · ∂out`, both through the same kernel (transposes made contiguous first), as
//! burn's own matmul does with its kernel.

use super::BlockedMatmul;
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind, binary};
use burn::backend::autodiff::{Autodiff, NodeId};
use burn::backend::tensor::FloatTensor;

#[derive(Debug)]
struct BlockedMatmulBackward;

impl<B: BlockedMatmul> Backward<B, 2> for BlockedMatmulBackward {
    /// The inputs each gradient needs: `rhs` for `∂lhs`, `lhs` for `∂rhs`.
    type State = (Option<NodeId>, Option<NodeId>);

    fn backward(
        self,
        ops: Ops<Self::State, 2>,
        grads: &mut Gradients,
        checkpointer: &mut Checkpointer,
    ) {
        let (lhs, rhs) = ops.state;
        let lhs = lhs.map(|lhs| checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(lhs));
        let rhs = rhs.map(|rhs| checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(rhs));
        binary::<B, _, _>(
            ops.parents,
            ops.node,
            grads,
            |grad| B::blocked_matmul(grad, B::float_transpose(rhs.expect("rhs kept for ∂lhs"))),
            |grad| B::blocked_matmul(B::float_transpose(lhs.expect("lhs kept for ∂rhs")), grad),
        );
    }
}

impl<B: BlockedMatmul, C: CheckpointStrategy> BlockedMatmul for Autodiff<B, C> {
    fn blocked_matmul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        let (lhs_tracked, rhs_tracked) = (lhs.is_tracked(), rhs.is_tracked());
        match BlockedMatmulBackward
            .prepare::<C>([lhs.node(), rhs.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(mut prep) => {
                let lhs_state = rhs_tracked.then(|| prep.checkpoint(&lhs));
                let rhs_state = lhs_tracked.then(|| prep.checkpoint(&rhs));
                prep.finish(
                    (lhs_state, rhs_state),
                    B::blocked_matmul(lhs.into_primitive(), rhs.into_primitive()),
                )
            }
            OpsKind::UnTracked(prep) => {
                prep.finish(B::blocked_matmul(lhs.into_primitive(), rhs.into_primitive()))
            }
        }
    }
}
