//! Where the model looked: attention rollout (Abnar & Zuidema, "Quantifying Attention Flow in
//! Transformers", 2020) and single-layer [CLS] attention, on plain arrays read back from the
//! model for one image.
//!
//! One layer's attention says which tokens the *previous* layer's outputs mixed; after a few
//! layers every token is a blend of many patches, so one layer's map alone says little about
//! the image. Rollout follows the mixing through all layers: each layer's head-averaged
//! attention, plus the identity for the residual connection, multiplied from the first layer
//! to the last.
//!
//! # Shapes
//! A layer's attention for one image is `[heads, tokens, tokens]`, row-major, as the model's
//! `[batch, heads, tokens, tokens]` tensor for batch index 0; row `i` is query token `i`'s
//! distribution over the keys. Token 0 is [CLS], tokens 1.. are the patches in row-major grid
//! order (65 tokens: [CLS] + an 8×8 grid).

use super::colormap::normalize_min_max;

/// Heads in a layer's attention array, checked against its length.
fn head_count(layer: &[f32], tokens: usize) -> usize {
    let matrix = tokens * tokens;
    assert!(
        matrix > 0 && !layer.is_empty() && layer.len().is_multiple_of(matrix),
        "attention of {} values is not [heads, {tokens}, {tokens}]",
        layer.len()
    );
    layer.len() / matrix
}

/// The mean of a layer's heads: one `[tokens, tokens]` matrix.
///
/// # Shapes
/// - layer: `[heads, tokens, tokens]`
/// - output: `[tokens, tokens]`
///
/// # Panics
/// If `layer`'s length is not a positive multiple of `tokens²`.
pub fn mean_over_heads(layer: &[f32], tokens: usize) -> Vec<f32> {
    let heads = head_count(layer, tokens);
    let matrix = tokens * tokens;
    let mut mean = vec![0.0; matrix];
    for head in layer.chunks_exact(matrix) {
        for (sum, &value) in mean.iter_mut().zip(head) {
            *sum += value;
        }
    }
    mean.iter_mut().for_each(|sum| *sum /= heads as f32);
    mean
}

/// Attention rollout over all layers: `R = Â_L ⋯ Â_2 · Â_1`, where `Â_l` is layer `l`'s
/// head-averaged attention mixed half-and-half with the identity (the residual path,
/// `0.5·A + 0.5·I`) and each row re-normalised to sum to 1. Row `i` of `R` says how much of
/// each *input* token ends up in token `i` after the last layer; row 0 is what the [CLS] token,
/// and so the classifier, drew from each patch.
///
/// An empty list of layers gives the identity.
///
/// # Shapes
/// - layers: L arrays of `[heads, tokens, tokens]`, first layer first
/// - output: `[tokens, tokens]`
///
/// # Panics
/// If a layer's length is not a positive multiple of `tokens²`.
pub fn attention_rollout<L: AsRef<[f32]>>(layers: &[L], tokens: usize) -> Vec<f32> {
    let mut rollout = identity(tokens);
    for layer in layers {
        let mut mixed = mean_over_heads(layer.as_ref(), tokens);
        for (index, value) in mixed.iter_mut().enumerate() {
            let diagonal = if index / tokens == index % tokens { 1.0 } else { 0.0 };
            *value = 0.5 * *value + 0.5 * diagonal;
        }
        normalize_rows(&mut mixed, tokens);
        // The later layer multiplies from the left: it mixes what the earlier ones produced.
        rollout = multiply(&mixed, &rollout, tokens);
        normalize_rows(&mut rollout, tokens);
    }
    rollout
}

/// The [CLS] row of a `[tokens, tokens]` matrix without its [CLS] column, stretched to [0, 1] for
/// display: one value per patch, row-major over the patch grid (64 values = 8×8 for 65 tokens).
///
/// # Shapes
/// - matrix: `[tokens, tokens]`
/// - output: `[tokens − 1]`, i.e. `[grid, grid]`
///
/// # Panics
/// If `matrix` is not `tokens²` long or there are no patch tokens.
pub fn cls_to_patches(matrix: &[f32], tokens: usize) -> Vec<f32> {
    assert!(tokens > 1, "need [CLS] and at least one patch token");
    assert_eq!(matrix.len(), tokens * tokens, "expected a [{tokens}, {tokens}] matrix");
    normalize_min_max(&matrix[1..tokens])
}

/// One layer's [CLS]→patch attention, for one head or (`None`) the mean over heads, stretched to
/// [0, 1] like [`cls_to_patches`].
///
/// # Shapes
/// - layer: `[heads, tokens, tokens]`
/// - output: `[tokens − 1]`, i.e. `[grid, grid]`
///
/// # Panics
/// If `layer` is not `[heads, tokens, tokens]`, or `head` is not below the number of heads.
pub fn cls_attention(layer: &[f32], tokens: usize, head: Option<usize>) -> Vec<f32> {
    let heads = head_count(layer, tokens);
    let matrix = tokens * tokens;
    match head {
        Some(head) => {
            assert!(head < heads, "head {head} asked of a layer with {heads} heads");
            cls_to_patches(&layer[head * matrix..(head + 1) * matrix], tokens)
        }
        None => cls_to_patches(&mean_over_heads(layer, tokens), tokens),
    }
}

fn identity(size: usize) -> Vec<f32> {
    let mut matrix = vec![0.0; size * size];
    (0..size).for_each(|index| matrix[index * size + index] = 1.0);
    matrix
}

/// Scales each row to sum to 1 (a row of zeros stays zero).
fn normalize_rows(matrix: &mut [f32], size: usize) {
    for row in matrix.chunks_exact_mut(size) {
        let sum: f32 = row.iter().sum();
        if sum > 0.0 {
            row.iter_mut().for_each(|value| *value /= sum);
        }
    }
}

/// `left · right` for square row-major matrices.
fn multiply(left: &[f32], right: &[f32], size: usize) -> Vec<f32> {
    let mut product = vec![0.0; size * size];
    for (left_row, product_row) in left.chunks_exact(size).zip(product.chunks_exact_mut(size)) {
        for (&weight, right_row) in left_row.iter().zip(right.chunks_exact(size)) {
            if weight != 0.0 {
                for (out, &value) in product_row.iter_mut().zip(right_row) {
                    *out += weight * value;
                }
            }
        }
    }
    product
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_close(actual: &[f32], expected: &[f32]) {
        assert_eq!(actual.len(), expected.len());
        for (index, (a, e)) in actual.iter().zip(expected).enumerate() {
            assert!((a - e).abs() < 1e-6, "entry {index}: {a} vs {e}\n{actual:?}");
        }
    }

    #[test]
    fn hand_computed_three_tokens_two_layers() {
        // One head, tokens [CLS], p1, p2; the patches attend only to themselves.
        // Layer 1: [CLS] looks half at itself, half at p1.
        //   A1 = [.5 .5 0; 0 1 0; 0 0 1]  →  Â1 = .5·A1 + .5·I = [.75 .25 0; 0 1 0; 0 0 1]
        // Layer 2: [CLS] looks half at itself, half at p2.
        //   A2 = [.5 0 .5; 0 1 0; 0 0 1]  →  Â2 = [.75 0 .25; 0 1 0; 0 0 1]
        // R = Â2 · Â1: row 0 = .75·(.75, .25, 0) + .25·(0, 0, 1) = (.5625, .1875, .25).
        // (The wrong order, Â1 · Â2, would give (.5625, .25, .1875).)
        let layer1 = [0.5, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let layer2 = [0.5, 0.0, 0.5, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let rollout = attention_rollout(&[layer1, layer2], 3);
        assert_close(&rollout, &[0.5625, 0.1875, 0.25, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
        // [CLS] → (p1, p2) = (.1875, .25), stretched to [0, 1].
        assert_close(&cls_to_patches(&rollout, 3), &[0.0, 1.0]);
    }

    #[test]
    fn identity_attention_rolls_out_to_the_identity() {
        let layer = [identity(5), identity(5)].concat(); // two heads
        assert_close(&attention_rollout(&[layer.clone(), layer.clone(), layer], 5), &identity(5));
        assert_close(&attention_rollout::<Vec<f32>>(&[], 5), &identity(5));
    }

    #[test]
    fn rollout_rows_sum_to_one() {
        // Softmax-like rows from a formula, 4 heads, 65 tokens, 4 layers.
        let tokens = 65;
        let layers: Vec<Vec<f32>> = (0..4)
            .map(|layer| {
                let mut weights: Vec<f32> = (0..4 * tokens * tokens)
                    .map(|index| ((index * 7 + layer * 13) as f32 * 0.37).sin().exp())
                    .collect();
                normalize_rows(&mut weights, tokens);
                weights
            })
            .collect();
        let rollout = attention_rollout(&layers, tokens);
        for row in rollout.chunks_exact(tokens) {
            assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
        let patches = cls_to_patches(&rollout, tokens);
        assert_eq!(patches.len(), 64);
        assert!(patches.iter().all(|value| (0.0..=1.0).contains(value)));
        assert!(patches.contains(&0.0) && patches.contains(&1.0));
    }

    #[test]
    fn heads_are_averaged() {
        // Two heads over 2 tokens: [CLS] looks at the patch with weight 0.2 in one, 0.6 in the other.
        let layer = [0.8, 0.2, 0.0, 1.0, 0.4, 0.6, 0.0, 1.0];
        assert_close(&mean_over_heads(&layer, 2), &[0.6, 0.4, 0.0, 1.0]);
    }

    #[test]
    fn cls_attention_for_one_head_or_all() {
        // Two heads, 3 tokens; [CLS]'s rows are (.2, .5, .3) and (.2, .1, .7).
        let layer = [
            0.2, 0.5, 0.3, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, //
            0.2, 0.1, 0.7, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0,
        ];
        assert_close(&cls_attention(&layer, 3, Some(0)), &[1.0, 0.0]); // patches (.5, .3)
        assert_close(&cls_attention(&layer, 3, Some(1)), &[0.0, 1.0]); // patches (.1, .7)
        assert_close(&cls_attention(&layer, 3, None), &[0.0, 1.0]); // mean (.3, .5)
        // A flat row has nothing to show: all zeros rather than 0/0.
        assert_close(
            &cls_to_patches(&[0.5, 0.25, 0.25, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], 3),
            &[0.0, 0.0],
        );
    }

    #[test]
    #[should_panic(expected = "head 2 asked of a layer with 2 heads")]
    fn a_missing_head_is_refused() {
        cls_attention(&[0.0; 18], 3, Some(2));
    }

    #[test]
    #[should_panic(expected = "is not [heads, 3, 3]")]
    fn a_wrongly_sized_layer_is_refused() {
        mean_over_heads(&[0.0; 10], 3);
    }
}
