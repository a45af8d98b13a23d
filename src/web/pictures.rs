//! Pictures decoded by the browser's own codecs (JPEG, PNG, WebP, GIF's first frame, BMP, …) in
//! `www/photo.js`, off the main thread, to RGBA the crate's resizing takes: the photo card's
//! pictures and a person's collection alike.

use js_sys::Reflect;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{HtmlCanvasElement, ImageBitmap};

use crate::display::bytes;
use crate::viz::resize::resize_square;
use crate::web::dom;

#[wasm_bindgen(module = "/www/photo.js")]
extern "C" {
    /// The picture's size, its centred square resampled to `side`×`side` and a preview at most
    /// `preview_max` pixels on its longer side (both ImageBitmaps); rejects for a non-image.
    #[wasm_bindgen(js_name = decodeCentreSquare, catch)]
    pub async fn decode_centre_square(source: &JsValue, side: u32, preview_max: u32) -> Result<JsValue, JsValue>;
}

/// Larger files are refused before decoding: no photo needs more, and decoding one could
/// exhaust the tab's memory.
pub const MAX_FILE_BYTES: f64 = 256.0 * 1024.0 * 1024.0;

/// Side of the centre square a collection's picture is decoded to: a whole multiple of 32, and
/// small, as only its 32×32 average is kept.
const COLLECTION_SIDE: usize = 128;

/// The RGBA pixels of a `side`-pixel square bitmap, through a detached canvas.
pub fn bitmap_pixels(bitmap: &ImageBitmap, side: usize) -> Result<Vec<u8>, String> {
    let canvas: HtmlCanvasElement = dom::document().create_element("canvas").map_err(|_| "no canvas")?.unchecked_into();
    canvas.set_width(side as u32);
    canvas.set_height(side as u32);
    let context = dom::context_2d(&canvas).ok_or("this browser gives no 2D canvas")?;
    context.draw_image_with_image_bitmap(bitmap, 0.0, 0.0).map_err(|_| "the picture could not be drawn")?;
    let side = side as f64;
    let data = context.get_image_data(0.0, 0.0, side, side).map_err(|_| "the picture's pixels could not be read")?;
    Ok(data.data().0)
}

/// A picture of a person's collection: its 32×32 RGBA input, made as a photo's is (centred
/// square, area filter), nothing else kept.
pub async fn picture_input(source: &JsValue) -> Result<Vec<u8>, String> {
    if let Some(blob) = source.dyn_ref::<web_sys::Blob>()
        && blob.size() > MAX_FILE_BYTES
    {
        return Err(format!("it is larger than {}", bytes(MAX_FILE_BYTES as u64)));
    }
    let decoded = decode_centre_square(source, COLLECTION_SIDE as u32, 1)
        .await
        .map_err(|error| dom::error_field(&error, "message"))?;
    let field = |key: &str| Reflect::get(&decoded, &key.into()).expect("decodeCentreSquare returns an object");
    let (square, preview): (ImageBitmap, ImageBitmap) = (field("square").unchecked_into(), field("preview").unchecked_into());
    preview.close();
    let pixels = bitmap_pixels(&square, COLLECTION_SIDE);
    square.close();
    resize_square(&pixels?, COLLECTION_SIDE, 32).map_err(|error| error.to_string())
}
