//! Elementwise loops compiled for the widest vector unit the CPU has.
//!
//! The native build targets baseline x86-64, so the compiler vectorises loops with 4-lane SSE
//! only; burn's own kernels choose AVX-512 or AVX2 at run time. [`widest_simd!`] gives the fused
//! operations' loops the same: one copy of the body per instruction set, chosen once per call.
//! The wasm build has simd128 on at compile time and uses the body as it is.

/// Defines a function whose body runs compiled for AVX-512, else AVX2 with FMA, where the CPU has
/// them (x86-64), and as written otherwise. The body's helpers must be `#[inline(always)]` to be
/// compiled with it.
macro_rules! widest_simd {
    ($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $(#[$attr])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn portable($($arg: $ty),*) $(-> $ret)? $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f")]
                fn avx512($($arg: $ty),*) $(-> $ret)? { portable($($arg),*) }
                #[target_feature(enable = "avx2,fma")]
                fn avx2($($arg: $ty),*) $(-> $ret)? { portable($($arg),*) }
                if std::arch::is_x86_feature_detected!("avx512f") {
                    // SAFETY: the CPU has AVX-512F.
                    return unsafe { avx512($($arg),*) };
                }
                if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                    // SAFETY: the CPU has AVX2 and FMA.
                    return unsafe { avx2($($arg),*) };
                }
            }
            portable($($arg),*)
        }
    };
}

pub(crate) use widest_simd;
