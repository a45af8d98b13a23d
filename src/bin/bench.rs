//! `bench`: native throughput figures, printed as JSON lines (one per measurement) so runs can
//! be compared. Not a test: nothing here asserts a time.
//!
//! ```text
//! cargo run --profile bench-native --bin bench -- [--archive PATH] [--steps 10] [--untimed 2]
//!     [--backend flex|wgpu] [--batches 64,256] [recipe flags: see --help]
//! ```
//! Prints first what it runs on (CPU model, the vector units burn's and our kernels choose from,
//! threads), then measures, on burn's CPU backend (or the machine's GPU with `--backend wgpu`, in
//! a build with `--features wgpu`): training images/s of the recipe (forward + backward + AdamW,
//! median step; the first step apart, as it compiles the GPU's kernels), the share of a step spent
//! assembling the batch (augmentation + normalisation), the time of the step's main kernels
//! alone at its shapes, inference latency of one image with attention, and the prepared asset's
//! size and decode time when the archive is given. With `--backend wgpu`, `--sections launches`
//! counts a step's GPU launches and `--sections profile` times each one.

#[cfg(not(target_family = "wasm"))]
fn main() {
    use clap::Parser;
    vit_web::ops::cpu::allocator::keep_freed_blocks();
    vit_web::cli::exit_on_error("bench", native::run(native::Arguments::parse()));
}

/// A native command; the wasm build only needs it to compile.
#[cfg(target_family = "wasm")]
fn main() {}

#[cfg(not(target_family = "wasm"))]
mod native {
    use std::time::Instant;

    use burn::tensor::{Device, Distribution, Tensor};
    use clap::Parser;
    use vit_web::cli::{ArchiveArg, BackendArg, RecipeArgs};
    use vit_web::data::ImageSet;
    use vit_web::data::asset::{decode_asset, encode_asset};
    use vit_web::data::augment::AugmentRecipe;
    use vit_web::data::batch::{assemble_batch, batch_tensors};
    use vit_web::data::cifar::read_archive_file;
    use vit_web::data::rng::Pcg32;
    use vit_web::data::subset::SubsetRule;
    use vit_web::model::VitConfig;
    use vit_web::ops::step_kernels::{StepKernel, step_kernels};
    use vit_web::training::{Trainer, TrainingRecipe};

    /// Native throughput figures as JSON lines: training images/s, batch assembly, the step's
    /// main kernels alone, and one prediction's latency. Not a test: nothing here asserts a time.
    #[derive(Debug, Parser)]
    #[command(name = "bench", version)]
    pub struct Arguments {
        #[command(flatten)]
        archive: ArchiveArg,
        /// Timed training steps per batch size (the median is reported)
        #[arg(long, default_value_t = 10)]
        steps: usize,
        /// Steps run before timing starts
        #[arg(long, default_value_t = 2)]
        untimed: usize,
        /// Batch sizes to measure
        #[arg(long, value_delimiter = ',', default_values_t = [64, 256])]
        batches: Vec<usize>,
        /// What to measure
        #[arg(long, value_enum, value_delimiter = ',', default_values_t = [Section::Train, Section::Kernels, Section::Predict])]
        sections: Vec<Section>,
        #[command(flatten)]
        backend: BackendArg,
        #[command(flatten)]
        recipe: RecipeArgs,
    }

    /// A part of the benchmark.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
    pub enum Section {
        /// Training steps of the recipe
        Train,
        /// The step's main kernels alone
        Kernels,
        /// One prediction with attention
        Predict,
        /// GPU kernel launches of a training step and a prediction, by kernel, with each of our
        /// kernels' workgroups and longest serial loop, in both kernel families (`--backend wgpu`)
        Launches,
        /// Each GPU kernel's time in one training step and one explanation, in the adapter's
        /// kernel family, from the device's timestamps where it has them (`--backend wgpu`)
        Profile,
    }

    pub fn run(arguments: Arguments) -> Result<(), String> {
        let Arguments { archive, steps, untimed, batches, sections, recipe, backend } = arguments;
        let recipes = batches.iter().map(|&batch| recipe.recipe(Some(batch))).collect::<Result<Vec<_>, _>>()?;
        let device = vit_web::compute::native_device(backend.backend)?;
        let context = Context { device, backend: backend.backend.name(), threads: rayon::current_num_threads() };
        println!("{}", machine_line(&context));
        let train = match &archive.archive {
            Some(path) => {
                let dataset = read_archive_file(path, |_| {}).map_err(|error| error.to_string())?;
                asset_figures(&dataset.train, &dataset.test)?;
                SubsetRule::First(20_000).apply(&dataset.train).map_err(|error| error.to_string())?
            }
            None => random_set(2_048),
        };
        for recipe in &recipes {
            if sections.contains(&Section::Train) {
                training_figures(&context, &train, recipe, steps, untimed);
            }
            if sections.contains(&Section::Kernels) {
                kernel_figures(&context, recipe.batch_size);
            }
            if sections.contains(&Section::Launches) {
                super::launches::report(&context.device, &train, recipe)?;
            }
            if sections.contains(&Section::Profile) {
                super::launches::profile_step(&context.device, &train, recipe)?;
            }
        }
        if sections.contains(&Section::Predict) {
            inference_figures(&context);
        }
        if sections.contains(&Section::Profile) {
            super::launches::profile_explanation(&context.device)?;
        }
        Ok(())
    }

    /// What the figures ran on: CPU model, the vector units the kernels pick from, the threads.
    fn machine_line(context: &Context) -> String {
        // "model name" alone can hide the generation ("AMD EPYC"): family and model tell it.
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            cpuinfo.lines().find_map(|line| {
                let (key, value) = line.split_once(':')?;
                (key.trim() == name).then(|| value.trim().to_string())
            })
        };
        let cpu = serde_json::json!({
            "name": field("model name").unwrap_or_else(|| std::env::consts::ARCH.to_string()),
            "family": field("cpu family"),
            "model": field("model"),
            "cache": field("cache size"),
        });
        let features: Vec<&str> = vector_units().into_iter().filter(|&(_, present)| present).map(|(name, _)| name).collect();
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        format!(
            "{{\"bench\":\"native_machine\",{},\"cpu\":{cpu},\"vector_units\":{},\"cores\":{cores}}}",
            context.label(),
            serde_json::to_string(&features).expect("strings serialise"),
        )
    }

    fn vector_units() -> Vec<(&'static str, bool)> {
        #[cfg(target_arch = "x86_64")]
        return vec![
            ("avx512f", std::arch::is_x86_feature_detected!("avx512f")),
            ("avx2", std::arch::is_x86_feature_detected!("avx2")),
            ("fma", std::arch::is_x86_feature_detected!("fma")),
            ("sse4.1", std::arch::is_x86_feature_detected!("sse4.1")),
        ];
        #[cfg(not(target_arch = "x86_64"))]
        return Vec::new();
    }

    /// Where the figures are measured, named in every line.
    struct Context {
        device: Device,
        backend: &'static str,
        threads: usize,
    }

    impl Context {
        fn label(&self) -> String {
            format!("\"backend\":\"{}\",\"threads\":{}", self.backend, self.threads)
        }
    }

    fn random_set(images: usize) -> ImageSet {
        let mut rng = Pcg32::new(1, 1);
        let mut set = ImageSet::with_capacity(images);
        let mut pixels = vec![0u8; 3072];
        for index in 0..images {
            pixels.iter_mut().for_each(|value| *value = rng.below(256) as u8);
            set.push((index % 10) as u8, &pixels);
        }
        set
    }

    fn median(mut values: Vec<f64>) -> f64 {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    }

    fn training_figures(context: &Context, train: &ImageSet, recipe: &TrainingRecipe, steps: usize, warmup: usize) {
        let (batch, device) = (recipe.batch_size, context.device.clone().autodiff());
        device.seed(recipe.seed);
        let model = recipe.preset.config().init(&device);
        let mut trainer = Trainer::new(model, recipe.optimizer.clone(), recipe.total_steps(train.len()), &device);
        let mut rng = Pcg32::new(recipe.seed, 0);
        let (mut step_ms, mut assemble_ms, mut first_step_ms) = (Vec::new(), Vec::new(), 0.0);
        let mut assemble = |step: usize| {
            let indices: Vec<usize> = (0..batch).map(|i| (step * batch + i) % train.len()).collect();
            let started = Instant::now();
            (assemble_batch(train, &indices, recipe.augment, &mut rng), started.elapsed().as_secs_f64() * 1e3)
        };
        let (mut assembled, mut assembled_in) = assemble(0);
        for step in 0..warmup + steps {
            let started = Instant::now();
            let (images, labels) = batch_tensors(assembled, &device);
            let loss = trainer.step(images, labels).loss;
            // The next batch is assembled while a GPU runs this step, as `TrainingSession` does
            // (it reads the loss only every few steps); on the CPU backend the step has already
            // run, and the assembly counts in full.
            let this_assembly = assembled_in;
            (assembled, assembled_in) = assemble(step + 1);
            assert!(loss.into_scalar::<f32>().is_finite()); // waits for the step
            if step == 0 {
                first_step_ms = started.elapsed().as_secs_f64() * 1e3;
            }
            if step >= warmup {
                step_ms.push(started.elapsed().as_secs_f64() * 1e3);
                assemble_ms.push(this_assembly);
            }
        }
        let (step, assemble) = (median(step_ms.clone()), median(assemble_ms));
        let heavy = {
            let indices: Vec<usize> = (0..batch).collect();
            let started = Instant::now();
            let _ = assemble_batch(train, &indices, AugmentRecipe::Heavy, &mut rng);
            started.elapsed().as_secs_f64() * 1e3
        };
        println!(
            "{{\"bench\":\"native_train\",{},\"batch\":{batch},\"steps\":{steps},\"first_step_ms\":{first_step_ms:.1},\"step_ms_median\":{step:.1},\"step_ms_min\":{:.1},\"step_ms_max\":{:.1},\"images_per_second\":{:.1},\"assemble_flip_ms\":{assemble:.2},\"assemble_share\":{:.4},\"assemble_heavy_ms\":{heavy:.2}}}",
            context.label(),
            step_ms.iter().cloned().fold(f64::MAX, f64::min),
            step_ms.iter().cloned().fold(0.0, f64::max),
            batch as f64 / step * 1e3,
            assemble / step,
        );
    }

    /// The forward kernels that make up most of a step, alone at the tiny preset's shapes
    /// (65 tokens, width 128, 4 heads, MLP 256): where a step's time goes. The first run of each
    /// includes compiling its kernel on a GPU; `ms` is the median of the next five, each waited
    /// for with a device sync.
    fn kernel_figures(context: &Context, batch: usize) {
        let device = &context.device;
        for StepKernel { name, flops, run } in step_kernels(batch, device) {
            let mut times = Vec::new();
            for _ in 0..6 {
                let started = Instant::now();
                let output = run();
                device.sync().expect("the device runs the kernel");
                times.push(started.elapsed().as_secs_f64() * 1e3);
                drop(output);
            }
            let ms = median(times[1..].to_vec());
            let gflops = if flops > 0.0 { format!(",\"gflop_per_second\":{:.2}", flops / ms / 1e6) } else { String::new() };
            println!(
                "{{\"bench\":\"native_kernel\",{},\"batch\":{batch},\"kernel\":\"{name}\",\"first_ms\":{:.2},\"ms\":{ms:.2}{gflops}}}",
                context.label(),
                times[0]
            );
        }
    }

    /// One image's logits and every layer's attention, read back at once (the PyTorch peer's
    /// measurement, with the attention), and the page's whole explanation of a picture
    /// (`inference::explain`: the mirror image's pass too, probabilities and attention read back
    /// at once).
    fn inference_figures(context: &Context) {
        let device = context.device.clone();
        let config = VitConfig::tiny();
        let model = config.init(&device);
        let (mut times, mut explain_times) = (Vec::new(), Vec::new());
        for round in 0..25u8 {
            let image = Tensor::<4>::random([1, 3, 32, 32], Distribution::Normal(0.0, 1.0), &device);
            let started = Instant::now();
            let output = model.forward_with_attention(image);
            let parts = std::iter::once(output.logits.reshape([-1])).chain(output.attention.into_iter().map(|layer| layer.reshape([-1])));
            // Read the values (one transaction, as the page reads them).
            let values = pollster::block_on(vit_web::inference::read_floats(parts)).expect("f32 values");
            assert!(values.iter().all(|value| value.is_finite()));
            times.push(started.elapsed().as_secs_f64() * 1e3);
            let rgba = vec![round.wrapping_mul(37); 4 * 32 * 32];
            let started = Instant::now();
            pollster::block_on(vit_web::inference::explain(&model, &config, &rgba, &device)).expect("an explanation");
            explain_times.push(started.elapsed().as_secs_f64() * 1e3);
        }
        // What one launch costs alone: GELU on four values, 500 times, then one readback.
        let mut value = Tensor::<1>::zeros([4], &device);
        let _ = vit_web::ops::gelu(value.clone()).into_data().try_to_vec::<f32>();
        let started = Instant::now();
        for _ in 0..500 {
            value = vit_web::ops::gelu(value);
        }
        let issued = started.elapsed().as_secs_f64() * 1e3;
        let _ = value.into_data().try_to_vec::<f32>();
        let finished = started.elapsed().as_secs_f64() * 1e3;
        println!(
            "{{\"bench\":\"native_predict_one_with_attention\",{},\"ms_median\":{:.2},\"explain_ms_median\":{:.2},\"launch_issue_us\":{:.1},\"launch_us\":{:.1}}}",
            context.label(),
            median(times[5..].to_vec()),
            median(explain_times[5..].to_vec()),
            issued * 2.0,
            finished * 2.0,
        );
    }

    fn asset_figures(train: &ImageSet, test: &ImageSet) -> Result<(), String> {
        let subset = SubsetRule::First(20_000).apply(train).map_err(|error| error.to_string())?;
        let asset = encode_asset(&subset, test, vit_web::data::asset::DEFAULT_QUALITY);
        let started = Instant::now();
        decode_asset(&asset).map_err(|error| error.to_string())?;
        println!(
            "{{\"bench\":\"native_asset_decode\",\"images\":{},\"asset_bytes\":{},\"decode_ms\":{:.0}}}",
            subset.len() + test.len(),
            asset.len(),
            started.elapsed().as_secs_f64() * 1e3
        );
        Ok(())
    }
}

/// `--sections launches`: the GPU kernel launches of one training step and one prediction, in
/// both kernel families, whatever the adapter (SwiftShader shows a GPU's launches and workgroups
/// as a GPU would get them; only the times differ).
#[cfg(all(not(target_family = "wasm"), feature = "wgpu"))]
mod launches {
    use std::collections::BTreeMap;

    use burn::tensor::{Device, Int, Tensor};
    use vit_web::data::ImageSet;
    use vit_web::data::augment::AugmentRecipe;
    use vit_web::data::batch::{assemble_batch, batch_tensors};
    use vit_web::data::rng::Pcg32;
    use vit_web::ops::webgpu::record::timing::{self, KernelTime};
    use vit_web::ops::webgpu::record::{LaunchRecord, count, start_recording, stop_recording, take_records};
    use vit_web::ops::dense::webgpu::product::{Tile, set_product_tile};
    use vit_web::ops::webgpu::{KernelFamily, set_kernel_family};
    use vit_web::training::{Trainer, TrainingRecipe};

    pub fn report(device: &Device, train: &ImageSet, recipe: &TrainingRecipe) -> Result<(), String> {
        on_gpu(device, "--sections launches counts GPU launches")?;
        for family in [KernelFamily::Software, KernelFamily::Hardware] {
            set_kernel_family(Some(family));
            train_step(device, train, recipe, family);
            prediction(device, family, recipe.batch_size);
        }
        set_kernel_family(None);
        Ok(())
    }

    /// `--sections profile`: where one training step's GPU time goes, kernel by kernel, in the
    /// kernel family the adapter gets.
    pub fn profile_step(device: &Device, train: &ImageSet, recipe: &TrainingRecipe) -> Result<(), String> {
        on_gpu(device, PROFILE_ON_GPU)?;
        let batch = recipe.batch_size;
        // Two steps first: the first compiles the kernels and creates AdamW's state.
        let (mut trainer, mut batch_for) = trainer_after(device, train, recipe, 2);
        let mut timed_step = |step: usize| {
            let (images, labels) = batch_for(step);
            let (_, times) = timing::kernels(
                || trainer.step(images, labels),
                |output| assert!(output.loss.clone().into_scalar::<f32>().is_finite()),
            );
            times
        };
        let times = timed_step(2);
        print_times("train_step", Some(batch), &times);
        // Where a product took the wide tile, the same step with every product on the narrow one:
        // the measurement that decides the tile's threshold (product.rs).
        if times.iter().any(|time| time.detail.as_deref().is_some_and(|detail| detail.contains("Wide"))) {
            set_product_tile(Some(Tile::Narrow));
            let times = timed_step(3);
            set_product_tile(None);
            print_times("train_step_narrow_tiles", Some(batch), &times);
        }
        Ok(())
    }

    /// `--sections profile`: the same for the page's explanation of a picture.
    pub fn profile_explanation(device: &Device) -> Result<(), String> {
        on_gpu(device, PROFILE_ON_GPU)?;
        let config = vit_web::model::VitConfig::tiny();
        let model = config.init(device);
        let rgba = vec![128u8; 4 * 32 * 32];
        let explain = || pollster::block_on(vit_web::inference::explain(&model, &config, &rgba, device)).expect("an explanation");
        explain();
        let (_, times) = timing::kernels(explain, |_| ());
        print_times("predict_one_with_attention", None, &times);
        Ok(())
    }

    const PROFILE_ON_GPU: &str = "--sections profile times GPU kernels";

    /// An error saying what `section` does where `device` is the CPU.
    fn on_gpu(device: &Device, section: &str) -> Result<(), String> {
        match vit_web::ops::on_cpu(&Tensor::<1>::zeros([1], device)) {
            true => Err(format!("{section}: add --backend wgpu")),
            false => Ok(()),
        }
    }

    /// One line per kernel and constants, the most time first, then the whole.
    fn print_times(what: &str, batch: Option<usize>, times: &[KernelTime]) {
        let batch_field = batch.map(|batch| format!("\"batch\":{batch},")).unwrap_or_default();
        let mut groups: Vec<(&str, Option<&str>, usize, f64)> = Vec::new();
        for time in times {
            let detail = time.detail.as_deref();
            match groups.iter_mut().find(|(kernel, kept, ..)| *kernel == time.kernel && *kept == detail) {
                Some(group) => {
                    group.2 += 1;
                    group.3 += time.ms.unwrap_or(0.0);
                }
                None => groups.push((&time.kernel, detail, 1, time.ms.unwrap_or(0.0))),
            }
        }
        groups.sort_by(|a, b| b.3.total_cmp(&a.3));
        for (kernel, detail, launches, ms) in groups {
            println!(
                "{{\"bench\":\"kernel_time\",\"what\":\"{what}\",{batch_field}\"kernel\":\"{kernel}\",\"detail\":{},\"launches\":{launches},\"ms\":{ms:.4}}}",
                serde_json::to_string(&detail).expect("strings serialise"),
            );
        }
        let total: f64 = times.iter().filter_map(|time| time.ms).sum();
        let unmeasured = times.iter().filter(|time| time.ms.is_none()).count();
        let measured = || times.iter().filter(|time| time.ms.is_some());
        let clock = if measured().all(|time| time.device_clock) { "device" } else { "host" };
        println!(
            "{{\"bench\":\"kernel_times\",\"what\":\"{what}\",{batch_field}\"launches\":{},\"kernel_ms\":{total:.3},\"unmeasured\":{unmeasured},\"clock\":\"{clock}\"}}",
            times.len(),
        );
    }

    /// A trainer of the recipe's model and its batches, `steps` steps run.
    fn trainer_after<'a>(
        device: &Device,
        train: &'a ImageSet,
        recipe: &TrainingRecipe,
        steps: usize,
    ) -> (Trainer, impl FnMut(usize) -> (Tensor<4>, Tensor<1, Int>) + 'a) {
        let (batch, device) = (recipe.batch_size, device.clone().autodiff());
        device.seed(recipe.seed);
        let model = recipe.preset.config().init(&device);
        let mut trainer = Trainer::new(model, recipe.optimizer.clone(), recipe.total_steps(train.len()), &device);
        let mut rng = Pcg32::new(recipe.seed, 0);
        let mut batch_for = move |step: usize| {
            let indices: Vec<usize> = (0..batch).map(|i| (step * batch + i) % train.len()).collect();
            batch_tensors(assemble_batch(train, &indices, AugmentRecipe::Flip, &mut rng), &device)
        };
        for step in 0..steps {
            let (images, labels) = batch_for(step);
            let _ = trainer.step(images, labels).loss.into_scalar::<f32>();
        }
        (trainer, batch_for)
    }

    fn train_step(device: &Device, train: &ImageSet, recipe: &TrainingRecipe, family: KernelFamily) {
        let batch = recipe.batch_size;
        // The first step compiles the kernels and creates AdamW's state; the second is a step
        // like every later one.
        let (mut trainer, mut batch_for) = trainer_after(device, train, recipe, 1);
        let (images, labels) = batch_for(1);
        start_recording();
        let (output, counts) = count::launches(|| trainer.step(images, labels));
        let records = take_records();
        stop_recording();
        let _ = output.loss.into_scalar::<f32>();
        print("train_step", family, batch, &counts, &records);
    }

    /// The page's explanation of one picture (`inference::explain`: the picture and its mirror
    /// image, one readback), on the trained-from-nothing tiny model.
    fn prediction(device: &Device, family: KernelFamily, batch: usize) {
        let config = vit_web::model::VitConfig::tiny();
        let model = config.init(device);
        let rgba = vec![128u8; 4 * 32 * 32];
        let explain = || pollster::block_on(vit_web::inference::explain(&model, &config, &rgba, device)).expect("an explanation");
        explain();
        start_recording();
        let (_, counts) = count::launches(explain);
        let records = take_records();
        stop_recording();
        print("predict_one_with_attention", family, batch, &counts, &records);
    }

    fn print(what: &str, family: KernelFamily, batch: usize, counts: &BTreeMap<String, usize>, records: &[LaunchRecord]) {
        let family = format!("{family:?}").to_lowercase();
        let total: usize = counts.values().sum();
        let longest = records.iter().map(|record| record.batch_sum).max().unwrap_or(0);
        let largest_binding = records.iter().map(|record| record.largest_binding).max().unwrap_or(0);
        let batch_field = if what == "train_step" { format!("\"batch\":{batch},") } else { String::new() };
        println!(
            "{{\"bench\":\"launches\",\"what\":\"{what}\",\"family\":\"{family}\",{batch_field}\"launches\":{total},\"ours\":{},\"longest_batch_sum\":{longest},\"largest_binding\":{largest_binding},\"by_kernel\":{}}}",
            records.len(),
            serde_json::to_string(counts).expect("counts serialise"),
        );
        // Each tiled product's shape, tile and split of K, with its workgroups: which tile a
        // GPU's products take at this batch.
        for record in records.iter().filter(|record| record.kernel == "TiledProduct") {
            println!(
                "{{\"bench\":\"launch_product\",\"what\":\"{what}\",\"family\":\"{family}\",{batch_field}\"workgroups\":{},\"serial_steps\":{},\"detail\":{}}}",
                record.workgroups,
                record.serial_steps,
                serde_json::to_string(&record.detail).expect("strings serialise"),
            );
        }
        let mut kernels: BTreeMap<&str, Vec<&LaunchRecord>> = BTreeMap::new();
        for record in records {
            kernels.entry(record.kernel).or_default().push(record);
        }
        for (kernel, records) in kernels {
            let most = |field: fn(&LaunchRecord) -> u64| records.iter().map(|record| field(record)).max().unwrap_or(0);
            let least_workgroups = records.iter().map(|record| record.workgroups).min().unwrap_or(0);
            println!(
                "{{\"bench\":\"launch_kernel\",\"what\":\"{what}\",\"family\":\"{family}\",{batch_field}\"kernel\":\"{kernel}\",\"launches\":{},\"workgroups_min\":{least_workgroups},\"workgroups_max\":{},\"invocations_max\":{},\"serial_steps_max\":{},\"batch_sum_max\":{},\"largest_binding_max\":{}}}",
                records.len(),
                most(|record| record.workgroups),
                most(|record| record.invocations),
                most(|record| record.serial_steps),
                most(|record| record.batch_sum),
                most(|record| record.largest_binding),
            );
        }
    }
}

#[cfg(all(not(target_family = "wasm"), not(feature = "wgpu")))]
mod launches {
    pub fn report(
        _device: &burn::tensor::Device,
        _train: &vit_web::data::ImageSet,
        _recipe: &vit_web::training::TrainingRecipe,
    ) -> Result<(), String> {
        Err("--sections launches counts GPU launches: build with --features wgpu and add --backend wgpu".into())
    }

    pub fn profile_step(
        device: &burn::tensor::Device,
        _train: &vit_web::data::ImageSet,
        _recipe: &vit_web::training::TrainingRecipe,
    ) -> Result<(), String> {
        profile_explanation(device)
    }

    pub fn profile_explanation(_device: &burn::tensor::Device) -> Result<(), String> {
        Err("--sections profile times GPU kernels: build with --features wgpu and add --backend wgpu".into())
    }
}
