// Photo decoding with the browser's own codecs (JPEG, PNG, WebP, GIF's first frame, BMP, …).
// Files are decoded and resampled by createImageBitmap in a small worker of their own (this
// same module, started under the name below), so even a 50-megapixel photo never holds up the
// page; camera frames, small and not transferable, are done in place. web-sys lacks
// ImageBitmapOptions, hence JavaScript.
const WORKER_NAME = "vit-photo-decoder";

// Decodes `source` (a Blob, or a <video> for its current frame) and returns its size, its
// centred square resampled to `side`×`side`, and a preview of the whole picture at most
// `previewMax` pixels on its longer side (both ImageBitmaps). Rejects with a readable message
// when the source is not a decodable image.
export async function decodeCentreSquare(source, side, previewMax) {
  if (source instanceof Blob && typeof Worker !== "undefined") {
    return inWorker(source, side, previewMax);
  }
  return decode(source, side, previewMax);
}

async function decode(source, side, previewMax) {
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

let decoder = null;
let nextId = 0;
const pending = new Map();

function inWorker(blob, side, previewMax) {
  if (!decoder) {
    decoder = new Worker(new URL(import.meta.url), { type: "module", name: WORKER_NAME });
    decoder.onmessage = ({ data }) => {
      const request = pending.get(data.id);
      pending.delete(data.id);
      if (data.error) request.reject(new Error(data.error));
      else request.resolve(data.result);
    };
  }
  const id = ++nextId;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    decoder.postMessage({ id, blob, side, previewMax });
  });
}

// Inside the decoder worker (and only there: the training worker imports this module too).
if (typeof document === "undefined" && globalThis.name === WORKER_NAME) {
  globalThis.onmessage = async ({ data: { id, blob, side, previewMax } }) => {
    try {
      const result = await decode(blob, side, previewMax);
      globalThis.postMessage({ id, result }, [result.square, result.preview]);
    } catch (error) {
      globalThis.postMessage({ id, error: error.message });
    }
  };
}
