//! One matrix product on strided `f32` operands through the `gemm` crate (the one burn's CPU
//! backend uses), for the dense layer's three products and attention's per-head ones.

use gemm::{Parallelism, gemm};

/// The sizes of an `m×k` by `k×n` product and how it may use the cores.
#[derive(Debug, Clone, Copy)]
pub struct Product {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    parallelism: Parallelism,
}

impl Product {
    /// A product that uses every thread of the pool when it is big enough to share (burn's CPU
    /// backend uses the same rule: 192³ multiply-adds).
    pub fn new(m: usize, n: usize, k: usize) -> Self {
        #[cfg(threaded)]
        if m * n * k >= 192 * 192 * 192 {
            return Self { m, n, k, parallelism: Parallelism::Rayon(0) };
        }
        Self::serial(m, n, k)
    }

    /// A product on the calling thread, for work that is already spread over the cores.
    pub fn serial(m: usize, n: usize, k: usize) -> Self {
        Self { m, n, k, parallelism: Parallelism::None }
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
                self.parallelism,
            )
        }
    }
}
