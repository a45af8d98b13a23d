//! How a fresh model's weights start.
//!
//! [`Initialisation::Default`] is burn's, the same distributions as PyTorch's layers (the
//! reference's). [`Initialisation::Mimetic`] is Trockman & Kolter's mimetic initialisation
//! ("Mimetic Initialization of Self-Attention Layers", ICML 2023): the self-attention weights of
//! trained ViTs show a positive diagonal in each head's query–key product `W_q·W_kᵀ` and a
//! negative one in the value–output product `W_v·W_o`, so it starts them that way:
//! `W_q·W_kᵀ ≈ α₁Z₁ + β₁I` per head and `W_v·W_o ≈ α₂Z₂ − β₂I` per block, `Z` Gaussian with
//! variance `1/D`. At the start each token then attends to tokens that look like it (and, through
//! the position embeddings, lie near it) instead of evenly to all, which small datasets otherwise
//! take many epochs to learn. The factors come from each target's singular value decomposition,
//! `√S` on either side; a head's query and key have `head_dim` columns, so its product is the
//! target's best approximation of that rank.

use burn::module::Param;
use burn::tensor::{Device, Tensor, TensorData};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

use crate::data::rng::Pcg32;
use crate::model::{MultiHeadSelfAttention, VisionTransformer, VitConfig};

/// How a fresh model's weights start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Initialisation {
    /// burn's (PyTorch's distributions), as the reference notebook's model.
    #[default]
    #[serde(rename = "default")]
    Default,
    /// Self-attention started as trained ViTs' looks (see the module's documentation).
    #[serde(rename = "mimetic")]
    Mimetic,
    /// The learnable positions started as 2-D sines and cosines of each patch's row and column
    /// (MAE's fixed embedding) instead of small noise: neighbouring patches start alike.
    #[serde(rename = "sincos")]
    SineCosine,
    /// Both: a token's start-up attention to "tokens like it" is then also attention to the
    /// patches near it, as a convolution's would be.
    #[serde(rename = "mimetic-sincos")]
    MimeticSineCosine,
}

impl Initialisation {
    pub const ALL: [Initialisation; 4] =
        [Initialisation::Default, Initialisation::Mimetic, Initialisation::SineCosine, Initialisation::MimeticSineCosine];

    /// The name in URLs, in the page's form and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Initialisation::Default => "default",
            Initialisation::Mimetic => "mimetic",
            Initialisation::SineCosine => "sincos",
            Initialisation::MimeticSineCosine => "mimetic-sincos",
        }
    }

    fn mimetic_attention(self) -> bool {
        matches!(self, Initialisation::Mimetic | Initialisation::MimeticSineCosine)
    }

    fn sine_cosine_positions(self) -> bool {
        matches!(self, Initialisation::SineCosine | Initialisation::MimeticSineCosine)
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|init| init.name() == name.trim())
    }
}

/// The paper's values for ViTs trained on CIFAR-10: `α₁ = β₁ = 0.7` (query–key) and
/// `α₂ = β₂ = 0.4` (value–output).
const QUERY_KEY: Target = Target { noise: 0.7, diagonal: 0.7 };
const VALUE_OUTPUT: Target = Target { noise: 0.4, diagonal: -0.4 };

/// The generator's stream for the mimetic factors, apart from the data's streams of one seed.
const MIMETIC_STREAM: u64 = 0x6d69_6d65;

/// `noise·Z + diagonal·I`, the product a pair of weights starts near.
#[derive(Debug, Clone, Copy)]
struct Target {
    noise: f64,
    diagonal: f64,
}

/// A fresh model of `config` on `device`, initialised as `init` says. `seed` decides every
/// weight: it seeds the device for burn's own initialisation (which draws from the device's
/// random numbers, else seeded from the system's entropy) and draws the mimetic factors. The
/// device's random numbers after it, the run's dropout masks, follow from the seed too.
pub fn fresh_model(config: &VitConfig, init: Initialisation, seed: u64, device: &Device) -> VisionTransformer {
    device.seed(seed);
    let mut model = config.init(device);
    if init.mimetic_attention() {
        let mut rng = Pcg32::new(seed, MIMETIC_STREAM);
        for block in &mut model.blocks {
            mimetic_attention(&mut block.attention, &mut rng);
        }
    }
    if init.sine_cosine_positions() {
        let positions = sine_cosine_positions(config.grid_size(), config.embed_dim);
        model.position_embedding =
            Param::from_tensor(Tensor::from_data(TensorData::new(positions, [1, config.tokens(), config.embed_dim]), device));
    }
    model
}

/// MAE's 2-D sine–cosine position embedding of a `grid`×`grid` patch grid in row-major order,
/// after a zero row for [CLS]: the first half of each row encodes the patch's column, the second
/// its row, each as `sin(p·ωᵢ)` then `cos(p·ωᵢ)` with `ωᵢ = 10000^(−i/(dim/4))`.
///
/// # Shapes
/// - output: `[(1 + grid²)·dim]`, rows of `dim`
fn sine_cosine_positions(grid: usize, dim: usize) -> Vec<f32> {
    let quarter = dim / 4;
    let mut values = vec![0.0f32; (1 + grid * grid) * dim];
    for (patch, row) in values.chunks_mut(dim).skip(1).enumerate() {
        for (half, position) in [patch % grid, patch / grid].into_iter().enumerate() {
            for i in 0..quarter {
                let angle = position as f64 * 10_000f64.powf(-(i as f64) / quarter as f64);
                row[half * 2 * quarter + i] = angle.sin() as f32;
                row[half * 2 * quarter + quarter + i] = angle.cos() as f32;
            }
        }
    }
    values
}

/// Sets `attention`'s query, key and value weights and its output projection's weight (not the
/// biases) to mimetic factors.
fn mimetic_attention(attention: &mut MultiHeadSelfAttention, rng: &mut Pcg32) {
    let device = attention.qkv.weight.device();
    let [dim, qkv_width] = attention.qkv.weight.dims();
    assert_eq!(qkv_width, 3 * dim, "the QKV weight is [dim, 3·dim]");
    let head_dim = dim / attention.heads;
    // burn's Linear weights are [inputs, outputs], x·W; the QKV output's columns are
    // part·dim + head·head_dim + j (query, key, value).
    let mut qkv = vec![0.0f32; dim * qkv_width];
    let mut set_columns = |first: usize, factor: &DMatrix<f64>| {
        for row in 0..dim {
            for column in 0..factor.ncols() {
                qkv[row * qkv_width + first + column] = factor[(row, column)] as f32;
            }
        }
    };
    for head in 0..attention.heads {
        let (query, key) = factors(QUERY_KEY, dim, head_dim, rng);
        set_columns(head * head_dim, &query);
        set_columns(dim + head * head_dim, &key);
    }
    let (value, output) = factors(VALUE_OUTPUT, dim, dim, rng);
    set_columns(2 * dim, &value);
    let projection: Vec<f32> = (0..dim * dim).map(|index| output[(index % dim, index / dim)] as f32).collect();
    attention.qkv.weight = Param::from_tensor(Tensor::from_data(TensorData::new(qkv, [dim, qkv_width]), &device));
    attention.projection.weight = Param::from_tensor(Tensor::from_data(TensorData::new(projection, [dim, dim]), &device));
}

/// `(L, R)`, each `[dim, rank]`, with `L·Rᵀ` the best rank-`rank` approximation of a draw of
/// `target` (all of it at full rank).
fn factors(target: Target, dim: usize, rank: usize, rng: &mut Pcg32) -> (DMatrix<f64>, DMatrix<f64>) {
    let scale = target.noise / (dim as f64).sqrt();
    let draws: Vec<f64> = (0..dim * dim).map(|_| scale * rng.normal()).collect();
    let matrix = DMatrix::from_row_slice(dim, dim, &draws) + DMatrix::identity(dim, dim) * target.diagonal;
    // nalgebra's `svd` sorts the singular values from the largest down.
    let svd = matrix.svd(true, true);
    let (u, v_t) = (svd.u.expect("U was asked for"), svd.v_t.expect("Vᵀ was asked for"));
    let roots = svd.singular_values.rows(0, rank).map(f64::sqrt);
    let left = DMatrix::from_fn(dim, rank, |row, column| u[(row, column)] * roots[column]);
    let right = DMatrix::from_fn(dim, rank, |row, column| v_t[(column, row)] * roots[column]);
    (left, right)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weights(tensor: Tensor<2>) -> DMatrix<f64> {
        let [rows, columns] = tensor.dims();
        let values = tensor.into_data().try_to_vec::<f32>().expect("f32 weights");
        DMatrix::from_fn(rows, columns, |row, column| values[row * columns + column] as f64)
    }

    fn diagonal_mean(product: &DMatrix<f64>) -> f64 {
        product.diagonal().mean()
    }

    /// Each head's query–key product has a clearly positive diagonal and the value–output
    /// product is `α₂Z − β₂I` itself (full rank): diagonal about −0.4, the rest about 0.
    #[test]
    fn mimetic_products_have_the_papers_diagonals() {
        let device = Device::flex();
        let config = VitConfig::tiny();
        let model = fresh_model(&config, Initialisation::Mimetic, 3, &device);
        let (dim, head_dim) = (config.embed_dim, config.head_dim());
        for block in &model.blocks {
            let qkv = weights(block.attention.qkv.weight.val());
            for head in 0..config.heads {
                let query = qkv.columns(head * head_dim, head_dim);
                let key = qkv.columns(dim + head * head_dim, head_dim);
                let product = query * key.transpose();
                // A rank-32 part of 0.7·I + noise: a quarter of the directions at ≥ 0.7.
                assert!(diagonal_mean(&product) > 0.15, "head {head}: {}", diagonal_mean(&product));
            }
            let value_output = qkv.columns(2 * dim, dim) * weights(block.attention.projection.weight.val());
            assert!((diagonal_mean(&value_output) + 0.4).abs() < 0.02, "{}", diagonal_mean(&value_output));
            let off_diagonal = (value_output.sum() - value_output.trace()) / (dim * dim - dim) as f64;
            assert!(off_diagonal.abs() < 0.01, "{off_diagonal}");
        }
    }

    /// The default initialisation is burn's, which leaves no diagonal. (That the seed decides every
    /// weight is tests/training.rs's to check: it takes turns with burn's process-wide generator.)
    #[test]
    fn the_default_initialisation_is_burns() {
        let device = Device::flex();
        let config = VitConfig::tiny();
        let plain = weights(fresh_model(&config, Initialisation::Default, 1, &device).blocks[0].attention.qkv.weight.val());
        let product = plain.columns(0, config.head_dim()) * plain.columns(config.embed_dim, config.head_dim()).transpose();
        assert!(diagonal_mean(&product).abs() < 0.05, "{}", diagonal_mean(&product));
    }

    /// Neighbouring patches' positions are more alike than distant ones', and [CLS]'s is zero.
    #[test]
    fn sine_cosine_positions_are_alike_for_neighbours() {
        let (grid, dim) = (8, 128);
        let values = sine_cosine_positions(grid, dim);
        assert!(values[..dim].iter().all(|&value| value == 0.0));
        let patch = |row: usize, column: usize| &values[(1 + row * grid + column) * dim..][..dim];
        let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(a, b)| a * b).sum::<f32>();
        let centre = patch(3, 3);
        assert!(dot(centre, patch(3, 4)) > dot(centre, patch(3, 7)));
        assert!(dot(centre, patch(4, 3)) > dot(centre, patch(7, 3)));
        assert!((dot(centre, centre) - dim as f32 / 2.0).abs() < 1e-3, "sin² + cos² per pair");
    }

    #[test]
    fn names_round_trip() {
        for init in Initialisation::ALL {
            assert_eq!(Initialisation::from_name(init.name()), Some(init));
            assert_eq!(serde_json::to_string(&init).unwrap(), format!("\"{}\"", init.name()), "recipes record the same name");
        }
        assert_eq!(Initialisation::from_name("xavier"), None);
    }
}
