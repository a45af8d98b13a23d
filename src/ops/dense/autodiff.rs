//! The backward pass of [`DenseLinear`]: `∂x = ∂out·Wᵀ`, `∂W = xᵀ·∂out`, `∂b = Σ_rows ∂out`,
//! each computed only for an operand that needs it, the last two together where both are; with a
//! residual added to the output, its gradient is the output's.

use super::DenseLinear;
use crate::ops::gelu::ExactGelu;
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::autodiff::{Autodiff, NodeId};
use burn::backend::tensor::FloatTensor;

#[derive(Debug)]
struct DenseLinearBackward;

/// The inputs each gradient needs: `x` for `∂W`, `W` for `∂x`.
type DenseState = (Option<NodeId>, Option<NodeId>);

impl<B: DenseLinear> Backward<B, 3> for DenseLinearBackward {
    type State = DenseState;

    fn backward(
        self,
        ops: Ops<Self::State, 3>,
        grads: &mut Gradients,
        checkpointer: &mut Checkpointer,
    ) {
        let grad = grads.consume::<B>(&ops.node);
        let parents = ops.parents.map(|node| node.map(|node| node.id));
        register_dense_gradients::<B>(parents, ops.state, grad, grads, checkpointer);
    }
}

/// [`DenseLinearBackward`] with a residual added: the residual's gradient is the output's.
#[derive(Debug)]
struct DenseLinearResidualBackward;

impl<B: DenseLinear> Backward<B, 4> for DenseLinearResidualBackward {
    type State = DenseState;

    fn backward(
        self,
        ops: Ops<Self::State, 4>,
        grads: &mut Gradients,
        checkpointer: &mut Checkpointer,
    ) {
        let [x_node, weight_node, bias_node, residual_node] = ops.parents;
        let grad = grads.consume::<B>(&ops.node);
        if let Some(node) = residual_node {
            grads.register::<B>(node.id, grad.clone());
        }
        let parents = [x_node, weight_node, bias_node].map(|node| node.map(|node| node.id));
        register_dense_gradients::<B>(parents, ops.state, grad, grads, checkpointer);
    }
}

/// Registers `∂x`, `∂W` and `∂b` of a dense layer for the parents that want them.
fn register_dense_gradients<B: DenseLinear>(
    [x_node, weight_node, bias_node]: [Option<NodeId>; 3],
    (x, weight): DenseState,
    grad: FloatTensor<B>,
    grads: &mut Gradients,
    checkpointer: &mut Checkpointer,
) {
    let mut retrieve =
        |id: Option<NodeId>| id.map(|id| checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(id));
    let (x, weight) = (retrieve(x), retrieve(weight));
    if let (Some(node), Some(weight)) = (x_node, weight) {
        grads.register::<B>(node, B::dense_input_gradient(grad.clone(), weight));
    }
    match (weight_node, x, bias_node) {
        (Some(weight_node), Some(x), Some(bias_node)) => {
            let (grad_weight, grad_bias) = B::dense_parameter_gradients(x, grad);
            grads.register::<B>(weight_node, grad_weight);
            grads.register::<B>(bias_node, grad_bias);
        }
        (weight_node, x, bias_node) => {
            if let (Some(node), Some(x)) = (weight_node, x) {
                grads.register::<B>(node, B::dense_weight_gradient(x, grad.clone()));
            }
            if let Some(node) = bias_node {
                grads.register::<B>(node, B::dense_bias_gradient(grad));
            }
        }
    }
}

impl<B: DenseLinear + ExactGelu, C: CheckpointStrategy> DenseLinear for Autodiff<B, C> {
    fn dense_linear(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        let (x_tracked, weight_tracked) = (x.is_tracked(), weight.is_tracked());
        match DenseLinearBackward
            .prepare::<C>([x.node(), weight.node(), bias.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(mut prep) => {
                let x_state = weight_tracked.then(|| prep.checkpoint(&x));
                let weight_state = x_tracked.then(|| prep.checkpoint(&weight));
                let out = B::dense_linear(
                    x.into_primitive(),
                    weight.into_primitive(),
                    bias.into_primitive(),
                );
                prep.finish((x_state, weight_state), out)
            }
            OpsKind::UnTracked(prep) => prep.finish(B::dense_linear(
                x.into_primitive(),
                weight.into_primitive(),
                bias.into_primitive(),
            )),
        }
    }

    fn dense_linear_residual(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        residual: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        let (x_tracked, weight_tracked) = (x.is_tracked(), weight.is_tracked());
        match DenseLinearResidualBackward
            .prepare::<C>([x.node(), weight.node(), bias.node(), residual.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(mut prep) => {
                let x_state = weight_tracked.then(|| prep.checkpoint(&x));
                let weight_state = x_tracked.then(|| prep.checkpoint(&weight));
                let out = B::dense_linear_residual(
                    x.into_primitive(),
                    weight.into_primitive(),
                    bias.into_primitive(),
                    residual.into_primitive(),
                );
                prep.finish((x_state, weight_state), out)
            }
            OpsKind::UnTracked(prep) => prep.finish(B::dense_linear_residual(
                x.into_primitive(),
                weight.into_primitive(),
                bias.into_primitive(),
                residual.into_primitive(),
            )),
        }
    }

    /// Untracked (inference), the backend's fused operation; tracked, the dense layer and GELU
    /// as two operations, whose backward passes are the ones training takes.
    fn dense_linear_gelu(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        if x.is_tracked() || weight.is_tracked() || bias.is_tracked() {
            return Self::exact_gelu(Self::dense_linear(x, weight, bias));
        }
        match DenseLinearBackward.prepare::<C>([x.node(), weight.node(), bias.node()]).compute_bound().stateful() {
            OpsKind::UnTracked(prep) => prep.finish(B::dense_linear_gelu(
                x.into_primitive(),
                weight.into_primitive(),
                bias.into_primitive(),
            )),
            OpsKind::Tracked(_) => unreachable!("no operand is tracked"),
        }
    }

    /// The three gradient products below are only reached for a gradient of a gradient, which
    /// training never takes.
    fn dense_input_gradient(
        _grad: FloatTensor<Self>,
        _weight: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        unimplemented!("the dense layer has no second derivative")
    }

    fn dense_weight_gradient(_x: FloatTensor<Self>, _grad: FloatTensor<Self>) -> FloatTensor<Self> {
        unimplemented!("the dense layer has no second derivative")
    }

    fn dense_bias_gradient(_grad: FloatTensor<Self>) -> FloatTensor<Self> {
        unimplemented!("the dense layer has no second derivative")
    }

    fn dense_parameter_gradients(
        _x: FloatTensor<Self>,
        _grad: FloatTensor<Self>,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        unimplemented!("the dense layer has no second derivative")
    }
}
