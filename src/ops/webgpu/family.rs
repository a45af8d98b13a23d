//! Which of two kernel families the GPU operations launch.
//!
//! A software renderer runs WebGPU on a few CPU cores: there a kernel whose invocations each
//! loop long over registers, without workgroup memory or barriers, is fastest (the register-blocked
//! product was several times faster on SwiftShader than tiled ones). A GPU has thousands of lanes
//! and wants the opposite: work split into many short invocations, tiles shared in workgroup
//! memory. Both families compute the same values, launch the same kernels in the same order, and
//! are tested against the same definitions.

use std::cell::Cell;

/// The kernels for one kind of adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelFamily {
    /// A CPU pretending to be a GPU: long register-blocked loops, no workgroup memory.
    Software,
    /// A real GPU: tiles in workgroup memory, long sums split over many workgroups.
    Hardware,
}

thread_local! {
    /// The family chosen for this thread's launches; `None`: decided from the adapter.
    static FAMILY: Cell<Option<KernelFamily>> = const { Cell::new(None) };
}

/// Chooses the family for the GPU operations this thread launches from now on (`None`: by the
/// adapter). Per thread, since each of the page's and worker's wasm instances, and each native
/// test, drives its GPU from one thread. The page calls it with what the browser says of its
/// adapter (`AdapterSummary::is_software`), which cubecl cannot tell from inside a browser;
/// tests call it to run each family.
pub fn set_kernel_family(family: Option<KernelFamily>) {
    FAMILY.with(|chosen| chosen.set(family));
}

/// The family set by [`set_kernel_family`], or, where none was, the one `adapter_is_software`
/// implies (natively, cubecl knows whether its adapter is a card).
pub fn kernel_family(adapter_is_software: impl FnOnce() -> bool) -> KernelFamily {
    match FAMILY.with(Cell::get) {
        Some(family) => family,
        None if adapter_is_software() => KernelFamily::Software,
        None => KernelFamily::Hardware,
    }
}
