//! The page's matrix product (`ops::cpu::panel_product`) and gemm's, alone in a wasm module of
//! their own so that `scripts/bench-wasm-product.sh` can time them side by side in node on the
//! shapes a training step multiplies. Not part of the product.

#[path = "../../src/ops/cpu/panel_product.rs"]
mod panel_product;

/// A zeroed buffer of `len` floats that lives as long as the module; node fills it.
#[unsafe(no_mangle)]
pub extern "C" fn floats(len: usize) -> *mut f32 {
    Box::leak(vec![0.0f32; len].into_boxed_slice()).as_mut_ptr()
}

/// `out = lhs·rhs` (`m×k` by `k×n`, `out`'s rows `n` apart) with the page's product when `kernel`
/// is 0, with gemm's (one thread, as the project calls it) when 1.
///
/// # Safety
/// The buffers come from [`floats`] and are large enough for the sizes and strides.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn product(
    kernel: u32,
    m: usize,
    n: usize,
    k: usize,
    out: *mut f32,
    lhs: *const f32,
    lhs_rs: usize,
    lhs_cs: usize,
    rhs: *const f32,
    rhs_rs: usize,
    rhs_cs: usize,
) {
    unsafe {
        if kernel == 0 {
            panel_product::run((m, n, k), out, n, false, lhs, (lhs_rs, lhs_cs), rhs, (rhs_rs, rhs_cs), 1.0);
        } else {
            // gemm takes the column stride first; alpha 0 with read_dst false: out = lhs·rhs.
            gemm::gemm(
                m, n, k, out, 1, n as isize, false, lhs, lhs_cs as isize, lhs_rs as isize, rhs, rhs_cs as isize,
                rhs_rs as isize, 0.0, 1.0, false, false, false, gemm::Parallelism::None,
            );
        }
    }
}
