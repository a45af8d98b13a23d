//! Pictures to classify: a file (chosen, dropped or pasted), a camera frame, a test image or the
//! sample photo. The browser decodes and shrinks them off the main thread (`www/photo.js`); the
//! model's 32×32 input is then averaged from the 512-pixel centre square with the area filter.
//! A picture that cannot be used leaves the current one, and everything else, as it was.

use js_sys::Reflect;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, spawn_local};
use web_sys::{ClipboardEvent, DragEvent, File, HtmlCanvasElement, HtmlElement, HtmlInputElement, ImageBitmap};

use crate::display::bytes;
use crate::viz::resize::{center_square, resize_square};
use crate::web::app::{Change, Picture, SharedApp, changed};
use crate::web::camera;
use crate::web::dom::{self, element, put_rgba, set_hidden, set_text};
use crate::web::pictures::{MAX_FILE_BYTES, bitmap_pixels, decode_centre_square};

/// Side of the centre square kept for display and overlays; a whole multiple of 32 so the
/// model's input is an exact 16×16 average per pixel.
pub const SQUARE_SIDE: usize = 512;
/// Longer side of the whole-picture preview.
const PREVIEW_MAX: u32 = 480;

fn show_problem(message: &str) {
    set_text("photo-error", message);
    set_hidden("photo-error", message.is_empty());
}

/// Decodes `source` into a [`Picture`] and draws its preview, or says why it cannot.
async fn decode(source: &JsValue, name: &str) -> Result<Picture, String> {
    let decoded = decode_centre_square(source, SQUARE_SIDE as u32, PREVIEW_MAX)
        .await
        .map_err(|error| {
            let reason = dom::error_field(&error, "message");
            format!("{name} cannot be used: {reason}")
        })?;
    let field = |key: &str| Reflect::get(&decoded, &key.into()).expect("decodeCentreSquare returns an object");
    let (width, height) = (field("width").as_f64().unwrap_or(0.0) as u32, field("height").as_f64().unwrap_or(0.0) as u32);
    let square: ImageBitmap = field("square").unchecked_into();
    let preview: ImageBitmap = field("preview").unchecked_into();
    let pixels = bitmap_pixels(&square, SQUARE_SIDE);
    square.close();
    let square_rgba = pixels?;
    let input = resize_square(&square_rgba, SQUARE_SIDE, 32).map_err(|error| error.to_string())?;
    draw_preview(&preview, width, height);
    preview.close();
    Ok(Picture { name: name.to_string(), square: square_rgba, side: SQUARE_SIDE, input })
}

/// The whole picture, with the part the model does not see dimmed and the square outlined.
fn draw_preview(preview: &ImageBitmap, width: u32, height: u32) {
    let canvas: HtmlCanvasElement = element("photo-original");
    let (w, h) = (preview.width(), preview.height());
    canvas.set_width(w);
    canvas.set_height(h);
    let Some(context) = dom::context_2d(&canvas) else { return };
    let _ = context.draw_image_with_image_bitmap(preview, 0.0, 0.0);
    let square = center_square(w as usize, h as usize);
    let (x, y, side) = (square.x as f64, square.y as f64, square.width as f64);
    context.set_fill_style_str("rgba(20, 24, 32, 0.55)");
    context.fill_rect(0.0, 0.0, w as f64, y);
    context.fill_rect(0.0, y + side, w as f64, h as f64 - y - side);
    context.fill_rect(0.0, y, x, side);
    context.fill_rect(x + side, y, w as f64 - x - side, side);
    context.set_stroke_style_str("#ffffff");
    context.set_line_width(2.0);
    context.stroke_rect(x + 1.0, y + 1.0, side - 2.0, side - 2.0);
    set_text("photo-size", &format!("{width}×{height} pixels; the centred square is used"));
}

/// Makes `picture` the current one.
pub fn adopt(app: &SharedApp, picture: Picture) {
    app.borrow_mut().picture = Some(picture);
    changed(app, Change::Picture);
}

/// Draws what the model sees of the current picture.
pub fn show_input(app: &SharedApp) {
    if let Some(picture) = &app.borrow().picture {
        let _ = put_rgba(&element("input-canvas"), &picture.input, 32, 32);
    }
}

/// Decodes a file and, if it works, makes it the current picture.
fn use_file(app: &SharedApp, file: File) {
    let name = file.name();
    if file.size() > MAX_FILE_BYTES {
        show_problem(&format!("{name} is {}; pictures up to {} can be used", bytes(file.size() as u64), bytes(MAX_FILE_BYTES as u64)));
        return;
    }
    let app = app.clone();
    let generation = {
        let mut app = app.borrow_mut();
        app.picture_generation += 1;
        app.picture_generation
    };
    set_text("photo-status", &format!("Reading {name}…"));
    spawn_local(async move {
        let result = decode(&file, &name).await;
        if app.borrow().picture_generation != generation {
            return; // a later picture replaced this one while it decoded
        }
        set_text("photo-status", "");
        match result {
            Ok(picture) => {
                show_problem("");
                adopt(&app, picture);
            }
            Err(message) => show_problem(&message),
        }
    });
}

/// The sample photo shipped with the page, through the same path as an upload.
pub async fn load_sample(url: &str) -> Result<Picture, String> {
    let response = JsFuture::from(web_sys::window().ok_or("no window")?.fetch_with_str(url))
        .await
        .map_err(|_| format!("the sample image {url} could not be loaded"))?;
    let response: web_sys::Response = response.unchecked_into();
    let blob = JsFuture::from(response.blob().map_err(|_| "the sample image has no body")?)
        .await
        .map_err(|_| format!("the sample image {url} could not be read"))?;
    decode(&blob, "the sample photo").await
}

pub fn wire(app: &SharedApp) {
    let input: HtmlInputElement = element("photo-input");
    let input_app = app.clone();
    dom::listen(&input, "change", move |_: web_sys::Event| {
        let input: HtmlInputElement = element("photo-input");
        if let Some(file) = input.files().and_then(|files| files.get(0)) {
            use_file(&input_app, file);
        }
        input.set_value(""); // the same file can be chosen again
    });

    let zone = element::<HtmlElement>("photo-card");
    dom::listen(&zone, "dragover", |event: DragEvent| {
        event.prevent_default();
        let _ = element::<HtmlElement>("photo-card").set_attribute("data-dragging", "true");
    });
    dom::listen(&zone, "dragleave", |_: DragEvent| {
        let _ = element::<HtmlElement>("photo-card").remove_attribute("data-dragging");
    });
    let drop_app = app.clone();
    dom::listen(&zone, "drop", move |event: DragEvent| {
        event.prevent_default();
        let _ = element::<HtmlElement>("photo-card").remove_attribute("data-dragging");
        match event.data_transfer().and_then(|transfer| transfer.files()).and_then(|files| files.get(0)) {
            Some(file) => use_file(&drop_app, file),
            None => show_problem("only files can be dropped here"),
        }
    });

    let paste_app = app.clone();
    dom::listen(&dom::document(), "paste", move |event: ClipboardEvent| {
        let editing = event
            .target()
            .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
            .is_some_and(|target| matches!(target.tag_name().as_str(), "INPUT" | "TEXTAREA"));
        if editing {
            return;
        }
        if let Some(file) = event.clipboard_data().and_then(|data| data.files()).and_then(|files| files.get(0)) {
            event.prevent_default();
            use_file(&paste_app, file);
        }
    });

    wire_camera(app);
}

fn camera_video() -> HtmlElement {
    element("camera-video")
}

fn wire_camera(app: &SharedApp) {
    let has_camera_api = camera::available();
    set_hidden("camera-start", !has_camera_api);
    set_hidden("camera-missing", has_camera_api);

    dom::listen(&element::<HtmlElement>("camera-start"), "click", |_: web_sys::Event| {
        spawn_local(async {
            match start_camera().await {
                Ok(()) => show_problem(""),
                Err(message) => show_problem(&message),
            }
        })
    });
    dom::listen(&element::<HtmlElement>("camera-stop"), "click", |_: web_sys::Event| stop_camera());
    let capture_app = app.clone();
    dom::listen(&element::<HtmlElement>("camera-capture"), "click", move |_: web_sys::Event| {
        let app = capture_app.clone();
        spawn_local(async move {
            match decode(&camera_video(), "the camera frame").await {
                Ok(picture) => {
                    show_problem("");
                    adopt(&app, picture);
                }
                Err(message) => show_problem(&message),
            }
        })
    });
}

async fn start_camera() -> Result<(), String> {
    camera::start(&camera_video()).await?;
    set_hidden("camera-video", false);
    set_hidden("camera-capture", false);
    set_hidden("camera-stop", false);
    set_hidden("camera-start", true);
    Ok(())
}

fn stop_camera() {
    camera::stop(&camera_video());
    set_hidden("camera-video", true);
    set_hidden("camera-capture", true);
    set_hidden("camera-stop", true);
    set_hidden("camera-start", false);
}
