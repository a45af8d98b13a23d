// The training worker: a module worker that loads the same wasm module as the page and starts
// its worker side (src/web/worker.rs), which then answers the page's messages.
import init, { worker_start } from "./vit-web.js";

await init();
worker_start();
