//! The backward pass of [`FusedLayerNorm`], from the saved input (its row statistics are
//! recomputed, one pass, rather than kept).

use super::FusedLayerNorm;
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::autodiff::{Autodiff, NodeId};
use burn::backend::tensor::FloatTensor;

#[derive(Debug)]
struct FusedLayerNormBackward {
    epsilon: f64,
    every: usize,
}

impl<B: FusedLayerNorm> Backward<B, 3> for FusedLayerNormBackward {
    /// The input and the scale.
    type State = (NodeId, NodeId);

    fn backward(
        self,
        ops: Ops<Self::State, 3>,
        grads: &mut Gradients,
        checkpointer: &mut Checkpointer,
    ) {
        let [x_node, gamma_node, beta_node] = ops.parents;
        let grad = grads.consume::<B>(&ops.node);
        let (x, gamma) = ops.state;
        let x = checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(x);
        let gamma = checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(gamma);
        let (grad_x, grad_gamma, grad_beta) =
            B::fused_layer_norm_backward(x, gamma, grad, self.epsilon, self.every);
        for (node, grad) in [(x_node, grad_x), (gamma_node, grad_gamma), (beta_node, grad_beta)] {
            if let Some(node) = node {
                grads.register::<B>(node.id, grad);
            }
        }
    }
}

impl<B: FusedLayerNorm, C: CheckpointStrategy> FusedLayerNorm for Autodiff<B, C> {
    fn fused_layer_norm(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        epsilon: f64,
        every: usize,
    ) -> FloatTensor<Self> {
        let backward = FusedLayerNormBackward { epsilon, every };
        match backward
            .prepare::<C>([x.node(), gamma.node(), beta.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(mut prep) => {
                let state = (prep.checkpoint(&x), prep.checkpoint(&gamma));
                let out = B::fused_layer_norm(
                    x.into_primitive(),
                    gamma.into_primitive(),
                    beta.into_primitive(),
                    epsilon,
                    every,
                );
                prep.finish(state, out)
            }
            OpsKind::UnTracked(prep) => prep.finish(B::fused_layer_norm(
                x.into_primitive(),
                gamma.into_primitive(),
                beta.into_primitive(),
                epsilon,
                every,
            )),
        }
    }

    /// Only a gradient of a gradient comes here, which training never takes.
    fn fused_layer_norm_backward(
        _x: FloatTensor<Self>,
        _gamma: FloatTensor<Self>,
        _grad: FloatTensor<Self>,
        _epsilon: f64,
        _every: usize,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        unimplemented!("the fused layer norm has no second derivative")
    }
}
