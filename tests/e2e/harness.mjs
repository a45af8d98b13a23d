// What every end-to-end test file shares: Debian's Chromium with WebGPU (SwiftShader here) and a
// fake camera, the built page served with cross-origin isolation, and a page opener that fails
// on any page error.
import { after, before } from "node:test";
import assert from "node:assert/strict";
import { resolve } from "node:path";
import { chromium } from "playwright-core";
import { serve } from "./server.mjs";

const DIST = resolve(process.env.E2E_DIST ?? resolve(import.meta.dirname, "../../dist"));
export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
export const ARGS = [
  "--no-sandbox", "--enable-unsafe-webgpu", "--enable-features=Vulkan",
  "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
  // A synthetic camera that needs no permission prompt, for the webcam input.
  "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
];

export const MINUTES = 60 * 1000;
/** How long any wait of a test lasts unless it says otherwise (Playwright's own is 30 s). A busy
 *  machine does the page's work more slowly, not differently: on two cores shared with other
 *  heavy work a reload with the dataset took over 30 s. A wait fails on a page that stalls. */
export const PATIENCE = 10 * MINUTES;
/** Set to refresh the README's pictures. */
export const SCREENSHOTS = process.env.SCREENSHOT_DIR;
/** The CPU path with the small test dataset (512 training, 500 test images). */
export const SMALL = "?compute=cpu&dataset=data/small/manifest.json";

/** Starts the server and browser for this file's tests; `shared.browser`/`shared.server` hold them. */
export const shared = {};
before(async () => {
  shared.server = await serve(DIST);
  shared.browser = patient(await chromium.launch({ executablePath: CHROMIUM, args: ARGS }));
});

/** Gives every context the browser opens (`newPage` opens one too) the waits of [`PATIENCE`]. */
export function patient(browser) {
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(PATIENCE);
    return context;
  };
  return browser;
}
after(async () => {
  await shared.browser?.close();
  shared.server?.close();
});

/** Opens the page at `query`, waits for start-up and asserts it reported no error. */
export async function openPage(query, { hideWebGpu = false, viewport = { width: 1100, height: 1600 }, timeout = 15 * MINUTES } = {}) {
  const page = await shared.browser.newPage({ viewport });
  const errors = [];
  page.on("pageerror", (error) => errors.push(error.message));
  if (hideWebGpu) {
    await page.addInitScript(() => Object.defineProperty(Navigator.prototype, "gpu", { get: () => undefined }));
  }
  await page.goto(`${shared.server.url}${query}`);
  await page.waitForSelector("body[data-ready=true], #error:not([hidden])", { timeout });
  const error = await page.locator("#error").textContent();
  assert.equal(await page.locator("#error").isHidden(), true, `page reported: ${error}`);
  assert.deepEqual(errors, []);
  page.errors = errors;
  return page;
}

/** Waits until `predicate(arg)`, run in the page, resolves to something truthy, polling every
 *  `polling` ms for at most `timeout`. For predicates that read browser storage, which are async:
 *  Playwright's `waitForFunction` does not await a promise, and a promise is truthy, so with an
 *  async predicate it returns at once. A read that fails meanwhile (a file being replaced) counts
 *  as not yet, unless the tab has closed. */
export async function waitForAsync(page, predicate, arg, { polling = 200, timeout = PATIENCE } = {}) {
  const deadline = Date.now() + timeout;
  for (;;) {
    let failure;
    try {
      if (await page.evaluate(predicate, arg)) return;
    } catch (error) {
      if (page.isClosed()) throw error; // no later read can succeed
      failure = error;
    }
    if (Date.now() > deadline) throw new Error(`not true within ${timeout} ms: ${predicate}${failure ? ` (last: ${failure.message})` : ""}`);
    await new Promise((resolve) => setTimeout(resolve, polling));
  }
}

/** The listed classes and their probabilities, most likely first. */
export async function probabilities(page) {
  return page.$$eval("#probabilities li", (rows) =>
    rows.map((row) => ({ name: row.dataset.class, p: Number(row.dataset.probability) })));
}

/** Waits until the prepared dataset is loaded and returns where it came from. */
export async function datasetReady(page) {
  await page.waitForSelector("#data-status[data-source]", { timeout: 5 * MINUTES });
  return page.locator("#data-status").getAttribute("data-source");
}

/** Statistics of a canvas's pixels: how many distinct colours and the spread of their brightness. */
export async function canvasStats(page, selector) {
  return page.$eval(selector, (canvas) => {
    const { data } = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height);
    const colours = new Set();
    let sum = 0, squares = 0;
    const pixels = data.length / 4;
    for (let i = 0; i < data.length; i += 4) {
      colours.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
      const light = (data[i] + data[i + 1] + data[i + 2]) / 3;
      sum += light; squares += light * light;
    }
    const mean = sum / pixels;
    return { width: canvas.width, height: canvas.height, colours: colours.size, std: Math.sqrt(squares / pixels - mean * mean) };
  });
}

/** Waits for the current picture's prediction and checks it: five distinct classes, most
 *  likely first, with probabilities that are a valid share of one. Returns them. */
export async function assertTopFive(page, { timeout = 15 * MINUTES } = {}) {
  await page.waitForFunction(() => document.querySelectorAll("#probabilities li").length === 5, null, { timeout });
  const rows = await probabilities(page);
  assert.equal(new Set(rows.map((row) => row.name)).size, 5, "five distinct classes");
  for (let i = 1; i < rows.length; i++) assert.ok(rows[i - 1].p >= rows[i].p, "sorted, most likely first");
  const total = rows.reduce((sum, row) => sum + row.p, 0);
  assert.ok(rows.every((row) => row.p >= 0) && total <= 1 + 1e-3, `the top five sum to ${total}`);
  return rows;
}
