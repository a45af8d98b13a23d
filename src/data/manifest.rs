//! `manifest.json`, written beside the prepared dataset: the small file the page fetches first
//! (never cached) to learn the asset's name and hash, so a cached copy is used only while it is
//! still the one being served.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetManifest {
    /// The asset's file name, relative to the manifest.
    pub file: String,
    /// Lowercase hex SHA-256 of the whole asset file.
    pub sha256: String,
    pub bytes: u64,
    pub train_images: usize,
    pub test_images: usize,
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_in_lowercase_hex() {
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
