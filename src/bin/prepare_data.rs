//! `prepare-data`: turns CIFAR-10's binary archive into the compact asset the page downloads.
//!
//! ```text
//! cargo run --release --bin prepare-data -- --archive ../shared/data/cifar-10-binary.tar.gz --out dist/data
//!     [--subset first|balanced] [--seed N] [--count N] [--test-count N] [--quality Q]
//! ```
//! Writes `OUT/cifar10-20k.vitdata` (named for `--count`) and prints what went in and out.

#[cfg(not(target_family = "wasm"))]
fn main() {
    if let Err(message) = native::run(std::env::args().skip(1).collect()) {
        eprintln!("prepare-data: {message}");
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

    use vit_web::data::asset::{DEFAULT_QUALITY, decode_asset, encode_asset, psnr};
    use vit_web::data::cifar::decode_archive_from_reader;
    use vit_web::data::error::thousands;
    use vit_web::data::manifest::{DatasetManifest, sha256_hex};
    use vit_web::data::subset::SubsetRule;

    /// What the page may download for 30,000 images.
    const PAGE_BUDGET_BYTES: usize = 30_000_000;
    const USAGE: &str = "usage: prepare-data --archive PATH --out DIR [--subset first|balanced] [--seed N] [--count N] [--test-count N] [--quality Q]";

    pub fn run(arguments: Vec<String>) -> Result<(), String> {
        let mut archive = std::env::var_os("CIFAR10_ARCHIVE").map(PathBuf::from);
        let (mut out, mut balanced, mut seed, mut count, mut quality) = (None, false, 0u64, 20_000usize, DEFAULT_QUALITY);
        let mut test_count = 10_000usize;
        let mut arguments = arguments.into_iter();
        while let Some(flag) = arguments.next() {
            let mut value = || arguments.next().ok_or(format!("{flag} needs a value\n{USAGE}"));
            match flag.as_str() {
                "--archive" => archive = Some(PathBuf::from(value()?)),
                "--out" => out = Some(PathBuf::from(value()?)),
                "--subset" => match value()?.as_str() {
                    "first" => balanced = false,
                    "balanced" => balanced = true,
                    other => return Err(format!("--subset is first or balanced, not {other}")),
                },
                "--seed" => seed = parse(&flag, &value()?)?,
                "--count" => count = parse(&flag, &value()?)?,
                "--test-count" => test_count = parse(&flag, &value()?)?,
                "--quality" => quality = parse(&flag, &value()?)?,
                "--help" | "-h" => return Err(USAGE.into()),
                other => return Err(format!("unknown argument {other}\n{USAGE}")),
            }
        }
        let archive = archive.ok_or(format!("say where the archive is (--archive or CIFAR10_ARCHIVE)\n{USAGE}"))?;
        let out = out.ok_or(format!("say where to write the asset (--out DIR)\n{USAGE}"))?;
        if balanced && count % 10 != 0 {
            return Err(format!("a balanced subset needs a multiple of 10 images, not {count}"));
        }
        if !(1..=100).contains(&quality) {
            return Err(format!("--quality is 1–100, not {quality}"));
        }
        let rule = if balanced { SubsetRule::Balanced { per_class: count / 10, seed } } else { SubsetRule::First(count) };

        let started = Instant::now();
        let bytes = std::fs::read(&archive).map_err(|error| format!("{}: {error}", archive.display()))?;
        println!("archive   {} ({} bytes)", archive.display(), thousands(bytes.len() as u64));
        println!("sha256    {}", sha256_hex(&bytes));
        let dataset = decode_archive_from_reader(&bytes[..], &archive.display().to_string(), None, |_| {}).map_err(|error| error.to_string())?;
        drop(bytes);
        println!("records   {} training, {} test (decoded in {:.1} s)", thousands(dataset.train.len() as u64), thousands(dataset.test.len() as u64), started.elapsed().as_secs_f64());
        println!("classes   training {:?}", dataset.train.class_counts());
        println!("          test     {:?}", dataset.test.class_counts());

        let train = rule.apply(&dataset.train).map_err(|error| error.to_string())?;
        let mut dataset = dataset;
        dataset.test = SubsetRule::First(test_count.min(dataset.test.len())).apply(&dataset.test).map_err(|error| error.to_string())?;
        println!("subset    {rule:?}: {} images, per class {:?}", thousands(train.len() as u64), train.class_counts());

        let started = Instant::now();
        let asset = encode_asset(&train, &dataset.test, quality);
        let encoded_in = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let (decoded_train, decoded_test) = decode_asset(&asset).map_err(|error| error.to_string())?;
        let decoded_in = started.elapsed().as_secs_f64();
        let images = (train.len() + dataset.test.len()) as u64;
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
            psnr(&dataset.test.pixels, &decoded_test.pixels),
        );
        println!("sha256    {} (asset)", sha256_hex(&asset));
        if asset.len() > PAGE_BUDGET_BYTES {
            println!("warning   over the page's {} MB budget: try a lower --quality", PAGE_BUDGET_BYTES / 1_000_000);
        }

        std::fs::create_dir_all(&out).map_err(|error| format!("{}: {error}", out.display()))?;
        let size = if count % 1000 == 0 { format!("{}k", count / 1000) } else { count.to_string() };
        let name = format!("cifar10-{size}{}.vitdata", if balanced { format!("-balanced-{seed}") } else { String::new() });
        let path = out.join(name);
        std::fs::write(&path, &asset).map_err(|error| format!("{}: {error}", path.display()))?;
        println!("wrote     {}", path.display());
        let manifest = DatasetManifest {
            file: path.file_name().expect("a file name").to_string_lossy().into_owned(),
            sha256: sha256_hex(&asset),
            bytes: asset.len() as u64,
            train_images: train.len(),
            test_images: dataset.test.len(),
        };
        let manifest_path = out.join("manifest.json");
        let json = serde_json::to_string_pretty(&manifest).expect("manifests serialise");
        std::fs::write(&manifest_path, json).map_err(|error| format!("{}: {error}", manifest_path.display()))?;
        println!("wrote     {}", manifest_path.display());
        Ok(())
    }

    fn parse<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, String> {
        value.parse().map_err(|_| format!("{flag} takes a number, not {value}"))
    }
}
