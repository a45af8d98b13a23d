//! The page's matrix product: 4×8 tiles of the output over packed 8-column panels of the right
//! operand, in wasm's 128-bit SIMD.
//!
//! Hand-written because gemm's wasm kernel keeps a 12×4 tile: twelve accumulators, three vectors
//! of the left operand, a broadcast and a product do not fit the 16 vector registers V8 gives
//! wasm on x86-64, so it spills, and its packing runs in scalar code. A 4×8 tile (eight
//! accumulators, two panel vectors, one broadcast) does not spill, reads the left operand where it
//! lies (any strides: a transposed operand costs nothing) and runs at 1.1–1.3× gemm's speed on the
//! dense layer's and attention's shapes (`scripts/bench-wasm-product.sh`; docs/performance-history.md,
//! "The page's own matrix product").
//! Natively gemm's AVX-512 kernels stay; this module also builds there, on plain arrays, so that
//! its blocking is tested by `cargo test`.

use std::cell::RefCell;

/// Output rows per tile.
const TILE_ROWS: usize = 4;
/// Output columns per tile and per packed panel: two vectors.
const PANEL: usize = 8;
/// How deep a packed block of the right operand is: 256 rows of 8-column panels are 8 KiB, which
/// stay in the first-level cache while a block of rows goes past.
const DEPTH: usize = 256;
/// Rows of the left operand per block: 64 rows of `DEPTH` values (64 KiB) stay in the second-level
/// cache while every panel goes past them.
const ROW_BLOCK: usize = 64;

thread_local! {
    /// The packed right operand, kept between calls so that a product allocates nothing.
    static PACKED: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// `out = out + scale·lhs·rhs` when `accumulate`, else `out = scale·lhs·rhs`, for an `m×k` by
/// `k×n` product; `out`'s rows are `out_rs` apart and its columns adjacent, each operand is read
/// with its `(row, column)` strides.
///
/// # Safety
/// As `Product::run`'s: every element the sizes and strides reach lies inside its allocation, and
/// `out` overlaps neither operand. Nothing outside `out`'s `m×n` view is written.
#[allow(clippy::too_many_arguments)]
pub unsafe fn run(
    (m, n, k): (usize, usize, usize),
    out: *mut f32,
    out_rs: usize,
    accumulate: bool,
    lhs: *const f32,
    lhs_strides: (usize, usize),
    rhs: *const f32,
    rhs_strides: (usize, usize),
    scale: f32,
) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            // SAFETY: each row's n values lie in `out`'s view.
            (0..m).for_each(|row| unsafe { std::slice::from_raw_parts_mut(out.add(row * out_rs), n).fill(0.0) });
        }
        return;
    }
    let panels = n.div_ceil(PANEL);
    PACKED.with_borrow_mut(|packed| {
        packed.resize(panels * DEPTH * PANEL, 0.0);
        for depth_start in (0..k).step_by(DEPTH) {
            let depth = DEPTH.min(k - depth_start);
            // SAFETY: rows depth_start.. of `rhs` lie in its allocation (the caller's promise).
            unsafe { pack(rhs.add(depth_start * rhs_strides.0), rhs_strides, depth, n, packed) };
            let write = Write { accumulate: accumulate || depth_start > 0, scale, out_rs };
            let lhs = unsafe { lhs.add(depth_start * lhs_strides.1) };
            for row_start in (0..m).step_by(ROW_BLOCK) {
                let rows = ROW_BLOCK.min(m - row_start);
                for panel in 0..panels {
                    let columns = PANEL.min(n - panel * PANEL);
                    let panel_values = packed[panel * depth * PANEL..].as_ptr();
                    for tile_start in (row_start..row_start + rows).step_by(TILE_ROWS) {
                        // SAFETY: the tile's rows and columns lie in the operands' and `out`'s views.
                        unsafe {
                            let lhs = lhs.add(tile_start * lhs_strides.0);
                            let out = out.add(tile_start * out_rs + panel * PANEL);
                            let tile_rows = TILE_ROWS.min(row_start + rows - tile_start);
                            if tile_rows == TILE_ROWS {
                                write.tile(tile::<TILE_ROWS>(depth, lhs, lhs_strides, panel_values), out, columns);
                            } else {
                                for row in 0..tile_rows {
                                    let sums = tile::<1>(depth, lhs.add(row * lhs_strides.0), lhs_strides, panel_values);
                                    write.tile(sums, out.add(row * out_rs), columns);
                                }
                            }
                        }
                    }
                }
            }
        }
    });
}

/// Copies `depth` rows of `rhs` (`n` columns, read with their strides) into `packed` as panels of
/// [`PANEL`] columns, each panel's rows adjacent and the last panel padded with zeros.
///
/// # Safety
/// `depth` rows of `n` columns of `rhs` lie in its allocation.
unsafe fn pack(rhs: *const f32, (row_stride, column_stride): (usize, usize), depth: usize, n: usize, packed: &mut [f32]) {
    for (panel, panel_values) in packed.chunks_mut(depth * PANEL).take(n.div_ceil(PANEL)).enumerate() {
        let columns = PANEL.min(n - panel * PANEL);
        for (row, packed_row) in panel_values.chunks_mut(PANEL).enumerate() {
            // SAFETY: row < depth and column < n.
            let source = unsafe { rhs.add(row * row_stride + panel * PANEL * column_stride) };
            for (column, value) in packed_row.iter_mut().enumerate() {
                *value = if column < columns { unsafe { *source.add(column * column_stride) } } else { 0.0 };
            }
        }
    }
}

/// The sums of `ROWS` rows of `lhs` times one packed panel, `depth` deep.
///
/// # Safety
/// `ROWS` rows of `depth` values of `lhs` and `depth` packed rows of the panel are readable.
#[inline(always)]
unsafe fn tile<const ROWS: usize>(depth: usize, lhs: *const f32, (row_stride, column_stride): (usize, usize), panel: *const f32) -> [[F32x4; 2]; ROWS] {
    let mut sums = [[F32x4::splat(0.0); 2]; ROWS];
    let (mut lhs, mut panel) = (lhs, panel);
    for _ in 0..depth {
        // SAFETY: the caller's promise, for this step of the depth.
        unsafe {
            let right = [F32x4::load(panel), F32x4::load(panel.add(4))];
            for (row, sums) in sums.iter_mut().enumerate() {
                let left = F32x4::splat(*lhs.add(row * row_stride));
                sums[0] = sums[0].add(left.mul(right[0]));
                sums[1] = sums[1].add(left.mul(right[1]));
            }
            lhs = lhs.add(column_stride);
            panel = panel.add(PANEL);
        }
    }
    sums
}

/// How a tile's sums reach the output.
struct Write {
    accumulate: bool,
    scale: f32,
    out_rs: usize,
}

impl Write {
    /// Scales the sums and stores (or adds) the first `columns` of each row.
    ///
    /// # Safety
    /// The tile's rows of `columns` values from `out` on lie in `out`'s view.
    #[inline(always)]
    unsafe fn tile<const ROWS: usize>(&self, sums: [[F32x4; 2]; ROWS], out: *mut f32, columns: usize) {
        let scale = F32x4::splat(self.scale);
        for (row, sums) in sums.into_iter().enumerate() {
            let out = unsafe { out.add(row * self.out_rs) };
            let halves = [sums[0].mul(scale), sums[1].mul(scale)];
            if columns == PANEL {
                for (half, value) in halves.into_iter().enumerate() {
                    // SAFETY: all eight columns lie in the view.
                    unsafe {
                        let at = out.add(4 * half);
                        let value = if self.accumulate { value.add(F32x4::load(at)) } else { value };
                        value.store(at);
                    }
                }
            } else {
                // On the stack: attention's 65-wide scores reach this once per row of a tile.
                let mut values = [0.0; PANEL];
                values[..4].copy_from_slice(&halves[0].to_array());
                values[4..].copy_from_slice(&halves[1].to_array());
                for (column, value) in values.into_iter().take(columns).enumerate() {
                    // SAFETY: column < columns.
                    unsafe {
                        let at = out.add(column);
                        *at = if self.accumulate { *at + value } else { value };
                    }
                }
            }
        }
    }
}

/// Four `f32` lanes: one simd128 vector in wasm, a plain array (for the tests) elsewhere.
#[derive(Clone, Copy)]
struct F32x4(lanes::Vector);

#[cfg(target_arch = "wasm32")]
mod lanes {
    pub use core::arch::wasm32::v128 as Vector;
}

#[cfg(not(target_arch = "wasm32"))]
mod lanes {
    pub type Vector = [f32; 4];
}

#[cfg(target_arch = "wasm32")]
impl F32x4 {
    #[inline(always)]
    fn splat(value: f32) -> Self {
        Self(core::arch::wasm32::f32x4_splat(value))
    }
    /// # Safety
    /// Four values from `at` on are readable (no alignment needed).
    #[inline(always)]
    unsafe fn load(at: *const f32) -> Self {
        Self(unsafe { core::arch::wasm32::v128_load(at.cast()) })
    }
    /// # Safety
    /// Four values from `at` on are writable (no alignment needed).
    #[inline(always)]
    unsafe fn store(self, at: *mut f32) {
        unsafe { core::arch::wasm32::v128_store(at.cast(), self.0) }
    }
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        Self(core::arch::wasm32::f32x4_add(self.0, other.0))
    }
    #[inline(always)]
    fn mul(self, other: Self) -> Self {
        Self(core::arch::wasm32::f32x4_mul(self.0, other.0))
    }
    fn to_array(self) -> [f32; 4] {
        use core::arch::wasm32::f32x4_extract_lane as lane;
        [lane::<0>(self.0), lane::<1>(self.0), lane::<2>(self.0), lane::<3>(self.0)]
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl F32x4 {
    fn splat(value: f32) -> Self {
        Self([value; 4])
    }
    unsafe fn load(at: *const f32) -> Self {
        Self(unsafe { at.cast::<[f32; 4]>().read_unaligned() })
    }
    unsafe fn store(self, at: *mut f32) {
        unsafe { at.cast::<[f32; 4]>().write_unaligned(self.0) }
    }
    fn add(self, other: Self) -> Self {
        Self(std::array::from_fn(|lane| self.0[lane] + other.0[lane]))
    }
    fn mul(self, other: Self) -> Self {
        Self(std::array::from_fn(|lane| self.0[lane] * other.0[lane]))
    }
    fn to_array(self) -> [f32; 4] {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::random_values;

    /// `scale·lhs·rhs (+ out)` by its definition, one output at a time.
    fn by_definition(
        (m, n, k): (usize, usize, usize),
        out: &mut [f32],
        out_rs: usize,
        accumulate: bool,
        (lhs, (lhs_rs, lhs_cs)): (&[f32], (usize, usize)),
        (rhs, (rhs_rs, rhs_cs)): (&[f32], (usize, usize)),
        scale: f32,
    ) {
        for row in 0..m {
            for column in 0..n {
                let sum: f32 = (0..k).map(|i| lhs[row * lhs_rs + i * lhs_cs] * rhs[i * rhs_rs + column * rhs_cs]).sum();
                let at = &mut out[row * out_rs + column];
                *at = scale * sum + if accumulate { *at } else { 0.0 };
            }
        }
    }

    /// Every edge at once: rows that are not whole tiles, columns that are not whole panels, a
    /// sum deeper than one packed block, transposed operands, an output wider than the product
    /// (its other columns untouched), accumulation and a scale.
    #[test]
    fn products_match_their_definition_at_every_edge() {
        let shapes = [(1, 1, 1), (4, 8, 3), (7, 13, 5), (65, 65, 32), (70, 20, DEPTH + 3), (130, 9, 2 * DEPTH)];
        for (m, n, k) in shapes {
            for (transposed_lhs, transposed_rhs, accumulate) in [(false, false, false), (true, false, true), (false, true, true), (true, true, false)] {
                let lhs = random_values(m * k, 1, 1.0);
                let rhs = random_values(k * n, 2, 1.0);
                let lhs_strides = if transposed_lhs { (1, m) } else { (k, 1) };
                let rhs_strides = if transposed_rhs { (1, k) } else { (n, 1) };
                let out_rs = n + 3;
                let start = random_values(m * out_rs, 3, 1.0);
                let (mut ours, mut expected) = (start.clone(), start.clone());
                let scale = 0.5;
                unsafe {
                    run((m, n, k), ours.as_mut_ptr(), out_rs, accumulate, lhs.as_ptr(), lhs_strides, rhs.as_ptr(), rhs_strides, scale)
                };
                by_definition((m, n, k), &mut expected, out_rs, accumulate, (&lhs, lhs_strides), (&rhs, rhs_strides), scale);
                for (index, (ours, expected)) in ours.iter().zip(&expected).enumerate() {
                    let tolerance = 1e-5 * (k as f32).sqrt() * (1.0 + expected.abs());
                    assert!((ours - expected).abs() <= tolerance, "{m}×{n}×{k} {lhs_strides:?} {rhs_strides:?}: {ours} against {expected} at {index}");
                }
            }
        }
    }

    #[test]
    fn an_empty_sum_clears_or_keeps_the_output() {
        let mut out = vec![1.0f32; 6];
        unsafe { run((2, 3, 0), out.as_mut_ptr(), 3, true, [].as_ptr(), (0, 1), [].as_ptr(), (3, 1), 1.0) };
        assert_eq!(out, vec![1.0; 6]);
        unsafe { run((2, 3, 0), out.as_mut_ptr(), 3, false, [].as_ptr(), (0, 1), [].as_ptr(), (3, 1), 1.0) };
        assert_eq!(out, vec![0.0; 6]);
    }
}
