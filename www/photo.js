// Photo decoding with the browser's own codecs (JPEG, PNG, WebP, GIF's first frame, BMP, …).
// createImageBitmap decodes and resamples off the main thread, so a 50-megapixel photo never
// holds up the page; web-sys lacks ImageBitmapOptions, hence this small module.

// Decodes `source` (a Blob, or a <video> for its current frame) and returns its size, its
// centred square resampled to `side`×`side`, and a preview of the whole picture at most
// `previewMax` pixels on its longer side. Rejects with a readable message when the source is not
// a decodable image.
export async function decodeCentreSquare(source, side, previewMax) {
  let full;
  try {
    full = await createImageBitmap(source);
  } catch (error) {
    throw new Error(`not an image this browser can decode (${error && error.name ? error.name : error})`);
  }
  try {
    const { width, height } = full;
    if (!width || !height) throw new Error(`the image is empty (${width}×${height} pixels)`);
    const s = Math.min(width, height);
    const square = await createImageBitmap(full, Math.floor((width - s) / 2), Math.floor((height - s) / 2), s, s, {
      resizeWidth: side, resizeHeight: side, resizeQuality: "high",
    });
    const scale = Math.min(1, previewMax / Math.max(width, height));
    const preview = await createImageBitmap(full, {
      resizeWidth: Math.max(1, Math.round(width * scale)),
      resizeHeight: Math.max(1, Math.round(height * scale)),
      resizeQuality: "high",
    });
    return { width, height, square, preview };
  } finally {
    full.close();
  }
}
