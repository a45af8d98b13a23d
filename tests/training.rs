//! The shared epoch loop on burn's CPU backend, driven the way the native trainer drives it.
// Native only: in a browser (`wasm-pack test`) the suite is tests/browser/main.rs.
#![cfg(not(target_family = "wasm"))]

use std::sync::{Mutex, MutexGuard};

use burn::nn::DropoutConfig;
use burn::tensor::Device;
use vit_web::data::ImageSet;
use vit_web::data::rng::Pcg32;
use vit_web::model::parity::deterministic_weights;
use vit_web::model::{Preset, VitConfig};
use vit_web::ops::dropout::draw_mask;
use vit_web::training::{
    Checkpoint, Initialisation, OptimizerRecipe, Trainer, TrainingRecipe, TrainingSession, fixed_batch, fresh_model,
};

/// burn's CPU device has one random-number generator for the whole process, which model
/// initialisation and dropout draw from: the tests here take turns with it, so that one test's
/// draws cannot land between another's `device.seed(…)` and what it draws next.
fn device_randomness() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn random_set(images: usize, seed: u64) -> ImageSet {
    let mut rng = Pcg32::new(seed, 7);
    let mut set = ImageSet::with_capacity(images);
    let mut pixels = vec![0u8; 3 * 32 * 32];
    for index in 0..images {
        pixels.iter_mut().for_each(|value| *value = rng.below(256) as u8);
        set.push((index % 10) as u8, &pixels);
    }
    set
}

/// The seed decides every weight of a fresh model, burn's initialisation's as well as the
/// mimetic factors.
#[test]
fn the_seed_decides_a_fresh_models_weights() {
    let _turn = device_randomness();
    let device = Device::flex();
    let config = VitConfig::tiny();
    let first_qkv = |init, seed| {
        let model = fresh_model(&config, init, seed, &device);
        model.blocks[0].attention.qkv.weight.val().into_data().try_to_vec::<f32>().expect("f32 weights")
    };
    for init in [Initialisation::Default, Initialisation::Mimetic] {
        assert_eq!(first_qkv(init, 1), first_qkv(init, 1), "{init:?}");
        assert_ne!(first_qkv(init, 1), first_qkv(init, 2), "{init:?}");
    }
}

/// Each use of a dropout layer draws a new mask; a reseeded device draws the same ones again.
#[test]
fn dropout_masks_follow_the_devices_seed() {
    let _turn = device_randomness();
    let device = Device::flex().autodiff();
    let layer = DropoutConfig::new(0.5).init();
    device.seed(3);
    let (first, second) = (draw_mask(&layer, &device, 100), draw_mask(&layer, &device, 100));
    assert_ne!(first, second);
    device.seed(3);
    assert_eq!(draw_mask(&layer, &device, 100), first);
}

/// A batch split into slices, each on a thread of its own with its own copy of the parameters,
/// takes the step the whole batch takes: the same dropout masks, the gradients summed with the
/// slices' shares of the mean loss. Only the order of floating-point sums differs.
#[test]
fn a_step_split_into_slices_is_the_whole_batchs_step() {
    let _turn = device_randomness();
    let device = Device::flex().autodiff();
    let (images, labels) = fixed_batch(21, &device);
    let model = deterministic_weights(VitConfig::tiny().with_dropout(0.2).init(&device));
    let losses = |slices: usize, seed: u64| -> Vec<f32> {
        device.seed(seed);
        let mut trainer = Trainer::new(model.clone(), OptimizerRecipe::default(), 10, &device);
        (0..3).map(|_| trainer.step_in_slices(images.clone(), labels.clone(), slices).loss.into_scalar::<f32>()).collect()
    };
    let whole = losses(1, 9);
    for slices in [2, 3, 4] {
        let sliced = losses(slices, 9);
        for (whole, sliced) in whole.iter().zip(&sliced) {
            assert!((whole - sliced).abs() < 1e-5 * whole.abs(), "{slices} slices: {sliced:?} against {whole:?}");
        }
    }
    let other_masks = losses(1, 10);
    assert!((other_masks[0] - whole[0]).abs() > 1e-3, "the masks move the loss: {other_masks:?} against {whole:?}");
}

#[test]
fn a_session_runs_its_epochs_and_records_every_figure() {
    let _turn = device_randomness();
    let device = Device::flex().autodiff();
    let recipe = TrainingRecipe { epochs: 2, batch_size: 16, ..TrainingRecipe::default() };
    let mut session = TrainingSession::new(recipe, VitConfig::tiny().init(&device), random_set(40, 1), random_set(24, 2), &device)
        .expect("the recipe is valid")
        .with_log_every(2);
    assert_eq!(session.batches_per_epoch(), 3, "40 images in batches of 16: the last batch is partial");

    let mut last_step = 0;
    while !session.is_done() {
        while !session.epoch_finished() {
            let report = pollster::block_on(session.step()).expect("a finite step");
            assert_eq!(report.step, last_step + 1);
            last_step = report.step;
        }
        let metrics = pollster::block_on(session.finish_epoch(1.0)).expect("a finite epoch");
        assert!(metrics.train_loss.is_finite() && metrics.test_loss.is_finite());
        assert!((0.0..=1.0).contains(&metrics.train_accuracy) && (0.0..=1.0).contains(&metrics.test_accuracy));
        assert_eq!(metrics.images_per_second, 40.0);
    }
    assert_eq!(last_step, 6);
    assert_eq!(session.total_steps(), 6);
    let history = session.history();
    assert_eq!(history.epochs.iter().map(|epoch| epoch.epoch).collect::<Vec<_>>(), [1, 2]);
    // Logged every 2 steps, and at each epoch's last step.
    assert_eq!(history.steps.iter().map(|point| point.step).collect::<Vec<_>>(), [2, 3, 4, 6]);
}

/// The test set is read back in groups, and progress counts the images whose results are back:
/// the figures of the whole set are those of its parts, weighted by their images.
#[test]
fn an_evaluation_reports_the_images_read_back_and_sums_its_groups_exactly() {
    use vit_web::training::{evaluate, evaluate_with_progress};
    let _turn = device_randomness();
    let device = Device::flex();
    let model = VitConfig { embed_dim: 32, depth: 1, heads: 2, mlp_dim: 64, ..VitConfig::tiny() }.init(&device);
    let set = random_set(2_100, 3);
    let mut reports = Vec::new();
    let whole = pollster::block_on(evaluate_with_progress(&model, &set, |done, total| reports.push((done, total)))).expect("it runs");
    assert_eq!(reports, [(2_000, 2_100), (2_100, 2_100)], "one report per group of four 500-image batches");

    let (first, rest) = (set.select(&(0..2_000).collect::<Vec<_>>()), set.select(&(2_000..2_100).collect::<Vec<_>>()));
    let [first, rest] = [first, rest].map(|part| pollster::block_on(evaluate(&model, &part)).expect("it runs"));
    assert_eq!(whole.predictions, [first.predictions.clone(), rest.predictions.clone()].concat());
    let loss = (first.loss * 2_000.0 + rest.loss * 100.0) / 2_100.0;
    assert!((whole.loss - loss).abs() < 1e-5 * loss.abs(), "{} against {loss}", whole.loss);
    let correct = |evaluation: &vit_web::training::TestEvaluation| (evaluation.accuracy * evaluation.predictions.len() as f32).round();
    assert_eq!(correct(&whole), correct(&first) + correct(&rest));
}

#[test]
fn an_invalid_recipe_is_refused_before_anything_runs() {
    let _turn = device_randomness();
    let device = Device::flex().autodiff();
    let recipe = TrainingRecipe { batch_size: 0, ..TrainingRecipe::default() };
    let error = TrainingSession::new(recipe, VitConfig::tiny().init(&device), random_set(8, 1), random_set(8, 2), &device)
        .err()
        .expect("batch size 0 is refused");
    assert_eq!(error.to_string(), "batch size: must be between 1 and 4096");
}

/// The smoothed loss of each of the next `steps` steps (logged every step, so each is read).
fn next_losses(session: &mut TrainingSession, steps: usize) -> Vec<f32> {
    (0..steps)
        .map(|_| pollster::block_on(session.step()).expect("a finite step").smoothed_loss.expect("logged every step"))
        .collect()
}

#[test]
fn a_resumed_run_takes_the_same_next_steps_as_one_that_went_straight_through() {
    resumes_as_if_it_never_stopped(Preset::Tiny);
}

/// The `small` preset has dropout: its masks after a resume must be the ones an unbroken run draws.
#[test]
fn a_resumed_run_with_dropout_draws_the_masks_of_one_that_went_straight_through() {
    resumes_as_if_it_never_stopped(Preset::Small);
}

fn resumes_as_if_it_never_stopped(preset: Preset) {
    let _turn = device_randomness();
    let device = Device::flex().autodiff();
    let recipe = TrainingRecipe { preset, epochs: 3, batch_size: 16, ..TrainingRecipe::default() };
    let (train, test) = (random_set(40, 1), random_set(24, 2));
    device.seed(5);
    let mut straight = TrainingSession::new(recipe, preset.config().init(&device), train.clone(), test.clone(), &device)
        .unwrap()
        .with_log_every(1);
    while !straight.epoch_finished() {
        pollster::block_on(straight.step()).unwrap();
    }
    pollster::block_on(straight.finish_epoch(1.0)).unwrap();
    let bytes = pollster::block_on(straight.checkpoint(true)).unwrap().encode();
    let expected = next_losses(&mut straight, 2);

    // As after a reload: only the bytes survive.
    let checkpoint = Checkpoint::decode(&bytes).unwrap();
    assert_eq!((checkpoint.epochs_done, checkpoint.step), (1, 3));
    let mut resumed = TrainingSession::resume(&checkpoint, train.clone(), test.clone(), &device).unwrap().with_log_every(1);
    assert_eq!(resumed.epoch(), 1);
    assert_eq!(resumed.history(), straight.history().epochs.get(..1).map(|epochs| {
        let mut history = straight.history().clone();
        history.epochs = epochs.to_vec();
        history.steps.retain(|point| point.step <= 3);
        history
    }).as_ref().unwrap());
    assert_eq!(next_losses(&mut resumed, 2), expected, "the same weights, batches, schedule and AdamW moments");

    // Without AdamW's moments (a WebGPU checkpoint) the weights and schedule still carry over: the
    // next loss is the same, the step after differs because the moments restart from zero.
    let without_state = Checkpoint { trainer: None, ..checkpoint };
    let mut restarted = TrainingSession::resume(&without_state, train, test, &device).unwrap().with_log_every(1);
    let losses = next_losses(&mut restarted, 2);
    assert_eq!(losses[0], expected[0]);
    assert_ne!(losses[1], expected[1]);
}

#[test]
fn a_loss_that_is_not_finite_stops_the_run_with_a_message() {
    use burn::module::Param;
    use burn::tensor::Tensor;
    use vit_web::training::TrainingError;
    let _turn = device_randomness();
    let device = Device::flex().autodiff();
    let recipe = TrainingRecipe { epochs: 1, batch_size: 16, ..TrainingRecipe::default() };
    let mut model = VitConfig::tiny().init(&device);
    // A diverged parameter: every logit, and so the loss, becomes NaN.
    model.head.bias = Some(Param::from_tensor(Tensor::full([10], f32::NAN, &device)));
    let mut session =
        TrainingSession::new(recipe, model, random_set(40, 1), random_set(24, 2), &device).unwrap().with_log_every(1);
    let error = pollster::block_on(session.step()).expect_err("a NaN loss stops training");
    assert!(matches!(error, TrainingError::NotFinite { epoch: 1, value } if value.is_nan()), "{error:?}");
    assert_eq!(
        error.to_string(),
        "the loss became NaN at epoch 1: training stopped, the weights of the last good epoch are kept"
    );
}

#[test]
fn a_poisoned_device_is_a_lost_device_in_the_drivers_words() {
    use burn::tensor::ExecutionError;
    use vit_web::training::TrainingError;
    let poisoned = ExecutionError::DevicePoisoned {
        reason: "The device is poisoned\nCaused by:\n  Unknown: A valid external Instance reference no longer exists.".into(),
    };
    let error = TrainingError::from(poisoned);
    assert_eq!(error, TrainingError::DeviceLost("Unknown: A valid external Instance reference no longer exists.".into()));
    assert!(error.to_string().starts_with("The GPU device was lost (Unknown: A valid external Instance reference no longer exists.). Training stopped"));
    assert!(matches!(TrainingError::from(ExecutionError::with_context("a kernel failed")), TrainingError::Readback(_)));
}
