//! [`FusedLayerNorm`] on a GPU: one invocation per row forward (`forward.wgsl`) and backward
//! (`backward_rows.wgsl`, which also keeps each row's statistics), and the scale's and shift's
//! gradients summed over ranges of rows in parallel (`backward_columns.wgsl`) and then over the
//! ranges ([`sum_partials`]). The same kernels serve both kernel families: a row's 128 values are
//! a short loop on either. A width that is no multiple of 4 takes burn's composition. Normalising
//! every n-th row only (each image's [CLS]) reads the rows where they lie and writes the zeros of
//! the rows between into the input's gradient itself.

use burn::backend::Cube;
use burn::backend::tensor::FloatTensor;

use super::FusedLayerNorm;
use crate::ops::webgpu::launch::{Grid, Serial, WgslKernel, bindable, dims, empty_like, is_f32, launch, on_software_adapter, reshaped, row};
use crate::ops::webgpu::partials::{split_rows, sum_partials};
use crate::ops::webgpu::{KernelFamily, kernel_family};

/// Rows and width of a normalisation, and its ε (as bits, so the kernel is hashable).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Rows {
    /// The rows normalised: every `every`-th of the input's.
    rows: usize,
    every: usize,
    width: usize,
    epsilon_bits: u32,
}

impl Rows {
    fn constants(&self) -> Vec<(&'static str, String)> {
        vec![
            ("rows", self.rows.to_string()),
            ("every", self.every.to_string()),
            ("width4", (self.width / 4).to_string()),
            ("epsilon", format!("{:?}", f32::from_bits(self.epsilon_bits))),
            ("statistics", include_str!("statistics.wgsl").into()),
        ]
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct LayerNormForward(Rows);

impl WgslKernel for LayerNormForward {
    const TEMPLATE: &'static str = include_str!("forward.wgsl");
    fn constants(&self) -> Vec<(&'static str, String)> {
        self.0.constants()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct LayerNormBackwardRows(Rows);

impl WgslKernel for LayerNormBackwardRows {
    const TEMPLATE: &'static str = include_str!("backward_rows.wgsl");
    fn constants(&self) -> Vec<(&'static str, String)> {
        self.0.constants()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct LayerNormBackwardColumns {
    rows: Rows,
    ranges: usize,
    range: usize,
}

impl WgslKernel for LayerNormBackwardColumns {
    const TEMPLATE: &'static str = include_str!("backward_columns.wgsl");
    fn workgroup(&self) -> [u32; 3] {
        [256, 1, 1]
    }
    fn constants(&self) -> Vec<(&'static str, String)> {
        let mut constants = self.rows.constants();
        constants.extend([("ranges", self.ranges.to_string()), ("range", self.range.to_string())]);
        constants
    }
}

/// Enough workgroups of the columns' pass to fill a GPU.
const WANTED_COLUMN_WORKGROUPS: usize = 512;

/// The widest row the columns' pass takes: 256 invocations, one per quad of columns.
pub const MAX_WIDTH: usize = 1024;

fn rows_of(x: &FloatTensor<Cube>, epsilon: f64, every: usize) -> Rows {
    let dims = dims(x);
    assert_eq!(dims.len(), 2, "a layer norm's input is [rows, width]");
    assert!(
        dims[1].is_multiple_of(4) && dims[1] <= MAX_WIDTH && is_f32(x),
        "the GPU layer norm takes f32 rows of a multiple of 4 up to {MAX_WIDTH} (see super::layer_norm)"
    );
    assert!(every > 0 && dims[0].is_multiple_of(every), "{} rows in groups of {every}", dims[0]);
    Rows { rows: dims[0] / every, every, width: dims[1], epsilon_bits: (epsilon as f32).to_bits() }
}

impl FusedLayerNorm for Cube {
    fn fused_layer_norm(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        epsilon: f64,
        every: usize,
    ) -> FloatTensor<Self> {
        let shape = rows_of(&x, epsilon, every);
        let (x, gamma, beta) = (bindable(x), bindable(gamma), bindable(beta));
        let out = empty_like(&x, &[shape.rows, shape.width]);
        let serial = Serial { steps: (shape.width / 4) as u64, batch_sum: 0 };
        let grid = Grid::covering(&LayerNormForward(shape), shape.rows as u64);
        launch(LayerNormForward(shape), grid, &[&x, &gamma, &beta, &out], &[], serial);
        out
    }

    fn fused_layer_norm_backward(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        epsilon: f64,
        every: usize,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        let shape = rows_of(&x, epsilon, every);
        let family = kernel_family(|| on_software_adapter(&x));
        let (x, gamma, grad) = (bindable(x), bindable(gamma), bindable(grad));
        let Rows { rows, width, .. } = shape;

        let grad_x = empty_like(&x, &[rows * every, width]);
        let statistics = empty_like(&x, &[rows, 2]);
        let serial = Serial { steps: (width / 4) as u64, batch_sum: 0 };
        let grid = Grid::covering(&LayerNormBackwardRows(shape), (rows * every) as u64);
        launch(LayerNormBackwardRows(shape), grid, &[&x, &gamma, &grad, &grad_x, &statistics], &[], serial);

        let wanted = match family {
            KernelFamily::Software => 1,
            KernelFamily::Hardware => WANTED_COLUMN_WORKGROUPS,
        };
        let (ranges, range) = split_rows(rows, wanted, 1);
        let parts = empty_like(&x, &[ranges, 2, width]);
        let columns = LayerNormBackwardColumns { rows: shape, ranges, range };
        // An invocation adds every (256/quads)-th row of its range, then one adds those sums.
        let row_lanes = 256 / (width / 4);
        let sum = range.div_ceil(row_lanes) + row_lanes;
        let serial = Serial { steps: sum as u64, batch_sum: sum as u64 };
        launch(columns, Grid::Linear(ranges as u64), &[&x, &grad, &statistics, &parts], &[], serial);
        let both = if ranges == 1 { parts } else { sum_partials(&parts, 1, ranges, 2 * width) };
        let both = reshaped(both, &[2, width]); // [∂gamma; ∂beta]
        (grad_x, row(&both, 0, width), row(&both, 1, width))
    }
}
