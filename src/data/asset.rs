//! The prepared dataset the page downloads (`*.vitdata`): the training subset and the test set
//! as JPEG mosaics, with labels, in one checksummed file.
//!
//! Why JPEG mosaics: 30,000 raw images are 92 MB, and general-purpose lossless compression
//! barely helps on such small, detailed images (the gzip'd archive is 173 MB for 184 MB of
//! pixels); the page's budget is 30 MB. Baseline JPEG keeps the error far below what training
//! notices and decodes quickly in wasm (zune-jpeg, pure Rust). Tiles are 32×32, a multiple of
//! JPEG's 8×8 blocks, so no block straddles two images: each image is coded as if alone, while a
//! mosaic shares one set of headers and tables among 1,000 images (3200×320 px, which also keeps
//! the decoder's scratch at 3 MB). Colour is coded 4:4:4 (the `image` encoder's only mode), so
//! colour edges survive at 32×32.
//!
//! The trade-off, measured with `prepare-data` on the project's CIFAR-10 copy (20,000 + 10,000
//! images; PSNR against the archive's pixels):
//!
//! | quality | size    | per image | PSNR    |
//! |---------|---------|-----------|---------|
//! | 80      | 11.0 MB | 367 B     | 39.8 dB |
//! | **90**  | 14.9 MB | 498 B     | 42.4 dB |
//! | 95      | 19.9 MB | 661 B     | 46.7 dB |
//!
//! That copy was itself rebuilt from quality-75 JPEGs, which makes it compress better than the
//! official pixels will; `prepare-data` prints the size, and `--quality` trades it back. Decoding
//! the quality-90 file took 0.5 s in wasm32 on V8 (node 20, after a 1.05 s first run).
//!
//! Layout, little-endian: a 64-byte header (`VITDATA\0`, format version, train and test counts,
//! mosaic columns and rows, JPEG quality, mosaic count, SHA-256 of the body), then the body:
//! train labels, test labels, each mosaic's byte length (u32), the mosaics (train's first).

use std::io::Cursor;

use image::ImageDecoder;
use image::codecs::jpeg::{JpegDecoder, JpegEncoder};
use sha2::{Digest, Sha256};

use super::{CLASS_COUNT, DataError, IMAGE_BYTES, IMAGE_PIXELS, IMAGE_SIDE, ImageSet};

/// The file's first 8 bytes.
pub const ASSET_MAGIC: [u8; 8] = *b"VITDATA\0";
/// The layout version this build writes and reads.
pub const ASSET_VERSION: u32 = 1;
/// Bytes before the body.
pub const HEADER_BYTES: usize = 64;
/// JPEG quality `prepare-data` uses unless told otherwise.
pub const DEFAULT_QUALITY: u8 = 90;
/// Images per mosaic row and rows per mosaic: 3200×320 pixels, 1,000 images.
pub const MOSAIC_COLUMNS: usize = 100;
pub const MOSAIC_ROWS: usize = 10;
const PER_MOSAIC: usize = MOSAIC_COLUMNS * MOSAIC_ROWS;
/// More images than any split could hold marks a damaged header (and keeps sizes within
/// wasm32's 4 GB).
const MAX_IMAGES: usize = 1_000_000;

/// What the header says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetHeader {
    pub version: u32,
    pub train_count: usize,
    pub test_count: usize,
    pub mosaic_columns: usize,
    pub mosaic_rows: usize,
    pub quality: u8,
    pub mosaic_count: usize,
    /// SHA-256 of the body (everything after the header).
    pub sha256: [u8; 32],
}

/// Encodes the training subset and the test set at JPEG `quality` (1–100).
pub fn encode_asset(train: &ImageSet, test: &ImageSet, quality: u8) -> Vec<u8> {
    encode_asset_with_progress(train, test, quality, |_, _| {})
}

/// [`encode_asset`], calling `progress(images encoded, total)` after each mosaic.
pub fn encode_asset_with_progress(
    train: &ImageSet,
    test: &ImageSet,
    quality: u8,
    mut progress: impl FnMut(usize, usize),
) -> Vec<u8> {
    let mut body = Vec::with_capacity((train.len() + test.len()) * 1_200);
    body.extend_from_slice(&train.labels);
    body.extend_from_slice(&test.labels);
    let total = train.len() + test.len();
    let mut encoded = 0;
    let mut mosaics = Vec::new();
    for set in [train, test] {
        for first in (0..set.len()).step_by(PER_MOSAIC) {
            let count = PER_MOSAIC.min(set.len() - first);
            mosaics.push(encode_mosaic(set, first, count, quality));
            encoded += count;
            progress(encoded, total);
        }
    }
    for mosaic in &mosaics {
        body.extend_from_slice(&(mosaic.len() as u32).to_le_bytes());
    }
    mosaics.iter().for_each(|mosaic| body.extend_from_slice(mosaic));

    let mut asset = Vec::with_capacity(HEADER_BYTES + body.len());
    asset.extend_from_slice(&ASSET_MAGIC);
    asset.extend_from_slice(&ASSET_VERSION.to_le_bytes());
    asset.extend_from_slice(&(train.len() as u32).to_le_bytes());
    asset.extend_from_slice(&(test.len() as u32).to_le_bytes());
    asset.extend_from_slice(&(MOSAIC_COLUMNS as u16).to_le_bytes());
    asset.extend_from_slice(&(MOSAIC_ROWS as u16).to_le_bytes());
    asset.extend_from_slice(&[quality, 0, 0, 0]);
    asset.extend_from_slice(&(mosaics.len() as u32).to_le_bytes());
    asset.extend_from_slice(&Sha256::digest(&body));
    debug_assert_eq!(asset.len(), HEADER_BYTES);
    asset.extend_from_slice(&body);
    asset
}

/// Decodes a prepared dataset into (training subset, test set).
pub fn decode_asset(bytes: &[u8]) -> Result<(ImageSet, ImageSet), DataError> {
    decode_asset_with_progress(bytes, "the prepared dataset", |_, _| {})
}

/// [`decode_asset`], naming the file `name` in errors and calling `progress(images decoded,
/// total)` after each mosaic.
pub fn decode_asset_with_progress(
    bytes: &[u8],
    name: &str,
    mut progress: impl FnMut(usize, usize),
) -> Result<(ImageSet, ImageSet), DataError> {
    let header = read_header(bytes, name)?;
    let invalid = |detail: String| DataError::AssetInvalid { name: name.into(), detail };
    let body = &bytes[HEADER_BYTES..];
    // Sizes in u64 until checked against the bytes at hand: usize is 32 bits on wasm32.
    let truncated = |needed: u64| DataError::AssetTruncated { name: name.into(), needed, got: bytes.len() as u64 };
    let table_end = header.train_count as u64 + header.test_count as u64 + 4 * header.mosaic_count as u64;
    if (body.len() as u64) < table_end {
        return Err(truncated(HEADER_BYTES as u64 + table_end));
    }
    let (labels_len, table_end) = (header.train_count + header.test_count, table_end as usize);
    let lengths: Vec<usize> = body[labels_len..table_end]
        .chunks_exact(4)
        .map(|length| u32::from_le_bytes(length.try_into().expect("4 bytes")) as usize)
        .collect();
    let body_len = table_end as u64 + lengths.iter().map(|&length| length as u64).sum::<u64>();
    if (body.len() as u64) < body_len {
        return Err(truncated(HEADER_BYTES as u64 + body_len));
    }
    if body.len() as u64 > body_len {
        return Err(invalid(format!("{} bytes follow the last mosaic", body.len() as u64 - body_len)));
    }
    if Sha256::digest(body).as_slice() != header.sha256 {
        return Err(DataError::AssetChecksum { name: name.into() });
    }
    if let Some(index) = body[..labels_len].iter().position(|&label| label as usize >= CLASS_COUNT) {
        return Err(invalid(format!("image {index} has label {}, outside 0–9", body[index])));
    }
    let per_mosaic = header.mosaic_columns * header.mosaic_rows;
    let (train_mosaics, test_mosaics) = (header.train_count.div_ceil(per_mosaic), header.test_count.div_ceil(per_mosaic));
    if train_mosaics + test_mosaics != header.mosaic_count {
        return Err(invalid(format!("{} mosaics for {} + {} images", header.mosaic_count, header.train_count, header.test_count)));
    }

    let mut mosaics = Vec::with_capacity(lengths.len());
    let mut start = table_end;
    for length in lengths {
        mosaics.push(&body[start..start + length]);
        start += length;
    }
    let total = labels_len;
    let mut done = 0;
    let mut decode_set = |labels: &[u8], mosaics: &[&[u8]], first_mosaic: usize| -> Result<ImageSet, DataError> {
        let mut set = ImageSet { pixels: Vec::with_capacity(labels.len() * IMAGE_BYTES), labels: labels.to_vec() };
        let mut scratch = Vec::new();
        for (number, mosaic) in mosaics.iter().enumerate() {
            let images = (labels.len() - number * per_mosaic).min(per_mosaic);
            decode_mosaic(mosaic, images, header.mosaic_columns, &mut scratch, &mut set.pixels)
                .map_err(|detail| invalid(format!("mosaic {}: {detail}", first_mosaic + number)))?;
            done += images;
            progress(done, total);
        }
        Ok(set)
    };
    let train = decode_set(&body[..header.train_count], &mosaics[..train_mosaics], 0)?;
    let test = decode_set(&body[header.train_count..labels_len], &mosaics[train_mosaics..], train_mosaics)?;
    Ok((train, test))
}

/// Reads and checks the 64-byte header (magic, version, geometry), not the body.
pub fn read_header(bytes: &[u8], name: &str) -> Result<AssetHeader, DataError> {
    if !bytes.starts_with(&ASSET_MAGIC) {
        return Err(DataError::AssetNotRecognised { name: name.into() });
    }
    if bytes.len() < HEADER_BYTES {
        return Err(DataError::AssetTruncated { name: name.into(), needed: HEADER_BYTES as u64, got: bytes.len() as u64 });
    }
    let u32_at = |offset: usize| u32::from_le_bytes(bytes[offset..offset + 4].try_into().expect("4 bytes"));
    let u16_at = |offset: usize| u16::from_le_bytes(bytes[offset..offset + 2].try_into().expect("2 bytes"));
    let version = u32_at(8);
    if version != ASSET_VERSION {
        return Err(DataError::AssetVersion { name: name.into(), found: version, supported: ASSET_VERSION });
    }
    let header = AssetHeader {
        version,
        train_count: u32_at(12) as usize,
        test_count: u32_at(16) as usize,
        mosaic_columns: u16_at(20) as usize,
        mosaic_rows: u16_at(22) as usize,
        quality: bytes[24],
        mosaic_count: u32_at(28) as usize,
        sha256: bytes[32..64].try_into().expect("32 bytes"),
    };
    let invalid = |detail: String| Err(DataError::AssetInvalid { name: name.into(), detail });
    if header.mosaic_columns == 0 || header.mosaic_rows == 0 || header.mosaic_columns * IMAGE_SIDE > u16::MAX as usize {
        return invalid(format!("the header's mosaics of {}×{} images are impossible", header.mosaic_columns, header.mosaic_rows));
    }
    if header.train_count > MAX_IMAGES || header.test_count > MAX_IMAGES {
        return invalid(format!("the header claims {} + {} images, more than any split holds", header.train_count, header.test_count));
    }
    Ok(header)
}

/// Peak signal-to-noise ratio in dB between two equally long byte images (∞ when identical).
pub fn psnr(reference: &[u8], decoded: &[u8]) -> f64 {
    assert_eq!(reference.len(), decoded.len(), "compare images of the same size");
    let squared: u64 = reference.iter().zip(decoded).map(|(&a, &b)| (a as i64 - b as i64).pow(2) as u64).sum();
    let mean = squared as f64 / reference.len().max(1) as f64;
    10.0 * (255.0f64 * 255.0 / mean).log10()
}

/// Tiles `set`'s images, 1,000 to a mosaic, row by row, and JPEG-encodes each mosaic.
/// The JPEG of images `first..first + count` of `set`, tiled `MOSAIC_COLUMNS` to a row.
fn encode_mosaic(set: &ImageSet, first: usize, count: usize, quality: u8) -> Vec<u8> {
    let width = MOSAIC_COLUMNS * IMAGE_SIDE;
    let rows = count.div_ceil(MOSAIC_COLUMNS);
    // Unused tiles of a partial last row stay black: cheap to code, never read back.
    let mut rgb = vec![0u8; width * rows * IMAGE_SIDE * 3];
    for tile in 0..count {
        let image = set.image(first + tile);
        let (left, top) = (tile % MOSAIC_COLUMNS * IMAGE_SIDE, tile / MOSAIC_COLUMNS * IMAGE_SIDE);
        for pixel in 0..IMAGE_PIXELS {
            let at = ((top + pixel / IMAGE_SIDE) * width + left + pixel % IMAGE_SIDE) * 3;
            for channel in 0..3 {
                rgb[at + channel] = image[channel * IMAGE_PIXELS + pixel];
            }
        }
    }
    let mut jpeg = Vec::new();
    JpegEncoder::new_with_quality(&mut jpeg, quality)
        .encode(&rgb, width as u32, (rows * IMAGE_SIDE) as u32, image::ExtendedColorType::Rgb8)
        .expect("encoding RGB into a Vec cannot fail");
    jpeg
}

/// Decodes one mosaic and appends its first `images` tiles, planar, to `pixels`.
fn decode_mosaic(jpeg: &[u8], images: usize, columns: usize, scratch: &mut Vec<u8>, pixels: &mut Vec<u8>) -> Result<(), String> {
    let decoder = JpegDecoder::new(Cursor::new(jpeg)).map_err(|error| format!("not a readable JPEG ({error})"))?;
    let (width, height) = decoder.dimensions();
    let (width, height) = (width as usize, height as usize);
    let rows = images.div_ceil(columns);
    if decoder.color_type() != image::ColorType::Rgb8 || width != columns * IMAGE_SIDE || height != rows * IMAGE_SIDE {
        return Err(format!("{width}×{height} {:?}, expected {}×{} RGB", decoder.color_type(), columns * IMAGE_SIDE, rows * IMAGE_SIDE));
    }
    scratch.resize(width * height * 3, 0);
    decoder.read_image(scratch).map_err(|error| format!("not a readable JPEG ({error})"))?;
    let mut image = [0u8; IMAGE_BYTES];
    for tile in 0..images {
        let (left, top) = (tile % columns * IMAGE_SIDE, tile / columns * IMAGE_SIDE);
        for row in 0..IMAGE_SIDE {
            let line = &scratch[((top + row) * width + left) * 3..][..IMAGE_SIDE * 3];
            for (column, rgb) in line.chunks_exact(3).enumerate() {
                let pixel = row * IMAGE_SIDE + column;
                image[pixel] = rgb[0];
                image[IMAGE_PIXELS + pixel] = rgb[1];
                image[2 * IMAGE_PIXELS + pixel] = rgb[2];
            }
        }
        pixels.extend_from_slice(&image);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Smooth images with a little texture, like photographs: JPEG's favourable but honest case.
    fn sample(count: usize) -> ImageSet {
        let mut set = ImageSet::default();
        for index in 0..count {
            let image: Vec<u8> = (0..IMAGE_BYTES)
                .map(|byte| {
                    let (channel, pixel) = (byte / IMAGE_PIXELS, byte % IMAGE_PIXELS);
                    let (x, y) = ((pixel % IMAGE_SIDE) as f32, (pixel / IMAGE_SIDE) as f32);
                    let phase = index as f32 * 0.7 + channel as f32;
                    (128.0 + 90.0 * ((x * 0.3 + phase).sin() * (y * 0.2 - phase).cos())) as u8
                })
                .collect();
            set.push((index % CLASS_COUNT) as u8, &image);
        }
        set
    }

    #[test]
    fn round_trip_keeps_labels_and_pixels_close() {
        let (train, test) = (sample(1_234), sample(56));
        let asset = encode_asset(&train, &test, DEFAULT_QUALITY);
        let (decoded_train, decoded_test) = decode_asset(&asset).unwrap();
        assert_eq!(decoded_train.labels, train.labels);
        assert_eq!(decoded_test.labels, test.labels);
        assert!(psnr(&train.pixels, &decoded_train.pixels) > 38.0);
        assert!(psnr(&test.pixels, &decoded_test.pixels) > 38.0);
        assert_eq!(read_header(&asset, "x").unwrap().mosaic_count, 3);
    }

    #[test]
    fn damage_is_refused() {
        let asset = encode_asset(&sample(20), &sample(10), DEFAULT_QUALITY);
        let mut flipped = asset.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(matches!(decode_asset(&flipped), Err(DataError::AssetChecksum { .. })));
        assert!(matches!(decode_asset(&asset[..asset.len() - 1]), Err(DataError::AssetTruncated { .. })));
        assert!(matches!(decode_asset(&asset[..40]), Err(DataError::AssetTruncated { .. })));
        assert!(matches!(decode_asset(b"GIF89a"), Err(DataError::AssetNotRecognised { .. })));
        let mut future = asset.clone();
        future[8] = 2;
        assert!(matches!(decode_asset(&future), Err(DataError::AssetVersion { found: 2, supported: 1, .. })));
    }

    #[test]
    fn psnr_of_known_errors() {
        assert_eq!(psnr(&[1, 2, 3], &[1, 2, 3]), f64::INFINITY);
        // Every byte off by one: MSE 1, PSNR = 20·log10(255).
        assert!((psnr(&[10, 20], &[11, 19]) - 48.1308).abs() < 1e-3);
    }
}
