//! The device's camera in a `<video>` element, for the photo card's frames and the collection
//! card's bursts.

use js_sys::{Function, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{HtmlElement, MediaStream};

use crate::web::dom;

/// Whether this browser offers camera access at all.
pub fn available() -> bool {
    web_sys::window()
        .map(|window| Reflect::get(&window.navigator(), &"mediaDevices".into()).is_ok_and(|devices| !devices.is_undefined()))
        .unwrap_or(false)
}

/// Asks for the camera and plays it in `video`; the message says why not, in words.
pub async fn start(video: &HtmlElement) -> Result<(), String> {
    let devices = web_sys::window()
        .ok_or("no window")?
        .navigator()
        .media_devices()
        .map_err(|_| "this browser offers no camera access")?;
    let constraints = web_sys::MediaStreamConstraints::new();
    constraints.set_video(&JsValue::TRUE);
    let request = devices.get_user_media_with_constraints(&constraints).map_err(|_| "this browser offers no camera access")?;
    let stream: MediaStream = JsFuture::from(request)
        .await
        .map_err(|error| {
            let name = dom::error_field(&error, "name");
            match name.as_str() {
                "NotAllowedError" => "the camera was not allowed; allow it in the browser's site settings to use it".to_string(),
                "NotFoundError" | "OverconstrainedError" => "no camera was found on this device".to_string(),
                _ => format!("the camera could not be started ({name})"),
            }
        })?
        .unchecked_into();
    let _ = Reflect::set(video, &"srcObject".into(), &stream); // web-sys would need HtmlMediaElement
    if let Ok(play) = Reflect::get(video, &"play".into()).and_then(|play| play.dyn_into::<Function>())
        && let Ok(promise) = play.call0(video)
    {
        let _ = JsFuture::from(js_sys::Promise::from(promise)).await;
    }
    Ok(())
}

/// Stops the camera playing in `video`, if it is.
pub fn stop(video: &HtmlElement) {
    if let Ok(stream) = Reflect::get(video, &"srcObject".into()).and_then(|stream| stream.dyn_into::<MediaStream>()) {
        for track in stream.get_tracks().iter() {
            track.unchecked_into::<web_sys::MediaStreamTrack>().stop();
        }
    }
    let _ = Reflect::set(video, &"srcObject".into(), &JsValue::NULL);
}
