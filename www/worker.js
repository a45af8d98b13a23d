// The training worker: a module worker that loads one of the page's two wasm modules and starts
// its worker side (src/web/worker.rs), which then answers the page's messages.
//
// `worker.js?threads=N` with N > 1 loads the threaded CPU module (threads/vit-web.js) and starts
// its pool of N web workers; that needs cross-origin isolation and WebAssembly threads, which the
// page checks before asking. Otherwise, or when the threaded module fails to start, it loads the
// page's own module: burn's CPU backend on one thread, and WebGPU.
const threads = Number(new URL(import.meta.url).searchParams.get("threads") ?? "1");

async function startThreaded() {
  const threaded = await import("./threads/vit-web.js");
  await threaded.default();
  await threaded.initThreadPool(threads);
  threaded.worker_start(null);
}

async function startSingle(note) {
  const single = await import("./vit-web.js");
  await single.default();
  single.worker_start(note);
}

if (threads > 1) {
  try {
    await startThreaded();
  } catch (error) {
    await startSingle(`the threaded module did not start (${error?.message ?? error}), so training runs on one thread`);
  }
} else {
  await startSingle(null);
}
