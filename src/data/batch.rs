//! From images to the model's input: a seeded order per epoch, augmented and normalised batches,
//! and the tensors `Trainer::step` takes.

use burn::tensor::{Device, Int, Tensor, TensorData};

use super::augment::{AugmentRecipe, augment};
use super::rng::Pcg32;
use super::{IMAGE_BYTES, IMAGE_SIDE, ImageSet};
use crate::data::preprocess::normalize_planar_into;

/// One batch on the host, ready to become tensors.
///
/// # Shapes
/// `images`: `[len, 3, 32, 32]` normalised f32, flattened; `labels`: `[len]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Batch {
    pub images: Vec<f32>,
    pub labels: Vec<i64>,
}

impl Batch {
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }
}

/// Builds the batch of `set`'s images at `indices`, each augmented by `recipe`.
pub fn assemble_batch(set: &ImageSet, indices: &[usize], recipe: AugmentRecipe, rng: &mut Pcg32) -> Batch {
    let mut batch = Batch::default();
    assemble_batch_into(set, indices, recipe, rng, &mut batch);
    batch
}

/// [`assemble_batch`] into an existing batch, reusing its memory from step to step.
pub fn assemble_batch_into(set: &ImageSet, indices: &[usize], recipe: AugmentRecipe, rng: &mut Pcg32, batch: &mut Batch) {
    batch.images.resize(indices.len() * IMAGE_BYTES, 0.0);
    batch.labels.clear();
    let mut augmented = [0u8; IMAGE_BYTES];
    for (&index, out) in indices.iter().zip(batch.images.chunks_exact_mut(IMAGE_BYTES)) {
        augment(set.image(index), &mut augmented, recipe, rng);
        normalize_planar_into(&augmented, out);
        batch.labels.push(i64::from(set.label(index)));
    }
}

/// Moves a batch onto `device`.
///
/// # Shapes
/// Returns images `[batch, 3, 32, 32]` and labels `[batch]`.
pub fn batch_tensors(batch: Batch, device: &Device) -> (Tensor<4>, Tensor<1, Int>) {
    let len = batch.len();
    let images = Tensor::<4>::from_data(TensorData::new(batch.images, [len, 3, IMAGE_SIDE, IMAGE_SIDE]), device);
    let labels = Tensor::<1, Int>::from_data(TensorData::new(batch.labels, [len]), device);
    (images, labels)
}

/// A seeded order of the training set for each epoch, cut into batches; the last, partial
/// batch is kept. Each epoch's order depends only on (seed, epoch), so training can resume at
/// any epoch with the same batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochShuffler {
    pub len: usize,
    pub batch_size: usize,
    pub seed: u64,
}

impl EpochShuffler {
    /// # Panics
    /// If `batch_size` is 0.
    pub fn new(len: usize, batch_size: usize, seed: u64) -> Self {
        assert!(batch_size > 0, "a batch holds at least one image");
        Self { len, batch_size, seed }
    }

    /// Batches per epoch, the last one possibly partial.
    pub fn batches_per_epoch(&self) -> usize {
        self.len.div_ceil(self.batch_size)
    }

    /// The permutation of `0..len` for `epoch`.
    pub fn order(&self, epoch: u64) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.len).collect();
        Pcg32::new(self.seed, epoch).shuffle(&mut order);
        order
    }

    /// `epoch`'s batches of indices: slices of [`EpochShuffler::order`].
    pub fn batches<'a>(&self, order: &'a [usize]) -> std::slice::Chunks<'a, usize> {
        order.chunks(self.batch_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::preprocess::normalize_planar;

    fn tiny_set() -> ImageSet {
        let mut set = ImageSet::default();
        for image in 0..5u8 {
            set.push(image % 10, &[image * 40; IMAGE_BYTES]);
        }
        set
    }

    #[test]
    fn a_batch_is_normalised_planar_with_its_labels() {
        let set = tiny_set();
        let batch = assemble_batch(&set, &[3, 1], AugmentRecipe::None, &mut Pcg32::new(0, 0));
        assert_eq!(batch.labels, [3, 1]);
        assert_eq!(batch.images.len(), 2 * IMAGE_BYTES);
        assert_eq!(batch.images[..IMAGE_BYTES], normalize_planar(set.image(3)));
        assert_eq!(batch.images[IMAGE_BYTES..], normalize_planar(set.image(1)));
    }

    #[test]
    fn tensors_have_the_model_input_shapes() {
        let set = tiny_set();
        let batch = assemble_batch(&set, &[0, 1, 2], AugmentRecipe::Flip, &mut Pcg32::new(0, 0));
        let device = Device::flex();
        let (images, labels) = batch_tensors(batch, &device);
        assert_eq!(images.dims(), [3, 3, 32, 32]);
        assert_eq!(labels.into_data().iter::<i64>().collect::<Vec<_>>(), [0, 1, 2]);
    }

    #[test]
    fn epochs_are_seeded_permutations_with_a_partial_last_batch() {
        let shuffler = EpochShuffler::new(10, 4, 42);
        assert_eq!(shuffler.batches_per_epoch(), 3);
        let order = shuffler.order(0);
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(sorted, (0..10).collect::<Vec<_>>());
        assert_eq!(order, shuffler.order(0), "same seed and epoch, same order");
        assert_ne!(order, shuffler.order(1), "each epoch its own order");
        let sizes: Vec<usize> = shuffler.batches(&order).map(|batch| batch.len()).collect();
        assert_eq!(sizes, [4, 4, 2]);
        assert_eq!(shuffler.batches(&order).flatten().copied().collect::<Vec<_>>(), order);
    }
}
