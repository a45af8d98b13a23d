//! `train`: the native twin of the page's training — same model, data pipeline and epoch loop —
//! on burn's CPU backend (or the machine's GPU with `--backend wgpu`). It is how the shipped
//! pretrained weights are made.
//!
//! ```text
//! cargo run --release --bin train -- --archive ../shared/data/cifar-10-binary.tar.gz \
//!     --out weights/vit-tiny.safetensors [recipe flags: see --help]
//! ```
//! Shows a progress bar per epoch on a terminal, prints one line per epoch and, at the end, the
//! per-epoch table as JSON. With `--checkpoint FILE` a run survives being stopped: rerun with the
//! same flags, it continues after its last finished epoch.
//!
//! With `--image-folder DIR` it fine-tunes instead, as the page does with a person's own classes:
//! a folder per class (torchvision's ImageFolder layout), a share of each held out to test on,
//! the pretrained weights (`--from`) with a new head, the head alone or the whole model
//! (`--fine-tune`). The weight file names the classes and the base model, and opens in the page.
//!
//! ```text
//! cargo run --release --bin train -- --image-folder ~/pictures/pets --out pets.safetensors
//! ```

#[cfg(not(target_family = "wasm"))]
fn main() {
    use clap::{CommandFactory, Parser};
    vit_web::ops::cpu::allocator::keep_freed_blocks();
    let arguments = native::Arguments::parse();
    let recipe = arguments.recipe().unwrap_or_else(|message| {
        native::Arguments::command().error(clap::error::ErrorKind::ValueValidation, message).exit()
    });
    vit_web::cli::exit_on_error("train", native::run(arguments, recipe));
}

/// A native command; the wasm build only needs it to compile.
#[cfg(target_family = "wasm")]
fn main() {}

#[cfg(not(target_family = "wasm"))]
mod native {
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    use clap::Parser;
    use vit_web::cli::{ArchiveArg, BackendArg, EpochProgress, RecipeArgs, SubsetArg, counter};
    use vit_web::data::asset::decode_asset;
    use vit_web::data::cifar::{CifarDataset, decode_archive};
    use vit_web::data::manifest::sha256_hex;
    use vit_web::data::subset::SubsetRule;
    use burn::tensor::Device;
    use vit_web::data::ImageSet;
    use vit_web::data::image_folder::{DEFAULT_HELD_OUT, read_image_folder, split_held_out};
    use vit_web::model::VisionTransformer;
    use vit_web::training::{Checkpoint, Trainable, TrainingRecipe, TrainingSession, fresh_model};
    use vit_web::viz::confusion::ConfusionMatrix;
    use vit_web::weights::{from_safetensors, to_safetensors};

    /// Trains the ViT natively with the page's epoch loop and writes its weights.
    #[derive(Debug, Parser)]
    #[command(name = "train", version)]
    // Not exclusive: an archive named by CIFAR10_ARCHIVE in the environment must not refuse an
    // explicit --dataset, which wins.
    #[command(group = clap::ArgGroup::new("data").required(true).multiple(true).args(["archive", "dataset", "image_folder"]))]
    pub struct Arguments {
        #[command(flatten)]
        archive: ArchiveArg,
        /// The page's prepared dataset (a .vitdata file) instead of the archive: 15 MB that
        /// travel where the 170 MB archive does not (JPEG quality 90, PSNR 42 dB against it).
        /// Used when both are given
        #[arg(long, value_name = "FILE")]
        dataset: Option<PathBuf>,
        /// Your own pictures, one sub-folder per class named for it (JPEG, PNG or WebP, any
        /// size): fine-tunes the --from model on them instead of training on CIFAR-10
        #[arg(long, value_name = "DIR")]
        image_folder: Option<PathBuf>,
        /// The weights fine-tuning starts from
        #[arg(long, value_name = "FILE", default_value = "weights/vit-tiny.safetensors")]
        from: PathBuf,
        /// What fine-tuning trains
        #[arg(long, value_enum, default_value_t = Trainable::Head)]
        fine_tune: Trainable,
        /// The share of each class's pictures held out to test on (rounded; at least one)
        #[arg(long, value_name = "SHARE", default_value_t = DEFAULT_HELD_OUT)]
        held_out: f64,
        /// Where the weights go (safetensors), rewritten after every epoch
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// The run's checkpoint (weights, AdamW's state, progress and metrics; the page's format),
        /// rewritten after every epoch. If the file exists, the run continues from it: an
        /// interrupted run, rerun with the same flags, picks up after its last finished epoch
        #[arg(long, value_name = "FILE")]
        checkpoint: Option<PathBuf>,
        /// The recipe and the per-epoch (and logged steps') metrics as JSON, written at the end
        #[arg(long, value_name = "FILE")]
        metrics: Option<PathBuf>,
        /// Images per optimiser step [the recipe's]
        #[arg(long)]
        batch: Option<usize>,
        /// Which training images
        #[arg(long, value_enum, default_value_t = SubsetArg::First)]
        subset: SubsetArg,
        /// How many training images
        #[arg(long, default_value_t = 20_000)]
        train_images: usize,
        /// How many test images (the first N)
        #[arg(long, default_value_t = 10_000)]
        test_images: usize,
        #[command(flatten)]
        backend: BackendArg,
        #[command(flatten)]
        recipe: RecipeArgs,
    }

    impl Arguments {
        pub fn recipe(&self) -> Result<TrainingRecipe, String> {
            match &self.image_folder {
                None => self.recipe.recipe(self.batch),
                Some(_) => {
                    let recipe = self.recipe.recipe_from(TrainingRecipe::fine_tune(self.fine_tune), self.batch)?;
                    Ok(TrainingRecipe { trainable: self.fine_tune, ..recipe })
                }
            }
        }
    }

    /// What a run trains and tests on, and the model it starts from.
    struct Start {
        train: ImageSet,
        test: ImageSet,
        /// `None`: a fresh model of the recipe's preset, built only when no checkpoint continues.
        model: Option<VisionTransformer>,
        recipe: TrainingRecipe,
        class_names: Vec<String>,
        data_json: String,
        base_json: String,
    }

    fn read(path: &Path) -> Result<Vec<u8>, String> {
        std::fs::read(path).map_err(|error| format!("{}: {error}", path.display()))
    }

    pub fn run(arguments: Arguments, recipe: TrainingRecipe) -> Result<(), String> {
        let device = vit_web::compute::native_device(arguments.backend.backend)?.autodiff();
        device.seed(recipe.seed);
        let start = match &arguments.image_folder {
            Some(folder) => fine_tuning_start(&arguments, folder, recipe, &device)?,
            None => cifar_start(&arguments, recipe)?,
        };
        let Start { train, test, model, recipe, class_names, data_json, base_json } = start;
        println!("recipe    {}", serde_json::to_string(&recipe).expect("recipes serialise"));
        println!("backend   {}", arguments.backend.backend.name());
        let test_labels = test.labels.clone();
        let saved = match &arguments.checkpoint {
            Some(path) if path.exists() => Some((path, read_checkpoint(path, &recipe)?)),
            _ => None,
        };
        let mut session = match saved {
            Some((path, checkpoint)) => {
                println!("resumed   {} after epoch {} of {}", path.display(), checkpoint.epochs_done, recipe.epochs);
                TrainingSession::resume(&checkpoint, train, test, &device).map_err(|error| format!("{}: {error}", path.display()))?
            }
            None => {
                let model = model.unwrap_or_else(|| fresh_model(&recipe.preset.config(), recipe.init, recipe.seed, &device));
                TrainingSession::new(recipe.clone(), model, train, test, &device)
                    .map_err(|error| error.to_string())?
                    .with_data_description(data_json)
                    .with_class_names(class_names.clone())
                    .with_base_description(base_json)
            }
        }
        .with_log_every(20);
        println!("epoch  train loss  train acc  test loss  test acc   img/s   seconds");
        while !session.is_done() {
            let started = Instant::now();
            let mut progress = EpochProgress::new(session.epoch() + 1, recipe.epochs, session.batches_per_epoch());
            while !session.epoch_finished() {
                let report = pollster::block_on(session.step()).map_err(|error| error.to_string())?;
                progress.step(&report);
            }
            progress.finish();
            let seconds = started.elapsed().as_secs_f64();
            let testing = counter(session.test_images() as u64, "test images").with_prefix(format!("epoch {} test", session.epoch() + 1));
            let metrics = pollster::block_on(session.finish_epoch_with_progress(seconds, |done, _| testing.set_position(done as u64)))
                .map_err(|error| error.to_string())?;
            testing.finish_and_clear();
            let [epoch, train_loss, train_accuracy, test_loss, test_accuracy, speed] = metrics.cells();
            println!("{epoch:>5}  {train_loss:>10}  {train_accuracy:>9}  {test_loss:>9}  {test_accuracy:>8}  {speed:>6}  {seconds:>8.1}");
            if let Some(usage) = device.memory_pool_usage() {
                println!("       GPU memory: {} bytes reserved, {} in use", usage.bytes_reserved, usage.bytes_in_use);
            }
            // Written after every epoch, so an interrupted run still leaves its last good weights.
            if let Some(path) = &arguments.out {
                save(path, &session)?;
            }
            if let Some(path) = &arguments.checkpoint {
                let checkpoint = pollster::block_on(session.checkpoint(true)).map_err(|error| error.to_string())?;
                write_atomically(path, &checkpoint.encode())?;
            }
        }
        if arguments.image_folder.is_some()
            && let Some(evaluation) = session.last_evaluation()
        {
            let matrix = ConfusionMatrix::new(&test_labels, &evaluation.predictions, class_names.len());
            for (class, (name, accuracy)) in class_names.iter().zip(matrix.per_class_accuracy()).enumerate() {
                println!("held out  {name}: {:.0} % of {} right", 100.0 * accuracy, matrix.row_total(class));
            }
        }
        let history = session.history().clone();
        println!("history   {}", serde_json::to_string(&history.epochs).expect("metrics serialise"));
        if let Some(path) = &arguments.metrics {
            let json = serde_json::json!({ "recipe": recipe, "epochs": history.epochs, "steps": history.steps }).to_string();
            std::fs::write(path, json).map_err(|error| format!("{}: {error}", path.display()))?;
        }
        Ok(())
    }

    /// A person's pictures, split per class, and the base model with a new head for them.
    fn fine_tuning_start(arguments: &Arguments, folder: &Path, recipe: TrainingRecipe, device: &Device) -> Result<Start, String> {
        let collection = read_image_folder(folder)?;
        collection.check().map_err(|error| format!("{}: {error}", folder.display()))?;
        let (train, test) = split_held_out(&collection.images, arguments.held_out, recipe.seed).map_err(|error| error.to_string())?;
        let counts: Vec<String> = collection.class_names.iter().zip(collection.counts()).map(|(name, count)| format!("{name} {count}")).collect();
        println!("data      {}: {} ({} to train on, {} held out)", folder.display(), counts.join(", "), train.len(), test.len());
        if !collection.skipped.is_empty() {
            println!("skipped   {} files that are not pictures in a class folder, e.g. {}", collection.skipped.len(), collection.skipped[0]);
        }
        let bytes = read(&arguments.from)?;
        let (base, info) = from_safetensors(&bytes, device).map_err(|error| format!("{}: {error}", arguments.from.display()))?;
        let preset = info.preset.ok_or_else(|| format!("{}: fine-tuning starts from a tiny or small preset's weights", arguments.from.display()))?;
        println!("base      {} ({}, {} classes)", arguments.from.display(), preset.name(), info.config.classes);
        let base_json = serde_json::json!({
            "file": arguments.from.file_name().map(|name| name.to_string_lossy()),
            "sha256": sha256_hex(&bytes),
            "class_names": info.class_names,
        });
        let data_json = serde_json::json!({
            "image_folder": folder.file_name().map(|name| name.to_string_lossy()),
            "held_out": arguments.held_out,
            "train": train.len(),
            "test": test.len(),
        });
        Ok(Start {
            model: Some(base.with_new_head(collection.class_names.len())),
            recipe: TrainingRecipe { preset, ..recipe },
            class_names: collection.class_names,
            data_json: data_json.to_string(),
            base_json: base_json.to_string(),
            train,
            test,
        })
    }

    /// CIFAR-10's archive or the prepared dataset; the model starts fresh.
    fn cifar_start(arguments: &Arguments, recipe: TrainingRecipe) -> Result<Start, String> {
        let (dataset, source) = match (&arguments.dataset, &arguments.archive.archive) {
            (Some(path), _) => {
                let bytes = read(path)?;
                let (train, test) = decode_asset(&bytes).map_err(|error| error.to_string())?;
                (CifarDataset { train, test }, (path, sha256_hex(&bytes)))
            }
            (None, Some(archive)) => {
                let bytes = read(archive)?;
                let dataset = decode_archive(&bytes).map_err(|error| format!("{}: {error}", archive.display()))?;
                (dataset, (archive, sha256_hex(&bytes)))
            }
            (None, None) => unreachable!("clap requires --archive, --dataset or --image-folder"),
        };
        let rule = arguments.subset.rule(arguments.train_images, recipe.seed);
        let train = rule.apply(&dataset.train).map_err(|error| error.to_string())?;
        let test = SubsetRule::First(arguments.test_images.min(dataset.test.len()))
            .apply(&dataset.test)
            .map_err(|error| error.to_string())?;
        println!("data      {} training images ({rule:?}), {} test images", train.len(), test.len());
        let data_json = serde_json::json!({
            "file": source.0.file_name().map(|name| name.to_string_lossy()),
            "sha256": source.1,
            "train": format!("{rule:?}"),
            "test": format!("first {}", test.len()),
        });
        Ok(Start {
            model: None,
            recipe,
            class_names: Vec::new(),
            data_json: data_json.to_string(),
            base_json: String::new(),
            train,
            test,
        })
    }

    /// A checkpoint this run can continue from: one of the same recipe, which the flags give.
    fn read_checkpoint(path: &Path, recipe: &TrainingRecipe) -> Result<Checkpoint, String> {
        let checkpoint = Checkpoint::decode(&read(path)?).map_err(|error| format!("{}: {error}", path.display()))?;
        if checkpoint.recipe != *recipe {
            return Err(format!(
                "{} holds a run of another recipe ({}): give that run's flags to continue it, or another --checkpoint file",
                path.display(),
                serde_json::to_string(&checkpoint.recipe).expect("recipes serialise")
            ));
        }
        Ok(checkpoint)
    }

    fn save(path: &Path, session: &TrainingSession) -> Result<(), String> {
        let bytes = to_safetensors(session.last_good_model(), &session.weight_info()).map_err(|error| error.to_string())?;
        write_atomically(path, &bytes)
    }

    /// Writes beside `path` and renames over it, so an interruption never leaves half a file where
    /// the last good one was.
    fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
        if let Some(folder) = path.parent().filter(|folder| !folder.as_os_str().is_empty()) {
            std::fs::create_dir_all(folder).map_err(|error| format!("{}: {error}", folder.display()))?;
        }
        let mut partial = path.as_os_str().to_owned();
        partial.push(".part");
        std::fs::write(&partial, bytes).map_err(|error| format!("{}: {error}", path.display()))?;
        std::fs::rename(&partial, path).map_err(|error| format!("{}: {error}", path.display()))
    }

    #[cfg(test)]
    mod tests {
        use super::Arguments;
        use clap::Parser;

        #[test]
        fn a_dataset_is_taken_over_an_archive_from_the_environment() {
            // What `CIFAR10_ARCHIVE=… train --dataset …` parses to: both present, the dataset used.
            let arguments = Arguments::try_parse_from(["train", "--archive", "cifar.tar.gz", "--dataset", "curve.vitdata"]).unwrap();
            assert_eq!(arguments.dataset.as_deref(), Some(std::path::Path::new("curve.vitdata")));
            if std::env::var_os("CIFAR10_ARCHIVE").is_none() {
                let neither = Arguments::try_parse_from(["train"]).err().unwrap().to_string();
                assert!(neither.contains("--archive") && neither.contains("--dataset"), "{neither}");
            }
        }
    }
}
