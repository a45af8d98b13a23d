//! Weights and inputs defined by an integer hash rather than a random generator, so that native
//! code, the wasm CPU backend and WebGPU can be checked against the same expected logits.
//! (Integer arithmetic is exact everywhere; `sin` and friends differ by an ulp between libms.)

use burn::module::{Module, ModuleMapper, Param};
use burn::tensor::{Tensor, TensorData};

use super::VisionTransformer;

/// A value in [-1, 1) determined by two integers (a SplitMix-style mix, exact on every target).
pub fn hash_unit(index: u64, stream: u64) -> f32 {
    let mut x = index.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ stream.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 31;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 29;
    (x >> 40) as f32 / (1u64 << 23) as f32 - 1.0
}

/// Replaces every parameter with hashed values: vectors (biases, LayerNorm gains) at 1 ± 0.2 so no
/// layer silences its input; other tensors uniform in ±√(3/side), `side` being the smaller of
/// their first dimension and the rest (about the fan-in), so activations keep unit scale and the
/// logits depend clearly on the image.
pub fn deterministic_weights(model: VisionTransformer) -> VisionTransformer {
    struct Filler {
        tensor_index: u64,
    }
    impl ModuleMapper for Filler {
        fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
            let stream = self.tensor_index;
            self.tensor_index += 1;
            param.map(|tensor| {
                let shape = tensor.shape();
                let first = shape.dims::<D>()[0];
                let side = first.min(shape.num_elements() / first);
                let (offset, scale) = if D == 1 { (1.0, 0.2) } else { (0.0, (3.0 / side as f32).sqrt()) };
                let values = (0..shape.num_elements() as u64)
                    .map(|i| offset + scale * hash_unit(i, stream))
                    .collect::<Vec<f32>>();
                // A parameter that tracked gradients keeps doing so, so the model trains too.
                let tracked = tensor.is_require_grad();
                Tensor::from_data(TensorData::new(values, shape), &tensor.device()).set_require_grad(tracked)
            })
        }
    }
    model.map(&mut Filler { tensor_index: 1 })
}

/// `batch` images of 3×32×32 with values in [-2, 2), as normalised planar floats.
pub fn deterministic_images(batch: usize) -> Vec<f32> {
    (0..(batch * 3 * 32 * 32) as u64).map(|i| 2.0 * hash_unit(i, 0)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_spreads_over_the_unit_interval() {
        let values: Vec<f32> = (0..10_000).map(|i| hash_unit(i, 3)).collect();
        assert!(values.iter().all(|v| (-1.0..1.0).contains(v)));
        let mean = values.iter().sum::<f32>() / values.len() as f32;
        assert!(mean.abs() < 0.05, "mean {mean}");
        assert_ne!(hash_unit(5, 1), hash_unit(5, 2));
    }
}
