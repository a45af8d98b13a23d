//! The probe image's attention through a training run, kept compact so that a whole run fits: of
//! each capture only what the probe panel draws (the rollout and each layer's head-averaged
//! [CLS] map, 8×8 each, and the class probabilities), about 1.4 kB for the tiny model where the
//! full attention is 270 kB.

use std::rc::Rc;

use crate::inference::{AttentionView, Explanation};

/// Captures a log keeps at most; past it the older ones are thinned (every other one goes), and
/// the latest [`KEPT_LATEST`] always stay. 1,000 tiny-model captures hold about 1.4 MB.
pub const MAX_CAPTURES: usize = 1000;
pub const KEPT_LATEST: usize = 200;

/// An image the worker reports attention on: 32×32 RGBA, and what it is for people.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    pub name: String,
    pub image: Vec<u8>,
}

/// The probe's attention and prediction at one step.
#[derive(Debug, Clone, PartialEq)]
pub struct Capture {
    pub step: usize,
    pub epoch: usize,
    /// The probe, shared by every capture of it.
    pub probe: Rc<Probe>,
    pub probabilities: Vec<f32>,
    /// The rollout's map over the patch grid, then each layer's, all stretched to [0, 1].
    pub rollout: Vec<f32>,
    pub layers: Vec<Vec<f32>>,
    /// Side of the patch grid.
    pub grid: usize,
}

impl Capture {
    pub fn of(step: usize, epoch: usize, probe: Rc<Probe>, explanation: &Explanation) -> Self {
        Self {
            step,
            epoch,
            probe,
            probabilities: explanation.probabilities.clone(),
            rollout: explanation.map(AttentionView::Rollout),
            layers: (0..explanation.attention.len()).map(|layer| explanation.map(AttentionView::Layer { layer, head: None })).collect(),
            grid: explanation.grid(),
        }
    }

    /// Bytes its numbers hold (the probe is shared, so not counted).
    pub fn bytes(&self) -> usize {
        4 * (self.probabilities.len() + self.rollout.len() + self.layers.iter().map(Vec::len).sum::<usize>())
    }
}

/// A run's captures, oldest first, within [`MAX_CAPTURES`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CaptureLog {
    captures: Vec<Capture>,
}

impl CaptureLog {
    pub fn push(&mut self, capture: Capture) {
        self.captures.push(capture);
        if self.captures.len() > MAX_CAPTURES {
            let older = self.captures.len() - KEPT_LATEST;
            let mut index = 0;
            // Every other older capture goes, the first stays: the run's start remains visible.
            self.captures.retain(|_| {
                let keep = index >= older || index % 2 == 0;
                index += 1;
                keep
            });
        }
    }

    pub fn clear(&mut self) {
        self.captures.clear();
    }

    pub fn len(&self) -> usize {
        self.captures.len()
    }

    pub fn is_empty(&self) -> bool {
        self.captures.is_empty()
    }

    pub fn get(&self, index: usize) -> Option<&Capture> {
        self.captures.get(index)
    }

    pub fn bytes(&self) -> usize {
        self.captures.iter().map(Capture::bytes).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn explanation() -> Explanation {
        // Two layers, one head, [CLS] + a 2×2 grid; each query attends to patch 1 most.
        let tokens = 5;
        let layer: Vec<f32> = (0..tokens * tokens).map(|index| if index % tokens == 1 { 0.6 } else { 0.1 }).collect();
        Explanation { probabilities: vec![0.7, 0.3], attention: vec![layer.clone(), layer], heads: 1, tokens }
    }

    fn capture(step: usize) -> Capture {
        Capture::of(step, 1, Rc::new(Probe { name: "probe".into(), image: vec![0; 16] }), &explanation())
    }

    #[test]
    fn a_capture_keeps_the_maps_the_panel_draws() {
        let explanation = explanation();
        let capture = capture(10);
        assert_eq!(capture.rollout, explanation.map(AttentionView::Rollout));
        assert_eq!(capture.layers.len(), 2);
        assert_eq!(capture.layers[1], explanation.map(AttentionView::Layer { layer: 1, head: None }));
        assert_eq!(capture.grid, 2);
        assert_eq!(capture.bytes(), 4 * (2 + 4 + 2 * 4));
    }

    #[test]
    fn a_long_run_stays_within_the_bound_and_keeps_its_start_and_latest() {
        let mut log = CaptureLog::default();
        for step in 1..=5000 {
            log.push(capture(step));
        }
        assert!(log.len() <= MAX_CAPTURES, "{}", log.len());
        assert!(log.len() > MAX_CAPTURES / 2, "{}", log.len());
        assert_eq!(log.get(0).unwrap().step, 1, "the start stays");
        let latest: Vec<usize> = (log.len() - KEPT_LATEST..log.len()).map(|index| log.get(index).unwrap().step).collect();
        assert_eq!(latest, (5000 - KEPT_LATEST + 1..=5000).collect::<Vec<_>>(), "the latest 200 are all there");
        let steps: Vec<usize> = (0..log.len()).map(|index| log.get(index).unwrap().step).collect();
        assert!(steps.windows(2).all(|pair| pair[0] < pair[1]), "in order");
        // The tiny model's captures: 10 probabilities, 5 maps of 64: 1,320 bytes each.
        let tiny = 4 * (10 + 5 * 64);
        assert!(MAX_CAPTURES * tiny < 1_400_000);
    }
}
