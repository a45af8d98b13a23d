//! The backward pass of [`FusedAttention`]: `∂qkv` from `∂attended` through
//! [`FusedAttention::fused_attention_backward`], with the forward pass's softmax weights kept
//! rather than recomputed.

use super::FusedAttention;
use crate::ops::cpu::dropout_mask::DropoutMask;
use burn::backend::AutodiffBackend;
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind, unary};
use burn::backend::autodiff::{Autodiff, NodeId};
use burn::backend::tensor::FloatTensor;

#[derive(Debug)]
struct FusedAttentionBackward {
    heads: usize,
    mask: DropoutMask,
}

impl<B: FusedAttention> Backward<B, 1> for FusedAttentionBackward {
    /// The input and the softmax weights.
    type State = (NodeId, B::FloatTensorPrimitive);

    fn backward(
        self,
        ops: Ops<Self::State, 1>,
        grads: &mut Gradients,
        checkpointer: &mut Checkpointer,
    ) {
        let (qkv, weights) = ops.state;
        let qkv = checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(qkv);
        unary::<B, _>(ops.parents, ops.node, grads, |grad| {
            B::fused_attention_backward(qkv, weights, grad, self.heads, self.mask)
        });
    }
}

impl<B: FusedAttention, C: CheckpointStrategy> FusedAttention for Autodiff<B, C> {
    fn fused_attention(
        qkv: FloatTensor<Self>,
        heads: usize,
        mask: DropoutMask,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        let backward = FusedAttentionBackward { heads, mask };
        match backward.prepare::<C>([qkv.node()]).compute_bound().stateful() {
            OpsKind::Tracked(mut prep) => {
                let state = prep.checkpoint(&qkv);
                let (attended, weights) = B::fused_attention(qkv.into_primitive(), heads, mask);
                let attended = prep.finish((state, weights.clone()), attended);
                (attended, Self::from_inner(weights))
            }
            OpsKind::UnTracked(prep) => {
                let (attended, weights) = B::fused_attention(qkv.into_primitive(), heads, mask);
                (prep.finish(attended), Self::from_inner(weights))
            }
        }
    }

    /// Only a gradient of a gradient comes here, which training never takes.
    fn fused_attention_backward(
        _qkv: FloatTensor<Self>,
        _weights: FloatTensor<Self>,
        _grad: FloatTensor<Self>,
        _heads: usize,
        _mask: DropoutMask,
    ) -> FloatTensor<Self> {
        unimplemented!("the fused attention has no second derivative")
    }
}
