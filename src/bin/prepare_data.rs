//! `prepare-data`: turns CIFAR-10's binary archive into the compact asset the page downloads.
//!
//! ```text
//! cargo run --release --bin prepare-data -- --archive ../shared/data/cifar-10-binary.tar.gz --out www/data
//! ```
//! Writes `OUT/cifar10-20k.vitdata` (named for `--count`) and `OUT/manifest.json`, and prints
//! what went in and out; shows progress while it reads and encodes on a terminal.

#[cfg(not(target_family = "wasm"))]
fn main() {
    use clap::Parser;
    vit_web::cli::exit_on_error("prepare-data", native::run(native::Arguments::parse()));
}

/// A native command; the wasm build only needs it to compile.
#[cfg(target_family = "wasm")]
fn main() {}

#[cfg(not(target_family = "wasm"))]
mod native {
    use std::path::PathBuf;
    use std::time::Instant;

    use clap::Parser;
    use vit_web::cli::{ArchiveArg, SubsetArg, counter};
    use vit_web::data::asset::{DEFAULT_QUALITY, decode_asset, encode_asset_with_progress, psnr};
    use vit_web::data::cifar::decode_archive_from_reader;
    use vit_web::data::error::thousands;
    use vit_web::data::manifest::{DatasetManifest, sha256_hex};
    use vit_web::data::subset::SubsetRule;

    /// What the page may download for 30,000 images.
    const PAGE_BUDGET_BYTES: usize = 30_000_000;

    /// Writes the page's prepared dataset: JPEG mosaics of a CIFAR-10 subset and its manifest.
    #[derive(Debug, Parser)]
    #[command(name = "prepare-data", version)]
    pub struct Arguments {
        #[command(flatten)]
        archive: ArchiveArg,
        /// The folder the asset and its manifest.json go to
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Which training images
        #[arg(long, value_enum, default_value_t = SubsetArg::First)]
        subset: SubsetArg,
        /// Seeds a balanced subset's draw
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// How many training images (a multiple of 10 for a balanced subset)
        #[arg(long, default_value_t = 20_000)]
        count: usize,
        /// How many test images (the first N)
        #[arg(long, default_value_t = 10_000)]
        test_count: usize,
        /// JPEG quality of the mosaics
        #[arg(long, default_value_t = DEFAULT_QUALITY, value_parser = clap::value_parser!(u8).range(1..=100))]
        quality: u8,
    }

    pub fn run(arguments: Arguments) -> Result<(), String> {
        let Arguments { archive, out, subset, seed, count, test_count, quality } = arguments;
        let archive = archive.archive.ok_or("say where the archive is (--archive or CIFAR10_ARCHIVE)")?;
        if subset == SubsetArg::Balanced && count % 10 != 0 {
            return Err(format!("a balanced subset needs a multiple of 10 images, not {count}"));
        }
        let rule = subset.rule(count, seed);

        let started = Instant::now();
        let bytes = std::fs::read(&archive).map_err(|error| format!("{}: {error}", archive.display()))?;
        println!("archive   {} ({} bytes)", archive.display(), thousands(bytes.len() as u64));
        println!("sha256    {}", sha256_hex(&bytes));
        let name = archive.display().to_string();
        let decoding = counter(bytes.len() as u64, "bytes").with_prefix("decoding");
        let dataset = decode_archive_from_reader(&bytes[..], &name, Some(bytes.len() as u64), |progress| {
            decoding.set_position(progress.bytes_read)
        })
        .map_err(|error| error.to_string())?;
        decoding.finish_and_clear();
        drop(bytes);
        println!(
            "records   {} training, {} test (decoded in {:.1} s)",
            thousands(dataset.train.len() as u64),
            thousands(dataset.test.len() as u64),
            started.elapsed().as_secs_f64()
        );
        println!("classes   training {:?}", dataset.train.class_counts());
        println!("          test     {:?}", dataset.test.class_counts());

        let train = rule.apply(&dataset.train).map_err(|error| error.to_string())?;
        let test = SubsetRule::First(test_count.min(dataset.test.len())).apply(&dataset.test).map_err(|error| error.to_string())?;
        println!("subset    {rule:?}: {} images, per class {:?}", thousands(train.len() as u64), train.class_counts());

        let started = Instant::now();
        let encoding = counter((train.len() + test.len()) as u64, "images").with_prefix("encoding");
        let asset = encode_asset_with_progress(&train, &test, quality, |done, _| encoding.set_position(done as u64));
        encoding.finish_and_clear();
        let encoded_in = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let (decoded_train, decoded_test) = decode_asset(&asset).map_err(|error| error.to_string())?;
        let decoded_in = started.elapsed().as_secs_f64();
        let images = (train.len() + test.len()) as u64;
        let raw = images * 3_072;
        println!(
            "asset     {} bytes ({:.1} MB; raw pixels {:.1} MB, {:.1}×), {} bytes per image, JPEG quality {quality}",
            thousands(asset.len() as u64),
            asset.len() as f64 / 1e6,
            raw as f64 / 1e6,
            raw as f64 / asset.len() as f64,
            thousands(asset.len() as u64 / images.max(1)),
        );
        println!(
            "fidelity  PSNR {:.2} dB training, {:.2} dB test (encoded in {encoded_in:.1} s, decoded natively in {decoded_in:.2} s)",
            psnr(&train.pixels, &decoded_train.pixels),
            psnr(&test.pixels, &decoded_test.pixels),
        );
        println!("sha256    {} (asset)", sha256_hex(&asset));
        if asset.len() > PAGE_BUDGET_BYTES {
            println!("warning   over the page's {} MB budget: try a lower --quality", PAGE_BUDGET_BYTES / 1_000_000);
        }

        std::fs::create_dir_all(&out).map_err(|error| format!("{}: {error}", out.display()))?;
        let size = if count % 1000 == 0 { format!("{}k", count / 1000) } else { count.to_string() };
        let balanced = if subset == SubsetArg::Balanced { format!("-balanced-{seed}") } else { String::new() };
        let path = out.join(format!("cifar10-{size}{balanced}.vitdata"));
        std::fs::write(&path, &asset).map_err(|error| format!("{}: {error}", path.display()))?;
        println!("wrote     {}", path.display());
        let manifest = DatasetManifest {
            file: path.file_name().expect("a file name").to_string_lossy().into_owned(),
            sha256: sha256_hex(&asset),
            bytes: asset.len() as u64,
            train_images: train.len(),
            test_images: test.len(),
        };
        let manifest_path = out.join("manifest.json");
        let json = serde_json::to_string_pretty(&manifest).expect("manifests serialise");
        std::fs::write(&manifest_path, json).map_err(|error| format!("{}: {error}", manifest_path.display()))?;
        println!("wrote     {}", manifest_path.display());
        Ok(())
    }
}
