// Browser benchmarks in headless Chromium, through the page itself; prints JSON lines.
// Not a test: nothing is asserted about time. Run by scripts/bench.sh after a release build.
//   node tests/e2e/bench.mjs
// BENCH_SECTIONS (dataset,predict,train) and BENCH_COMPUTE (cpu,webgpu) pick what runs;
// WEBGPU_BATCH (8) and WEBGPU_STEPS (5; the span runs on to the next step whose loss the page reads)
// size the WebGPU training run, which takes seconds to minutes per step on SwiftShader.
// BENCH_SECTIONS also takes "visit" (what a first visit downloads, per path, until the page and the
// dataset are ready) and "minutes" (a named recipe, BENCH_RECIPE, by default "10-minutes", on the
// 20,000 images for BENCH_MINUTES (10) of wall time, on the path the page picks by measuring:
// test accuracy at each epoch's end, and when it first reached 50 % and 55 %).
// BENCH_THREADS (1,all) lists the CPU path's thread counts ("all": as many as the page plans),
// BENCH_BATCHES (64,256) its batch sizes, BENCH_STEPS (the whole epoch) its steps per run;
// BENCH_PRESET (tiny) the model that trains; BENCH_TOGETHER (1) how many pages train at once;
// BENCH_DATASET (data/curve/manifest.json, 2,000 training images, where present) is what trains.
// BENCH_SECTIONS also takes "collection": BENCH_PHOTOS (2000) photographs of BENCH_MEGAPIXELS (12)
// imported as a folder of four classes (the time, and the page's memory before and after, by
// performance.measureUserAgentSpecificMemory), then fine-tuned head-only and whole-model for
// BENCH_EPOCHS (2) epochs each on that folder and on one of 200 (seconds per epoch, wall clock).
// The photographs are BENCH_DISTINCT (16) JPEGs the page draws, hard-linked into place.
import { link, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";
import { ISOLATION, serve } from "./server.mjs";

// BENCH_DIST: another build's dist/ folder, to set two builds side by side in one session.
const DIST = resolve(process.env.BENCH_DIST ?? resolve(import.meta.dirname, "../../dist"));
const ARGS = [
  "--no-sandbox", "--enable-unsafe-webgpu", "--enable-features=Vulkan",
  "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
];
const TRAIN_DATASET = process.env.BENCH_DATASET ?? "data/curve/manifest.json";
const TRAIN_IMAGES = Number(process.env.BENCH_TRAIN_IMAGES ?? 2000);
const PRESET = process.env.BENCH_PRESET ?? "tiny";
// Served with the isolation headers, so that every page starts isolated at once rather than after
// its service worker's first install (what tests/e2e/site.test.mjs checks).
const server = await serve(DIST, { headers: ISOLATION });
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: ARGS });
const print = (record) => console.log(JSON.stringify(record));
const sections = (process.env.BENCH_SECTIONS ?? "dataset,predict,train").split(",");
const computePaths = (process.env.BENCH_COMPUTE ?? "cpu,webgpu").split(",");

try {
  // 0. A first visit, as a person's browser makes it: everything the host sends (the service worker
  //    keeps both wasm modules and the weights for offline use) until the page and the dataset are
  //    ready, in bytes as served (uncompressed here) and seconds over loopback. A profile on disk,
  //    as people have: an incognito context's memory cache keeps no 17 MB file, so the service
  //    worker's revalidation of the page's wasm would download it again.
  for (const compute of sections.includes("visit") ? computePaths : []) {
    const profile = await mkdtemp(join(tmpdir(), "vit-visit-"));
    const context = await chromium.launchPersistentContext(profile, { executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: ARGS });
    const page = context.pages()[0] ?? await context.newPage();
    server.sent();
    const started = Date.now();
    await page.goto(`${server.url}?compute=${compute}`);
    await page.waitForSelector("#data-status[data-source]", { timeout: 600_000 });
    await page.waitForSelector("#offline-status[data-status]", { timeout: 600_000 });
    const seconds = (Date.now() - started) / 1000;
    await page.waitForTimeout(1000); // the service worker's last precache fetches
    const { bytes, files } = server.sent();
    print({ bench: "browser_first_visit", compute, bytes, files, seconds,
      threads: Number(await page.locator("#compute-threads").getAttribute("data-threads")) });
    await context.close();
    await rm(profile, { recursive: true, force: true });
  }

  // 1. The prepared dataset, cold: download + verify + decode + store, then a warm reload.
  if (sections.includes("dataset")) {
    const context = await browser.newContext();
    const page = await context.newPage();
    let assetBytes = 0;
    page.on("response", async (response) => {
      if (response.url().endsWith(".vitdata")) assetBytes = (await response.body()).length;
    });
    await page.goto(`${server.url}?compute=cpu`);
    await page.waitForSelector("#data-status[data-source]", { timeout: 600_000 });
    print({ bench: "browser_dataset_cold", asset_bytes: assetBytes,
      seconds: Number(await page.locator("#data-status").getAttribute("data-seconds")),
      status: await page.locator("#data-status").textContent() });
    await page.reload();
    await page.waitForSelector("#data-status[data-source]", { timeout: 600_000 });
    print({ bench: "browser_dataset_cached", source: await page.locator("#data-status").getAttribute("data-source"),
      seconds: Number(await page.locator("#data-status").getAttribute("data-seconds")) });
    await context.close();
  }

  // 2. One picture's prediction with every layer's attention, on each path: the sample at
  //    start-up (its first run), then the same picture again and a photograph (TEST_PHOTO).
  for (const compute of sections.includes("predict") ? computePaths : []) {
    const page = await browser.newPage();
    await page.goto(`${server.url}?compute=${compute}`);
    const latency = async (what) => {
      await page.waitForFunction(() => document.querySelector("#inference-time").dataset.ms, null, { timeout: 600_000 });
      print({ bench: "browser_predict", compute, picture: what,
        milliseconds: Number(await page.locator("#inference-time").getAttribute("data-ms")) });
      await page.evaluate(() => delete document.querySelector("#inference-time").dataset.ms);
    };
    await latency("sample, first run");
    if (process.env.TEST_PHOTO) {
      await page.setInputFiles("#photo-input", process.env.TEST_PHOTO);
      await latency("photograph");
      await page.setInputFiles("#photo-input", process.env.TEST_PHOTO);
      await latency("photograph, again");
    }
    await page.close();
  }

  // 3. Training throughput through the page's worker, on each path.
  const threadCounts = (process.env.BENCH_THREADS ?? "1,all").split(",");
  const cpuBatches = (process.env.BENCH_BATCHES ?? "64,256").split(",").map(Number);
  const cpuSteps = Number(process.env.BENCH_STEPS ?? Infinity);
  const runs = [
    ...cpuBatches.flatMap((batch) => threadCounts.map((threads) => ({ compute: "cpu", batch, threads, maxSteps: cpuSteps }))),
    { compute: "webgpu", batch: Number(process.env.WEBGPU_BATCH ?? 8), maxSteps: Number(process.env.WEBGPU_STEPS ?? 5) },
  ].filter((run) => sections.includes("train") && computePaths.includes(run.compute));
  // BENCH_TOGETHER=N trains N pages at once, each as one run would alone, all started together
  // once every one is ready: N one-thread pages on N cores show what the cores give when nothing is
  // shared but the machine (its caches, memory and clock), the bound on what one page's N threads
  // can reach.
  const together = Number(process.env.BENCH_TOGETHER ?? 1);
  for (const run of runs) {
    const pages = await Promise.all(Array.from({ length: together }, () => openForTraining(run)));
    const records = await Promise.all(pages.map((page) => timeTraining(page, run)));
    for (const record of records) print(together > 1 ? { ...record, together } : record);
  }

  /** A page of its own for `run`, its data loaded and its form filled, ready to start. */
  async function openForTraining(run) {
    const page = await browser.newPage();
    const threads = run.threads && run.threads !== "all" ? `&threads=${run.threads}` : "";
    await page.goto(`${server.url}?compute=${run.compute}${threads}&dataset=${TRAIN_DATASET}`);
    await page.waitForSelector("#data-status[data-source]", { timeout: 600_000 });
    // A run waits for the start-up evaluation of the loaded weights (minutes on SwiftShader).
    await page.waitForSelector("#evaluation-summary[data-accuracy]", { timeout: 1_800_000 });
    await page.selectOption("#recipe-form [name=preset]", PRESET);
    await page.fill("#recipe-form [name=epochs]", "1");
    await page.fill("#recipe-form [name=batch]", String(run.batch));
    return page;
  }

  /** Starts training on `page` and times it: its speed, as the page and the wall clock say. */
  async function timeTraining(page, run) {
    const started = Date.now();
    await page.click("#train-start");
    const steps = Math.ceil(TRAIN_IMAGES / run.batch);
    const target = Math.min(steps, run.maxSteps ?? steps);
    // The first step apart (on WebGPU it compiles the kernels), then the mean of the rest. On
    // WebGPU the page reports a step once it is queued, so a span starts at step 1 (the page
    // reads its attention back) and ends at a step whose loss was read back (#step-text's
    // data-read-step), where every step before it has run.
    const stepReached = async (attribute, step) => {
      const handle = await page.waitForFunction(({ attribute, step }) => {
        const element = document.querySelector("#step-text");
        const value = attribute ? Number(element?.getAttribute(attribute)) : Number((element?.textContent ?? "").split(" ")[0]);
        return value >= step && value;
      }, { attribute, step }, { timeout: 1_800_000, polling: 100 });
      return { at: Date.now(), step: await handle.jsonValue() };
    };
    const first = await stepReached(null, 1);
    const last = await stepReached("data-read-step", target);
    const record = { bench: "browser_train", compute: run.compute, adapter: await page.locator("#adapter").textContent(),
      threads: Number(await page.locator("#compute-threads").getAttribute("data-threads")),
      preset: PRESET, batch: run.batch, steps: last.step,
      images_per_second: Number(await page.locator("#train-speed").getAttribute("data-images-per-second")),
      first_step_seconds: (first.at - started) / 1000,
      later_seconds_per_step: last.step > 1 ? (last.at - first.at) / 1000 / (last.step - 1) : null,
      wall_seconds: (Date.now() - started) / 1000 };
    await page.click("#train-stop").catch(() => {});
    await page.close();
    return record;
  }

  // 4. Time to accuracy: a named recipe on the page's dataset for BENCH_MINUTES of wall time, as a
  //    person gets it: the path the page measures faster, the time-budget recipe's epochs fitted
  //    to that measurement.
  if (sections.includes("minutes")) {
    const minutes = Number(process.env.BENCH_MINUTES ?? 10);
    const recipe = process.env.BENCH_RECIPE ?? "10-minutes";
    const page = await browser.newPage();
    await page.goto(`${server.url}?recipe=${recipe}`);
    await page.waitForSelector("#data-status[data-source]", { timeout: 600_000 });
    await page.waitForSelector("#evaluation-summary[data-accuracy]", { timeout: 1_800_000 });
    const started = Date.now();
    await page.click("#train-start");
    const epochs = [];
    while (Date.now() - started < minutes * 60_000) {
      await page.waitForTimeout(2000);
      const rows = await page.$$eval("#epoch-table tbody tr", (rows) => rows.map((row) => [...row.cells].map((cell) => cell.textContent)));
      for (const row of rows.slice(epochs.length)) epochs.push({ epoch: Number(row[0]), test_accuracy: parseFloat(row[4]), minutes: (Date.now() - started) / 60_000 });
      if (await page.locator("#train-status").textContent() === "finished") break;
    }
    const reached = (percent) => epochs.find((epoch) => epoch.test_accuracy >= percent)?.minutes ?? null;
    print({ bench: "browser_minutes", minutes, recipe, recipe_note: await page.locator("#recipe-about").textContent(),
      compute: await page.locator("#compute-reason").textContent(),
      epochs_planned: Number(await page.locator("#recipe-form [name=epochs]").inputValue()),
      threads: Number(await page.locator("#compute-threads").getAttribute("data-threads")),
      steps: await page.locator("#step-text").textContent(), epochs,
      accuracy_at_end: epochs.at(-1)?.test_accuracy ?? null, minutes_to_50: reached(50), minutes_to_55: reached(55) });
    await page.click("#train-stop").catch(() => {});
    await page.close();
  }

  // 5. A person's own pictures: importing a folder of phone-sized photographs, then fine-tuning.
  if (sections.includes("collection")) {
    const photos = Number(process.env.BENCH_PHOTOS ?? 2000);
    const megapixels = Number(process.env.BENCH_MEGAPIXELS ?? 12);
    const distinct = Number(process.env.BENCH_DISTINCT ?? 16);
    const epochs = Number(process.env.BENCH_EPOCHS ?? 2);
    const page = await browser.newPage();
    await page.goto(`${server.url}?compute=cpu&dataset=${TRAIN_DATASET}`);
    await page.waitForSelector("#data-status[data-source]", { timeout: 600_000 });
    const width = Math.round(Math.sqrt(megapixels * 1e6 * 4 / 3)), height = Math.round(width * 3 / 4);
    const jpegs = await page.evaluate(async ({ distinct, width, height }) => {
      const canvas = new OffscreenCanvas(width, height);
      const context = canvas.getContext("2d");
      const out = [];
      for (let index = 0; index < distinct; index++) {
        const gradient = context.createLinearGradient(0, 0, width, height);
        gradient.addColorStop(0, `hsl(${index * 360 / distinct}, 70%, 50%)`);
        gradient.addColorStop(1, `hsl(${index * 97 % 360}, 60%, 30%)`);
        context.fillStyle = gradient;
        context.fillRect(0, 0, width, height);
        for (let spot = 0; spot < 400; spot++) {
          context.fillStyle = `hsla(${(spot * 37 + index * 11) % 360}, 80%, 60%, 0.5)`;
          context.beginPath();
          context.arc((spot * 7919) % width, (spot * 104729) % height, 20 + spot % 90, 0, 2 * Math.PI);
          context.fill();
        }
        const blob = await canvas.convertToBlob({ type: "image/jpeg", quality: 0.9 });
        const bytes = new Uint8Array(await blob.arrayBuffer());
        let text = "";
        for (let at = 0; at < bytes.length; at += 0x8000) text += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
        out.push(btoa(text));
      }
      return out;
    }, { distinct, width, height });
    const root = await mkdtemp(join(tmpdir(), "vit-photos-"));
    const folder = async (name, count) => {
      const sources = join(root, "sources");
      await mkdir(sources, { recursive: true });
      for (const [index, jpeg] of jpegs.entries()) await writeFile(join(sources, `${index}.jpg`), Buffer.from(jpeg, "base64"));
      for (let index = 0; index < count; index++) {
        const classFolder = join(root, name, `class-${index % 4}`);
        await mkdir(classFolder, { recursive: true });
        await link(join(sources, `${index % distinct}.jpg`), join(classFolder, `${index}.jpg`));
      }
      return join(root, name);
    };
    const memory = async () => {
      const measured = await page.evaluate(async () => (await performance.measureUserAgentSpecificMemory()).bytes).catch(() => null);
      return measured;
    };
    const photoBytes = jpegs.reduce((sum, jpeg) => sum + Buffer.from(jpeg, "base64").length, 0) / jpegs.length;
    for (const count of [photos, 200]) {
      const path = await folder(`photos-${count}`, count);
      const before = await memory();
      const started = Date.now();
      await page.setInputFiles("#collection-folder", path);
      await page.waitForFunction((count) => document.querySelector("#collection-status").textContent.startsWith(`Imported ${count.toLocaleString("en")}`)
        || document.querySelector("#collection-status").textContent.startsWith(`Imported ${count}`), count, { timeout: 3_600_000, polling: 500 });
      const seconds = (Date.now() - started) / 1000;
      print({ bench: "browser_import_photos", photos: count, megapixels: width * height / 1e6, jpeg_bytes_each: Math.round(photoBytes),
        seconds, photos_per_second: count / seconds, memory_before: before, memory_after: await memory() });
      await page.click("#collection-use");
      await page.waitForSelector("#data-status[data-source=collection]", { timeout: 600_000 });
      for (const trainable of ["head", "whole"]) {
        await page.selectOption("#recipe-form [name=train]", trainable);
        await page.fill("#recipe-form [name=epochs]", String(epochs));
        const times = [];
        let last = Date.now();
        await page.click("#train-start");
        while (times.length < epochs) {
          await page.waitForFunction((done) => document.querySelectorAll("#epoch-table tbody tr").length > done, times.length, { timeout: 3_600_000, polling: 200 });
          times.push((Date.now() - last) / 1000);
          last = Date.now();
        }
        await page.waitForSelector("#train-status:has-text('finished')", { timeout: 600_000 });
        print({ bench: "browser_fine_tune", pictures: count, trainable, epochs, seconds_per_epoch: times,
          train_pictures: Number(/(\d[\d,]*) to train on/.exec(await page.locator("#data-status").textContent())?.[1].replace(/,/g, "")),
          threads: Number(await page.locator("#compute-threads").getAttribute("data-threads")) });
      }
    }
    await rm(root, { recursive: true, force: true });
    await page.close();
  }
} finally {
  await browser.close();
  server.close();
}
