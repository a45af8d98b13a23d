// The dataset and training flows end to end: the prepared asset is downloaded, decoded and kept
// in browser storage (a reload reads it back without downloading); a broken archive is refused
// without losing the loaded dataset; a short run trains in the worker, fills the epoch table and
// hands its weights to the page's model.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MINUTES, SCREENSHOTS, SMALL, datasetReady, shared, waitForAsync } from "./harness.mjs";

test("the prepared dataset is downloaded once, then read from browser storage", async () => {
  const context = await shared.browser.newContext();
  const page = await context.newPage();
  const assetRequests = [];
  page.on("request", (request) => { if (request.url().endsWith(".vitdata")) assetRequests.push(request.url()); });
  await page.goto(`${shared.server.url}?compute=cpu`);
  assert.equal(await datasetReady(page), "network");
  assert.match(await page.locator("#data-status").textContent(), /20,000 training and 10,000 test images/);
  assert.equal(assetRequests.length, 1);
  const preview = await page.locator("#preview-canvas").boundingBox();
  assert.ok(preview.height > 100, "the preview grid is drawn");

  await page.reload();
  assert.equal(await datasetReady(page), "cache");
  assert.equal(assetRequests.length, 1, "a reload does not download the dataset again");
  await context.close();
});

test("a corrupt archive is refused with a message and the loaded dataset stays", async () => {
  const page = await shared.browser.newPage();
  await page.goto(`${shared.server.url}${SMALL}`);
  await datasetReady(page);
  const before = await page.locator("#data-status").textContent();
  const folder = await mkdtemp(join(tmpdir(), "vit-e2e-"));
  const broken = join(folder, "cifar-10-binary.tar.gz");
  await writeFile(broken, Buffer.from("this is not a gzip file at all"));
  await page.setInputFiles("#archive-input", broken);
  await page.waitForSelector("#data-warning:not([hidden])");
  assert.match(await page.locator("#data-warning").textContent(), /not a gzip file/);
  assert.equal(await page.locator("#data-status").textContent(), before);
  assert.equal(await page.locator("#train-start").isEnabled(), true);
  await page.close();
});

test("bad recipe values get a message, not a crash", async () => {
  const page = await shared.browser.newPage();
  await page.goto(`${shared.server.url}${SMALL}`);
  await datasetReady(page);
  await page.fill("#recipe-form [name=batch]", "0");
  await page.click("#train-start");
  assert.match(await page.locator("#recipe-error").textContent(), /batch size: must be between 1 and 4096/);
  await page.fill("#recipe-form [name=batch]", "64");
  await page.fill("#recipe-form [name=lr]", "-1");
  await page.click("#train-start");
  assert.match(await page.locator("#recipe-error").textContent(), /learning rate/);
  assert.equal(await page.locator("#train-status").textContent(), "idle");
  await page.close();
});

/** A context whose training worker runs `script` after its own (`www/worker.js`, served with it
 *  appended; no service worker, so the route sees every request for it). */
async function contextWithWorkerEnding(script) {
  const context = await shared.browser.newContext({ serviceWorkers: "block" });
  await context.route("**/worker.js*", async (route) => {
    const original = await (await route.fetch()).text();
    await route.fulfill({ body: `${original}\n${script}`, contentType: "text/javascript" });
  });
  return context;
}

/** A training worker's GPU that holds every submission, upload and read until the test calls
 *  `self.releaseGpu()` in the worker, in order: as an adapter so slow that the page-open
 *  evaluation of the test set takes minutes (SwiftShader's does, without the CPU time here). */
const HELD_GPU = `
  const held = [];
  self.gpuHeld = true;
  const hold = (prototype, name) => {
    const original = prototype[name];
    prototype[name] = function (...args) {
      if (!self.gpuHeld) return original.apply(this, args);
      // An upload's bytes are a view of the module's memory, which changes before it is let go.
      args = args.map((arg) => ArrayBuffer.isView(arg) ? new arg.constructor(arg) : arg);
      return new Promise((resolve, reject) => held.push(() => {
        try { Promise.resolve(original.apply(this, args)).then(resolve, reject); } catch (error) { reject(error); }
      }));
    };
  };
  hold(GPUQueue.prototype, "submit");
  hold(GPUQueue.prototype, "writeBuffer");
  hold(GPUQueue.prototype, "onSubmittedWorkDone");
  hold(GPUBuffer.prototype, "mapAsync");
  self.releaseGpu = () => { self.gpuHeld = false; for (const run of held.splice(0)) run(); };`;

const EVALUATING = /^Evaluating the current weights on the test set/;

/** Waits until the page has asked its worker to evaluate the current weights. */
async function evaluationUnderWay(page) {
  await page.waitForFunction((pattern) => new RegExp(pattern).test(document.querySelector("#evaluation-summary").textContent),
    EVALUATING.source, { timeout: 5 * MINUTES });
}

test("a batch too large for the CPU path's memory is refused before it starts, with the batch that fits", async () => {
  // The whole CIFAR subset, so that the batch is not cut to a small set's size. Trained, the small
  // model at batch 2,048 ran the pool's threads out of WebAssembly memory.
  const page = await shared.browser.newPage();
  await page.goto(`${shared.server.url}?compute=cpu&preset=small&batch=2048`);
  await datasetReady(page);
  await page.click("#train-start");
  await page.waitForSelector("#error:not([hidden])");
  assert.match(await page.locator("#error").textContent(),
    /^Batch 2048 of the small model needs about 15\.8 GB of memory for one training step on the CPU path, and a browser gives a page at most 4\.3 GB: batch 539 or less fits, or train on WebGPU\.$/);
  assert.equal(await page.locator("#train-status").textContent(), "failed");
  assert.equal(await page.locator("#train-start").isEnabled(), true, "Start is offered again");
  assert.equal(await page.locator("#runs-body tr[data-status=running]").count(), 0, "no run is left running");
  await page.close();
});

test("a batch whose buffers pass what this browser's WebGPU binds is refused at once, even while the page's weights are being evaluated", async () => {
  // SwiftShader binds 1 GiB, which every batch the form allows fits. The training worker here
  // sees an adapter that binds 128 MiB, the least WebGPU allows and what some adapters state, and
  // its GPU is held, so that the page-open evaluation of the whole test set stays under way.
  const context = await contextWithWorkerEnding(`
    Object.defineProperty(GPUSupportedLimits.prototype, "maxStorageBufferBindingSize", { get: () => 128 * 1024 * 1024 });
    ${HELD_GPU}`);
  const page = await context.newPage();
  await page.goto(`${shared.server.url}?compute=webgpu&batch=2048`);
  await datasetReady(page);
  await evaluationUnderWay(page);
  await page.click("#train-start");
  await page.waitForSelector("#error:not([hidden])", { timeout: 5 * MINUTES });
  assert.match(await page.locator("#error").textContent(),
    /^Batch 2048 of the tiny model needs a 204 MB buffer for one training step on WebGPU, and this browser's WebGPU takes buffers of at most 134 MB: batch 1344 or less fits, or train on the CPU path\.$/);
  assert.equal(await page.locator("#train-status").textContent(), "failed");
  assert.match(await page.locator("#evaluation-summary").textContent(), EVALUATING, "refused before the evaluation ended");
  assert.equal(await page.locator("#train-start").isEnabled(), true, "Start is offered again");
  assert.equal(await page.locator("#runs-body tr[data-status=running]").count(), 0, "no run is left running");
  await context.close();
});

test("a run asked for while the page's weights are evaluated waits, says so, and keeps a pause made while it waits", async () => {
  const context = await contextWithWorkerEnding(HELD_GPU);
  const page = await context.newPage();
  await page.goto(`${shared.server.url}?compute=webgpu&dataset=data/small/manifest.json&epochs=1`);
  await datasetReady(page);
  await evaluationUnderWay(page);
  await page.click("#train-start");
  await page.waitForFunction(() => document.querySelector("#train-status").textContent === "waiting for the test set's evaluation of the current weights to end…",
    null, { timeout: 5 * MINUTES });
  assert.equal(await page.locator("#train-start").isEnabled(), false, "the run is under way");
  await page.click("#train-pause");
  await page.waitForSelector("#train-status:text-is('paused')");

  const worker = page.workers().find((worker) => new URL(worker.url()).pathname.endsWith("/worker.js"));
  await worker.evaluate(() => self.releaseGpu());
  await page.waitForFunction(() => document.querySelector("#evaluation-summary").textContent.startsWith("Current weights:"), null, { timeout: 10 * MINUTES });
  // The run starts, and stays paused: no step is taken until Resume.
  await page.waitForSelector("#runs-body tr[data-status=running]", { timeout: 5 * MINUTES });
  await page.waitForSelector("#train-status:text-is('paused')");
  assert.equal(await page.locator("#train-resume").isEnabled(), true, "Resume is offered");
  assert.equal(await page.locator("#step-progress").evaluate((progress) => progress.value), 0, "no step was taken");
  assert.equal(await page.locator("#step-text").getAttribute("data-read-step"), null, "no loss was read");
  await page.click("#train-resume");
  await page.waitForSelector("#train-status:text-is('training')");
  await page.click("#train-stop");
  await page.waitForSelector("#train-status:has-text('stopped')", { timeout: 5 * MINUTES });
  await context.close();
});

test("a named recipe fills the form, editing makes it Custom, and a run trains with what the form shows", async () => {
  const page = await shared.browser.newPage();
  await page.goto(`${shared.server.url}${SMALL}`);
  await datasetReady(page);
  const field = (name) => page.locator(`#recipe-form [name=${name}]`).inputValue();
  assert.equal(await page.locator("#recipe-named").inputValue(), "reference");
  assert.match(await page.locator("#recipe-about").textContent(), /notebook's.*59\.2 %/);
  assert.deepEqual([await field("batch"), await field("lr"), await field("augment")], ["256", "0.001", "Flip"]);

  await page.fill("#recipe-form [name=seed]", "3");
  await page.selectOption("#recipe-named", "best-10-epochs");
  const best = [await field("epochs"), await field("batch"), await field("warmup"), await field("smoothing")];
  assert.notDeepEqual(best, ["10", "256", "0", "0"], "the best recipe is not the reference");
  assert.equal(await field("seed"), "3", "the seed stays the person's");

  // The longer one: the best recipe for 30 epochs, with random crops.
  await page.selectOption("#recipe-named", "best-30-epochs");
  assert.deepEqual([await field("epochs"), await field("batch"), await field("augment")], ["30", best[1], "Crop"]);
  assert.match(await page.locator("#recipe-about").textContent(), /30 epochs.*crops.*72\.1 %/);

  // Without a measurement (the path was forced) the time-budget recipe says so and keeps its epochs.
  await page.selectOption("#recipe-named", "10-minutes");
  assert.match(await page.locator("#recipe-about").textContent(), /not measured/);
  assert.ok(Number(await field("epochs")) < 10, "fewer epochs than the 10-epoch recipe");

  await page.fill("#recipe-form [name=epochs]", "1");
  assert.equal(await page.locator("#recipe-named").inputValue(), "custom", "an edited recipe is the person's own");
  assert.match(await page.locator("#recipe-about").textContent(), /Your own values/);

  // 512 images at the named recipe's batch: the worker got the form's recipe.
  const batch = Number(await field("batch"));
  await page.click("#train-start");
  await page.waitForSelector(`#step-text:has-text('of ${Math.ceil(512 / batch)}')`, { timeout: 5 * MINUTES });
  await page.click("#train-stop");
  await page.close();
});

test("the address is a link to the recipe: the form writes it, a link fills the form, bad values in it get the form's message", async () => {
  const context = await shared.browser.newContext();
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const page = await context.newPage();
  await page.goto(`${shared.server.url}${SMALL}`);
  await datasetReady(page);
  // The address as the page sees it (Playwright's page.url() learns of replaceState a moment later).
  const address = () => page.evaluate(() => location.href);
  const query = async () => new URL(await address()).searchParams;
  await page.selectOption("#recipe-named", "best-10-epochs");
  assert.equal((await query()).get("recipe"), "best-10-epochs", "a named recipe by its name");
  assert.equal((await query()).get("dataset"), "data/small/manifest.json", "the page's other parameters stay");
  await page.fill("#recipe-form [name=seed]", "3");
  assert.equal((await query()).get("seed"), "3");
  await page.fill("#recipe-form [name=lr]", "3e-3");
  assert.equal((await query()).get("recipe"), null, "an edited recipe is written field by field");
  const linked = await query();
  assert.deepEqual([linked.get("lr"), linked.get("batch"), linked.get("augment"), linked.get("seed")], ["3e-3", "32", "flip", "3"]);
  await page.click("#recipe-link");
  await page.waitForSelector("#recipe-link-status:not([hidden])");
  assert.match(await page.locator("#recipe-link-status").textContent(), /Link copied/);
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), await address());

  // The link opens another page with the same recipe.
  const other = await context.newPage();
  await other.goto(await address());
  await other.waitForSelector("body[data-ready]", { timeout: 5 * MINUTES });
  const form = (target) => target.$$eval("#recipe-form [name]", (fields) => fields.map((field) => `${field.name}=${field.value}`).join("&"));
  assert.equal(await form(other), await form(page));
  assert.equal(await other.locator("#recipe-named").inputValue(), "custom");
  assert.equal(await other.locator("#recipe-error").isHidden(), true);
  await other.goto(`${shared.server.url}${SMALL}&recipe=best-10-epochs&seed=5`);
  await other.waitForSelector("body[data-ready]", { timeout: 5 * MINUTES });
  assert.equal(await other.locator("#recipe-named").inputValue(), "best-10-epochs", "a named recipe with a seed stays named");
  assert.equal(await other.locator("#recipe-form [name=seed]").inputValue(), "5");

  // Values the form cannot use: its message, no crash, nothing starts.
  const errors = [];
  other.on("pageerror", (error) => errors.push(error.message));
  await other.goto(`${shared.server.url}${SMALL}&lr=fast&augment=WILD&batch=128`);
  await other.waitForSelector("body[data-ready]", { timeout: 5 * MINUTES });
  assert.match(await other.locator("#recipe-error").textContent(), /^In the link: learning rate: 'fast' is not a number/);
  assert.equal(await other.locator("#recipe-form [name=batch]").inputValue(), "128", "the usable values are taken");
  await datasetReady(other);
  await other.click("#train-start");
  assert.match(await other.locator("#recipe-error").textContent(), /learning rate/);
  assert.equal(await other.locator("#train-status").textContent(), "idle");
  // The page's own parameters, unusable: named in the same message, and the page goes on.
  await other.goto(`${shared.server.url}?dataset=data/small/manifest.json&compute=fast&threads=many&recipe=fastest`);
  await other.waitForSelector("body[data-ready]", { timeout: 5 * MINUTES });
  assert.equal(await other.locator("#recipe-error").textContent(),
    "In the link: compute: 'fast' is not auto, webgpu or cpu, so the page chose by measuring; threads: 'many' is not a whole number from 1 up, " +
    "so the page runs one per core; recipe: 'fastest' is not one of the named recipes, so the form shows the reference");
  assert.equal(await other.locator("#recipe-named").inputValue(), "reference");
  assert.deepEqual(errors, []);
  await context.close();
});

test("training goes on in a hidden tab, the title shows its progress, and coming back says how much ran", async () => {
  const page = await shared.browser.newPage();
  await page.goto(`${shared.server.url}${SMALL}`);
  await datasetReady(page);
  await page.fill("#recipe-form [name=epochs]", "3");
  await page.fill("#recipe-form [name=batch]", "64");
  await page.click("#train-start");
  await page.waitForSelector("#step-text:has-text('of 24')", { timeout: 5 * MINUTES });
  assert.match(await page.title(), /^▶ \d+% · epoch [1-3]\/3$/);
  // Headless Chromium keeps every page visible; the page reads visibility from the document.
  const setHidden = (hidden) => page.evaluate((hidden) => {
    Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
    Object.defineProperty(document, "visibilityState", { configurable: true, get: () => (hidden ? "hidden" : "visible") });
    document.dispatchEvent(new Event("visibilitychange"));
  }, hidden);
  const step = async () => Number((await page.locator("#step-text").textContent()).split(" ")[0]);
  await setHidden(true);
  const hiddenAt = await step();
  await page.waitForFunction((from) => Number(document.querySelector("#step-text").textContent.split(" ")[0]) >= from + 4, hiddenAt, { timeout: 5 * MINUTES });
  await setHidden(false);
  const ran = Number(await page.locator("#background-note").getAttribute("data-steps"));
  assert.ok(ran >= 4, `${ran} steps ran while hidden`);
  assert.match(await page.locator("#background-note").textContent(), /While this tab was in the background \(.+\), training ran \d+ steps, (in|from) epoch/);
  await page.click("#train-pause");
  await page.waitForSelector("#train-status:has-text('paused')");
  assert.match(await page.title(), /^⏸ \d+% · epoch/);
  await page.click("#train-resume");
  await page.waitForSelector("#train-status:has-text('finished')", { timeout: 10 * MINUTES });
  assert.equal(await page.title(), "✓ trained · ViT in your browser");
  await page.close();
});

test("the recipe's seed decides a run: the same seed in two tabs trains to the same figures", async () => {
  // Everything random in a run follows from the seed field: burn's initial weights, the batches,
  // the augmentation (and dropout, in the small preset).
  const epochFigures = async () => {
    const page = await shared.browser.newPage();
    await page.goto(`${shared.server.url}${SMALL}&seed=7`);
    await datasetReady(page);
    await page.fill("#recipe-form [name=epochs]", "1");
    await page.fill("#recipe-form [name=batch]", "64");
    await page.click("#train-start");
    await page.waitForSelector("#train-status:has-text('finished')", { timeout: 10 * MINUTES });
    // Train loss and accuracy, test loss and accuracy (then the speed, which may differ).
    const cells = await page.$$eval("#epoch-table tbody tr td", (cells) => cells.map((cell) => cell.textContent));
    await page.close();
    return cells.slice(1, 5);
  };
  const first = await epochFigures();
  assert.equal(first.length, 4);
  assert.deepEqual(await epochFigures(), first);
});

test("the time-budget recipe fits its epochs to the speed measured in this browser", async () => {
  const context = await shared.browser.newContext();
  const page = await context.newPage();
  await page.goto(`${shared.server.url}?recipe=10-minutes&dataset=data/small/manifest.json`);
  await page.waitForSelector("body[data-ready]", { timeout: 5 * MINUTES });
  assert.equal(await page.locator("#recipe-named").inputValue(), "10-minutes", "?recipe= picks the recipe");
  const about = await page.locator("#recipe-about").textContent();
  const [, speed, epochs] = about.match(/Measured here: (\d+) images\/s, so (\d+) epochs? fit/) ?? [];
  assert.ok(speed, about);
  assert.equal(await page.locator("#recipe-form [name=epochs]").inputValue(), epochs);
  await context.close();
});

test("a short run trains in the worker, can pause and resume, and updates the page's model", async () => {
  const page = await shared.browser.newPage({ viewport: { width: 1100, height: 1600 } });
  await page.goto(`${shared.server.url}${SMALL}`);
  await datasetReady(page);
  const before = await page.$$eval("#probabilities li", (rows) => rows.map((row) => row.dataset.probability).join());
  await page.fill("#recipe-form [name=epochs]", "2");
  await page.fill("#recipe-form [name=batch]", "64");
  await page.click("#train-start");
  await page.waitForSelector("#step-text:has-text('of 16')", { timeout: 5 * MINUTES });

  await page.click("#train-pause");
  await page.waitForSelector("#train-status:has-text('paused')");
  const pausedAt = await page.locator("#step-text").textContent();
  await page.waitForTimeout(1500);
  assert.equal(await page.locator("#step-text").textContent(), pausedAt, "no steps while paused");
  await page.click("#train-resume");
  if (SCREENSHOTS) {
    // During the second epoch: the first epoch's figures and the probe's attention are drawn.
    await page.waitForFunction(() => document.querySelectorAll("#epoch-table tbody tr").length === 1, null, { timeout: 10 * MINUTES });
    await page.waitForSelector("#probe-canvas[data-step]");
    await page.locator("#train-title").scrollIntoViewIfNeeded();
    await page.evaluate(() => document.querySelector("#train-title").scrollIntoView());
    await page.screenshot({ path: `${SCREENSHOTS}/training.png` });
  }

  await page.waitForSelector("#train-status:has-text('finished')", { timeout: 10 * MINUTES });
  const rows = await page.$$eval("#epoch-table tbody tr", (rows) => rows.map((row) => row.textContent));
  assert.equal(rows.length, 2);
  // Memory after each epoch: the worker's wasm heap, and no GPU pools on the CPU path.
  const memory = await page.$$eval("#epoch-table tbody tr", (rows) => rows.map((row) => [row.dataset.heapBytes, row.dataset.gpuBytes]));
  for (const [heap, gpu] of memory) {
    assert.ok(Number(heap) > 0, "the wasm heap is reported");
    assert.equal(gpu, "0", "the CPU path has no GPU memory to report");
  }
  assert.match(await page.locator("#weights-note").textContent(), /Trained in this page: tiny preset, 2 epochs/);
  await page.waitForFunction((before) =>
    [...document.querySelectorAll("#probabilities li")].map((row) => row.dataset.probability).join() !== before, before);
  // The figures follow the run: attention forming on the probe, the curves, the test set.
  assert.ok(Number(await page.locator("#probe-canvas").getAttribute("data-step")) >= 10, "the probe's attention was reported");
  assert.match(await page.locator("#probe-text").textContent(), /^step \d+: “\w+” at \d+%$/);
  assert.equal(await page.locator("#probe-layers canvas").count(), 4);
  assert.equal(await page.locator("#accuracy-chart").getAttribute("data-points"), "4", "two epochs of train and test accuracy");
  assert.ok(Number(await page.locator("#loss-chart").getAttribute("data-points")) >= 4 + 3, "epoch losses and running loss");
  await page.waitForFunction(() => document.querySelector("#evaluation-summary").textContent.startsWith("After epoch 2"));
  assert.equal(await page.locator("#predictions-grid figure").count(), 24);
  await page.close();
});

test("CIFAR-10's official archive, picked on the page, is decoded in the browser", { skip: !process.env.CIFAR10_ARCHIVE }, async () => {
  const page = await shared.browser.newPage();
  await page.goto(`${shared.server.url}${SMALL}`);
  await datasetReady(page);
  await page.setInputFiles("#archive-input", process.env.CIFAR10_ARCHIVE);
  await page.waitForSelector("#data-status[data-source=archive]", { timeout: 10 * MINUTES });
  assert.match(await page.locator("#data-status").textContent(), /20,000 training and 10,000 test images, decoded from your archive/);
  await page.close();
});

test("weights download as one file, a damaged file is refused without change, the download loads back", async () => {
  const page = await shared.browser.newPage();
  await page.goto(`${shared.server.url}?compute=cpu`);
  await page.waitForSelector("body[data-ready=true]", { timeout: 5 * MINUTES });
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#weights-download")]);
  const folder = await mkdtemp(join(tmpdir(), "vit-weights-"));
  const saved = join(folder, download.suggestedFilename());
  await download.saveAs(saved);
  assert.match(download.suggestedFilename(), /^vit-tiny-epoch\d+\.safetensors$/);

  const before = await page.$$eval("#probabilities li", (rows) => rows.map((row) => row.dataset.probability).join());
  const summary = await page.locator("#model-summary").textContent();
  const bytes = await import("node:fs/promises").then((fs) => fs.readFile(saved));
  const damaged = join(folder, "damaged.safetensors");
  await writeFile(damaged, bytes.subarray(0, bytes.length - 1000));
  await page.setInputFiles("#weights-input", damaged);
  await page.waitForSelector("#weights-error:not([hidden])");
  assert.match(await page.locator("#weights-error").textContent(), /damaged\.safetensors was not loaded: .*The current model is unchanged/);
  assert.equal(await page.locator("#model-summary").textContent(), summary);
  const after = await page.$$eval("#probabilities li", (rows) => rows.map((row) => row.dataset.probability).join());
  assert.equal(after, before);

  await page.setInputFiles("#weights-input", saved);
  await page.waitForFunction(() => document.querySelector("#weights-note").textContent.startsWith("Loaded "));
  assert.equal(await page.locator("#weights-error").isHidden(), true);
  assert.match(await page.locator("#weights-note").textContent(), /^Loaded vit-tiny-epoch\d+\.safetensors: tiny preset/);
  await page.close();
});

test("a weight file of the other preset switches the page to that preset", { skip: !process.env.E2E_FIXTURES_DIR && "E2E_FIXTURES_DIR is not set" }, async () => {
  const page = await shared.browser.newPage();
  await page.goto(`${shared.server.url}?compute=cpu`);
  await page.waitForSelector("body[data-ready=true]", { timeout: 5 * MINUTES });
  assert.equal(await page.locator("#recipe-form [name=preset]").inputValue(), "tiny");
  const before = await page.locator("#attention-caption").textContent();
  await page.setInputFiles("#weights-input", join(process.env.E2E_FIXTURES_DIR, "vit-small-fresh.safetensors"));
  await page.waitForFunction(() => document.querySelector("#model-summary").textContent.startsWith("small preset"));
  assert.match(await page.locator("#model-summary").textContent(), /small preset · 3,195,146 parameters/);
  assert.equal(await page.locator("#recipe-form [name=preset]").inputValue(), "small", "training would continue on the small preset");
  assert.match(await page.locator("#weights-note").textContent(), /^Loaded vit-small-fresh\.safetensors: small preset, 0 epochs/);
  assert.equal(await page.locator("#attention-caption").textContent(), before, "the same picture, explained by the new model");
  await page.close();
});

test("each epoch is checkpointed: after a reload the run resumes, in the other wasm module too, and its weights can be used", async () => {
  const context = await shared.browser.newContext({ viewport: { width: 1100, height: 1600 } });
  const page = await context.newPage();
  await page.goto(`${shared.server.url}${SMALL}`);
  await datasetReady(page);
  const threads = Number(await page.locator("#compute-threads").getAttribute("data-threads"));
  assert.equal(await page.locator("#checkpoint-offer").isHidden(), true, "a fresh browser has no checkpoint");
  await page.fill("#recipe-form [name=epochs]", "2");
  await page.fill("#recipe-form [name=batch]", "64");
  await page.click("#train-start");
  await page.waitForFunction(() => document.querySelector("#checkpoint-status").textContent.startsWith("Saved in this browser after epoch 1"), null, { timeout: 10 * MINUTES });
  await page.click("#train-stop");
  await page.waitForSelector("#train-status:has-text('stopped')", { timeout: 5 * MINUTES });

  // As after a crash: a reload offers the run back, here in the single-threaded module where the
  // run was written by the threaded one.
  await page.goto(`${shared.server.url}${SMALL}&threads=1`);
  await page.waitForSelector("#checkpoint-offer:not([hidden])", { timeout: 5 * MINUTES });
  await page.waitForSelector("#compute-threads[data-threads]", { timeout: 5 * MINUTES });
  assert.equal(await page.locator("#compute-threads").getAttribute("data-threads"), "1");
  assert.match(await page.locator("#checkpoint-text").textContent(), /stopped after epoch 1 of 2 \(tiny preset, test accuracy \d+\.\d%\)\. Resume it, or use its weights/);
  await datasetReady(page);
  await page.waitForFunction(() => !document.querySelector("#checkpoint-resume").disabled);
  await page.click("#checkpoint-resume");
  await page.waitForSelector("#train-status:has-text('finished')", { timeout: 10 * MINUTES });
  // The runs table in browser storage has caught up with the page (it is written just after).
  await waitForAsync(page, async () => {
    const root = await navigator.storage.getDirectory();
    const runs = JSON.parse(await (await (await root.getFileHandle("runs.json")).getFile()).text());
    return runs.length === 1 && runs[0].status.state === "finished" && runs[0].checkpoint_epoch === 2 && runs[0].weights_kept;
  });
  const epochs = await page.$$eval("#epoch-table tbody tr td:first-child", (cells) => cells.map((cell) => cell.textContent));
  assert.deepEqual(epochs, ["1", "2"], "epoch 1 from the checkpoint, epoch 2 trained after the reload");
  assert.equal(await page.locator("#accuracy-chart").getAttribute("data-points"), "4");

  // And back: the threaded module reads what the single-threaded one wrote.
  await page.goto(`${shared.server.url}${SMALL}`);
  await page.waitForSelector("#checkpoint-offer:not([hidden])", { timeout: 5 * MINUTES });
  // The offer can show before the worker has said how many threads it runs.
  await page.waitForSelector("#compute-threads[data-threads]", { timeout: 5 * MINUTES });
  assert.equal(Number(await page.locator("#compute-threads").getAttribute("data-threads")), threads);
  assert.match(await page.locator("#checkpoint-text").textContent(), /finished after epoch 2 of 2/);
  assert.equal(await page.locator("#checkpoint-resume").isHidden(), true, "a finished run has nothing to resume");
  await page.click("#checkpoint-use");
  await page.waitForFunction(() => document.querySelector("#weights-note").textContent.startsWith("From the saved checkpoint: tiny preset, 2 epochs"));
  assert.equal(await page.locator("#accuracy-chart").getAttribute("data-points"), "4", "the curves come back with the weights");
  await context.close();
});

test("a full storage quota is reported, and training goes on", async () => {
  const context = await shared.browser.newContext();
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await page.goto(`${shared.server.url}${SMALL}`);
  await datasetReady(page);
  await cdp.send("Storage.overrideQuotaForOrigin", { origin: shared.server.url.replace(/\/$/, ""), quotaSize: 64 * 1024 });
  await page.fill("#recipe-form [name=epochs]", "1");
  await page.fill("#recipe-form [name=batch]", "64");
  await page.click("#train-start");
  await page.waitForSelector("#checkpoint-error:not([hidden])", { timeout: 10 * MINUTES });
  assert.match(await page.locator("#checkpoint-error").textContent(), /after epoch 1 was not saved: the browser's storage quota for this page is full/);
  await page.waitForSelector("#train-status:has-text('finished')", { timeout: 5 * MINUTES });
  assert.match(await page.locator("#weights-note").textContent(), /Trained in this page/, "the trained weights still reach the page");
  await context.close();
});

/**
 * Stores a checkpoint after epoch 1 of 2 (batch 64) made from the shipped weights, as the worker
 * would have written it; `headValue` overwrites every head weight when given.
 */
/** Writes a checkpoint after epoch 1 as an earlier version of the page kept it (one file for the
 *  browser, no run in the table): the page makes a run of it, to resume. */
async function storeCheckpoint(page, headValue = null) {
  await page.evaluate(async (headValue) => {
    const weights = new Uint8Array(await (await fetch("weights/vit-tiny.safetensors")).arrayBuffer());
    const headerLength = Number(new DataView(weights.buffer).getBigUint64(0, true));
    const header = JSON.parse(new TextDecoder().decode(weights.subarray(8, 8 + headerLength)));
    if (headValue !== null) {
      const [start, end] = header["head.weight"].data_offsets;
      new Float32Array(weights.buffer, 8 + headerLength + start, (end - start) / 4).fill(headValue);
    }
    const recipe = { preset: "tiny", epochs: 2, batch_size: 64, augment: "Flip", seed: 0,
      optimizer: { learning_rate: 0.001, weight_decay: 0.05, warmup_steps: 0, label_smoothing: 0 } };
    const epoch = { epoch: 1, train_loss: 2, train_accuracy: 0.2, test_loss: 2, test_accuracy: 0.2, train_seconds: 10, images_per_second: 50 };
    const json = new TextEncoder().encode(JSON.stringify({ recipe, epochs_done: 1, step: 8,
      history: { epochs: [epoch], steps: [] }, smoothed: { count: 0, average: 0 },
      weights_bytes: weights.length, model_bytes: 0, optimizer_bytes: 0 }));
    const file = new Uint8Array(16 + json.length + weights.length);
    file.set(new TextEncoder().encode("VITCKPT1"));
    new DataView(file.buffer).setBigUint64(8, BigInt(json.length), true);
    file.set(json, 16);
    file.set(weights, 16 + json.length);
    const handle = await (await navigator.storage.getDirectory()).getFileHandle("training-checkpoint.vitckpt", { create: true });
    const writable = await handle.createWritable();
    await writable.write(file);
    await writable.close();
  }, headValue);
}

test("a diverging run stops with a message, keeps the page's weights and offers its last checkpoint again", async () => {
  const context = await shared.browser.newContext();
  const page = await context.newPage();
  await page.goto(`${shared.server.url}${SMALL}`);
  await datasetReady(page);
  // A checkpoint after epoch 1 whose head weights are 3e38, just below f32's largest: finite, so
  // the file loads, but the head's sums overflow and the next logged loss is not a number.
  await storeCheckpoint(page, 3e38);
  await page.reload();
  await page.waitForSelector("#checkpoint-offer:not([hidden])", { timeout: 5 * MINUTES });
  await datasetReady(page);
  const weightsNote = await page.locator("#weights-note").textContent();
  await page.waitForFunction(() => !document.querySelector("#checkpoint-resume").disabled);
  await page.click("#checkpoint-resume");
  await page.waitForSelector("#train-status:has-text('failed')", { timeout: 5 * MINUTES });
  assert.match(await page.locator("#error").textContent(), /the loss became (NaN|inf) at epoch 2: training stopped, the weights of the last good epoch are kept/);
  assert.equal(await page.locator("#weights-note").textContent(), weightsNote, "the page's model is unchanged");
  // The runs table keeps the failed run, resumed from epoch 1, with the reason (it shows the
  // table once the change is stored, just after the status line).
  await page.waitForSelector("#runs-body tr[data-status=failed]");
  const row = page.locator("#runs-body tr").first();
  assert.equal(await row.getAttribute("data-status"), "failed");
  assert.match(await row.getAttribute("data-label"), /^resumed/);
  assert.match(await row.locator("[title]").getAttribute("title"), /the loss became/);
  await page.waitForSelector("#checkpoint-offer:not([hidden])");
  assert.match(await page.locator("#checkpoint-text").textContent(), /failed after epoch 1 of 2 \(tiny preset, test accuracy 20\.0%\)\. Resume it, or use its weights/);
  assert.equal(await page.locator("#train-start").isEnabled(), true, "a new run can start");
  await context.close();
});

// Last in this file: it crashes the shared browser's GPU process.
test("a lost GPU device stops the run with a message, keeps the page's weights and offers the last checkpoint", async () => {
  const context = await shared.browser.newContext();
  const page = await context.newPage();
  await page.goto(`${shared.server.url}?compute=webgpu&dataset=data/small/manifest.json`);
  await datasetReady(page);
  await storeCheckpoint(page);
  await page.reload();
  await page.waitForSelector("#checkpoint-offer:not([hidden])", { timeout: 5 * MINUTES });
  await datasetReady(page);
  const weightsNote = await page.locator("#weights-note").textContent();
  // The worker evaluates the loaded weights on its WebGPU device (minutes on SwiftShader), and the
  // resumed run waits for that. Its first progress report says the device exists: a crash before
  // then would leave the worker to make its device in the restarted GPU process, and train on.
  await page.waitForFunction(() => /: [\d,]+ of [\d,]+ images…|images right/.test(document.querySelector("#evaluation-summary").textContent));
  await page.waitForFunction(() => !document.querySelector("#checkpoint-resume").disabled);
  await page.click("#checkpoint-resume");
  // Chromium's GPU process goes down, as on a driver reset: every WebGPU device in it is lost.
  await (await shared.browser.newBrowserCDPSession()).send("Browser.crashGpuProcess");
  await page.waitForSelector("#train-status:has-text('failed')", { timeout: 5 * MINUTES });
  assert.match(await page.locator("#error").textContent(),
    /The GPU device was lost \(.+\)\. Training stopped; the page's weights are kept\. Continue from the last saved epoch on the CPU path/);
  assert.equal(await page.locator("#weights-note").textContent(), weightsNote, "the page's model is unchanged");
  // The compute card no longer claims a working WebGPU path.
  assert.equal(await page.locator("#compute-path").textContent(), "WebGPU (lost)");
  assert.match(await page.locator("#compute-reason").textContent(),
    /^WebGPU stopped working: the GPU device was lost \(.+\)\. Reload the page to use WebGPU again, or switch to the CPU path\.$/);
  await page.waitForSelector("#checkpoint-offer:not([hidden])");
  assert.match(await page.locator("#checkpoint-text").textContent(), /failed after epoch 1 of 2/);
  // The page's own WebGPU device went with the GPU process: a picture's prediction says so, and
  // what to do, in place of burn's "The device is poisoned".
  const gif = Buffer.from("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==", "base64");
  await page.setInputFiles("#photo-input", { name: "pixel.gif", mimeType: "image/gif", buffer: gif });
  await page.waitForFunction(() => /^reading from the device failed: the GPU device was lost \(.+\)\. Reload the page to use WebGPU again, or switch to the CPU path\.$/
    .test(document.querySelector("#error").textContent));
  // On the CPU path the run continues from that checkpoint.
  await page.selectOption("#compute-select", "cpu");
  await page.waitForURL(/compute=cpu/);
  await page.waitForFunction(() => !document.querySelector("#checkpoint-resume").disabled, null, { timeout: 5 * MINUTES });
  await page.click("#checkpoint-resume");
  await page.waitForSelector("#train-status:has-text('finished')", { timeout: 10 * MINUTES });
  await context.close();
});

test("a worker's pool whose threads die ends the run with a message, and its last checkpoint is offered", async () => {
  const context = await shared.browser.newContext({ viewport: { width: 1100, height: 1600 } });
  const page = await context.newPage();
  await page.goto(`${shared.server.url}${SMALL}`);
  await datasetReady(page);
  assert.ok(Number(await page.locator("#compute-threads").getAttribute("data-threads")) >= 2, "a threaded worker");
  // Enough epochs that the run is still going when its threads stop (an epoch here takes seconds).
  await page.fill("#recipe-form [name=epochs]", "20");
  await page.fill("#recipe-form [name=batch]", "64");
  await page.click("#train-start");
  await page.waitForFunction(() => document.querySelector("#checkpoint-status").textContent.startsWith("Saved in this browser after epoch 1"), null, { timeout: 10 * MINUTES });

  // The pool's web workers stop as if they ran out of memory: their JavaScript execution is
  // terminated over the DevTools protocol, and the training worker waits for them forever. All of
  // them: one idle thread that stops is no stall, as rayon's other threads steal its work (a CI run
  // trained on to the end that way), while a thread that dies holding a job is one.
  const poolUrls = new Set(page.workers().map((worker) => worker.url()).filter((url) => url.startsWith("blob:")));
  const cdp = await shared.browser.newBrowserCDPSession();
  const { targetInfos } = await cdp.send("Target.getTargets");
  const threads = targetInfos.filter((target) => target.type === "worker" && poolUrls.has(target.url));
  assert.ok(threads.length >= 2, "the pool's workers are DevTools targets");
  for (const thread of threads) {
    const { sessionId } = await cdp.send("Target.attachToTarget", { targetId: thread.targetId, flatten: false });
    await cdp.send("Target.sendMessageToTarget", { sessionId, message: JSON.stringify({ id: 1, method: "Runtime.terminateExecution" }) });
  }

  await page.waitForSelector("#error:not([hidden])", { timeout: 5 * MINUTES });
  assert.match(await page.locator("#error").textContent(), /the worker sent nothing for \d+ s, as when a thread of its pool runs out of memory or crashes/);
  assert.equal(await page.locator("#train-status").textContent(), "failed");
  await page.waitForSelector("#runs-body tr[data-status=failed]"); // the runs table knows it too
  await page.waitForSelector("#checkpoint-offer:not([hidden])", { timeout: 5 * MINUTES });
  assert.match(await page.locator("#checkpoint-text").textContent(), /failed after epoch \d+ of 20/);
  // A new worker took its place: the run continues from the checkpoint.
  await datasetReady(page);
  await page.waitForFunction(() => !document.querySelector("#checkpoint-resume").disabled);
  await page.click("#checkpoint-resume");
  await page.waitForSelector("#train-status:has-text('finished')", { timeout: 10 * MINUTES });
  // The same run, resumed in its own record.
  await page.waitForSelector("#runs-body tr[data-status=finished]");
  assert.deepEqual(await page.$$eval("#runs-body tr", (rows) => rows.map((row) => [row.dataset.status, row.dataset.label])), [["finished", "resumed, first run"]]);
  await context.close();
});

test("a worker that never answers Start ends the wait with a message, and Start works again", async () => {
  // As in an engine where the worker hangs: this page's worker drops every request to train.
  const context = await contextWithWorkerEnding(`
    const answer = self.onmessage;
    self.onmessage = (event) => { if (event.data?.kind !== "Train") answer(event); };`);
  const page = await context.newPage();
  await page.goto(`${shared.server.url}${SMALL}&threads=1`);
  await datasetReady(page);
  await page.fill("#recipe-form [name=epochs]", "1");
  await page.click("#train-start");
  assert.equal(await page.locator("#train-status").textContent(), "starting…");
  await page.waitForSelector("#error:not([hidden])", { timeout: 5 * MINUTES });
  assert.match(await page.locator("#error").textContent(), /^Training did not start: the worker sent nothing for \d+ s after it was asked\. .*press Start to try again/);
  assert.equal(await page.locator("#train-status").textContent(), "failed");
  // A new worker took the deaf one's place; once it has the dataset, Start is offered again.
  await datasetReady(page);
  await page.waitForFunction(() => !document.querySelector("#train-start").disabled, null, { timeout: 5 * MINUTES });
  await context.close();
});
