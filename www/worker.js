// The training worker: a module worker that loads one of the page's two wasm modules and starts
// its worker side (src/web/worker.rs), which then answers the page's messages.
//
// `worker.js?threads=N` with N > 1 loads the threaded CPU module (threads/vit-web.js) and starts
// its pool of N web workers; that needs cross-origin isolation and WebAssembly threads, which the
// page checks before asking. Otherwise, or when the threaded module fails to start, it loads the
// page's own module: burn's CPU backend on one thread, and WebGPU.
const threads = Number(new URL(import.meta.url).searchParams.get("threads") ?? "1");

/** Instantiates a wasm-bindgen module, downloading it again (twice at most) when the download is
 *  cut off. On a first visit the service worker's install fetches the same files, and Chromium
 *  can abort the worker's stream of a file that the install is revalidating ("Response body
 *  loading was aborted"); the next try is served whole. */
async function instantiate(module) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await module.default();
    } catch (error) {
      if (attempt === 3 || !(error instanceof TypeError)) throw error;
      console.warn(`the wasm module's download was cut off (${error.message}); trying again`);
      await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    }
  }
}

async function startThreaded() {
  const threaded = await import("./threads/vit-web.js");
  await instantiate(threaded);
  await threaded.initThreadPool(threads);
  threaded.worker_start(null);
}

/** `poolError`: the name of the error that kept the threaded module from starting, which the
 *  page turns into words (compute::pool_failure_note). */
async function startSingle(poolError) {
  const single = await import("./vit-web.js");
  await instantiate(single);
  single.worker_start(poolError);
}

if (threads > 1) {
  try {
    await startThreaded();
  } catch (error) {
    // WebKit, for one, cannot post a compiled module to a worker (DataCloneError).
    console.warn("the threaded module did not start; training runs on one thread:", error);
    await startSingle(String(error?.name ?? "Error"));
  }
} else {
  await startSingle(null);
}
