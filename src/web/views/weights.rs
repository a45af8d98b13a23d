//! The weights card: the shipped pretrained model, download and upload. An upload is checked in
//! full by `weights::from_safetensors` before anything changes; a refused file leaves the model,
//! its metrics and the page as they were.

use js_sys::Uint8Array;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, spawn_local};
use web_sys::HtmlInputElement;

use crate::data::classes::CLASS_NAMES;
use crate::training::MetricsHistory;
use crate::web::app::{Change, PRETRAINED, SharedApp, adopt_weights, changed};
use crate::web::dom::{self, element, set_hidden, set_text};
use crate::web::storage;
use crate::weights::{WeightFileInfo, preset_of, to_safetensors_async};


/// A line about a weight file's origin: preset, epochs and its last recorded test accuracy.
pub fn describe(info: &WeightFileInfo) -> String {
    let preset = info.preset.map(|preset| preset.name()).unwrap_or("custom");
    let accuracy = serde_json::from_str::<MetricsHistory>(&info.metrics_json)
        .ok()
        .and_then(|history| history.epochs.last().map(|epoch| epoch.test_accuracy))
        .map(|accuracy| format!(", test accuracy {:.1}%", 100.0 * accuracy))
        .unwrap_or_default();
    let classes = match info.class_names.iter().map(String::as_str).eq(CLASS_NAMES) {
        true => String::new(),
        false => format!(", {} classes of your own ({})", info.class_names.len(), info.class_names.join(", ")),
    };
    format!("{preset} preset, {}{accuracy}{classes}", crate::display::count(info.epoch, "epoch"))
}

fn show_problem(message: &str) {
    set_text("weights-error", message);
    set_hidden("weights-error", message.is_empty());
}

/// Says where the current weights came from and what they are.
pub fn show_current(app: &SharedApp) {
    let app = app.borrow();
    if let Some(info) = &app.weights_info {
        set_text("weights-note", &format!("{}: {}.", app.weights_origin, describe(info)));
        show_problem("");
    }
}

pub fn wire(app: &SharedApp) {
    let download_app = app.clone();
    let on_download = Closure::<dyn Fn()>::new(move || {
        let app = download_app.clone();
        spawn_local(async move {
            if let Err(message) = download(&app).await {
                show_problem(&message);
            }
        });
    });
    element::<web_sys::HtmlElement>("weights-download").set_onclick(Some(on_download.as_ref().unchecked_ref()));
    on_download.forget(); // lives as long as the page

    let upload_app = app.clone();
    let on_upload = Closure::<dyn Fn()>::new(move || {
        let input: HtmlInputElement = element("weights-input");
        let Some(file) = input.files().and_then(|files| files.get(0)) else { return };
        input.set_value(""); // the same file can be chosen again after a fix
        let app = upload_app.clone();
        spawn_local(async move {
            let name = file.name();
            let result = match JsFuture::from(file.array_buffer()).await {
                Ok(buffer) => {
                    if app.borrow().training {
                        Err("stop training before loading other weights".to_string())
                    } else {
                        adopt_weights(&app, Uint8Array::new(&buffer).to_vec(), &format!("Loaded {name}"))
                    }
                }
                Err(_) => Err(format!("{name} could not be read")),
            };
            if let Err(message) = result {
                show_problem(&format!("{name} was not loaded: {message}. The current model is unchanged."));
            }
        });
    });
    element::<HtmlInputElement>("weights-input").set_onchange(Some(on_upload.as_ref().unchecked_ref()));
    on_upload.forget();
}

/// Saves the current model as one safetensors file.
async fn download(app: &SharedApp) -> Result<(), String> {
    // Nothing borrowed across the readback: an epoch's weights may arrive meanwhile.
    let saved = {
        let app = app.borrow();
        match (&app.weights, &app.weights_info) {
            (Some(bytes), Some(info)) => Ok((bytes.clone(), file_name(info))),
            _ => Err((app.model.clone(), WeightFileInfo::new(app.config.clone(), preset_of(&app.config)))),
        }
    };
    let (bytes, name) = match saved {
        Ok(saved) => saved,
        Err((model, info)) => {
            let bytes = to_safetensors_async(&model, &info).await.map_err(|error| error.to_string())?;
            (bytes, file_name(&info))
        }
    };
    dom::save_file(&bytes, &name, "application/octet-stream")
}

fn file_name(info: &WeightFileInfo) -> String {
    let preset = info.preset.map(|preset| preset.name()).unwrap_or("custom");
    match info.config.classes {
        10 => format!("vit-{preset}-epoch{}.safetensors", info.epoch),
        classes => format!("vit-{preset}-{classes}-classes-epoch{}.safetensors", info.epoch),
    }
}

/// Loads the shipped pretrained weights, if the page has them.
pub async fn load_pretrained(app: &SharedApp) {
    match storage::download(PRETRAINED, None, |_, _| {}).await {
        Ok(bytes) => match adopt_weights(app, bytes, "Pretrained weights") {
            Ok(()) => return,
            Err(message) => show_problem(&format!("the shipped weights could not be loaded ({message}); using fresh weights")),
        },
        Err(_) => set_text("weights-note", "No pretrained weights are shipped with this build; these are freshly initialised."),
    }
    changed(app, Change::Weights); // explained with the fresh weights
}
