//! [`FusedAttention`] on a GPU: one workgroup per (image, head) and one invocation per token,
//! the head's rows that every invocation reads passing through workgroup memory: forward
//! (`forward.wgsl`) reads its queries, keys and values straight from the QKV projection's output
//! and writes the heads side by side; backward (`backward.wgsl`) computes every part of `∂qkv` in
//! one launch. Two launches per block where burn's operations take about forty. An invocation's
//! loops (65 tokens of 32 values) are short on a GPU and long enough on a software renderer, so
//! both kernel families share these kernels.

use burn::backend::Cube;
use burn::backend::tensor::FloatTensor;

use super::FusedAttention;
use crate::ops::cpu::dropout_mask::DropoutMask;
use crate::ops::webgpu::launch::{Grid, Serial, WgslKernel, bindable, dims, empty_like, launch};

/// The most tokens one workgroup (an invocation per token) takes: WebGPU's guaranteed
/// `maxComputeInvocationsPerWorkgroup`.
const MAX_TOKENS: usize = 256;
/// WebGPU's guaranteed `maxComputeWorkgroupStorageSize`, which a head's rows must fit.
const WORKGROUP_MEMORY: usize = 16_384;

/// One attention core's sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Heads {
    batch: usize,
    tokens: usize,
    heads: usize,
    head_dim: usize,
}

impl Heads {
    fn of(qkv: &FloatTensor<Cube>, heads: usize) -> Self {
        let dims = dims(qkv);
        assert_eq!(dims.len(), 3, "qkv is [batch, tokens, 3·dim]");
        let shape = Self { batch: dims[0], tokens: dims[1], heads, head_dim: dims[2] / (3 * heads) };
        assert!(shape.fits(dims[2]), "the GPU attention takes these heads (see super::attention_core)");
        shape
    }

    fn fits(&self, width: usize) -> bool {
        width == 3 * self.heads * self.head_dim
            && self.head_dim.is_multiple_of(4)
            && self.tokens <= MAX_TOKENS
            && self.tokens * self.head_dim * 4 <= WORKGROUP_MEMORY
    }

    fn constants(&self) -> Vec<(&'static str, String)> {
        vec![
            ("pairs", (self.batch * self.heads).to_string()),
            ("tokens", self.tokens.to_string()),
            ("heads", self.heads.to_string()),
            ("head_dim4", (self.head_dim / 4).to_string()),
            ("head_rows", include_str!("heads.wgsl").into()),
            ("scale", format!("{:?}", 1.0 / (self.head_dim as f32).sqrt())),
        ]
    }

    /// One workgroup per (image, head).
    fn grid(&self) -> Grid {
        Grid::Linear((self.batch * self.heads) as u64)
    }

    fn serial(&self) -> Serial {
        Serial { steps: (self.tokens * self.head_dim / 4) as u64, batch_sum: 0 }
    }
}

/// Whether the GPU attention takes heads of `head_dim` over `tokens`.
pub fn fits(tokens: usize, heads: usize, head_dim: usize) -> bool {
    Heads { batch: 1, tokens, heads, head_dim }.fits(3 * heads * head_dim)
}

macro_rules! attention_kernel {
    ($name:ident, $file:literal) => {
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        struct $name(Heads);

        impl WgslKernel for $name {
            const TEMPLATE: &'static str = include_str!($file);
            fn workgroup(&self) -> [u32; 3] {
                [self.0.tokens as u32, 1, 1]
            }
            fn constants(&self) -> Vec<(&'static str, String)> {
                self.0.constants()
            }
        }
    };
}

attention_kernel!(AttentionForward, "forward.wgsl");
attention_kernel!(AttentionBackward, "backward.wgsl");

impl FusedAttention for Cube {
    fn fused_attention(qkv: FloatTensor<Self>, heads: usize, mask: DropoutMask) -> (FloatTensor<Self>, FloatTensor<Self>) {
        assert!(mask.is_none(), "the GPU attention drops nothing out (super::attention_core routes around it)");
        let shape = Heads::of(&qkv, heads);
        let Heads { batch, tokens, head_dim, .. } = shape;
        let qkv = bindable(qkv);
        let attended = empty_like(&qkv, &[batch, tokens, heads * head_dim]);
        let weights = empty_like(&qkv, &[batch, heads, tokens, tokens]);
        launch(AttentionForward(shape), shape.grid(), &[&qkv, &attended, &weights], &[], shape.serial());
        (attended, weights)
    }

    fn fused_attention_backward(
        qkv: FloatTensor<Self>,
        weights: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        heads: usize,
        mask: DropoutMask,
    ) -> FloatTensor<Self> {
        assert!(mask.is_none(), "the GPU attention drops nothing out");
        let shape = Heads::of(&qkv, heads);
        let (qkv, weights, grad) = (bindable(qkv), bindable(weights), bindable(grad));
        let grad_qkv = empty_like(&qkv, &dims(&qkv));
        let score_grads = empty_like(&qkv, &dims(&weights));
        let buffers = [&qkv, &weights, &grad, &grad_qkv, &score_grads];
        launch(AttentionBackward(shape), shape.grid(), &buffers, &[], shape.serial());
        grad_qkv
    }
}
