//! CIFAR-10's official binary version: `cifar-10-binary.tar.gz`, or its extracted folder.
//!
//! The archive holds `cifar-10-batches-bin/data_batch_1.bin` … `data_batch_5.bin` (training,
//! 10,000 records each) and `test_batch.bin`; a record is 3,073 bytes: one label byte (0–9),
//! then the image's 1,024 red, 1,024 green and 1,024 blue bytes, row by row.
//!
//! The tar is streamed: records go straight from the gzip decoder into the [`ImageSet`]s, so the
//! peak memory is the decoded pixels (184 MB for all 60,000 images) plus small buffers, never the
//! decompressed archive as well. Every check a damaged download can fail is made: gzip magic and
//! checksum, tar structure, whole records, labels 0–9, every expected file present exactly once.

use std::cell::RefCell;
use std::io::{self, Read};
use std::rc::Rc;

use flate2::read::MultiGzDecoder;

use super::{DataError, IMAGE_BYTES, ImageSet};

/// The folder the archive keeps its batches in.
pub const BATCH_FOLDER: &str = "cifar-10-batches-bin";
/// The training batches, in the order their records are numbered.
pub const TRAIN_FILES: [&str; 5] = ["data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin"];
/// The test batch.
pub const TEST_FILE: &str = "test_batch.bin";
/// Images in the test batch.
pub const TEST_IMAGES: usize = 10_000;
/// One record: the label byte, then the planar image.
pub const RECORD_BYTES: usize = 1 + IMAGE_BYTES;

/// Records read from the stream at a time: 64 records (197 KB) keeps reads large and memory small.
const RECORDS_PER_READ: usize = 64;

/// CIFAR-10's two splits, in record order (training: data_batch_1 first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CifarDataset {
    pub train: ImageSet,
    pub test: ImageSet,
}

/// How far the archive has been read: compressed bytes consumed, out of the total if known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveProgress {
    pub bytes_read: u64,
    pub total_bytes: Option<u64>,
}

impl ArchiveProgress {
    /// The fraction read, 0–1, when the total is known.
    pub fn fraction(&self) -> Option<f64> {
        self.total_bytes.filter(|&total| total > 0).map(|total| (self.bytes_read as f64 / total as f64).min(1.0))
    }
}

/// Decodes `cifar-10-binary.tar.gz` held in memory (e.g. fetched by the page).
pub fn decode_archive(bytes: &[u8]) -> Result<CifarDataset, DataError> {
    decode_archive_from_reader(bytes, "the archive", Some(bytes.len() as u64), |_| {})
}

/// Decodes `cifar-10-binary.tar.gz` from any reader, calling `progress` after every read of the
/// compressed stream (a few thousand times for the 170 MB archive; throttle in the callback if
/// drawing is costly). `name` names the archive in error messages.
pub fn decode_archive_from_reader<R: Read>(
    reader: R,
    name: &str,
    total_bytes: Option<u64>,
    progress: impl FnMut(ArchiveProgress),
) -> Result<CifarDataset, DataError> {
    let mut counted = CountingReader { inner: reader, bytes_read: 0, total_bytes, progress };
    let mut magic = [0u8; 2];
    let magic_len = read_up_to(&mut counted, &mut magic).map_err(|(source, _)| DataError::Io { path: name.into(), source })?;
    if magic[..magic_len] != [0x1f, 0x8b] {
        let found = match magic_len {
            0 => "is empty".to_string(),
            _ => {
                let start: Vec<String> = magic[..magic_len].iter().map(|byte| format!("{byte:02x}")).collect();
                format!("starts with {}, not 1f 8b", start.join(" "))
            }
        };
        return Err(DataError::NotGzip { name: name.into(), found });
    }
    let gzip_failure = Rc::new(RefCell::new(None));
    let gzip = WatchedReader { inner: MultiGzDecoder::new(io::Cursor::new(magic).chain(counted)), failure: gzip_failure.clone() };
    let mut archive = tar::Archive::new(gzip);
    let mut batches = Batches::default();
    let mut current_entry: Option<String> = None;

    // An error surfacing through tar is the gzip layer's if the watched reader saw one.
    let explain = |error: io::Error, entry: &Option<String>| -> DataError {
        match gzip_failure.borrow_mut().take() {
            Some((io::ErrorKind::UnexpectedEof, _)) => DataError::ArchiveTruncated { name: name.into(), entry: entry.clone() },
            Some((_, detail)) => DataError::CorruptGzip { name: name.into(), entry: entry.clone(), detail },
            None => DataError::NotTar { name: name.into(), entry: entry.clone(), detail: printable(&error.to_string()) },
        }
    };

    let entries = archive.entries().map_err(|error| explain(error, &None))?;
    for entry in entries {
        let mut entry = entry.map_err(|error| explain(error, &current_entry))?;
        let Some(file) = batch_file_name(&entry.path_bytes()) else { continue };
        current_entry = Some(file.clone());
        let size = entry.size();
        batches.read(&file, size, &mut entry).map_err(|error| match error {
            BatchError::Data(error) => error,
            BatchError::Io(error, read) => match explain(error, &current_entry) {
                DataError::ArchiveTruncated { .. } => DataError::Truncated { file: file.clone(), read, expected: size },
                other => other,
            },
        })?;
    }
    // Read past the tar's end-of-archive blocks so the gzip trailer's CRC-32 is checked too.
    io::copy(&mut archive.into_inner(), &mut io::sink()).map_err(|error| explain(error, &None))?;
    batches.finish(name)
}

/// Reads `cifar-10-binary.tar.gz` from a file, reporting progress as it goes.
#[cfg(not(target_family = "wasm"))]
pub fn read_archive_file(path: &std::path::Path, progress: impl FnMut(ArchiveProgress)) -> Result<CifarDataset, DataError> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|source| DataError::Io { path: name.clone(), source })?;
    let total = file.metadata().map(|metadata| metadata.len()).ok();
    decode_archive_from_reader(io::BufReader::with_capacity(1 << 16, file), &name, total, progress)
}

/// Reads an extracted `cifar-10-batches-bin/` folder.
#[cfg(not(target_family = "wasm"))]
pub fn read_batch_folder(folder: &std::path::Path) -> Result<CifarDataset, DataError> {
    let mut batches = Batches::default();
    for file in TRAIN_FILES.iter().chain([&TEST_FILE]) {
        let path = folder.join(file);
        let io_error = |source| DataError::Io { path: path.display().to_string(), source };
        let handle = match std::fs::File::open(&path) {
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Err(DataError::MissingFile { place: format!("the folder {}", folder.display()), file: file.to_string() });
            }
            other => other.map_err(io_error)?,
        };
        let size = handle.metadata().map_err(io_error)?.len();
        batches.read(file, size, &mut io::BufReader::new(handle)).map_err(|error| match error {
            BatchError::Data(error) => error,
            BatchError::Io(source, _) => DataError::Io { path: path.display().to_string(), source },
        })?;
    }
    batches.finish(&format!("the folder {}", folder.display()))
}

/// `cifar-10-batches-bin/data_batch_1.bin` (with or without `./`) → `data_batch_1.bin`;
/// anything else (the meta file, the folder itself, other folders) → `None`.
fn batch_file_name(path: &[u8]) -> Option<String> {
    let path = std::str::from_utf8(path).ok()?;
    let path = path.strip_prefix("./").unwrap_or(path);
    let (folder, file) = path.rsplit_once('/')?;
    let known = TRAIN_FILES.contains(&file) || file == TEST_FILE;
    (known && folder.rsplit('/').next() == Some(BATCH_FOLDER)).then(|| file.to_string())
}

/// The batches read so far, each into its split, remembering the order they came in.
#[derive(Default)]
struct Batches {
    train: ImageSet,
    test: Option<ImageSet>,
    /// Training batches read so far: (number 0–4, first record, record count), in archive order.
    train_spans: Vec<(usize, usize, usize)>,
}

enum BatchError {
    Data(DataError),
    /// A failed read, after this many bytes of the batch.
    Io(io::Error, u64),
}

impl Batches {
    /// Reads one batch file of `size` bytes from `reader` into its split.
    fn read(&mut self, file: &str, size: u64, reader: &mut impl Read) -> Result<(), BatchError> {
        let data_error = |error| Err(BatchError::Data(error));
        let train_number = TRAIN_FILES.iter().position(|&name| name == file);
        let seen = match train_number {
            Some(number) => self.train_spans.iter().any(|span| span.0 == number),
            None => self.test.is_some(),
        };
        if seen {
            return data_error(DataError::DuplicateFile { file: file.into() });
        }
        if size == 0 {
            return data_error(DataError::EmptyBatch { file: file.into() });
        }
        if !size.is_multiple_of(RECORD_BYTES as u64) {
            return data_error(DataError::RecordSize { file: file.into(), bytes: size });
        }
        let records = (size / RECORD_BYTES as u64) as usize;
        let mut test = ImageSet::default();
        let set = if train_number.is_some() { &mut self.train } else { &mut test };
        let first = set.len();
        set.labels.reserve(records);
        set.pixels.reserve(records * IMAGE_BYTES);

        let mut buffer = vec![0u8; RECORDS_PER_READ * RECORD_BYTES];
        let mut done = 0;
        while done < records {
            let count = RECORDS_PER_READ.min(records - done);
            let chunk = &mut buffer[..count * RECORD_BYTES];
            let read_before = (done * RECORD_BYTES) as u64;
            let got = read_up_to(reader, chunk).map_err(|(error, got)| BatchError::Io(error, read_before + got as u64))?;
            if got < chunk.len() {
                let read = read_before + got as u64;
                return data_error(DataError::Truncated { file: file.into(), read, expected: size });
            }
            for (offset, record) in chunk.chunks_exact(RECORD_BYTES).enumerate() {
                if record[0] > 9 {
                    return data_error(DataError::BadLabel { file: file.into(), index: done + offset, label: record[0] });
                }
                set.labels.push(record[0]);
                set.pixels.extend_from_slice(&record[1..]);
            }
            done += count;
        }
        match train_number {
            Some(number) => self.train_spans.push((number, first, records)),
            None => self.test = Some(test),
        }
        Ok(())
    }

    /// Checks that every batch came, and puts the training batches in numbered order (one copy,
    /// only for archives that store them out of order).
    fn finish(mut self, place: &str) -> Result<CifarDataset, DataError> {
        for (number, file) in TRAIN_FILES.iter().enumerate() {
            if !self.train_spans.iter().any(|span| span.0 == number) {
                return Err(DataError::MissingFile { place: place.into(), file: file.to_string() });
            }
        }
        let test = self.test.ok_or_else(|| DataError::MissingFile { place: place.into(), file: TEST_FILE.into() })?;
        if !self.train_spans.is_sorted_by_key(|span| span.0) {
            self.train_spans.sort_by_key(|span| span.0);
            let mut ordered = ImageSet::with_capacity(self.train.len());
            for &(_, first, count) in &self.train_spans {
                ordered.labels.extend_from_slice(&self.train.labels[first..first + count]);
                ordered.pixels.extend_from_slice(&self.train.pixels[first * IMAGE_BYTES..(first + count) * IMAGE_BYTES]);
            }
            self.train = ordered;
        }
        Ok(CifarDataset { train: self.train, test })
    }
}

/// Fills `buffer` as far as the stream allows; returns how many bytes it got, or the error with
/// how many it got before it.
fn read_up_to(reader: &mut impl Read, buffer: &mut [u8]) -> Result<usize, (io::Error, usize)> {
    let mut filled = 0;
    while filled < buffer.len() {
        match reader.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(got) => filled += got,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err((error, filled)),
        }
    }
    Ok(filled)
}

/// tar quotes the damaged header's raw bytes in its messages: keep the readable start.
fn printable(message: &str) -> String {
    let readable: String = message.chars().take_while(|c| c.is_ascii_graphic() || *c == ' ').take(80).collect();
    if readable.len() < message.len() { format!("{}…", readable.trim_end()) } else { readable }
}

/// Counts the compressed bytes read and reports them.
struct CountingReader<R, F> {
    inner: R,
    bytes_read: u64,
    total_bytes: Option<u64>,
    progress: F,
}

impl<R: Read, F: FnMut(ArchiveProgress)> Read for CountingReader<R, F> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let got = self.inner.read(buffer)?;
        self.bytes_read += got as u64;
        (self.progress)(ArchiveProgress { bytes_read: self.bytes_read, total_bytes: self.total_bytes });
        Ok(got)
    }
}

/// Remembers the gzip layer's failure, so an error surfacing through tar can be told apart
/// from a damaged tar.
struct WatchedReader<R> {
    inner: R,
    failure: Rc<RefCell<Option<(io::ErrorKind, String)>>>,
}

impl<R: Read> Read for WatchedReader<R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buffer).inspect_err(|error| {
            *self.failure.borrow_mut() = Some((error.kind(), error.to_string()));
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_paths_are_recognised() {
        assert_eq!(batch_file_name(b"cifar-10-batches-bin/data_batch_1.bin").as_deref(), Some("data_batch_1.bin"));
        assert_eq!(batch_file_name(b"./cifar-10-batches-bin/test_batch.bin").as_deref(), Some("test_batch.bin"));
        assert_eq!(batch_file_name(b"cifar-10-batches-bin/batches.meta.txt"), None);
        assert_eq!(batch_file_name(b"cifar-10-batches-py/data_batch_1.bin"), None);
        assert_eq!(batch_file_name(b"data_batch_1.bin"), None);
    }

    #[test]
    fn progress_reports_a_fraction() {
        let progress = ArchiveProgress { bytes_read: 50, total_bytes: Some(200) };
        assert_eq!(progress.fraction(), Some(0.25));
        assert_eq!(ArchiveProgress { bytes_read: 5, total_bytes: None }.fraction(), None);
    }
}
