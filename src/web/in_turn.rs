//! Writes to browser storage one at a time, so an older state never lands after a newer one: a
//! save asked for while one is being written runs once more when it ends, with the state then.

use std::cell::Cell;
use std::future::Future;
use std::thread::LocalKey;

use wasm_bindgen_futures::spawn_local;

/// Whether a write is under way, and whether another was asked for meanwhile.
pub struct WriteQueue {
    writing: Cell<bool>,
    again: Cell<bool>,
}

impl WriteQueue {
    pub const fn new() -> Self {
        Self { writing: Cell::new(false), again: Cell::new(false) }
    }
}

/// Runs `write` now, or once more after the write under way (however many were asked for).
pub fn write_in_turn<F: Future<Output = ()> + 'static>(queue: &'static LocalKey<WriteQueue>, write: impl Fn() -> F + 'static) {
    if queue.with(|queue| queue.writing.replace(true)) {
        queue.with(|queue| queue.again.set(true));
        return;
    }
    spawn_local(async move {
        loop {
            queue.with(|queue| queue.again.set(false));
            write().await;
            if !queue.with(|queue| queue.again.get()) {
                break;
            }
        }
        queue.with(|queue| queue.writing.set(false));
    });
}
