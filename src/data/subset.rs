//! Which training images to use: the reference's first 20,000 records, or a class-balanced,
//! seeded draw. A rule, not a list, so the page and the native trainer agree by construction.

use serde::{Deserialize, Serialize};

use super::rng::Pcg32;
use super::{CLASS_COUNT, DataError, ImageSet};

/// How to choose a training subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SubsetRule {
    /// The first `n` records in archive order. The reference trains on `First(20_000)`,
    /// data_batch_1 and data_batch_2 (1,000 ± 80 images per class).
    First(usize),
    /// `per_class` images of each class, drawn without replacement with a seeded generator;
    /// the chosen images keep their archive order.
    Balanced { per_class: usize, seed: u64 },
}

impl SubsetRule {
    /// The reference's choice: the first 20,000 training records.
    pub const REFERENCE: SubsetRule = SubsetRule::First(20_000);

    /// How many images the rule selects.
    pub fn len(&self) -> usize {
        match *self {
            SubsetRule::First(count) => count,
            SubsetRule::Balanced { per_class, .. } => per_class * CLASS_COUNT,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The chosen records' indices into `labels`, ascending.
    pub fn indices(&self, labels: &[u8]) -> Result<Vec<usize>, DataError> {
        match *self {
            SubsetRule::First(count) => {
                if count > labels.len() {
                    return Err(DataError::NotEnoughImages { class: None, wanted: count, available: labels.len() });
                }
                Ok((0..count).collect())
            }
            SubsetRule::Balanced { per_class, seed } => {
                let mut rng = Pcg32::new(seed, 0x5eb5e7);
                let mut chosen = Vec::with_capacity(per_class * CLASS_COUNT);
                for class in 0..CLASS_COUNT as u8 {
                    let mut members: Vec<usize> = (0..labels.len()).filter(|&index| labels[index] == class).collect();
                    if members.len() < per_class {
                        return Err(DataError::NotEnoughImages { class: Some(class), wanted: per_class, available: members.len() });
                    }
                    // Partial Fisher–Yates: the first `per_class` slots end up a uniform draw.
                    for slot in 0..per_class {
                        let pick = slot + rng.below(members.len() - slot);
                        members.swap(slot, pick);
                    }
                    chosen.extend_from_slice(&members[..per_class]);
                }
                chosen.sort_unstable();
                Ok(chosen)
            }
        }
    }

    /// The chosen images as a new set, in archive order.
    pub fn apply(&self, set: &ImageSet) -> Result<ImageSet, DataError> {
        Ok(set.select(&self.indices(&set.labels)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1,000 labels, class `i % 10` for record `i`, except that class 9 has only 60 records.
    fn labels() -> Vec<u8> {
        (0..1000).map(|index| if index % 10 == 9 && index >= 600 { 0 } else { (index % 10) as u8 }).collect()
    }

    #[test]
    fn first_takes_the_leading_records() {
        assert_eq!(SubsetRule::First(5).indices(&labels()).unwrap(), [0, 1, 2, 3, 4]);
        assert!(matches!(
            SubsetRule::First(1001).indices(&labels()),
            Err(DataError::NotEnoughImages { class: None, wanted: 1001, available: 1000 })
        ));
    }

    #[test]
    fn balanced_is_balanced_sorted_and_seeded() {
        let labels = labels();
        let rule = SubsetRule::Balanced { per_class: 50, seed: 7 };
        let chosen = rule.indices(&labels).unwrap();
        assert_eq!(chosen.len(), 500);
        assert!(chosen.windows(2).all(|pair| pair[0] < pair[1]), "ascending, no repeats");
        let mut counts = [0; CLASS_COUNT];
        chosen.iter().for_each(|&index| counts[labels[index] as usize] += 1);
        assert_eq!(counts, [50; CLASS_COUNT]);

        assert_eq!(chosen, rule.indices(&labels).unwrap(), "same seed, same subset");
        let other = SubsetRule::Balanced { per_class: 50, seed: 8 }.indices(&labels).unwrap();
        assert_ne!(chosen, other, "another seed, another subset");
    }

    #[test]
    fn balanced_refuses_a_class_that_is_too_small() {
        let error = SubsetRule::Balanced { per_class: 61, seed: 1 }.indices(&labels()).unwrap_err();
        assert!(matches!(error, DataError::NotEnoughImages { class: Some(9), wanted: 61, available: 60 }));
        assert!(error.to_string().contains("of class 9"));
    }
}
