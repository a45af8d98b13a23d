//! One matrix product on strided `f32` operands, for the dense layer's products (a block of rows
//! each) and attention's per-head ones: natively through the `gemm` crate (the one burn's CPU
//! backend uses), in wasm through [`super::panel_product`], which runs faster there.

use gemm::{Parallelism, gemm};

/// The sizes of an `m×k` by `k×n` product, computed on the calling thread: its callers spread
/// work over the pool themselves, one product per block of rows or per image, so that an
/// operation forks and joins the pool once. (gemm's own threading forks twice per 512-deep slice
/// of the sum, and in the page each fork wakes web workers.)
#[derive(Debug, Clone, Copy)]
pub struct Product {
    pub m: usize,
    pub n: usize,
    pub k: usize,
}

impl Product {
    pub fn new(m: usize, n: usize, k: usize) -> Self {
        Self { m, n, k }
    }

    /// `out = out + scale·lhs·rhs` when `accumulate`, else `out = scale·lhs·rhs`. Each operand
    /// is a pointer with its `(row, column)` strides in elements, so a transposed operand is
    /// the same memory with its strides swapped.
    ///
    /// # Safety
    /// Every element the sizes and strides reach lies inside its allocation, and `out` overlaps
    /// neither `lhs` nor `rhs`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn run(
        &self,
        out: *mut f32,
        (out_rs, out_cs): (usize, usize),
        accumulate: bool,
        lhs: *const f32,
        (lhs_rs, lhs_cs): (usize, usize),
        rhs: *const f32,
        (rhs_rs, rhs_cs): (usize, usize),
        scale: f32,
    ) {
        #[cfg(target_family = "wasm")]
        if out_cs == 1 {
            // SAFETY: the caller's promise, which is the panel product's.
            return unsafe {
                super::panel_product::run(
                    (self.m, self.n, self.k),
                    out,
                    out_rs,
                    accumulate,
                    lhs,
                    (lhs_rs, lhs_cs),
                    rhs,
                    (rhs_rs, rhs_cs),
                    scale,
                )
            };
        }
        unsafe {
            gemm(
                self.m,
                self.n,
                self.k,
                out,
                out_cs as isize,
                out_rs as isize,
                accumulate,
                lhs,
                lhs_cs as isize,
                lhs_rs as isize,
                rhs,
                rhs_cs as isize,
                rhs_rs as isize,
                1.0,
                scale,
                false,
                false,
                false,
                Parallelism::None,
            )
        }
    }
}
