//! The backward pass of [`TokenAssembly`]: it needs only the tokens' gradient, so nothing is
//! saved from the forward pass.

use super::TokenAssembly;
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops};
use burn::backend::autodiff::Autodiff;
use burn::backend::tensor::FloatTensor;

#[derive(Debug)]
struct TokenAssemblyBackward;

impl<B: TokenAssembly> Backward<B, 3> for TokenAssemblyBackward {
    type State = ();

    fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, _checkpointer: &mut Checkpointer) {
        let [patches_node, class_node, positions_node] = ops.parents;
        let grad = grads.consume::<B>(&ops.node);
        let (grad_patches, grad_class, grad_positions) = B::assemble_tokens_backward(grad);
        for (node, grad) in [(patches_node, grad_patches), (class_node, grad_class), (positions_node, grad_positions)] {
            if let Some(node) = node {
                grads.register::<B>(node.id, grad);
            }
        }
    }
}

impl<B: TokenAssembly, C: CheckpointStrategy> TokenAssembly for Autodiff<B, C> {
    fn assemble_tokens(
        patches: FloatTensor<Self>,
        class_token: FloatTensor<Self>,
        positions: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        TokenAssemblyBackward
            .prepare::<C>([patches.node(), class_token.node(), positions.node()])
            .compute_bound()
            .stateless(B::assemble_tokens(patches.into_primitive(), class_token.into_primitive(), positions.into_primitive()))
    }

    /// Only a gradient of a gradient comes here, which training never takes.
    fn assemble_tokens_backward(_grad: FloatTensor<Self>) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        unimplemented!("the token assembly has no second derivative")
    }
}
