//! The backward pass of [`DenseLinear`]: `∂x = ∂out·Wᵀ`, `∂W = xᵀ·∂out`, `∂b = Σ_rows ∂out`,
//! each computed only for an operand that needs it, the last two together where both are; with a
//! residual added to the output, its gradient is the output's. And the backward pass of an
//! encoder block's whole MLP, whose gradient through GELU is applied by the product that makes it.

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
    parents: [Option<NodeId>; 3],
    (x, weight): DenseState,
    grad: FloatTensor<B>,
    grads: &mut Gradients,
    checkpointer: &mut Checkpointer,
) {
    let mut retrieve =
        |id: Option<NodeId>| id.map(|id| checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(id));
    let (x, weight) = (retrieve(x), retrieve(weight));
    register_layer_gradients::<B>(parents, x, weight, grad, grads);
}

/// [`register_dense_gradients`] from the layer's input and weight themselves.
fn register_layer_gradients<B: DenseLinear>(
    [x_node, weight_node, bias_node]: [Option<NodeId>; 3],
    x: Option<FloatTensor<B>>,
    weight: Option<FloatTensor<B>>,
    grad: FloatTensor<B>,
    grads: &mut Gradients,
) {
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

/// The backward pass of [`DenseLinear::dense_mlp_residual`]: with `z = x·W₁ + b₁` and `h =
/// gelu(z)`, `∂residual = ∂out`, `∂W₂ = hᵀ·∂out`, `∂b₂ = Σ ∂out`, then `∂z = (∂out·W₂ᵀ) ⊙ gelu'(z)`
/// in one product, and the first layer's gradients from `∂z`.
#[derive(Debug)]
struct MlpResidualBackward;

/// What the backward pass reads: the input, both weights, and GELU's input and output.
#[derive(Debug, Clone)]
struct MlpState<B: DenseLinear> {
    x: FloatTensor<B>,
    w_in: FloatTensor<B>,
    w_out: FloatTensor<B>,
    pre: FloatTensor<B>,
    hidden: FloatTensor<B>,
}

impl<B: DenseLinear> Backward<B, 6> for MlpResidualBackward {
    type State = MlpState<B>;

    fn backward(
        self,
        ops: Ops<Self::State, 6>,
        grads: &mut Gradients,
        _checkpointer: &mut Checkpointer,
    ) {
        let [x_node, w_in_node, b_in_node, w_out_node, b_out_node, residual_node] =
            ops.parents.map(|node| node.map(|node| node.id));
        let MlpState { x, w_in, w_out, pre, hidden } = ops.state;
        let grad = grads.consume::<B>(&ops.node);
        if let Some(node) = residual_node {
            grads.register::<B>(node, grad.clone());
        }
        let first_layer = [x_node, w_in_node, b_in_node];
        let grad_pre = first_layer.iter().any(Option::is_some).then(|| B::dense_input_gradient_gelu(grad.clone(), w_out, pre));
        register_layer_gradients::<B>([None, w_out_node, b_out_node], Some(hidden), None, grad, grads);
        if let Some(grad_pre) = grad_pre {
            register_layer_gradients::<B>(first_layer, Some(x), Some(w_in), grad_pre, grads);
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

    fn dense_mlp_residual(
        x: FloatTensor<Self>,
        w_in: FloatTensor<Self>,
        b_in: FloatTensor<Self>,
        w_out: FloatTensor<Self>,
        b_out: FloatTensor<Self>,
        residual: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        let parents = [x.node(), w_in.node(), b_in.node(), w_out.node(), b_out.node(), residual.node()];
        let [x, w_in, b_in, w_out, b_out, residual] = [x, w_in, b_in, w_out, b_out, residual].map(|tensor| tensor.into_primitive());
        match MlpResidualBackward.prepare::<C>(parents).compute_bound().stateful() {
            OpsKind::Tracked(prep) => {
                let (pre, hidden) = B::dense_linear_gelu_keeping(x.clone(), w_in.clone(), b_in);
                let out = B::dense_linear_residual(hidden.clone(), w_out.clone(), b_out, residual);
                prep.finish(MlpState { x, w_in, w_out, pre, hidden }, out)
            }
            OpsKind::UnTracked(prep) => prep.finish(B::dense_mlp_residual(x, w_in, b_in, w_out, b_out, residual)),
        }
    }

    /// Only [`DenseLinear::dense_mlp_residual`] keeps GELU's input, and calls the backend below.
    fn dense_linear_gelu_keeping(
        _x: FloatTensor<Self>,
        _weight: FloatTensor<Self>,
        _bias: FloatTensor<Self>,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        unimplemented!("only the MLP's forward pass keeps GELU's input, on the backend below")
    }

    /// The gradient products below are only reached for a gradient of a gradient, which
    /// training never takes.
    fn dense_input_gradient_gelu(
        _grad: FloatTensor<Self>,
        _weight: FloatTensor<Self>,
        _pre: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        unimplemented!("the MLP has no second derivative")
    }

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
