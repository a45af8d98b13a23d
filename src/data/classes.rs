//! CIFAR-10's class names, in label order (as in the archive's `batches.meta.txt`).

/// Label `i` of CIFAR-10 is `CLASS_NAMES[i]`.
pub const CLASS_NAMES: [&str; 10] = [
    "airplane",
    "automobile",
    "bird",
    "cat",
    "deer",
    "dog",
    "frog",
    "horse",
    "ship",
    "truck",
];
