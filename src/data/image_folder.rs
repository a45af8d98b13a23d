//! A person's own classes, laid out as torchvision's `ImageFolder` reads them: one folder per
//! class, named for it, holding its pictures (sub-folders inside a class folder count for it).
//!
//! ```text
//!  pets/cat/1.jpg, pets/cat/2.png, pets/dog/a.webp, pets/notes.txt …
//!        │ FolderLayout::of (paths only)      class per file, or why it is left out
//!        │ decode + centre-crop to 32×32      (natively the `image` crate, in the page the browser)
//!        ▼ PictureCollection                  class names, an ImageSet, what was skipped
//!        │ check                              2–20 classes, each with at least two pictures
//!        ▼ split_held_out                     (train, held-out) per class, seeded
//! ```
//!
//! Only the 32×32 inputs are kept, so a folder of 12-megapixel photos costs 3 KB a picture. The
//! layout is decided from the paths before any file is read: a folder picked in a browser, a zip
//! and a directory on disk all give their paths first.

use std::collections::BTreeMap;

use super::rng::Pcg32;
use super::{IMAGE_BYTES, IMAGE_PIXELS, ImageSet};

/// Fewer classes is not a classification; more than this is past what a few dozen pictures a
/// class can teach the tiny model, and past what the page lays out.
pub const MIN_CLASSES: usize = 2;
pub const MAX_CLASSES: usize = 20;
/// One picture to train on and one to hold out.
pub const MIN_PICTURES_PER_CLASS: usize = 2;
/// The share of each class held out to test on unless the person says otherwise.
pub const DEFAULT_HELD_OUT: f64 = 0.2;

/// Why a folder of pictures cannot be trained on, in words a person can act on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FolderError {
    #[error("no pictures were found{}: put them in one folder per class (cat/1.jpg, dog/2.png, …)", skipped_note(*.skipped))]
    NoPictures { skipped: usize },
    #[error("there are no class folders: the {files} file{} found must go in one folder per class, named for it (cat/1.jpg, dog/2.png, …)", if *.files == 1 { "" } else { "s" })]
    NoClassFolders { files: usize },
    #[error("only one class was found ('{name}'): make at least {MIN_CLASSES} class folders, one per kind of picture")]
    OneClass { name: String },
    #[error("{count} classes were found; at most {MAX_CLASSES} can be trained here: merge or leave out some")]
    TooManyClasses { count: usize },
    #[error("class '{name}' has {count} picture{}; each class needs at least {MIN_PICTURES_PER_CLASS} (one to train on, one to test on)", if *.count == 1 { "" } else { "s" })]
    TooFewPictures { name: String, count: usize },
    #[error("the held-out share must be above 0 and below 1, not {share}")]
    HeldOutShare { share: f64 },
    #[error("{name} is not a readable zip file ({detail})")]
    NotZip { name: String, detail: String },
    #[error("{name} expands to more than {} MB: no collection of pictures needs that much, so it is refused (a zip bomb?)", megabytes(MAX_ZIP_EXPANDED_BYTES))]
    ZipTooLarge { name: String },
    #[error("{path} in {name} expands to more than {} MB, more than any picture needs: the zip is refused", megabytes(MAX_ZIP_PICTURE_BYTES))]
    ZipPictureTooLarge { name: String, path: String },
    #[error("{0}")]
    ClassName(String),
    #[error("the saved pictures cannot be read ({0})")]
    StoredCollection(String),
}

fn megabytes(bytes: u64) -> String {
    crate::display::group_thousands((bytes / 1_000_000) as usize)
}

fn skipped_note(skipped: usize) -> String {
    match skipped {
        0 => String::new(),
        1 => " (1 file was not a picture)".into(),
        count => format!(" ({count} files were not pictures)"),
    }
}

/// Where one file of the tree goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Into the class of this index (into [`FolderLayout::class_names`]).
    Class(usize),
    /// Not in a class folder: a file beside the class folders. Counted as skipped.
    Loose,
    /// Hidden files and folders (`.DS_Store`, `.git/`) and macOS's `__MACOSX/` in zips: not the
    /// person's pictures, so left out without a word.
    Ignored,
}

/// The classes of a tree of files, read from their paths alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderLayout {
    /// Sorted, as torchvision sorts them: label `i` is `class_names[i]`.
    pub class_names: Vec<String>,
    /// One per path given, in that order.
    pub placements: Vec<Placement>,
}

impl FolderLayout {
    /// Each path is relative and `/`-separated (`cat/1.jpg`). When every file sits inside one
    /// common folder that has folders of its own (a zip of the folder `pets/`), that folder is
    /// the root and not a class; a lone folder of pictures (`cats/1.jpg`, `cats/2.jpg`) stays a
    /// class, so that the person hears it is only one.
    pub fn of<S: AsRef<str>>(paths: &[S]) -> Self {
        let parts: Vec<Option<Vec<&str>>> = paths
            .iter()
            .map(|path| {
                let parts: Vec<&str> = path.as_ref().split(['/', '\\']).filter(|part| !part.is_empty()).collect();
                let hidden = parts.iter().any(|part| part.starts_with('.') || *part == "__MACOSX");
                (!hidden && !parts.is_empty()).then_some(parts)
            })
            .collect();
        let kept: Vec<&Vec<&str>> = parts.iter().flatten().collect();
        let common_root = kept.first().map(|first| first[0]).filter(|root| {
            kept.iter().all(|parts| parts.len() >= 2 && parts[0] == *root) && kept.iter().any(|parts| parts.len() >= 3)
        });
        let skip = usize::from(common_root.is_some());
        let class_of = |parts: &Vec<&str>| (parts.len() >= skip + 2).then(|| parts[skip].to_string());

        let class_names: Vec<String> = kept
            .iter()
            .filter_map(|parts| class_of(parts))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let placements = parts
            .iter()
            .map(|parts| match parts {
                None => Placement::Ignored,
                Some(parts) => match class_of(parts) {
                    Some(name) => Placement::Class(class_names.binary_search(&name).expect("every class was collected")),
                    None => Placement::Loose,
                },
            })
            .collect();
        Self { class_names, placements }
    }
}

/// A person's labelled pictures at the model's input size.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PictureCollection {
    pub class_names: Vec<String>,
    /// Planar 32×32 RGB, labelled by index into `class_names`.
    pub images: ImageSet,
    /// The paths of files that were not pictures, or not in a class folder, in the order met.
    pub skipped: Vec<String>,
}

impl PictureCollection {
    pub fn new(class_names: Vec<String>) -> Self {
        Self { class_names, ..Self::default() }
    }

    /// Adds a picture, already centre-cropped and resized to 32×32 RGBA (`photo_to_input`).
    ///
    /// # Panics
    /// If `rgba` is not 32×32×4 bytes or `class` is not one of the collection's.
    pub fn add(&mut self, class: usize, rgba: &[u8]) {
        assert!(class < self.class_names.len(), "class {class} is not in the collection");
        self.images.push(class as u8, &rgba_to_planar(rgba));
    }

    pub fn skip(&mut self, path: &str) {
        self.skipped.push(path.to_string());
    }

    /// Adds an empty class named `name` (trimmed) and returns its label; refuses an empty name, a
    /// name already taken, and a class past [`MAX_CLASSES`].
    pub fn add_class(&mut self, name: &str) -> Result<usize, FolderError> {
        let name = name.trim();
        if name.is_empty() {
            return Err(FolderError::ClassName("give the class a name".into()));
        }
        if self.class_names.iter().any(|known| known == name) {
            return Err(FolderError::ClassName(format!("there is a class named '{name}' already")));
        }
        if self.class_names.len() >= MAX_CLASSES {
            return Err(FolderError::TooManyClasses { count: self.class_names.len() + 1 });
        }
        self.class_names.push(name.to_string());
        Ok(self.class_names.len() - 1)
    }

    /// Removes picture `index` (into `images`); its class stays, perhaps empty.
    pub fn remove_picture(&mut self, index: usize) {
        if index < self.images.len() {
            let keep: Vec<usize> = (0..self.images.len()).filter(|&other| other != index).collect();
            self.images = self.images.select(&keep);
        }
    }

    /// Removes class `class` and its pictures; the classes after it move down one label.
    pub fn remove_class(&mut self, class: usize) {
        if class >= self.class_names.len() {
            return;
        }
        self.class_names.remove(class);
        let keep: Vec<usize> = (0..self.images.len()).filter(|&index| self.images.label(index) as usize != class).collect();
        self.images = self.images.select(&keep);
        for label in &mut self.images.labels {
            if *label as usize > class {
                *label -= 1;
            }
        }
    }

    /// Pictures per class, in class order.
    pub fn counts(&self) -> Vec<usize> {
        let mut counts = vec![0; self.class_names.len()];
        for &label in &self.images.labels {
            counts[label as usize] += 1;
        }
        counts
    }

    /// Refuses what cannot be fine-tuned on: no pictures, one class or more than twenty, a class
    /// with fewer than two pictures.
    pub fn check(&self) -> Result<(), FolderError> {
        let counts = self.counts();
        let present: Vec<usize> = (0..counts.len()).filter(|&class| counts[class] > 0).collect();
        match present.len() {
            0 if self.class_names.is_empty() && !self.skipped.is_empty() => {
                return Err(FolderError::NoClassFolders { files: self.skipped.len() });
            }
            // Classes made by hand, still empty: say which needs pictures.
            0 if !self.class_names.is_empty() && self.skipped.is_empty() => {
                return Err(FolderError::TooFewPictures { name: self.class_names[0].clone(), count: 0 });
            }
            0 => return Err(FolderError::NoPictures { skipped: self.skipped.len() }),
            1 => return Err(FolderError::OneClass { name: self.class_names[present[0]].clone() }),
            count if count > MAX_CLASSES => return Err(FolderError::TooManyClasses { count }),
            _ => {}
        }
        match (0..counts.len()).find(|&class| counts[class] < MIN_PICTURES_PER_CLASS) {
            Some(class) => Err(FolderError::TooFewPictures { name: self.class_names[class].clone(), count: counts[class] }),
            None => Ok(()),
        }
    }
}

/// Reads a tree of files into a collection: `picture(i)` gives path `i`'s 32×32 RGBA input, or
/// `None` when the file is not a picture it can decode. Called once per file in a class folder,
/// one at a time, so only one decoded photo is in memory at once.
pub fn import_pictures<S: AsRef<str>>(paths: &[S], mut picture: impl FnMut(usize) -> Option<Vec<u8>>) -> PictureCollection {
    let layout = FolderLayout::of(paths);
    let mut collection = PictureCollection::new(layout.class_names);
    for (index, placement) in layout.placements.iter().enumerate() {
        match *placement {
            Placement::Class(class) => match picture(index) {
                Some(rgba) => collection.add(class, &rgba),
                None => collection.skip(paths[index].as_ref()),
            },
            Placement::Loose => collection.skip(paths[index].as_ref()),
            Placement::Ignored => {}
        }
    }
    collection
}

/// Splits `images` into (train, held out) class by class: `share` of each class's pictures,
/// rounded, and at least one, is held out, and at least one is kept to train on. Which ones
/// depends only on the seed and the pictures' order, so a reload gives the same split.
pub fn split_held_out(images: &ImageSet, share: f64, seed: u64) -> Result<(ImageSet, ImageSet), FolderError> {
    if !(share > 0.0 && share < 1.0) {
        return Err(FolderError::HeldOutShare { share });
    }
    let mut by_class: BTreeMap<u8, Vec<usize>> = BTreeMap::new();
    for (index, &label) in images.labels.iter().enumerate() {
        by_class.entry(label).or_default().push(index);
    }
    let (mut train, mut held_out) = (Vec::new(), Vec::new());
    for (&class, indices) in &by_class {
        let mut order = indices.clone();
        Pcg32::new(seed, 0x5e1d + class as u64).shuffle(&mut order);
        let count = order.len();
        let held = ((count as f64 * share).round() as usize).clamp(1, count.saturating_sub(1).max(1));
        let (test_part, train_part) = order.split_at(held.min(count));
        held_out.extend_from_slice(test_part);
        train.extend_from_slice(train_part);
    }
    train.sort_unstable();
    held_out.sort_unstable();
    Ok((images.select(&train), images.select(&held_out)))
}

/// No single file in a zip may expand past this (a 12-megapixel JPEG is about 5 MB) …
pub const MAX_ZIP_PICTURE_BYTES: u64 = 64_000_000;
/// … nor all of them together past this. Files are expanded one at a time and dropped once
/// decoded, so the bounds cap the time a zip bomb can take, and memory at one file's worth.
pub const MAX_ZIP_EXPANDED_BYTES: u64 = 4_000_000_000;

/// A zip of an ImageFolder tree, read one file at a time: the paths first (from the zip's
/// directory), then each file's bytes, checked against the bounds above as they expand (what
/// the directory declares is checked too, but a hostile zip can lie there).
pub struct ZipFolder<R: std::io::Read + std::io::Seek> {
    name: String,
    archive: zip::ZipArchive<R>,
    /// The paths of the zip's files (not its folders), and their indices in the archive.
    pub paths: Vec<String>,
    indices: Vec<usize>,
    expanded: u64,
}

impl<R: std::io::Read + std::io::Seek> ZipFolder<R> {
    /// Reads the zip's directory; `name` is its file's, for messages.
    pub fn open(reader: R, name: &str) -> Result<Self, FolderError> {
        let not_zip = |error: zip::result::ZipError| FolderError::NotZip { name: name.into(), detail: error.to_string() };
        let mut archive = zip::ZipArchive::new(reader).map_err(not_zip)?;
        let (mut paths, mut indices, mut declared) = (Vec::new(), Vec::new(), 0u64);
        for index in 0..archive.len() {
            let entry = archive.by_index_raw(index).map_err(not_zip)?;
            if entry.is_dir() {
                continue;
            }
            declared = declared.saturating_add(entry.size());
            // Names are text for people, never file-system paths: a name that is not UTF-8 is shown as well as it can be.
            paths.push(entry.name().map_or_else(|_| String::from_utf8_lossy(entry.name_raw()).into_owned(), |name| name.into_owned()));
            indices.push(index);
        }
        if declared > MAX_ZIP_EXPANDED_BYTES {
            return Err(FolderError::ZipTooLarge { name: name.into() });
        }
        Ok(Self { name: name.into(), archive, paths, indices, expanded: 0 })
    }

    /// The bytes of file `index` (into [`ZipFolder::paths`]), or `Ok(None)` when it cannot be
    /// expanded (damaged, encrypted, or compressed in a way this build does not read): such a
    /// file is skipped like any file that is not a picture. Past a bound the whole zip is refused.
    pub fn read(&mut self, index: usize) -> Result<Option<Vec<u8>>, FolderError> {
        use std::io::Read;
        let Ok(entry) = self.archive.by_index(self.indices[index]) else { return Ok(None) };
        let mut bytes = Vec::with_capacity(entry.size().min(MAX_ZIP_PICTURE_BYTES) as usize);
        let read = entry.take(MAX_ZIP_PICTURE_BYTES + 1).read_to_end(&mut bytes);
        self.expanded += bytes.len() as u64;
        if bytes.len() as u64 > MAX_ZIP_PICTURE_BYTES {
            return Err(FolderError::ZipPictureTooLarge { name: self.name.clone(), path: self.paths[index].clone() });
        }
        if self.expanded > MAX_ZIP_EXPANDED_BYTES {
            return Err(FolderError::ZipTooLarge { name: self.name.clone() });
        }
        Ok(read.ok().map(|_| bytes))
    }
}

/// Reads a zip of an ImageFolder tree into a collection, as [`import_pictures`] does a folder;
/// `decode` turns a file's bytes into the 32×32 RGBA input, or `None`.
pub fn import_zip<R: std::io::Read + std::io::Seek>(
    reader: R,
    name: &str,
    mut decode: impl FnMut(&[u8]) -> Option<Vec<u8>>,
) -> Result<PictureCollection, FolderError> {
    let mut zip = ZipFolder::open(reader, name)?;
    let paths = zip.paths.clone();
    let mut failure = None;
    let collection = import_pictures(&paths, |index| {
        if failure.is_some() {
            return None;
        }
        match zip.read(index) {
            Ok(bytes) => bytes.and_then(|bytes| decode(&bytes)),
            Err(error) => {
                failure = Some(error);
                None
            }
        }
    });
    match failure {
        Some(error) => Err(error),
        None => Ok(collection),
    }
}

const STORED_MAGIC: [u8; 8] = *b"VITPICS1";

/// A collection as the page keeps it in browser storage: `VITPICS1`, the class names' JSON
/// length (u32, little-endian), that JSON, the picture count (u32), the labels, the pixels.
pub fn encode_collection(collection: &PictureCollection) -> Vec<u8> {
    let names = serde_json::to_vec(&collection.class_names).expect("names serialise");
    let images = &collection.images;
    let mut bytes = Vec::with_capacity(16 + names.len() + images.labels.len() + images.pixels.len());
    bytes.extend_from_slice(&STORED_MAGIC);
    bytes.extend_from_slice(&(names.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&names);
    bytes.extend_from_slice(&(images.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&images.labels);
    bytes.extend_from_slice(&images.pixels);
    bytes
}

/// Reads what [`encode_collection`] wrote, refusing anything damaged.
pub fn decode_collection(bytes: &[u8]) -> Result<PictureCollection, FolderError> {
    let damaged = |detail: &str| FolderError::StoredCollection(detail.into());
    let rest = bytes.strip_prefix(&STORED_MAGIC[..]).ok_or_else(|| damaged("not a saved collection"))?;
    let take_u32 = |rest: &[u8]| rest.first_chunk::<4>().map(|field| u32::from_le_bytes(*field) as usize);
    let names_length = take_u32(rest).ok_or_else(|| damaged("it ends early"))?;
    let rest = &rest[4..];
    let names = rest.get(..names_length).ok_or_else(|| damaged("it ends early"))?;
    let class_names: Vec<String> = serde_json::from_slice(names).map_err(|_| damaged("its class names are damaged"))?;
    let rest = &rest[names_length..];
    let count = take_u32(rest).ok_or_else(|| damaged("it ends early"))?;
    let rest = &rest[4..];
    if rest.len() as u64 != count as u64 * (IMAGE_BYTES as u64 + 1) {
        return Err(damaged("its length does not match its picture count"));
    }
    let (labels, pixels) = rest.split_at(count);
    if labels.iter().any(|&label| label as usize >= class_names.len()) {
        return Err(damaged("a picture's class is not one of its classes"));
    }
    let images = ImageSet { labels: labels.to_vec(), pixels: pixels.to_vec() };
    Ok(PictureCollection { class_names, images, skipped: Vec::new() })
}

/// 32×32 RGBA (a canvas's layout) to planar RGB (CIFAR-10's), dropping alpha.
///
/// # Panics
/// If `rgba` is not 32×32×4 bytes.
pub fn rgba_to_planar(rgba: &[u8]) -> Vec<u8> {
    assert_eq!(rgba.len(), 4 * IMAGE_PIXELS, "a picture is 32 × 32 RGBA");
    let mut planar = vec![0; IMAGE_BYTES];
    for (index, pixel) in rgba.chunks_exact(4).enumerate() {
        for channel in 0..3 {
            planar[channel * IMAGE_PIXELS + index] = pixel[channel];
        }
    }
    planar
}

/// Natively: decodes a JPEG, PNG or WebP file and centre-crops and resizes it to 32×32 RGBA, as
/// the page does a photo. `None` for a file that is not such a picture.
#[cfg(not(target_family = "wasm"))]
pub fn decode_picture(bytes: &[u8]) -> Option<Vec<u8>> {
    let image = image::load_from_memory(bytes).ok()?.to_rgba8();
    let (width, height) = (image.width() as usize, image.height() as usize);
    crate::viz::resize::photo_to_input(image.as_raw(), width, height, super::IMAGE_SIDE).ok()
}

/// Natively: every file under `root` (recursively, sorted, so the labels do not depend on the
/// file system's order), or in `root` when it is a `.zip`, read with [`decode_picture`].
#[cfg(not(target_family = "wasm"))]
pub fn read_image_folder(root: &std::path::Path) -> Result<PictureCollection, String> {
    if root.is_file() {
        let file = std::fs::File::open(root).map_err(|error| format!("{}: {error}", root.display()))?;
        let name = root.file_name().map_or_else(|| root.display().to_string(), |name| name.to_string_lossy().into_owned());
        return import_zip(std::io::BufReader::new(file), &name, decode_picture).map_err(|error| error.to_string());
    }
    fn walk(folder: &std::path::Path, prefix: &str, paths: &mut Vec<String>) -> std::io::Result<()> {
        let mut entries: Vec<_> = std::fs::read_dir(folder)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|entry| entry.file_name());
        for entry in entries {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = format!("{prefix}{name}");
            if entry.file_type()?.is_dir() {
                walk(&entry.path(), &format!("{path}/"), paths)?;
            } else {
                paths.push(path);
            }
        }
        Ok(())
    }
    let mut paths = Vec::new();
    walk(root, "", &mut paths).map_err(|error| format!("{}: {error}", root.display()))?;
    Ok(import_pictures(&paths, |index| std::fs::read(root.join(&paths[index])).ok().and_then(|bytes| decode_picture(&bytes))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placements(paths: &[&str]) -> (Vec<String>, Vec<Placement>) {
        let layout = FolderLayout::of(paths);
        (layout.class_names, layout.placements)
    }

    #[test]
    fn class_folders_are_read_with_or_without_a_root_folder() {
        use Placement::*;
        let (names, placed) = placements(&["dog/1.jpg", "cat/2.jpg", "cat/deep/3.jpg", "readme.txt"]);
        assert_eq!(names, ["cat", "dog"]);
        assert_eq!(placed, [Class(1), Class(0), Class(0), Loose]);

        // A picked folder's own name comes first in every path: it is the root, not a class.
        let (names, placed) = placements(&["pets/dog/1.jpg", "pets/cat/2.jpg", "pets/.DS_Store", "__MACOSX/pets/._x"]);
        assert_eq!(names, ["cat", "dog"]);
        assert_eq!(placed, [Class(1), Class(0), Ignored, Ignored]);

        // A file beside the class folders inside the root is a loose file of the root.
        let (names, placed) = placements(&["pets/dog/1.jpg", "pets/cat/2.jpg", "pets/README.txt"]);
        assert_eq!((names, placed), (vec!["cat".to_string(), "dog".into()], vec![Class(1), Class(0), Loose]));
        // Outside it, it keeps the root from being one.
        let (names, _) = placements(&["pets/dog/1.jpg", "pets/cat/2.jpg", "notes.txt"]);
        assert_eq!(names, ["pets"]);
        // A lone folder of pictures is one class, not a root.
        let (names, _) = placements(&["cats/1.jpg", "cats/2.jpg"]);
        assert_eq!(names, ["cats"]);
    }

    #[test]
    fn collections_are_checked_for_what_fine_tuning_needs() {
        let picture = vec![7; 4 * IMAGE_PIXELS];
        let collect = |classes: &[(&str, usize)]| {
            let mut collection = PictureCollection::new(classes.iter().map(|(name, _)| name.to_string()).collect());
            for (class, &(_, count)) in classes.iter().enumerate() {
                (0..count).for_each(|_| collection.add(class, &picture));
            }
            collection
        };
        assert_eq!(collect(&[("cat", 3), ("dog", 2)]).check(), Ok(()));
        assert_eq!(collect(&[("cat", 3), ("dog", 2)]).counts(), [3, 2]);
        assert_eq!(collect(&[]).check(), Err(FolderError::NoPictures { skipped: 0 }));
        assert_eq!(collect(&[("mine", 0), ("theirs", 0)]).check(), Err(FolderError::TooFewPictures { name: "mine".into(), count: 0 }));
        assert_eq!(collect(&[("cat", 4)]).check(), Err(FolderError::OneClass { name: "cat".into() }));
        assert_eq!(collect(&[("cat", 4), ("dog", 1)]).check(), Err(FolderError::TooFewPictures { name: "dog".into(), count: 1 }));
        let many: Vec<(String, usize)> = (0..21).map(|class| (format!("c{class}"), 2)).collect();
        let many: Vec<(&str, usize)> = many.iter().map(|(name, count)| (name.as_str(), *count)).collect();
        assert_eq!(collect(&many).check(), Err(FolderError::TooManyClasses { count: 21 }));
        let message = FolderError::NoPictures { skipped: 2 }.to_string();
        assert!(message.contains("2 files were not pictures"), "{message}");
    }

    #[test]
    fn pictures_and_classes_can_be_removed() {
        let mut collection = PictureCollection::new(vec!["a".into(), "b".into(), "c".into()]);
        for (class, colour) in [(0, 1), (1, 2), (2, 3), (1, 4)] {
            collection.add(class, &vec![colour; 4 * IMAGE_PIXELS]);
        }
        collection.remove_picture(1);
        assert_eq!(collection.images.labels, [0, 2, 1]);
        assert_eq!(collection.images.image(2)[0], 4);
        collection.remove_class(0);
        assert_eq!(collection.class_names, ["b", "c"]);
        assert_eq!(collection.images.labels, [1, 0], "c moved down to 1, b to 0");
        assert_eq!(collection.counts(), [1, 1]);
        assert_eq!(collection.add_class("  d "), Ok(2));
        assert!(collection.add_class("b").is_err() && collection.add_class(" ").is_err());
        assert_eq!(collection.counts(), [1, 1, 0]);
        assert_eq!(collection.check(), Err(FolderError::TooFewPictures { name: "b".into(), count: 1 }), "the first class short of two");
        collection.remove_class(2);
        collection.remove_class(7);
        collection.remove_picture(9);
        assert_eq!(collection.images.len(), 2, "out of range: nothing happens");
    }

    #[test]
    fn non_pictures_are_skipped_and_named() {
        let paths = ["a/1.png", "a/2.txt", "b/3.png", "b/4.png", "loose.png"];
        let collection = import_pictures(&paths, |index| paths[index].ends_with(".png").then(|| vec![index as u8; 4 * IMAGE_PIXELS]));
        assert_eq!(collection.class_names, ["a", "b"]);
        assert_eq!(collection.images.labels, [0, 1, 1]);
        assert_eq!(collection.skipped, ["a/2.txt", "loose.png"]);
        assert_eq!(collection.images.image(1)[0], 2, "picture 2 of the paths is b/3.png");
    }

    #[test]
    fn the_split_holds_out_a_share_of_every_class() {
        let mut images = ImageSet::default();
        for index in 0..23 {
            images.push(u8::from(index >= 20), &[index as u8; IMAGE_BYTES]);
        }
        let (train, held_out) = split_held_out(&images, 0.2, 0).unwrap();
        assert_eq!((train.len(), held_out.len()), (18, 5), "4 of 20, and 1 of 3 (rounded 0.6)");
        assert_eq!(held_out.labels.iter().filter(|&&label| label == 1).count(), 1);
        let mut seen: Vec<u8> = train.pixels.chunks(IMAGE_BYTES).chain(held_out.pixels.chunks(IMAGE_BYTES)).map(|image| image[0]).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..23).collect::<Vec<u8>>(), "every picture once");
        assert_eq!(split_held_out(&images, 0.2, 0).unwrap(), (train, held_out), "same seed, same split");

        // Two pictures: one each way, whatever the share.
        let pair = images.select(&[20, 21]);
        for share in [0.01, 0.99] {
            let (train, held_out) = split_held_out(&pair, share, 3).unwrap();
            assert_eq!((train.len(), held_out.len()), (1, 1));
        }
        assert!(split_held_out(&images, 1.0, 0).is_err());
    }

    /// A zip of `files` (path, bytes), deflated.
    fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        use std::io::Write;
        let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        for (path, bytes) in files {
            writer.start_file(*path, options).unwrap();
            writer.write_all(bytes).unwrap();
        }
        writer.finish().unwrap().into_inner()
    }

    /// Test "pictures": files that start with `PIC`, their fourth byte the colour.
    fn fake_decode(bytes: &[u8]) -> Option<Vec<u8>> {
        bytes.starts_with(b"PIC").then(|| vec![bytes[3]; 4 * IMAGE_PIXELS])
    }

    #[test]
    fn a_zip_is_read_like_a_folder() {
        let zip = zip_of(&[("pets/cat/1.png", b"PIC\x01"), ("pets/cat/2.png", b"PIC\x02"), ("pets/dog/3.png", b"PIC\x03"), ("pets/dog/x.txt", b"text")]);
        let collection = import_zip(std::io::Cursor::new(zip), "pets.zip", fake_decode).unwrap();
        assert_eq!(collection.class_names, ["cat", "dog"]);
        assert_eq!(collection.images.labels, [0, 0, 1]);
        assert_eq!(collection.images.image(2)[0], 3);
        assert_eq!(collection.skipped, ["pets/dog/x.txt"]);

        let refused = import_zip(std::io::Cursor::new(b"PK not really".to_vec()), "fake.zip", fake_decode).err().unwrap();
        assert!(matches!(refused, FolderError::NotZip { .. }), "{refused}");
    }

    #[test]
    fn a_zip_bomb_is_refused_without_expanding_it_whole() {
        // 80 MiB of zeros deflate to about 80 KB.
        let zeros = vec![0u8; 80 << 20];
        let zip = zip_of(&[("cats/1.png", b"PIC\x01"), ("cats/huge.png", &zeros), ("dogs/2.png", b"PIC\x02")]);
        drop(zeros);
        assert!(zip.len() < 1 << 20, "{} bytes", zip.len());
        let refused = import_zip(std::io::Cursor::new(zip), "bomb.zip", fake_decode).err().unwrap();
        assert_eq!(refused, FolderError::ZipPictureTooLarge { name: "bomb.zip".into(), path: "cats/huge.png".into() });
        assert!(refused.to_string().contains("more than 64 MB"), "{refused}");
    }

    #[test]
    fn a_stored_collection_round_trips_and_damage_is_refused() {
        let mut collection = PictureCollection::new(vec!["<img src=x onerror=alert(1)>".into(), "dog".into()]);
        collection.add(1, &vec![9; 4 * IMAGE_PIXELS]);
        collection.add(0, &vec![4; 4 * IMAGE_PIXELS]);
        let bytes = encode_collection(&collection);
        assert_eq!(decode_collection(&bytes).unwrap(), collection);
        assert!(decode_collection(&bytes[..bytes.len() - 1]).is_err());
        assert!(decode_collection(b"VITPICS1").is_err());
        let mut bad_label = bytes.clone();
        let labels_at = bytes.len() - 2 * IMAGE_BYTES - 2;
        bad_label[labels_at] = 2;
        assert!(decode_collection(&bad_label).is_err());
    }

    #[test]
    fn rgba_becomes_planar() {
        let mut rgba = vec![0; 4 * IMAGE_PIXELS];
        rgba[..8].copy_from_slice(&[1, 2, 3, 255, 4, 5, 6, 255]);
        let planar = rgba_to_planar(&rgba);
        assert_eq!((planar[0], planar[1], planar[IMAGE_PIXELS], planar[2 * IMAGE_PIXELS + 1]), (1, 4, 2, 6));
    }
}
