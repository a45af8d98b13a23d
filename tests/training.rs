//! The shared epoch loop on burn's CPU backend, driven the way the native trainer drives it.

use burn::tensor::Device;
use vit_web::data::ImageSet;
use vit_web::data::rng::Pcg32;
use vit_web::model::VitConfig;
use vit_web::training::{TrainingRecipe, TrainingSession};

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

#[test]
fn a_session_runs_its_epochs_and_records_every_figure() {
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

#[test]
fn an_invalid_recipe_is_refused_before_anything_runs() {
    let device = Device::flex().autodiff();
    let recipe = TrainingRecipe { batch_size: 0, ..TrainingRecipe::default() };
    let error = TrainingSession::new(recipe, VitConfig::tiny().init(&device), random_set(8, 1), random_set(8, 2), &device)
        .err()
        .expect("batch size 0 is refused");
    assert_eq!(error.to_string(), "batch size: must be between 1 and 4096");
}
