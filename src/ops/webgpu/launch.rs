//! A WGSL template with its constants, launched on tensors' buffers through burn-cubecl's
//! source-kernel template.
//!
//! The shape goes into the template as constants (one pipeline per shape; a training run has a
//! few dozen), so loops have fixed bounds and nothing reads a metadata buffer. What changes from
//! one launch to the next (AdamW's learning rate) goes in a small uniform, bound after the
//! buffers. Every buffer is bound `read_write`: burn's memory pool may place an operand and an
//! output in one GPU buffer, and WebGPU refuses a buffer bound read-only and writable in one
//! dispatch (two writable bindings of disjoint ranges are allowed).

use std::fmt::Debug;
use std::hash::Hash;

use burn::backend::{DType, TensorMetadata};
use burn_cubecl::cubecl::prelude::{CubeCount, CubeDim, KernelId};
use burn_cubecl::cubecl::server::{KernelArguments, MetadataBindingInfo};
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::ops::numeric::empty_device_contiguous_dtype;
use burn_cubecl::template::{KernelSource, SourceKernel, SourceTemplate};
use burn_cubecl::tensor::CubeTensor;

use super::record::{LaunchRecord, record};

/// WebGPU's guaranteed `maxComputeWorkgroupsPerDimension`.
pub const MAX_WORKGROUPS_PER_DIMENSION: u32 = 65_535;
/// WebGPU's guaranteed `minStorageBufferOffsetAlignment`: a binding must start on it.
const STORAGE_OFFSET_ALIGNMENT: u64 = 256;

/// One WGSL kernel: its template and the constants that fill it. Each distinct value of the
/// implementing type is its own pipeline.
pub trait WgslKernel: Debug + Clone + PartialEq + Eq + Hash + Send + Sync + 'static {
    /// The WGSL text, with `{{name}}` where a constant goes.
    const TEMPLATE: &'static str;
    /// The `@workgroup_size` the template declares (64 invocations unless a kernel says).
    fn workgroup(&self) -> [u32; 3] {
        [64, 1, 1]
    }
    /// The `{{name}}`s and their values.
    fn constants(&self) -> Vec<(&'static str, String)>;
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Source<K>(K);

impl<K: WgslKernel> KernelSource for Source<K> {
    fn source(&self) -> SourceTemplate {
        let template = SourceTemplate::new(K::TEMPLATE);
        self.0.constants().into_iter().fold(template, |template, (name, value)| template.register(name, value))
    }

    fn id(&self) -> KernelId {
        KernelId::new::<Self>().info(self.0.clone())
    }

    fn lang(&self) -> &'static str {
        "wgsl"
    }
}

/// How many workgroups a launch has.
#[derive(Debug, Clone, Copy)]
pub enum Grid {
    /// `n` workgroups in a line, laid out in x and y within WebGPU's per-dimension limit; the
    /// kernel numbers them `id.x + id.y · num_workgroups.x`.
    Linear(u64),
    /// Workgroups in three dimensions, each within the limit.
    Xyz(u32, u32, u32),
}

impl Grid {
    /// A line of workgroups of `kernel` for `invocations`, one per lane.
    pub fn covering<K: WgslKernel>(kernel: &K, invocations: u64) -> Self {
        let [x, y, z] = kernel.workgroup();
        Grid::Linear(invocations.div_ceil(u64::from(x * y * z)).max(1))
    }

    fn count(self) -> CubeCount {
        match self {
            Grid::Linear(groups) => {
                let limit = u64::from(MAX_WORKGROUPS_PER_DIMENSION);
                let (x, y) = if groups <= limit { (groups, 1) } else { (limit, groups.div_ceil(limit)) };
                CubeCount::Static(x as u32, y as u32, 1)
            }
            Grid::Xyz(x, y, z) => CubeCount::Static(x, y, z),
        }
    }

    fn workgroups(self) -> u64 {
        match self.count() {
            CubeCount::Static(x, y, z) => u64::from(x) * u64::from(y) * u64::from(z),
            _ => unreachable!("grids are static"),
        }
    }
}

/// What a launch does in sequence, for the launch report: the most steps of one invocation's
/// main loop, and how many values of a sum over the batch's rows it adds one after another.
#[derive(Debug, Clone, Copy, Default)]
pub struct Serial {
    pub steps: u64,
    pub batch_sum: u64,
}

/// Launches `kernel` over `grid` with `buffers` bound in order (then `uniform`, where not empty,
/// as a uniform of `u32`s and `f32` bit patterns). Every buffer must be [`bindable`].
pub fn launch<K: WgslKernel>(kernel: K, grid: Grid, buffers: &[&CubeTensor], uniform: &[u32], serial: Serial) {
    let client = buffers.first().expect("a kernel binds a buffer").client.clone();
    let [x, y, z] = kernel.workgroup();
    record(|| LaunchRecord {
        kernel: short_name::<K>(),
        detail: format!("{kernel:?}"),
        workgroups: grid.workgroups(),
        invocations: grid.workgroups() * u64::from(x * y * z),
        serial_steps: serial.steps,
        batch_sum: serial.batch_sum,
        largest_binding: buffers.iter().map(|buffer| buffer.handle.size_in_used()).max().unwrap_or(0),
    });
    let mut arguments = KernelArguments::new();
    for buffer in buffers {
        arguments = arguments.with_buffer(buffer.handle.clone().binding());
    }
    if !uniform.is_empty() {
        // Whole 16-byte rows, as a uniform binding wants, packed two values to a word.
        let mut values = uniform.to_vec();
        values.resize(values.len().next_multiple_of(4), 0);
        let words = values.chunks(2).map(|pair| u64::from(pair[0]) | (u64::from(pair[1]) << 32)).collect();
        arguments = arguments.with_info(MetadataBindingInfo::custom(words));
    }
    let source = SourceKernel::new(Source(kernel), CubeDim::new_3d(x, y, z));
    client.launch(Box::new(source), grid.count(), arguments);
}

/// The kernel type's own name, without its path.
pub fn short_name<K>() -> &'static str {
    let name = std::any::type_name::<K>();
    name.rsplit("::").next().unwrap_or(name)
}

/// An uninitialised `f32` tensor of `shape` beside `like`, row-major from the start of its
/// binding.
pub fn empty_like(like: &CubeTensor, shape: &[usize]) -> CubeTensor {
    empty_device_contiguous_dtype(like.client.clone(), like.device.clone(), shape.into(), DType::F32)
}

/// `tensor` row-major, and starting where a storage binding may start (a narrowed view may not).
pub fn bindable(tensor: CubeTensor) -> CubeTensor {
    let tensor = into_contiguous(tensor);
    let offset = tensor.handle.offset_start.unwrap_or(0);
    if offset.is_multiple_of(STORAGE_OFFSET_ALIGNMENT) { tensor } else { tensor.copy() }
}

/// Whether the kernels can take `tensor`: `f32` (the model's only type).
pub fn is_f32(tensor: &CubeTensor) -> bool {
    tensor.dtype == DType::F32
}

/// The dimensions of `tensor`.
pub fn dims(tensor: &CubeTensor) -> Vec<usize> {
    tensor.shape().iter().copied().collect()
}

/// Whether the adapter behind `tensor` is no card (cubecl knows natively; in a browser the page
/// says so through [`super::set_kernel_family`]).
pub fn on_software_adapter(tensor: &CubeTensor) -> bool {
    tensor.client.properties().identity.physical.is_none()
}

/// `tensor` (row-major) seen as `shape`, without a copy.
pub fn reshaped(tensor: CubeTensor, shape: &[usize]) -> CubeTensor {
    use burn::backend::ops::FloatTensorOps;
    burn::backend::Cube::float_reshape(tensor, shape.into())
}

/// Row `index` of the row-major `[rows, width]` tensor `matrix`, as a `[width]` tensor of its own
/// binding: a view where the row starts on a binding's alignment, else a copy (cubecl reads and
/// binds only aligned views).
pub fn row(matrix: &CubeTensor, index: usize, width: usize) -> CubeTensor {
    use burn::backend::Slice;
    use burn::backend::ops::FloatTensorOps;
    let row = burn::backend::Cube::float_slice(matrix.clone(), &[Slice::from(index..index + 1), Slice::from(0..width)]);
    bindable(reshaped(row, &[width]))
}
