//! What a model gets right and wrong, class by class: the confusion matrix and per-class
//! accuracy of a set of predictions.

/// `counts[true][predicted]`: how often an image of class `true` was called `predicted`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfusionMatrix {
    pub classes: usize,
    pub counts: Vec<u32>,
}

impl ConfusionMatrix {
    /// Tallies predictions against labels; pairs with a class at or above `classes` are skipped
    /// (a corrupt label should not panic a chart).
    pub fn new(labels: &[u8], predictions: &[u8], classes: usize) -> Self {
        let mut counts = vec![0; classes * classes];
        for (&label, &predicted) in labels.iter().zip(predictions) {
            let (label, predicted) = (label as usize, predicted as usize);
            if label < classes && predicted < classes {
                counts[label * classes + predicted] += 1;
            }
        }
        Self { classes, counts }
    }

    pub fn count(&self, label: usize, predicted: usize) -> u32 {
        self.counts[label * self.classes + predicted]
    }

    /// Images of class `label`.
    pub fn row_total(&self, label: usize) -> u32 {
        self.counts[label * self.classes..(label + 1) * self.classes].iter().sum()
    }

    pub fn total(&self) -> u32 {
        self.counts.iter().sum()
    }

    /// Right answers over all images; NaN without images.
    pub fn accuracy(&self) -> f32 {
        let right: u32 = (0..self.classes).map(|class| self.count(class, class)).sum();
        right as f32 / self.total() as f32
    }

    /// Recall of each class: the share of its images called by its name; NaN for a class
    /// without images.
    pub fn per_class_accuracy(&self) -> Vec<f32> {
        (0..self.classes)
            .map(|class| self.count(class, class) as f32 / self.row_total(class) as f32)
            .collect()
    }

    /// Each row divided by its total, for colouring cells the same way whatever the class sizes;
    /// a row without images is all zeros.
    pub fn row_normalised(&self) -> Vec<f32> {
        (0..self.classes)
            .flat_map(|label| {
                let total = self.row_total(label).max(1) as f32;
                (0..self.classes).map(move |predicted| (label, predicted, total))
            })
            .map(|(label, predicted, total)| self.count(label, predicted) as f32 / total)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_land_in_true_rows_and_predicted_columns() {
        let matrix = ConfusionMatrix::new(&[0, 0, 1, 1, 1, 2], &[0, 1, 1, 1, 0, 2], 3);
        assert_eq!(matrix.counts, [1, 1, 0, 1, 2, 0, 0, 0, 1]);
        assert_eq!(matrix.total(), 6);
        assert!((matrix.accuracy() - 4.0 / 6.0).abs() < 1e-6);
        assert_eq!(matrix.per_class_accuracy(), [0.5, 2.0 / 3.0, 1.0]);
        let normalised = matrix.row_normalised();
        assert_eq!(&normalised[3..6], &[1.0 / 3.0, 2.0 / 3.0, 0.0]);
    }

    #[test]
    fn a_class_without_images_and_a_bad_label_do_not_panic() {
        let matrix = ConfusionMatrix::new(&[0, 9], &[0, 0], 2);
        assert_eq!(matrix.total(), 1);
        assert!(matrix.per_class_accuracy()[1].is_nan());
        assert_eq!(&matrix.row_normalised()[2..], &[0.0, 0.0]);
    }
}
