//! The decoded dataset as the page caches it in browser storage: raw pixels and labels behind a
//! small header, so a reload skips both the download and the JPEG decoding (reading 92 MB back
//! from the Cache API takes a fraction of a second; decoding takes longer).
//!
//! Layout, little-endian: `VITRAW\0\0`, train count (u32), test count (u32), train labels,
//! test labels, train pixels, test pixels.

use super::{DataError, IMAGE_BYTES, ImageSet};

const MAGIC: [u8; 8] = *b"VITRAW\0\0";
const HEADER_BYTES: usize = 16;

pub fn encode_decoded(train: &ImageSet, test: &ImageSet) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER_BYTES + (train.len() + test.len()) * (IMAGE_BYTES + 1));
    bytes.extend_from_slice(&MAGIC);
    bytes.extend_from_slice(&(train.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&(test.len() as u32).to_le_bytes());
    for set in [train, test] {
        bytes.extend_from_slice(&set.labels);
    }
    for set in [train, test] {
        bytes.extend_from_slice(&set.pixels);
    }
    bytes
}

/// Reads what [`encode_decoded`] wrote; a damaged entry is refused (the caller then downloads).
pub fn decode_decoded(bytes: &[u8]) -> Result<(ImageSet, ImageSet), DataError> {
    let invalid = |detail: &str| DataError::AssetInvalid { name: "cached dataset".into(), detail: detail.into() };
    if bytes.len() < HEADER_BYTES || bytes[..8] != MAGIC {
        return Err(invalid("not a cached dataset"));
    }
    let count = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize;
    let (train, test) = (count(8), count(12));
    let expected = (train + test)
        .checked_mul(IMAGE_BYTES + 1)
        .and_then(|body| body.checked_add(HEADER_BYTES))
        .ok_or_else(|| invalid("image counts overflow"))?;
    if bytes.len() != expected {
        return Err(invalid("its length does not match its image counts"));
    }
    let labels = &bytes[HEADER_BYTES..HEADER_BYTES + train + test];
    if labels.iter().any(|&label| label > 9) {
        return Err(invalid("a label is outside 0–9"));
    }
    let pixels = &bytes[HEADER_BYTES + train + test..];
    let split = |labels: &[u8], pixels: &[u8]| ImageSet { labels: labels.to_vec(), pixels: pixels.to_vec() };
    Ok((
        split(&labels[..train], &pixels[..train * IMAGE_BYTES]),
        split(&labels[train..], &pixels[train * IMAGE_BYTES..]),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(labels: &[u8]) -> ImageSet {
        let mut set = ImageSet::default();
        for (index, &label) in labels.iter().enumerate() {
            set.push(label, &vec![index as u8; IMAGE_BYTES]);
        }
        set
    }

    #[test]
    fn round_trips_and_refuses_damage() {
        let (train, test) = (set(&[1, 2, 3]), set(&[9]));
        let bytes = encode_decoded(&train, &test);
        assert_eq!(decode_decoded(&bytes).unwrap(), (train, test));
        assert!(decode_decoded(&bytes[..bytes.len() - 1]).is_err());
        let mut bad_label = bytes.clone();
        bad_label[HEADER_BYTES] = 10;
        assert!(decode_decoded(&bad_label).is_err());
        assert!(decode_decoded(b"not a cache").is_err());
    }
}
