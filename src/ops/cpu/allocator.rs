//! Native allocator tuning for training on burn's CPU backend.
//!
//! burn-flex allocates every activation and gradient afresh and frees it within the step. glibc
//! serves blocks above 128 KiB with `mmap` and hands them back to the kernel on `free`, so each
//! step page-faults and zeroes the same megabytes again: about a third of a step's time here
//! (`perf record` on `bench`). Raising the thresholds keeps freed blocks in the heap for the next
//! step, as the wasm build's allocator already does (wasm memory never shrinks).

/// Keeps freed blocks for reuse; call once at start-up. A no-op off glibc.
pub fn keep_freed_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; glibc documents calling it at any time.
    unsafe {
        // 32 MiB is glibc's ceiling for the mmap threshold on 64-bit; a batch-256 activation is
        // at most about 17 MB.
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}
