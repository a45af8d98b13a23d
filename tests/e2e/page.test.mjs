// The page end to end in Debian's Chromium: start-up, compute-path choice and the sample
// prediction, on WebGPU (SwiftShader here), on the wasm CPU path, and without WebGPU at all.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { ARGS, CHROMIUM, MINUTES, SCREENSHOTS, assertTopFive, openPage, shared } from "./harness.mjs";

/** The sample photo's prediction with the shipped weights: the horse is a horse, first. */
async function assertPrediction(page) {
  const rows = await assertTopFive(page);
  assert.equal(rows[0].name, "horse", `the first impression: ${JSON.stringify(rows)}`);
  const total = rows.reduce((sum, row) => sum + row.p, 0);
  assert.ok(total > 0.8, `the pretrained model is fairly sure about the sample: top five sum to ${total}`);
  assert.match(await page.locator("#model-summary").textContent(), /tiny preset · 546,186 parameters/);
}

test("automatic choice: both paths are timed once, the faster (the CPU beside SwiftShader) is kept, and measured again on request", async () => {
  const page = await openPage("");
  assert.match(await page.locator("#adapter").textContent(), /swiftshader.*software/i);
  assert.equal(await page.locator("#compute-path").textContent(), "CPU (wasm)");
  assert.equal(await page.locator("#compute-select").inputValue(), "auto");
  const reason = page.locator("#compute-reason");
  assert.equal(await reason.getAttribute("data-measured"), "now");
  assert.match(await reason.textContent(), /^Measured here: WebGPU [<≥]? ?[\d.]+ img\/s · CPU, \d+ threads? [<≥]? ?[\d.]+ img\/s → CPU\.$/);
  await assertPrediction(page);
  if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}/page.png`, fullPage: true });

  // The result is kept for this device: a reload chooses at once, from browser storage.
  await page.reload();
  await page.waitForSelector("body[data-ready=true]", { timeout: 15 * MINUTES });
  assert.equal(await reason.getAttribute("data-measured"), "kept");
  // "Measure again" forgets it and measures anew.
  await page.click("#compute-remeasure");
  await page.waitForSelector("#compute-reason[data-measured=now]", { timeout: 15 * MINUTES });
  assert.equal(await page.locator("#compute-path").textContent(), "CPU (wasm)");
  await page.close();
});

test("forced WebGPU runs the model on the WebGPU adapter, and its attention distances are the CPU path's", async () => {
  const page = await openPage("?compute=webgpu&dataset=data/small/manifest.json");
  assert.equal(await page.locator("#compute-path").textContent(), "WebGPU");
  assert.equal(await page.locator("#compute-select").inputValue(), "webgpu");
  await assertPrediction(page);
  const distances = async (page) => {
    await page.waitForSelector("#distance-canvas[data-distances]", { timeout: 10 * MINUTES });
    return JSON.parse(await page.locator("#distance-canvas").getAttribute("data-distances")).flat();
  };
  const onGpu = await distances(page);
  const cpuPage = await openPage("?compute=cpu&dataset=data/small/manifest.json");
  const onCpu = await distances(cpuPage);
  assert.equal(onGpu.length, 16);
  onGpu.forEach((distance, index) => assert.ok(Math.abs(distance - onCpu[index]) <= 0.02, `head ${index}: ${distance} on WebGPU, ${onCpu[index]} on the CPU`));
  await cpuPage.close();
  await page.close();
});

test("the compute switch reloads the page on the chosen path, keeping its other parameters", async () => {
  const page = await openPage("?compute=webgpu&dataset=data/small/manifest.json");
  await page.selectOption("#compute-select", "cpu");
  await page.waitForURL(/compute=cpu/);
  assert.equal(new URL(page.url()).searchParams.get("dataset"), "data/small/manifest.json");
  await page.waitForSelector("body[data-ready=true]", { timeout: 15 * MINUTES });
  assert.equal(await page.locator("#compute-path").textContent(), "CPU (wasm)");
  await page.close();
});

test("without WebGPU the page says so and still predicts on the CPU", async () => {
  const page = await openPage("?compute=webgpu", { hideWebGpu: true });
  assert.equal(await page.locator("#no-webgpu").isVisible(), true);
  assert.match(await page.locator("#adapter").textContent(), /no WebGPU/);
  assert.equal(await page.locator("#compute-path").textContent(), "CPU (wasm)");
  assert.match(await page.locator("#compute-reason").textContent(), /no WebGPU adapter/);
  await assertPrediction(page);
  await page.close();
});

test("a Chromium as most people have it on Linux (WebGPU not enabled: no adapter) runs on the CPU and predicts", async () => {
  // Without --enable-unsafe-webgpu, Linux Chromium has navigator.gpu but gives no adapter.
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS.filter((arg) => arg !== "--enable-unsafe-webgpu") });
  try {
    const page = await browser.newPage();
    await page.goto(shared.server.url);
    await page.waitForSelector("body[data-ready=true], #error:not([hidden])", { timeout: 15 * MINUTES });
    assert.equal(await page.locator("#error").isHidden(), true, await page.locator("#error").textContent());
    assert.equal(await page.evaluate(() => "gpu" in navigator), true, "the API is there");
    assert.match(await page.locator("#adapter").textContent(), /no WebGPU/);
    assert.equal(await page.locator("#compute-path").textContent(), "CPU (wasm)");
    assert.match(await page.locator("#compute-reason").textContent(), /no WebGPU adapter/);
    await assertPrediction(page);
  } finally {
    await browser.close();
  }
});

test("where the page is cross-origin isolated the CPU path trains on a thread per core; the threads selector (or ?threads=) changes that", async () => {
  const page = await openPage("?compute=cpu&dataset=data/small/manifest.json");
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  assert.equal(await page.evaluate(() => crossOriginIsolated), true);
  const threads = async () => {
    await page.waitForSelector("#compute-threads[data-threads]", { timeout: 5 * MINUTES });
    return Number(await page.locator("#compute-threads").getAttribute("data-threads"));
  };
  assert.equal(await threads(), Math.min(cores, 32));
  assert.match(await page.locator("#compute-threads").textContent(), cores > 1 ? /threads, one per core/ : /one core/);
  if (cores > 1) {
    assert.equal(await page.locator("#threads-select").isVisible(), true);
    assert.equal(await page.locator("#threads-select").inputValue(), "", "one per core unless asked");
    const offered = await page.locator("#threads-select option").evaluateAll((options) => options.map((option) => option.value));
    assert.deepEqual(offered, ["", ...Array.from({ length: Math.min(cores, 32) }, (_, i) => String(i + 1))]);
    assert.equal(await page.locator("#threads-select option").first().textContent(), `One per core (${Math.min(cores, 32)})`);

    // One thread, for a core kept free: the page reloads on the single-threaded module, keeping its other parameters.
    await page.selectOption("#threads-select", "1");
    await page.waitForURL(/threads=1/);
    assert.equal(new URL(page.url()).searchParams.get("dataset"), "data/small/manifest.json");
    assert.equal(await threads(), 1);
    assert.match(await page.locator("#compute-threads").textContent(), /as asked \(\?threads=1\)/);
    assert.equal(await page.locator("#threads-select").inputValue(), "1");

    // And back to one per core: the parameter goes.
    await page.selectOption("#threads-select", "");
    await page.waitForURL((url) => !url.searchParams.has("threads"));
    assert.equal(await threads(), Math.min(cores, 32));
  } else {
    assert.equal(await page.locator("#threads-choice").isHidden(), true, "one core: no threads to choose from");
  }
  await page.close();
});

test("the threaded module's training losses on a fixed batch are the single-threaded module's", async () => {
  const page = await openPage("?compute=cpu");
  const runs = await page.evaluate(async () => {
    const run = (threads) => new Promise((resolve, reject) => {
      const worker = new Worker(`worker.js?threads=${threads}`, { type: "module" });
      const losses = [];
      let ran = 0;
      worker.onmessage = ({ data }) => {
        if (data.kind === "WorkerReady") {
          ran = data.threads;
          worker.postMessage({ kind: "Measure", compute: "cpu", batch: 16, steps: 5 });
        } else if (data.kind === "MeasuredStep") {
          losses.push(data.loss);
          if (losses.length === 5) { worker.terminate(); resolve({ threads: ran, losses }); }
        } else if (data.kind === "MeasureFailed") {
          worker.terminate(); reject(new Error(data.message));
        }
      };
    });
    return [await run(Math.max(2, navigator.hardwareConcurrency)), await run(1)];
  });
  const [threaded, single] = runs;
  assert.ok(threaded.threads >= 2 && single.threads === 1, JSON.stringify(runs));
  // Only summation order differs (the threads split a few row sums): the first step's loss
  // agrees to rounding, and the next four stay within 1e-5 of each other.
  assert.ok(Math.abs(threaded.losses[0] - single.losses[0]) <= 1e-6 * Math.abs(single.losses[0]), JSON.stringify(runs));
  for (let step = 1; step < 5; step++) {
    const [a, b] = [threaded.losses[step], single.losses[step]];
    assert.ok(Math.abs(a - b) <= 1e-5 * Math.abs(b), `step ${step + 1}: ${a} against ${b}`);
  }
  assert.ok(single.losses[4] < single.losses[0], "the losses fall: the steps trained");
  console.log(`# losses, threaded: ${threaded.losses.join(" ")}; one thread: ${single.losses.join(" ")}`);
  await page.close();
});
