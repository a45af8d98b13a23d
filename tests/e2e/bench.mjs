// Browser benchmarks in headless Chromium, through the page itself; prints JSON lines.
// Not a test: nothing is asserted about time. Run by scripts/bench.sh after a release build.
//   node tests/e2e/bench.mjs
// BENCH_SECTIONS (dataset,predict,train) and BENCH_COMPUTE (cpu,webgpu) pick what runs;
// WEBGPU_BATCH (8) and WEBGPU_STEPS (5, rounded down to a multiple of 5) size the WebGPU training run, which takes seconds to
// minutes per step on SwiftShader.
import { resolve } from "node:path";
import { chromium } from "playwright-core";
import { serve } from "./server.mjs";

const DIST = resolve(import.meta.dirname, "../../dist");
const ARGS = [
  "--no-sandbox", "--enable-unsafe-webgpu", "--enable-features=Vulkan",
  "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
];
const SMALL = "dataset=data/small/manifest.json";
const server = await serve(DIST);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: ARGS });
const print = (record) => console.log(JSON.stringify(record));
const sections = (process.env.BENCH_SECTIONS ?? "dataset,predict,train").split(",");
const computePaths = (process.env.BENCH_COMPUTE ?? "cpu,webgpu").split(",");

try {
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

  // 2. One picture's prediction with every layer's attention, on the CPU path: the sample at
  //    start-up (its first run), then the same picture again and a photograph (TEST_PHOTO).
  if (sections.includes("predict")) {
    const page = await browser.newPage();
    await page.goto(`${server.url}?compute=cpu`);
    const latency = async (what) => {
      await page.waitForFunction(() => document.querySelector("#inference-time").dataset.ms, null, { timeout: 600_000 });
      print({ bench: "browser_predict", compute: "cpu", picture: what,
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
  const runs = [
    { compute: "cpu", batch: 64 },
    { compute: "cpu", batch: 256 },
    { compute: "webgpu", batch: Number(process.env.WEBGPU_BATCH ?? 8), maxSteps: Number(process.env.WEBGPU_STEPS ?? 5) },
  ].filter((run) => sections.includes("train") && computePaths.includes(run.compute));
  for (const run of runs) {
    const page = await browser.newPage();
    await page.goto(`${server.url}?compute=${run.compute}&${SMALL}`);
    await page.waitForSelector("#data-status[data-source]", { timeout: 600_000 });
    // A run waits for the start-up evaluation of the loaded weights (minutes on SwiftShader).
    await page.waitForSelector("#evaluation-summary[data-accuracy]", { timeout: 1_800_000 });
    await page.fill("#recipe-form [name=epochs]", "1");
    await page.fill("#recipe-form [name=batch]", String(run.batch));
    const started = Date.now();
    await page.click("#train-start");
    const steps = Math.ceil(512 / run.batch);
    // The first step apart (on WebGPU it compiles the kernels), then the mean of the rest. On
    // WebGPU the page reports a step once it is queued, except where it reads back: step 1 (the
    // attention probe) and every 5th step (the running loss). So a WebGPU span ends on a multiple
    // of 5, where every step before it has run.
    const target = run.compute === "webgpu"
      ? Math.max(5, Math.floor(Math.min(steps, run.maxSteps) / 5) * 5)
      : Math.min(steps, run.maxSteps ?? steps);
    const reached = async (step) => {
      await page.waitForFunction((step) => {
        const text = document.querySelector("#step-text")?.textContent ?? "";
        return Number(text.split(" ")[0]) >= step;
      }, step, { timeout: 1_800_000, polling: 100 });
      return Date.now();
    };
    const firstStep = await reached(1);
    const lastStep = await reached(target);
    print({ bench: "browser_train", compute: run.compute, adapter: await page.locator("#adapter").textContent(),
      batch: run.batch, steps: target,
      images_per_second: Number(await page.locator("#train-speed").getAttribute("data-images-per-second")),
      first_step_seconds: (firstStep - started) / 1000,
      later_seconds_per_step: target > 1 ? (lastStep - firstStep) / 1000 / (target - 1) : null,
      wall_seconds: (Date.now() - started) / 1000 });
    await page.click("#train-stop").catch(() => {});
    await page.close();
  }
} finally {
  await browser.close();
  server.close();
}
