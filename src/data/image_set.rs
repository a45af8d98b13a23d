//! A set of 32×32 RGB images with their labels, kept as CIFAR-10 stores them.

use super::{CLASS_COUNT, IMAGE_BYTES};

/// Images in CIFAR-10's planar layout, in record order.
///
/// # Shapes
/// `pixels` is `[len, 3, 32, 32]` u8 flattened (each image 1,024 R, 1,024 G, 1,024 B bytes,
/// row by row); `labels` is `[len]`, each 0–9. The fields are public for cheap moves; keep
/// `pixels.len() == labels.len() * IMAGE_BYTES`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageSet {
    pub pixels: Vec<u8>,
    pub labels: Vec<u8>,
}

impl ImageSet {
    /// An empty set with room for `images` images.
    pub fn with_capacity(images: usize) -> Self {
        Self { pixels: Vec::with_capacity(images * IMAGE_BYTES), labels: Vec::with_capacity(images) }
    }

    /// How many images the set holds.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The planar bytes of image `index`, `[3, 32, 32]`.
    pub fn image(&self, index: usize) -> &[u8] {
        &self.pixels[index * IMAGE_BYTES..(index + 1) * IMAGE_BYTES]
    }

    pub fn label(&self, index: usize) -> u8 {
        self.labels[index]
    }

    /// Appends one image.
    ///
    /// # Panics
    /// If `image` is not `IMAGE_BYTES` long.
    pub fn push(&mut self, label: u8, image: &[u8]) {
        assert_eq!(image.len(), IMAGE_BYTES, "an image is 3 × 32 × 32 bytes");
        self.labels.push(label);
        self.pixels.extend_from_slice(image);
    }

    /// Images per class (labels above 9 are not counted).
    pub fn class_counts(&self) -> [usize; CLASS_COUNT] {
        let mut counts = [0; CLASS_COUNT];
        for &label in &self.labels {
            if let Some(count) = counts.get_mut(label as usize) {
                *count += 1;
            }
        }
        counts
    }

    /// A new set holding the images at `indices`, in that order.
    pub fn select(&self, indices: &[usize]) -> ImageSet {
        let mut chosen = ImageSet::with_capacity(indices.len());
        for &index in indices {
            chosen.push(self.label(index), self.image(index));
        }
        chosen
    }
}
