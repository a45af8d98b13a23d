//! Work spread over the CPU's cores natively (rayon's global pool, the one burn's CPU backend
//! uses), and run in order in the browser, where the wasm build has one thread.

#[cfg(not(target_family = "wasm"))]
use rayon::iter::{IntoParallelIterator, ParallelIterator};

/// How many items are worth splitting work into.
pub fn threads() -> usize {
    #[cfg(not(target_family = "wasm"))]
    return rayon::current_num_threads();
    #[cfg(target_family = "wasm")]
    return 1;
}

/// A block length that splits `len` items into one block per thread (at least one item).
pub fn block_len(len: usize) -> usize {
    len.div_ceil(threads()).max(1)
}

/// Calls `work` on every item, natively in parallel.
pub fn for_each<T: Send>(items: impl Iterator<Item = T>, work: impl Fn(T) + Sync + Send) {
    #[cfg(not(target_family = "wasm"))]
    items.collect::<Vec<_>>().into_par_iter().for_each(work);
    #[cfg(target_family = "wasm")]
    items.for_each(work);
}

/// `work` of every item, in the items' order; natively computed in parallel.
pub fn map<T: Send, R: Send>(
    items: impl Iterator<Item = T>,
    work: impl Fn(T) -> R + Sync + Send,
) -> Vec<R> {
    #[cfg(not(target_family = "wasm"))]
    return items.collect::<Vec<_>>().into_par_iter().map(work).collect();
    #[cfg(target_family = "wasm")]
    return items.map(work).collect();
}
