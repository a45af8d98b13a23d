//! A dense layer's three products on `f32` slices over all the tokens of the batch, split over the
//! pool by rows (one `gemm` call per thread), with the bias folded into the forward product's
//! output.

use crate::ops::cpu::{parallel, tensor};
use crate::ops::cpu::product::Product;

/// Fewer rows than this per block leave a thread too little of a product to be worth waking it.
const MIN_BLOCK_ROWS: usize = 64;

/// Rows per block when a product is split over the pool by its rows: one block per thread, each
/// block one serial `gemm` call, so the whole product is one fork and join of the pool. (gemm's
/// own threading forks twice per slice of the sum, and a weight gradient sums over every row of
/// the batch: in the page each fork wakes web workers that had gone to sleep.)
fn row_block(rows: usize) -> usize {
    let blocks = parallel::threads().min(rows / MIN_BLOCK_ROWS).max(1);
    rows.div_ceil(blocks).max(1)
}

/// `out = lhs·rhs` (`out += lhs·rhs` when `accumulate`) for row-major `lhs [rows, k]` and
/// `out [rows, n]`, and `rhs [k, n]` read with its `(row, column)` strides: one product per block
/// of rows.
fn rows_times_matrix(
    lhs: &[f32],
    k: usize,
    (rhs, rhs_strides): (&[f32], (usize, usize)),
    n: usize,
    accumulate: bool,
    out: &mut [f32],
) {
    let rows = lhs.len() / k;
    assert_eq!((lhs.len(), rhs.len(), out.len()), (rows * k, k * n, rows * n), "lengths");
    let block = row_block(rows);
    parallel::for_each(lhs.chunks(block * k).zip(out.chunks_mut(block * n)), |(lhs, out)| {
        // SAFETY: the lengths are checked above, each block is whole rows of `lhs` and `out`,
        // and both callers' `rhs` strides (row-major or swapped) stay within its k·n values.
        unsafe {
            Product::new(lhs.len() / k, n, k).run(
                out.as_mut_ptr(),
                (n, 1),
                accumulate,
                lhs.as_ptr(),
                (k, 1),
                rhs.as_ptr(),
                rhs_strides,
                1.0,
            )
        }
    });
}

/// The sizes of one dense layer call: `rows` input vectors of `inputs` values, `outputs` out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DenseShape {
    pub rows: usize,
    pub inputs: usize,
    pub outputs: usize,
}

/// `x·W + b`, starting from the bias row by row (no zeroing pass) and accumulating the product.
///
/// # Shapes
/// - x: `[rows, inputs]`, weight: `[inputs, outputs]`, bias: `[outputs]`
/// - output: `[rows, outputs]`
pub fn forward(shape: DenseShape, x: &[f32], weight: &[f32], bias: &[f32]) -> Vec<f32> {
    let DenseShape { rows, inputs, outputs } = shape;
    assert_eq!(
        (x.len(), weight.len(), bias.len()),
        (rows * inputs, inputs * outputs, outputs),
        "operand lengths"
    );
    let mut out = tensor::repeated_rows(bias, rows);
    rows_times_matrix(x, inputs, (weight, (outputs, 1)), outputs, true, &mut out);
    out
}

/// `∂x = ∂out·Wᵀ`.
///
/// # Shapes
/// - grad: `[rows, outputs]`, weight: `[inputs, outputs]`
/// - out: `[rows, inputs]`
pub fn input_gradient(shape: DenseShape, grad: &[f32], weight: &[f32], out: &mut [f32]) {
    let DenseShape { rows, inputs, outputs } = shape;
    assert_eq!(
        (grad.len(), weight.len(), out.len()),
        (rows * outputs, inputs * outputs, rows * inputs),
        "lengths"
    );
    // Wᵀ is W read with its strides swapped.
    rows_times_matrix(grad, outputs, (weight, (1, outputs)), inputs, false, out);
}

/// `∂W = xᵀ·∂out`, the sum over all rows.
///
/// # Shapes
/// - x: `[rows, inputs]`, grad: `[rows, outputs]`
/// - out: `[inputs, outputs]`
pub fn weight_gradient(shape: DenseShape, x: &[f32], grad: &[f32], out: &mut [f32]) {
    let DenseShape { rows, inputs, outputs } = shape;
    assert_eq!(
        (x.len(), grad.len(), out.len()),
        (rows * inputs, rows * outputs, inputs * outputs),
        "lengths"
    );
    // Each block of rows sums into a partial gradient of its own; the partials are added after.
    let block = row_block(rows);
    let partials = parallel::map(x.chunks(block * inputs).zip(grad.chunks(block * outputs)), |(x, grad)| {
        let mut partial = vec![0.0f32; inputs * outputs];
        // SAFETY: as in `rows_times_matrix`; xᵀ is x read with its strides swapped.
        unsafe {
            Product::new(inputs, outputs, x.len() / inputs).run(
                partial.as_mut_ptr(),
                (outputs, 1),
                false,
                x.as_ptr(),
                (1, inputs),
                grad.as_ptr(),
                (outputs, 1),
                1.0,
            )
        }
        partial
    });
    out.fill(0.0);
    for partial in partials {
        out.iter_mut().zip(partial).for_each(|(out, value)| *out += value);
    }
}

/// `∂b = Σ_rows ∂out`.
///
/// # Shapes
/// - grad: `[rows, outputs]`
/// - out: `[outputs]`
pub fn bias_gradient(shape: DenseShape, grad: &[f32], out: &mut [f32]) {
    let DenseShape { rows, outputs, .. } = shape;
    assert_eq!((grad.len(), out.len()), (rows * outputs, outputs), "lengths");
    let block = parallel::block_len(rows) * outputs;
    let partial_sums = parallel::map(grad.chunks(block), |rows| {
        let mut sums = vec![0.0f32; outputs];
        for row in rows.chunks(outputs) {
            sums.iter_mut().zip(row).for_each(|(sum, g)| *sum += g);
        }
        sums
    });
    out.fill(0.0);
    for sums in partial_sums {
        out.iter_mut().zip(sums).for_each(|(out, sum)| *out += sum);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::random_values;

    /// Few enough rows for one block, and enough for one per thread where there are threads.
    const SHAPES: [DenseShape; 2] = [
        DenseShape { rows: 7, inputs: 5, outputs: 3 },
        DenseShape { rows: 2 * MIN_BLOCK_ROWS + 5, inputs: 6, outputs: 4 },
    ];

    fn assert_close(ours: &[f32], expected: &[f32], tolerance: f32) {
        for (i, (a, e)) in ours.iter().zip(expected).enumerate() {
            assert!((a - e).abs() <= tolerance, "[{i}]: {a} vs {e}");
        }
    }

    /// Each product against its definition, element by element.
    #[test]
    fn products_match_their_definitions() {
        for shape in SHAPES {
            let DenseShape { rows, inputs, outputs } = shape;
            let (x, weight, bias, grad) = (
                random_values(rows * inputs, 1, 1.0),
                random_values(inputs * outputs, 2, 1.0),
                random_values(outputs, 3, 1.0),
                random_values(rows * outputs, 4, 1.0),
            );
            let x_at = |r: usize, i: usize| x[r * inputs + i];
            let w_at = |i: usize, o: usize| weight[i * outputs + o];
            let g_at = |r: usize, o: usize| grad[r * outputs + o];

            let out = forward(shape, &x, &weight, &bias);
            let expected: Vec<f32> = (0..rows * outputs)
                .map(|at| {
                    bias[at % outputs]
                        + (0..inputs)
                            .map(|i| x_at(at / outputs, i) * w_at(i, at % outputs))
                            .sum::<f32>()
                })
                .collect();
            assert_close(&out, &expected, 1e-5);

            let mut out = vec![f32::NAN; rows * inputs];
            input_gradient(shape, &grad, &weight, &mut out);
            let expected: Vec<f32> = (0..rows * inputs)
                .map(|at| (0..outputs).map(|o| g_at(at / inputs, o) * w_at(at % inputs, o)).sum())
                .collect();
            assert_close(&out, &expected, 1e-5);

            // Sums over every row, in blocks: a rounding error that grows with their count.
            let mut out = vec![f32::NAN; inputs * outputs];
            weight_gradient(shape, &x, &grad, &mut out);
            let expected: Vec<f32> = (0..inputs * outputs)
                .map(|at| (0..rows).map(|r| x_at(r, at / outputs) * g_at(r, at % outputs)).sum())
                .collect();
            assert_close(&out, &expected, 1e-6 * rows as f32);

            let mut out = vec![f32::NAN; outputs];
            bias_gradient(shape, &grad, &mut out);
            let expected: Vec<f32> =
                (0..outputs).map(|o| (0..rows).map(|r| g_at(r, o)).sum()).collect();
            assert_close(&out, &expected, 1e-6 * rows as f32);
        }
    }

    /// The second shape is split into blocks wherever the pool has more than one thread.
    #[test]
    fn rows_split_into_one_block_per_thread() {
        assert_eq!(row_block(SHAPES[0].rows), SHAPES[0].rows);
        let rows = SHAPES[1].rows;
        assert_eq!(row_block(rows), rows.div_ceil(parallel::threads().min(2)));
    }
}
