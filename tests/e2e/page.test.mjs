// The page end to end in Debian's Chromium: start-up, compute-path choice and the sample
// prediction, on WebGPU (SwiftShader here), on the wasm CPU path, and without WebGPU at all.
import { test } from "node:test";
import assert from "node:assert/strict";
import { MINUTES, SCREENSHOTS, assertTopFive, openPage } from "./harness.mjs";

/** The sample photo's prediction with the shipped weights, which know a cat when they see one. */
async function assertPrediction(page) {
  const rows = await assertTopFive(page);
  const total = rows.reduce((sum, row) => sum + row.p, 0);
  assert.ok(total > 0.8, `the pretrained model is fairly sure about the sample: top five sum to ${total}`);
  assert.match(await page.locator("#model-summary").textContent(), /tiny preset · 546,186 parameters/);
}

test("automatic choice: a software WebGPU adapter sends the page to the CPU path", async () => {
  const page = await openPage("");
  assert.match(await page.locator("#adapter").textContent(), /swiftshader.*software/i);
  assert.equal(await page.locator("#compute-path").textContent(), "CPU (wasm)");
  assert.equal(await page.locator("#compute-select").inputValue(), "auto");
  await assertPrediction(page);
  if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}/page.png`, fullPage: true });
  await page.close();
});

test("forced WebGPU runs the model on the WebGPU adapter", async () => {
  const page = await openPage("?compute=webgpu");
  assert.equal(await page.locator("#compute-path").textContent(), "WebGPU");
  assert.equal(await page.locator("#compute-select").inputValue(), "webgpu");
  await assertPrediction(page);
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

test("where the page is cross-origin isolated the CPU path trains on a thread per core; ?threads=1 on one", async () => {
  const page = await openPage("?compute=cpu");
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  assert.equal(await page.evaluate(() => crossOriginIsolated), true);
  await page.waitForSelector("#compute-threads[data-threads]", { timeout: 5 * MINUTES });
  assert.equal(Number(await page.locator("#compute-threads").getAttribute("data-threads")), Math.min(cores, 32));
  assert.match(await page.locator("#compute-threads").textContent(), cores > 1 ? /threads, one per core/ : /one core/);
  await page.close();

  const single = await openPage("?compute=cpu&threads=1");
  await single.waitForSelector("#compute-threads[data-threads]", { timeout: 5 * MINUTES });
  assert.equal(await single.locator("#compute-threads").getAttribute("data-threads"), "1");
  assert.match(await single.locator("#compute-threads").textContent(), /as asked \(\?threads=1\)/);
  await single.close();
});
