//! The matrix products behind the dense layers on a GPU, forward and backward, in two kernel
//! families ([`KernelFamily`]): `tiled.wgsl` for GPUs, its [`Tile`] by the product's size, and
//! `blocked_4x4.wgsl` for software renderers, which need its vec4 layouts (K and N multiples of
//! 4) and otherwise take the tiled kernel too. Both read either operand transposed in place, so
//! no gradient waits for a transposing copy, and split a long K (every token of the batch, in a
//! weight's gradient) into ranges whose partial products [`sum_partials`] adds. A bias, GELU (keeping its input), GELU's
//! slope and a residual can be applied as the output is written ([`Epilogue`]), each a launch
//! fewer than after it.

use std::cell::Cell;

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

    /// Whether the software kernel's vec4 loads fit this shape, and it reads these layouts (with A
    /// transposed, B as stored; with A as stored, no row of ones).
    fn fits_blocked(&self) -> bool {
        let vec4_along = if self.a_transposed { self.a_rows } else { self.k };
        let layouts = if self.a_transposed { !self.b_transposed } else { !self.ones_row };
        self.n.is_multiple_of(4) && vec4_along.is_multiple_of(4) && layouts
    }
}

/// The tiled kernel's output tile, and each invocation's block of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tile {
    /// 64×64, a 4×4 block an invocation: four times the workgroups of [`Tile::Wide`], for a
    /// product too small to fill a GPU with those.
    Narrow,
    /// 128×128, an 8×8 block an invocation: two vec4 reads from workgroup memory per 16
    /// multiply-adds become four per 64.
    Wide,
}

impl Tile {
    fn side(self) -> usize {
        64 * self.vec4s()
    }

    /// An invocation's block's side, in vec4s.
    fn vec4s(self) -> usize {
        match self {
            Tile::Narrow => 1,
            Tile::Wide => 2,
        }
    }
}

thread_local! {
    /// The tile every tiled product of this thread takes; `None`: chosen by the product's size.
    static TILE_CHOICE: Cell<Option<Tile>> = const { Cell::new(None) };
}

/// Makes every tiled product this thread launches from now on take `tile` (`None`: by its size,
/// [`Plan::new`]). For the checks, which run both tiles at shapes of a few rows, and the
/// benchmark, which times both on a GPU.
pub fn set_product_tile(tile: Option<Tile>) {
    TILE_CHOICE.with(|chosen| chosen.set(tile));
}

/// The kernel a product launches, with its split of K.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Plan {
    shape: ProductShape,
    tiled: bool,
    tile: Tile,
    splits: usize,
    split_len: usize,
    bias: bool,
    /// The value after the bias written to a second output, GELU's input for its backward pass.
    keep_pre: bool,
    /// GELU applied after the bias.
    gelu: bool,
    /// The output multiplied by GELU's slope at a bound `[rows, n]` tensor: a gradient through
    /// GELU.
    slope: bool,
    /// A `[rows, n]` tensor added to the output as it is written: a residual connection.
    residual: bool,
}

/// Enough workgroups of the tiled kernel to keep a large GPU's multiprocessors busy.
const WANTED_TILED_WORKGROUPS: usize = 1024;
/// The fewest workgroups a product takes the wide tile with. Each does four times a narrow
/// one's work, so with fewer a GPU of a hundred or more multiprocessors would run under four
/// each and idle through the last; the narrow tile's four times as many fill it instead. At
/// the tiny model's batch 1024, 45 of a training step's 53 products have at least this many
/// (all but a few weight gradients and the head's); at batch 256 none (its forward products
/// have 130–390).
const WIDE_TILE_WORKGROUPS: usize = 512;

impl Plan {
    fn new(shape: ProductShape, family: KernelFamily, epilogue: &Epilogue) -> Self {
        let tiled = family == KernelFamily::Hardware || !shape.fits_blocked();
        if !tiled {
            // A software renderer has a few cores, which one range per block already fills.
            return Self::with_split(shape, false, Tile::Narrow, 1, epilogue);
        }
        let plan = |tile: Tile| {
            // The row of ones is written beside the tiles, not by one of its own.
            let tiles = shape.batch * shape.a_rows.div_ceil(tile.side()) * shape.n.div_ceil(tile.side());
            Self::with_split(shape, true, tile, WANTED_TILED_WORKGROUPS.div_ceil(tiles), epilogue)
        };
        match TILE_CHOICE.with(Cell::get) {
            Some(tile) => plan(tile),
            None => {
                let wide = plan(Tile::Wide);
                if wide.workgroups() >= WIDE_TILE_WORKGROUPS { wide } else { plan(Tile::Narrow) }
            }
        }
    }

    /// The plan with K split into up to `wanted` ranges.
    fn with_split(shape: ProductShape, tiled: bool, tile: Tile, wanted: usize, epilogue: &Epilogue) -> Self {
        // Split only a sum over the batch's rows (a transposed A is read along them); a product
        // over the features has a short K.
        let (splits, split_len) =
            if shape.a_transposed { split_rows(shape.k, wanted, 16) } else { (1, shape.k.next_multiple_of(16)) };
        Self {
            shape,
            tiled,
            tile,
            splits,
            split_len,
            bias: epilogue.bias.is_some(),
            keep_pre: epilogue.keep_pre,
            gelu: epilogue.gelu,
            slope: epilogue.slope_at.is_some(),
            residual: epilogue.residual.is_some(),
        }
    }

    /// The tiled kernel's grid: the output's tiles (its row of ones beside them), for each pair
    /// and range of K.
    fn tiled_grid(&self) -> [usize; 3] {
        let (side, shape) = (self.tile.side(), &self.shape);
        [shape.n.div_ceil(side), shape.a_rows.div_ceil(side), shape.batch * self.splits]
    }

    fn workgroups(&self) -> usize {
        self.tiled_grid().iter().product()
    }

    fn has_epilogue(&self) -> bool {
        self.bias || self.keep_pre || self.gelu || self.slope || self.residual
    }

    /// The epilogue's bindings (after A and B, before the output, in the order of [`Epilogue`]'s
    /// fields) and its WGSL, for the family's kernel: the tiled kernel writes one `value` at
    /// `base + row * N + col`, the blocked one four rows of vec4s `s0`..`s3` from `o`.
    fn epilogue_snippets(&self) -> [(&'static str, String); 11] {
        let (array, mut at) = (if self.tiled { "array<f32>" } else { "array<vec4<f32>>" }, 2);
        let mut bind = |present: bool, name: &str| {
            if !present {
                return String::new();
            }
            at += 1;
            format!("@group(0) @binding({}) var<storage, read_write> {name}: {array};", at - 1)
        };
        let bindings = [
            ("bias_binding", bind(self.bias, "bias")),
            ("slope_binding", bind(self.slope, "slope_at")),
            ("residual_binding", bind(self.residual, "residual")),
            ("pre_binding", bind(self.keep_pre, "pre")),
        ];
        // The blocked kernel's four rows, the last block's missing ones skipped.
        let rows = |statement: &dyn Fn(&str, &str) -> String| {
            let offsets = ["o", "o + N4", "o + 2u * N4", "o + 3u * N4"];
            (0..4)
                .map(|row| {
                    let line = statement(&format!("s{row}"), offsets[row]);
                    if row == 0 { line } else { format!("if (r0 + {row}u < ROWS) {{ {line} }}") }
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        let tiled = self.tiled;
        let snippet = |present: bool, one: &str, four: &dyn Fn(&str, &str) -> String| match (present, tiled) {
            (false, _) => String::new(),
            (true, true) => one.to_string(),
            (true, false) => rows(four),
        };
        let add_bias = match (self.bias, self.tiled) {
            (false, _) => String::new(),
            (true, true) => "value += bias[col];".into(),
            (true, false) => "let b4 = bias[col]; s0 += b4; s1 += b4; s2 += b4; s3 += b4;".into(),
        };
        let functions = if self.gelu || self.slope {
            crate::ops::gelu::webgpu::functions(if self.tiled { "f32" } else { "vec4<f32>" })
        } else {
            String::new()
        };
        let [bias_binding, slope_binding, residual_binding, pre_binding] = bindings;
        [
            bias_binding,
            slope_binding,
            residual_binding,
            pre_binding,
            ("out_binding", at.to_string()),
            ("gelu_functions", functions),
            ("add_bias", add_bias),
            ("keep_pre", snippet(self.keep_pre, "pre[base + row * N + col] = value;", &|s, o| format!("pre[{o}] = {s};"))),
            ("apply_gelu", snippet(self.gelu, "value = gelu(value);", &|s, _| format!("{s} = gelu({s});"))),
            (
                "apply_slope",
                snippet(self.slope, "value *= gelu_slope(slope_at[base + row * N + col]);", &|s, o| format!("{s} *= gelu_slope(slope_at[{o}]);")),
            ),
            ("add_residual", snippet(self.residual, "value += residual[base + row * N + col];", &|s, o| format!("{s} += residual[{o}];"))),
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
        let vec4s = self.0.tile.vec4s();
        let (side4, depth) = (self.0.tile.side() / 4, 16 / vec4s);
        constants.push(("n", self.0.shape.n.to_string()));
        constants.push(("block4", vec4s.to_string()));
        constants.push(("tile_vec4s", (depth * (side4 + 1)).to_string()));
        constants.push(("sums", (4 * vec4s * vec4s).to_string()));
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

/// What a product does to its output as it writes it, in this order: the bias added, the
/// value kept, GELU, the slope multiplied, the residual added.
#[derive(Debug, Default)]
pub struct Epilogue {
    /// `[n]`, added to every row.
    pub bias: Option<CubeTensor>,
    /// The value after the bias written to a second output, [`product_keeping_pre`]'s: GELU's
    /// input, which its backward pass needs.
    pub keep_pre: bool,
    /// GELU, after the bias.
    pub gelu: bool,
    /// `[batch, rows, n]`: the output multiplied by GELU's derivative at it, a gradient through
    /// GELU.
    pub slope_at: Option<CubeTensor>,
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
    assert!(!epilogue.keep_pre, "a kept value is product_keeping_pre's second output");
    run(a, b, shape, epilogue).0
}

/// [`product`] with `epilogue.keep_pre`: the output and the value before GELU.
pub fn product_keeping_pre(a: CubeTensor, b: CubeTensor, shape: ProductShape, epilogue: Epilogue) -> (CubeTensor, CubeTensor) {
    let (out, pre) = run(a, b, shape, Epilogue { keep_pre: true, ..epilogue });
    (out, pre.expect("a kept value"))
}

fn run(a: CubeTensor, b: CubeTensor, shape: ProductShape, epilogue: Epilogue) -> (CubeTensor, Option<CubeTensor>) {
    let ((a, a_flipped), (b, b_flipped)) = (as_stored(a), as_stored(b));
    let shape = ProductShape { a_transposed: shape.a_transposed ^ a_flipped, b_transposed: shape.b_transposed ^ b_flipped, ..shape };
    let family = kernel_family(|| on_software_adapter(&a));
    let plan = Plan::new(shape, family, &epilogue);
    assert!(!(plan.has_epilogue() && plan.splits > 1), "an epilogue is applied to a product over the features, not split");
    assert!(!(plan.has_epilogue() && shape.ones_row), "an epilogue is applied to a product without a row of ones");
    let Epilogue { bias, slope_at, residual, .. } = epilogue;
    let (a, b) = (bindable(a), bindable(b));
    let [bias, slope_at, residual] = [bias, slope_at, residual].map(|tensor| tensor.map(bindable));
    let rows = shape.rows();
    let out = empty_like(&a, &[shape.batch * plan.splits, rows, shape.n]);
    let pre = plan.keep_pre.then(|| empty_like(&a, &[shape.batch, rows, shape.n]));
    let mut buffers = vec![&a, &b];
    buffers.extend(bias.as_ref());
    buffers.extend(slope_at.as_ref());
    buffers.extend(residual.as_ref());
    buffers.extend(pre.as_ref());
    buffers.push(&out);
    let steps = plan.split_len.min(shape.k) as u64;
    let serial = Serial { steps, batch_sum: if shape.a_transposed { steps } else { 0 } };
    if plan.tiled {
        let [x, y, z] = plan.tiled_grid().map(|count| count as u32);
        let grid = Grid::Xyz(x, y, z);
        launch(TiledProduct(plan), grid, &buffers, &[], serial);
    } else {
        let blocks = shape.batch * plan.splits * rows.div_ceil(4) * (shape.n / 4);
        launch(BlockedProduct(plan), Grid::covering(&BlockedProduct(plan), blocks as u64), &buffers, &[], serial);
    }
    if plan.splits == 1 {
        return (out, pre);
    }
    let summed = sum_partials(&out, shape.batch, plan.splits, rows * shape.n);
    (crate::ops::webgpu::launch::reshaped(summed, &[shape.batch, rows, shape.n]), pre)
}

/// `operand` as its buffer holds it, and whether that is its transpose: a transposed view of a
/// contiguous tensor, as burn's `transpose` makes without a copy (the patch embedding's kernel),
/// is read in place by flipping its layout in the product, where [`bindable`] would copy it.
fn as_stored(operand: CubeTensor) -> (CubeTensor, bool) {
    use burn::backend::ops::FloatTensorOps;
    let rank = operand.meta.num_dims();
    if rank >= 2 && !operand.is_contiguous() {
        let swapped = burn::backend::Cube::float_swap_dims(operand.clone(), rank - 2, rank - 1);
        if swapped.is_contiguous() {
            return (swapped, true);
        }
    }
    (operand, false)
}
