//! The ViT paper's *mean attention distance* (Dosovitskiy et al., 2020, Figure 7, right): for
//! each layer and head, how far across the image a patch's attention reaches. For a query patch
//! it is the distance in pixels between its centre and each patch's centre, weighted by the
//! attention the query gives that patch; averaged over every query patch of every image. The
//! [CLS] token has no position, so it is left out as a query, and as a key the patch weights are
//! renormalised to sum to one: the figure is a true weighted mean, whatever share [CLS] takes.
//! Small values mean local attention (like a convolution), large ones global.

/// Mean attention distance in pixels of each head of one layer: `attention` is that layer's
/// `[images, heads, tokens, tokens]` (rows are queries, [CLS] first), over a square grid of
/// patches of `patch_size` pixels.
///
/// # Panics
/// If `attention` is not `images × heads × tokens × tokens` long, or the patches are not a square grid.
pub fn mean_attention_distance(attention: &[f32], images: usize, heads: usize, tokens: usize, patch_size: usize) -> Vec<f32> {
    assert_eq!(attention.len(), images * heads * tokens * tokens, "attention is [images, heads, tokens, tokens]");
    let patches = tokens - 1;
    let grid = (patches as f64).sqrt().round() as usize;
    assert_eq!(grid * grid, patches, "the patches form a square grid");
    let distance: Vec<f64> = (0..patches * patches)
        .map(|pair| {
            let (query, key) = (pair / patches, pair % patches);
            let (dy, dx) = ((query / grid) as f64 - (key / grid) as f64, (query % grid) as f64 - (key % grid) as f64);
            patch_size as f64 * dy.hypot(dx)
        })
        .collect();
    let mut means = vec![0.0f64; heads];
    for image in 0..images {
        for (head, mean) in means.iter_mut().enumerate() {
            let map = &attention[(image * heads + head) * tokens * tokens..][..tokens * tokens];
            for query in 0..patches {
                let row = &map[(query + 1) * tokens + 1..][..patches];
                let total: f64 = row.iter().map(|&weight| weight as f64).sum();
                if total > 0.0 {
                    let weighted: f64 = row.iter().zip(&distance[query * patches..]).map(|(&weight, &d)| weight as f64 * d).sum();
                    *mean += weighted / total;
                }
            }
        }
    }
    means.into_iter().map(|sum| (sum / (images * patches) as f64) as f32).collect()
}

/// The largest distance two patches of the grid can be apart (corner to corner), in pixels: the
/// top of the chart's scale.
pub fn farthest(tokens: usize, patch_size: usize) -> f32 {
    let grid = ((tokens - 1) as f64).sqrt().round();
    (patch_size as f64 * (grid - 1.0) * std::f64::consts::SQRT_2) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2×2 grid of 4-pixel patches: tokens [CLS, p0, p1, p2, p3], p0 p1 on top, p2 p3 below.
    const TOKENS: usize = 5;

    fn map(weights: impl Fn(usize, usize) -> f32) -> Vec<f32> {
        (0..TOKENS * TOKENS).map(|index| weights(index / TOKENS, index % TOKENS)).collect()
    }

    #[test]
    fn distances_by_hand_on_a_two_by_two_grid() {
        // Head 0: every token attends to itself only: distance 0.
        let own = map(|query, key| if query == key { 1.0 } else { 0.0 });
        // Head 1: each patch gives half to [CLS], half to the opposite corner (3 − index):
        // renormalised, all of it at 4·√2 pixels.
        let opposite = map(|query, key| match (query, key) {
            (0, _) => 0.2,
            (_, 0) => 0.5,
            (query, key) if key - 1 == 3 - (query - 1) => 0.5,
            _ => 0.0,
        });
        // Head 2: uniform over all five tokens: from any patch the others lie at 0, 4, 4 and
        // 4·√2 pixels, so the mean is (8 + 4√2) / 4 = 2 + √2.
        let uniform = map(|_, _| 0.2);
        let layer: Vec<f32> = [own, opposite, uniform].concat();
        let distances = mean_attention_distance(&layer, 1, 3, TOKENS, 4);
        let expected = [0.0, 4.0 * std::f32::consts::SQRT_2, 2.0 + std::f32::consts::SQRT_2];
        for (got, want) in distances.iter().zip(expected) {
            assert!((got - want).abs() < 1e-5, "{distances:?} vs {expected:?}");
        }
        assert!((farthest(TOKENS, 4) - 4.0 * std::f32::consts::SQRT_2).abs() < 1e-6);
    }

    #[test]
    fn images_are_averaged_and_the_model_grid_is_bounded() {
        let own = map(|query, key| if query == key { 1.0 } else { 0.0 });
        let uniform = map(|_, _| 0.2);
        let two_images: Vec<f32> = [own, uniform].concat();
        let distances = mean_attention_distance(&two_images, 2, 1, TOKENS, 4);
        assert!((distances[0] - (2.0 + std::f32::consts::SQRT_2) / 2.0).abs() < 1e-5, "{distances:?}");
        // The tiny model's 8×8 grid of 4-pixel patches: the corners lie 28·√2 ≈ 39.6 px apart,
        // inside the 32×32 image's diagonal.
        assert!((farthest(65, 4) - 39.598).abs() < 1e-3);
    }
}
