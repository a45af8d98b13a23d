//! Plain `f32` slices in and out of burn's CPU backend tensors, for the CPU implementations of
//! the operations, whose arithmetic works on slices.

use burn::backend::DType;
use burn::backend::flex::FlexTensor;
use burn::tensor::{Shape, TensorData};

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
