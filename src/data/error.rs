//! What can go wrong between a CIFAR-10 archive (or the prepared asset) and a batch, in words a
//! user can act on: every message names the file and says what to do.

use thiserror::Error;

use crate::display::group_thousands;

/// Errors of the data layer.
#[derive(Debug, Error)]
pub enum DataError {
    /// `found` says what the data starts with instead ("starts with 50 4b, not 1f 8b", "is empty").
    #[error("not a gzip file: {name} {found}; pass CIFAR-10's binary archive, cifar-10-binary.tar.gz")]
    NotGzip { name: String, found: String },

    #[error("{name}: the gzip data is corrupt{} ({detail}); download the archive again", inside(entry))]
    CorruptGzip { name: String, entry: Option<String>, detail: String },

    #[error("{name}: not a tar archive inside the gzip layer{} ({detail}); pass cifar-10-binary.tar.gz", inside(entry))]
    NotTar { name: String, entry: Option<String>, detail: String },

    #[error("{name} ends too early{}: the download is incomplete, fetch it again", inside(entry))]
    ArchiveTruncated { name: String, entry: Option<String> },

    #[error("{file}: the data ends after {} of its {} bytes; the download is incomplete, fetch it again", thousands(*read), thousands(*expected))]
    Truncated { file: String, read: u64, expected: u64 },

    #[error("{file}: {} bytes is not a whole number of 3,073-byte records; the file is damaged or not from CIFAR-10's binary version", thousands(*bytes))]
    RecordSize { file: String, bytes: u64 },

    #[error("{file}: the batch holds no records; the file is damaged, fetch the archive again")]
    EmptyBatch { file: String },

    #[error("{file}: record {index} (counting from 0) has label {label}, but CIFAR-10's labels are 0–9; is this CIFAR-100's archive?")]
    BadLabel { file: String, index: usize, label: u8 },

    #[error("{place} has no cifar-10-batches-bin/{file}; pass CIFAR-10's binary version (cifar-10-binary.tar.gz), not the Python or MATLAB one")]
    MissingFile { place: String, file: String },

    #[error("the archive holds cifar-10-batches-bin/{file} twice; pass an unmodified cifar-10-binary.tar.gz")]
    DuplicateFile { file: String },

    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },

    #[error("the subset asks for {wanted} images{}, but only {available} exist; ask for fewer", of_class(class))]
    NotEnoughImages { class: Option<u8>, wanted: usize, available: usize },

    #[error("{name}: not a prepared dataset (it does not start with VITDATA); make one with `cargo run --release --bin prepare-data`")]
    AssetNotRecognised { name: String },

    #[error("{name}: prepared-dataset format version {found}, but this build reads version {supported}; rebuild it with this version's prepare-data")]
    AssetVersion { name: String, found: u32, supported: u32 },

    #[error("{name}: the file ends after {} bytes but its header needs {}; the download is incomplete, fetch it again", thousands(*got), thousands(*needed))]
    AssetTruncated { name: String, needed: u64, got: u64 },

    #[error("{name}: the content does not match its SHA-256; the file is damaged, fetch it again")]
    AssetChecksum { name: String },

    #[error("{name}: {detail}; rebuild it with prepare-data")]
    AssetInvalid { name: String, detail: String },
}

/// Byte counts grouped for reading at a glance: `30721000` → `"30,721,000"`.
pub fn thousands(value: u64) -> String {
    usize::try_from(value).map(group_thousands).unwrap_or_else(|_| value.to_string())
}

fn inside(entry: &Option<String>) -> String {
    entry.as_ref().map(|entry| format!(" inside {entry}")).unwrap_or_default()
}

fn of_class(class: &Option<u8>) -> String {
    class.map(|class| format!(" of class {class}")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_file() {
        let error = DataError::RecordSize { file: "data_batch_3.bin".into(), bytes: 30_721_000 };
        assert!(error.to_string().starts_with("data_batch_3.bin: 30,721,000 bytes is not a whole number of 3,073-byte records"));
    }
}
