//! A dense layer's three products on `f32` slices, each one `gemm` call over all the tokens of
//! the batch, with the bias folded into the forward product's output.

use gemm::{Parallelism, gemm};

/// The sizes of one dense layer call: `rows` input vectors of `inputs` values, `outputs` out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DenseShape {
    pub rows: usize,
    pub inputs: usize,
    pub outputs: usize,
}

/// `out = alpha·out + lhs·rhs` for row-major (or, through the strides, transposed) operands.
/// `(rs, cs)` are a matrix's row and column strides in elements.
///
/// # Safety
/// Every element the sizes and strides reach lies inside its slice.
#[allow(clippy::too_many_arguments)]
unsafe fn product(
    (m, n, k): (usize, usize, usize),
    out: &mut [f32],
    keep_out: bool,
    lhs: &[f32],
    (lhs_rs, lhs_cs): (usize, usize),
    rhs: &[f32],
    (rhs_rs, rhs_cs): (usize, usize),
) {
    unsafe {
        gemm(
            m,
            n,
            k,
            out.as_mut_ptr(),
            1,
            n as isize,
            keep_out,
            lhs.as_ptr(),
            lhs_cs as isize,
            lhs_rs as isize,
            rhs.as_ptr(),
            rhs_cs as isize,
            rhs_rs as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            parallelism(m * n * k),
        )
    }
}

/// All cores for products big enough to share (burn's CPU backend uses the same rule).
fn parallelism(multiply_adds: usize) -> Parallelism {
    #[cfg(not(target_family = "wasm"))]
    if multiply_adds >= 192 * 192 * 192 {
        return Parallelism::Rayon(0);
    }
    let _ = multiply_adds;
    Parallelism::None
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
    let mut out = Vec::with_capacity(rows * outputs);
    (0..rows).for_each(|_| out.extend_from_slice(bias));
    // SAFETY: the lengths are checked above and the strides are the row-major ones.
    unsafe {
        product((rows, outputs, inputs), &mut out, true, x, (inputs, 1), weight, (outputs, 1))
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
        product((rows, inputs, outputs), out, false, grad, (outputs, 1), weight, (1, outputs))
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
    unsafe { product((inputs, outputs, rows), out, false, x, (1, inputs), grad, (outputs, 1)) }
}

/// `∂b = Σ_rows ∂out`.
///
/// # Shapes
/// - grad: `[rows, outputs]`
/// - out: `[outputs]`
pub fn bias_gradient(shape: DenseShape, grad: &[f32], out: &mut [f32]) {
    let DenseShape { rows, outputs, .. } = shape;
    assert_eq!((grad.len(), out.len()), (rows * outputs, outputs), "lengths");
    let block = crate::parallel::block_len(rows) * outputs;
    let partial_sums = crate::parallel::map(grad.chunks(block), |rows| {
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
    use crate::data::rng::Pcg32;

    const SHAPE: DenseShape = DenseShape { rows: 7, inputs: 5, outputs: 3 };

    fn random(len: usize, seed: u64) -> Vec<f32> {
        let mut rng = Pcg32::new(seed, 0);
        (0..len).map(|_| rng.uniform(-1.0, 1.0)).collect()
    }

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
            random(rows * inputs, 1),
            random(inputs * outputs, 2),
            random(outputs, 3),
            random(rows * outputs, 4),
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
