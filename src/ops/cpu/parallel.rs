//! Work spread over rayon's global pool (the one burn's CPU backend uses) where the build has
//! threads — natively, and in the page's threaded worker module, whose pool is web workers — and
//! run in order in the single-threaded wasm module.

#[cfg(threaded)]
use rayon::iter::{IntoParallelIterator, ParallelIterator};

/// How many items are worth splitting work into.
pub fn threads() -> usize {
    #[cfg(threaded)]
    return rayon::current_num_threads();
    #[cfg(not(threaded))]
    return 1;
}

/// A block length that splits `len` items into one block per thread (at least one item).
pub fn block_len(len: usize) -> usize {
    len.div_ceil(threads()).max(1)
}

/// Calls `work` on every item, in parallel where the build has threads.
pub fn for_each<T: Send>(items: impl Iterator<Item = T>, work: impl Fn(T) + Sync + Send) {
    #[cfg(threaded)]
    items.collect::<Vec<_>>().into_par_iter().for_each(work);
    #[cfg(not(threaded))]
    items.for_each(work);
}

/// `work` of every item, in the items' order; computed in parallel where the build has threads.
pub fn map<T: Send, R: Send>(
    items: impl Iterator<Item = T>,
    work: impl Fn(T) -> R + Sync + Send,
) -> Vec<R> {
    #[cfg(threaded)]
    return items.collect::<Vec<_>>().into_par_iter().map(work).collect();
    #[cfg(not(threaded))]
    return items.map(work).collect();
}
