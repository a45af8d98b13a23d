//! The second pass of every sum over the batch's rows on the GPU: a weight's and a bias's
//! gradient, a layer norm's scale and shift gradients. The first pass (in each operation's
//! kernel) splits the rows into ranges and writes one partial sum per range; this adds the
//! partial sums, in parallel over the values summed.

use burn_cubecl::tensor::CubeTensor;

use super::launch::{Grid, Serial, WgslKernel, empty_like, launch};

/// The fewest rows one range of a split sum covers: shorter ranges would cost more in partial
/// sums written and read than they gain in parallelism.
pub const MIN_RANGE: usize = 256;
/// The most values one invocation adds in sequence, in either pass, of a sum over the batch.
pub const MAX_SERIAL_SUM: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Sums {
    outer: usize,
    splits: usize,
    inner: usize,
}

impl Sums {
    fn constants(&self) -> Vec<(&'static str, String)> {
        vec![("outer", self.outer.to_string()), ("splits", self.splits.to_string()), ("inner", self.inner.to_string())]
    }
}

/// An invocation per output value, each adding its partial sums in turn: for many outputs (a
/// weight's gradient), whose invocations fill the GPU.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SumPartials(Sums);

impl WgslKernel for SumPartials {
    const TEMPLATE: &'static str = include_str!("partials.wgsl");
    fn constants(&self) -> Vec<(&'static str, String)> {
        self.0.constants()
    }
}

/// A workgroup per output value, its invocations splitting the partial sums between them: for a
/// few outputs and many partial sums (a layer norm's), which one invocation each would add slowly.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SumPartialsDeep(Sums);

impl WgslKernel for SumPartialsDeep {
    const TEMPLATE: &'static str = include_str!("partials_deep.wgsl");
    fn constants(&self) -> Vec<(&'static str, String)> {
        self.0.constants()
    }
}

/// Fewer outputs than this, over more partial sums than [`DEEP_SPLITS`], take a workgroup each.
const DEEP_OUTPUTS: usize = 16_384;
const DEEP_SPLITS: usize = 32;

/// `parts [outer, splits, inner]` summed over `splits`: `[outer, inner]`.
pub fn sum_partials(parts: &CubeTensor, outer: usize, splits: usize, inner: usize) -> CubeTensor {
    assert!(splits <= MAX_SERIAL_SUM, "{splits} partial sums: more than one invocation may add");
    let out = empty_like(parts, &[outer, inner]);
    let sums = Sums { outer, splits, inner };
    let outputs = outer * inner;
    if outputs < DEEP_OUTPUTS && splits > DEEP_SPLITS {
        // A lane adds its share of the partial sums, then six halvings add the lanes'.
        let serial = Serial { steps: splits.div_ceil(64) as u64 + 6, batch_sum: splits.div_ceil(64) as u64 + 6 };
        launch(SumPartialsDeep(sums), Grid::Linear(outputs as u64), &[parts, &out], &[], serial);
    } else {
        let kernel = SumPartials(sums);
        let serial = Serial { steps: splits as u64, batch_sum: splits as u64 };
        let grid = Grid::covering(&kernel, outputs as u64);
        launch(kernel, grid, &[parts, &out], &[], serial);
    }
    out
}

/// How many ranges to split a sum over `rows` into, so that neither pass adds more than
/// [`MAX_SERIAL_SUM`] values in sequence and, where `wanted` asks for more parallelism, up to
/// `wanted` ranges of at least [`MIN_RANGE`] rows. Returns `(ranges, rows per range)`, the
/// length a multiple of `multiple`.
pub fn split_rows(rows: usize, wanted: usize, multiple: usize) -> (usize, usize) {
    let fewest = rows.div_ceil(MAX_SERIAL_SUM);
    let most_useful = rows.div_ceil(MIN_RANGE).max(1);
    let ranges = wanted.min(most_useful).max(fewest).max(1);
    let length = rows.div_ceil(ranges).next_multiple_of(multiple).max(multiple);
    (rows.div_ceil(length).max(1), length)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_rows_bounds_both_passes() {
        // A weight gradient at batch 1024: 66,560 rows.
        for wanted in [1, 17, 64, 1000] {
            let (ranges, length) = split_rows(66_560, wanted, 16);
            assert!(length <= MAX_SERIAL_SUM && ranges <= MAX_SERIAL_SUM, "{wanted}: {ranges} × {length}");
            assert!(ranges * length >= 66_560 && (ranges - 1) * length < 66_560);
            assert_eq!(length % 16, 0);
        }
        // Small batches stay in one range unless asked, and never below MIN_RANGE rows each.
        assert_eq!(split_rows(520, 1, 16), (1, 528));
        assert_eq!(split_rows(520, 100, 16).0, 3);
    }
}
