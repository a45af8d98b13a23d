//! A dense layer's three products on `f32` slices, each one `gemm` call over all the tokens of
//! the batch, with the bias folded into the forward product's output.

use crate::ops::cpu::{parallel, tensor};
use crate::ops::cpu::product::Product;

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
    // SAFETY: the lengths are checked above and the strides are the row-major ones.
    unsafe {
        Product::new(rows, outputs, inputs).run(
            out.as_mut_ptr(),
            (outputs, 1),
            true,
            x.as_ptr(),
            (inputs, 1),
            weight.as_ptr(),
            (outputs, 1),
            1.0,
        )
    }
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
    // SAFETY: as in `forward`; Wᵀ is W read with its strides swapped.
    unsafe {
        Product::new(rows, inputs, outputs).run(
            out.as_mut_ptr(),
            (inputs, 1),
            false,
            grad.as_ptr(),
            (outputs, 1),
            weight.as_ptr(),
            (1, outputs),
            1.0,
        )
    }
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
    // SAFETY: as in `forward`; xᵀ is x read with its strides swapped.
    unsafe {
        Product::new(inputs, outputs, rows).run(
            out.as_mut_ptr(),
            (outputs, 1),
            false,
            x.as_ptr(),
            (1, inputs),
            grad.as_ptr(),
            (outputs, 1),
            1.0,
        )
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

    const SHAPE: DenseShape = DenseShape { rows: 7, inputs: 5, outputs: 3 };

    fn assert_close(ours: &[f32], expected: &[f32]) {
        for (i, (a, e)) in ours.iter().zip(expected).enumerate() {
            assert!((a - e).abs() <= 1e-5, "[{i}]: {a} vs {e}");
        }
    }

    /// Each product against its definition, element by element.
    #[test]
    fn products_match_their_definitions() {
        let DenseShape { rows, inputs, outputs } = SHAPE;
        let (x, weight, bias, grad) = (
            random_values(rows * inputs, 1, 1.0),
            random_values(inputs * outputs, 2, 1.0),
            random_values(outputs, 3, 1.0),
            random_values(rows * outputs, 4, 1.0),
        );
        let x_at = |r: usize, i: usize| x[r * inputs + i];
        let w_at = |i: usize, o: usize| weight[i * outputs + o];
        let g_at = |r: usize, o: usize| grad[r * outputs + o];

        let out = forward(SHAPE, &x, &weight, &bias);
        let expected: Vec<f32> = (0..rows * outputs)
            .map(|at| {
                bias[at % outputs]
                    + (0..inputs)
                        .map(|i| x_at(at / outputs, i) * w_at(i, at % outputs))
                        .sum::<f32>()
            })
            .collect();
        assert_close(&out, &expected);

        let mut out = vec![f32::NAN; rows * inputs];
        input_gradient(SHAPE, &grad, &weight, &mut out);
        let expected: Vec<f32> = (0..rows * inputs)
            .map(|at| (0..outputs).map(|o| g_at(at / inputs, o) * w_at(at % inputs, o)).sum())
            .collect();
        assert_close(&out, &expected);

        let mut out = vec![f32::NAN; inputs * outputs];
        weight_gradient(SHAPE, &x, &grad, &mut out);
        let expected: Vec<f32> = (0..inputs * outputs)
            .map(|at| (0..rows).map(|r| x_at(r, at / outputs) * g_at(r, at % outputs)).sum())
            .collect();
        assert_close(&out, &expected);

        let mut out = vec![f32::NAN; outputs];
        bias_gradient(SHAPE, &grad, &mut out);
        let expected: Vec<f32> =
            (0..outputs).map(|o| (0..rows).map(|r| g_at(r, o)).sum()).collect();
        assert_close(&out, &expected);
    }
}
