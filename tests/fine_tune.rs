//! Fine-tuning on a person's own classes, natively: an ImageFolder tree of pictures this test
//! draws, the per-class split, the new head, head-only training that leaves every other weight as
//! it was, and `train --image-folder` end to end.
#![cfg(not(target_family = "wasm"))]

use std::path::{Path, PathBuf};

use burn::tensor::Device;
use safetensors::SafeTensors;
use vit_web::data::image_folder::{FolderError, read_image_folder, split_held_out};
use vit_web::data::rng::Pcg32;
use vit_web::training::{Trainable, TrainingRecipe, TrainingSession};
use vit_web::model::VitConfig;
use vit_web::weights::{WeightFileInfo, from_safetensors, inspect_safetensors, to_safetensors};

const PRETRAINED: &str = "weights/vit-tiny.safetensors";
const PER_CLASS: usize = 30;

/// A fresh, empty folder under the system's temporary one.
fn scratch(name: &str) -> PathBuf {
    let folder = std::env::temp_dir().join(format!("vit-web-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).expect("the temporary folder is writable");
    folder
}

/// One picture of a class, `width × height`: three kinds nobody would confuse — an orange-to-
/// purple sky, black-and-white diagonal stripes, and green grass-like noise — each drawn with
/// its own randomness, so no two pictures are alike.
fn draw(class: usize, width: u32, height: u32, rng: &mut Pcg32) -> image::RgbImage {
    let (phase, period) = (rng.below(16) as u32, 6 + rng.below(10) as u32);
    image::RgbImage::from_fn(width, height, |x, y| {
        let noise = rng.below(40) as u8;
        match class {
            0 => {
                let t = y as f32 / height as f32;
                image::Rgb([(250.0 - 120.0 * t) as u8, (140.0 - 100.0 * t) as u8 + noise / 2, (40.0 + 140.0 * t) as u8])
            }
            1 => {
                let on = (x + y + phase) / period % 2 == 0;
                let value = if on { 235 - noise } else { 15 + noise };
                image::Rgb([value, value, value])
            }
            _ => image::Rgb([20 + noise, 110 + 2 * noise, 10 + noise / 2]),
        }
    })
}

/// `pets`-like tree: `root/{sky,stripes,grass}/NN.png|jpg` of assorted sizes and aspect ratios,
/// plus a text file in a class folder and one beside the class folders, which must be skipped.
fn picture_folder(name: &str) -> PathBuf {
    let root = scratch(name);
    write_pictures(&root);
    root
}

fn write_pictures(root: &Path) {
    let mut rng = Pcg32::new(11, 3);
    for (class, folder) in ["sky", "stripes", "grass"].iter().enumerate() {
        std::fs::create_dir_all(root.join(folder)).unwrap();
        for index in 0..PER_CLASS {
            let (width, height) = (40 + rng.below(160) as u32, 40 + rng.below(160) as u32);
            let picture = draw(class, width, height, &mut rng);
            let extension = if index % 3 == 0 { "jpg" } else { "png" };
            picture.save(root.join(folder).join(format!("{index:02}.{extension}"))).expect("the picture is written");
        }
    }
    std::fs::write(root.join("stripes").join("notes.txt"), "not a picture").unwrap();
    std::fs::write(root.join("README.txt"), "my pictures").unwrap();
}

/// A zip of `folder`'s files (recursively) under `prefix/`, deflated, plus `extra` files.
fn zip_folder(folder: &Path, prefix: &str, extra: &[(&str, &[u8])], out: &Path) {
    use std::io::Write;
    fn files(folder: &Path, found: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(folder).unwrap().map(|entry| entry.unwrap().path()).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() { files(&path, found) } else { found.push(path) }
        }
    }
    let mut found = Vec::new();
    files(folder, &mut found);
    let mut writer = zip::ZipWriter::new(std::fs::File::create(out).unwrap());
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for path in found {
        let inside = path.strip_prefix(folder).unwrap().to_string_lossy().replace('\\', "/");
        writer.start_file(format!("{prefix}/{inside}"), options).unwrap();
        writer.write_all(&std::fs::read(&path).unwrap()).unwrap();
    }
    for (name, bytes) in extra {
        writer.start_file(format!("{prefix}/{name}"), options).unwrap();
        writer.write_all(bytes).unwrap();
    }
    writer.finish().unwrap();
}

/// Writes the picture folders and zips the page's end-to-end tests import (scripts/e2e.sh asks
/// for them): drawn here, never photographs of anyone.
#[test]
fn writes_e2e_fixtures_when_asked() {
    let Some(dir) = std::env::var_os("E2E_FIXTURES_DIR").map(PathBuf::from) else { return };
    let dir = dir.join("pictures");
    let _ = std::fs::remove_dir_all(&dir);
    let three = dir.join("three-classes");
    std::fs::create_dir_all(&three).unwrap();
    write_pictures(&three);
    zip_folder(&three, "pets", &[], &dir.join("three-classes.zip"));
    // One picture that expands to 100 MB of zeros: past the 64 MB any picture may take.
    let zeros = vec![0u8; 100_000_000];
    zip_folder(&three, "pets", &[("sky/huge.png", &zeros)], &dir.join("bomb.zip"));
    drop(zeros);
    let hostile = dir.join("hostile");
    for (class, folder) in ["<img src=x onerror=alert(1)>", "cats"].iter().enumerate() {
        std::fs::create_dir_all(hostile.join(folder)).unwrap();
        for index in 0..3 {
            draw(class, 48, 48, &mut Pcg32::new(index, 1)).save(hostile.join(folder).join(format!("{index}.png"))).unwrap();
        }
    }
    let one = dir.join("one-class").join("cats");
    std::fs::create_dir_all(&one).unwrap();
    for index in 0..3 {
        draw(0, 48, 48, &mut Pcg32::new(index, 2)).save(one.join(format!("{index}.png"))).unwrap();
    }
    // A fine-tuned model's weight file whose first class name is markup.
    let (base, info) = from_safetensors(&std::fs::read(PRETRAINED).unwrap(), &Device::flex()).unwrap();
    let names = vec!["<img src=x onerror=alert(1)>".to_string(), "cats".into(), "dogs".into()];
    let info = WeightFileInfo { config: VitConfig { classes: 3, ..info.config }, class_names: names, ..info };
    std::fs::write(dir.join("hostile-classes.safetensors"), to_safetensors(&base.with_new_head(3), &info).unwrap()).unwrap();
    let none = dir.join("no-pictures").join("notes");
    std::fs::create_dir_all(&none).unwrap();
    std::fs::write(none.join("a.txt"), "no").unwrap();
    std::fs::write(none.join("b.txt"), "pictures").unwrap();
}

fn tensors(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let file = SafeTensors::deserialize(bytes).expect("our own weight file parses");
    let mut tensors: Vec<(String, Vec<u8>)> = file.tensors().into_iter().map(|(name, view)| (name, view.data().to_vec())).collect();
    tensors.sort();
    tensors
}

/// Fine-tunes the shipped weights on the folder's pictures and returns (held-out correct,
/// held-out pictures, the weights before, the weights after).
fn fine_tune(root: &Path, trainable: Trainable) -> (usize, usize, Vec<u8>, Vec<u8>) {
    let device = Device::flex().autodiff();
    let collection = read_image_folder(root).expect("the folder reads");
    collection.check().expect("three classes of thirty");
    let (train, test) = split_held_out(&collection.images, 0.2, 0).expect("a valid share");
    let (base, _) = from_safetensors(&std::fs::read(PRETRAINED).expect("the shipped weights"), &device).expect("they load");
    let model = base.with_new_head(collection.class_names.len());
    let recipe = TrainingRecipe::fine_tune(trainable);
    let mut session = TrainingSession::new(recipe, model, train, test.clone(), &device)
        .expect("the fine-tuning recipe is valid")
        .with_class_names(collection.class_names.clone());
    let before = to_safetensors(session.model(), &session.weight_info()).expect("the start saves");
    while !session.is_done() {
        while !session.epoch_finished() {
            pollster::block_on(session.step()).expect("a finite step");
        }
        pollster::block_on(session.finish_epoch(1.0)).expect("a finite epoch");
    }
    let evaluation = session.last_evaluation().expect("evaluated after the last epoch");
    let correct = evaluation.predictions.iter().zip(&test.labels).filter(|(guess, truth)| guess == truth).count();
    let after = to_safetensors(session.last_good_model(), &session.weight_info()).expect("the result saves");
    (correct, test.len(), before, after)
}

#[test]
fn an_image_folder_is_read_class_by_class_and_non_pictures_are_skipped() {
    let root = picture_folder("read");
    let collection = read_image_folder(&root).expect("the folder reads");
    assert_eq!(collection.class_names, ["grass", "sky", "stripes"], "sorted, as torchvision sorts them");
    assert_eq!(collection.counts(), [PER_CLASS; 3]);
    assert_eq!(collection.skipped, ["README.txt", "stripes/notes.txt"]);
    // Each picture is its centred square at 32×32: a sky picture is orange at the top.
    let sky = collection.images.labels.iter().position(|&label| label == 1).unwrap();
    let red_top_row = &collection.images.image(sky)[..32];
    assert!(red_top_row.iter().all(|&red| red > 180), "{red_top_row:?}");

    let (train, held_out) = split_held_out(&collection.images, 0.2, 0).unwrap();
    assert_eq!((train.len(), held_out.len()), (72, 18), "6 of each class's 30 held out");

    let empty = scratch("empty");
    std::fs::create_dir_all(empty.join("cats")).unwrap();
    std::fs::write(empty.join("cats").join("list.txt"), "no pictures").unwrap();
    let refused = read_image_folder(&empty).unwrap().check().unwrap_err();
    assert_eq!(refused, FolderError::NoPictures { skipped: 1 });
    let one_class = scratch("one-class");
    std::fs::create_dir_all(one_class.join("cats")).unwrap();
    for index in 0..3 {
        draw(0, 50, 50, &mut Pcg32::new(index, 0)).save(one_class.join("cats").join(format!("{index}.png"))).unwrap();
    }
    let refused = read_image_folder(&one_class).unwrap().check().unwrap_err();
    assert!(refused.to_string().contains("only one class was found ('cats')"), "{refused}");
    for folder in [root, empty, one_class] {
        let _ = std::fs::remove_dir_all(folder);
    }
}

#[test]
fn a_new_head_has_one_output_per_class_and_its_names_are_saved() {
    let device = Device::flex();
    let (base, _) = from_safetensors(&std::fs::read(PRETRAINED).unwrap(), &device).unwrap();
    let model = base.with_new_head(3);
    assert_eq!(model.classes(), 3);
    assert_eq!(model.head.weight.val().dims(), [128, 3]);
    let logits = model.forward(burn::tensor::Tensor::zeros([2, 3, 32, 32], &device));
    assert_eq!(logits.dims(), [2, 3]);
    assert!(logits.into_data().try_to_vec::<f32>().unwrap().iter().all(|&logit| logit == 0.0), "a zero head scores every class alike");
}

#[test]
fn head_only_fine_tuning_changes_the_head_alone_and_learns_the_classes() {
    let root = picture_folder("head");
    let (correct, held_out, before, after) = fine_tune(&root, Trainable::Head);
    let (before, after) = (tensors(&before), tensors(&after));
    for ((name, old), (_, new)) in before.iter().zip(&after) {
        if name.starts_with("head.") {
            assert_ne!(old, new, "{name} learned");
        } else {
            assert_eq!(old, new, "{name} is frozen, bit for bit");
        }
    }
    // 18 held-out pictures of 3 classes: a model that ignored them would get 6 right on average,
    // and 15 or more with probability 1.9e-5 (binomial, p = 1/3).
    assert!(correct >= 15, "{correct} of {held_out} held-out pictures right");
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn whole_model_fine_tuning_moves_every_layer_and_learns_the_classes() {
    let root = picture_folder("whole");
    let (correct, held_out, before, after) = fine_tune(&root, Trainable::Whole);
    let changed = tensors(&before).iter().zip(&tensors(&after)).filter(|((_, old), (_, new))| old != new).count();
    assert_eq!(changed, tensors(&before).len(), "every tensor moves");
    assert!(correct >= 15, "{correct} of {held_out} held-out pictures right (the same bound as head-only)");
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn train_fine_tunes_an_image_folder_into_a_weight_file_that_names_its_classes() {
    let root = picture_folder("cli");
    let out = root.join("pets.safetensors");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_train"))
        .args(["--image-folder".as_ref(), root.as_os_str(), "--epochs".as_ref(), "2".as_ref(), "--out".as_ref(), out.as_os_str()])
        .output()
        .expect("train runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("grass 30, sky 30, stripes 30 (72 to train on, 18 held out)"), "{stdout}");
    assert!(stdout.contains("skipped   2 files"), "{stdout}");
    assert!(stdout.contains("held out  sky:"), "{stdout}");

    let info = inspect_safetensors(&std::fs::read(&out).expect("the weights are written")).expect("they read back");
    assert_eq!(info.class_names, ["grass", "sky", "stripes"]);
    assert_eq!(info.config.classes, 3);
    let base: serde_json::Value = serde_json::from_str(&info.base_json).expect("the base is described");
    assert_eq!(base["file"], "vit-tiny.safetensors");
    assert_eq!(base["class_names"][0], "airplane");
    let recipe: TrainingRecipe = serde_json::from_str(&info.recipe_json).unwrap();
    assert_eq!((recipe.trainable, recipe.epochs), (Trainable::Head, 2));

    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_train"))
        .args(["--image-folder".as_ref(), root.join("sky").as_os_str()])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains("there are no class folders: the 30 files found"), "{message}");
    let _ = std::fs::remove_dir_all(root);
}

/// `train --checkpoint`, stopped after an epoch and rerun with the same flags, continues where it
/// stopped and ends with the figures of a run that was never stopped; a checkpoint of another
/// recipe is refused with a message.
#[test]
fn train_continues_a_stopped_run_from_its_checkpoint_as_if_it_never_stopped() {
    use std::ffi::OsStr;
    use std::process::{Command, Output};
    use vit_web::training::Checkpoint;
    let root = picture_folder("resume");
    let checkpoint = root.join("run.vitckpt");
    let train = |extra: &[&OsStr]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_train"));
        command.args(["--image-folder".as_ref(), root.as_os_str(), "--fine-tune".as_ref(), "whole".as_ref(), "--epochs".as_ref(), "4".as_ref()]);
        command.args(extra);
        command
    };
    // Per epoch: train loss and accuracy, test loss and accuracy (not the timings).
    let figures = |output: &Output| -> Vec<[serde_json::Value; 4]> {
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
        let history = stdout.lines().find_map(|line| line.strip_prefix("history   ")).expect("the history is printed");
        let epochs: Vec<serde_json::Value> = serde_json::from_str(history).unwrap();
        epochs.iter().map(|epoch| ["train_loss", "train_accuracy", "test_loss", "test_accuracy"].map(|key| epoch[key].clone())).collect()
    };
    let straight = figures(&train(&[]).output().unwrap());
    assert_eq!(straight.len(), 4);

    // Stopped (killed) as soon as its first checkpoint is in place.
    let mut stopped = train(&["--checkpoint".as_ref(), checkpoint.as_os_str()]).stdout(std::process::Stdio::null()).spawn().unwrap();
    while !checkpoint.exists() {
        assert!(stopped.try_wait().unwrap().is_none(), "the run ended before writing a checkpoint");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    stopped.kill().unwrap();
    stopped.wait().unwrap();
    let saved = Checkpoint::decode(&std::fs::read(&checkpoint).unwrap()).expect("the checkpoint is whole");
    assert!(saved.epochs_done < 4, "stopped before the end (after epoch {})", saved.epochs_done);

    let resumed = train(&["--checkpoint".as_ref(), checkpoint.as_os_str()]).output().unwrap();
    let stdout = String::from_utf8_lossy(&resumed.stdout);
    assert!(stdout.contains(&format!("after epoch {} of 4", saved.epochs_done)), "{stdout}");
    assert_eq!(figures(&resumed), straight, "the same weights, batches, schedule and AdamW moments");

    let other = train(&["--checkpoint".as_ref(), checkpoint.as_os_str(), "--lr".as_ref(), "3e-3".as_ref()]).output().unwrap();
    assert!(!other.status.success());
    let message = String::from_utf8_lossy(&other.stderr);
    assert!(message.contains("holds a run of another recipe"), "{message}");
    let _ = std::fs::remove_dir_all(root);
}
