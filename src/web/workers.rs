//! Starting `www/worker.js` on one of the page's two wasm modules: the training worker, and the
//! short-lived ones that measure each compute path.

use web_sys::Worker;

/// A worker on the threaded CPU module when `threads` > 1, else on the single-threaded one
/// (which also has WebGPU).
pub fn start(threads: usize) -> Result<Worker, String> {
    let options = web_sys::WorkerOptions::new();
    options.set_type(web_sys::WorkerType::Module);
    Worker::new_with_options(&format!("worker.js?threads={threads}"), &options)
        .map_err(|_| "this browser cannot start the training worker".to_string())
}
