//! `evaluate`: what weight files predict, natively: test accuracy on CIFAR-10's 10,000 test
//! images, as the page predicts (one pass) and averaged over each image and its mirror image;
//! and, for photographs, the three likeliest classes both ways.
//!
//! ```text
//! cargo run --release --bin evaluate -- --archive ../shared/data/cifar-10-binary.tar.gz \
//!     --weights weights/vit-tiny.safetensors [--weights other.safetensors] [--photo cat.jpg]
//! ```

#[cfg(not(target_family = "wasm"))]
fn main() {
    use clap::Parser;
    vit_web::ops::cpu::allocator::keep_freed_blocks();
    vit_web::cli::exit_on_error("evaluate", native::run(native::Arguments::parse()));
}

/// A native command; the wasm build only needs it to compile.
#[cfg(target_family = "wasm")]
fn main() {}

#[cfg(not(target_family = "wasm"))]
mod native {
    use std::path::{Path, PathBuf};

    use burn::tensor::activation::softmax;
    use burn::tensor::Device;
    use clap::Parser;
    use vit_web::cli::ArchiveArg;
    use vit_web::data::cifar::read_archive_file;
    use vit_web::data::preprocess::normalize_rgba;
    use vit_web::inference::{Prediction, class_scores, images_tensor, ranked};
    use vit_web::model::VisionTransformer;
    use vit_web::training::evaluate_predicting;
    use vit_web::viz::resize::photo_to_input;
    use vit_web::weights::{WeightFileInfo, from_safetensors};

    /// Test accuracy of weight files, plain and mirror-averaged, and their predictions for photos.
    #[derive(Debug, Parser)]
    #[command(name = "evaluate", version)]
    pub struct Arguments {
        /// A weight file (safetensors) to evaluate; repeat for several
        #[arg(long, value_name = "FILE", required = true)]
        weights: Vec<PathBuf>,
        /// A photograph (JPEG or PNG) to predict, as the page does: its centred square, averaged
        /// down to 32×32; repeat for several
        #[arg(long, value_name = "FILE")]
        photo: Vec<PathBuf>,
        #[command(flatten)]
        archive: ArchiveArg,
    }

    const PREDICTIONS: [(Prediction, &str); 2] = [(Prediction::Plain, "one pass"), (Prediction::MirrorAveraged, "with mirror")];

    pub fn run(arguments: Arguments) -> Result<(), String> {
        let device = Device::flex();
        let models = arguments
            .weights
            .iter()
            .map(|path| {
                let bytes = std::fs::read(path).map_err(|error| format!("{}: {error}", path.display()))?;
                from_safetensors(&bytes, &device).map_err(|error| format!("{}: {error}", path.display()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let photos = arguments.photo.iter().map(|path| read_photo(path)).collect::<Result<Vec<_>, _>>()?;
        let test = match &arguments.archive.archive {
            Some(archive) => Some(read_archive_file(archive, |_| {}).map_err(|error| error.to_string())?.test),
            None => None,
        };
        for (path, (model, info)) in arguments.weights.iter().zip(&models) {
            println!("{}", path.display());
            if let Some(test) = &test {
                for (prediction, name) in PREDICTIONS {
                    let evaluation = pollster::block_on(evaluate_predicting(model, test, prediction, |_, _| {}))
                        .map_err(|error| error.to_string())?;
                    println!("  test accuracy, {name:<11} {:.2} % ({} images)", 100.0 * evaluation.accuracy, test.len());
                }
            }
            for (photo, input) in arguments.photo.iter().zip(&photos) {
                let name = photo.file_name().map_or_else(|| photo.display().to_string(), |name| name.to_string_lossy().into_owned());
                for (prediction, how) in PREDICTIONS {
                    println!("  {name} ({how}): {}", top_three(model, info, input, prediction, &device)?);
                }
            }
        }
        Ok(())
    }

    /// The photo's centred square at 32×32, RGBA.
    fn read_photo(path: &Path) -> Result<Vec<u8>, String> {
        let image = image::open(path).map_err(|error| format!("{}: {error}", path.display()))?.to_rgba8();
        let (width, height) = (image.width() as usize, image.height() as usize);
        photo_to_input(image.as_raw(), width, height, 32).map_err(|error| format!("{}: {error}", path.display()))
    }

    fn top_three(model: &VisionTransformer, info: &WeightFileInfo, rgba: &[u8], prediction: Prediction, device: &Device) -> Result<String, String> {
        let config = &info.config;
        let images = images_tensor(normalize_rgba(rgba, config.image_size * config.image_size), 1, config, device);
        let probabilities = softmax(class_scores(model, images, prediction), 1)
            .into_data()
            .try_to_vec::<f32>()
            .map_err(|error| format!("{error:?}"))?;
        let names: Vec<&str> = info.class_names.iter().map(String::as_str).collect();
        let top = ranked(&probabilities, &names);
        Ok(top.iter().take(3).map(|class| format!("{} {:.1} %", class.name, 100.0 * class.probability)).collect::<Vec<_>>().join(", "))
    }
}
