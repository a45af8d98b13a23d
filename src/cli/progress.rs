//! Progress on the terminal: a bar per training epoch and a counter for long preparations. Drawn
//! on stderr when it is a terminal; elsewhere (CI logs, pipes) hidden, so that only the commands'
//! own per-epoch lines are written.

use std::io::IsTerminal;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::training::StepReport;

fn target() -> ProgressDrawTarget {
    if std::io::stderr().is_terminal() { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() }
}

/// A bar for `total` items of `unit` (such as "images"), with its rate and time left.
pub fn counter(total: u64, unit: &str) -> ProgressBar {
    let template = format!("{{prefix}} [{{bar:32}}] {{human_pos}}/{{human_len}} {unit} · {{per_sec}} · {{eta}} left");
    let style = ProgressStyle::with_template(&template).expect("a valid template").progress_chars("=> ");
    ProgressBar::with_draw_target(Some(total), target()).with_style(style)
}

/// One epoch's bar: steps done, images per second, the running loss and the time left.
pub struct EpochProgress {
    bar: ProgressBar,
    started: Instant,
    images: usize,
    loss: Option<f32>,
}

impl EpochProgress {
    pub fn new(epoch: usize, epochs: usize, steps: usize) -> Self {
        let style = ProgressStyle::with_template("epoch {prefix} [{bar:32}] {pos}/{len} steps · {msg} · {eta} left")
            .expect("a valid template")
            .progress_chars("=> ");
        let bar = ProgressBar::with_draw_target(Some(steps as u64), target()).with_style(style);
        bar.set_prefix(format!("{epoch}/{epochs}"));
        bar.set_message("starting");
        Self { bar, started: Instant::now(), images: 0, loss: None }
    }

    /// Counts the step `report` describes.
    pub fn step(&mut self, report: &StepReport) {
        self.images += report.images;
        self.loss = report.smoothed_loss.or(self.loss);
        let speed = self.images as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
        let loss = self.loss.map_or_else(|| "loss –".to_string(), |loss| format!("loss {loss:.4}"));
        self.bar.set_message(format!("{speed:.0} img/s · {loss}"));
        self.bar.inc(1);
    }

    /// Clears the bar, so the command's line for the epoch takes its place.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}
