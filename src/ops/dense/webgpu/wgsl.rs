//! [`BlockedMatmul`] on burn's cubecl backend: `blocked_4x4.wgsl`, launched as a source kernel.
//!
//! The kernel needs K and N to be multiples of 4, which the dense layers are and attention (over
//! 65 tokens) is not: such operands are copied into zero-padded ones first and the padded output
//! columns sliced off. A scalar-load variant that handled any shape took 5–8× as long inside
//! burn as padding plus the vec4 kernel (though the same WGSL alone in a page did not; the cause
//! was not found).
//!
//! The shape is baked into the WGSL as constants (one compiled pipeline per shape; a training
//! run has a dozen), so the kernel needs no metadata buffer and its loops have fixed bounds.

use super::BlockedMatmul;
use burn::backend::ops::FloatTensorOps;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Cube, DType, FloatDType, Slice, TensorMetadata};
use burn_cubecl::cubecl::prelude::{CubeCount, CubeDim, KernelId};
use burn_cubecl::cubecl::server::KernelArguments;
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::ops::numeric::empty_device_dtype;
use burn_cubecl::template::{KernelSource, SourceKernel, SourceTemplate};
use burn_cubecl::tensor::CubeTensor;

const WORKGROUP_SIZE: u32 = 64;
/// WebGPU's guaranteed `maxComputeWorkgroupsPerDimension`.
const MAX_WORKGROUPS_PER_DIMENSION: u32 = 65_535;
/// WebGPU's guaranteed `minStorageBufferOffsetAlignment`: a binding must start on it.
const STORAGE_OFFSET_ALIGNMENT: u64 = 256;

/// One product's shape; each distinct shape is its own pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Blocked4x4 {
    batch: usize,
    m: usize,
    k: usize,
    n: usize,
}

impl KernelSource for Blocked4x4 {
    fn source(&self) -> SourceTemplate {
        SourceTemplate::new(include_str!("blocked_4x4.wgsl"))
            .register("batch", self.batch.to_string())
            .register("m", self.m.to_string())
            .register("k4", (self.k / 4).to_string())
            .register("n4", (self.n / 4).to_string())
    }

    fn id(&self) -> KernelId {
        KernelId::new::<Self>().info(*self)
    }

    fn lang(&self) -> &'static str {
        "wgsl"
    }
}

impl BlockedMatmul for Cube {
    fn blocked_matmul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        let ([batch, m, k], [rhs_batch, rhs_k, n]) = (dims3(&lhs), dims3(&rhs));
        assert_eq!((batch, k), (rhs_batch, rhs_k), "blocked_matmul: [b, m, k] · [b, k, n]");
        let fits = lhs.dtype == DType::F32 && rhs.dtype == DType::F32;
        if !fits || batch * m * k * n == 0 {
            return Self::float_matmul(lhs, rhs);
        }
        let (k4, n4) = (k.next_multiple_of(4), n.next_multiple_of(4));
        let lhs = padded(lhs, [batch, m, k4]);
        let rhs = padded(rhs, [batch, k4, n4]);
        let out = empty_device_dtype(
            lhs.client.clone(),
            lhs.device.clone(),
            [batch, m, n4].into(),
            DType::F32,
        );

        let invocations = (batch * m.div_ceil(4) * (n4 / 4)) as u32;
        let groups = invocations.div_ceil(WORKGROUP_SIZE);
        let (x, y) = if groups <= MAX_WORKGROUPS_PER_DIMENSION {
            (groups, 1)
        } else {
            (MAX_WORKGROUPS_PER_DIMENSION, groups.div_ceil(MAX_WORKGROUPS_PER_DIMENSION))
        };
        let kernel = SourceKernel::new(
            Blocked4x4 { batch, m, k: k4, n: n4 },
            CubeDim::new_1d(WORKGROUP_SIZE),
        );
        let arguments = KernelArguments::new()
            .with_buffer(lhs.handle.clone().binding())
            .with_buffer(rhs.handle.clone().binding())
            .with_buffer(out.handle.clone().binding());
        out.client.launch(Box::new(kernel), CubeCount::Static(x, y, 1), arguments);
        if n4 == n {
            out
        } else {
            Self::float_slice(out, &[Slice::from(0..batch), Slice::from(0..m), Slice::from(0..n)])
        }
    }
}

fn dims3(tensor: &CubeTensor) -> [usize; 3] {
    let shape = tensor.shape();
    assert_eq!(shape.num_dims(), 3, "blocked_matmul takes rank-3 tensors");
    [shape[0], shape[1], shape[2]]
}

/// `tensor` in the top-left corner of zeros of `shape`, row-major and bindable.
fn padded(tensor: CubeTensor, shape: [usize; 3]) -> CubeTensor {
    let dims = dims3(&tensor);
    if dims == shape {
        return bindable(tensor);
    }
    let zeros = Cube::float_zeros(shape.into(), &tensor.device, FloatDType::F32);
    let corner = dims.map(|dim| Slice::from(0..dim));
    bindable(Cube::float_slice_assign(zeros, &corner, tensor))
}

/// Row-major, and starting where a storage binding may start (a narrowed view may not).
fn bindable(tensor: CubeTensor) -> CubeTensor {
    let tensor = into_contiguous(tensor);
    let offset = tensor.handle.offset_start.unwrap_or(0);
    if offset.is_multiple_of(STORAGE_OFFSET_ALIGNMENT) { tensor } else { tensor.copy() }
}
