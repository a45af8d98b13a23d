//! The data layer: CIFAR-10 from its official binary archive to batches of tensors, plus the
//! compact asset the page downloads instead of the 170 MB archive.
//!
//! ```text
//!  cifar-10-binary.tar.gz ──cifar──▶ CifarDataset { train, test: ImageSet }
//!                                        │ subset (First(20_000) or Balanced)
//!                   prepare-data ◀───────┤
//!   cifar10-20k.vitdata ──asset──▶ (train, test: ImageSet)       (what the page downloads)
//!                                        │ batch::EpochShuffler  (seeded order per epoch)
//!                                        │ augment               (flip, or the heavy recipe)
//!                                        ▼ batch               ([batch, 3, 32, 32] f32, [batch] i64)
//! ```
//!
//! A person's own classes come in through [`image_folder`] as the same [`ImageSet`].
//!
//! Everything here is plain Rust and compiles for wasm32; only the file-system helpers are
//! native-only. Randomness comes from [`rng::Pcg32`], so one seed gives the same subset, order and
//! augmentation natively and in the browser.

pub mod asset;
pub mod augment;
pub mod batch;
pub mod cifar;
pub mod classes;
pub mod decoded;
pub mod error;
pub mod image_folder;
pub mod image_set;
pub mod manifest;
pub mod preprocess;
pub mod rng;
pub mod subset;

pub use error::DataError;
pub use image_set::ImageSet;

/// Width and height of a CIFAR-10 image.
pub const IMAGE_SIDE: usize = 32;
/// Pixels in one image, per channel.
pub const IMAGE_PIXELS: usize = IMAGE_SIDE * IMAGE_SIDE;
/// Bytes of one planar RGB image: 1,024 red, then 1,024 green, then 1,024 blue.
pub const IMAGE_BYTES: usize = 3 * IMAGE_PIXELS;
/// CIFAR-10 has ten classes, labelled 0–9 (see [`classes`]).
pub const CLASS_COUNT: usize = 10;
