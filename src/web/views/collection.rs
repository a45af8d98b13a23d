//! The "your own classes" card: a person's pictures, from a folder laid out as torchvision's
//! ImageFolder or a zip of one, shown class by class, kept in the origin-private file system, and
//! sent to the worker to fine-tune on. The layout, the checks and the zip's bounds are
//! `data::image_folder`'s; pictures are decoded as photos are (`photo::picture_input`), one at a
//! time, and only their 32×32 inputs are kept. Class names come from folders and zips, so they
//! reach the page as text only.

use std::cell::Cell;
use std::io::{Read, Seek, SeekFrom};

use js_sys::{Array, Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{JsFuture, spawn_local};
use web_sys::{DragEvent, Element, File, HtmlCanvasElement, HtmlElement, HtmlInputElement, HtmlSelectElement, MouseEvent};

use crate::data::image_folder::{
    DEFAULT_HELD_OUT, FolderError, FolderLayout, MAX_CLASSES, Placement, PictureCollection, ZipFolder, decode_collection,
    encode_collection,
};
use crate::data::preprocess::planar_to_rgba;
use crate::display::{bytes, group_thousands};
use crate::protocol::{DatasetSource, WorkerInput};
use crate::web::app::{PRETRAINED, SharedApp, adopt_weights, send};
use crate::web::camera;
use crate::web::dom::{self, element, escape, put_rgba, set_hidden, set_text};
use crate::web::in_turn::{WriteQueue, write_in_turn};
use crate::web::pictures::picture_input;
use crate::web::{storage, tabs};

/// The collection's file in the origin-private file system.
const COLLECTION_FILE: &str = "collection.vitpics";
/// Thumbnails shown per class; the rest are counted.
const THUMBNAILS: usize = 24;
/// A zip is read into memory (outside the wasm heap) before its pictures are expanded one by one;
/// a larger collection is better picked as a folder, whose files are read one at a time.
const MAX_ZIP_FILE_BYTES: f64 = 2e9;

/// Frames a held "record" button takes: one every `RECORD_EVERY_MS`, up to `MAX_BURST`.
const RECORD_EVERY_MS: i32 = 200;
const MAX_BURST: usize = 300;

thread_local! {
    /// One import at a time: a second would interleave its pictures with the first's.
    static IMPORTING: Cell<bool> = const { Cell::new(false) };
    /// Whether the card's camera plays, and the class a held button records into.
    static CAMERA_ON: Cell<bool> = const { Cell::new(false) };
    static RECORDING: Cell<Option<usize>> = const { Cell::new(None) };
    static SAVES: WriteQueue = const { WriteQueue::new() };
}

fn show_problem(message: &str) {
    set_text("collection-error", message);
    set_hidden("collection-error", message.is_empty());
}

/// The saved collection, if this browser has one, shown (not yet sent to the worker); read again
/// whenever another tab changes it, so that this tab never edits an older copy.
pub async fn load(app: SharedApp) {
    read_saved(&app, "Your pictures from your last visit, kept in this browser.").await;
    tabs::on_announced(move |name| {
        if name == COLLECTION_FILE && !IMPORTING.get() {
            let app = app.clone();
            spawn_local(async move { read_saved(&app, "Your pictures, as another tab of this page changed them.").await });
        }
    });
}

async fn read_saved(app: &SharedApp, status: &str) {
    match storage::read_file(COLLECTION_FILE).await {
        Ok(Some(bytes)) => match decode_collection(&bytes) {
            Ok(collection) => {
                app.borrow_mut().collection = collection;
                show(app);
                set_text("collection-status", status);
            }
            Err(error) => show_problem(&format!("{error}; import them again.")),
        },
        Ok(None) if !app.borrow().collection.class_names.is_empty() => {
            // Another tab cleared them.
            app.borrow_mut().collection = PictureCollection::default();
            show(app);
            set_text("collection-status", status);
        }
        Ok(None) => {}
        Err(message) => show_problem(&format!("The pictures saved in this browser could not be read ({message}).")),
    }
}

/// Saves the collection, one write at a time.
fn request_save(app: &SharedApp) {
    let app = app.clone();
    write_in_turn(&SAVES, move || {
        let (bytes, empty) = {
            let collection = &app.borrow().collection;
            (encode_collection(collection), collection.class_names.is_empty())
        };
        async move {
            let result = match empty {
                true => storage::remove_file(COLLECTION_FILE).await,
                false => storage::write_file(COLLECTION_FILE, &bytes).await,
            };
            match result {
                Ok(()) => tabs::announce(COLLECTION_FILE),
                Err(message) => show_problem(&format!("Your pictures could not be kept in this browser's storage ({message}); they stay here until the page is closed.")),
            }
        }
    });
}

/// The card for a dataset that has just loaded: "back to CIFAR-10" while the person's pictures
/// are the worker's.
pub fn dataset_changed(app: &SharedApp, source: DatasetSource) {
    let own = source == DatasetSource::Collection;
    set_hidden("collection-cifar", !own);
    set_text("data-title", if own { "Dataset: your own pictures" } else { "Dataset: CIFAR-10" });
    if own {
        let classes = app.borrow().dataset_classes.len();
        set_text("collection-status", &format!("Training on your {classes} classes: start it in the training card below."));
    }
}

/// Draws the classes, their counts and thumbnails; each thumbnail and class can be removed.
fn show(app: &SharedApp) {
    let app_ref = app.borrow();
    let collection = &app_ref.collection;
    let counts = collection.counts();
    let mut first_of_class = vec![Vec::new(); collection.class_names.len()];
    for (index, &label) in collection.images.labels.iter().enumerate() {
        if first_of_class[label as usize].len() < THUMBNAILS {
            first_of_class[label as usize].push(index);
        }
    }
    let rows: String = collection
        .class_names
        .iter()
        .enumerate()
        .map(|(class, name)| {
            let thumbnails: String = first_of_class[class]
                .iter()
                .map(|index| format!(r#"<canvas width="32" height="32" data-index="{index}" title="Remove this picture"></canvas>"#))
                .collect();
            let more = counts[class].saturating_sub(THUMBNAILS);
            let more = if more > 0 { format!(r#"<span class="note">+{} more</span>"#, group_thousands(more)) } else { String::new() };
            format!(
                r#"<li data-name="{attribute}" data-count="{count}" data-class-index="{class}"><div class="collection-head"><span class="name">{text}</span> <span class="count">{count} picture{plural}</span> <label class="file-button quiet">Add pictures<input type="file" accept="image/*" multiple data-add-to="{class}"></label> <button type="button" class="record" data-record="{class}"{record_hidden}>Hold to record</button> <button type="button" class="quiet" data-remove-class="{class}">Remove this class</button></div><div class="thumbs">{thumbnails}{more}</div></li>"#,
                attribute = escape(name),
                text = escape(name),
                count = counts[class],
                plural = if counts[class] == 1 { "" } else { "s" },
                record_hidden = if CAMERA_ON.get() { "" } else { " hidden" },
            )
        })
        .collect();
    let list = element::<HtmlElement>("collection-classes");
    list.set_inner_html(&rows);
    let canvases = list.query_selector_all("canvas[data-index]").expect("a valid selector");
    for position in 0..canvases.length() {
        let Some(canvas) = canvases.item(position).and_then(|node| node.dyn_into::<HtmlCanvasElement>().ok()) else { continue };
        let Some(index) = canvas.get_attribute("data-index").and_then(|index| index.parse::<usize>().ok()) else { continue };
        let _ = put_rgba(&canvas, &planar_to_rgba(collection.images.image(index)), 32, 32);
    }
    let has_pictures = !collection.images.is_empty();
    set_hidden("collection-actions", !has_pictures && collection.class_names.is_empty());
    let summary = match collection.check() {
        Ok(()) => format!("{} pictures in {} classes.", group_thousands(collection.images.len()), collection.class_names.len()),
        Err(problem) => format!("Not ready to train: {problem}."),
    };
    let summary_element: HtmlElement = element("collection-summary");
    summary_element.set_text_content(Some(&summary));
    let _ = summary_element.set_attribute("data-ready", &collection.check().is_ok().to_string());
}

/// Replaces the collection with `imported` if it can be trained on; says what was skipped.
fn finish_import(app: &SharedApp, imported: PictureCollection, source: &str) {
    set_hidden("collection-progress", true);
    let skipped = match imported.skipped.len() {
        0 => String::new(),
        count => {
            let examples: Vec<&str> = imported.skipped.iter().take(3).map(String::as_str).collect();
            format!(" Skipped {} in a class folder ({}{}).", not_pictures(count), examples.join(", "), if count > 3 { ", …" } else { "" })
        }
    };
    let skipped_element: HtmlElement = element("collection-skipped");
    skipped_element.set_text_content(Some(skipped.trim()));
    let _ = skipped_element.set_attribute("data-skipped", &imported.skipped.len().to_string());
    set_hidden("collection-skipped", skipped.is_empty());
    if let Err(problem) = imported.check() {
        set_text("collection-status", "");
        show_problem(&format!("{source} was not used: {problem}. Your pictures are as they were."));
        return;
    }
    show_problem("");
    set_text(
        "collection-status",
        &format!("Imported {} pictures in {} classes from {source}.", group_thousands(imported.images.len()), imported.class_names.len()),
    );
    app.borrow_mut().collection = PictureCollection { skipped: Vec::new(), ..imported };
    show(app);
    request_save(app);
}

/// "1 file that is not a picture", "3 files that are not pictures".
fn not_pictures(count: usize) -> String {
    match count {
        1 => "1 file that is not a picture".into(),
        count => format!("{count} files that are not pictures"),
    }
}

fn progress(done: usize, total: usize) {
    let bar: web_sys::HtmlProgressElement = element("collection-progress");
    bar.set_max(total.max(1) as f64);
    bar.set_value(done as f64);
    set_hidden("collection-progress", false);
    set_text("collection-status", &format!("Reading pictures: {done} of {total}…"));
}

/// Runs an import unless one is already running.
fn importing(import: impl std::future::Future<Output = ()> + 'static) {
    if IMPORTING.get() {
        show_problem("Pictures are already being imported; wait until that ends.");
        return;
    }
    IMPORTING.set(true);
    show_problem("");
    spawn_local(async move {
        import.await;
        IMPORTING.set(false);
    });
}

/// Where an import's files come from: a picked folder's files, or a zip's.
enum Files {
    Folder(Vec<File>),
    Zip(ZipFolder<JsBytes>),
}

impl Files {
    /// File `index`'s 32×32 input, `None` when it is not a picture; an error refuses the import.
    async fn picture(&mut self, index: usize) -> Result<Option<Vec<u8>>, FolderError> {
        let blob: web_sys::Blob = match self {
            Files::Folder(files) => files[index].clone().into(),
            Files::Zip(zip) => {
                let Some(bytes) = zip.read(index)? else { return Ok(None) };
                let array = Uint8Array::from(bytes.as_slice());
                drop(bytes);
                match web_sys::Blob::new_with_u8_array_sequence(&Array::of1(&array)) {
                    Ok(blob) => blob,
                    Err(_) => return Ok(None),
                }
            }
        };
        Ok(picture_input(&blob).await.ok())
    }
}

/// Reads every file of `paths` a class folder holds, one at a time, into a collection.
async fn import_files(app: &SharedApp, paths: &[String], mut files: Files, source: &str) {
    let layout = FolderLayout::of(paths);
    let mut collection = PictureCollection::new(layout.class_names);
    let total = layout.placements.iter().filter(|placement| matches!(placement, Placement::Class(_))).count();
    let mut done = 0;
    for (index, placement) in layout.placements.iter().enumerate() {
        match *placement {
            Placement::Class(class) => {
                match files.picture(index).await {
                    Ok(Some(rgba)) => collection.add(class, &rgba),
                    Ok(None) => collection.skip(&paths[index]),
                    Err(error) => {
                        set_hidden("collection-progress", true);
                        set_text("collection-status", "");
                        return show_problem(&format!("{error}. Your pictures are as they were."));
                    }
                }
                done += 1;
                progress(done, total);
            }
            Placement::Loose => collection.skip(&paths[index]),
            Placement::Ignored => {}
        }
    }
    finish_import(app, collection, source);
}

/// A folder picked with the folder input: every file with its path inside the folder (the
/// browser's `webkitRelativePath` starts with the picked folder's own name, which is not a class).
async fn import_folder(app: SharedApp, files: Vec<File>) {
    let relative: Vec<String> = files
        .iter()
        .map(|file| Reflect::get(file, &"webkitRelativePath".into()).ok().and_then(|path| path.as_string()).filter(|path| !path.is_empty()).unwrap_or_else(|| file.name()))
        .collect();
    let root = relative.first().and_then(|path| path.split_once('/')).map_or("the folder", |(root, _)| root).to_string();
    let paths: Vec<String> = relative.iter().map(|path| path.split_once('/').map_or(path.as_str(), |(_, inside)| inside).to_string()).collect();
    import_files(&app, &paths, Files::Folder(files), &format!("the folder {root}")).await;
}

/// A zip's bytes, left in JavaScript memory: the zip reader copies in only what it reads.
/// Hand-written because web-sys has no `Read + Seek` over an array, and it is this short.
struct JsBytes {
    bytes: Uint8Array,
    position: u64,
}

impl Read for JsBytes {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let length = self.bytes.length() as u64;
        let start = self.position.min(length);
        let end = (start + buffer.len() as u64).min(length);
        let count = (end - start) as usize;
        self.bytes.subarray(start as u32, end as u32).copy_to(&mut buffer[..count]);
        self.position = end;
        Ok(count)
    }
}

impl Seek for JsBytes {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let length = self.bytes.length() as i64;
        let position = match to {
            SeekFrom::Start(offset) => offset as i64,
            SeekFrom::End(offset) => length + offset,
            SeekFrom::Current(offset) => self.position as i64 + offset,
        };
        if position < 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek before the start"));
        }
        self.position = position as u64;
        Ok(self.position)
    }
}

async fn import_zip(app: SharedApp, file: File) {
    let name = file.name();
    if file.size() > MAX_ZIP_FILE_BYTES {
        show_problem(&format!(
            "{name} is {}; zips up to {} are read here. Pick the unzipped folder instead: its pictures are read one at a time.",
            bytes(file.size() as u64),
            bytes(MAX_ZIP_FILE_BYTES as u64)
        ));
        return;
    }
    set_text("collection-status", &format!("Reading {name}…"));
    let buffer = match JsFuture::from(file.array_buffer()).await {
        Ok(buffer) => buffer,
        Err(_) => return show_problem(&format!("{name} could not be read.")),
    };
    let reader = JsBytes { bytes: Uint8Array::new(&buffer), position: 0 };
    match ZipFolder::open(reader, &name) {
        Ok(zip) => {
            let paths = zip.paths.clone();
            import_files(&app, &paths, Files::Zip(zip), &name).await;
        }
        Err(error) => show_problem(&format!("{error}. Your pictures are as they were.")),
    }
}

/// Pictures chosen or dropped for one class, added to it; files that are not pictures are
/// counted and left out.
async fn add_pictures(app: SharedApp, class: usize, files: Vec<File>) {
    let name = app.borrow().collection.class_names.get(class).cloned().unwrap_or_default();
    let (mut added, mut skipped) = (0, 0);
    for (index, file) in files.iter().enumerate() {
        match picture_input(file).await {
            Ok(rgba) if class < app.borrow().collection.class_names.len() => {
                app.borrow_mut().collection.add(class, &rgba);
                added += 1;
            }
            _ => skipped += 1,
        }
        progress(index + 1, files.len());
    }
    set_hidden("collection-progress", true);
    let skipped = match skipped {
        0 => String::new(),
        count => format!(" Skipped {}.", not_pictures(count)),
    };
    set_text("collection-status", &format!("Added {added} picture{} to {name}.{skipped}", if added == 1 { "" } else { "s" }));
    show(&app);
    request_save(&app);
}

/// Records camera frames into `class` while its button is held.
async fn record(app: SharedApp, class: usize) {
    let video: HtmlElement = element("collection-video");
    let name = app.borrow().collection.class_names.get(class).cloned().unwrap_or_default();
    let mut added = 0;
    while RECORDING.get() == Some(class) && added < MAX_BURST && class < app.borrow().collection.class_names.len() {
        if let Ok(rgba) = picture_input(&video).await {
            app.borrow_mut().collection.add(class, &rgba);
            added += 1;
            set_text("collection-status", &format!("Recording into {name}: {added} frame{}…", if added == 1 { "" } else { "s" }));
        }
        dom::sleep_ms(RECORD_EVERY_MS).await;
    }
    RECORDING.set(None);
    set_text("collection-status", &format!("Recorded {added} frame{} into {name}.", if added == 1 { "" } else { "s" }));
    show(&app);
    request_save(&app);
}

async fn start_camera() {
    match camera::start(&element("collection-video")).await {
        Ok(()) => {
            CAMERA_ON.set(true);
            show_problem("");
            for (id, hidden) in [("collection-video", false), ("collection-camera-stop", false), ("collection-camera-note", false), ("collection-camera-start", true)] {
                set_hidden(id, hidden);
            }
        }
        Err(message) => show_problem(&format!("The camera could not be used: {message}.")),
    }
    show_records();
}

fn stop_camera() {
    RECORDING.set(None);
    CAMERA_ON.set(false);
    camera::stop(&element("collection-video"));
    for (id, hidden) in [("collection-video", true), ("collection-camera-stop", true), ("collection-camera-note", true), ("collection-camera-start", false)] {
        set_hidden(id, hidden);
    }
    show_records();
}

/// The classes' record buttons, shown while the camera plays.
fn show_records() {
    let Ok(buttons) = element::<HtmlElement>("collection-classes").query_selector_all("[data-record]") else { return };
    for index in 0..buttons.length() {
        if let Some(button) = buttons.item(index).and_then(|node| node.dyn_into::<HtmlElement>().ok()) {
            button.set_hidden(!CAMERA_ON.get());
        }
    }
}

/// Sends the pictures to the worker, which splits them and trains on them from now on; the
/// model starts from the pretrained weights or the current ones, as the person chose.
async fn use_collection(app: SharedApp) {
    if app.borrow().training {
        return show_problem("Stop training before changing what it trains on.");
    }
    let (class_names, labels, pixels) = {
        let app = app.borrow();
        if let Err(problem) = app.collection.check() {
            return show_problem(&format!("These pictures cannot be trained on yet: {problem}."));
        }
        let images = &app.collection.images;
        (app.collection.class_names.clone(), images.labels.clone(), images.pixels.clone())
    };
    let held_out = element::<HtmlInputElement>("collection-held-out").value_as_number() / 100.0;
    if !(0.05..=0.5).contains(&held_out) {
        return show_problem("Hold out between 5 and 50 % of each class to test on.");
    }
    show_problem("");
    if element::<HtmlSelectElement>("collection-base").value() == "pretrained" {
        let loaded = storage::download(PRETRAINED, None, |_, _| {}).await;
        match loaded.and_then(|bytes| adopt_weights(&app, bytes, "Pretrained weights (the base to fine-tune)")) {
            Ok(()) => {}
            Err(message) => return show_problem(&format!("The pretrained weights could not be loaded ({message}).")),
        }
    }
    set_text("collection-status", "Splitting your pictures…");
    send(&app, &WorkerInput::LoadCollection { class_names, held_out, seed: 0, labels, pixels }, None);
}

/// Back to CIFAR-10 and its pretrained model, in one click.
async fn back_to_cifar(app: SharedApp) {
    if app.borrow().training {
        return show_problem("Stop training before changing what it trains on.");
    }
    show_problem("");
    // The model first: it is tested on CIFAR-10 once that has loaded.
    if let Ok(bytes) = storage::download(PRETRAINED, None, |_, _| {}).await
        && let Err(message) = adopt_weights(&app, bytes, "Pretrained weights")
    {
        show_problem(&format!("The pretrained weights could not be loaded ({message})."));
    }
    send(&app, &WorkerInput::LoadPreparedDataset { manifest_url: crate::web::app::dataset_manifest_url() }, None);
    set_text("collection-status", "Back to CIFAR-10. Your pictures stay here for next time.");
}

fn files_of(input: &HtmlInputElement) -> Vec<File> {
    let Some(list) = input.files() else { return Vec::new() };
    (0..list.length()).filter_map(|index| list.get(index)).collect()
}

pub fn wire(app: &SharedApp) {
    let _ = element::<HtmlInputElement>("collection-held-out").set_attribute("value", &format!("{:.0}", 100.0 * DEFAULT_HELD_OUT));
    set_text("collection-limits", &format!("Two to {MAX_CLASSES} classes, at least two pictures each."));

    let folder_app = app.clone();
    dom::listen(&element::<HtmlElement>("collection-folder"), "change", move |_: web_sys::Event| {
        let input: HtmlInputElement = element("collection-folder");
        let files = files_of(&input);
        input.set_value("");
        if !files.is_empty() {
            importing(import_folder(folder_app.clone(), files));
        }
    });
    let zip_app = app.clone();
    dom::listen(&element::<HtmlElement>("collection-zip"), "change", move |_: web_sys::Event| {
        let input: HtmlInputElement = element("collection-zip");
        let file = files_of(&input).into_iter().next();
        input.set_value("");
        if let Some(file) = file {
            importing(import_zip(zip_app.clone(), file));
        }
    });
    let zone = element::<HtmlElement>("collection-drop");
    dom::listen(&zone, "dragover", |event: DragEvent| event.prevent_default());
    let drop_app = app.clone();
    dom::listen(&zone, "drop", move |event: DragEvent| {
        event.prevent_default();
        let file = event.data_transfer().and_then(|transfer| transfer.files()).and_then(|files| files.get(0));
        match file {
            Some(file) if file.name().to_lowercase().ends_with(".zip") => importing(import_zip(drop_app.clone(), file)),
            Some(_) => show_problem("Drop a .zip of your class folders here, or pick the folder itself with “Choose a folder”."),
            None => {}
        }
    });

    let add_app = app.clone();
    dom::listen(&element::<HtmlElement>("collection-add-class"), "click", move |_: web_sys::Event| {
        let input: HtmlInputElement = element("collection-new-name");
        let added = add_app.borrow_mut().collection.add_class(&input.value());
        match added {
            Ok(_) => {
                input.set_value("");
                show_problem("");
                show(&add_app);
                request_save(&add_app);
            }
            Err(problem) => show_problem(&format!("The class was not added: {problem}.")),
        }
    });
    let list = element::<HtmlElement>("collection-classes");
    let picked_app = app.clone();
    dom::listen(&list, "change", move |event: web_sys::Event| {
        let Some(input) = event.target().and_then(|target| target.dyn_into::<HtmlInputElement>().ok()) else { return };
        let Some(class) = input.get_attribute("data-add-to").and_then(|class| class.parse::<usize>().ok()) else { return };
        let files = files_of(&input);
        input.set_value("");
        if !files.is_empty() {
            importing(add_pictures(picked_app.clone(), class, files));
        }
    });
    dom::listen(&list, "dragover", |event: DragEvent| event.prevent_default());
    let dropped_app = app.clone();
    dom::listen(&list, "drop", move |event: DragEvent| {
        event.prevent_default();
        event.stop_propagation(); // not also a zip dropped on the card
        let row = event.target().and_then(|target| target.dyn_into::<Element>().ok()).and_then(|target| target.closest("li[data-class-index]").ok().flatten());
        let Some(class) = row.and_then(|row| row.get_attribute("data-class-index")).and_then(|class| class.parse::<usize>().ok()) else { return };
        let Some(list) = event.data_transfer().and_then(|transfer| transfer.files()) else { return };
        let files: Vec<File> = (0..list.length()).filter_map(|index| list.get(index)).collect();
        if !files.is_empty() {
            importing(add_pictures(dropped_app.clone(), class, files));
        }
    });

    set_hidden("collection-camera-start", !camera::available());
    dom::listen(&element::<HtmlElement>("collection-camera-start"), "click", |_: web_sys::Event| spawn_local(start_camera()));
    dom::listen(&element::<HtmlElement>("collection-camera-stop"), "click", |_: web_sys::Event| stop_camera());
    let record_app = app.clone();
    dom::listen(&list, "pointerdown", move |event: web_sys::PointerEvent| {
        let Some(target) = event.target().and_then(|target| target.dyn_into::<Element>().ok()) else { return };
        let Some(class) = target.get_attribute("data-record").and_then(|class| class.parse::<usize>().ok()) else { return };
        event.prevent_default();
        if CAMERA_ON.get() && RECORDING.get().is_none() && !IMPORTING.get() {
            RECORDING.set(Some(class));
            importing(record(record_app.clone(), class));
        }
    });
    for release in ["pointerup", "pointercancel"] {
        dom::listen(&dom::document(), release, |_: web_sys::Event| RECORDING.set(None));
    }

    // Pasted while one of a class's buttons has the focus: into that class, not the photo card.
    let pasted_app = app.clone();
    dom::listen(&list, "paste", move |event: web_sys::ClipboardEvent| {
        let row = event.target().and_then(|target| target.dyn_into::<Element>().ok()).and_then(|target| target.closest("li[data-class-index]").ok().flatten());
        let Some(class) = row.and_then(|row| row.get_attribute("data-class-index")).and_then(|class| class.parse::<usize>().ok()) else { return };
        let Some(list) = event.clipboard_data().and_then(|data| data.files()) else { return };
        let files: Vec<File> = (0..list.length()).filter_map(|index| list.get(index)).collect();
        if !files.is_empty() {
            event.prevent_default();
            event.stop_propagation();
            importing(add_pictures(pasted_app.clone(), class, files));
        }
    });

    let list_app = app.clone();
    dom::listen(&element::<HtmlElement>("collection-classes"), "click", move |event: MouseEvent| {
        let Some(target) = event.target().and_then(|target| target.dyn_into::<Element>().ok()) else { return };
        if IMPORTING.get() || list_app.borrow().training {
            return;
        }
        if let Some(index) = target.get_attribute("data-index").and_then(|index| index.parse::<usize>().ok()) {
            list_app.borrow_mut().collection.remove_picture(index);
        } else if let Some(class) = target.get_attribute("data-remove-class").and_then(|class| class.parse::<usize>().ok()) {
            list_app.borrow_mut().collection.remove_class(class);
        } else {
            return;
        }
        show(&list_app);
        request_save(&list_app);
    });

    let use_app = app.clone();
    dom::listen(&element::<HtmlElement>("collection-use"), "click", move |_: web_sys::Event| {
        spawn_local(use_collection(use_app.clone()));
    });
    let cifar_app = app.clone();
    dom::listen(&element::<HtmlElement>("collection-cifar"), "click", move |_: web_sys::Event| {
        spawn_local(back_to_cifar(cifar_app.clone()));
    });
    let clear_app = app.clone();
    dom::listen(&element::<HtmlElement>("collection-clear"), "click", move |_: web_sys::Event| {
        if IMPORTING.get() {
            return;
        }
        clear_app.borrow_mut().collection = PictureCollection::default();
        show(&clear_app);
        set_text("collection-status", "Your pictures are forgotten.");
        request_save(&clear_app);
    });
}
