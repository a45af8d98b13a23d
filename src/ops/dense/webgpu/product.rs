//! The matrix products behind the dense layers on a GPU, forward and backward, in two kernel
//! families ([`KernelFamily`]): `tiled.wgsl` for GPUs and `blocked_4x4.wgsl` for software
//! renderers, which need its vec4 layouts (K and N multiples of 4) and otherwise take the tiled
//! kernel too. Both read either operand transposed in place, so no gradient waits for a
//! transposing copy, and split a long K (every token of the batch, in a weight's gradient) into
//! ranges whose partial products [`sum_partials`] adds. A bias, a GELU and a residual can be
//! applied as the output is written ([`Epilogue`]), each a launch fewer than after it.

use burn_cubecl::tensor::CubeTensor;

use crate::ops::webgpu::launch::{Grid, Serial, WgslKernel, bindable, empty_like, launch, on_software_adapter};
use crate::ops::webgpu::partials::{split_rows, sum_partials};
use crate::ops::webgpu::{KernelFamily, kernel_family};

/// What to multiply: `op(A) [batch, a_rows (+1), k] · op(B) [batch, k, n]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProductShape {
    pub batch: usize,
    /// Rows of op(A) that A holds.
    pub a_rows: usize,
    pub k: usize,
    pub n: usize,
    /// A is stored `[batch, k, a_rows]`, not `[batch, a_rows, k]`.
    pub a_transposed: bool,
    /// B is stored `[batch, n, k]`, not `[batch, k, n]`.
    pub b_transposed: bool,
    /// op(A) ends with a row of ones: the output's last row is the sum of B's rows.
    pub ones_row: bool,
}

impl ProductShape {
    /// `[batch, rows, k] · [batch, k, n]`, both stored as written.
    pub fn plain(batch: usize, rows: usize, k: usize, n: usize) -> Self {
        Self { batch, a_rows: rows, k, n, a_transposed: false, b_transposed: false, ones_row: false }
    }

    /// Rows of the output.
    pub fn rows(&self) -> usize {
        self.a_rows + usize::from(self.ones_row)
    }

    /// Whether the software kernel's vec4 loads fit this shape.
    fn fits_blocked(&self) -> bool {
        let vec4_along = if self.a_transposed { self.a_rows } else { self.k };
        self.n.is_multiple_of(4) && vec4_along.is_multiple_of(4) && (self.a_transposed || !self.ones_row)
    }
}

/// The kernel a product launches, with its split of K.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Plan {
    shape: ProductShape,
    tiled: bool,
    splits: usize,
    split_len: usize,
    bias: bool,
    /// GELU applied after the bias.
    gelu: bool,
    /// A `[rows, n]` tensor added to the output as it is written: a residual connection.
    residual: bool,
}

/// Enough workgroups of the tiled kernel to keep a large GPU's multiprocessors busy.
const WANTED_TILED_WORKGROUPS: usize = 1024;
/// The tiled kernel's output tile.
const TILE: usize = 64;

impl Plan {
    fn new(shape: ProductShape, family: KernelFamily, bias: bool, gelu: bool, residual: bool) -> Self {
        let tiled = family == KernelFamily::Hardware || !shape.fits_blocked();
        let wanted = if tiled {
            let tiles = shape.batch * shape.rows().div_ceil(TILE) * shape.n.div_ceil(TILE);
            WANTED_TILED_WORKGROUPS.div_ceil(tiles)
        } else {
            1 // a software renderer has a few cores, which one range per block already fills
        };
        // Split only a sum over the batch's rows (a transposed A is read along them); a product
        // over the features has a short K.
        let (splits, split_len) =
            if shape.a_transposed { split_rows(shape.k, wanted, 16) } else { (1, shape.k.next_multiple_of(16)) };
        Self { shape, tiled, splits, split_len, bias, gelu, residual }
    }

    /// The bias's and the residual's bindings, the WGSL that adds them and the GELU, where the
    /// plan has them; the output binds after them.
    fn epilogue_snippets(&self) -> [(&'static str, String); 7] {
        let (binding, add) = match (self.bias, self.tiled) {
            (false, _) => (String::new(), String::new()),
            (true, true) => (
                "@group(0) @binding(2) var<storage, read_write> bias: array<f32>;".into(),
                "value += bias[col];".into(),
            ),
            (true, false) => (
                "@group(0) @binding(2) var<storage, read_write> bias: array<vec4<f32>>;".into(),
                "let b4 = bias[col]; s0 += b4; s1 += b4; s2 += b4; s3 += b4;".into(),
            ),
        };
        let residual_at = 2 + usize::from(self.bias);
        let (residual_binding, add_residual) = match (self.residual, self.tiled) {
            (false, _) => (String::new(), String::new()),
            (true, true) => (
                format!("@group(0) @binding({residual_at}) var<storage, read_write> residual: array<f32>;"),
                "value += residual[base + row * N + col];".into(),
            ),
            (true, false) => (
                format!("@group(0) @binding({residual_at}) var<storage, read_write> residual: array<vec4<f32>>;"),
                "s0 += residual[o]; if (r0 + 1u < ROWS) { s1 += residual[o + N4]; } \
                 if (r0 + 2u < ROWS) { s2 += residual[o + 2u * N4]; } if (r0 + 3u < ROWS) { s3 += residual[o + 3u * N4]; }"
                    .into(),
            ),
        };
        let (functions, apply_gelu) = match (self.gelu, self.tiled) {
            (false, _) => (String::new(), String::new()),
            (true, true) => (crate::ops::gelu::webgpu::functions("f32"), "value = gelu(value);".into()),
            (true, false) => (
                crate::ops::gelu::webgpu::functions("vec4<f32>"),
                "s0 = gelu(s0); s1 = gelu(s1); s2 = gelu(s2); s3 = gelu(s3);".into(),
            ),
        };
        let out_at = residual_at + usize::from(self.residual);
        [
            ("bias_binding", binding),
            ("add_bias", add),
            ("gelu_functions", functions),
            ("apply_gelu", apply_gelu),
            ("residual_binding", residual_binding),
            ("add_residual", add_residual),
            ("out_binding", out_at.to_string()),
        ]
    }

    fn common_constants(&self) -> Vec<(&'static str, String)> {
        let s = &self.shape;
        let mut constants = vec![
            ("a_rows", s.a_rows.to_string()),
            ("rows", s.rows().to_string()),
            ("k", s.k.to_string()),
            ("splits", self.splits.to_string()),
            ("split_len", self.split_len.to_string()),
            ("a_transposed", s.a_transposed.to_string()),
            ("b_transposed", s.b_transposed.to_string()),
            ("ones_row", s.ones_row.to_string()),
        ];
        constants.extend(self.epilogue_snippets());
        constants
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct TiledProduct(Plan);

impl WgslKernel for TiledProduct {
    const TEMPLATE: &'static str = include_str!("tiled.wgsl");
    fn workgroup(&self) -> [u32; 3] {
        [16, 16, 1]
    }

    fn constants(&self) -> Vec<(&'static str, String)> {
        let mut constants = self.0.common_constants();
        constants.push(("n", self.0.shape.n.to_string()));
        constants
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct BlockedProduct(Plan);

impl WgslKernel for BlockedProduct {
    const TEMPLATE: &'static str = include_str!("blocked_4x4.wgsl");

    fn constants(&self) -> Vec<(&'static str, String)> {
        let mut constants = self.0.common_constants();
        constants.push(("n4", (self.0.shape.n / 4).to_string()));
        constants.push(("batch", self.0.shape.batch.to_string()));
        constants
    }
}

/// What a product does to its output as it writes it, in this order: `gelu(out + bias) + residual`.
#[derive(Debug, Default)]
pub struct Epilogue {
    /// `[n]`, added to every row.
    pub bias: Option<CubeTensor>,
    /// GELU, after the bias.
    pub gelu: bool,
    /// `[batch, rows, n]`, added element by element: a residual connection.
    pub residual: Option<CubeTensor>,
}

impl Epilogue {
    /// The product alone.
    pub fn none() -> Self {
        Self::default()
    }

    /// A dense layer's: the bias added.
    pub fn bias(bias: CubeTensor) -> Self {
        Self { bias: Some(bias), ..Self::default() }
    }
}

/// `op(A) · op(B)`, as `shape` says, summed over K's ranges, with `epilogue` applied as it is
/// written (only to a product whose K is not split): `[batch, rows, n]`.
pub fn product(a: CubeTensor, b: CubeTensor, shape: ProductShape, epilogue: Epilogue) -> CubeTensor {
    let Epilogue { bias, gelu, residual } = epilogue;
    let family = kernel_family(|| on_software_adapter(&a));
    let plan = Plan::new(shape, family, bias.is_some(), gelu, residual.is_some());
    assert!(!((plan.bias || plan.gelu || plan.residual) && plan.splits > 1), "an epilogue is applied to a product over the features, not split");
    let (a, b, bias, residual) = (bindable(a), bindable(b), bias.map(bindable), residual.map(bindable));
    let rows = shape.rows();
    let out = empty_like(&a, &[shape.batch * plan.splits, rows, shape.n]);
    let mut buffers = vec![&a, &b];
    buffers.extend(bias.as_ref());
    buffers.extend(residual.as_ref());
    buffers.push(&out);
    let steps = plan.split_len.min(shape.k) as u64;
    let serial = Serial { steps, batch_sum: if shape.a_transposed { steps } else { 0 } };
    if plan.tiled {
        let grid = Grid::Xyz(shape.n.div_ceil(TILE) as u32, rows.div_ceil(TILE) as u32, (shape.batch * plan.splits) as u32);
        launch(TiledProduct(plan), grid, &buffers, &[], serial);
    } else {
        let blocks = shape.batch * plan.splits * rows.div_ceil(4) * (shape.n / 4);
        launch(BlockedProduct(plan), Grid::covering(&BlockedProduct(plan), blocks as u64), &buffers, &[], serial);
    }
    if plan.splits == 1 {
        return out;
    }
    let summed = sum_partials(&out, shape.batch, plan.splits, rows * shape.n);
    crate::ops::webgpu::launch::reshaped(summed, &[shape.batch, rows, shape.n])
}
