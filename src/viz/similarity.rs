//! What the position embedding learned, drawn as in figure 7 (centre) of the ViT paper
//! (Dosovitskiy et al., 2020): the cosine similarity of each patch's position embedding with
//! every other patch's. A trained model shows a bright spot at the patch itself fading with
//! distance, often with its row and column lit: the 1-D embedding has learned the 2-D grid.
//! An untrained one shows noise.
//!
//! # Shapes
//! The position embedding is `[tokens, dim]` row-major (the model's `[1, tokens, dim]`
//! parameter), row 0 for [CLS], rows 1.. for the patches in row-major grid order.
//! The similarities form a `[patches, patches]` matrix: row `p` is patch `p`'s map, itself a
//! `[grid, grid]` image (64 maps of 8×8 for the 65-token model). Values lie in [−1, 1]. The
//! paper's colour bar spans that whole range, but an embedding that starts as 2-D sines and
//! cosines keeps every pair above about 0.7 (the shipped weights: 0.70–0.98) and would draw as one flat colour, so the colours
//! span the range the pairs actually take ([`ColourScale`]), and a legend says what it is.

/// Cosine similarity of two vectors; 0 when either is all zeros (no direction to compare).
///
/// # Panics
/// If the vectors differ in length.
pub fn cosine_similarity(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "vectors of different lengths");
    let (mut dot, mut norm_a, mut norm_b) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (x as f64, y as f64);
        dot += x * y;
        norm_a += x * x;
        norm_b += y * y;
    }
    if norm_a == 0.0 || norm_b == 0.0 {
        return 0.0;
    }
    (dot / (norm_a.sqrt() * norm_b.sqrt())).clamp(-1.0, 1.0) as f32
}

/// Patches per side of a square grid of `patches`, or `None` if it is not square.
fn grid_side(patches: usize) -> Option<usize> {
    let side = (patches as f64).sqrt().round() as usize;
    (side * side == patches).then_some(side)
}

/// The side of a square matrix stored row-major.
///
/// # Panics
/// If `matrix` is not square.
fn matrix_side(matrix: &[f32]) -> usize {
    let side = (matrix.len() as f64).sqrt().round() as usize;
    assert_eq!(side * side, matrix.len(), "the similarity matrix is not square");
    side
}

/// Every patch's position embedding against every other's, [CLS] left out. The matrix is
/// symmetric by construction (each pair computed once).
///
/// # Shapes
/// - position_embedding: `[tokens, dim]`, [CLS] first
/// - output: `[tokens − 1, tokens − 1]`
///
/// # Panics
/// If `position_embedding` is not `tokens × dim` long for some dim ≥ 1, or the patches do not
/// form a square grid.
pub fn position_similarity(position_embedding: &[f32], tokens: usize) -> Vec<f32> {
    assert!(
        tokens > 1 && !position_embedding.is_empty() && position_embedding.len().is_multiple_of(tokens),
        "a position embedding of {} values is not [{tokens}, dim]",
        position_embedding.len()
    );
    let patches = tokens - 1;
    assert!(grid_side(patches).is_some(), "{patches} patches do not form a square grid");
    let dim = position_embedding.len() / tokens;
    let rows: Vec<&[f32]> = position_embedding.chunks_exact(dim).skip(1).collect(); // [patches][dim]
    let mut similarity = vec![0.0; patches * patches];
    for first in 0..patches {
        for second in first..patches {
            let value = cosine_similarity(rows[first], rows[second]);
            similarity[first * patches + second] = value;
            similarity[second * patches + first] = value;
        }
    }
    similarity
}

/// Maps similarities onto [0, 1] for colouring: the lowest and highest similarity between two
/// different positions become the ends of the colour bar. The diagonal (each position with
/// itself, always 1) is left out of the range so that it cannot squash the rest, and is drawn
/// at the top.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColourScale {
    pub low: f32,
    pub high: f32,
}

impl ColourScale {
    /// The range of the off-diagonal entries of a `[patches, patches]` similarity matrix;
    /// [−1, 1] when there are none (a single patch). A range narrower than 0.01 is widened
    /// about its middle, so near-identical embeddings do not magnify rounding noise.
    ///
    /// # Panics
    /// If `similarity` is not square.
    pub fn of(similarity: &[f32]) -> Self {
        let patches = matrix_side(similarity);
        let off_diagonal = similarity.iter().enumerate().filter(|(index, _)| index / patches != index % patches);
        let (low, high) = off_diagonal
            .map(|(_, &value)| value)
            .filter(|value| value.is_finite())
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(low, high), value| (low.min(value), high.max(value)));
        if low > high {
            return Self { low: -1.0, high: 1.0 };
        }
        const NARROWEST: f32 = 0.01;
        if high - low < NARROWEST {
            let middle = 0.5 * (low + high);
            return Self { low: middle - 0.5 * NARROWEST, high: middle + 0.5 * NARROWEST };
        }
        Self { low, high }
    }

    /// Where `value` falls on the colour bar, clamped to [0, 1] (the diagonal's 1 lands at the top).
    pub fn position(&self, value: f32) -> f32 {
        ((value - self.low) / (self.high - self.low)).clamp(0.0, 1.0)
    }
}

/// The paper's layout: the tile in row `row`, column `col` of the outer `grid × grid` figure
/// shows the map of the patch at that grid position, i.e. row `tile_index(row, col, grid)` of
/// the similarity matrix.
pub fn tile_index(row: usize, col: usize, grid: usize) -> usize {
    row * grid + col
}

/// The whole figure as one image without gaps: `grid × grid` tiles, each `grid × grid` pixels
/// (64×64 for an 8×8 grid). Pixel (y, x) is the similarity of the patch of tile
/// (y / grid, x / grid) with the patch at (y % grid, x % grid).
///
/// # Shapes
/// - similarity: `[grid², grid²]`
/// - output: `[grid², grid²]`, rearranged as above
///
/// # Panics
/// If `similarity` is not square over a square number of patches.
pub fn mosaic(similarity: &[f32]) -> Vec<f32> {
    let patches = matrix_side(similarity);
    let grid = grid_side(patches).expect("the patches should form a square grid");
    let side = grid * grid;
    let mut figure = vec![0.0; side * side];
    for y in 0..side {
        for x in 0..side {
            let tile = tile_index(y / grid, x / grid, grid);
            let other = tile_index(y % grid, x % grid, grid);
            figure[y * side + x] = similarity[tile * patches + other];
        }
    }
    figure
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_identical_orthogonal_and_opposite_vectors() {
        assert!((cosine_similarity(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]) - 1.0).abs() < 1e-7);
        assert!((cosine_similarity(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]) - 1.0).abs() < 1e-7);
        assert_eq!(cosine_similarity(&[1.0, 0.0], &[0.0, 5.0]), 0.0);
        assert_eq!(cosine_similarity(&[1.0, -1.0], &[1.0, 1.0]), 0.0);
        assert_eq!(cosine_similarity(&[1.0, 2.0], &[-1.0, -2.0]), -1.0);
        assert_eq!(cosine_similarity(&[0.0, 0.0], &[1.0, 2.0]), 0.0);
    }

    /// A [65, 16] embedding from a formula, [CLS] row included.
    fn embedding() -> Vec<f32> {
        (0..65 * 16)
            .map(|index| (index as f32 * 0.731).sin() + 0.1 * (index as f32 * 0.17).cos())
            .collect()
    }

    #[test]
    fn the_matrix_is_symmetric_with_a_unit_diagonal() {
        let similarity = position_similarity(&embedding(), 65);
        assert_eq!(similarity.len(), 64 * 64);
        for first in 0..64 {
            assert!((similarity[first * 64 + first] - 1.0).abs() < 1e-6);
            for second in 0..64 {
                assert_eq!(similarity[first * 64 + second], similarity[second * 64 + first]);
                assert!((-1.0..=1.0).contains(&similarity[first * 64 + second]));
            }
        }
    }

    #[test]
    fn cls_is_left_out() {
        // [CLS] = (9, 9), patches 1–4 = e1, e2, e1, −e2: a 2×2 grid.
        let embedding = [9.0, 9.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, -1.0];
        #[rustfmt::skip]
        let expected = [
            1.0, 0.0, 1.0, 0.0,
            0.0, 1.0, 0.0, -1.0,
            1.0, 0.0, 1.0, 0.0,
            0.0, -1.0, 0.0, 1.0,
        ];
        assert_eq!(position_similarity(&embedding, 5), expected);
    }

    #[test]
    fn tiles_follow_the_grid() {
        assert_eq!(tile_index(0, 0, 8), 0);
        assert_eq!(tile_index(0, 7, 8), 7);
        assert_eq!(tile_index(1, 0, 8), 8);
        assert_eq!(tile_index(7, 7, 8), 63);
    }

    #[test]
    fn the_mosaic_places_each_map_in_its_tile() {
        let similarity = position_similarity(&embedding(), 65);
        let figure = mosaic(&similarity);
        assert_eq!(figure.len(), 64 * 64);
        // Tile (2, 5) is patch 21's map; its pixel (1, 3) compares it with patch 11.
        let (y, x) = (2 * 8 + 1, 5 * 8 + 3);
        assert_eq!(figure[y * 64 + x], similarity[21 * 64 + 11]);
        // Each tile holds its own patch at the tile's grid position: tile (3, 6), pixel (3, 6)
        // compares patch 30 with itself.
        assert_eq!(figure[(3 * 8 + 3) * 64 + 6 * 8 + 6], similarity[30 * 64 + 30]);
        assert!((figure[(3 * 8 + 3) * 64 + 6 * 8 + 6] - 1.0).abs() < 1e-6);
    }

    #[test]
    fn the_colour_scale_spans_the_off_diagonal_pairs() {
        #[rustfmt::skip]
        let similarity = [
            1.0, 0.6, 0.9, 0.7,
            0.6, 1.0, 0.8, 0.65,
            0.9, 0.8, 1.0, 0.75,
            0.7, 0.65, 0.75, 1.0,
        ];
        let scale = ColourScale::of(&similarity);
        assert_eq!(scale, ColourScale { low: 0.6, high: 0.9 });
        assert_eq!(scale.position(0.6), 0.0);
        assert!((scale.position(0.75) - 0.5).abs() < 1e-6);
        assert_eq!(scale.position(1.0), 1.0, "the diagonal is drawn at the top");
        assert_eq!(scale.position(-1.0), 0.0);
    }

    #[test]
    fn a_degenerate_colour_scale_stays_usable() {
        assert_eq!(ColourScale::of(&[1.0]), ColourScale { low: -1.0, high: 1.0 });
        let flat = ColourScale::of(&[1.0, 0.5, 0.5, 1.0]);
        assert!((flat.low - 0.495).abs() < 1e-6 && (flat.high - 0.505).abs() < 1e-6);
        assert!((flat.position(0.5) - 0.5).abs() < 1e-6);
        let unknown = ColourScale::of(&[1.0, f32::NAN, f32::NAN, 1.0]);
        assert_eq!(unknown, ColourScale { low: -1.0, high: 1.0 });
    }

    #[test]
    #[should_panic(expected = "do not form a square grid")]
    fn a_non_square_grid_is_refused() {
        position_similarity(&[0.0; 6 * 3], 6);
    }
}
