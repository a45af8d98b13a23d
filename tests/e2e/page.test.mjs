// The page end to end in Debian's Chromium: start-up, compute-path choice and the sample
// prediction, on WebGPU (SwiftShader here), on the wasm CPU path, and without WebGPU at all.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { resolve } from "node:path";
import { chromium } from "playwright-core";
import { serve } from "./server.mjs";

const DIST = resolve(import.meta.dirname, "../../dist");
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const SCREENSHOTS = process.env.SCREENSHOT_DIR; // set to refresh the README's pictures
const ARGS = [
  "--no-sandbox", "--enable-unsafe-webgpu", "--enable-features=Vulkan",
  "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
];
// SwiftShader compiles and runs every WebGPU kernel on the CPU: the first prediction takes minutes.
const READY_TIMEOUT = 15 * 60 * 1000;

let server, browser;
before(async () => {
  server = await serve(DIST);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
});
after(async () => {
  await browser?.close();
  server?.close();
});

async function openPage(query, { hideWebGpu = false } = {}) {
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  const errors = [];
  page.on("pageerror", (error) => errors.push(error.message));
  if (hideWebGpu) {
    await page.addInitScript(() => Object.defineProperty(Navigator.prototype, "gpu", { get: () => undefined }));
  }
  await page.goto(`${server.url}${query}`);
  await page.waitForSelector("body[data-ready=true], #error:not([hidden])", { timeout: READY_TIMEOUT });
  const error = await page.locator("#error").textContent();
  assert.equal(await page.locator("#error").isHidden(), true, `page reported: ${error}`);
  assert.deepEqual(errors, []);
  return page;
}

async function probabilities(page) {
  return page.$$eval("#probabilities li", (rows) =>
    rows.map((row) => ({ name: row.dataset.class, p: Number(row.dataset.probability) })));
}

async function assertPrediction(page) {
  const rows = await probabilities(page);
  assert.equal(rows.length, 10, "ten classes are listed");
  assert.equal(new Set(rows.map((row) => row.name)).size, 10);
  const total = rows.reduce((sum, row) => sum + row.p, 0);
  assert.ok(Math.abs(total - 1) < 1e-3, `probabilities sum to ${total}`);
  for (let i = 1; i < rows.length; i++) assert.ok(rows[i - 1].p >= rows[i].p, "sorted, most likely first");
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

test("the compute switch reloads the page on the chosen path", async () => {
  const page = await openPage("?compute=webgpu");
  await page.selectOption("#compute-select", "cpu");
  await page.waitForURL(/compute=cpu/);
  await page.waitForSelector("body[data-ready=true]", { timeout: READY_TIMEOUT });
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
