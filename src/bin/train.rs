//! `train`: the native twin of the page's training — same model, data pipeline and epoch loop —
//! on burn's CPU backend. It is how the shipped pretrained weights are made.
//!
//! ```text
//! cargo run --release --bin train -- --archive ../shared/data/cifar-10-binary.tar.gz \
//!     --out weights/vit-tiny.safetensors [--epochs 10] [--batch 256] [--lr 1e-3] [--weight-decay 0.05]
//!     [--warmup 0] [--label-smoothing 0] [--augment flip|heavy|none] [--seed 0] [--preset tiny|small]
//!     [--subset first|balanced] [--train-images 20000] [--test-images 10000] [--metrics PATH.json]
//!     [--backend flex|wgpu]
//! ```
//! `--backend wgpu` trains on the machine's GPU (a build with `--features wgpu`).
//! `--dataset FILE.vitdata` reads the page's prepared dataset instead of the archive (a 15 MB file
//! that travels where the 170 MB archive does not; JPEG quality 90, PSNR 42 dB against it).
//! Prints one line per epoch and, at the end, the per-epoch table as JSON.

#[cfg(not(target_family = "wasm"))]
fn main() {
    vit_web::ops::cpu::allocator::keep_freed_blocks();
    if let Err(message) = native::run(std::env::args().skip(1).collect()) {
        eprintln!("train: {message}");
        std::process::exit(1);
    }
}

/// A native command; the wasm build only needs it to compile.
#[cfg(target_family = "wasm")]
fn main() {}

#[cfg(not(target_family = "wasm"))]
mod native {
    use std::path::PathBuf;
    use std::time::Instant;

    use vit_web::data::augment::AugmentRecipe;
    use vit_web::data::asset::decode_asset;
    use vit_web::data::cifar::{CifarDataset, read_archive_file};
    use vit_web::data::subset::SubsetRule;
    use vit_web::training::{TrainingRecipe, TrainingSession};
    use vit_web::weights::to_safetensors;

    const USAGE: &str = "usage: train (--archive PATH | --dataset FILE.vitdata) [--out FILE.safetensors] [--epochs N] [--batch N] [--lr X] \
        [--weight-decay X] [--warmup N] [--label-smoothing X] [--augment flip|heavy|none] [--seed N] \
        [--preset tiny|small] [--subset first|balanced] [--train-images N] [--test-images N] [--metrics FILE.json] [--backend flex|wgpu]";

    pub fn run(arguments: Vec<String>) -> Result<(), String> {
        let mut recipe = TrainingRecipe::default();
        let mut archive = std::env::var_os("CIFAR10_ARCHIVE").map(PathBuf::from);
        let mut prepared = None::<PathBuf>;
        let (mut out, mut metrics_path, mut balanced) = (None::<PathBuf>, None::<PathBuf>, false);
        let (mut train_images, mut test_images) = (20_000usize, 10_000usize);
        let mut backend = "flex".to_string();
        let mut arguments = arguments.into_iter();
        while let Some(flag) = arguments.next() {
            let mut value = || arguments.next().ok_or(format!("{flag} needs a value\n{USAGE}"));
            match flag.as_str() {
                "--archive" => archive = Some(PathBuf::from(value()?)),
                "--dataset" => prepared = Some(PathBuf::from(value()?)),
                "--out" => out = Some(PathBuf::from(value()?)),
                "--metrics" => metrics_path = Some(PathBuf::from(value()?)),
                "--epochs" => recipe.epochs = parse(&flag, &value()?)?,
                "--batch" => recipe.batch_size = parse(&flag, &value()?)?,
                "--lr" => recipe.optimizer.learning_rate = parse(&flag, &value()?)?,
                "--weight-decay" => recipe.optimizer.weight_decay = parse(&flag, &value()?)?,
                "--warmup" => recipe.optimizer.warmup_steps = parse(&flag, &value()?)?,
                "--label-smoothing" => recipe.optimizer.label_smoothing = parse(&flag, &value()?)?,
                "--seed" => recipe.seed = parse(&flag, &value()?)?,
                "--preset" => recipe.preset = value()?.parse()?,
                "--augment" => {
                    recipe.augment = match value()?.as_str() {
                        "none" => AugmentRecipe::None,
                        "flip" => AugmentRecipe::Flip,
                        "heavy" => AugmentRecipe::Heavy,
                        other => return Err(format!("--augment is none, flip or heavy, not {other}")),
                    }
                }
                "--subset" => match value()?.as_str() {
                    "first" => balanced = false,
                    "balanced" => balanced = true,
                    other => return Err(format!("--subset is first or balanced, not {other}")),
                },
                "--backend" => backend = value()?,
                "--train-images" => train_images = parse(&flag, &value()?)?,
                "--test-images" => test_images = parse(&flag, &value()?)?,
                "--help" | "-h" => return Err(USAGE.into()),
                other => return Err(format!("unknown argument {other}\n{USAGE}")),
            }
        }
        recipe.validate().map_err(|error| error.to_string())?;
        let dataset = match (prepared, archive) {
            (Some(path), _) => {
                let bytes = std::fs::read(&path).map_err(|error| format!("{}: {error}", path.display()))?;
                let (train, test) = decode_asset(&bytes).map_err(|error| error.to_string())?;
                CifarDataset { train, test }
            }
            (None, Some(archive)) => read_archive_file(&archive, |_| {}).map_err(|error| error.to_string())?,
            (None, None) => return Err(format!("say where the data is (--archive, CIFAR10_ARCHIVE or --dataset)\n{USAGE}")),
        };
        let rule = if balanced {
            SubsetRule::Balanced { per_class: train_images / 10, seed: recipe.seed }
        } else {
            SubsetRule::First(train_images)
        };
        let train = rule.apply(&dataset.train).map_err(|error| error.to_string())?;
        let test = SubsetRule::First(test_images.min(dataset.test.len())).apply(&dataset.test).map_err(|error| error.to_string())?;
        println!("data      {} training images ({rule:?}), {} test images", train.len(), test.len());
        println!("recipe    {}", serde_json::to_string(&recipe).expect("recipes serialise"));
        println!("backend   {backend}");

        let device = vit_web::compute::native_device(&backend)?.autodiff();
        device.seed(recipe.seed);
        let config = recipe.preset.config();
        let mut session = TrainingSession::new(recipe.clone(), config.init(&device), train, test, &device)
            .map_err(|error| error.to_string())?
            .with_log_every(20);
        println!("epoch  train loss  train acc  test loss  test acc   img/s   seconds");
        while !session.is_done() {
            let started = Instant::now();
            while !session.epoch_finished() {
                pollster::block_on(session.step()).map_err(|error| error.to_string())?;
            }
            let seconds = started.elapsed().as_secs_f64();
            let metrics = pollster::block_on(session.finish_epoch(seconds)).map_err(|error| error.to_string())?;
            let [epoch, train_loss, train_accuracy, test_loss, test_accuracy, speed] = metrics.cells();
            println!("{epoch:>5}  {train_loss:>10}  {train_accuracy:>9}  {test_loss:>9}  {test_accuracy:>8}  {speed:>6}  {seconds:>8.1}");
            if let Some(usage) = device.memory_pool_usage() {
                println!("       GPU memory: {} bytes reserved, {} in use", usage.bytes_reserved, usage.bytes_in_use);
            }
            // Written after every epoch, so an interrupted run still leaves its last good weights.
            if let Some(path) = &out {
                save(path, &session)?;
            }
        }
        let history = session.history().clone();
        let history_json = serde_json::to_string(&history).expect("metrics serialise");
        println!("history   {}", serde_json::to_string(&history.epochs).expect("metrics serialise"));
        if let Some(path) = metrics_path {
            std::fs::write(&path, &history_json).map_err(|error| format!("{}: {error}", path.display()))?;
        }
        Ok(())
    }

    fn save(path: &std::path::Path, session: &TrainingSession) -> Result<(), String> {
        let bytes = to_safetensors(session.last_good_model(), &session.weight_info()).map_err(|error| error.to_string())?;
        if let Some(folder) = path.parent().filter(|folder| !folder.as_os_str().is_empty()) {
            std::fs::create_dir_all(folder).map_err(|error| format!("{}: {error}", folder.display()))?;
        }
        std::fs::write(path, bytes).map_err(|error| format!("{}: {error}", path.display()))
    }

    fn parse<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, String> {
        value.parse().map_err(|_| format!("{flag} takes a number, not {value}"))
    }
}
