//! Plain `f32` slices in and out of burn's CPU backend tensors, for the CPU implementations of
//! the operations, whose arithmetic works on slices.

use std::mem::MaybeUninit;

use burn::backend::DType;
use burn::backend::flex::FlexTensor;
use burn::tensor::{Shape, TensorData};

use super::parallel;

/// Below this many values one thread fills a buffer faster than waking the others.
const PARALLEL_FILL: usize = 1 << 16;

/// `len` zeros, written block by block on the pool's threads: an operation's output buffer,
/// zeroed where `vec![0.0; len]` would zero it in one serial pass.
pub fn zeros(len: usize) -> Vec<f32> {
    filled(len, 1, |block| {
        for value in block {
            value.write(0.0);
        }
    })
}

/// `rows` copies of `row` one after another, written on the pool's threads: the dense layer's
/// output starts as its bias.
pub fn repeated_rows(row: &[f32], rows: usize) -> Vec<f32> {
    filled(rows * row.len(), row.len(), |block| {
        for copy in block.chunks_mut(row.len()) {
            for (value, &from) in copy.iter_mut().zip(row) {
                value.write(from);
            }
        }
    })
}

/// `len` values, split into blocks of whole `unit`s (one per thread) that `write` fills, every
/// value of its block.
fn filled(len: usize, unit: usize, write: impl Fn(&mut [MaybeUninit<f32>]) + Sync + Send) -> Vec<f32> {
    let mut values = Vec::with_capacity(len);
    let blocks = if len < PARALLEL_FILL { 1 } else { parallel::threads() };
    let block = len.div_ceil(unit.max(1)).div_ceil(blocks).max(1) * unit.max(1);
    parallel::for_each(values.spare_capacity_mut()[..len].chunks_mut(block), &write);
    // SAFETY: the blocks cover 0..len, and `write` (private to this module, and each of its
    // callers above writes every value of its block) initialised every value in them.
    unsafe { values.set_len(len) };
    values
}

/// `tensor` with its values in row-major order from offset 0, copied only if they are not.
pub fn contiguous(tensor: FlexTensor) -> FlexTensor {
    assert_eq!(tensor.dtype(), DType::F32, "the fused CPU operations run in f32");
    if tensor.is_contiguous() && tensor.layout().start_offset() == 0 {
        tensor
    } else {
        tensor.to_contiguous()
    }
}

/// The values of a tensor returned by [`contiguous`].
pub fn values(tensor: &FlexTensor) -> &[f32] {
    tensor.as_slice::<f32>().expect("a contiguous f32 tensor")
}

/// A tensor owning `values`. Unlike `FlexTensor::empty`, which allocates zeroed bytes and then
/// copies them to realign them, a `Vec<f32>` becomes the tensor's storage as it is.
pub fn from_values(values: Vec<f32>, shape: impl Into<Shape>) -> FlexTensor {
    FlexTensor::from_data(TensorData::new(values, shape))
}
