//! Work spread over the CPU's cores natively (rayon's global pool, the one burn's CPU backend
//! uses), and run in order in the browser, where the wasm build has one thread.

/// Calls `work` on every item, natively in parallel.
#[cfg(not(target_family = "wasm"))]
pub fn for_each<T: Send>(items: impl Iterator<Item = T>, work: impl Fn(T) + Sync + Send) {
    use rayon::iter::{IntoParallelIterator, ParallelIterator};
    items.collect::<Vec<_>>().into_par_iter().for_each(work);
}

/// Calls `work` on every item, natively in parallel.
#[cfg(target_family = "wasm")]
pub fn for_each<T: Send>(items: impl Iterator<Item = T>, work: impl Fn(T) + Sync + Send) {
    items.for_each(work);
}
